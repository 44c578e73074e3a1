// Builds the master file of file-per-core output. Writers send their block metadata to writer
// 0 once their own file is closed; writer 0 then maps each block with a virtual dataset whose
// source file name is relative, so that the output directory can be moved as a whole.
#include "plugins/hdf5/virtual_view.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>

#include "common/error.hpp"
#include "common/gather.hpp"
#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "plugins/hdf5/hdf5_attributes.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "plugins/hdf5/mesh_description.hpp"
#include "plugins/hdf5/packed_blocks.hpp"
#include "plugins/hdf5/store_internals.hpp"

namespace sidecore::plugins::hdf5 {

namespace {

// Per block: variable, type, source, block, packed offset, ndims, has global, dims, position,
// global.
constexpr std::size_t fixed_fields = 7;

// A source file or dataset name as H5Pset_virtual takes it: HDF5 reads '%' in these names as
// a format ("%b": a block number); "%%" is a '%'.
std::string vds_literal(const std::string& text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    escaped += c;
    if (c == '%') escaped += '%';
  }
  return escaped;
}

// The elements of each writer's "<variable>/packed" (BlockLayout Packed) the blocks reach.
std::map<std::int32_t, hsize_t> packed_extents(const std::vector<block_record>& blocks) {
  std::map<std::int32_t, hsize_t> packed_elements;
  for (const block_record& block : blocks) {
    if (block.packed_offset < 0) continue;
    const hsize_t end = static_cast<hsize_t>(block.packed_offset) + element_total(block.dims);
    hsize_t& total = packed_elements[block.writer];
    total = std::max(total, end);
  }
  return packed_elements;
}

}  // namespace

std::string block_dataset_name(const std::string& variable, std::int32_t source, std::int32_t block,
                               bool block_level) {
  std::string name = variable + "/P" + std::to_string(source);
  if (block_level) name += "/B" + std::to_string(block);
  return name;
}

std::vector<variable_record> gather_blocks(const std::vector<local_blocks>& mine,
                                           std::int32_t iteration, bool failed_here, MPI_Comm comm,
                                           bool& failed) {
  std::vector<std::int64_t> packed;
  packed.push_back(failed_here ? 1 : 0);
  for (const local_blocks& b : mine) {
    const std::size_t ndims = b.dims.size();
    const bool has_global = b.global_dims != nullptr && b.global_dims->size() == ndims && ndims > 0;
    packed.insert(
        packed.end(),
        {static_cast<std::int64_t>(b.variable), static_cast<std::int64_t>(b.type), b.source,
         b.block, b.packed_offset, static_cast<std::int64_t>(ndims), has_global ? 1 : 0});
    packed.insert(packed.end(), b.dims.begin(), b.dims.end());
    packed.insert(packed.end(), b.position.begin(), b.position.end());
    if (has_global) packed.insert(packed.end(), b.global_dims->begin(), b.global_dims->end());
  }

  // Gathered in rounds: at scale the block records of one iteration pass what one MPI_Gatherv
  // carries (2 GiB).
  const std::vector<std::string> parts =
      gather_parts(comm, std::string_view(reinterpret_cast<const char*>(packed.data()),
                                          packed.size() * sizeof(std::int64_t)));
  failed = false;
  if (parts.empty()) return {};  // not rank 0

  std::vector<variable_record> records;
  const auto record_of = [&](std::size_t variable, stored_type type) -> variable_record& {
    for (variable_record& r : records) {
      if (r.variable == variable) return r;
    }
    variable_record r;
    r.variable = variable;
    r.stored_iteration = iteration;
    r.type = type;
    records.push_back(std::move(r));
    return records.back();
  };
  std::vector<std::int64_t> fields;
  for (std::size_t w = 0; w < parts.size(); ++w) {
    fields.resize(parts[w].size() / sizeof(std::int64_t));
    std::memcpy(fields.data(), parts[w].data(), fields.size() * sizeof(std::int64_t));
    const std::int64_t* p = fields.data();
    const std::int64_t* end = p + fields.size();
    if (*p++ != 0) failed = true;
    while (p + fixed_fields <= end) {
      const auto variable = static_cast<std::size_t>(p[0]);
      const auto type = static_cast<stored_type>(p[1]);
      block_record block;
      block.writer = static_cast<std::int32_t>(w);
      block.source = static_cast<std::int32_t>(p[2]);
      block.block = static_cast<std::int32_t>(p[3]);
      block.packed_offset = p[4];
      const auto ndims = static_cast<std::size_t>(p[5]);
      const bool has_global = p[6] != 0;
      p += fixed_fields;
      block.dims.assign(p, p + ndims);
      p += ndims;
      block.position.assign(p, p + ndims);
      p += ndims;
      variable_record& record = record_of(variable, type);
      if (has_global) {
        if (record.global_dims.size() != ndims) record.global_dims.assign(ndims, 0);
        for (std::size_t d = 0; d < ndims; ++d) {
          record.global_dims[d] = std::max(record.global_dims[d], p[d]);
        }
        p += ndims;
      }
      record.blocks.push_back(std::move(block));
    }
  }
  std::sort(records.begin(), records.end(), [](const variable_record& a, const variable_record& b) {
    return a.variable < b.variable;
  });
  for (variable_record& r : records) {
    std::sort(r.blocks.begin(), r.blocks.end(), [](const block_record& a, const block_record& b) {
      return std::tie(a.source, a.block) < std::tie(b.source, b.block);
    });
  }
  return records;
}

