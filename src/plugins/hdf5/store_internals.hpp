// What the HDF5 store's sources share: the store class and the helpers its output modes use.
// Private to src/plugins/hdf5 (the store is built through make_hdf5_store).
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "config/output_names.hpp"
#include "plugins/hdf5/block_data.hpp"
#include "plugins/hdf5/hdf5_store.hpp"
#include "plugins/hdf5/index_map.hpp"
#include "plugins/hdf5/run_marker.hpp"
#include "plugins/hdf5/virtual_view.hpp"
#include "plugins/hdf5/xdmf.hpp"

namespace sidecore::plugins::hdf5 {

constexpr const char* valid_file_modes = "FilePerCore, Collective";

// The configuration file's name for messages ("<configuration>" when unknown).
std::string config_file(const config::model* model);
// "file:line: store "name"" for messages about the store's XML element.
std::string store_where(const store_context& context);

// Sizes are spelled out here rather than taken from the config module so that the on-disk
// type and the byte count checked against a block always come from the same table.
struct type_info {
  hid_t native;
  std::size_t bytes;
};
type_info element_type_info(config::element_type type);

std::string dims_text(const std::vector<std::int64_t>& dims);
std::string block_name(const config::variable& var, const block_view& block);
std::int64_t element_count(const std::vector<std::int64_t>& dims);
std::uint64_t element_total(const std::vector<std::int64_t>& dims);
std::vector<hsize_t> to_hsize(const std::vector<std::int64_t>& values);
// What makes a block unwritable in any mode, or "" when it is fine.
std::string block_problem(const config::variable& var, const block_view& block,
                          std::size_t element_bytes);

// Raw bytes (interior elements in the layout's type) and bytes HDF5 stored, for the ratio.
struct byte_counts {
  std::uint64_t raw = 0;
  std::uint64_t stored = 0;

  double ratio() const noexcept {
    return stored > 0 ? static_cast<double>(raw) / static_cast<double>(stored) : 1.0;
  }
};
void add_dataset_bytes(byte_counts& counts, hid_t dataset, std::uint64_t elements,
                       config::element_type type);
void write_ratio_attributes(hid_t file, const byte_counts& counts, const std::string& path);
// Creates FilesPath (recursively); storage_error naming the store when it cannot.
void create_directories(const std::string& path, const store_context& context);

// Throws storage_error when the file system of path has less than `bytes` free for this
// user (the file's size to be, with room for HDF5's metadata).
void ensure_space(const std::string& path, std::uint64_t bytes);

// Durable option: flushes a file's data (fsync) to stable storage; storage_error when the
// file system reports a failure. sync_directory also makes a rename inside it durable.
void sync_file(const std::string& path);
void sync_directory_of(const std::string& path);

// Files are written under a temporary name and renamed once whole. Whatever holds that name
// first (the part file of a killed run, or a symlink planted in a FilesPath others can write
// to) is removed, never followed: unlink() does not follow symlinks, and the file is then
// created exclusively (H5F_ACC_EXCL, O_EXCL), so that a name planted meanwhile fails the
// creation instead of being written through.
void free_temporary_name(const std::string& temporary) noexcept;
// The store's Permissions option (e.g. 0600 for private output) on a file just created;
// 0 leaves the umask's. Throws storage_error.
void apply_permissions(const std::string& file, unsigned permissions);

// One line per file written: at info level when compression or precision reduction changed
// the size (the ratio is what the user asked to see), at debug level otherwise.
void log_written(const std::string& path, const byte_counts& counts, bool speaker);

class hdf5_store final : public store {
 public:
  hdf5_store(const store_context& context, store_options options)
      : m_context(context),
        m_options(std::move(options)),
        m_ghosts(evaluate_ghosts(*context.model)) {
    find_mappings();
    // Every file of this run carries its id (over finish_comm when comm joins no other writer).
    m_run =
        choose_run_marker(context.finish_comm != MPI_COMM_NULL ? context.finish_comm : context.comm,
                          context.writer_count);
    // Writers that cannot talk to each other (background threads without
    // MPI_THREAD_MULTIPLE) cannot build a view of the whole run: say so instead of writing a
    // master file or an XDMF that would only show one writer's blocks.
    int size = 1;
    MPI_Comm_size(context.comm, &size);
    if (context.defer_exchange && (m_options.virtual_view || m_options.xdmf)) {
      m_deferred_view = true;
      if (context.writer_index == 0)
        log::info("store '", context.settings->name,
                  "': the master files and the XDMF are written at the end of the run (the "
                  "<schedule> has the writers store each iteration without waiting for each "
                  "other)");
    } else if (size < context.writer_count && (m_options.virtual_view || m_options.xdmf) &&
               context.finish_comm != MPI_COMM_NULL) {
      // They can at the end of the run: each keeps its blocks' metadata until then.
      m_deferred_view = true;
      if (context.writer_index == 0)
        log::info("store '", context.settings->name,
                  "': the master files and the XDMF are written at the end of the run (the I/O "
                  "threads cannot exchange block metadata without MPI_THREAD_MULTIPLE)");
    } else if (size < context.writer_count && (m_options.virtual_view || m_options.xdmf)) {
      m_options.virtual_view = false;
      m_options.xdmf = false;
      if (context.writer_index == 0)
        log::warning("store '", context.settings->name,
                     "': the writers cannot communicate (a background I/O thread needs "
                     "MPI_THREAD_MULTIPLE for that), so no master file and no XDMF are written; "
                     "each process's files stand alone");
    }
  }

