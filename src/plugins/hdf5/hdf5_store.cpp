// Writes completed iterations to HDF5 files laid out as Damaris writes them, so that existing
// readers keep working: one file per writer and iteration, or one shared file per iteration.
#include "plugins/hdf5/hdf5_store.hpp"
#include "plugins/hdf5/mesh_description.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "plugins/hdf5/hdf5_attributes.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "plugins/hdf5/virtual_view.hpp"
#include "plugins/hdf5/xdmf.hpp"

namespace sidecore::plugins::hdf5 {

namespace {

constexpr const char* valid_file_modes = "FilePerCore, Collective";

bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string trimmed(std::string_view text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

std::string config_file(const config::model* model) {
  return model != nullptr && !model->file.empty() ? model->file : "<configuration>";
}

// "file:line: store "name"" for messages about the store's XML element.
std::string store_where(const store_context& context) {
  return config_file(context.model) + ':' + std::to_string(context.settings->line) +
         ": store \"" + context.settings->name + '"';
}

// Sizes are spelled out here rather than taken from the config module so that the on-disk
// type and the byte count checked against a block always come from the same table.
struct type_info {
  hid_t native;
  std::size_t bytes;
};

type_info element_type_info(config::element_type type) {
  switch (type) {
    case config::element_type::int8:
      return {H5T_NATIVE_INT8, 1};
    case config::element_type::int16:
      return {H5T_NATIVE_INT16, 2};
    case config::element_type::int32:
      return {H5T_NATIVE_INT32, 4};
    case config::element_type::int64:
      return {H5T_NATIVE_INT64, 8};
    case config::element_type::float32:
      return {H5T_NATIVE_FLOAT, 4};
    case config::element_type::float64:
      return {H5T_NATIVE_DOUBLE, 8};
  }
  throw storage_error("HDF5 store: unknown element type " +
                      std::to_string(static_cast<int>(type)));
}

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string text = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) text += ',';
    text += std::to_string(dims[i]);
  }
  return text + ')';
}

std::string block_name(const config::variable& var, const block_view& block) {
  return "variable \"" + var.name + "\" source " + std::to_string(block.source) + " block " +
         std::to_string(block.block_id);
}

std::int64_t element_count(const std::vector<std::int64_t>& dims) {
  std::int64_t count = 1;
  for (const std::int64_t d : dims) count *= d;
  return count;
}

std::vector<hsize_t> to_hsize(const std::vector<std::int64_t>& values) {
  return std::vector<hsize_t>(values.begin(), values.end());
}

// What makes a block unwritable in any mode, or "" when it is fine.
std::string block_problem(const config::variable& var, const block_view& block,
                          std::size_t element_bytes) {
  const std::string name = block_name(var, block);
  for (const std::int64_t d : block.dims) {
    if (d < 0) return name + " has negative dimensions " + dims_text(block.dims);
  }
  if (!block.position.empty() && block.position.size() != block.dims.size()) {
    return name + " has position " + dims_text(block.position) + " but dimensions " +
           dims_text(block.dims);
  }
  if (!block.global_dims.empty() && block.global_dims.size() != block.dims.size()) {
    return name + " has global dimensions " + dims_text(block.global_dims) +
           " but dimensions " + dims_text(block.dims);
  }
  const auto needed = static_cast<std::uint64_t>(element_count(block.dims)) * element_bytes;
  // More bytes than needed is allowed (allocations may be rounded up); fewer would make
  // HDF5 read past the block.
  if (block.bytes < needed) {
    return name + " holds " + std::to_string(block.bytes) + " bytes but dimensions " +
           dims_text(block.dims) + " need " + std::to_string(needed);
  }
  if (needed > 0 && block.data == nullptr) return name + " has no data";
  return {};
}

void check_mpi(int status, const char* call) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw mpi_error(std::string("HDF5 store: ") + call + " failed: " + text);
  }
}

// Raw bytes (interior elements in the layout's type) and bytes HDF5 stored, for the ratio.
struct byte_counts {
  std::uint64_t raw = 0;
  std::uint64_t stored = 0;

  double ratio() const noexcept {
    return stored > 0 ? static_cast<double>(raw) / static_cast<double>(stored) : 1.0;
  }
};

