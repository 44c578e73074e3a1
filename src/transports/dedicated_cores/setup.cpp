// Initialization order: servers create their segment, clients map it, its name is removed,
// then the heap's first pages are reserved and mapped.
#include "transports/dedicated_cores/setup.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>
#include <string>

#include "common/agreement.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "transports/dedicated_cores/channel.hpp"
#include "transports/dedicated_cores/heap_reserver.hpp"
#include "transports/dedicated_cores/server_loop.hpp"
#include "transports/dedicated_cores/shm_engine.hpp"
#include "transports/memory_budget.hpp"

namespace sidecore::transports::dedicated_cores {
namespace {

constexpr const char* name = "dedicated cores";

// A random token the whole job shares (rank 0's), to name its segments.
std::string job_token(MPI_Comm comm) {
  unsigned long long token = 0;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    std::random_device device;
    token = (static_cast<unsigned long long>(device()) << 32) ^ device() ^
            static_cast<unsigned long long>(::getpid());
  }
  check_mpi(MPI_Bcast(&token, 1, MPI_UNSIGNED_LONG_LONG, 0, comm), "MPI_Bcast");
  char text[32];
  std::snprintf(text, sizeof text, "%016llx", token);
  return text;
}

// The sizes of a core's segment, from the XML (warning, from core 0, where they are not taken
// as written).
channel_sizes sizes_of(const config::model& model, const topology::layout& topo) {
  channel_sizes sizes;
  sizes.heap_bytes =
      model.arch.buffer_size / static_cast<std::uint64_t>(model.arch.dedicated_cores);
  sizes.clients = static_cast<std::uint32_t>(topo.group_size - 1);
  // A ring holds notifications only (304 bytes each): keep at least 1024 per client so that a
  // server busy storing one iteration never stops its clients from writing the next ones while
  // the buffer has room (Damaris files often say size="100").
  sizes.ring_capacity = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(std::max<std::uint64_t>(model.arch.queue_size, 1024), 1u << 20));
  if (topo.server_index == 0) {
    if (model.arch.queue_size > sizes.ring_capacity)
      log::warning(model.file, ": <queue size=\"", model.arch.queue_size, "\"> is more than the ",
                   sizes.ring_capacity, " notifications a client's ring holds at most; using ",
                   sizes.ring_capacity);
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t heap = (sizes.heap_bytes + page - 1) / page * page;
    if (heap > sizes.heap_bytes + sizes.heap_bytes / 100)
      log::warning(model.file, ": <buffer size=\"", model.arch.buffer_size, "\"> gives ",
                   sizes.heap_bytes, " bytes per dedicated core, rounded up to ", heap,
                   " (whole pages of ", page, " bytes)");
  }
  return sizes;
}

class cores_setup : public setup {
 public:
  cores_setup(const config::model& model, const topology::layout& topo);
  std::unique_ptr<engine> make_engine() override;
  std::unique_ptr<server> make_server() override;
  const char* mode_name() const noexcept override { return name; }

 private:
  std::optional<channel> m_channel;
  // On the core: reserves the heap after start-up; on a client: maps its window as it is
  // reserved (both destroyed before the channel).
  std::unique_ptr<heap_reserver> m_heap_reserver;
  std::unique_ptr<window_mapper> m_window_mapper;
};

