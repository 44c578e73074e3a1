// Surveys one iteration's files: which run wrote them, which writer files are missing or torn.
#include "reader/iteration_files.hpp"

#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include "common/error.hpp"
#include "config/output_names.hpp"
#include "plugins/hdf5/hdf5_attributes.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "plugins/hdf5/run_marker.hpp"

namespace sidecore::reader {
namespace {

namespace fs = std::filesystem;
using plugins::hdf5::attribute_handle;
using plugins::hdf5::file_handle;

template <typename T>
std::optional<T> root_attribute(hid_t file, const char* name, hid_t type) {
  if (H5Aexists(file, name) <= 0) return std::nullopt;
  const attribute_handle attribute(H5Aopen(file, name, H5P_DEFAULT));
  T value{};
  if (!attribute.valid() || H5Aread(attribute.get(), type, &value) < 0) return std::nullopt;
  return value;
}

// One file of the iteration, as found on disk.
struct found_file {
  std::int32_t writer = -1;
  std::string path;
  bool readable = false;
  std::optional<std::int64_t> run;
  std::optional<std::int32_t> writers, complete;
  std::vector<std::int32_t> clients_left_out;
  fs::file_time_type modified{};
};

found_file look_at(std::int32_t writer, const std::string& path) {
  found_file f;
  f.writer = writer;
  f.path = path;
  std::error_code ec;
  f.modified = fs::last_write_time(path, ec);
  // Only regular files: a FIFO or a device under an output name would block or mislead HDF5.
  if (!fs::is_regular_file(path, ec)) return f;
  const file_handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file.valid()) return f;
  f.readable = true;
  f.run =
      root_attribute<std::int64_t>(file.get(), plugins::hdf5::run_id_attribute, H5T_NATIVE_INT64);
  f.writers =
      root_attribute<std::int32_t>(file.get(), plugins::hdf5::writers_attribute, H5T_NATIVE_INT32);
  f.complete = root_attribute<std::int32_t>(file.get(), "complete", H5T_NATIVE_INT32);
  if (f.complete && *f.complete == 0) {
    try {
      f.clients_left_out = plugins::hdf5::read_int_array_attribute<std::int32_t>(
          file.get(), "clients_left_out", {path, {}});
    } catch (const storage_error&) {
      // Who left it out is a courtesy of the message: the file is incomplete all the same.
    }
  }
  return f;
}

// How much later than a run's newest readable file a torn file must be to be another run's.
constexpr auto later_run_gap = std::chrono::seconds(10);

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

}  // namespace

std::vector<std::pair<output_name, std::string>> list_outputs(const std::string& prefix) {
  if (prefix.empty())
    throw argument_error(
        "the output prefix is empty (give <FilesPath><simulation>, e.g. \"out/sim\")");
  const fs::path p(prefix);
  fs::path directory = p.parent_path();
  if (directory.empty()) directory = ".";
  const std::string base = p.filename().string();
  std::vector<std::pair<output_name, std::string>> found;
  std::error_code ec;
  fs::directory_iterator it(directory, ec), end;
  if (ec)
    throw argument_error("cannot list \"" + directory.string() + "\" (from prefix \"" + prefix +
                         "\"): " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    const auto parts = config::parse_output_file_name(name);
    if (parts && !parts->part && parts->simulation == base)
      found.emplace_back(output_name{parts->iteration, parts->writer}, (directory / name).string());
  }
  return found;
}

