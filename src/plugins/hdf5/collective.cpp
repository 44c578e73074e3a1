// Collective output: all writers write one file per iteration through MPI-IO, one global
// dataset per variable (or one dataset per block for variables without global extents).
#include <hdf5.h>
#include <mpi.h>
#include <semaphore.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <new>
#include <string>
#include <tuple>
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
#include "plugins/hdf5/store_internals.hpp"
#include "plugins/hdf5/write_groups.hpp"

namespace sidecore::plugins::hdf5 {

namespace {

// Every writer's values, concatenated in writer order, on every writer; sizes[w] and
// offsets[w] say where writer w's part lies.
std::vector<std::int64_t> gather_everywhere(const std::vector<std::int64_t>& mine, MPI_Comm comm,
                                            std::vector<int>& sizes, std::vector<int>& offsets) {
  int size = 1;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  int count = static_cast<int>(mine.size());
  sizes.assign(static_cast<std::size_t>(size), 0);
  offsets.assign(static_cast<std::size_t>(size), 0);
  check_mpi(MPI_Allgather(&count, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm), "MPI_Allgather");
  for (std::size_t w = 1; w < sizes.size(); ++w) offsets[w] = offsets[w - 1] + sizes[w - 1];
  std::vector<std::int64_t> all(static_cast<std::size_t>(offsets.back() + sizes.back()));
  check_mpi(MPI_Allgatherv(mine.data(), count, MPI_INT64_T, all.data(), sizes.data(),
                           offsets.data(), MPI_INT64_T, comm),
            "MPI_Allgatherv");
  return all;
}

// Every writer's blocks of one variable, as the block tables of a global dataset list them
// (the same on every writer, as parallel HDF5 wants attribute data): per block, its writer,
// source and id, its interior extents and its position, ordered by (source, block).
struct block_table {
  std::vector<std::int32_t> origins;    // writer, source, block
  std::vector<std::int64_t> extents;    // ndims per block
  std::vector<std::int64_t> positions;  // ndims per block
  hsize_t rows() const { return origins.size() / 3; }
};

block_table gather_block_table(const std::vector<prepared_block>& mine, std::size_t ndims,
                               MPI_Comm comm) {
  const std::size_t fields = 2 + 2 * ndims;  // source, block, extents, position
  std::vector<std::int64_t> packed;
  packed.reserve(mine.size() * fields);
  for (const prepared_block& p : mine) {
    if (p.dims.size() != ndims) continue;
    packed.push_back(p.view->source);
    packed.push_back(p.view->block_id);
    packed.insert(packed.end(), p.dims.begin(), p.dims.end());
    packed.insert(packed.end(), p.position.begin(), p.position.end());
  }
  std::vector<int> sizes, offsets;
  const std::vector<std::int64_t> all = gather_everywhere(packed, comm, sizes, offsets);
  struct row {
    std::int64_t writer;
    const std::int64_t* fields;
  };
  std::vector<row> rows;
  for (std::size_t w = 0; w < sizes.size(); ++w)
    for (std::size_t k = 0; k < static_cast<std::size_t>(sizes[w]) / fields; ++k)
      rows.push_back({static_cast<std::int64_t>(w), all.data() + offsets[w] + k * fields});
  std::sort(rows.begin(), rows.end(), [](const row& a, const row& b) {
    return std::tie(a.fields[0], a.fields[1]) < std::tie(b.fields[0], b.fields[1]);
  });
  block_table table;
  for (const row& r : rows) {
    table.origins.insert(table.origins.end(), {static_cast<std::int32_t>(r.writer),
                                               static_cast<std::int32_t>(r.fields[0]),
                                               static_cast<std::int32_t>(r.fields[1])});
    table.extents.insert(table.extents.end(), r.fields + 2, r.fields + 2 + ndims);
    table.positions.insert(table.positions.end(), r.fields + 2 + ndims, r.fields + 2 + 2 * ndims);
  }
  return table;
}

// Runs one step of writing a collective file, then has every writer agree on its outcome: when
// it failed on any writer, all of them throw (the failing one its own error), so that they
// abandon the file together. Without this, a writer whose write failed alone (its disk full,
// its I/O error) would close the file, collectively, while the others went on to the next
// collective call, and both would wait for ever.
template <typename Step>
void agreed_step(MPI_Comm comm, std::int32_t iteration, const std::string& path, Step&& step) {
  std::exception_ptr failure;
  try {
    step();
  } catch (const storage_error&) {
    failure = std::current_exception();
  } catch (const std::bad_alloc&) {
    failure = std::current_exception();
  }
  int failed = failure ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  if (failure) std::rethrow_exception(failure);
  if (failed != 0)
    throw storage_error("HDF5 store: iteration " + std::to_string(iteration) + ": \"" + path +
                        "\" abandoned by every writer: another writer's write failed (its error "
                        "says why)");
}

// MPI-IO hints of collective files. ROMIO (MPICH's MPI-IO, and Open MPI's when chosen) writes
// a collective request whose parts do not interleave as independent writes and does not share
// their outcome: a write that fails on one writer alone (its disk full, its I/O error) fails on
// that writer only, inside parallel HDF5's metadata flush at H5Fclose, which then takes another
// path there than the other writers (one in H5FD_truncate's broadcast, the others in their next
// collective write) and they wait for ever. With collective buffering always on, every
// collective write takes ROMIO's two-phase path, whose outcome all writers share (the writers
// then abandon the file together). OMPIO, Open MPI's default, ignores the hint.
info_handle collective_write_hints() {
  MPI_Info raw = MPI_INFO_NULL;
  check_mpi(MPI_Info_create(&raw), "MPI_Info_create");
  info_handle hints(raw);
  check_mpi(MPI_Info_set(hints.get(), "romio_cb_write", "enable"), "MPI_Info_set");
  return hints;
}

}  // namespace

// A variable without global extents in a collective file: every block of every writer becomes
// its own dataset, <variable>/P<source>[/B<block>] as in file-per-core files. Creating datasets
// is collective in parallel HDF5, so the writers first learn every block's source, id and
// extents; each block is then written by its holder, the others taking part with empty
// selections. When the blocks have equal extents, by_client/<variable> views them all indexed
// by client, as a master file does; returns its extents (empty without it).
std::vector<std::int64_t> hdf5_store::write_collective_per_block(
    const iteration_data& data, const variable_blocks& vb, const std::vector<prepared_block>& mine,
    hid_t file, hid_t lcpl, hid_t dxpl, const std::string& path, byte_counts& counts) const {
  const std::size_t ndims = vb.layout->dimensions.size();
  const std::size_t fields = 2 + ndims;  // source, block, extents
  std::vector<std::int64_t> packed;
  for (const prepared_block& p : mine) {
    packed.push_back(p.view->source);
    packed.push_back(p.view->block_id);
    packed.insert(packed.end(), p.dims.begin(), p.dims.end());
  }
  std::vector<int> sizes, offsets;
  const std::vector<std::int64_t> all = gather_everywhere(packed, m_context.comm, sizes, offsets);

  struct entry {
    std::int64_t source, block;
    std::vector<std::int64_t> dims;
    const prepared_block* local;  // this writer's block, or nullptr
  };
  std::vector<entry> blocks;
  for (std::size_t w = 0; w < sizes.size(); ++w) {
    const bool is_mine = static_cast<int>(w) == m_context.writer_index;
    for (std::size_t k = 0; k < static_cast<std::size_t>(sizes[w]) / fields; ++k) {
      const std::int64_t* p = all.data() + offsets[w] + k * fields;
      blocks.push_back({p[0], p[1], std::vector<std::int64_t>(p + 2, p + 2 + ndims),
                        is_mine ? &mine[k] : nullptr});
    }
  }
  std::sort(blocks.begin(), blocks.end(), [](const entry& a, const entry& b) {
    return std::tie(a.source, a.block) < std::tie(b.source, b.block);
  });

  const output_settings& settings = settings_of(index_of(vb.var));
  const stored_type type = stored_type_of(vb.layout->type, settings.precision);
  const stored_hdf5_type file_type(type);
  static const char no_data = 0;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const entry& b = blocks[k];
    const bool more = k + 1 < blocks.size() && blocks[k + 1].source == b.source;
    const std::string name = block_dataset_name(
        vb.var->name, static_cast<std::int32_t>(b.source), static_cast<std::int32_t>(b.block),
        has_block_level(m_context.model->arch.domains, static_cast<std::int32_t>(b.block), more));
    agreed_step(m_context.comm, data.iteration, path, [&] {
      const call_site site{path, name};
      const std::vector<hsize_t> extents = to_hsize(b.dims);
      const bool has_data = element_total(b.dims) > 0;
      const dataspace_handle space = make_simple_space(extents, site);
      const property_list_handle dcpl =
          make_dataset_properties(settings.compression, has_data ? extents : std::vector<hsize_t>{},
                                  stored_size(type), site);
      dataset_handle dataset(check_id(H5Dcreate2(file, name.c_str(), file_type.get(), space.get(),
                                                 lcpl, dcpl.get(), H5P_DEFAULT),
                                      "H5Dcreate2", site));
      write_int_attribute(dataset.get(), name, "iteration", data.iteration, path);
      write_int_attribute(dataset.get(), name, "source", static_cast<std::int32_t>(b.source), path);
      write_int_attribute(dataset.get(), name, "block", static_cast<std::int32_t>(b.block), path);
      write_string_attribute(dataset.get(), name, "layout", vb.layout->name, path);
      if (!vb.var->unit.empty())
        write_string_attribute(dataset.get(), name, "unit", vb.var->unit, path);
      if (has_data) {
        dataspace_handle file_space(check_id(H5Scopy(space.get()), "H5Scopy", site));
        dataspace_handle memory_space(check_id(H5Scopy(space.get()), "H5Scopy", site));
        const void* buffer = &no_data;
        if (b.local != nullptr) {
          buffer = b.local->data;
        } else {
          check_status(H5Sselect_none(memory_space.get()), "H5Sselect_none", site);
          check_status(H5Sselect_none(file_space.get()), "H5Sselect_none", site);
        }
        check_status(H5Dwrite(dataset.get(), file_type.get(), memory_space.get(), file_space.get(),
                              dxpl, buffer),
                     "H5Dwrite", site);
      }
      add_dataset_bytes(counts, dataset.get(), element_total(b.dims), vb.layout->type);
      check_status(dataset.close(), "H5Dclose", site);
    });
  }

