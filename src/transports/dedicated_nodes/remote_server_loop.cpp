// Dedicated-node loop. Announcements are small eager messages; block data is received only
// once the server decides to pull it, which is what throttles a fast client when the server
// falls behind (its sends stay pending and its buffer fills up).
#include "transports/dedicated_nodes/remote_server_loop.hpp"

#include <cstring>
#include <memory>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "common/waiting.hpp"
#include "protocol/notifications.hpp"
#include "transports/dedicated_nodes/mpi_sender.hpp"

namespace sidecore::transports {
namespace {
// Marks, in a queued announcement, a malformed block whose data is to be received and dropped.
constexpr std::uint32_t discard_data = 1u << 31;

// Whether data follows the announcement (a block, or blocks packed together).
bool carries_data(const protocol::message& m) {
  return m.kind == protocol::message_kind::block || m.kind == protocol::message_kind::packed_blocks;
}
}  // namespace

remote_server_loop::remote_server_loop(const config::model& model, const topology::layout& topo,
                                       MPI_Comm link)
    : m_model(model),
      m_link(link),
      m_processor(model, topo.servers.get(), static_cast<int>(topo.served_client_ranks.size()),
                  nullptr),
      m_events(model, topo.servers.get(), static_cast<int>(topo.served_client_ranks.size())),
      m_budget(model.arch.buffer_size) {
  m_clients.resize(topo.served_client_ranks.size());
  // Clients are the first ranks of the job, in order: a client's index is its rank.
  m_processor.name_clients(topo.served_client_ranks);
  m_processor.publish_to(&m_stats);
  m_processor.watch_buffer([this] {
    storing::buffer_use use;
    use.used = m_in_use;
    use.peak = m_high_water;
    use.capacity = m_budget;
    return use;
  });
  for (std::uint32_t slot = 0; slot < m_clients.size(); ++slot) {
    m_clients[slot].rank = topo.served_client_ranks[slot];
    m_slot_of_rank[m_clients[slot].rank] = slot;
  }
  const config::schedule_settings& schedule = model.arch.schedule;
  m_phases.reset(new protocol::client_phase[m_clients.size()]);
  if (schedule.uses(config::schedule_policy::phase) ||
      schedule.uses(config::schedule_policy::self)) {
    m_pull_by_phase = true;
    std::vector<const protocol::client_phase*> phases;
    for (std::size_t slot = 0; slot < m_clients.size(); ++slot) phases.push_back(&m_phases[slot]);
    // A store that waits for the clients to compute runs inside this loop: the marks, syncs
    // and stops they send meanwhile are read as it waits (only read and queued: blocks are
    // pulled and iterations ended once the store has run).
    m_processor.watch_phases(std::move(phases), [this] { receive_announcements(); });
  }
  if (!schedule.trace.empty()) {
    int writer = 0;
    MPI_Comm_rank(topo.servers.get(), &writer);
    const std::string path = schedule.trace + "." + std::to_string(writer) + ".pulls.csv";
    m_pull_trace = std::fopen(path.c_str(), "w");
    if (m_pull_trace) {
      std::fputs("client,iteration,bytes,posted,phase\n", m_pull_trace);
    } else {
      log::warning(model.file, ":", schedule.line, ": cannot write the pull trace \"", path,
                   "\"; pulling without it");
    }
  }
  try {
    m_ghosts = config::evaluate_ghosts(model);
  } catch (const std::exception& e) {
    log::warning("ghost zones cannot be evaluated (", e.what(),
                 "); blocks' interiors are not checked");
  }
}

std::string remote_server_loop::problem_of(std::uint32_t slot, const protocol::message& m) const {
  const client_state& c = m_clients[slot];
  protocol::message_limits limits;
  limits.model = &m_model;
  limits.ghosts = &m_ghosts;
  // Clients are the first ranks of the job, in order: a client's index is its rank.
  limits.source = c.rank;
  limits.ended = c.ended;
  limits.closed = m_processor.open_iteration();
  limits.sync_allowed = true;
  limits.packed_limit = most_packed_bytes;
  return protocol::message_problem(m, limits);
}

void remote_server_loop::reject(std::uint32_t slot, const protocol::message& m,
                                const std::string& problem) {
  client_state& c = m_clients[slot];
  ++c.rejected;
  ++m_rejected_total;
  // Its iteration, when the message names a plausible one, or the one the client is in, is
  // stored as incomplete. Its data, if any, is never received.
  const bool plausible =
      m.iteration >= c.ended && m.iteration <= c.ended + protocol::max_iterations_unended;
  c.tainted.insert(plausible ? m.iteration : static_cast<std::int32_t>(c.ended));
  publish_failures();
  if (c.rejected == 1)
    log::error("dropped a malformed notification from client ", c.rank, ", iteration ", m.iteration,
               ", ", protocol::kind_name(m.kind), ": ", problem,
               "; the iteration will be stored as incomplete (further bad notifications from "
               "this client are counted, not logged)");
}

remote_server_loop::~remote_server_loop() {
  if (m_pull_trace) std::fclose(m_pull_trace);
  // Reports are small (sent eagerly): those a client never received are let go.
  for (auto& report : m_reports)
    if (report.second != MPI_REQUEST_NULL) MPI_Request_free(&report.second);
}

void remote_server_loop::publish_failures() {
  const std::uint64_t failures = m_processor.counters().store_failures + m_rejected_total;
  if (failures == m_published_failures) return;
  m_published_failures = failures;
  if (m_first_failure.empty()) {
    const std::string& store_failure = m_processor.pending_failure();
    m_first_failure = store_failure.empty() ? "dropped a malformed notification (see its log)"
                                            : "could not store: " + store_failure;
  }
  // Reports already delivered free their slot.
  while (!m_reports.empty()) {
    int done = 0;
    check_mpi(MPI_Test(&m_reports.front().second, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!done) break;
    m_reports.pop_front();
  }
  for (const client_state& c : m_clients) {
    if (c.stopped) continue;
    auto report = std::make_unique<failure_report>();
    report->failures = static_cast<std::uint32_t>(failures);
    const std::size_t n = std::min(m_first_failure.size(), sizeof report->first - 1);
    m_first_failure.copy(report->first, n);
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(
        MPI_Isend(report.get(), sizeof *report, MPI_BYTE, c.rank, failure_tag, m_link, &request),
        "MPI_Isend");
    m_reports.emplace_back(std::move(report), request);
  }
}

// A client that computes, waits for this server, has stopped or never marked a phase does
// not hold a pull back; one that communicates does.
bool remote_server_loop::may_pull(std::uint32_t slot) const noexcept {
  if (!m_pull_by_phase) return true;
  return m_phases[slot].current.load(std::memory_order_relaxed) != protocol::client_phase::other;
}

void remote_server_loop::trace_pull(std::uint32_t slot, const protocol::message& m) {
  if (!m_pull_trace) return;
  std::fprintf(m_pull_trace, "%d,%d,%llu,%.6f,%u\n", m_clients[slot].rank, m.iteration,
               static_cast<unsigned long long>(m.bytes),
               1e-9 * static_cast<double>(protocol::client_phase::now_ns()),
               m_phases[slot].current.load(std::memory_order_relaxed));
  std::fflush(m_pull_trace);
}

bool remote_server_loop::finished() const {
  for (const client_state& c : m_clients)
    if (!c.stopped || !c.queue.empty() || c.request != MPI_REQUEST_NULL) return false;
  return true;
}

void remote_server_loop::run() {
  // A second run (damaris_start again after the clients stopped) waits for them to stop again.
  for (client_state& c : m_clients) c.stopped = false;
  // Clients of different node servers may stop at different times.
  m_processor.agree_before_storing(true);
  waiter idle(paces::node_idle);
  while (!finished()) {
    bool progress = receive_announcements();
    for (std::uint32_t slot = 0; slot < m_clients.size(); ++slot)
      progress = advance(slot) || progress;
    if (m_events.has_bcast()) progress = m_events.poll() || progress;
    publish_failures();
    if (progress)
      idle.moved();
    else
      idle.nap();
  }
  m_processor.take_part_until_all_stopped();
  m_events.finish();
  std::uint64_t before = m_processor.counters().bytes_stored;
  m_processor.finish();
  account_stored(before);
  answer_syncs();
}

bool remote_server_loop::receive_announcements() {
  bool any = false;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, announce_tag, m_link, &flag, &status), "MPI_Iprobe");
    if (!flag) return any;
    protocol::message m;
    check_mpi(MPI_Recv(&m, sizeof m, MPI_BYTE, status.MPI_SOURCE, announce_tag, m_link,
                       MPI_STATUS_IGNORE),
              "MPI_Recv");
    auto it = m_slot_of_rank.find(status.MPI_SOURCE);
    if (it == m_slot_of_rank.end()) {
      log::error("message from rank ", status.MPI_SOURCE,
                 ", which is not a client of this server (ignored)");
      continue;
    }
    if (const std::string problem = problem_of(it->second, m); !problem.empty()) {
      reject(it->second, m, problem);
      // The client sends a block's data after announcing it: received, in turn, and dropped,
      // so that its send completes and its buffer empties.
      if (carries_data(m)) {
        m.flags |= discard_data;
        m_clients[it->second].queue.push_back(m);
      }
    } else if (m.kind == protocol::message_kind::sync) {
      // The client waits for this server: nothing of it is held back meanwhile.
      m_phases[it->second].current.store(protocol::client_phase::blocked,
                                         std::memory_order_relaxed);
      m_sync_requests.emplace_back(status.MPI_SOURCE, m.iteration);
      answer_syncs();
    } else if (m.kind == protocol::message_kind::phase) {
      m_phases[it->second].enter(static_cast<protocol::client_phase::state>(m.flags));
    } else {
      if (m.kind == protocol::message_kind::stop)
        m_phases[it->second].enter(protocol::client_phase::stopped);
      m_clients[it->second].queue.push_back(m);
    }
    any = true;
  }
}

