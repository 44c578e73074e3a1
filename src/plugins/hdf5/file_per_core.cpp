// FilePerCore output: one file per writer and iteration, each block its own dataset named as
// Damaris names it, then the iteration's master file of virtual datasets and its XDMF entry.
#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "plugins/hdf5/hdf5_attributes.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "plugins/hdf5/mesh_description.hpp"
#include "plugins/hdf5/packed_blocks.hpp"
#include "plugins/hdf5/store_internals.hpp"

namespace sidecore::plugins::hdf5 {

void hdf5_store::write_file_per_core(const iteration_data& data) {
  const std::vector<const variable_blocks*> selected = select(data);
  // Readers expect one file per writer and iteration, so the file exists even when empty.
  const std::string path =
      m_options.files_path + per_core_name(data.iteration, m_context.writer_index);
  std::vector<local_blocks> mine;
  std::exception_ptr failure;
  try {
    // Validate everything first so that a bad block does not leave a half-written file.
    std::vector<std::vector<prepared_block>> prepared;
    std::vector<char> packed;  // per selected variable: its blocks go packed in this file
    for (const variable_blocks* vb : selected) {
      const std::size_t bytes = element_type_info(vb->layout->type).bytes;
      const block_view* previous = nullptr;
      for (const block_view* block : vb->blocks) {
        const std::string problem = block_problem(*vb->var, *block, bytes);
        if (!problem.empty()) throw storage_error("HDF5 store: " + problem);
        if (previous != nullptr && previous->source == block->source &&
            previous->block_id == block->block_id) {
          throw storage_error("HDF5 store: " + block_name(*vb->var, *block) +
                              " appears twice in iteration " + std::to_string(data.iteration));
        }
        previous = block;
      }
      prepared.push_back(prepare(*vb));
      packed.push_back(packs_blocks(settings_of(index_of(vb->var)).blocks, prepared.back(),
                                    m_context.model->arch.domains));
    }
    // Written under a temporary name and renamed once complete: a writer killed, or failing,
    // part-way never leaves a partial file under the name readers look for.
    const std::string temporary = path + ".part";
    byte_counts counts;
    try {
      counts = write_file_per_core_contents(data, selected, prepared, packed, path, temporary);
      if (m_options.durable) sync_file(temporary);
      std::error_code error;
      std::filesystem::rename(temporary, path, error);
      if (error)
        throw storage_error("HDF5 store: cannot rename \"" + temporary + "\" to \"" + path +
                            "\": " + error.message());
      if (m_options.durable) sync_directory_of(path);
    } catch (...) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw;
    }
    log_written(path, counts, true);
    for (std::size_t i = 0; i < selected.size(); ++i) {
      const variable_blocks& vb = *selected[i];
      const std::size_t variable = index_of(vb.var);
      const output_settings& settings = settings_of(variable);
      const stored_type type = stored_type_of(vb.layout->type, settings.precision);
      const std::vector<std::int64_t> offsets =
          packed[i] ? packed_offsets(prepared[i]) : std::vector<std::int64_t>{};
      for (std::size_t k = 0; k < prepared[i].size(); ++k) {
        const prepared_block& p = prepared[i][k];
        local_blocks b;
        if (packed[i]) b.packed_offset = offsets[k];
        b.variable = variable;
        b.type = type;
        b.global_dims = &p.view->global_dims;
        b.source = p.view->source;
        b.block = p.view->block_id;
        b.dims = p.dims;
        b.position = p.position;
        mine.push_back(std::move(b));
      }
    }
  } catch (...) {
    failure = std::current_exception();
  }