namespace {
void write_master_contents(
    file_handle& file, const config::model& model, std::int32_t iteration,
    const std::vector<variable_record>& records,
    const std::function<std::string(std::int32_t, std::int32_t)>& source_file, bool complete,
    const run_marker& run, const std::string& path);
}  // namespace

bool write_master(const std::string& path, const config::model& model, std::int32_t iteration,
                  const std::vector<variable_record>& records,
                  const std::function<std::string(std::int32_t, std::int32_t)>& source_file,
                  bool complete, const run_marker& run, unsigned permissions) {
  const bool any = std::any_of(records.begin(), records.end(),
                               [](const variable_record& r) { return !r.global_dims.empty(); });
  if (!any) return false;

  const call_site file_site{path, {}};
  // The 1.8 file format at least: its attributes may exceed 64 KiB, as the block tables of
  // variables with thousands of blocks do.
  property_list_handle fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", file_site));
  check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST),
               "H5Pset_libver_bounds", file_site);
  const std::string temporary = path + ".part";
  free_temporary_name(temporary);
  file_handle file(check_id(H5Fcreate(temporary.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()),
                            "H5Fcreate", file_site));
  apply_permissions(temporary, permissions);
  try {
    write_master_contents(file, model, iteration, records, source_file, complete, run, path);
  } catch (...) {
    abandon_file(file);
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw storage_error("HDF5 store: cannot rename \"" + temporary + "\" to \"" + path +
                        "\": " + error.message());
  }
  return true;
}