void add_dataset_bytes(byte_counts& counts, hid_t dataset, std::uint64_t elements,
                       config::element_type type) {
  counts.raw += elements * config::element_size(type);
  counts.stored += H5Dget_storage_size(dataset);
}

void write_ratio_attributes(hid_t file, const byte_counts& counts, const std::string& path) {
  const auto raw = static_cast<std::int64_t>(counts.raw);
  const auto stored = static_cast<std::int64_t>(counts.stored);
  write_attribute(file, "/", "raw_bytes", H5T_NATIVE_INT64, {}, &raw, path);
  write_attribute(file, "/", "stored_bytes", H5T_NATIVE_INT64, {}, &stored, path);
  write_double_attribute(file, "/", "compression_ratio", counts.ratio(), path);
}

// One line per file written: at info level when compression or precision reduction changed
// the size (the ratio is what the user asked to see), at debug level otherwise.
void log_written(const std::string& path, const byte_counts& counts, bool speaker) {
  if (!speaker) return;
  const log::level lvl = counts.stored != counts.raw ? log::level::info : log::level::debug;
  log::emit(lvl, "HDF5 store: wrote ", path, ": ", readable_bytes(counts.raw),
            " of data stored in ", readable_bytes(counts.stored), " (compression ratio ",
            counts.ratio(), ')');
}

std::uint64_t element_total(const std::vector<std::int64_t>& dims) {
  return static_cast<std::uint64_t>(element_count(dims));
}

