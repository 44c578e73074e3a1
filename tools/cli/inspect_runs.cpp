// `sidecore inspect`: finding the runs a path holds, and reading what their files say (root
// attributes of every file, one iteration through src/reader).
#include "tools/cli/inspect_report.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/units.hpp"
#include "config/output_names.hpp"
#include "plugins/hdf5/hdf5_attributes.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "reader/iteration_files.hpp"

namespace sidecore::cli::inspect {
namespace {

namespace fs = std::filesystem;
using plugins::hdf5::attribute_handle;
using plugins::hdf5::file_handle;

constexpr const char* name_pattern =
    "<simulation>_It<iteration>.h5 or <simulation>_It<iteration>_Pr<writer>.h5";

std::uint64_t size_of(const fs::path& path) {
  std::error_code ec;
  const std::uintmax_t n = fs::file_size(path, ec);
  return ec ? 0 : static_cast<std::uint64_t>(n);
}

// The runs in a directory, by simulation name; only `simulation`'s when it is not empty.
// prefix_base: the text the prefixes start with ("" for the current directory).
std::map<std::string, run> scan_directory(const fs::path& directory, const std::string& prefix_base,
                                          const std::string& simulation) {
  std::map<std::string, run> runs;
  std::error_code ec;
  fs::directory_iterator it(directory, ec), end;
  if (ec) throw inspect_error{"cannot list \"" + directory.string() + "\": " + ec.message()};
  for (; it != end; it.increment(ec)) {
    if (ec) throw inspect_error{"cannot list \"" + directory.string() + "\": " + ec.message()};
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    const std::string name = it->path().filename().string();
    const std::optional<config::output_name_parts> parts = config::parse_output_file_name(name);
    if (!parts || (!simulation.empty() && parts->simulation != simulation)) continue;
    run& r = runs[parts->simulation];
    r.simulation = parts->simulation;
    r.prefix = prefix_base + parts->simulation;
    const file_info file{(directory / name).string(), size_of(it->path())};
    if (parts->part) {
      r.part_files.push_back(file);
    } else if (parts->writer >= 0) {
      r.iterations[parts->iteration].writers[parts->writer] = file;
    } else {
      r.iterations[parts->iteration].shared = file;
    }
  }
  for (auto i = runs.begin(); i != runs.end();) {
    if (i->second.iterations.empty()) {  // only .part files: nothing was stored
      i = runs.erase(i);
      continue;
    }
    const fs::path xmf = directory / (i->first + ".xmf");
    std::error_code xmf_ec;
    if (fs::is_regular_file(xmf, xmf_ec)) i->second.xdmf = file_info{xmf.string(), size_of(xmf)};
    std::sort(i->second.part_files.begin(), i->second.part_files.end(),
              [](const file_info& a, const file_info& b) { return a.path < b.path; });
    ++i;
  }
  return runs;
}

std::string simulations_of(const std::map<std::string, run>& runs) {
  std::string list;
  for (const auto& [name, r] : runs) list += (list.empty() ? "" : ", ") + name;
  return list;
}

// The runs a path names: a directory (every simulation in it), a prefix, or one output file.
// *file_iteration receives the iteration of a file named directly.
}  // namespace

std::vector<run> find_runs(const std::string& path, std::optional<std::int32_t>& file_iteration) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::string base = path;
    if (base.back() != '/') base += '/';
    std::map<std::string, run> runs = scan_directory(path, base, "");
    if (runs.empty())
      throw inspect_error{"no Sidecore output in the directory \"" + path + "\": no file named " +
                          name_pattern};
    std::vector<run> found;
    for (auto& [name, r] : runs) found.push_back(std::move(r));
    return found;
  }
  const fs::path p(path);
  const std::string directory = p.parent_path().empty() ? "." : p.parent_path().string();
  const std::string prefix_base = p.parent_path().empty() ? "" : p.parent_path().string() + "/";
  std::string simulation = p.filename().string();
  if (fs::is_regular_file(path, ec)) {
    const std::optional<config::output_name_parts> parts =
        config::parse_output_file_name(simulation);
    if (!parts || parts->part)
      throw inspect_error{"\"" + path + "\" is not a file an HDF5 store writes (" + name_pattern +
                          ")"};
    simulation = parts->simulation;
    file_iteration = parts->iteration;
  }
  if (simulation.empty())
    throw inspect_error{"no Sidecore output at \"" + path +
                        "\": give a directory or a prefix "
                        "<FilesPath><simulation> (e.g. \"out/sim\")"};
  if (!fs::is_directory(directory, ec))
    throw inspect_error{"no Sidecore output at \"" + path +
                        "\": it is not a directory, and as a "
                        "prefix <FilesPath><simulation> its directory \"" +
                        directory + "\" does not exist"};
  std::map<std::string, run> runs = scan_directory(directory, prefix_base, simulation);
  if (runs.empty()) {
    std::string message = "no Sidecore output under the prefix \"" + path + "\": no file named " +
                          prefix_base + simulation + "_It<iteration>.h5 or " + prefix_base +
                          simulation + "_It<iteration>_Pr<writer>.h5";
    const std::map<std::string, run> others = scan_directory(directory, prefix_base, "");
    if (!others.empty())
      message += " (\"" + directory + "\" holds the output of: " + simulations_of(others) + ")";
    throw inspect_error{message};
  }
  return {std::move(runs.begin()->second)};
}