  // Every writer creates the view alike, from the same list of blocks (metadata is collective).
  variable_record record;
  record.variable = index_of(vb.var);
  record.stored_iteration = data.iteration;
  record.type = type;
  for (const entry& b : blocks) {
    block_record r;
    r.source = static_cast<std::int32_t>(b.source);
    r.block = static_cast<std::int32_t>(b.block);
    r.dims = b.dims;
    record.blocks.push_back(std::move(r));
  }
  std::vector<std::int64_t> view = per_client_extents(record);
  if (view.empty()) return view;
  agreed_step(m_context.comm, data.iteration, path, [&] {
    write_per_client_view(
        file, *m_context.model, data.iteration, record,
        [](std::int32_t, std::int32_t) { return std::string("."); }, lcpl, path,
        per_client_view_name(vb.var->name));
  });
  return view;
}

void hdf5_store::write_collective(const iteration_data& data) {
  collective_plan plan;
  plan.selected = select(data);
  const std::vector<const variable_blocks*>& selected = plan.selected;
  const std::size_t variable_count = selected.size();

  // Ghost zones are removed and precision reduced before any collective call; a failure is
  // agreed on below with the other problems.
  std::string problem = std::exchange(m_index_problem, std::string());
  std::vector<std::vector<prepared_block>>& prepared = plan.prepared;
  prepared.resize(variable_count);
  for (std::size_t i = 0; i < variable_count && problem.empty(); ++i) {
    const variable_blocks& vb = *selected[i];
    const std::size_t bytes = element_type_info(vb.layout->type).bytes;
    for (const block_view* block : vb.blocks) {
      problem = block_problem(*vb.var, *block, bytes);
      if (!problem.empty()) break;
    }
    if (!problem.empty()) break;
    try {
      prepared[i] = prepare(vb);
    } catch (const storage_error& e) {
      problem = e.what();
    }
  }

  // One reduction agrees, per variable, on its global extents (some writers may hold no
  // block of it), on whether any block gives them, on the largest local block count (every
  // writer must issue the same number of collective H5Dwrite calls) and on the largest block
  // extents (the chunk of a compressed dataset).
  // Entries per variable: ndims extents, "has global", "block count", ndims block extents.
  // The last entry: whether the iteration is incomplete for any writer (a client of one
  // writer stopped early or dropped data), which the file's `complete` attribute says for all.
  std::vector<std::size_t>& offsets = plan.offsets;
  offsets.assign(variable_count + 1, 0);
  for (std::size_t i = 0; i < variable_count; ++i) {
    offsets[i + 1] = offsets[i] + 2 * selected[i]->layout->dimensions.size() + 2;
  }
  std::vector<std::int64_t>& agreed = plan.agreed;
  agreed.assign(offsets.back() + 1, 0);
  agreed.back() = data.incomplete ? 1 : 0;
  for (std::size_t i = 0; i < variable_count; ++i) {
    const variable_blocks& vb = *selected[i];
    const std::size_t ndims = vb.layout->dimensions.size();
    std::int64_t* entry = agreed.data() + offsets[i];
    for (const block_view* block : vb.blocks) {
      if (block->global_dims.empty() || block->global_dims.size() != ndims) continue;
      for (std::size_t d = 0; d < ndims; ++d) {
        entry[d] = std::max(entry[d], block->global_dims[d]);
      }
      entry[ndims] = 1;
    }
    // Blocks placed by select-file are written one by one; the others in groups.
    const bool by_group = !vb.layout->global_dimensions.empty() &&
                          m_mapping[index_of(vb.var)] == config::variable::npos;
    entry[ndims + 1] =
        by_group && !vb.blocks.empty()
            ? std::max<std::int64_t>(1, static_cast<std::int64_t>(group_blocks(prepared[i]).size()))
            : static_cast<std::int64_t>(vb.blocks.size());
    for (const prepared_block& p : prepared[i]) {
      if (p.dims.size() != ndims) continue;
      for (std::size_t d = 0; d < ndims; ++d) {
        entry[ndims + 2 + d] = std::max(entry[ndims + 2 + d], p.dims[d]);
      }
    }
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, agreed.data(), static_cast<int>(agreed.size()), MPI_INT64_T,
                          MPI_MAX, m_context.comm),
            "MPI_Allreduce");
  plan.incomplete = agreed.back() != 0;
  // Which clients left it out, from every writer (each knows its own clients).
  if (plan.incomplete) {
    const std::vector<std::int64_t> mine(data.clients_left_out.begin(),
                                         data.clients_left_out.end());
    std::vector<int> sizes, offsets_of_writers;
    for (const std::int64_t client :
         gather_everywhere(mine, m_context.comm, sizes, offsets_of_writers))
      plan.clients_left_out.push_back(static_cast<std::int32_t>(client));
    std::sort(plan.clients_left_out.begin(), plan.clients_left_out.end());
  }
  // Elements of each variable the blocks of all writers cover: fewer than the dataset holds
  // means gaps, which must read as zeros.
  std::vector<std::uint64_t>& covered = plan.covered;
  covered.assign(variable_count, 0);
  for (std::size_t i = 0; i < variable_count; ++i)
    for (const prepared_block& p : prepared[i]) covered[i] += element_total(p.dims);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, covered.data(), static_cast<int>(variable_count),
                          MPI_UINT64_T, MPI_SUM, m_context.comm),
            "MPI_Allreduce");

  // Errors seen by every writer alike are thrown at once; errors in local blocks are agreed
  // on first so that no writer is left waiting in a collective call.
  for (std::size_t i = 0; i < variable_count; ++i) {
    const variable_blocks& vb = *selected[i];
    const std::size_t ndims = vb.layout->dimensions.size();
    const std::int64_t* entry = agreed.data() + offsets[i];
    if (entry[ndims + 1] != 0 && entry[ndims] == 0 && !vb.layout->global_dimensions.empty()) {
      throw storage_error("HDF5 store: Collective mode needs the global dimensions of variable \"" +
                          vb.var->name + "\": add global=\"...\" to layout \"" + vb.layout->name +
                          "\" (" + config_file(m_context.model) + ':' +
                          std::to_string(vb.layout->line) + ')');
    }
  }
  for (std::size_t i = 0; i < variable_count && problem.empty(); ++i) {
    const variable_blocks& vb = *selected[i];
    const std::size_t ndims = vb.layout->dimensions.size();
    const std::int64_t* entry = agreed.data() + offsets[i];
    if (entry[ndims + 1] == 0 || vb.layout->global_dimensions.empty()) continue;
    const std::vector<std::int64_t> global(entry, entry + ndims);
    if (m_mapping[index_of(vb.var)] != config::variable::npos) {
      // Placed by select-file: the blocks' positions play no part.
      problem = mapping_problem(vb, prepared[i], global, data.iteration);
      continue;
    }
    for (const prepared_block& p : prepared[i]) {
      const block_view& block = *p.view;
      if (p.dims.size() != ndims) {
        problem = block_name(*vb.var, block) + " has dimensions " + dims_text(block.dims) +
                  " but layout \"" + vb.layout->name + "\" has " + std::to_string(ndims);
        break;
      }
      for (std::size_t d = 0; d < ndims; ++d) {
        if (p.position[d] < 0 || p.position[d] + p.dims[d] > global[d]) {
          problem = block_name(*vb.var, block) + " at position " + dims_text(p.position) +
                    " with dimensions " + dims_text(p.dims) +
                    " does not fit in the global dimensions " + dims_text(global);
          break;
        }
      }
      if (!problem.empty()) break;
    }
  }
  plan.path = m_options.files_path + global_name(data.iteration);
  const std::string& path = plan.path;
  // The file system must have room for the file (HDF5 cannot give up a file it failed to write):
  // one writer checks, for all. A global dataset that blocks leave partly unwritten is written
  // whole (its gaps as zeros, fill_collective_file): a mistaken global extent (a typo's extra
  // digits) would otherwise fill the disk with zeros before failing.
  if (problem.empty() && m_context.writer_index == 0) {
    const auto saturated = [](long double v) {
      return v >= 1.8e19L ? UINT64_MAX : static_cast<std::uint64_t>(v);
    };
    long double bytes = 64 << 10;
    long double largest = 0;
    std::size_t largest_index = 0;
    for (std::size_t i = 0; i < variable_count; ++i) {
      const variable_blocks& vb = *selected[i];
      const std::size_t ndims = vb.layout->dimensions.size();
      const std::int64_t* entry = agreed.data() + offsets[i];
      const long double element = element_type_info(vb.layout->type).bytes;
      long double elements = covered[i];
      if (entry[ndims + 1] != 0 && !vb.layout->global_dimensions.empty() &&
          !filtered(settings_of(index_of(vb.var)).compression)) {
        elements = 1;
        for (std::size_t d = 0; d < ndims; ++d) elements *= static_cast<long double>(entry[d]);
      }
      const long double variable_bytes = elements * element;
      bytes += variable_bytes + (4 << 10);
      if (variable_bytes > largest) {
        largest = variable_bytes;
        largest_index = i;
      }
    }
    try {
      ensure_space(path, saturated(bytes));
    } catch (const storage_error& e) {
      problem = std::string(e.what()).substr(std::string("HDF5 store: ").size());
      const variable_blocks& vb = *selected[largest_index];
      const std::size_t ndims = vb.layout->dimensions.size();
      const std::int64_t* entry = agreed.data() + offsets[largest_index];
      const std::uint64_t written =
          covered[largest_index] * element_type_info(vb.layout->type).bytes;
      if (saturated(largest) > 2 * written)
        problem += "; the largest dataset, \"" + vb.var->name + "\" with global dimensions " +
                   dims_text(std::vector<std::int64_t>(entry, entry + ndims)) + ", needs " +
                   readable_bytes(saturated(largest)) + " of which its blocks write " +
                   readable_bytes(written) +
                   " (the rest is stored as zeros): check the layout's global=";
    }
  }
  // Open MPI's MPI-IO keeps a named semaphore per open file ("OMPIO_<file name>") and removes
  // it at close; a job killed while a collective file was open leaves it behind, locked, and
  // the next job to open a file of that name (a restart into the same directory) waits on it
  // for ever. No other job may be writing this file: writer 0 removes it before anyone opens.
  if (m_context.writer_index == 0) {
    ::sem_unlink(("/OMPIO_" + std::filesystem::path(path + ".part").filename().string()).c_str());
    // Whatever holds the temporary name (a killed run's part file, a planted symlink) goes
    // before any writer opens it (the agreement below orders it first).
    free_temporary_name(path + ".part");
  }
  int failed = problem.empty() ? 0 : 1;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, m_context.comm),
            "MPI_Allreduce");
  if (failed != 0) {
    if (!problem.empty()) throw storage_error("HDF5 store: " + problem);
    throw storage_error("HDF5 store: iteration " + std::to_string(data.iteration) +
                        " not written: another writer found a problem first (its error says "
                        "which)");
  }
  check_positions_unique(plan, data.iteration);
  // Written under a temporary name, renamed by one writer once every writer closed it: a job
  // killed part-way never leaves a partial file under the name readers look for.
  plan.temporary = path + ".part";
  const std::string& temporary = plan.temporary;
  try {
    write_collective_file(data, plan);
  } catch (...) {
    if (m_context.writer_index == 0) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
    }
    throw;
  }
}