class hdf5_store final : public store {
 public:
  hdf5_store(const store_context& context, store_options options)
      : m_context(context),
        m_options(std::move(options)),
        m_ghosts(evaluate_ghosts(*context.model)) {
    // Writers that cannot talk to each other (background threads without
    // MPI_THREAD_MULTIPLE) cannot build a view of the whole run: say so instead of writing a
    // master file or an XDMF that would only show one writer's blocks.
    int size = 1;
    MPI_Comm_size(context.comm, &size);
    if (size < context.writer_count && (m_options.virtual_view || m_options.xdmf) &&
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
  std::string base_name(std::int32_t iteration) const {
    return m_context.model->simulation_name + "_It" + std::to_string(iteration);
  }
  std::string per_core_name(std::int32_t iteration, std::int32_t writer) const {
    return base_name(iteration) + "_Pr" + std::to_string(writer) + ".h5";
  }
  std::string global_name(std::int32_t iteration) const { return base_name(iteration) + ".h5"; }

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

  void write_file_per_core(const iteration_data& data);
  byte_counts write_file_per_core_contents(
      const iteration_data& data, const std::vector<const variable_blocks*>& selected,
      const std::vector<std::vector<prepared_block>>& prepared, const std::string& path) const;
  void publish_file_per_core(std::int32_t iteration, std::vector<variable_record> records,
                             bool complete);
  void write_collective(const iteration_data& data);
  void write_collective_per_block(const iteration_data& data, const variable_blocks& vb,
                                  const std::vector<prepared_block>& mine, hid_t file, hid_t lcpl,
                                  hid_t dxpl, const std::string& path, byte_counts& counts) const;
  void add_xdmf_step(xdmf_step step);

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
  bool m_deferred_view = false;
  std::vector<deferred_step> m_deferred;
  bool m_xdmf_held = false;  // finish(): the XDMF file is written once, after the last step
  std::vector<ghost_widths> m_ghosts;  // per layout
  // time-varying="false" variables already stored, and the iteration that holds them; the
  // same on every writer since it is decided from agreed data.
  std::map<std::size_t, std::int32_t> m_constant_iteration;
  // Writer 0: where those variables are, to reference them from later iterations.
  std::map<std::size_t, variable_record> m_constant_records;
  std::map<std::size_t, xdmf_dataset> m_constant_datasets;
  std::vector<xdmf_step> m_steps;  // writer 0: every iteration described in the XDMF file
};

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
    }
    byte_counts counts;
    try {
      counts = write_file_per_core_contents(data, selected, prepared, path);
    } catch (...) {
      // A partial file would look like valid output to a reader.
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
      throw;
    }
    log_written(path, counts, true);
    for (std::size_t i = 0; i < selected.size(); ++i) {
      const variable_blocks& vb = *selected[i];
      const std::size_t variable = index_of(vb.var);
      const stored_type type = stored_type_of(vb.layout->type, settings_of(variable).precision);
      for (const prepared_block& p : prepared[i]) {
        local_blocks b;
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
    const std::vector<std::vector<prepared_block>>& prepared, const std::string& path) const {
  const call_site file_site{path, {}};
  file_handle file(check_id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                            "H5Fcreate", file_site));
  write_int_attribute(file.get(), "/", "iteration", data.iteration, path);
  write_int_attribute(file.get(), "/", "complete", data.incomplete ? 0 : 1, path);
  write_mesh_description(file.get(), *m_context.model, path);
  const property_list_handle lcpl = make_intermediate_group_lcpl(file_site);
  byte_counts counts;

  for (std::size_t i = 0; i < selected.size(); ++i) {
    const variable_blocks& vb = *selected[i];
    const output_settings& settings = settings_of(index_of(vb.var));
    const stored_type type = stored_type_of(vb.layout->type, settings.precision);
    const stored_hdf5_type file_type(type);
    for (const prepared_block& p : prepared[i]) {
      const block_view* block = p.view;
      const std::string name = block_dataset_name(vb.var->name, block->source, block->block_id,
                                                   m_context.model->arch.domains);
      const call_site site{path, name};
      const std::vector<hsize_t> extents = to_hsize(p.dims);
      const dataspace_handle space = make_simple_space(extents, site);
      // One chunk per block: the block is compressed as a whole.
      const property_list_handle dcpl = make_dataset_properties(
          settings.compression, element_total(p.dims) > 0 ? extents : std::vector<hsize_t>{},
          stored_size(type), site);
      dataset_handle dataset(check_id(H5Dcreate2(file.get(), name.c_str(), file_type.get(),
                                                 space.get(), lcpl.get(), dcpl.get(),
                                                 H5P_DEFAULT),
                                      "H5Dcreate2", site));
      if (element_total(p.dims) > 0) {
        check_status(H5Dwrite(dataset.get(), file_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                              p.data),
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
        write_int64_array_attribute(dataset.get(), name, "ghosts_before",
                                    ghosts_of(*vb.var).before, path);
        write_int64_array_attribute(dataset.get(), name, "ghosts_after",
                                    ghosts_of(*vb.var).after, path);
      }
      if (!vb.var->unit.empty()) {
        write_string_attribute(dataset.get(), name, "unit", vb.var->unit, path);
      }
      add_dataset_bytes(counts, dataset.get(), element_total(p.dims), vb.layout->type);
      check_status(dataset.close(), "H5Dclose", site);
    }
  }
  write_ratio_attributes(file.get(), counts, path);
  // Closing flushes the data: a failure here means the file is not complete.
  check_status(file.close(), "H5Fclose", file_site);
  return counts;
}

void hdf5_store::publish_file_per_core(std::int32_t iteration,
                                       std::vector<variable_record> records, bool complete) {
  const config::model& model = *m_context.model;
  for (const variable_record& r : records) {
    if (!model.variables[r.variable].time_varying) m_constant_records[r.variable] = r;
  }
  // Time-invariant variables stored earlier are mapped again, from their original files.
  for (const auto& [variable, record] : m_constant_records) {
    const bool present = std::any_of(records.begin(), records.end(), [v = variable](const auto& r) {
      return r.variable == v;
    });
    if (!present) records.push_back(record);
  }
  std::sort(records.begin(), records.end(),
            [](const variable_record& a, const variable_record& b) { return a.variable < b.variable; });
  if (!m_options.virtual_view) return;

  const std::string master = m_options.files_path + global_name(iteration);
  const bool written = write_master(
      master, model, iteration, records,
      [this](std::int32_t stored, std::int32_t writer) { return per_core_name(stored, writer); },
      complete);
  if (!written) return;
  log::debug("HDF5 store: wrote ", master,
             complete ? "" : " (incomplete: a writer failed, or a client's data is missing)");
  if (!m_options.xdmf) return;
  xdmf_step step;
  step.iteration = iteration;
  for (const variable_record& r : records) {
    if (r.global_dims.empty()) continue;
    xdmf_dataset d;
    d.variable = r.variable;
    d.file = global_name(iteration);
    d.path = model.variables[r.variable].name;
    d.type = r.type;
    d.dims = r.global_dims;
    step.datasets.push_back(std::move(d));
  }
  add_xdmf_step(std::move(step));
}

void hdf5_store::add_xdmf_step(xdmf_step step) {
  m_steps.push_back(std::move(step));
  if (m_xdmf_held) return;
  const std::string path = m_options.files_path + m_context.model->simulation_name + ".xmf";
  write_file_atomically(path, render_xdmf(*m_context.model, m_steps));
}

void hdf5_store::finish() {
  if (!m_deferred_view) return;
  const error_print_guard quiet;
  const MPI_Comm comm = m_context.finish_comm;
  // Every writer stored the same iterations; agree anyway, so that no writer waits for a step
  // another one never had.
  int steps = static_cast<int>(m_deferred.size());
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &steps, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  m_xdmf_held = true;
  std::exception_ptr failure;
  for (int i = 0; i < steps; ++i) {
    const deferred_step& step = m_deferred[static_cast<std::size_t>(i)];
    bool failed = false;
    std::vector<variable_record> records =
        gather_blocks(step.blocks, step.iteration, step.failed, comm, failed);
    int incomplete = step.incomplete ? 1 : 0;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &incomplete, 1, MPI_INT, MPI_MAX, comm),
              "MPI_Allreduce");
    if (m_context.writer_index != 0 || failure) continue;
    try {
      publish_file_per_core(step.iteration, std::move(records), !failed && !incomplete);
    } catch (...) {
      failure = std::current_exception();
    }
  }
  m_deferred.clear();
  m_xdmf_held = false;
  if (m_context.writer_index == 0 && !failure && !m_steps.empty()) {
    const std::string path = m_options.files_path + m_context.model->simulation_name + ".xmf";
    write_file_atomically(path, render_xdmf(*m_context.model, m_steps));
  }
  if (failure) std::rethrow_exception(failure);
}

