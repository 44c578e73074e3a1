// Writes completed iterations to HDF5 files laid out as Damaris writes them, so that existing
// readers keep working: one file per writer and iteration, or one shared file per iteration.
// This file holds what both output modes share (the end of the run, the XDMF file) and the
// store's construction; file_per_core.cpp and collective.cpp hold the two modes.
#include "plugins/hdf5/hdf5_store.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
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
#include "plugins/hdf5/store_internals.hpp"

namespace sidecore::plugins::hdf5 {

// The XDMF file describes every step so far, so rewriting it costs more as the run goes on:
// it is rewritten at most once a second, and at most a tenth of the time (after a rewrite that
// took t, not before 10 t), then once more at the end of the run. A reader following the run
// sees steps a second late at most.
void hdf5_store::add_xdmf_step(xdmf_step step) {
  m_steps.push_back(std::move(step));
  m_xdmf_dirty = true;
  if (m_xdmf_held) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < m_next_xdmf_write) return;
  write_xdmf();
  const auto took = std::chrono::steady_clock::now() - now;
  m_next_xdmf_write =
      now + std::max<std::chrono::steady_clock::duration>(std::chrono::seconds(1), took * 10);
}

void hdf5_store::write_xdmf() {
  const std::string path =
      m_options.files_path + config::xdmf_file_name(m_context.model->simulation_name);
  write_file_atomically(path, render_xdmf(*m_context.model, m_steps), m_options.permissions);
  m_xdmf_dirty = false;
}

void hdf5_store::finish() {
  if (!m_deferred_view) {
    if (m_xdmf_dirty && !m_steps.empty()) write_xdmf();
    return;
  }
  const error_print_guard quiet;
  const MPI_Comm comm =
      m_context.finish_comm != MPI_COMM_NULL ? m_context.finish_comm : m_context.comm;
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
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &incomplete, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
    if (m_context.writer_index != 0 || failure) continue;
    try {
      publish_file_per_core(step.iteration, std::move(records), !failed && !incomplete);
    } catch (...) {
      failure = std::current_exception();
    }
  }
  m_deferred.clear();
  m_xdmf_held = false;
  if (m_context.writer_index == 0 && !failure && !m_steps.empty()) write_xdmf();
  if (failure) std::rethrow_exception(failure);
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
  create_directories(options.files_path.empty() ? std::string(".") : options.files_path, context);
  return std::make_unique<hdf5_store>(context, std::move(options));
}

}  // namespace sidecore::plugins::hdf5