  void finish() override;

  void write_iteration(const iteration_data& data) override {
    // Index blocks are kept even from iterations this store skips: a time-invariant index is
    // written once, perhaps in one of them.
    keep_positions(data);
    const int frequency = m_context.settings->frequency;
    if (frequency > 1 && data.iteration % frequency != 0) return;
    const error_print_guard quiet;
    if (m_options.mode == file_mode::collective) {
      write_collective(data);
    } else {
      write_file_per_core(data);
    }
  }

 private:
  // File names without FilesPath: what master files and the XDMF refer to, so that the
  // output directory can be moved.
  // (config/output_names.hpp: `sidecore validate` lists the same names.)
  std::string per_core_name(std::int32_t iteration, std::int32_t writer) const {
    return config::per_writer_file_name(m_context.model->simulation_name, iteration, writer);
  }
  std::string global_name(std::int32_t iteration) const {
    return config::iteration_file_name(m_context.model->simulation_name, iteration);
  }

  std::size_t index_of(const config::variable* var) const {
    return static_cast<std::size_t>(var - m_context.model->variables.data());
  }
  const output_settings& settings_of(std::size_t variable) const {
    const auto it = m_options.per_variable.find(variable);
    return it != m_options.per_variable.end() ? it->second : m_options.defaults;
  }
  const ghost_widths& ghosts_of(const config::variable& var) const {
    return m_ghosts[var.layout_index];
  }
  // Variables to write in this iteration: all but the time-invariant ones already stored.
  std::vector<const variable_blocks*> select(const iteration_data& data) const {
    std::vector<const variable_blocks*> selected;
    for (const variable_blocks& vb : data.variables) {
      if (!vb.var->time_varying && m_constant_iteration.count(index_of(vb.var)) != 0) continue;
      selected.push_back(&vb);
    }
    return selected;
  }
  std::vector<prepared_block> prepare(const variable_blocks& vb) const {
    std::vector<prepared_block> prepared;
    const precision reduction = settings_of(index_of(vb.var)).precision;
    for (const block_view* block : vb.blocks) {
      prepared.push_back(
          prepare_block(*vb.var, *block, ghosts_of(*vb.var), vb.layout->type, reduction));
    }
    return prepared;
  }

  // One iteration of Collective output as the writers agreed on it (write_collective).
  struct collective_plan {
    std::vector<const variable_blocks*> selected;       // the variables written
    std::vector<std::vector<prepared_block>> prepared;  // this writer's blocks of each
    // From offsets[i], variable i's entries, maxima over the writers: its global extents,
    // whether a block gives them, the block count of a writer, the block extents.
    std::vector<std::int64_t> agreed;
    std::vector<std::size_t> offsets;
    std::vector<std::uint64_t> covered;          // elements the blocks of all writers cover
    bool incomplete = false;                     // the iteration is incomplete for some writer
    std::vector<std::int32_t> clients_left_out;  // every writer's, in increasing order
    std::string path;                            // the file's final name
    std::string temporary;                       // the name it is written under
  };