namespace {

// The root attributes of one file that say what it holds.
struct root_attributes {
  std::optional<std::int32_t> complete;
  std::optional<std::int64_t> raw_bytes, stored_bytes;
  std::vector<std::int32_t> clients_left_out;  // of an incomplete iteration, when the file says
};

template <typename T>
std::optional<T> scalar_attribute(hid_t file, const char* name, hid_t memory_type) {
  if (H5Aexists(file, name) <= 0) return std::nullopt;
  const attribute_handle attribute(H5Aopen(file, name, H5P_DEFAULT));
  T value{};
  if (!attribute.valid() || H5Aread(attribute.get(), memory_type, &value) < 0) return std::nullopt;
  return value;
}

file_handle open_file(const std::string& path) {
  file_handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file.valid())
    throw inspect_error{"HDF5 cannot open \"" + path + "\" (not an HDF5 file, or damaged)"};
  return file;
}

root_attributes read_root(const std::string& path) {
  const file_handle file = open_file(path);
  root_attributes a;
  a.complete = scalar_attribute<std::int32_t>(file.get(), "complete", H5T_NATIVE_INT32);
  a.raw_bytes = scalar_attribute<std::int64_t>(file.get(), "raw_bytes", H5T_NATIVE_INT64);
  a.stored_bytes = scalar_attribute<std::int64_t>(file.get(), "stored_bytes", H5T_NATIVE_INT64);
  a.clients_left_out = plugins::hdf5::read_int_array_attribute<std::int32_t>(
      file.get(), "clients_left_out", {path, {}});
  return a;
}

// Time-invariant variables a file refers to in another iteration's files: the datasets of a
// master file whose `stored_iteration` is earlier, the external links of a collective file.
std::map<std::string, std::int32_t> time_invariant_references(const std::string& path,
                                                              std::int32_t iteration, bool master) {
  struct visit {
    hid_t file;
    std::int32_t iteration;
    bool master;
    std::map<std::string, std::int32_t> found;
  } state{H5I_INVALID_HID, iteration, master, {}};
  const file_handle file = open_file(path);
  state.file = file.get();
  const auto callback = [](hid_t group, const char* name, const H5L_info_t* info,
                           void* data) -> herr_t {
    visit& s = *static_cast<visit*>(data);
    if (!s.master && info->type == H5L_TYPE_EXTERNAL) {
      std::vector<char> value(info->u.val_size);
      unsigned flags = 0;
      const char* target_file = nullptr;
      const char* target_object = nullptr;
      if (H5Lget_val(group, name, value.data(), value.size(), H5P_DEFAULT) < 0 ||
          H5Lunpack_elink_val(value.data(), value.size(), &flags, &target_file, &target_object) < 0)
        return 0;
      const std::optional<config::output_name_parts> parts =
          config::parse_output_file_name(fs::path(target_file).filename().string());
      if (parts && parts->writer < 0) s.found[name] = parts->iteration;
      return 0;
    }
    if (!s.master || info->type != H5L_TYPE_HARD) return 0;
    const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
    if (object < 0) return 0;
    const bool dataset = H5Iget_type(object) == H5I_DATASET;
    H5Oclose(object);
    if (!dataset) return 0;
    if (H5Aexists_by_name(group, name, "stored_iteration", H5P_DEFAULT) <= 0) return 0;
    const attribute_handle attribute(
        H5Aopen_by_name(group, name, "stored_iteration", H5P_DEFAULT, H5P_DEFAULT));
    std::int32_t stored = 0;
    if (attribute.valid() && H5Aread(attribute.get(), H5T_NATIVE_INT32, &stored) >= 0 &&
        stored != s.iteration)
      s.found[name] = stored;
    return 0;
  };
  if (H5Lvisit(file.get(), H5_INDEX_NAME, H5_ITER_NATIVE, callback, &state) < 0)
    throw inspect_error{"HDF5 cannot list the objects of \"" + path + "\""};
  return state.found;
}

}  // namespace