void hdf5_store::write_collective_file(const iteration_data& data, const collective_plan& plan) {
  file_handle file;
  written_file written;
  try {
    written = fill_collective_file(file, data, plan);
  } catch (...) {
    // Every writer is here together (each failure was agreed on): all abandon the file alike.
    abandon_file(file);
    throw;
  }
  publish_collective_file(data, plan.path, plan.temporary, std::move(written));
}

hdf5_store::written_file hdf5_store::fill_collective_file(file_handle& file,
                                                          const iteration_data& data,
                                                          const collective_plan& plan) {
  const std::vector<const variable_blocks*>& selected = plan.selected;
  const std::vector<std::vector<prepared_block>>& prepared = plan.prepared;
  const std::vector<std::int64_t>& agreed = plan.agreed;
  const std::vector<std::size_t>& offsets = plan.offsets;
  const std::vector<std::uint64_t>& covered = plan.covered;
  const std::string& path = plan.path;
  const std::string& temporary = plan.temporary;
  const std::size_t variable_count = selected.size();
  const call_site file_site{path, {}};
  property_list_handle lcpl, dxpl;
  const MPI_Comm comm = m_context.comm;
  const std::int32_t iteration = data.iteration;
  // Every step that can fail on one writer alone is agreed on before the next collective call.
  agreed_step(comm, iteration, path, [&] {
    property_list_handle fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", file_site));
    const info_handle hints = collective_write_hints();
    check_status(H5Pset_fapl_mpio(fapl.get(), m_context.comm, hints.get()), "H5Pset_fapl_mpio",
                 file_site);
    // Metadata is then written by a few ranks in one collective operation, not by rank 0
    // alone at close time.
    check_status(H5Pset_coll_metadata_write(fapl.get(), 1), "H5Pset_coll_metadata_write",
                 file_site);
    // The 1.8 file format at least: block tables of thousands of blocks exceed 64 KiB.
    check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST),
                 "H5Pset_libver_bounds", file_site);
    // Exclusive (MPI_MODE_EXCL, O_EXCL): writer 0 removed whatever held the name, so a name
    // taken since (a symlink planted in a directory others can write to) fails the create
    // instead of being followed.
    file = file_handle(check_id(H5Fcreate(temporary.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()),
                                "H5Fcreate", file_site));
    if (m_context.writer_index == 0) apply_permissions(temporary, m_options.permissions);
    write_int_attribute(file.get(), "/", "iteration", data.iteration, path);
    write_int_attribute(file.get(), "/", "complete", plan.incomplete ? 0 : 1, path);
    write_clients_left_out(file.get(), plan.clients_left_out, path);
    write_run_marker(file.get(), m_run, false, path);
    write_mesh_description(file.get(), *m_context.model, path);
    lcpl = make_intermediate_group_lcpl(file_site);
    dxpl = property_list_handle(check_id(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate", file_site));
    // Collective transfers are also what parallel HDF5 requires to write filtered datasets;
    // the data is already in the stored type, so HDF5 has no conversion that would make it
    // fall back to independent transfers.
    check_status(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio", file_site);
  });

  byte_counts counts;
  xdmf_step step;
  step.iteration = data.iteration;
  for (std::size_t i = 0; i < variable_count; ++i) {
    const variable_blocks& vb = *selected[i];
    const std::size_t variable = index_of(vb.var);
    const std::size_t ndims = vb.layout->dimensions.size();
    const std::int64_t* entry = agreed.data() + offsets[i];
    const std::int64_t write_count = entry[ndims + 1];
    // Nobody holds a block: a dataset of fill values would pass for real data.
    if (write_count == 0) continue;
    if (vb.layout->global_dimensions.empty()) {
      std::vector<std::int64_t> view = write_collective_per_block(
          data, vb, prepared[i], file.get(), lcpl.get(), dxpl.get(), path, counts);
      if (!view.empty()) {  // the XDMF shows it as a master file's: on a grid of its extents
        xdmf_dataset d;
        d.variable = variable;
        d.file = global_name(data.iteration);
        d.path = per_client_view_name(vb.var->name);
        d.name = vb.var->name;
        d.type = stored_type_of(vb.layout->type, settings_of(variable).precision);
        d.dims = std::move(view);
        step.datasets.push_back(std::move(d));
      }
      continue;
    }

    const std::string& name = vb.var->name;
    const call_site site{path, name};
    const bool mapped = m_mapping[variable] != config::variable::npos;
    // The blocks merged into the dataset, as a master file lists them: readers find each
    // block again (sidecore/read.h). Gathered before any HDF5 call of the variable.
    const block_table table =
        mapped ? block_table{} : gather_block_table(prepared[i], ndims, m_context.comm);
    const output_settings& settings = settings_of(variable);
    const stored_type type = stored_type_of(vb.layout->type, settings.precision);
    const stored_hdf5_type file_type(type);
    const std::vector<hsize_t> global(entry, entry + ndims);
    const std::vector<hsize_t> chunk(entry + ndims + 2, entry + 2 * ndims + 2);
    const bool chunked = std::all_of(chunk.begin(), chunk.end(), [](hsize_t c) { return c > 0; });
    const dataspace_handle global_space = make_simple_space(global, site);
    dataset_handle dataset;
    agreed_step(comm, iteration, path, [&] {
      const property_list_handle dcpl = make_dataset_properties(
          settings.compression, chunked ? chunk : std::vector<hsize_t>{}, stored_size(type), site);
      if (covered[i] < element_total(std::vector<std::int64_t>(entry, entry + ndims)) &&
          !filtered(settings.compression)) {
        // Blocks leave part of the dataset unwritten (a client stopped, or wrote nothing):
        // parallel HDF5 allocates the whole dataset at once and, unless told to, leaves the
        // gaps as whatever the file held. Write zeros there, as the documentation promises.
        const std::vector<unsigned char> zero(stored_size(type), 0);
        check_status(H5Pset_fill_value(dcpl.get(), file_type.get(), zero.data()),
                     "H5Pset_fill_value", site);
        check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_ALLOC), "H5Pset_fill_time", site);
      }
      dataset = dataset_handle(
          check_id(H5Dcreate2(file.get(), name.c_str(), file_type.get(), global_space.get(),
                              lcpl.get(), dcpl.get(), H5P_DEFAULT),
                   "H5Dcreate2", site));
      write_int_attribute(dataset.get(), name, "iteration", data.iteration, path);
      write_string_attribute(dataset.get(), name, "layout", vb.layout->name, path);
      if (!vb.var->unit.empty()) {
        write_string_attribute(dataset.get(), name, "unit", vb.var->unit, path);
      }
      if (mapped) {
        // Its blocks are scattered over the dataset: no block table, but what placed them.
        write_string_attribute(dataset.get(), name, "select_file",
                               m_context.model->variables[m_mapping[variable]].name, path);
      }
      if (table.rows() > 0) {
        write_attribute(dataset.get(), name, "block_positions", H5T_NATIVE_INT64,
                        {table.rows(), ndims}, table.positions.data(), path);
        write_attribute(dataset.get(), name, "block_dimensions", H5T_NATIVE_INT64,
                        {table.rows(), ndims}, table.extents.data(), path);
        write_attribute(dataset.get(), name, "block_origins", H5T_NATIVE_INT32, {table.rows(), 3},
                        table.origins.data(), path);
      }
    });

    // A 1-D dataset placed by select-file: every writer writes one share of it (a permuted
    // numbering would otherwise scatter each block over the whole file).
    if (mapped && ndims == 1) {
      std::vector<mapped_block> blocks;
      for (const prepared_block& p : prepared[i]) {
        if (element_count(p.dims) > 0) blocks.push_back({p.data, positions_of(variable, *p.view)});
      }
      agreed_step(comm, iteration, path, [&] {
        write_by_shares(dataset.get(), file_type.get(), global[0], blocks, stored_size(type),
                        m_context.comm, dxpl.get(), site);
      });
    }
    // Writers with fewer blocks (or groups) still take part, with empty selections; HDF5
    // wants a non-null buffer even then.
    static const char no_data = 0;
    const std::vector<write_group> groups =
        mapped ? std::vector<write_group>{} : group_blocks(prepared[i]);
    for (std::int64_t k = 0; k < (mapped && ndims == 1 ? 0 : write_count); ++k) {
      agreed_step(comm, iteration, path, [&] {
        const prepared_block* block = mapped && k < static_cast<std::int64_t>(prepared[i].size())
                                          ? &prepared[i][static_cast<std::size_t>(k)]
                                          : nullptr;
        const write_group* group = k < static_cast<std::int64_t>(groups.size())
                                       ? &groups[static_cast<std::size_t>(k)]
                                       : nullptr;
        dataspace_handle file_space(check_id(H5Scopy(global_space.get()), "H5Scopy", site));
        dataspace_handle memory_space;
        const void* buffer = nullptr;
        std::vector<unsigned char> ordered;
        if (group != nullptr) {
          // The union of the group's blocks, from one buffer in the order HDF5 visits it.
          for (const prepared_block* b : group->blocks) {
            const std::vector<hsize_t> count = to_hsize(b->dims);
            const std::vector<hsize_t> start = to_hsize(b->position);
            check_status(
                H5Sselect_hyperslab(file_space.get(),
                                    b == group->blocks.front() ? H5S_SELECT_SET : H5S_SELECT_OR,
                                    start.data(), nullptr, count.data(), nullptr),
                "H5Sselect_hyperslab", site);
          }
          if (group->blocks.size() == 1) {
            memory_space = make_simple_space(to_hsize(group->blocks.front()->dims), site);
            buffer = group->blocks.front()->data;
          } else {
            ordered = pack_in_dataset_order(
                *group, std::vector<std::uint64_t>(global.begin(), global.end()),
                stored_size(type));
            memory_space =
                make_simple_space({static_cast<hsize_t>(ordered.size() / stored_size(type))}, site);
            buffer = ordered.data();
          }
        } else if (block != nullptr && element_count(block->dims) > 0) {
          const block_positions& positions = *positions_of(variable, *block->view);
          ordered = gather_in_position_order(block->data, stored_size(type), positions);
          memory_space = make_simple_space({static_cast<hsize_t>(positions.values.size())}, site);
          select_positions(file_space.get(), positions, global, site);
          buffer = ordered.data();
        } else {
          memory_space = dataspace_handle(check_id(H5Scopy(global_space.get()), "H5Scopy", site));
          check_status(H5Sselect_none(memory_space.get()), "H5Sselect_none", site);
          check_status(H5Sselect_none(file_space.get()), "H5Sselect_none", site);
          buffer = &no_data;
        }
        check_status(H5Dwrite(dataset.get(), file_type.get(), memory_space.get(), file_space.get(),
                              dxpl.get(), buffer),
                     "H5Dwrite", site);
      });
    }
    agreed_step(comm, iteration, path, [&] {
      add_dataset_bytes(counts, dataset.get(),
                        element_total(std::vector<std::int64_t>(entry, entry + ndims)),
                        vb.layout->type);
      check_status(dataset.close(), "H5Dclose", site);
    });

    xdmf_dataset d;
    d.variable = variable;
    d.file = global_name(data.iteration);
    d.path = name;
    d.type = type;
    d.dims.assign(entry, entry + ndims);
    if (!vb.var->time_varying) {
      m_constant_iteration[variable] = data.iteration;
      m_constant_datasets[variable] = d;
    }
    step.datasets.push_back(std::move(d));
  }

  // Time-invariant variables stored in an earlier file are linked from this one, so that
  // each file shows every variable.
  agreed_step(comm, iteration, path, [&] {
    for (const variable_blocks& vb : data.variables) {
      const std::size_t variable = index_of(vb.var);
      const auto it = m_constant_datasets.find(variable);
      if (it == m_constant_datasets.end() || m_constant_iteration[variable] == data.iteration) {
        continue;
      }
      const call_site site{path, vb.var->name};
      check_status(H5Lcreate_external(it->second.file.c_str(), ('/' + vb.var->name).c_str(),
                                      file.get(), vb.var->name.c_str(), lcpl.get(), H5P_DEFAULT),
                   "H5Lcreate_external", site);
      step.datasets.push_back(it->second);
    }
    write_ratio_attributes(file.get(), counts, path);
  });
  agreed_step(comm, iteration, path, [&] { check_status(file.close(), "H5Fclose", file_site); });
  return {std::move(step), counts};
}

