#include "transports/synchronous/setup.hpp"

#include "storing/writers_step.hpp"
#include "transports/synchronous/inline_engine.hpp"

namespace sidecore::transports::synchronous {
namespace {

constexpr const char* name = "synchronous";

class synchronous_setup : public setup {
 public:
  using setup::setup;
  std::unique_ptr<engine> make_engine() override {
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
