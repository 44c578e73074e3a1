// `sidecore inspect`: a run report printed for people (columns) or as JSON.
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

#include "common/text.hpp"
#include "common/units.hpp"
#include "reader/iteration_files.hpp"

namespace sidecore::cli::inspect {
namespace {

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
  if (!ir.clients_left_out.empty())
    text += std::string(text.empty() ? "" : "; ") +
            reader::describe_clients_left_out(ir.clients_left_out);
  for (const std::string& f : ir.unreadable_files)
    text += std::string(text.empty() ? "" : "; ") + f + " is unreadable (torn, or not HDF5)";
  if (text.empty() && !ir.complete) text = "no file of its run holds its data";
  for (const std::string& f : ir.other_run_files)
    text += std::string(text.empty() ? "" : "; ") + f + " is from another run (not read)";
  return text;
}

}  // namespace

void print_text(std::ostream& out, const run_report& report, bool blocks) {
  const run& r = *report.r;
  out << r.prefix << ": ";
  if (report.per_core) {
    out << "FilePerCore, " << counted(report.writer_files, "writer file") << " per iteration, "
        << counted(static_cast<long long>(report.master_files), "master file");
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
  std::string disk = counted(static_cast<long long>(report.files), "file") + ", " +
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
      << counted(static_cast<long long>(report.variables.size()), "variable");
  if (!report.per_core && report.writers > 0)
    out << ", blocks from " << counted(report.writers, "writer");
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

namespace {

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

}  // namespace

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
    j.key("clients_left_out").array(ir.clients_left_out);
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

}  // namespace sidecore::cli::inspect