void hdf5_store::publish_collective_file(const iteration_data& data, const std::string& path,
                                         const std::string& temporary, written_file written) {
  xdmf_step& step = written.step;
  const byte_counts& counts = written.counts;
  if (m_options.durable) {
    // Each writer flushes what it wrote (its node's cache); all have before the rename.
    std::string problem;
    try {
      sync_file(temporary);
    } catch (const storage_error& e) {
      problem = e.what();
    }
    int failed = problem.empty() ? 0 : 1;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, m_context.comm),
              "MPI_Allreduce");
    if (!problem.empty()) throw storage_error(problem);
    if (failed != 0)
      throw storage_error("HDF5 store: iteration " + std::to_string(data.iteration) +
                          " not made durable: another writer's fsync failed (its error says why)");
  }
  std::string rename_problem;
  if (m_context.writer_index == 0) {
    std::error_code error;
    std::filesystem::rename(temporary, path, error);
    if (error) {
      rename_problem =
          "HDF5 store: cannot rename \"" + temporary + "\" to \"" + path + "\": " + error.message();
    } else if (m_options.durable) {
      try {
        sync_directory_of(path);
      } catch (const storage_error& e) {
        rename_problem = e.what();
      }
    }
  }
  if (m_options.durable) {
    // No writer counts the iteration as stored before the file is durable under its name.
    int failed = rename_problem.empty() ? 0 : 1;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, m_context.comm),
              "MPI_Allreduce");
    if (failed != 0 && rename_problem.empty())
      throw storage_error("HDF5 store: " + path +
                          " not made durable: writer 0 failed (its error says why)");
  }
  if (!rename_problem.empty()) throw storage_error(rename_problem);
  // Every writer holds the same counts of the shared file: one of them reports them.
  log_written(path, counts, m_context.writer_index == 0);
  if (m_options.xdmf && m_context.writer_index == 0 && !step.datasets.empty()) {
    std::sort(step.datasets.begin(), step.datasets.end(),
              [](const xdmf_dataset& a, const xdmf_dataset& b) { return a.variable < b.variable; });
    add_xdmf_step(std::move(step));
  }
}

}  // namespace sidecore::plugins::hdf5