namespace {

// The master file's attributes and virtual datasets, into the open (temporary) file; closes it.
void write_master_contents(
    file_handle& file, const config::model& model, std::int32_t iteration,
    const std::vector<variable_record>& records,
    const std::function<std::string(std::int32_t, std::int32_t)>& source_file, bool complete,
    const run_marker& run, const std::string& path) {
  const call_site file_site{path, {}};
  write_int_attribute(file.get(), "/", "iteration", iteration, path);
  write_int_attribute(file.get(), "/", "complete", complete ? 1 : 0, path);
  write_run_marker(file.get(), run, true, path);
  write_mesh_description(file.get(), model, path);
  const property_list_handle lcpl = make_intermediate_group_lcpl(file_site);

  for (const variable_record& record : records) {
    if (record.global_dims.empty()) {
      write_per_client_view(file.get(), model, iteration, record, source_file, lcpl.get(), path,
                            model.variables[record.variable].name);
      continue;
    }
    const config::variable& var = model.variables[record.variable];
    const config::layout& layout = model.layouts[var.layout_index];
    const std::string& name = var.name;
    const call_site site{path, name};
    const std::size_t ndims = record.global_dims.size();
    const std::vector<hsize_t> global(record.global_dims.begin(), record.global_dims.end());
    const dataspace_handle global_space = make_simple_space(global, site);
    property_list_handle dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", site));

    std::vector<std::int64_t> positions, extents;
    std::vector<std::int32_t> origins;  // writer, source, block per mapped block
    // Packed blocks (BlockLayout Packed): each writer's "<variable>/packed" holds them all.
    const std::map<std::int32_t, hsize_t> packed_elements = packed_extents(record.blocks);
    const std::string packed_name = packed_data_name(name);
    // Maps the box (start, count) of the global dataset onto a selection of a source dataset.
    const auto map = [&](const std::vector<hsize_t>& start, const std::vector<hsize_t>& count,
                         const std::string& source_name, const std::string& dataset_name,
                         const dataspace_handle& source_space) {
      dataspace_handle virtual_space(check_id(H5Scopy(global_space.get()), "H5Scopy", site));
      check_status(H5Sselect_hyperslab(virtual_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                       count.data(), nullptr),
                   "H5Sselect_hyperslab", site);
      check_status(H5Pset_virtual(dcpl.get(), virtual_space.get(), vds_literal(source_name).c_str(),
                                  vds_literal(dataset_name).c_str(), source_space.get()),
                   "H5Pset_virtual", site);
    };
    struct packed_run {
      std::int32_t writer;
      hsize_t packed_start, packed_end;   // in elements of the writer's "<variable>/packed"
      std::vector<hsize_t> start, count;  // the box in the global dataset
    };
    std::optional<packed_run> run;
    const auto map_packed_run = [&] {
      if (!run) return;
      const dataspace_handle source_space =
          make_simple_space({packed_elements.at(run->writer)}, site);
      const hsize_t elements = run->packed_end - run->packed_start;
      check_status(H5Sselect_hyperslab(source_space.get(), H5S_SELECT_SET, &run->packed_start,
                                       nullptr, &elements, nullptr),
                   "H5Sselect_hyperslab", site);
      map(run->start, run->count, source_file(record.stored_iteration, run->writer), packed_name,
          source_space);
      run.reset();
    };
    for (std::size_t b = 0; b < record.blocks.size(); ++b) {
      const block_record& block = record.blocks[b];
      const bool more = b + 1 < record.blocks.size() &&
                        record.blocks[b + 1].source == block.source &&
                        record.blocks[b + 1].writer == block.writer;
      const bool packed = block.packed_offset >= 0;
      const std::string dataset_name =
          packed ? packed_name
                 : block_dataset_name(name, block.source, block.block,
                                      has_block_level(model.arch.domains, block.block, more));
      bool empty = block.dims.size() != ndims;
      bool fits = !empty;
      for (std::size_t d = 0; d < ndims && fits; ++d) {
        if (block.dims[d] == 0) empty = true;
        fits = block.position[d] >= 0 && block.position[d] + block.dims[d] <= record.global_dims[d];
      }
      if (empty) continue;
      if (!fits) {
        // FilePerCore files do not use the global dimensions (Damaris ignores them there): the
        // block is kept in its writer's file, only the global view leaves it out. Said once
        // per variable, with the first block met, since a wrong global="..." repeats at every
        // iteration.
        if (log::first_time("HDF5 store: a block outside the global dimensions of " + name)) {
          std::string kept = '"' + dataset_name + '"';
          if (packed) {
            std::int64_t elements = 1;
            for (const std::int64_t e : block.dims) elements *= e;
            kept = "elements [" + std::to_string(block.packed_offset) + ", " +
                   std::to_string(block.packed_offset + elements) + ") of " + kept;
          }
          log::warning("HDF5 store: variable \"", name, "\": block ", block.block, " of source ",
                       block.source, " at position ", dims_text(block.position),
                       " with dimensions ", dims_text(block.dims),
                       " lies outside the global dimensions ", dims_text(record.global_dims),
                       " (iteration ", record.stored_iteration, "); it is stored as written, as ",
                       kept, " in ", source_file(record.stored_iteration, block.writer),
                       ", but left out of the global dataset of ", path,
                       "; check the layout's global=\"...\" and the block's position. Said once "
                       "per variable");
        }
        continue;
      }
      const std::vector<hsize_t> count(block.dims.begin(), block.dims.end());
      const std::vector<hsize_t> start(block.position.begin(), block.position.end());
      if (packed) {
        // A packed block is a run of its writer's 1-D dataset, mapped in C order onto its box.
        // A block that follows the previous one both in that run and along the slowest
        // dimension of the global box (same extents and position in the others) extends its
        // mapping: the two runs, one after the other, are the C order of the joined box.
        const hsize_t offset = static_cast<hsize_t>(block.packed_offset);
        if (run && run->writer == block.writer && run->packed_end == offset &&
            std::equal(count.begin() + 1, count.end(), run->count.begin() + 1) &&
            std::equal(start.begin() + 1, start.end(), run->start.begin() + 1) &&
            run->start[0] + run->count[0] == start[0]) {
          run->count[0] += count[0];
          run->packed_end += element_total(block.dims);
        } else {
          map_packed_run();
          run = packed_run{block.writer, offset, offset + element_total(block.dims), start, count};
        }
      } else {
        map_packed_run();
        map(start, count, source_file(record.stored_iteration, block.writer), dataset_name,
            make_simple_space(count, site));
      }
      positions.insert(positions.end(), block.position.begin(), block.position.end());
      extents.insert(extents.end(), block.dims.begin(), block.dims.end());
      origins.insert(origins.end(), {block.writer, block.source, block.block});
    }
    map_packed_run();

    const stored_hdf5_type type(record.type);
    dataset_handle dataset(
        check_id(H5Dcreate2(file.get(), name.c_str(), type.get(), global_space.get(), lcpl.get(),
                            dcpl.get(), H5P_DEFAULT),
                 "H5Dcreate2", site));
    write_int_attribute(dataset.get(), name, "iteration", iteration, path);
    write_int_attribute(dataset.get(), name, "stored_iteration", record.stored_iteration, path);
    write_string_attribute(dataset.get(), name, "layout", layout.name, path);
    if (!var.unit.empty()) write_string_attribute(dataset.get(), name, "unit", var.unit, path);
    const hsize_t mapped = origins.size() / 3;
    if (mapped > 0) {
      write_attribute(dataset.get(), name, "block_positions", H5T_NATIVE_INT64, {mapped, ndims},
                      positions.data(), path);
      write_attribute(dataset.get(), name, "block_dimensions", H5T_NATIVE_INT64, {mapped, ndims},
                      extents.data(), path);
      write_attribute(dataset.get(), name, "block_origins", H5T_NATIVE_INT32, {mapped, 3},
                      origins.data(), path);
    }
    check_status(dataset.close(), "H5Dclose", site);
  }
  check_status(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "H5Fflush", file_site);
  check_status(file.close(), "H5Fclose", file_site);
}

}  // namespace