  // select-file (Collective mode only; FilePerCore files store blocks as written, as Damaris
  // does): which variable places each variable's elements. A variable named by select-file
  // and stored here without one of its own is placed by itself, as the Damaris fork OPM uses
  // stores its index (a permutation is then stored as 0, 1, 2...).
  void find_mappings();
  void keep_positions(const iteration_data& data);
  // What makes the mapped blocks of one variable unwritable in this iteration, or "".
  std::string mapping_problem(const variable_blocks& vb, const std::vector<prepared_block>& mine,
                              const std::vector<std::int64_t>& global,
                              std::int32_t iteration) const;
  // Collective: no global position is given twice across the writers (checked again only
  // when the index changed). Throws storage_error on every writer when one is.
  void check_positions_unique(const collective_plan& plan, std::int32_t iteration);
  const block_positions* positions_of(std::size_t variable, const block_view& block) const {
    return m_positions.find(m_mapping[variable], block.source, block.block_id);
  }

  void write_file_per_core(const iteration_data& data);
  // The blocks and attributes of one file-per-core file, into the open file; packed[i]: the
  // blocks of selected[i] go packed (packs_blocks).
  byte_counts write_contents(file_handle& file, const iteration_data& data,
                             const std::vector<const variable_blocks*>& selected,
                             const std::vector<std::vector<prepared_block>>& prepared,
                             const std::vector<char>& packed, const std::string& path) const;
  // Writes the file at `temporary`; messages name `path`, where it will be renamed to.
  byte_counts write_file_per_core_contents(const iteration_data& data,
                                           const std::vector<const variable_blocks*>& selected,
                                           const std::vector<std::vector<prepared_block>>& prepared,
                                           const std::vector<char>& packed, const std::string& path,
                                           const std::string& temporary) const;
  void publish_file_per_core(std::int32_t iteration, std::vector<variable_record> records,
                             bool complete);
  void write_collective(const iteration_data& data);
  // The collective file of one iteration, once the writers agreed that it can be written.
  void write_collective_file(const iteration_data& data, const collective_plan& plan);
  // The two halves of write_collective_file: the file written and closed by every writer
  // (each step agreed on, so that a failure anywhere makes all throw together), then made
  // durable, renamed and added to the XDMF.
  struct written_file {
    xdmf_step step;
    byte_counts counts;
  };
  written_file fill_collective_file(file_handle& file, const iteration_data& data,
                                    const collective_plan& plan);
  void publish_collective_file(const iteration_data& data, const std::string& path,
                               const std::string& temporary, written_file written);
  std::vector<std::int64_t> write_collective_per_block(const iteration_data& data,
                                                       const variable_blocks& vb,
                                                       const std::vector<prepared_block>& mine,
                                                       hid_t file, hid_t lcpl, hid_t dxpl,
                                                       const std::string& path,
                                                       byte_counts& counts) const;
  void add_xdmf_step(xdmf_step step);
  void write_xdmf();

  // Thread mode without MPI_THREAD_MULTIPLE: this writer's blocks of each stored iteration,
  // gathered in finish() to write the master files and the XDMF.
  struct deferred_step {
    std::int32_t iteration = 0;
    std::vector<local_blocks> blocks;
    std::vector<std::vector<std::int64_t>> global_dims;  // what blocks[i].global_dims points to
    bool failed = false;
    bool incomplete = false;
  };

  store_context m_context;
  store_options m_options;
  run_marker m_run;
  bool m_deferred_view = false;
  std::vector<deferred_step> m_deferred;
  bool m_xdmf_held = false;   // finish(): the XDMF file is written once, after the last step
  bool m_xdmf_dirty = false;  // steps not yet in the XDMF file
  std::chrono::steady_clock::time_point m_next_xdmf_write{};
  std::vector<ghost_widths> m_ghosts;  // per layout
  // time-varying="false" variables already stored, and the iteration that holds them; the
  // same on every writer since it is decided from agreed data.
  std::map<std::size_t, std::int32_t> m_constant_iteration;
  // Writer 0: where those variables are, to reference them from later iterations.
  std::map<std::size_t, variable_record> m_constant_records;
  std::map<std::size_t, xdmf_dataset> m_constant_datasets;
  std::vector<xdmf_step> m_steps;  // writer 0: every iteration described in the XDMF file
  // Per model variable: the variable whose blocks place it (npos: none), and whether it
  // places some variable of this store.
  std::vector<std::size_t> m_mapping;
  std::vector<char> m_is_index;
  index_map m_positions;
  std::string m_index_problem;  // a malformed index block, reported with the next iteration
  // Per mapped variable: the index generation and dataset size checked for positions given
  // twice across writers (generations are this writer's; the check agrees on them).
  std::map<std::size_t, std::pair<std::uint64_t, std::uint64_t>> m_unique_checked;
};

}  // namespace sidecore::plugins::hdf5
