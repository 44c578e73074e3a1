// Synchronous mode: blocks wait in process memory until the end of the iteration stores them.
#include "transports/synchronous/inline_engine.hpp"

#include <climits>
#include <string>

#include "common/error.hpp"
#include "common/mpi_handles.hpp"
#include "storing/actions.hpp"

namespace sidecore::transports {

inline_engine::inline_engine(const config::model& model, MPI_Comm writers, int source, bool in_step)
    : m_model(model),
      m_writers(writers),
      m_source(source),
      m_in_step(in_step),
      m_processor(model, writers, 1, nullptr) {
  m_processor.name_clients({source});
  m_processor.publish_to(&m_stats);
}

// The buffer bounds only the size of one block (checked by the client): memory is the
// process's own and is returned once the iteration is stored.
reservation inline_engine::reserve(std::uint64_t bytes) {
  reservation r;
  r.owned = buffer_pool::acquire(bytes);
  r.address = r.owned.get();
  return r;
}

void inline_engine::commit(const protocol::message& m, block_buffer owned) {
  storing::stored_block b = storing::stored_block_from(m, owned.get());
  b.owned = std::move(owned);
  m_processor.add_block(std::move(b));
}

void inline_engine::signal(const config::event& event, std::size_t, int iteration) {
  storing::action_registry::instance().run(event, m_model.file, m_source, iteration);
}

void inline_engine::end_iteration(int iteration, bool skipped, std::uint64_t dropped_bytes) {
  // The processor has one source: this process.
  if (m_in_step) {
    const step agreed = storing::agree_on_step(m_writers, iteration, false, skipped);
    if (!agreed.in_step)
      throw error(DAMARIS_CHANNEL_ERROR,
                  "the clients ended different iterations together (" + std::to_string(iteration) +
                      " here, up to " + std::to_string(agreed.iteration) +
                      " elsewhere): with a store that writes collectively, every client must end "
                      "every iteration; iteration " +
                      std::to_string(iteration) + " is not stored");
    if (agreed.any_incomplete && !skipped) m_processor.note_incomplete_elsewhere(iteration);
  }
  m_processor.end_iteration(0, iteration, skipped, dropped_bytes);
}

// Reported once the client has moved on, so that a failed store does not stop the count of
// iterations (the next iteration is a new chance).
void inline_engine::iteration_started(int) { rethrow_store_failure(); }

void inline_engine::stop(int iteration) {
  if (m_in_step) {
    // Take part, with no data, in every iteration the other clients still end.
    for (;;) {
      const step agreed = storing::agree_on_step(m_writers, iteration - 1, true, true);
      if (agreed.all_stopped) break;
      if (agreed.in_step && agreed.iteration >= iteration) {
        m_processor.end_iteration(0, agreed.iteration, true);
        iteration = agreed.iteration + 1;
      }
    }
  }
  m_processor.finish();
  rethrow_store_failure();
}

void inline_engine::rethrow_store_failure() {
  std::string failure = m_processor.take_failure();
  if (!failure.empty()) throw storage_error(failure);
}

}  // namespace sidecore::transports
