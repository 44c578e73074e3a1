// Segment layout: [header][heap state + free ranges][ring 0]...[ring n-1][heap], each part
// aligned to 4 KiB. Rings use acquire/release indices; the futex word wakes a sleeping server.
#include "transports/dedicated_cores/channel.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/hot_path.hpp"

namespace sidecore::transports {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "needs lock-free 64-bit atomics");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "needs lock-free 32-bit atomics");

namespace {
constexpr std::uint64_t magic_value = 0x5349444543524531ull;  // "SIDECRE1"
constexpr std::uint32_t layout_version = 13;
constexpr std::size_t failure_text_bytes = 1024;
constexpr std::uint32_t heap_extents = 1u << 16;
constexpr std::uint64_t page = 4096;
// Heap reservation progress (header::reserve_progress): MiB reserved from the heap's start, or one
// of these two.
constexpr std::uint32_t all_reserved = UINT32_MAX;
constexpr std::uint32_t reservation_failed = UINT32_MAX - 1;
constexpr std::uint64_t mib = 1u << 20;

std::uint64_t page_round(std::uint64_t n) { return (n + page - 1) / page * page; }

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value, const timespec* timeout) {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr,
                   0);
}

// The copies the reservation of the rest of the heap waits for: each client's copy in progress
// (an odd count of channel::begin_copy/end_copy), from when it was first seen, for at most
// `patience`.
class copy_watch {
 public:
  copy_watch(std::uint32_t clients, std::chrono::milliseconds patience) noexcept
      : m_patience(patience) {
    try {
      m_seen.resize(clients);
    } catch (...) {
      m_seen.clear();  // no memory: the reservation waits for nobody
    }
  }
  bool waits_for(std::uint32_t client, std::uint32_t count,
                 std::chrono::steady_clock::time_point now) noexcept {
    if ((count & 1) == 0 || client >= m_seen.size()) return false;
    seen& s = m_seen[client];
    if (s.count != count) {
      s.count = count;
      s.since = now;
    }
    return now - s.since < m_patience;
  }

 private:
  struct seen {
    std::uint32_t count = 0;
    std::chrono::steady_clock::time_point since{};
  };
  std::chrono::milliseconds m_patience;
  std::vector<seen> m_seen;
};

}  // namespace

// A count the server raises and clients wait on (futex on the value).
struct channel::published_count {
  std::atomic<std::uint32_t> value;
  std::atomic<std::uint32_t> waiters;

  void publish(std::uint32_t count) noexcept {
    value.store(count, std::memory_order_seq_cst);
    if (waiters.load(std::memory_order_seq_cst)) futex(&value, FUTEX_WAKE, INT32_MAX, nullptr);
  }

  bool wait_for(std::uint32_t target, double timeout_seconds) noexcept {
    if (value.load(std::memory_order_acquire) >= target) return true;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    waiters.fetch_add(1, std::memory_order_seq_cst);
    bool done = false;
    for (;;) {
      const std::uint32_t now = value.load(std::memory_order_seq_cst);
      if (now >= target) {
        done = true;
        break;
      }
      long slice_ns = 50 * 1000000L;  // re-check the deadline regularly
      if (timeout_seconds > 0) {
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) break;
        slice_ns = std::min<long>(
            slice_ns, std::chrono::duration_cast<std::chrono::nanoseconds>(left).count() + 1);
      }
      timespec slice{0, slice_ns};
      futex(&value, FUTEX_WAIT, now, &slice);
    }
    waiters.fetch_sub(1, std::memory_order_seq_cst);
    return done;
  }
};

