// Liveness from the operating system: a peer is dead when its process id no longer exists, is
// a zombie, or belongs to a process started at another time (reused). The watching thread
// sleeps on a condition variable between checks, so that stop() ends it at once.
#include "common/peer_watch.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "common/fnv1a.hpp"
#include "common/hot_path.hpp"
#include "common/job_failure.hpp"
#include "common/mpi_finalize_hook.hpp"
#include "common/mpi_handles.hpp"

namespace sidecore {
namespace {

std::atomic<peer_watch*> g_current{nullptr};

// This machine: its host name and the boot it runs (two containers of one host share a boot
// id and a process table only when they share a host name too).
std::uint64_t host_identity() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  return fnv1a(boot, fnv1a(name));
}

// Process pid's state letter and start time from /proc/<pid>/stat; false when it has none.
bool process_status(std::int64_t pid, char& state, std::uint64_t& started) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  // "pid (command) S f4 ... f22": the command may hold spaces and parentheses.
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int n = 3; n <= 22 && fields >> field; ++n) {
    if (n == 3) state = field.empty() ? '?' : field[0];
    if (n == 22) {
      started = std::strtoull(field.c_str(), nullptr, 10);
      return true;
    }
  }
  return false;
}

const char* role_name(std::int32_t role) {
  switch (role) {
    case 1:
      return "a dedicated core";
    case 2:
      return "a dedicated node's server";
    default:
      return "a client";
  }
}

// MPI_Finalize without damaris_finalize: the watch must not outlive MPI.
void stop_the_current_watch() {
  if (peer_watch* watch = g_current.load()) watch->stop();
}

// What every process needs of the others: the identities of its machine's ranks (gathered
// over the ranks that share its memory, so that no process holds a table of the whole job) and
// rank 0's, which names the job (one broadcast over comm).
struct gathered {
  int rank = 0;  // this process's, in comm
  std::vector<peer_watch::peer> machine;
  peer_watch::identity first;
};

gathered gather_identities(MPI_Comm comm, peer_watch::role mine) {
  gathered g;
  MPI_Comm_rank(comm, &g.rank);
  const peer_watch::peer self{g.rank, 0, peer_watch::identity_of(::getpid(), mine)};
  MPI_Comm shared = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, g.rank, MPI_INFO_NULL, &shared),
            "MPI_Comm_split_type");
  const communicator machine(shared);
  g.machine.resize(static_cast<std::size_t>(machine.size()));
  check_mpi(MPI_Allgather(&self, sizeof self, MPI_BYTE, g.machine.data(), sizeof self, MPI_BYTE,
                          machine.get()),
            "MPI_Allgather");
  g.first = self.who;
  check_mpi(MPI_Bcast(&g.first, sizeof g.first, MPI_BYTE, 0, comm), "MPI_Bcast");
  return g;
}

}  // namespace

peer_watch::identity peer_watch::identity_of(std::int64_t pid, role its_role) {
  identity who;
  who.host = host_identity();
  who.pid = pid;
  char state = '?';
  process_status(pid, state, who.started);
  who.role = static_cast<std::int32_t>(its_role);
  return who;
}

peer_watch::peer_watch(MPI_Comm comm, role mine, double period_seconds) : m_period(period_seconds) {
  gathered g = gather_identities(comm, mine);
  set_up(std::move(g.machine), g.rank, g.first);
}

peer_watch::peer_watch(const std::vector<identity>& peers, int rank, double period_seconds)
    : m_period(period_seconds) {
  std::vector<peer> all;
  for (std::size_t r = 0; r < peers.size(); ++r) all.push_back({static_cast<int>(r), 0, peers[r]});
  set_up(std::move(all), rank, peers.at(0));
}