iteration_files survey_iteration(const std::string& prefix, std::int32_t iteration) {
  const plugins::hdf5::error_print_guard quiet;  // unreadable files are reported, not printed
  std::vector<found_file> files;
  for (const auto& [name, path] : list_outputs(prefix))
    if (name.iteration == iteration) files.push_back(look_at(name.writer, path));
  std::sort(files.begin(), files.end(),
            [](const found_file& a, const found_file& b) { return a.writer < b.writer; });

  iteration_files result;
  result.iteration = iteration;
  // The run that wrote the iteration last: a later run's files are newer than an earlier one's.
  const found_file* newest = nullptr;
  for (const found_file& f : files)
    if (f.readable && f.run && (newest == nullptr || f.modified > newest->modified)) newest = &f;
  if (newest != nullptr) result.run_id = newest->run;
  // A torn file written well after the newest readable one belongs to a later run (a run
  // writes its master file right after its writer files): the readable files are then another
  // run's leftovers, and none of them is read as the iteration's.
  bool later_run_torn = false;
  for (const found_file& f : files)
    if (!f.readable && newest != nullptr && f.modified > newest->modified + later_run_gap)
      later_run_torn = true;

  const auto ours = [&](const found_file& f) {
    return f.readable && !later_run_torn && (!result.run_id || f.run == result.run_id);
  };
  const found_file* shared = nullptr;
  std::set<std::int32_t> present, torn;
  std::int32_t writers = 0;
  bool any_writer_name = false;
  for (const found_file& f : files) {
    if (f.writer >= 0) any_writer_name = true;
    if (!f.readable) {
      result.unreadable.push_back(f.path);
      if (f.writer >= 0) torn.insert(f.writer);
      continue;
    }
    if (!ours(f)) {
      result.other_run.push_back(f.path);
      continue;
    }
    if (f.complete && *f.complete == 0) {
      result.incomplete.push_back(f.path);
      result.clients_left_out.insert(result.clients_left_out.end(), f.clients_left_out.begin(),
                                     f.clients_left_out.end());
    }
    if (f.writers) writers = std::max(writers, *f.writers);
    if (f.writer < 0) {
      shared = &f;
    } else {
      present.insert(f.writer);
      result.writer_files.emplace_back(f.writer, f.path);
    }
  }
  std::sort(result.clients_left_out.begin(), result.clients_left_out.end());
  result.clients_left_out.erase(
      std::unique(result.clients_left_out.begin(), result.clients_left_out.end()),
      result.clients_left_out.end());
  if (later_run_torn) result.run_id.reset();
  result.per_core = !present.empty() || (shared != nullptr && shared->writers) ||
                    (shared == nullptr && any_writer_name);
  if (shared != nullptr) result.shared = shared->path;
  if (result.per_core) {
    // Files without the writer count (older output): as many writers as the highest one seen.
    if (writers == 0) {
      if (!present.empty()) writers = *present.rbegin() + 1;
      if (!torn.empty()) writers = std::max(writers, *torn.rbegin() + 1);
    }
    result.writers = writers;
    for (std::int32_t w = 0; w < writers; ++w)
      if (present.count(w) == 0) result.missing_writers.push_back(w);
  }
  return result;
}

std::string describe_clients_left_out(const std::vector<std::int32_t>& clients) {
  if (clients.empty()) return "";
  std::string listed;
  for (const std::int32_t c : clients) listed += (listed.empty() ? "" : ", ") + std::to_string(c);
  return (clients.size() == 1 ? "client " : "clients ") + listed +
         " left it out (dropped data of it, stopped before ending it, or never ended it)";
}

bool iteration_files::complete() const {
  if (!missing_writers.empty() || !incomplete.empty()) return false;
  return per_core ? !writer_files.empty() : !shared.empty();
}

std::string iteration_files::problems() const {
  std::vector<std::string> parts;
  if (!missing_writers.empty()) {
    std::string list;
    for (const std::int32_t w : missing_writers)
      list += (list.empty() ? "" : ", ") + std::to_string(w);
    parts.push_back("writer file" + std::string(missing_writers.size() > 1 ? "s " : " ") + list +
                    " of " + std::to_string(writers) + " missing");
  }
  if (!unreadable.empty()) parts.push_back("unreadable (torn, or not HDF5): " + joined(unreadable));
  if (!incomplete.empty()) {
    const std::string who = describe_clients_left_out(clients_left_out);
    parts.push_back("complete = 0 in " + joined(incomplete) + (who.empty() ? "" : ": " + who));
  }
  if (!other_run.empty()) parts.push_back("left by another run, not read: " + joined(other_run));
  if (!per_core && shared.empty() && unreadable.empty() && parts.empty())
    parts.push_back("no file of this run holds its data");
  std::string text;
  for (const std::string& p : parts) text += (text.empty() ? "" : "; ") + p;
  return text;
}

std::string iteration_files::missing_data_files(const std::string& prefix) const {
  std::vector<std::string> names;
  for (const std::int32_t w : missing_writers) {
    const std::string name =
        prefix + "_It" + std::to_string(iteration) + "_Pr" + std::to_string(w) + ".h5";
    const bool torn = std::find(unreadable.begin(), unreadable.end(), name) != unreadable.end();
    names.push_back(name + (torn ? " (unreadable)" : " (missing)"));
  }
  if (!per_core && shared.empty())
    names.push_back(prefix + "_It" + std::to_string(iteration) + ".h5 (missing or unreadable)");
  return joined(names);
}

}  // namespace sidecore::reader