struct channel::header {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t clients;
  std::uint64_t segment_bytes;
  std::uint64_t heap_state_offset;
  std::uint64_t rings_offset;
  std::uint64_t ring_stride;
  std::uint32_t ring_capacity;
  alignas(64) std::atomic<std::uint32_t> wake_word;
  std::atomic<std::uint32_t> server_sleeping;
  alignas(64) published_count stored;  // iterations stored (damaris_sync)
  // Raised when a ring frees a slot or a client ends an iteration, while clients wait for that.
  alignas(64) std::atomic<std::uint32_t> progress;
  std::atomic<std::uint32_t> progress_waiters;
  // Store failures of the server, and the first one's message (written before the count
  // leaves 0, read after it did).
  alignas(64) std::atomic<std::uint64_t> heartbeat;
  alignas(64) std::atomic<std::uint32_t> store_failures;
  char first_failure[failure_text_bytes];
  // Reservation of the heap's pages (reserve_heap, reserve_heap_rest): the clients' windows
  // (the first window_bytes of each stretch), one reserve_step of each window in turn, then
  // the rest in order from the heap's start. reserve_progress counts what is done in that
  // order: one per window step, then one per MiB from the heap's start (all_reserved when
  // complete; reservation_failed when it stopped, with the error number and the count
  // reached below).
  std::uint64_t window_bytes;
  std::atomic<std::int32_t> reserve_errno;
  std::uint32_t failed_at;
  std::atomic<std::uint64_t> reserved_bytes;  // for messages: bytes reserved so far
  alignas(64) published_count reserve_progress;
  // The server's live counters (sidecore_stats reads them on the clients).
  alignas(64) protocol::live_stats stats;
};

struct channel::ring {
  alignas(64) std::atomic<std::uint64_t> head;  // next slot to read (consumer)
  alignas(64) std::atomic<std::uint64_t> tail;  // next slot to write (producer)
  std::atomic<std::uint32_t> copies;            // odd while a copy runs (producer; begin_copy)
  // The head as the producer last read it (producer only): slots before it are free. The head
  // line is written by the consumer at every pop, and reading it costs the producer a transfer
  // between cores; it is read again only when this value says the ring is (half) full.
  std::uint64_t head_seen;
  alignas(64) std::atomic<std::uint32_t> ended;  // iterations the client ended (producer)
  alignas(64) protocol::client_phase phase;      // what the client does (producer)
};

channel::channel(shared_segment segment)
    : m_segment(std::move(segment)),
      m_heap(m_segment.base() + reinterpret_cast<header*>(m_segment.base())->heap_state_offset) {}

channel channel::create(const std::string& name, const channel_sizes& sizes) {
  if (sizes.clients == 0 || sizes.ring_capacity == 0)
    throw allocation_error(
        "a channel needs at least one client and a ring of at least one message");
  const std::uint64_t header_bytes = page_round(sizeof(header));
  const std::uint64_t state_bytes = page_round(memory::shared_heap::state_bytes(heap_extents));
  const std::uint64_t ring_stride =
      (sizeof(ring) + std::uint64_t(sizes.ring_capacity) * sizeof(protocol::message) + 63) / 64 *
      64;
  const std::uint64_t rings_bytes = page_round(ring_stride * sizes.clients);
  const std::uint64_t heap_offset = header_bytes + state_bytes + rings_bytes;
  const std::uint64_t heap_bytes = page_round(sizes.heap_bytes);
  // The header, allocator state and rings are reserved now (they are written at once); the data
  // heap once the name is gone (prepare_heap()).
  shared_segment segment = shared_segment::create(name, heap_offset + heap_bytes, heap_offset);

  auto* h = new (segment.base()) header{};
  h->magic = magic_value;
  h->version = layout_version;
  h->clients = sizes.clients;
  h->segment_bytes = segment.size();
  h->heap_state_offset = header_bytes;
  h->rings_offset = header_bytes + state_bytes;
  h->ring_stride = ring_stride;
  h->ring_capacity = sizes.ring_capacity;
  // Until reserve_heap() starts reserving in steps, the heap counts as reserved (its pages are
  // allocated on first touch, as for any shared memory).
  h->reserve_progress.value.store(all_reserved, std::memory_order_relaxed);
  memory::shared_heap::initialize(segment.base() + header_bytes, heap_offset, heap_bytes,
                                  heap_extents);
  for (std::uint32_t c = 0; c < sizes.clients; ++c)
    new (segment.base() + h->rings_offset + c * ring_stride) ring{};
  return channel(std::move(segment));
}

channel channel::open(const std::string& name) {
  shared_segment segment = shared_segment::open(name);
  auto* h = reinterpret_cast<header*>(segment.base());
  if (segment.size() < sizeof(header) || h->magic != magic_value || h->version != layout_version)
    throw allocation_error("shared memory '" + name +
                           "' is not a Sidecore segment of this version (stale or foreign)");
  return channel(std::move(segment));
}

