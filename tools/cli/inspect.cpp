// `sidecore inspect <dir-or-prefix>`: finds the runs an HDF5 store wrote (one per simulation
// name), reads every file's root attributes (complete, raw_bytes, stored_bytes) and one
// iteration through src/reader, and prints what is there, for people or as JSON.
#include "tools/cli/inspect.hpp"

#include <CLI/CLI.hpp>

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
#include "common/json_writer.hpp"
#include "common/units.hpp"
#include "config/output_names.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "reader/iteration_files.hpp"
#include "reader/run_reader.hpp"

namespace sidecore::cli {
namespace {

namespace fs = std::filesystem;
using plugins::hdf5::attribute_handle;
using plugins::hdf5::file_handle;

constexpr const char* description =
    "Shows what an HDF5 store wrote: the iterations stored and which are complete, the file mode\n"
    "and writer files, the compression ratio, the size on disk, and for one iteration every\n"
    "variable (type, global extents, blocks, sources, elements, bytes).\n"
    "\n"
    "A directory is searched for files named <simulation>_It<iteration>[_Pr<writer>].h5, and\n"
    "every simulation found in it is shown; a prefix is <FilesPath><simulation> (\"out/sim\"); a\n"
    "file of a run (\"out/sim_It3.h5\") shows its run at its iteration.";

constexpr const char* exit_status =
    "exit status: 0 output found and read (incomplete iterations are reported, not errors), 1 no\n"
    "Sidecore output at the path, or a file that cannot be read, 2 usage error\n";

constexpr const char* name_pattern =
    "<simulation>_It<iteration>.h5 or <simulation>_It<iteration>_Pr<writer>.h5";

struct arguments {
  std::string path;
  std::optional<std::int32_t> iteration;
  std::int32_t iteration_number = 0;  // --iteration as parsed
  bool blocks = false;
  bool json = false;
};

// What went wrong looking for or reading output: exit status 1.
struct inspect_error {
  std::string message;
};

struct file_info {
  std::string path;
  std::uint64_t bytes = 0;
};

// The files of one iteration of a run.
struct iteration_files {
  std::map<std::int32_t, file_info> writers;  // file-per-core files, by writer
  std::optional<file_info> shared;            // the master file, or the collective file
};

// One simulation's output in one directory.
struct run {
  std::string prefix;  // <FilesPath><simulation>, as run_reader opens it
  std::string simulation;
  std::map<std::int32_t, iteration_files> iterations;
  std::vector<file_info> part_files;
  std::optional<file_info> xdmf;
};

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

// The root attributes of one file that say what it holds.
struct root_attributes {
  std::optional<std::int32_t> complete;
  std::optional<std::int64_t> raw_bytes, stored_bytes;
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
  return a;
}

// What one iteration's files say about it.
struct iteration_report {
  std::int32_t iteration = 0;
  std::size_t files = 0;
  std::vector<std::int32_t> missing_writers;  // writer files not there
  std::vector<std::string> incomplete_files;  // files whose `complete` attribute is 0
  std::vector<std::string> unreadable_files;  // under a final name, but HDF5 cannot open them
  std::vector<std::string> other_run_files;   // left by another run under the same names
  bool bytes_known = false;                   // every data file has raw/stored_bytes
  std::uint64_t raw_bytes = 0, stored_bytes = 0;
  bool complete = true;
};

double ratio(std::uint64_t raw, std::uint64_t stored) {
  return stored == 0 ? 1.0 : static_cast<double>(raw) / static_cast<double>(stored);
}

// A variable of the inspected iteration, with what the files say beyond run_reader's list.
struct variable_report {
  std::string name;
  const reader::variable_info* info = nullptr;   // null: referenced, but its data is missing
  std::optional<std::int32_t> stored_iteration;  // time-invariant data of an earlier iteration
  // FilePerCore: the writers whose files the reader opened, in order (its block_info::writer
  // is an index into them: they differ when a writer's file is missing).
  std::vector<std::int32_t> writer_files;
  std::size_t sources = 0;
  std::uint64_t elements = 0, bytes = 0;
};

struct run_report {
  const run* r = nullptr;
  bool per_core = false;
  std::int32_t writer_files = 0;  // per iteration (FilePerCore)
  std::int32_t writers = 0;  // writers that hold blocks of the inspected iteration (Collective)
  std::size_t master_files = 0;
  std::vector<iteration_report> iterations;
  std::size_t files = 0;
  std::uint64_t disk_bytes = 0;
  bool bytes_known = true;
  std::uint64_t raw_bytes = 0, stored_bytes = 0;
  // The inspected iteration.
  std::int32_t iteration = 0;
  bool iteration_complete = true;
  std::unique_ptr<reader::run_reader> reader;
  std::vector<std::unique_ptr<reader::run_reader>> earlier;  // where time-invariant data lies
  std::vector<variable_report> variables;
  std::string error;  // the iteration asked for is not stored
};

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
      if (a.raw_bytes && a.stored_bytes) {
        ir.raw_bytes += static_cast<std::uint64_t>(*a.raw_bytes);
        ir.stored_bytes += static_cast<std::uint64_t>(*a.stored_bytes);
      } else {
        ir.bytes_known = false;
      }
    }
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

// The writer whose file holds a block (-1 when the file does not say).
std::int32_t writer_of(const variable_report& v, const reader::block_info& b) {
  if (v.writer_files.empty() || b.writer < 0) return b.writer;
  const auto i = static_cast<std::size_t>(b.writer);
  return i < v.writer_files.size() ? v.writer_files[i] : b.writer;
}

const char* element_name(reader::element type) {
  switch (type) {
    case reader::element::int8:
      return "int8";
    case reader::element::int16:
      return "int16";
    case reader::element::int32:
      return "int32";
    case reader::element::int64:
      return "int64";
    case reader::element::float32:
      return "float32";
    case reader::element::float64:
      return "float64";
  }
  return "unknown";
}

// Ascending numbers as ranges: "0-9, 12".
std::string ranges(const std::vector<std::int32_t>& numbers) {
  std::string text;
  for (std::size_t i = 0; i < numbers.size();) {
    std::size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    text += (text.empty() ? "" : ", ") + std::to_string(numbers[i]);
    if (j > i) text += "-" + std::to_string(numbers[j]);
    i = j + 1;
  }
  return text.empty() ? "none" : text;
}

std::string extents_text(const std::vector<std::int64_t>& extents) {
  if (extents.empty()) return "none";
  std::string text;
  for (std::size_t d = 0; d < extents.size(); ++d)
    text += (d ? " x " : "") + std::to_string(extents[d]);
  return text;
}

std::string position_text(const std::vector<std::int64_t>& position) {
  std::string text = "(";
  for (std::size_t d = 0; d < position.size(); ++d)
    text += (d ? ", " : "") + std::to_string(position[d]);
  return text + ")";
}

std::string ratio_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

std::string count_text(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Rows of cells printed in columns, two spaces apart, each row indented.
void print_table(std::ostream& out, const std::string& indent,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto& row : rows) {
    std::string line = indent;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(width[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

std::vector<std::int32_t> iterations_where(const run_report& report, bool complete) {
  std::vector<std::int32_t> list;
  for (const iteration_report& ir : report.iterations)
    if (ir.complete == complete) list.push_back(ir.iteration);
  return list;
}

std::string why_incomplete(const run_report& report, const iteration_report& ir) {
  std::string text;
  for (const std::int32_t w : ir.missing_writers)
    text += std::string(text.empty() ? "" : "; ") + "missing writer file " + std::to_string(w) +
            " (" + report.r->prefix + "_It" + std::to_string(ir.iteration) + "_Pr" +
            std::to_string(w) + ".h5)";
  for (const std::string& f : ir.incomplete_files)
    text += std::string(text.empty() ? "" : "; ") + f + " says complete = 0";
  for (const std::string& f : ir.unreadable_files)
    text += std::string(text.empty() ? "" : "; ") + f + " is unreadable (torn, or not HDF5)";
  if (text.empty() && !ir.complete) text = "no file of its run holds its data";
  for (const std::string& f : ir.other_run_files)
    text += std::string(text.empty() ? "" : "; ") + f + " is from another run (not read)";
  return text;
}

void print_text(std::ostream& out, const run_report& report, bool blocks) {
  const run& r = *report.r;
  out << r.prefix << ": ";
  if (report.per_core) {
    out << "FilePerCore, "
        << count_text(static_cast<std::size_t>(report.writer_files), "writer file", "writer files")
        << " per iteration, " << count_text(report.master_files, "master file", "master files");
  } else {
    out << "Collective, 1 file per iteration";
  }
  out << ", " << (r.xdmf ? "XDMF " + r.xdmf->path : std::string("no XDMF")) << "\n";

  std::vector<std::int32_t> all;
  for (const iteration_report& ir : report.iterations) all.push_back(ir.iteration);
  std::vector<std::vector<std::string>> summary;
  summary.push_back({"iterations", ranges(all) + " (" + std::to_string(all.size()) + ")"});
  summary.push_back({"complete", ranges(iterations_where(report, true))});
  bool first = true;
  for (const iteration_report& ir : report.iterations) {
    if (ir.complete) continue;
    summary.push_back({first ? "incomplete" : "",
                       std::to_string(ir.iteration) + ": " + why_incomplete(report, ir)});
    first = false;
  }
  if (first) summary.push_back({"incomplete", "none"});
  std::string disk = count_text(report.files, "file", "files") + ", " +
                     std::to_string(report.disk_bytes) + " bytes";
  if (report.disk_bytes >= (std::uint64_t{1} << 20))
    disk += " (" + readable_bytes(report.disk_bytes) + ")";
  summary.push_back({"on disk", disk});
  for (std::size_t i = 0; i < r.part_files.size(); ++i)
    summary.push_back(
        {i == 0 ? "left over" : "", r.part_files[i].path + " (a file never finished)"});
  if (report.bytes_known)
    summary.push_back(
        {"compression", "ratio " + ratio_text(ratio(report.raw_bytes, report.stored_bytes)) +
                            " overall: " + std::to_string(report.raw_bytes) +
                            " bytes of data stored in " + std::to_string(report.stored_bytes)});
  else
    summary.push_back({"compression", "unknown (some files have no raw_bytes/stored_bytes)"});
  print_table(out, "  ", summary);

  out << "\n";
  std::vector<std::vector<std::string>> rows{
      {"iteration", "files", "complete", "raw bytes", "stored bytes", "ratio"}};
  for (const iteration_report& ir : report.iterations) {
    rows.push_back({std::to_string(ir.iteration), std::to_string(ir.files),
                    ir.complete ? "yes" : "no", ir.bytes_known ? std::to_string(ir.raw_bytes) : "-",
                    ir.bytes_known ? std::to_string(ir.stored_bytes) : "-",
                    ir.bytes_known ? ratio_text(ratio(ir.raw_bytes, ir.stored_bytes)) : "-"});
  }
  print_table(out, "  ", rows);

  out << "\n";
  if (!report.error.empty()) {
    out << "  " << report.error << "\n";
    return;
  }
  out << "  iteration " << report.iteration << ": "
      << (report.iteration_complete ? "complete" : "incomplete") << ", "
      << count_text(report.variables.size(), "variable", "variables");
  if (!report.per_core && report.writers > 0)
    out << ", blocks from "
        << count_text(static_cast<std::size_t>(report.writers), "writer", "writers");
  out << "\n";
  rows = {{"variable", "type", "global extents", "blocks", "sources", "elements", "bytes", "note"}};
  for (const variable_report& v : report.variables) {
    std::string note;
    if (v.stored_iteration)
      note = "time-invariant, stored in iteration " + std::to_string(*v.stored_iteration);
    if (!v.info) {
      rows.push_back({v.name, "-", "-", "-", "-", "-", "-", note + ": not found there"});
      continue;
    }
    rows.push_back({v.name, element_name(v.info->type), extents_text(v.info->global_extents),
                    std::to_string(v.info->blocks.size()), std::to_string(v.sources),
                    std::to_string(v.elements), std::to_string(v.bytes), note});
  }
  print_table(out, "  ", rows);
  if (!blocks) return;
  for (const variable_report& v : report.variables) {
    if (!v.info) continue;
    out << "\n  blocks of " << v.name;
    if (v.stored_iteration) out << " (iteration " << *v.stored_iteration << ")";
    out << "\n";
    rows = {{"source", "block", "writer", "extents", "position"}};
    for (const reader::block_info& b : v.info->blocks)
      rows.push_back({std::to_string(b.source), std::to_string(b.block),
                      writer_of(v, b) < 0 ? "-" : std::to_string(writer_of(v, b)),
                      extents_text(b.extents), position_text(b.position)});
    print_table(out, "    ", rows);
  }
}

void print_ratio(json_writer& j, bool known, std::uint64_t raw, std::uint64_t stored) {
  if (known) {
    j.key("raw_bytes").value(raw);
    j.key("stored_bytes").value(stored);
    j.key("compression_ratio").value(ratio(raw, stored));
  } else {
    j.key("raw_bytes").null();
    j.key("stored_bytes").null();
    j.key("compression_ratio").null();
  }
}

void print_json(json_writer& j, const run_report& report, bool blocks) {
  const run& r = *report.r;
  j.begin_object();
  j.key("prefix").value(r.prefix);
  j.key("simulation").value(r.simulation);
  j.key("file_mode").value(report.per_core ? "FilePerCore" : "Collective");
  j.key("writer_files_per_iteration").value(report.per_core ? report.writer_files : 0);
  j.key("master_files").value(static_cast<std::uint64_t>(report.master_files));
  j.key("xdmf");
  if (r.xdmf)
    j.value(r.xdmf->path);
  else
    j.null();
  j.key("part_files").begin_array();
  for (const file_info& f : r.part_files) j.value(f.path);
  j.end_array();
  j.key("files").value(static_cast<std::uint64_t>(report.files));
  j.key("bytes_on_disk").value(report.disk_bytes);
  std::vector<std::int32_t> all;
  for (const iteration_report& ir : report.iterations) all.push_back(ir.iteration);
  j.key("iterations").array(all);
  j.key("iteration_ranges").value(ranges(all));
  j.key("complete_iterations").array(iterations_where(report, true));
  j.key("incomplete_iterations").array(iterations_where(report, false));
  print_ratio(j, report.bytes_known, report.raw_bytes, report.stored_bytes);
  j.key("per_iteration").begin_array();
  for (const iteration_report& ir : report.iterations) {
    j.begin_object();
    j.key("iteration").value(ir.iteration);
    j.key("files").value(static_cast<std::uint64_t>(ir.files));
    j.key("complete").value(ir.complete);
    j.key("missing_writer_files").array(ir.missing_writers);
    j.key("incomplete_files").array(ir.incomplete_files);
    j.key("unreadable_files").array(ir.unreadable_files);
    j.key("other_run_files").array(ir.other_run_files);
    print_ratio(j, ir.bytes_known, ir.raw_bytes, ir.stored_bytes);
    j.end_object();
  }
  j.end_array();
  if (!report.error.empty()) {
    j.key("error").value(report.error);
    j.end_object();
    return;
  }
  j.key("inspected").begin_object();
  j.key("iteration").value(report.iteration);
  j.key("complete").value(report.iteration_complete);
  j.key("writers").value(report.per_core ? report.writer_files : report.writers);
  j.key("variables").begin_array();
  for (const variable_report& v : report.variables) {
    j.begin_object();
    j.key("name").value(v.name);
    j.key("time_invariant_from");
    if (v.stored_iteration)
      j.value(*v.stored_iteration);
    else
      j.null();
    j.key("found").value(v.info != nullptr);
    if (v.info) {
      j.key("type").value(element_name(v.info->type));
      j.key("global_extents").array(v.info->global_extents);
      j.key("blocks").value(static_cast<std::uint64_t>(v.info->blocks.size()));
      j.key("sources").value(static_cast<std::uint64_t>(v.sources));
      j.key("elements").value(v.elements);
      j.key("bytes").value(v.bytes);
      if (blocks) {
        j.key("block_list").begin_array();
        for (const reader::block_info& b : v.info->blocks) {
          j.begin_object();
          j.key("source").value(b.source);
          j.key("block").value(b.block);
          j.key("writer").value(writer_of(v, b));
          j.key("extents").array(b.extents);
          j.key("position").array(b.position);
          j.end_object();
        }
        j.end_array();
      }
    }
    j.end_object();
  }
  j.end_array();
  j.end_object();
  j.end_object();
}

int run_inspect(const arguments& args) {
  const plugins::hdf5::error_print_guard quiet;  // failures are reported by message
  std::string failure;
  std::vector<run> runs;
  std::vector<run_report> reports;
  try {
    std::optional<std::int32_t> file_iteration;
    runs = find_runs(args.path, file_iteration);
    const std::optional<std::int32_t> wanted = args.iteration ? args.iteration : file_iteration;
    for (const run& r : runs) reports.push_back(inspect_run(r, wanted));
  } catch (const inspect_error& e) {
    failure = e.message;
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (!failure.empty()) {
    std::cerr << "sidecore inspect: error: " << failure << "\n";
    if (args.json) {
      json_writer j(2);
      j.begin_object();
      j.key("path").value(args.path);
      j.key("error").value(failure);
      j.end_object();
      std::cout << j.text() << "\n";
    }
    return 1;
  }
  int status = 0;
  for (const run_report& report : reports)
    if (!report.error.empty()) {
      std::cerr << "sidecore inspect: error: " << report.error << "\n";
      status = 1;
    }
  if (args.json) {
    json_writer j(2);
    j.begin_object();
    j.key("path").value(args.path);
    j.key("runs").begin_array();
    for (const run_report& report : reports) print_json(j, report, args.blocks);
    j.end_array();
    j.end_object();
    std::cout << j.text() << "\n";
    return status;
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (i) std::cout << "\n";
    print_text(std::cout, reports[i], args.blocks);
  }
  return status;
}

}  // namespace

void add_inspect(CLI::App& app, int& status) {
  CLI::App* command = app.add_subcommand(
      "inspect", "show what an HDF5 store wrote: iterations, completeness, variables, blocks");
  command->footer(std::string(description) + "\n\n" + exit_status);
  auto args = std::make_shared<arguments>();
  command->add_option("path", args->path, "a directory, a prefix or a file of a run")->required();
  CLI::Option* iteration =
      command
          ->add_option("--iteration", args->iteration_number,
                       "the iteration whose variables are shown (default: the last stored)")
          ->check(CLI::Range(0, INT32_MAX));
  command->add_flag("--blocks", args->blocks,
                    "list every block: source, id, writer, extents, position");
  command->add_flag("--json", args->json, "print the result as JSON on stdout");
  command->callback([args, iteration, &status] {
    if (iteration->count()) args->iteration = args->iteration_number;
    status = run_inspect(*args);
  });
}

}  // namespace sidecore::cli