void write_per_client_view(
    hid_t file, const config::model& model, std::int32_t iteration, const variable_record& record,
    const std::function<std::string(std::int32_t, std::int32_t)>& source_file, hid_t lcpl,
    const std::string& path, const std::string& dataset) {
  const std::vector<std::int64_t> view = per_client_extents(record);
  if (view.empty()) return;
  const std::vector<std::int64_t>& extents = record.blocks.front().dims;
  std::int32_t blocks = 0;
  for (const block_record& b : record.blocks) blocks = std::max(blocks, b.block + 1);
  const config::variable& var = model.variables[record.variable];
  const config::layout& layout = model.layouts[var.layout_index];
  const std::string& name = var.name;
  const call_site site{path, dataset};
  const std::vector<hsize_t> shape(view.begin(), view.end());
  const std::size_t leading = blocks > 1 ? 2 : 1;
  const dataspace_handle space = make_simple_space(shape, site);
  property_list_handle dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", site));
  const std::map<std::int32_t, hsize_t> packed_elements = packed_extents(record.blocks);
  const std::uint64_t elements = element_total(extents);
  std::map<std::int32_t, int> blocks_of_source;
  for (const block_record& b : record.blocks) ++blocks_of_source[b.source];
  for (const block_record& b : record.blocks) {
    if (elements == 0) break;
    std::vector<hsize_t> start(shape.size(), 0), count(shape.begin(), shape.end());
    start[0] = static_cast<hsize_t>(b.source);
    count[0] = 1;
    if (blocks > 1) {
      start[1] = static_cast<hsize_t>(b.block);
      count[1] = 1;
    }
    dataspace_handle virtual_space(check_id(H5Scopy(space.get()), "H5Scopy", site));
    check_status(H5Sselect_hyperslab(virtual_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                     count.data(), nullptr),
                 "H5Sselect_hyperslab", site);
    std::string dataset_name;
    dataspace_handle source_space;
    if (b.packed_offset >= 0) {
      dataset_name = packed_data_name(name);
      source_space = make_simple_space({packed_elements.at(b.writer)}, site);
      const hsize_t offset = static_cast<hsize_t>(b.packed_offset), n = elements;
      check_status(
          H5Sselect_hyperslab(source_space.get(), H5S_SELECT_SET, &offset, nullptr, &n, nullptr),
          "H5Sselect_hyperslab", site);
    } else {
      dataset_name = block_dataset_name(
          name, b.source, b.block,
          has_block_level(model.arch.domains, b.block, blocks_of_source[b.source] > 1));
      source_space = make_simple_space(std::vector<hsize_t>(extents.begin(), extents.end()), site);
    }
    check_status(H5Pset_virtual(dcpl.get(), virtual_space.get(),
                                vds_literal(source_file(record.stored_iteration, b.writer)).c_str(),
                                vds_literal(dataset_name).c_str(), source_space.get()),
                 "H5Pset_virtual", site);
  }
  const stored_hdf5_type type(record.type);
  dataset_handle view_dataset(check_id(
      H5Dcreate2(file, dataset.c_str(), type.get(), space.get(), lcpl, dcpl.get(), H5P_DEFAULT),
      "H5Dcreate2", site));
  const hid_t d = view_dataset.get();
  write_int_attribute(d, dataset, "iteration", iteration, path);
  write_int_attribute(d, dataset, "stored_iteration", record.stored_iteration, path);
  write_string_attribute(d, dataset, "layout", layout.name, path);
  write_string_attribute(d, dataset, "indexed_by", leading == 2 ? "client,block" : "client", path);
  if (!var.unit.empty()) write_string_attribute(d, dataset, "unit", var.unit, path);
  check_status(view_dataset.close(), "H5Dclose", site);
}

std::vector<std::int64_t> per_client_extents(const variable_record& record) {
  if (record.blocks.empty()) return {};
  const std::vector<std::int64_t>& extents = record.blocks.front().dims;
  std::int32_t clients = 0, blocks = 0;
  for (const block_record& b : record.blocks) {
    if (b.dims != extents || b.source < 0 || b.block < 0) return {};
    clients = std::max(clients, b.source + 1);
    blocks = std::max(blocks, b.block + 1);
  }
  std::vector<std::int64_t> shape{clients};
  if (blocks > 1) shape.push_back(blocks);
  const bool scalar = extents.size() == 1 && extents[0] == 1;
  if (!scalar) shape.insert(shape.end(), extents.begin(), extents.end());
  return shape;
}

}  // namespace sidecore::plugins::hdf5