std::uint32_t channel::client_count() const noexcept { return head()->clients; }
protocol::live_stats& channel::stats() noexcept { return head()->stats; }
std::uint32_t channel::ring_capacity() const noexcept { return head()->ring_capacity; }

protocol::client_phase& channel::phase_of(std::uint32_t client) noexcept {
  return ring_of(client)->phase;
}

channel::ring* channel::ring_of(std::uint32_t client) const noexcept {
  header* h = head();
  return reinterpret_cast<ring*>(m_segment.base() + h->rings_offset + client * h->ring_stride);
}

protocol::message* channel::slots_of(ring* r) const noexcept {
  return reinterpret_cast<protocol::message*>(r + 1);
}

SIDECORE_HOT_PATH bool channel::try_push(std::uint32_t client, const protocol::message& m,
                                         std::uint32_t keep_free) noexcept {
  ring* r = ring_of(client);
  const std::uint64_t write = r->tail.load(std::memory_order_relaxed);
  const std::uint32_t capacity = head()->ring_capacity;
  if (write - r->head_seen + keep_free >= capacity) {
    r->head_seen = r->head.load(std::memory_order_acquire);
    if (write - r->head_seen + keep_free >= capacity) return false;
  }
  std::memcpy(&slots_of(r)[write % capacity], &m, sizeof(protocol::message));
  r->tail.store(write + 1, std::memory_order_release);
  return true;
}

SIDECORE_HOT_PATH void channel::begin_copy(std::uint32_t client) noexcept {
  std::atomic<std::uint32_t>& copies = ring_of(client)->copies;
  const std::uint32_t now = copies.load(std::memory_order_relaxed);
  if ((now & 1) == 0) copies.store(now + 1, std::memory_order_release);
}

SIDECORE_HOT_PATH void channel::end_copy(std::uint32_t client) noexcept {
  std::atomic<std::uint32_t>& copies = ring_of(client)->copies;
  const std::uint32_t now = copies.load(std::memory_order_relaxed);
  if ((now & 1) != 0) copies.store(now + 1, std::memory_order_release);
}

SIDECORE_HOT_PATH bool channel::half_full(std::uint32_t client) noexcept {
  ring* r = ring_of(client);
  const std::uint64_t write = r->tail.load(std::memory_order_relaxed);
  const std::uint32_t capacity = head()->ring_capacity;
  if ((write - r->head_seen) * 2 < capacity) return false;
  r->head_seen = r->head.load(std::memory_order_acquire);
  return (write - r->head_seen) * 2 >= capacity;
}

std::uint64_t channel::pending(std::uint32_t client) const noexcept {
  ring* r = ring_of(client);
  return r->tail.load(std::memory_order_relaxed) - r->head.load(std::memory_order_relaxed);
}

bool channel::try_pop(std::uint32_t client, protocol::message& out) noexcept {
  ring* r = ring_of(client);
  const std::uint64_t read = r->head.load(std::memory_order_relaxed);
  const std::uint64_t write = r->tail.load(std::memory_order_acquire);
  if (read == write) return false;
  std::memcpy(&out, &slots_of(r)[read % head()->ring_capacity], sizeof(protocol::message));
  r->head.store(read + 1, std::memory_order_release);
  note_progress();
  return true;
}

SIDECORE_HOT_PATH void channel::wake_server() noexcept {
  header* h = head();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (h->server_sleeping.load(std::memory_order_seq_cst)) {
    h->wake_word.fetch_add(1, std::memory_order_seq_cst);
    futex(&h->wake_word, FUTEX_WAKE, 1, nullptr);
  }
}