// A variable without global extents in a collective file: every block of every writer becomes
// its own dataset, <variable>/P<source>[/B<block>] as in file-per-core files. Creating datasets
// is collective in parallel HDF5, so the writers first learn every block's source, id and
// extents; each block is then written by its holder, the others taking part with empty
// selections.
void hdf5_store::write_collective_per_block(const iteration_data& data, const variable_blocks& vb,
                                            const std::vector<prepared_block>& mine, hid_t file,
                                            hid_t lcpl, hid_t dxpl, const std::string& path,
                                            byte_counts& counts) const {
  const std::size_t ndims = vb.layout->dimensions.size();
  const std::size_t fields = 2 + ndims;  // source, block, extents
  std::vector<std::int64_t> packed;
  for (const prepared_block& p : mine) {
    packed.push_back(p.view->source);
    packed.push_back(p.view->block_id);
    packed.insert(packed.end(), p.dims.begin(), p.dims.end());
  }
  int size = 1;
  check_mpi(MPI_Comm_size(m_context.comm, &size), "MPI_Comm_size");
  int count = static_cast<int>(packed.size());
  std::vector<int> sizes(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(&count, 1, MPI_INT, sizes.data(), 1, MPI_INT, m_context.comm),
            "MPI_Allgather");
  for (std::size_t w = 1; w < sizes.size(); ++w) offsets[w] = offsets[w - 1] + sizes[w - 1];
  std::vector<std::int64_t> all(static_cast<std::size_t>(offsets.back() + sizes.back()));
  check_mpi(MPI_Allgatherv(packed.data(), count, MPI_INT64_T, all.data(), sizes.data(),
                           offsets.data(), MPI_INT64_T, m_context.comm),
            "MPI_Allgatherv");

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
  for (const entry& b : blocks) {
    const std::string name =
        block_dataset_name(vb.var->name, static_cast<std::int32_t>(b.source),
                           static_cast<std::int32_t>(b.block), m_context.model->arch.domains);
    const call_site site{path, name};
    const std::vector<hsize_t> extents = to_hsize(b.dims);
    const bool has_data = element_total(b.dims) > 0;
    const dataspace_handle space = make_simple_space(extents, site);
    const property_list_handle dcpl = make_dataset_properties(
        settings.compression, has_data ? extents : std::vector<hsize_t>{}, stored_size(type),
        site);
    dataset_handle dataset(check_id(
        H5Dcreate2(file, name.c_str(), file_type.get(), space.get(), lcpl, dcpl.get(), H5P_DEFAULT),
        "H5Dcreate2", site));
    write_int_attribute(dataset.get(), name, "iteration", data.iteration, path);
    write_int_attribute(dataset.get(), name, "source", static_cast<std::int32_t>(b.source), path);
    write_int_attribute(dataset.get(), name, "block", static_cast<std::int32_t>(b.block), path);
    write_string_attribute(dataset.get(), name, "layout", vb.layout->name, path);
    if (!vb.var->unit.empty()) write_string_attribute(dataset.get(), name, "unit", vb.var->unit, path);
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
  }
}

