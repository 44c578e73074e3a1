#include "transports/synchronous/setup.hpp"

#include <algorithm>

#include "memory/buffer_pool.hpp"
#include "storing/writers_step.hpp"
#include "transports/memory_budget.hpp"
#include "transports/synchronous/inline_engine.hpp"

namespace sidecore::transports::synchronous {
namespace {

constexpr const char* name = "synchronous";

class synchronous_setup : public setup {
 public:
  using setup::setup;
  std::unique_ptr<engine> make_engine() override {
    // The blocks of an iteration live until its stores ran, inside damaris_end_iteration: an
    // arena of two iterations' worth (at most the XML buffer), whose first iteration is mapped
    // in the background, spares the first write the page faults of fresh memory (64 MiB: 29 ms
    // against 3.5 here). Larger iterations take memory of their own, as before.
    const std::uint64_t window = first_iteration_window(m_model);
    buffer_pool::reserve_arena(std::min<std::uint64_t>(m_model.arch.buffer_size, 2 * window),
                               window);
    return std::make_unique<inline_engine>(m_model, m_topo.clients.get(), m_topo.client_index,
                                           storing::writers_in_step(m_model));
  }
  const char* mode_name() const noexcept override { return name; }
};

void describe(const config::model&, const topology::layout& topo,
              plugins::script_environment& env) {
  env.mode = name;
  env.clients_per_node = topo.node_size;
}

}  // namespace

const transports::mode mode_entry = {
    name,
    [](const config::model&, const topology::layout&) { return true; },
    describe,
    [](const config::model& model, const topology::layout& topo) -> std::unique_ptr<setup> {
      return std::make_unique<synchronous_setup>(model, topo);
    },
};

}  // namespace sidecore::transports::synchronous