std::uint32_t channel::prepare_sleep() noexcept {
  header* h = head();
  h->server_sleeping.store(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return h->wake_word.load(std::memory_order_seq_cst);
}

void channel::sleep(std::uint32_t token, int timeout_ms) noexcept {
  if (timeout_ms < 0) timeout_ms = 0;
  timespec timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  futex(&head()->wake_word, FUTEX_WAIT, token, &timeout);
}

void channel::beat() noexcept { head()->heartbeat.fetch_add(1, std::memory_order_relaxed); }

std::uint64_t channel::heartbeat() const noexcept {
  return head()->heartbeat.load(std::memory_order_relaxed);
}

void channel::publish_stored(std::uint32_t iterations) noexcept {
  head()->stored.publish(iterations);
}

bool channel::wait_stored(std::uint32_t iterations, double timeout_seconds) noexcept {
  return head()->stored.wait_for(iterations, timeout_seconds);
}

void channel::publish_store_failures(std::uint32_t failures, const std::string& message) noexcept {
  header* h = head();
  if (h->store_failures.load(std::memory_order_relaxed) == 0) {
    const std::size_t n = std::min(message.size(), failure_text_bytes - 1);
    std::memcpy(h->first_failure, message.data(), n);
    h->first_failure[n] = '\0';
  }
  h->store_failures.store(failures, std::memory_order_release);
}

std::uint32_t channel::store_failures() const noexcept {
  return head()->store_failures.load(std::memory_order_acquire);
}

std::string channel::first_store_failure() const {
  const header* h = head();
  if (h->store_failures.load(std::memory_order_acquire) == 0) return {};
  return std::string(h->first_failure, strnlen(h->first_failure, failure_text_bytes));
}

void channel::publish_ended(std::uint32_t client, std::uint32_t iterations) noexcept {
  ring_of(client)->ended.store(iterations, std::memory_order_release);
  note_progress();
}

// The waker changes the condition, then (fence) looks for waiters; a waiter registers, then
// reads the progress word, then checks the condition, then sleeps on that word's value. Either
// the waker sees the waiter and raises the word (the sleep returns at once or is woken), or the
// waiter's check sees the change: no wake-up is lost.
SIDECORE_HOT_PATH void channel::note_progress() noexcept {
  header* h = head();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (h->progress_waiters.load(std::memory_order_relaxed) == 0) return;
  h->progress.fetch_add(1, std::memory_order_seq_cst);
  futex(&h->progress, FUTEX_WAKE, INT32_MAX, nullptr);
}

template <typename Ready>
bool channel::wait_for_progress(Ready ready, double timeout_seconds) noexcept {
  if (ready()) return true;
  header* h = head();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  h->progress_waiters.fetch_add(1, std::memory_order_seq_cst);
  bool done = false;
  for (;;) {
    const std::uint32_t seen = h->progress.load(std::memory_order_seq_cst);
    if (ready()) {
      done = true;
      break;
    }
    timespec slice{1, 0};  // a bound on each sleep, so that the deadline is honoured
    if (timeout_seconds > 0) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) break;
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      if (ns < 1000000000L) slice = {0, static_cast<long>(ns)};
    }
    futex(&h->progress, FUTEX_WAIT, seen, &slice);
  }
  h->progress_waiters.fetch_sub(1, std::memory_order_seq_cst);
  return done;
}

bool channel::wait_for_room(std::uint32_t client, double timeout_seconds) noexcept {
  ring* r = ring_of(client);
  const std::uint32_t capacity = head()->ring_capacity;
  return wait_for_progress(
      [&] {
        return r->tail.load(std::memory_order_relaxed) - r->head.load(std::memory_order_acquire) <
               capacity;
      },
      timeout_seconds);
}

bool channel::wait_for_slowest(std::uint32_t iterations, double timeout_seconds) noexcept {
  return wait_for_progress([&] { return slowest_ended() >= iterations; }, timeout_seconds);
}

SIDECORE_HOT_PATH std::uint32_t channel::slowest_ended() const noexcept {
  std::uint32_t slowest = UINT32_MAX;
  for (std::uint32_t c = 0; c < client_count(); ++c)
    slowest = std::min(slowest, ring_of(c)->ended.load(std::memory_order_acquire));
  return slowest;
}

void channel::end_sleep() noexcept { head()->server_sleeping.store(0, std::memory_order_relaxed); }

std::uint64_t channel::window_steps() const noexcept {
  return (head()->window_bytes + reserve_step - 1) / reserve_step;
}