void hdf5_store::write_collective(const iteration_data& data) {
  const std::vector<const variable_blocks*> selected = select(data);
  const std::size_t variable_count = selected.size();

  // Ghost zones are removed and precision reduced before any collective call; a failure is
  // agreed on below with the other problems.
  std::string problem;
  std::vector<std::vector<prepared_block>> prepared(variable_count);
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
  std::vector<std::size_t> offsets(variable_count + 1, 0);
  for (std::size_t i = 0; i < variable_count; ++i) {
    offsets[i + 1] = offsets[i] + 2 * selected[i]->layout->dimensions.size() + 2;
  }
  std::vector<std::int64_t> agreed(offsets.back(), 0);
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
    entry[ndims + 1] = static_cast<std::int64_t>(vb.blocks.size());
    for (const prepared_block& p : prepared[i]) {
      if (p.dims.size() != ndims) continue;
      for (std::size_t d = 0; d < ndims; ++d) {
        entry[ndims + 2 + d] = std::max(entry[ndims + 2 + d], p.dims[d]);
      }
    }
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, agreed.data(), static_cast<int>(agreed.size()),
                          MPI_INT64_T, MPI_MAX, m_context.comm),
            "MPI_Allreduce");

  // Errors seen by every writer alike are thrown at once; errors in local blocks are agreed
  // on first so that no writer is left waiting in a collective call.
  for (std::size_t i = 0; i < variable_count; ++i) {
    const variable_blocks& vb = *selected[i];
    const std::size_t ndims = vb.layout->dimensions.size();
    const std::int64_t* entry = agreed.data() + offsets[i];
    if (entry[ndims + 1] != 0 && entry[ndims] == 0 && !vb.layout->global_dimensions.empty()) {
      throw storage_error("HDF5 store: Collective mode needs the global dimensions of variable \"" +
                          vb.var->name + "\": add global=\"...\" to layout \"" +
                          vb.layout->name + "\" (" + config_file(m_context.model) + ':' +
                          std::to_string(vb.layout->line) + ')');
    }
  }
  for (std::size_t i = 0; i < variable_count && problem.empty(); ++i) {
    const variable_blocks& vb = *selected[i];
    const std::size_t ndims = vb.layout->dimensions.size();
    const std::int64_t* entry = agreed.data() + offsets[i];
    if (entry[ndims + 1] == 0 || vb.layout->global_dimensions.empty()) continue;
    const std::vector<std::int64_t> global(entry, entry + ndims);
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
  int failed = problem.empty() ? 0 : 1;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, m_context.comm),
            "MPI_Allreduce");
  if (failed != 0) {
    if (!problem.empty()) throw storage_error("HDF5 store: " + problem);
    throw storage_error("HDF5 store: another writer holds an invalid block in iteration " +
                        std::to_string(data.iteration) + "; nothing was written");
  }

  const std::string path = m_options.files_path + global_name(data.iteration);
  const call_site file_site{path, {}};
  file_handle file;
  {
    property_list_handle fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", file_site));
    check_status(H5Pset_fapl_mpio(fapl.get(), m_context.comm, MPI_INFO_NULL), "H5Pset_fapl_mpio",
                 file_site);
    // Metadata is then written by a few ranks in one collective operation, not by rank 0
    // alone at close time.
    check_status(H5Pset_coll_metadata_write(fapl.get(), 1), "H5Pset_coll_metadata_write",
                 file_site);
    file = file_handle(check_id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                                "H5Fcreate", file_site));
  }
  write_int_attribute(file.get(), "/", "iteration", data.iteration, path);
  write_int_attribute(file.get(), "/", "complete", data.incomplete ? 0 : 1, path);
  write_mesh_description(file.get(), *m_context.model, path);
  const property_list_handle lcpl = make_intermediate_group_lcpl(file_site);
  property_list_handle dxpl(check_id(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate", file_site));
  // Collective transfers are also what parallel HDF5 requires to write filtered datasets;
  // the data is already in the stored type, so HDF5 has no conversion that would make it
  // fall back to independent transfers.
  check_status(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio",
               file_site);

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
      write_collective_per_block(data, vb, prepared[i], file.get(), lcpl.get(), dxpl.get(), path,
                                 counts);
      continue;
    }

    const std::string& name = vb.var->name;
    const call_site site{path, name};
    const output_settings& settings = settings_of(variable);
    const stored_type type = stored_type_of(vb.layout->type, settings.precision);
    const stored_hdf5_type file_type(type);
    const std::vector<hsize_t> global(entry, entry + ndims);
    const std::vector<hsize_t> chunk(entry + ndims + 2, entry + 2 * ndims + 2);
    const bool chunked = std::all_of(chunk.begin(), chunk.end(), [](hsize_t c) { return c > 0; });
    const dataspace_handle global_space = make_simple_space(global, site);
    const property_list_handle dcpl = make_dataset_properties(
        settings.compression, chunked ? chunk : std::vector<hsize_t>{}, stored_size(type), site);
    dataset_handle dataset(check_id(H5Dcreate2(file.get(), name.c_str(), file_type.get(),
                                               global_space.get(), lcpl.get(), dcpl.get(),
                                               H5P_DEFAULT),
                                    "H5Dcreate2", site));
    write_int_attribute(dataset.get(), name, "iteration", data.iteration, path);
    write_string_attribute(dataset.get(), name, "layout", vb.layout->name, path);
    if (!vb.var->unit.empty()) {
      write_string_attribute(dataset.get(), name, "unit", vb.var->unit, path);
    }

    // Writers with fewer blocks still take part, with empty selections; HDF5 wants a
    // non-null buffer even then.
    static const char no_data = 0;
    for (std::int64_t k = 0; k < write_count; ++k) {
      const prepared_block* block = k < static_cast<std::int64_t>(prepared[i].size())
                                        ? &prepared[i][static_cast<std::size_t>(k)]
                                        : nullptr;
      dataspace_handle file_space(check_id(H5Scopy(global_space.get()), "H5Scopy", site));
      dataspace_handle memory_space;
      const void* buffer = nullptr;
      if (block != nullptr && element_count(block->dims) > 0) {
        const std::vector<hsize_t> count = to_hsize(block->dims);
        const std::vector<hsize_t> start = to_hsize(block->position);
        memory_space = make_simple_space(count, site);
        check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                         count.data(), nullptr),
                     "H5Sselect_hyperslab", site);
        buffer = block->data;
      } else {
        memory_space = dataspace_handle(check_id(H5Scopy(global_space.get()), "H5Scopy", site));
        check_status(H5Sselect_none(memory_space.get()), "H5Sselect_none", site);
        check_status(H5Sselect_none(file_space.get()), "H5Sselect_none", site);
        buffer = &no_data;
      }
      check_status(H5Dwrite(dataset.get(), file_type.get(), memory_space.get(), file_space.get(),
                            dxpl.get(), buffer),
                   "H5Dwrite", site);
    }
    add_dataset_bytes(counts, dataset.get(),
                      element_total(std::vector<std::int64_t>(entry, entry + ndims)),
                      vb.layout->type);
    check_status(dataset.close(), "H5Dclose", site);

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
  check_status(file.close(), "H5Fclose", file_site);
  // Every writer holds the same counts of the shared file: one of them reports them.
  log_written(path, counts, m_context.writer_index == 0);
  if (m_options.xdmf && m_context.writer_index == 0 && !step.datasets.empty()) {
    std::sort(step.datasets.begin(), step.datasets.end(),
              [](const xdmf_dataset& a, const xdmf_dataset& b) { return a.variable < b.variable; });
    add_xdmf_step(std::move(step));
  }
}

