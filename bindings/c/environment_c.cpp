// sidecore/environment.h: answers from what damaris_initialize worked out once (the runtime's
// environment and communicators); nothing here waits or talks to another process.
#include "sidecore/environment.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "Damaris.h"
#include "common/c_boundary.hpp"
#include "common/error.hpp"
#include "current_runtime.hpp"
#include "runtime/runtime.hpp"

namespace {

const sidecore::runtime& initialized_runtime(const char* function) {
  const sidecore::runtime* rt = sidecore::current_runtime();
  if (!rt)
    throw sidecore::error(DAMARIS_NOT_INITIALIZED, std::string(function) +
                                                       " called before damaris_initialize or "
                                                       "after damaris_finalize");
  return *rt;
}

}  // namespace

SIDECORE_API int sidecore_environment_get(sidecore_environment_t* out) {
  return sidecore::c_boundary::guarded_call("sidecore_environment_get", [&] {
    if (!out) throw sidecore::argument_error("out is NULL");
    const sidecore::runtime& rt = initialized_runtime("sidecore_environment_get");
    const sidecore::plugins::script_environment& env = rt.environment();
    sidecore_environment_t e{};
    e.is_client = rt.is_server() ? 0 : 1;
    e.has_servers = rt.has_dedicated_resources() ? 1 : 0;
    e.is_dedicated_core = env.is_dedicated_core ? 1 : 0;
    e.is_dedicated_node = env.is_dedicated_node ? 1 : 0;
    e.clients_per_node = env.clients_per_node;
    e.cores_per_node = env.cores_per_node;
    e.servers_per_node = env.servers_per_node;
    e.number_of_nodes = env.number_of_nodes;
    // A client with dedicated resources receives nobody's blocks (the mode tells, since the
    // environment lists the writer's own index without them).
    e.known_client_count = (!rt.is_server() && rt.has_dedicated_resources())
                               ? 0
                               : static_cast<int32_t>(env.known_clients.size());
    // The magic number is decimal milliseconds: far shorter than the field.
    const std::size_t n = std::min(env.magic.size(), sizeof e.magic_number - 1);
    std::memcpy(e.magic_number, env.magic.data(), n);
    *out = e;
  });
}

SIDECORE_API int sidecore_environment_known_clients(int32_t* clients, int32_t capacity,
                                                    int32_t* count) {
  return sidecore::c_boundary::guarded_call("sidecore_environment_known_clients", [&] {
    if (!count) throw sidecore::argument_error("count is NULL");
    if (capacity < 0)
      throw sidecore::argument_error("capacity is " + std::to_string(capacity) +
                                     "; give 0 or more");
    if (!clients && capacity > 0)
      throw sidecore::argument_error("clients is NULL with a capacity of " +
                                     std::to_string(capacity));
    const sidecore::runtime& rt = initialized_runtime("sidecore_environment_known_clients");
    const auto& known = rt.environment().known_clients;
    const bool none = !rt.is_server() && rt.has_dedicated_resources();
    const auto total = none ? 0 : static_cast<int32_t>(known.size());
    for (int32_t i = 0; i < std::min(total, capacity); ++i) clients[i] = known[i];
    *count = total;
  });
}

SIDECORE_API int sidecore_server_comm_get(MPI_Comm* comm) {
  int code = DAMARIS_OK;
  const int failure = sidecore::c_boundary::guarded_call("sidecore_server_comm_get", [&] {
    if (!comm) throw sidecore::argument_error("comm is NULL");
    *comm = MPI_COMM_NULL;
    const sidecore::runtime& rt = initialized_runtime("sidecore_server_comm_get");
    if (!rt.is_server()) {
      // Not a failure of the call: the answer to "am I a server?" is no.
      code = DAMARIS_NO_SERVER;
      return;
    }
    *comm = rt.server_comm();
  });
  return failure != DAMARIS_OK ? failure : code;
}

SIDECORE_API int sidecore_global_comm_get(MPI_Comm* comm) {
  return sidecore::c_boundary::guarded_call("sidecore_global_comm_get", [&] {
    if (!comm) throw sidecore::argument_error("comm is NULL");
    *comm = initialized_runtime("sidecore_global_comm_get").world_comm();
  });
}

// An alias of damaris_last_error_message(): one error slot per thread (common/c_boundary.hpp).
SIDECORE_API const char* sidecore_environment_last_error(void) {
  return sidecore::c_boundary::last_error();
}