  // Writers agree on which time-invariant variables now have been stored, and writer 0
  // learns every block for the master file and the XDMF. Writers that failed take part too,
  // so that nobody waits for them.
  const bool constants_pending =
      std::any_of(selected.begin(), selected.end(),
                  [](const variable_blocks* vb) { return !vb->var->time_varying; });
  const bool gather = m_options.virtual_view || m_options.xdmf;
  if (constants_pending) {
    std::vector<int> held(m_context.model->variables.size(), 0);
    for (const variable_blocks* vb : selected) {
      if (!vb->blocks.empty()) held[index_of(vb->var)] = 1;
    }
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, held.data(), static_cast<int>(held.size()), MPI_INT,
                            MPI_MAX, m_context.comm),
              "MPI_Allreduce");
    for (const variable_blocks* vb : selected) {
      const std::size_t variable = index_of(vb->var);
      if (!vb->var->time_varying && held[variable] != 0) {
        m_constant_iteration[variable] = data.iteration;
      }
    }
  }
  if (gather && m_deferred_view) {
    deferred_step step;
    step.iteration = data.iteration;
    step.failed = failure != nullptr;
    step.incomplete = data.incomplete;
    step.global_dims.reserve(mine.size());
    for (local_blocks& b : mine) {
      step.global_dims.push_back(b.global_dims ? *b.global_dims : std::vector<std::int64_t>{});
      b.global_dims = &step.global_dims.back();  // the block's memory goes back after this call
    }
    step.blocks = std::move(mine);
    m_deferred.push_back(std::move(step));
  } else if (gather) {
    bool failed = false;
    std::vector<variable_record> records =
        gather_blocks(mine, data.iteration, failure != nullptr, m_context.comm, failed);
    // The master file is complete when every writer's file is: written, and holding all of
    // its clients' data.
    int incomplete = data.incomplete ? 1 : 0;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &incomplete, 1, MPI_INT, MPI_MAX, m_context.comm),
              "MPI_Allreduce");
    if (m_context.writer_index == 0) {
      try {
        publish_file_per_core(data.iteration, std::move(records), !failed && !incomplete);
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
}

byte_counts hdf5_store::write_file_per_core_contents(
    const iteration_data& data, const std::vector<const variable_blocks*>& selected,
    const std::vector<std::vector<prepared_block>>& prepared, const std::vector<char>& packed,
    const std::string& path, const std::string& temporary) const {
  const call_site file_site{path, {}};
  // HDF5 cannot give up a file it failed to create (it keeps it, and crashes when the library
  // shuts down): make sure first that the file system can hold it.
  std::uint64_t bytes = 64 << 10;
  for (const auto& blocks : prepared)
    for (const prepared_block& p : blocks) bytes += p.bytes + (4 << 10);
  ensure_space(path, bytes);
  free_temporary_name(temporary);
  file_handle file(check_id(H5Fcreate(temporary.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT),
                            "H5Fcreate", file_site));
  apply_permissions(temporary, m_options.permissions);
  try {
    byte_counts counts = write_contents(file, data, selected, prepared, packed, path);
    // Flushed first: a failure then leaves the file id to abandon, where a failed close would
    // leave HDF5 holding the file.
    check_status(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "H5Fflush", file_site);
    check_status(file.close(), "H5Fclose", file_site);
    return counts;
  } catch (...) {
    abandon_file(file);
    throw;
  }
}

byte_counts hdf5_store::write_contents(file_handle& file, const iteration_data& data,
                                       const std::vector<const variable_blocks*>& selected,
                                       const std::vector<std::vector<prepared_block>>& prepared,
                                       const std::vector<char>& packed,
                                       const std::string& path) const {
  const call_site file_site{path, {}};
  write_int_attribute(file.get(), "/", "iteration", data.iteration, path);
  write_int_attribute(file.get(), "/", "complete", data.incomplete ? 0 : 1, path);
  write_clients_left_out(file.get(), data.clients_left_out, path);
  write_run_marker(file.get(), m_run, true, path);
  write_mesh_description(file.get(), *m_context.model, path);
  const property_list_handle lcpl = make_intermediate_group_lcpl(file_site);
  byte_counts counts;

  for (std::size_t i = 0; i < selected.size(); ++i) {
    const variable_blocks& vb = *selected[i];
    const output_settings& settings = settings_of(index_of(vb.var));
    const stored_type type = stored_type_of(vb.layout->type, settings.precision);
    const stored_hdf5_type file_type(type);
    const std::vector<prepared_block>& blocks = prepared[i];
    if (packed[i]) {
      std::uint64_t elements = 0;
      for (const prepared_block& p : blocks) elements += element_total(p.dims);
      counts.raw += elements * config::element_size(vb.layout->type);
      write_packed_variable(file.get(), lcpl.get(), *vb.var, *vb.layout, blocks, type,
                            settings.compression, ghosts_of(*vb.var), data.iteration, path,
                            counts.stored);
      continue;
    }
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const prepared_block& p = blocks[b];
      const block_view* block = p.view;
      const bool more = b + 1 < blocks.size() && blocks[b + 1].view->source == block->source;
      const std::string name =
          block_dataset_name(vb.var->name, block->source, block->block_id,
                             has_block_level(m_context.model->arch.domains, block->block_id, more));
      const call_site site{path, name};
      const std::vector<hsize_t> extents = to_hsize(p.dims);
      const dataspace_handle space = make_simple_space(extents, site);
      // One chunk per block: the block is compressed as a whole.
      const property_list_handle dcpl = make_dataset_properties(
          settings.compression, element_total(p.dims) > 0 ? extents : std::vector<hsize_t>{},
          stored_size(type), site);
      dataset_handle dataset(check_id(H5Dcreate2(file.get(), name.c_str(), file_type.get(),
                                                 space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
                                      "H5Dcreate2", site));
      if (element_total(p.dims) > 0) {
        check_status(
            H5Dwrite(dataset.get(), file_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, p.data),
            "H5Dwrite", site);
      }
      write_int_attribute(dataset.get(), name, "iteration", block->iteration, path);
      write_int_attribute(dataset.get(), name, "source", block->source, path);
      write_int_attribute(dataset.get(), name, "block", block->block_id, path);
      write_string_attribute(dataset.get(), name, "layout", vb.layout->name, path);
      if (!p.dims.empty()) {
        write_int64_array_attribute(dataset.get(), name, "position", p.position, path);
      }
      if (!block->global_dims.empty()) {
        write_int64_array_attribute(dataset.get(), name, "global_dimensions", block->global_dims,
                                    path);
      }
      if (!ghosts_of(*vb.var).empty()) {
        write_int64_array_attribute(dataset.get(), name, "ghosts_before", ghosts_of(*vb.var).before,
                                    path);
        write_int64_array_attribute(dataset.get(), name, "ghosts_after", ghosts_of(*vb.var).after,
                                    path);
      }
      if (!vb.var->unit.empty()) {
        write_string_attribute(dataset.get(), name, "unit", vb.var->unit, path);
      }
      add_dataset_bytes(counts, dataset.get(), element_total(p.dims), vb.layout->type);
      check_status(dataset.close(), "H5Dclose", site);
    }
  }
  write_ratio_attributes(file.get(), counts, path);
  return counts;
}

void hdf5_store::publish_file_per_core(std::int32_t iteration, std::vector<variable_record> records,
                                       bool complete) {
  const config::model& model = *m_context.model;
  for (const variable_record& r : records) {
    if (!model.variables[r.variable].time_varying) m_constant_records[r.variable] = r;
  }
  // Time-invariant variables stored earlier are mapped again, from their original files.
  for (const auto& [variable, record] : m_constant_records) {
    const bool present = std::any_of(records.begin(), records.end(),
                                     [v = variable](const auto& r) { return r.variable == v; });
    if (!present) records.push_back(record);
  }
  std::sort(records.begin(), records.end(), [](const variable_record& a, const variable_record& b) {
    return a.variable < b.variable;
  });
  if (!m_options.virtual_view) return;

  const std::string master = m_options.files_path + global_name(iteration);
  const bool written = write_master(
      master, model, iteration, records,
      [this](std::int32_t stored, std::int32_t writer) { return per_core_name(stored, writer); },
      complete, m_run, m_options.permissions);
  if (!written) return;
  if (m_options.durable) {
    sync_file(master);
    sync_directory_of(master);
  }
  log::debug("HDF5 store: wrote ", master,
             complete ? "" : " (incomplete: a writer failed, or a client's data is missing)");
  if (!m_options.xdmf) return;
  xdmf_step step;
  step.iteration = iteration;
  for (const variable_record& r : records) {
    // A variable without global dimensions appears as the master file has it: indexed by
    // client, on a grid of its own extents.
    std::vector<std::int64_t> dims = r.global_dims.empty() ? per_client_extents(r) : r.global_dims;
    if (dims.empty()) continue;
    xdmf_dataset d;
    d.variable = r.variable;
    d.file = global_name(iteration);
    d.path = model.variables[r.variable].name;
    d.type = r.type;
    d.dims = std::move(dims);
    step.datasets.push_back(std::move(d));
  }
  add_xdmf_step(std::move(step));
}

}  // namespace sidecore::plugins::hdf5