void channel::reserve_heap(std::uint64_t window) {
  header* h = head();
  const std::uint64_t base = m_heap.stretch_of(0, 1);
  const std::uint64_t size = m_heap.capacity();
  const std::uint32_t clients = std::max(1u, h->clients);
  // Check now that /dev/shm can hold the whole heap, so that a buffer too large fails at
  // start-up with this message rather than later, half reserved.
  const std::uint64_t free = m_segment.free_space();
  if (free < size)
    throw allocation_error(
        "cannot reserve " + std::to_string(size) + " bytes of shared memory in '" + "/dev/shm" +
        m_segment.name() + "': only " + std::to_string(free) +
        " bytes are free there (is /dev/shm large enough? lower <buffer size=...>)");
  h->window_bytes = std::min(window, m_heap.stretch_of(1, clients) - base);
  h->reserve_progress.value.store(0, std::memory_order_release);
}

std::string channel::reserve_heap_rest(const std::atomic<bool>& stop,
                                       std::chrono::milliseconds patience) noexcept {
  header* h = head();
  if (reserved_fully()) return "";
  const std::uint64_t base = m_heap.stretch_of(0, 1);
  const std::uint64_t size = m_heap.capacity();
  const std::uint32_t clients = std::max(1u, h->clients);
  const std::uint64_t window = h->window_bytes;
  const std::uint64_t windows_done = window_steps() * clients;  // progress after phase 1
  std::uint32_t reached = 0;                                    // progress published so far
  // Reserves [from, to) in steps of `step`, publishing `count(end of the step)` after each and
  // calling before() before each.
  auto reserve_range = [&](std::uint64_t from, std::uint64_t to, std::uint64_t step_bytes,
                           auto count, auto before) {
    for (std::uint64_t at = from; at < to;) {
      before();
      const std::uint64_t step = std::min(step_bytes, to - at);
      const int err =
          stop.load(std::memory_order_relaxed) ? ECANCELED : m_segment.try_reserve(at, step);
      if (err != 0) {
        h->failed_at = reached;
        h->reserve_errno.store(err, std::memory_order_relaxed);
        h->reserve_progress.publish(reservation_failed);
        return false;
      }
      at += step;
      h->reserved_bytes.fetch_add(step, std::memory_order_relaxed);
      reached = count(at);
      h->reserve_progress.publish(reached);
      // This thread shares the core's processor with its main thread: a main thread that
      // yielded it while waiting in a collective step of start-up (MPI's progress loop does)
      // gets it back after a step rather than a time slice (start-up 9.6 -> 7.2 ms here).
      std::this_thread::yield();
    }
    return true;
  };
  bool ok = true;
  // 1. The windows, a step of each in turn: what the first iterations write, the start of
  // every client's window early, however many clients share the core.
  for (std::uint64_t k = 0; ok && k < window_steps(); ++k)
    for (std::uint32_t slot = 0; ok && slot < clients; ++slot) {
      const std::uint64_t stretch = m_heap.stretch_of(slot, clients);
      const std::uint64_t from = stretch + k * reserve_step;
      ok = reserve_range(
          from, std::min(stretch + window, from + reserve_step), reserve_step,
          [&](std::uint64_t) { return static_cast<std::uint32_t>(k * clients + slot + 1); }, [] {});
    }
  // 2. The rest from the heap's start, around the windows (which clients may be writing), a
  // MiB at a time, each after the copies running then: writing zeros beside a client's copy
  // took the memory bandwidth it needed (a first 64 MiB write 40 ms after start-up took 1.3
  // times the next ones on a 2-core node). Not while a client waits for these pages, and not
  // for more than `patience` per copy.
  copy_watch watch(clients, patience);
  auto after_copies = [&] {
    for (;;) {
      if (stop.load(std::memory_order_relaxed) ||
          h->reserve_progress.waiters.load(std::memory_order_acquire) > 0)
        return;
      const auto now = std::chrono::steady_clock::now();
      bool copying = false;
      for (std::uint32_t c = 0; c < clients; ++c)
        copying =
            watch.waits_for(c, ring_of(c)->copies.load(std::memory_order_acquire), now) || copying;
      if (!copying) return;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  };
  for (std::uint32_t slot = 0; ok && slot < clients; ++slot) {
    const std::uint64_t from = m_heap.stretch_of(slot, clients) + window;
    const std::uint64_t to =
        slot + 1 < clients ? m_heap.stretch_of(slot + 1, clients) : base + size;
    ok = reserve_range(
        from, to, mib,
        [&](std::uint64_t at) {
          return static_cast<std::uint32_t>(windows_done + (at - base) / mib);
        },
        after_copies);
  }
  m_segment.done_reserving();
  if (!ok) {
    const int err = h->reserve_errno.load(std::memory_order_relaxed);
    return err == ECANCELED ? "" : heap_reservation_error();
  }
  h->reserve_progress.publish(all_reserved);
  return "";
}

bool channel::reserved_fully() const noexcept {
  return head()->reserve_progress.value.load(std::memory_order_acquire) == all_reserved;
}

bool channel::heap_reservation_stopped() const noexcept {
  return head()->reserve_progress.value.load(std::memory_order_acquire) == reservation_failed;
}

std::uint32_t channel::reservation_needed(std::uint64_t offset,
                                          std::uint64_t bytes) const noexcept {
  header* h = head();
  const std::uint64_t base = m_heap.stretch_of(0, 1);
  const std::uint32_t clients = std::max(1u, h->clients);
  const std::uint64_t share = m_heap.stretch_of(1, clients) - base;
  // Inside the window of the stretch it starts in: ready once the window step holding its
  // last byte is (steps go round the clients).
  const std::uint64_t slot = std::min<std::uint64_t>((offset - base) / share, clients - 1);
  const std::uint64_t stretch = base + slot * share;
  const std::uint64_t end = offset + bytes;
  if (end <= stretch + h->window_bytes) {
    const std::uint64_t last_step = (std::max<std::uint64_t>(end - stretch, 1) - 1) / reserve_step;
    return static_cast<std::uint32_t>(last_step * clients + slot + 1);
  }
  return static_cast<std::uint32_t>(window_steps() * clients + (end - base + mib - 1) / mib);
}

std::uint64_t channel::ready_bytes(std::uint64_t offset, std::uint64_t bytes) const noexcept {
  if (heap_ready(offset, bytes)) return bytes;
  // What a prefix needs grows with its length: the longest ready one, by bisection (steps of
  // the reservation end where a stretch does, on 64 bytes, not always on a page).
  std::uint64_t ready = 0, not_ready = bytes;
  while (not_ready - ready > 1) {
    const std::uint64_t middle = ready + (not_ready - ready) / 2;
    if (heap_ready(offset, middle))
      ready = middle;
    else
      not_ready = middle;
  }
  return ready;
}

bool channel::heap_ready(std::uint32_t need) const noexcept {
  const header* h = head();
  const std::uint32_t now = h->reserve_progress.value.load(std::memory_order_acquire);
  if (now == reservation_failed) return need <= h->failed_at;
  return now >= need;  // all_reserved is the largest count
}

bool channel::wait_heap_reserved(std::uint64_t offset, std::uint64_t bytes,
                                 double timeout_seconds) noexcept {
  header* h = head();
  const std::uint32_t need = reservation_needed(offset, bytes);
  while (!heap_ready(need)) {
    if (heap_reservation_stopped()) return false;
    if (!h->reserve_progress.wait_for(need, timeout_seconds)) return heap_ready(need);
  }
  return true;
}

std::string channel::heap_reservation_error() const {
  header* h = head();
  const std::uint64_t size = m_heap.capacity();
  const std::uint32_t now = h->reserve_progress.value.load(std::memory_order_acquire);
  if (now != reservation_failed)
    return "the dedicated core has not reserved this part of the shared buffer yet (" +
           std::to_string(h->reserved_bytes.load(std::memory_order_relaxed)) + " of " +
           std::to_string(size) + " bytes reserved so far)";
  const int err = h->reserve_errno.load(std::memory_order_relaxed);
  if (err == ECANCELED)
    return "the dedicated core stopped reserving the shared buffer (it is shutting down)";
  return "only " + std::to_string(h->reserved_bytes.load(std::memory_order_relaxed)) + " of the " +
         std::to_string(size) + " bytes of the shared buffer could be reserved in /dev/shm (" +
         std::strerror(err) +
         "); blocks placed beyond that are refused (is /dev/shm large enough? lower <buffer "
         "size=...>)";
}

}  // namespace sidecore::transports