cores_setup::cores_setup(const config::model& model, const topology::layout& topo)
    : setup(model, topo) {
  MPI_Comm world = m_topo.world.get();
  // Agreed before any segment is created: every rank reaches the same verdict.
  agree_on(world, [&] { check_node_memory(m_model, m_topo, name, false); });
  // The name carries the creating server's process id, so that a later job on the node can
  // tell a segment left by a job that was killed (in the moment it had a name) and remove it.
  const std::string token = job_token(world);
  int creator = static_cast<int>(::getpid());
  check_mpi(MPI_Bcast(&creator, 1, MPI_INT, m_topo.group_size - 1, m_topo.group.get()),
            "MPI_Bcast");
  const std::string segment = "/sidecore-" + std::to_string(creator) + "-" + token + "-" +
                              std::to_string(m_topo.server_index);
  // 1. Servers create their segment (its data heap neither reserved nor touched yet).
  agree_on(world, [&] {
    if (!m_topo.is_server) return;
    if (const int removed = remove_stale_segments(); removed > 0)
      log::info("removed ", removed,
                " shared memory segment(s) of jobs that ended without removing them");
    m_channel.emplace(channel::create(segment, sizes_of(m_model, m_topo)));
  });
  // 2. Clients map it.
  agree_on(world, [&] {
    if (!m_topo.is_server) m_channel.emplace(channel::open(segment));
  });
  // 3. Everyone has it mapped: remove the name so nothing outlives the job, even a crash.
  m_channel->unlink();
  // 4. Only now are the data heap's pages reserved: a job killed meanwhile leaves nothing
  // behind. Start-up only checks that /dev/shm can hold the heap; the core then reserves the
  // pages on a background thread, first a window at the start of each client's stretch (where
  // its first blocks go), then the rest, and each client maps its window as it becomes ready,
  // also in the background. A write that reaches pages not reserved yet waits for them. So
  // start-up does not grow with the buffer's size, and the first write runs at memcpy speed
  // once the first compute phase has covered the work (64 MiB: about 21 ms on the core and
  // 9 ms on the client's thread here).
  const std::uint32_t clients = std::max(1u, m_channel->client_count());
  const std::uint64_t share = m_channel->heap().capacity() / clients;
  const std::uint64_t window = std::min(share, first_iteration_window(m_model));
  agree_on(world, [&] {
    if (!m_topo.is_server) return;
    // The writer's counters can be read from here on (sidecore_stats), before the core has
    // completed anything: nothing received yet, in a buffer of this size.
    protocol::live_values initial;
    initial.buffer_capacity = m_channel->heap().capacity();
    m_channel->stats().publish(initial);
    m_channel->reserve_heap(window);
  });
  // 5. Map, in each process, the segment's header, allocator state and rings (written from
  // the first call on). The core maps the data pages as its stores read them (read faults map
  // neighbouring pages in batches): a core whose stores read nothing holds none of the
  // buffer. Beyond its window, a client maps pages a step ahead of its furthest block
  // (window_mapper::map_ahead, at idle priority): resident memory follows what the run uses,
  // not the buffer's size.
  m_channel->prefault(0, m_channel->heap().stretch_of(0, 1));
  if (m_topo.is_server) {
    m_heap_reserver = std::make_unique<heap_reserver>(*m_channel);
  } else {
    const auto slot = static_cast<std::uint32_t>(m_topo.group_rank);
    m_window_mapper = std::make_unique<window_mapper>(
        *m_channel, m_channel->heap().stretch_of(slot, clients), window);
  }
}

std::unique_ptr<engine> cores_setup::make_engine() {
  // The dedicated core is the group's last rank: its rank in the job, to tell when it died.
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  int core = m_topo.group_size - 1, core_in_world = -1;
  check_mpi(MPI_Comm_group(m_topo.group.get(), &group), "MPI_Comm_group");
  check_mpi(MPI_Comm_group(m_topo.world.get(), &world), "MPI_Comm_group");
  MPI_Group_translate_ranks(group, 1, &core, world, &core_in_world);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  return std::make_unique<shm_engine>(m_model, *m_channel,
                                      static_cast<std::uint32_t>(m_topo.group_rank),
                                      m_topo.client_index, core_in_world, m_window_mapper.get());
}

std::unique_ptr<server> cores_setup::make_server() {
  return std::make_unique<server_loop>(m_model, m_topo, *m_channel);
}

void describe(const config::model& model, const topology::layout& topo,
              plugins::script_environment& env) {
  env.mode = name;
  env.is_dedicated_core = topo.is_server;
  env.servers_per_node = model.arch.dedicated_cores;
  env.clients_per_node = topo.node_size - model.arch.dedicated_cores;
}

}  // namespace

const transports::mode mode_entry = {
    name,
    [](const config::model&, const topology::layout& topo) {
      return topo.has_servers && !topo.remote_servers;
    },
    describe,
    [](const config::model& model, const topology::layout& topo) -> std::unique_ptr<setup> {
      return std::make_unique<cores_setup>(model, topo);
    },
};

}  // namespace sidecore::transports::dedicated_cores
