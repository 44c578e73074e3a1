// The table of modes: adding a transport is a folder and one line here (docs/design.md).
#include <iterator>

#include "common/error.hpp"
#include "transports/background_thread/setup.hpp"
#include "transports/dedicated_cores/setup.hpp"
#include "transports/dedicated_nodes/setup.hpp"
#include "transports/synchronous/setup.hpp"
#include "transports/transport.hpp"

namespace sidecore::transports {
namespace {

// In the order they are tried; the last one is always selected.
const mode* const modes[] = {
    &dedicated_nodes::mode_entry,
    &dedicated_cores::mode_entry,
    &background_thread::mode_entry,
    &synchronous::mode_entry,
};

}  // namespace

const mode& mode_of(const config::model& model, const topology::layout& topo) {
  for (const mode* m : modes)
    if (m->selected(model, topo)) return *m;
  return *modes[std::size(modes) - 1];
}

std::unique_ptr<server> setup::make_server() {
  throw error(DAMARIS_INIT_ERROR, std::string("the ") + mode_name() +
                                      " mode has no dedicated process to serve clients");
}

}  // namespace sidecore::transports