void create_directories(const std::string& path, const store_context& context) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  // create_directories reports no error when another writer created it first.
  if (error || !std::filesystem::is_directory(path)) {
    throw storage_error("HDF5 store: cannot create directory \"" + path + "\" (FilesPath of " +
                        store_where(context) + ")" +
                        (error ? ": " + error.message() : std::string()));
  }
}

bool parse_bool(const std::string& value, const std::string& key, const store_context& context) {
  if (equals_ignoring_case(value, "true") || equals_ignoring_case(value, "yes") || value == "1") {
    return true;
  }
  if (equals_ignoring_case(value, "false") || equals_ignoring_case(value, "no") || value == "0") {
    return false;
  }
  throw config_error(store_where(context) + ": " + key + " \"" + value +
                     "\" is not a boolean; valid values are true, false");
}

precision parse_precision(const std::string& value, const std::string& key,
                          const store_context& context) {
  if (equals_ignoring_case(value, "full")) return precision::full;
  if (equals_ignoring_case(value, "single") || equals_ignoring_case(value, "float")) {
    return precision::single;
  }
  if (equals_ignoring_case(value, "half") || equals_ignoring_case(value, "16")) {
    return precision::half;
  }
  throw config_error(store_where(context) + ": " + key + " \"" + value +
                     "\" is not supported; valid values are full, single, half");
}

