// Synchronous mode: blocks wait in process memory until the end of the iteration stores them.
#include "engines/inline_engine.hpp"

#include <string>

#include "common/error.hpp"
#include "server/actions.hpp"

namespace sidecore::engines {

inline_engine::inline_engine(const config::model& model, MPI_Comm writers, int source)
    : m_model(model), m_source(source), m_processor(model, writers, 1, nullptr) {}

// The buffer bounds only the size of one block (checked by the client): memory is the
// process's own and is returned once the iteration is stored.
reservation inline_engine::reserve(std::uint64_t bytes) {
  reservation r;
  r.owned = buffer_pool::acquire(bytes);
  r.address = r.owned.get();
  return r;
}

void inline_engine::commit(const transport::message& m, block_buffer owned) {
  server::stored_block b = server::stored_block_from(m, owned.get());
  b.owned = std::move(owned);
  m_processor.add_block(std::move(b));
}

void inline_engine::signal(const config::event& event, std::size_t, int iteration) {
  server::action_registry::instance().run(event, m_model.file, m_source, iteration);
}

void inline_engine::end_iteration(int iteration, bool skipped) {
  // The processor has one source: this process.
  m_processor.end_iteration(0, iteration, skipped);
}

// Reported once the client has moved on, so that a failed store does not stop the count of
// iterations (the next iteration is a new chance).
void inline_engine::iteration_started(int) { rethrow_store_failure(); }

void inline_engine::stop(int) {
  m_processor.finish();
  rethrow_store_failure();
}

void inline_engine::rethrow_store_failure() {
  std::string failure = m_processor.take_failure();
  if (!failure.empty()) throw storage_error(failure);
}

}  // namespace sidecore::engines