void peer_watch::set_up(std::vector<peer> candidates, int rank, const identity& first) {
  // Rank 0's identity names the job (unique on its machine, the same for every process).
  char key[64];
  std::snprintf(key, sizeof key, "%016llx-%lld-%llu", static_cast<unsigned long long>(first.host),
                static_cast<long long>(first.pid), static_cast<unsigned long long>(first.started));
  job_failure::set_job_key(key);
  auto self = std::find_if(candidates.begin(), candidates.end(),
                           [rank](const peer& p) { return p.rank == rank; });
  if (self == candidates.end()) throw std::invalid_argument("peer_watch: no identity of this rank");
  const std::uint64_t host = self->who.host;
  // Only the ranks whose processes this one can see: those of its machine.
  for (const peer& p : candidates)
    if (p.who.host == host) m_machine.push_back(p);
  std::sort(m_machine.begin(), m_machine.end(),
            [](const peer& a, const peer& b) { return a.rank < b.rank; });
  // Each process watches the next rank of its machine (round the machine): every rank is
  // watched by exactly one other, so one death is noticed once, at little cost.
  if (m_machine.size() > 1) {
    const auto at = std::find_if(m_machine.begin(), m_machine.end(),
                                 [rank](const peer& p) { return p.rank == rank; });
    const auto next = std::next(at) == m_machine.end() ? m_machine.begin() : std::next(at);
    m_watched = next->rank;
  }
  // A program that calls MPI_Finalize without damaris_finalize must not keep watching.
  static const bool hooked = call_at_mpi_finalize(stop_the_current_watch);
  static_cast<void>(hooked);
  g_current.store(this);
  if (m_watched >= 0 && m_period > 0) m_thread = std::thread([this] { run(); });
}

peer_watch::~peer_watch() {
  stop();
  peer_watch* self = this;
  g_current.compare_exchange_strong(self, nullptr);
}

SIDECORE_HOT_PATH peer_watch* peer_watch::current() noexcept { return g_current.load(); }

void peer_watch::stop() noexcept {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable() && m_thread.get_id() != std::this_thread::get_id()) m_thread.join();
}

void peer_watch::run() {
  const auto period = std::chrono::duration<double>(m_period);
  std::unique_lock<std::mutex> lock(m_mutex);
  while (!m_wake.wait_for(lock, period, [this] { return m_stopping; })) {
    lock.unlock();
    const bool dead = state_of(m_watched) == state::dead;
    lock.lock();
    // Stopped meanwhile: the peer may have left the job normally.
    if (dead && !m_stopping) {
      lock.unlock();
      job_failure::end_job(death_of(m_watched));
    }
  }
}

SIDECORE_HOT_PATH const peer_watch::identity* peer_watch::on_this_machine(int rank) const noexcept {
  const auto at = std::lower_bound(m_machine.begin(), m_machine.end(), rank,
                                   [](const peer& p, int r) { return p.rank < r; });
  return at != m_machine.end() && at->rank == rank ? &at->who : nullptr;
}

peer_watch::state peer_watch::state_of(int rank) const noexcept {
  const identity* found = on_this_machine(rank);
  if (found == nullptr) return state::elsewhere;
  const identity& p = *found;
  if (::kill(static_cast<pid_t>(p.pid), 0) != 0 && errno == ESRCH) return state::dead;
  char status = '?';
  std::uint64_t started = 0;
  try {
    if (!process_status(p.pid, status, started)) return state::alive;  // no /proc: kill() said
  } catch (...) {
    return state::alive;
  }
  if (status == 'Z' || status == 'X') return state::dead;
  if (p.started != 0 && started != p.started) return state::dead;  // the pid was reused
  return state::alive;
}

SIDECORE_HOT_PATH bool peer_watch::gone(int rank) const noexcept {
  const identity* p = on_this_machine(rank);
  if (p == nullptr) return false;
  return ::kill(static_cast<pid_t>(p->pid), 0) != 0 && errno == ESRCH;
}

std::string peer_watch::name_of(int rank) const {
  const identity* found = on_this_machine(rank);
  if (found == nullptr) return "rank " + std::to_string(rank) + " (on another machine)";
  const identity& p = *found;
  return "rank " + std::to_string(rank) + " (pid " + std::to_string(p.pid) + ", " +
         role_name(p.role) + ")";
}

std::string peer_watch::death_of(int rank) const {
  return name_of(rank) + " has died (killed, crashed, or ended without damaris_finalize)";
}

}  // namespace sidecore