// "Compression.temperature" -> ("Compression", "temperature"); no dot gives an empty name.
std::pair<std::string, std::string> split_variable_key(const std::string& key) {
  const std::size_t dot = key.find('.');
  if (dot == std::string::npos) return {key, {}};
  return {key.substr(0, dot), key.substr(dot + 1)};
}

}  // namespace

store_options parse_options(const store_context& context) {
  store_options options;
  bool xdmf_given = false;
  // Per-variable settings start from the store's, whatever the order of the options.
  std::vector<std::pair<std::string, std::string>> per_variable;
  for (const auto& [raw_key, raw_value] : context.settings->options) {
    const std::string key = trimmed(raw_key);
    const std::string value = trimmed(raw_value);
    const auto [base, variable] = split_variable_key(key);
    if (!variable.empty() && (equals_ignoring_case(base, "Compression") ||
                              equals_ignoring_case(base, "Precision"))) {
      per_variable.emplace_back(key, value);
    } else if (equals_ignoring_case(key, "FileMode")) {
      if (equals_ignoring_case(value, "FilePerCore")) {
        options.mode = file_mode::file_per_core;
      } else if (equals_ignoring_case(value, "Collective")) {
        options.mode = file_mode::collective;
      } else {
        throw config_error(store_where(context) + ": FileMode \"" + value +
                           "\" is not supported; valid values are " + valid_file_modes);
      }
    } else if (equals_ignoring_case(key, "FilesPath")) {
      options.files_path = value;
      if (!value.empty() && value.back() != '/') options.files_path += '/';
    } else if (equals_ignoring_case(key, "XDMFMode")) {
      options.xdmf_mode = value;
    } else if (equals_ignoring_case(key, "VirtualView")) {
      options.virtual_view = parse_bool(value, key, context);
    } else if (equals_ignoring_case(key, "XDMF")) {
      options.xdmf = parse_bool(value, key, context);
      xdmf_given = true;
    } else if (equals_ignoring_case(key, "Compression")) {
      options.defaults.compression.filter = parse_compression(value, store_where(context)).filter;
      options.defaults.compression.level = parse_compression(value, store_where(context)).level;
    } else if (equals_ignoring_case(key, "Shuffle")) {
      options.defaults.compression.shuffle = parse_bool(value, key, context);
    } else if (equals_ignoring_case(key, "Precision")) {
      options.defaults.precision = parse_precision(value, key, context);
    } else {
      const std::vector<std::string> keys = {"FileMode", "FilesPath",   "VirtualView", "XDMF",
                                             "XDMFMode", "Compression", "Shuffle",     "Precision"};
      throw config_error(store_where(context) + ": unknown option \"" + key + "\"; " +
                         config::detail::suggest(key, keys, "options") +
                         " (and Compression.<variable>, Precision.<variable>)");
    }
  }
  for (const auto& [key, value] : per_variable) {
    const auto [base, name] = split_variable_key(key);
    const std::size_t variable = context.model->find_variable(name);
    if (variable == config::model::npos) {
      std::vector<std::string> names;
      for (const config::variable& v : context.model->variables) names.push_back(v.name);
      throw config_error(store_where(context) + ": option \"" + key + "\" names no variable; " +
                         config::detail::suggest(name, names, "variables"));
    }
    auto [entry, inserted] = options.per_variable.emplace(variable, options.defaults);
    if (equals_ignoring_case(base, "Compression")) {
      const compression parsed = parse_compression(value, store_where(context) + ": " + key);
      entry->second.compression.filter = parsed.filter;
      entry->second.compression.level = parsed.level;
    } else {
      entry->second.precision = parse_precision(value, key, context);
    }
  }
  if (options.mode == file_mode::collective && context.writer_index == 0) {
    // A variable without global extents (a per-client scalar, say) has no place in a global
    // dataset: its blocks are stored one dataset each, named as in FilePerCore files. Damaris
    // accepts such files (and writes every block over the others), so this is a warning.
    for (const config::variable& v : context.model->variables) {
      if (v.store_index !=
          static_cast<std::size_t>(context.settings - context.model->stores.data()))
        continue;
      const config::layout& l = context.model->layouts[v.layout_index];
      if (l.global_dimensions.empty())
        log::warning(store_where(context), ": FileMode Collective: variable \"", v.name,
                     "\" (line ", v.line, ") has layout \"", l.name,
                     "\" without global dimensions, so each of its blocks is stored as its own "
                     "dataset \"", v.name, "/P<source>",
                     context.model->arch.domains != 1 ? "/B<block>" : "",
                     "\" in the collective file; add global=\"...\" to the layout (line ", l.line,
                     ") for one global dataset");
    }
  }
  // Two HDF5 stores writing the same file names would overwrite each other's files, however
  // their FilesPath is spelled ("out/", "./out", "out//", an absolute path).
  const auto directory_of = [](const std::string& files_path) {
    return (std::filesystem::absolute(files_path.empty() ? "." : files_path) / "")
        .lexically_normal();
  };
  const std::filesystem::path mine = directory_of(options.files_path);
  for (const config::store& other : context.model->stores) {
    if (&other == context.settings || !equals_ignoring_case(other.type, "HDF5")) continue;
    std::string path;
    for (const auto& [key, value] : other.options)
      if (equals_ignoring_case(trimmed(key), "FilesPath")) path = trimmed(value);
    if (directory_of(path) == mine)
      throw config_error(store_where(context) + " and store \"" + other.name + "\" (line " +
                         std::to_string(other.line) + ") write the same files (FilesPath \"" +
                         options.files_path + "\", simulation \"" + context.model->simulation_name +
                         "\"): give each HDF5 store its own FilesPath");
  }
  if (options.mode == file_mode::file_per_core && !options.virtual_view) {
    // The XDMF file points at global datasets, which file-per-core output only has through
    // the master file.
    if (xdmf_given && options.xdmf) {
      throw config_error(store_where(context) +
                         ": XDMF needs VirtualView in FilePerCore mode (the XDMF file points at "
                         "the master file's global datasets)");
    }
    options.xdmf = false;
  }
  return options;
}

std::unique_ptr<store> make_hdf5_store(const store_context& context) {
  if (context.settings == nullptr || context.model == nullptr) {
    throw argument_error("HDF5 store: the store context needs a model and store settings");
  }
  store_options options = parse_options(context);
  if (context.comm == MPI_COMM_NULL) {
    throw argument_error("HDF5 store: " + store_where(context) +
                         " was given no communicator (writers exchange block metadata)");
  }
  if (!options.files_path.empty()) create_directories(options.files_path, context);
  return std::make_unique<hdf5_store>(context, std::move(options));
}

}  // namespace sidecore::plugins::hdf5