run_report inspect_run(const run& r, std::optional<std::int32_t> wanted) {
  run_report report;
  report.r = &r;
  for (const auto& [it, files] : r.iterations) {
    if (!files.writers.empty()) report.per_core = true;
    if (!files.writers.empty())
      report.writer_files = std::max(report.writer_files, files.writers.rbegin()->first + 1);
  }
  // Every file on disk: data, master or collective files, leftovers, the XDMF.
  for (const auto& [it, files] : r.iterations) {
    for (const auto& [w, f] : files.writers) {
      ++report.files;
      report.disk_bytes += f.bytes;
    }
    if (files.shared) {
      ++report.files;
      report.disk_bytes += files.shared->bytes;
      if (report.per_core) ++report.master_files;
    }
  }
  for (const file_info& f : r.part_files) {
    ++report.files;
    report.disk_bytes += f.bytes;
  }
  if (r.xdmf) {
    ++report.files;
    report.disk_bytes += r.xdmf->bytes;
  }

  for (const auto& [it, files] : r.iterations) {
    iteration_report ir;
    ir.iteration = it;
    ir.files = files.writers.size() + (files.shared ? 1 : 0);
    // The files of the run that wrote the iteration, the writers' files missing or torn, and
    // those another run left (reader/iteration_files.hpp).
    const reader::iteration_files survey = reader::survey_iteration(r.prefix, it);
    std::vector<std::string> data_files;
    if (survey.run_id) {
      ir.missing_writers = survey.missing_writers;
      for (const auto& [w, path] : survey.writer_files) data_files.push_back(path);
      if (!survey.per_core && !survey.shared.empty()) data_files.push_back(survey.shared);
    } else if (report.per_core) {
      // Files that do not carry their run's id (older output): as many writers per iteration
      // as the run's highest.
      for (std::int32_t w = 0; w < report.writer_files; ++w) {
        const auto f = files.writers.find(w);
        const bool readable = f != files.writers.end() &&
                              std::find(survey.unreadable.begin(), survey.unreadable.end(),
                                        f->second.path) == survey.unreadable.end();
        if (!readable)
          ir.missing_writers.push_back(w);
        else
          data_files.push_back(f->second.path);
      }
    } else if (!survey.shared.empty()) {
      data_files.push_back(survey.shared);
    }
    ir.incomplete_files = survey.incomplete;
    ir.unreadable_files = survey.unreadable;
    ir.other_run_files = survey.other_run;
    ir.bytes_known = !data_files.empty();
    for (const std::string& path : data_files) {
      const root_attributes a = read_root(path);
      ir.clients_left_out.insert(ir.clients_left_out.end(), a.clients_left_out.begin(),
                                 a.clients_left_out.end());
      if (a.raw_bytes && a.stored_bytes) {
        ir.raw_bytes += static_cast<std::uint64_t>(*a.raw_bytes);
        ir.stored_bytes += static_cast<std::uint64_t>(*a.stored_bytes);
      } else {
        ir.bytes_known = false;
      }
    }
    std::sort(ir.clients_left_out.begin(), ir.clients_left_out.end());
    ir.clients_left_out.erase(std::unique(ir.clients_left_out.begin(), ir.clients_left_out.end()),
                              ir.clients_left_out.end());
    ir.complete = ir.missing_writers.empty() && survey.complete();
    if (ir.bytes_known) {
      report.raw_bytes += ir.raw_bytes;
      report.stored_bytes += ir.stored_bytes;
    } else {
      report.bytes_known = false;
    }
    report.iterations.push_back(std::move(ir));
  }

  report.iteration = wanted ? *wanted : r.iterations.rbegin()->first;
  const auto chosen = r.iterations.find(report.iteration);
  if (chosen == r.iterations.end()) {
    std::string list;
    for (const auto& [it, files] : r.iterations)
      list += (list.empty() ? "" : ", ") + std::to_string(it);
    report.error = "iteration " + std::to_string(report.iteration) + " of \"" + r.prefix +
                   "\" is not stored (stored: " + list + ")";
    return report;
  }
  const iteration_report& chosen_report =
      *std::find_if(report.iterations.begin(), report.iterations.end(),
                    [&](const iteration_report& ir) { return ir.iteration == report.iteration; });
  if (report.per_core && chosen->second.writers.empty()) {
    report.error = "iteration " + std::to_string(report.iteration) + " of \"" + r.prefix +
                   "\" has a master file but none of its writer files: no data to list";
    report.iteration_complete = false;
    return report;
  }
  try {
    report.reader = std::make_unique<reader::run_reader>(r.prefix, report.iteration);
  } catch (const std::exception& e) {
    // That iteration only (a torn collective file, say): the run's summary still stands.
    report.error = e.what();
    report.iteration_complete = false;
    return report;
  }
  report.iteration_complete = chosen_report.complete && report.reader->complete();

  std::map<std::string, std::int32_t> references;
  if (!report.reader->files().shared.empty())
    references =
        time_invariant_references(report.reader->files().shared, report.iteration, report.per_core);
  std::set<std::string> listed;
  const auto add = [&report, &r](const reader::variable_info& v,
                                 std::optional<std::int32_t> stored) {
    variable_report vr;
    vr.name = v.name;
    vr.info = &v;
    vr.stored_iteration = stored;
    if (report.per_core)
      for (const auto& [w, f] : r.iterations.at(stored ? *stored : report.iteration).writers)
        vr.writer_files.push_back(w);
    std::set<std::int32_t> sources;
    for (const reader::block_info& b : v.blocks) {
      sources.insert(b.source);
      std::uint64_t n = 1;
      for (const std::int64_t e : b.extents) n *= static_cast<std::uint64_t>(e);
      vr.elements += n;
    }
    vr.sources = sources.size();
    vr.bytes = vr.elements * reader::element_bytes(v.type);
    report.variables.push_back(vr);
  };
  for (const reader::variable_info& v : report.reader->variables()) {
    const auto ref = references.find(v.name);
    add(v, ref == references.end() ? std::nullopt : std::optional<std::int32_t>(ref->second));
    listed.insert(v.name);
  }
  // Variables whose data lies in the files of an earlier iteration: listed from there.
  std::map<std::int32_t, reader::run_reader*> opened;
  for (const auto& [name, stored] : references) {
    if (listed.count(name)) continue;
    if (!opened.count(stored)) {
      try {
        report.earlier.push_back(std::make_unique<reader::run_reader>(r.prefix, stored));
        opened[stored] = report.earlier.back().get();
      } catch (const std::exception&) {
        opened[stored] = nullptr;  // that iteration is gone: the reference is still shown
      }
    }
    const reader::variable_info* found = nullptr;
    if (const reader::run_reader* source = opened[stored])
      for (const reader::variable_info& v : source->variables())
        if (v.name == name) found = &v;
    if (found) {
      add(*found, stored);
    } else {
      // Referenced, but the files of that iteration do not hold it (they are gone).
      variable_report vr;
      vr.name = name;
      vr.stored_iteration = stored;
      report.variables.push_back(vr);
      report.iteration_complete = false;
    }
  }
  if (!report.per_core) {
    for (const variable_report& v : report.variables)
      if (v.info)
        for (const reader::block_info& b : v.info->blocks)
          report.writers = std::max(report.writers, b.writer + 1);
  }
  return report;
}

}  // namespace sidecore::cli::inspect