bool remote_server_loop::advance(std::uint32_t slot) {
  client_state& c = m_clients[slot];
  bool any = false;
  for (;;) {
    if (c.request != MPI_REQUEST_NULL) {
      int done = 0;
      check_mpi(MPI_Test(&c.request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (!done) return any;
      const protocol::message& m = c.queue.front();
      if (m.kind == protocol::message_kind::packed_blocks) {
        unpack(slot, m, std::move(c.buffer));
      } else {
        storing::stored_block b = storing::stored_block_from(m, c.buffer.get());
        b.owned = std::move(c.buffer);
        m_processor.add_block(std::move(b));
      }
      c.queue.pop_front();
      any = true;
    }
    if (c.queue.empty()) return any;
    const protocol::message& m = c.queue.front();
    if (!carries_data(m)) {
      handle_control(slot, m);
      c.queue.pop_front();
      any = true;
      continue;
    }
    if (m.flags & discard_data) {
      // A malformed block's data: whatever size it has, received and dropped.
      MPI_Status status;
      check_mpi(MPI_Probe(c.rank, data_tag, m_link, &status), "MPI_Probe");
      int count = 0;
      check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
      std::vector<std::byte> sink(static_cast<std::size_t>(std::max(count, 0)));
      check_mpi(MPI_Recv(sink.data(), count, MPI_BYTE, c.rank, data_tag, m_link, MPI_STATUS_IGNORE),
                "MPI_Recv");
      c.queue.pop_front();
      any = true;
      continue;
    }
    // Pull only with room, except for the oldest iteration still open (always progress), and
    // only while the schedule allows it.
    const bool oldest = m.iteration <= m_processor.stored_iterations();
    if (m_in_use + m.bytes > m_budget && !oldest) return any;
    if (!may_pull(slot)) return any;
    trace_pull(slot, m);
    c.buffer = buffer_pool::acquire(m.bytes);
    m_in_use += m.bytes;
    m_high_water = std::max(m_high_water, m_in_use);
    check_mpi(MPI_Irecv(c.buffer.get(), static_cast<int>(m.bytes), MPI_BYTE, c.rank, data_tag,
                        m_link, &c.request),
              "MPI_Irecv");
    any = true;
  }
}

void remote_server_loop::unpack(std::uint32_t slot, const protocol::message& m,
                                block_buffer group) {
  const std::byte* base = group.get();
  // Every block keeps the group's memory alive; it is freed with the last of them.
  const std::shared_ptr<const void> keep(std::shared_ptr<std::byte[]>(std::move(group)));
  std::uint64_t at = 0, data_bytes = 0;
  for (std::uint32_t k = 0; k < m.flags; ++k) {
    protocol::message block;
    std::string problem;
    const protocol::message* named = &m;  // what a rejection names: the group, or its block
    if (at + sizeof block > m.bytes) {
      problem = "packed block " + std::to_string(k + 1) + " of " + std::to_string(m.flags) +
                " begins past the group's " + std::to_string(m.bytes) + " bytes";
    } else {
      std::memcpy(&block, base + at, sizeof block);
      if (block.kind != protocol::message_kind::block)
        problem = "a packed " + protocol::kind_name(block.kind) + " (valid: blocks only)";
      else if (block.bytes > m.bytes - at - sizeof block)
        problem = "packed block " + std::to_string(k + 1) + " of " + std::to_string(m.flags) +
                  " has " + std::to_string(block.bytes) + " bytes, past the group's end";
      else if (problem = problem_of(slot, block); !problem.empty())
        named = &block;
    }
    if (!problem.empty()) {
      // The rest of the group cannot be trusted: it is dropped with its iteration.
      reject(slot, *named, problem);
      break;
    }
    storing::stored_block b = storing::stored_block_from(block, base + at + sizeof block);
    b.keep_alive = keep;
    m_processor.add_block(std::move(b));
    data_bytes += block.bytes;
    at = protocol::next_packed_entry(at, block.bytes);
  }
  // The buffer counts the blocks' data until they are stored (account_stored): the group's
  // notifications, padding and anything dropped are given back now.
  m_in_use -= std::min(m_in_use, m.bytes - data_bytes);
}

void remote_server_loop::handle_control(std::uint32_t slot, const protocol::message& m) {
  switch (m.kind) {
    case protocol::message_kind::end_iteration: {
      std::uint64_t before = m_processor.counters().bytes_stored;
      client_state& c = m_clients[slot];
      const bool dropped = c.tainted.erase(m.iteration) > 0;
      c.ended = std::int64_t{m.iteration} + 1;
      m_processor.end_iteration(static_cast<int>(slot), m.iteration,
                                (m.flags & protocol::iteration_skipped) != 0 || dropped, m.bytes);
      account_stored(before);
      publish_failures();
      answer_syncs();
      break;
    }
    case protocol::message_kind::signal:
      m_events.signal(m.variable, m.source, m.iteration);
      break;
    case protocol::message_kind::stop: {
      // It ends nothing more: the others' iterations are stored without waiting for it
      // (those it left out marked incomplete), and their syncs are answered.
      client_state& c = m_clients[slot];
      c.stopped = true;
      std::uint64_t before = m_processor.counters().bytes_stored;
      m_processor.source_stopped(static_cast<int>(slot), static_cast<int>(c.ended));
      account_stored(before);
      answer_syncs();
      break;
    }
    default:
      log::error("unexpected message kind ", static_cast<unsigned>(m.kind), " (ignored)");
  }
}

void remote_server_loop::account_stored(std::uint64_t stored_before) {
  m_in_use -= std::min(m_in_use, m_processor.counters().bytes_stored - stored_before);
}

void remote_server_loop::answer_syncs() {
  const std::int32_t stored = m_processor.stored_iterations();
  for (auto it = m_sync_requests.begin(); it != m_sync_requests.end();) {
    if (it->second <= stored) {
      check_mpi(MPI_Send(&stored, 1, MPI_INT32_T, it->first, sync_tag, m_link), "MPI_Send");
      it = m_sync_requests.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace sidecore::transports
