// Channel: segment naming and lifetime, message rings between processes, waking the server.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "transports/dedicated_cores/channel.hpp"
#include "transports/dedicated_cores/heap_reserver.hpp"
#include "transports/dedicated_cores/shared_segment.hpp"
#include "unit_support.hpp"

namespace {

using sidecore::allocation_error;
using sidecore::protocol::message;
using sidecore::protocol::message_kind;
using sidecore::transports::channel;
using sidecore::transports::channel_sizes;
using sidecore::transports::window_mapper;
using clock_type = std::chrono::steady_clock;
using sidecore::testing_support::seconds_since;
using sidecore::testing_support::spawn;
using sidecore::testing_support::wait_for;

// A name no other test process uses at the same time.
std::string unique_name(const std::string& what) {
  return "/sidecore-test-" + std::to_string(::getpid()) + "-" + what;
}

bool exists_in_dev_shm(const std::string& name) {
  struct stat st {};
  return ::stat(("/dev/shm" + name).c_str(), &st) == 0;
}

channel_sizes small_sizes(std::uint32_t clients, std::uint32_t ring_capacity) {
  channel_sizes sizes;
  sizes.heap_bytes = 1 << 20;
  sizes.clients = clients;
  sizes.ring_capacity = ring_capacity;
  return sizes;
}

// A block message whose every field derives from `i`, so that the receiver can check it.
message numbered(int i) {
  message m{};
  m.kind = i % 3 == 0 ? message_kind::signal : message_kind::block;
  m.variable = i % 5;
  m.iteration = i;
  m.block = i * 7;
  m.source = 1;
  m.ndims = 3;
  m.flags = static_cast<std::uint32_t>(i) ^ 0xa5u;
  m.has_global = static_cast<std::uint32_t>(i % 2);
  m.offset = 4096ull * static_cast<std::uint64_t>(i) + 64;
  m.bytes = 1000ull + static_cast<std::uint64_t>(i);
  for (int d = 0; d < sidecore::protocol::max_dimensions; ++d) {
    m.dims[d] = i + d;
    m.global_dims[d] = 10 * i + d;
    m.position[d] = -i - d;
  }
  std::snprintf(m.name, sizeof m.name, "event-%d", i);
  return m;
}

bool same(const message& a, const message& b) { return std::memcmp(&a, &b, sizeof(message)) == 0; }

TEST(channel, messages_from_a_forked_client_arrive_in_order_and_intact) {
  const std::string name = unique_name("order");
  channel server = channel::create(name, small_sizes(2, 8));
  constexpr int count = 500;  // many times the ring, so that the client waits for room

  pid_t child = spawn([&name] {
    channel client = channel::open(name);
    const auto deadline = clock_type::now() + std::chrono::seconds(20);
    for (int i = 0; i < count; ++i) {
      while (!client.try_push(1, numbered(i))) {
        if (clock_type::now() > deadline) return 2;
        std::this_thread::yield();
      }
      client.wake_server();
    }
    return 0;
  });
  ASSERT_GT(child, 0);

  int received = 0;
  const auto deadline = clock_type::now() + std::chrono::seconds(20);
  while (received < count && clock_type::now() < deadline) {
    message m{};
    if (!server.try_pop(1, m)) {
      std::this_thread::yield();
      continue;
    }
    if (!same(m, numbered(received))) {
      ADD_FAILURE() << "message " << received << " differs (iteration " << m.iteration << ")";
      break;
    }
    ++received;
  }
  EXPECT_EQ(received, count);
  EXPECT_EQ(wait_for(child), 0);
  EXPECT_EQ(server.pending(0), 0u) << "messages of client 1 leaked into the ring of client 0";
  message none{};
  EXPECT_FALSE(server.try_pop(1, none));
}

TEST(channel, try_push_fails_when_ring_is_full_and_succeeds_after_a_pop) {
  const std::string name = unique_name("full");
  channel ch = channel::create(name, small_sizes(1, 4));
  ASSERT_EQ(ch.ring_capacity(), 4u);
  ASSERT_EQ(ch.client_count(), 1u);

  int next_push = 0;
  int next_pop = 0;
  // Several laps around the ring, so that the indices wrap.
  for (int lap = 0; lap < 5; ++lap) {
    while (ch.try_push(0, numbered(next_push))) ++next_push;
    EXPECT_EQ(ch.pending(0), 4u);
    EXPECT_FALSE(ch.try_push(0, numbered(next_push)));

    message m{};
    ASSERT_TRUE(ch.try_pop(0, m));
    EXPECT_TRUE(same(m, numbered(next_pop++)));
    EXPECT_TRUE(ch.try_push(0, numbered(next_push++)));
    EXPECT_FALSE(ch.try_push(0, numbered(next_push)));

    while (ch.try_pop(0, m)) EXPECT_TRUE(same(m, numbered(next_pop++)));
    EXPECT_EQ(next_pop, next_push);
  }
  EXPECT_EQ(next_push, 25);
}

// The producer reads the consumer's progress only when its last look says the ring is half
// full (that line moves between cores at every pop): what it says must still follow the pops.
TEST(channel, half_full_follows_the_consumer_over_laps) {
  const std::string name = unique_name("half");
  channel ch = channel::create(name, small_sizes(1, 8));
  int next_push = 0, next_pop = 0;
  message m{};
  for (int lap = 0; lap < 5; ++lap) {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(ch.try_push(0, numbered(next_push++)));
    EXPECT_FALSE(ch.half_full(0)) << "3 of 8 counted as half full, lap " << lap;
    ASSERT_TRUE(ch.try_push(0, numbered(next_push++)));
    EXPECT_TRUE(ch.half_full(0)) << "4 of 8 not counted as half full, lap " << lap;
    ASSERT_TRUE(ch.try_pop(0, m));
    EXPECT_TRUE(same(m, numbered(next_pop++)));
    EXPECT_FALSE(ch.half_full(0)) << "a pop the producer had not seen was not counted";
    while (ch.try_pop(0, m)) EXPECT_TRUE(same(m, numbered(next_pop++)));
    EXPECT_FALSE(ch.half_full(0));
  }
  EXPECT_EQ(next_pop, next_push);
}

TEST(channel, pending_counts_messages_per_ring) {
  const std::string name = unique_name("pending");
  channel ch = channel::create(name, small_sizes(3, 16));
  EXPECT_EQ(ch.pending(0), 0u);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ch.try_push(2, numbered(i)));
  ASSERT_TRUE(ch.try_push(0, numbered(99)));
  EXPECT_EQ(ch.pending(2), 5u);
  EXPECT_EQ(ch.pending(0), 1u);
  EXPECT_EQ(ch.pending(1), 0u);

  message m{};
  ASSERT_TRUE(ch.try_pop(2, m));
  ASSERT_TRUE(ch.try_pop(2, m));
  EXPECT_EQ(ch.pending(2), 3u);
  ASSERT_TRUE(ch.try_pop(0, m));
  EXPECT_TRUE(same(m, numbered(99)));
  EXPECT_EQ(ch.pending(0), 0u);
  EXPECT_FALSE(ch.try_pop(1, m));
}

TEST(channel, wake_from_another_process_ends_sleep_long_before_timeout) {
  const std::string name = unique_name("wake");
  channel server = channel::create(name, small_sizes(1, 8));
  // A word in the shared heap that the client sets just before waking the server.
  const std::uint64_t flag_offset = server.heap().allocate(sizeof(std::uint32_t), 1.0);
  auto* flag = new (server.address(flag_offset)) std::atomic<std::uint32_t>(0);

  const std::uint32_t token = server.prepare_sleep();
  pid_t child = spawn([&name, flag_offset] {
    channel client = channel::open(name);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    reinterpret_cast<std::atomic<std::uint32_t>*>(client.address(flag_offset))->store(1);
    client.wake_server();
    return 0;
  });
  ASSERT_GT(child, 0);

  const auto start = clock_type::now();
  server.sleep(token, 10000);
  const double slept = seconds_since(start);
  server.end_sleep();
  EXPECT_EQ(flag->load(), 1u) << "sleep returned without the client's wake-up";
  EXPECT_LT(slept, 5.0) << "the wake-up did not end the sleep";
  EXPECT_EQ(wait_for(child), 0);
}

TEST(channel, wake_between_prepare_and_sleep_is_not_lost) {
  const std::string name = unique_name("early-wake");
  channel ch = channel::create(name, small_sizes(1, 8));
  const std::uint32_t token = ch.prepare_sleep();
  ch.wake_server();
  const auto start = clock_type::now();
  ch.sleep(token, 10000);
  ch.end_sleep();
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(channel, sleep_without_wake_returns_after_its_timeout) {
  const std::string name = unique_name("timeout");
  channel ch = channel::create(name, small_sizes(1, 8));
  const auto start = clock_type::now();
  ch.sleep(ch.prepare_sleep(), 150);
  ch.end_sleep();
  EXPECT_GE(seconds_since(start), 0.14);
}

TEST(channel, unlink_removes_the_name_while_the_mapping_keeps_working) {
  const std::string name = unique_name("unlink");
  channel server = channel::create(name, small_sizes(1, 8));
  ASSERT_TRUE(exists_in_dev_shm(name));
  server.unlink();
  EXPECT_FALSE(exists_in_dev_shm(name));
  EXPECT_THROW(channel::open(name), allocation_error);

  // A child that inherited the mapping still reaches the server through it.
  const std::uint64_t offset = server.heap().allocate(64, 1.0);
  pid_t child = spawn([&server, offset] {
    std::memcpy(server.address(offset), "through the unlinked segment", 29);
    return server.try_push(0, numbered(42)) ? 0 : 2;
  });
  ASSERT_GT(child, 0);
  ASSERT_EQ(wait_for(child), 0);
  message m{};
  ASSERT_TRUE(server.try_pop(0, m));
  EXPECT_TRUE(same(m, numbered(42)));
  EXPECT_STREQ(reinterpret_cast<const char*>(server.address(offset)),
               "through the unlinked segment");
  server.heap().release(offset, 64);
  EXPECT_EQ(server.heap().used(), 0u);
}

TEST(channel, destroying_the_creator_removes_the_name) {
  const std::string name = unique_name("scope");
  {
    channel ch = channel::create(name, small_sizes(1, 8));
    ASSERT_TRUE(exists_in_dev_shm(name));
  }
  EXPECT_FALSE(exists_in_dev_shm(name));
}

TEST(channel, opening_a_missing_name_throws_allocation_error) {
  const std::string name = unique_name("missing");
  try {
    channel::open(name);
    ADD_FAILURE() << "no error for a segment that does not exist";
  } catch (const allocation_error& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST(channel, creating_a_name_already_taken_throws_allocation_error) {
  const std::string name = unique_name("taken");
  channel first = channel::create(name, small_sizes(1, 8));
  EXPECT_THROW(channel::create(name, small_sizes(1, 8)), allocation_error);
  // The failed attempt must not have removed the first channel's name.
  EXPECT_TRUE(exists_in_dev_shm(name));
  EXPECT_NO_THROW(channel::open(name));
}

TEST(channel, opening_a_foreign_segment_throws_allocation_error) {
  const std::string name = unique_name("foreign");
  int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 8192), 0);
  ::close(fd);
  try {
    channel::open(name);
    ADD_FAILURE() << "a zero-filled segment was accepted";
  } catch (const allocation_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a Sidecore segment"), std::string::npos) << e.what();
  }
  ::shm_unlink(name.c_str());
}

TEST(channel, segment_too_large_for_dev_shm_throws_allocation_error_with_message) {
  const std::string name = unique_name("huge");
  channel_sizes sizes = small_sizes(1, 8);
  sizes.heap_bytes = 1ull << 40;  // 1 TiB
  try {
    channel c = channel::create(name, sizes);  // the heap is not reserved yet
    c.unlink();
    c.reserve_heap(4 << 20);
    ADD_FAILURE() << "a 1 TiB heap was reserved";
  } catch (const allocation_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("/dev/shm"), std::string::npos) << message;
  }
  EXPECT_FALSE(exists_in_dev_shm(name)) << "the failed segment was left behind";
}

// A client whose ring is full sleeps until the server pops (no polling), and gives up at its
// deadline when nobody does.
TEST(channel, a_client_waits_for_room_until_the_server_pops_or_the_deadline) {
  const std::string name = unique_name("room");
  channel c = channel::create(name, small_sizes(1, 2));
  c.unlink();
  message m{};
  m.kind = message_kind::block;
  ASSERT_TRUE(c.try_push(0, m));
  ASSERT_TRUE(c.try_push(0, m));
  ASSERT_FALSE(c.try_push(0, m));
  EXPECT_FALSE(c.wait_for_room(0, 0.05));  // nobody pops
  std::thread server([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    message out{};
    c.try_pop(0, out);
  });
  EXPECT_TRUE(c.wait_for_room(0, 30.0));
  EXPECT_TRUE(c.try_push(0, m));
  server.join();
}

// A client ahead of the others sleeps until the slowest ends enough iterations.
TEST(channel, a_client_waits_for_the_slowest_client_to_catch_up) {
  const std::string name = unique_name("slowest");
  channel c = channel::create(name, small_sizes(3, 4));
  c.unlink();
  c.publish_ended(0, 9);
  c.publish_ended(1, 9);
  c.publish_ended(2, 1);
  EXPECT_FALSE(c.wait_for_slowest(3, 0.05));
  std::thread slow([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    c.publish_ended(2, 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    c.publish_ended(2, UINT32_MAX);  // it stopped: nobody waits for it any more
  });
  EXPECT_TRUE(c.wait_for_slowest(3, 30.0));
  EXPECT_EQ(c.slowest_ended(), 9u);
  slow.join();
}

// A job killed while its segment still had a name leaves it in /dev/shm: the next job on the
// node removes the segments whose creating process is gone, and only those.
TEST(channel, segments_of_jobs_that_ended_are_removed_and_live_ones_kept) {
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string stale = "/sidecore-" + std::to_string(dead) + "-00112233445566ff-0";
  const std::string live = "/sidecore-" + std::to_string(::getpid()) + "-00112233445566ff-1";
  const std::string other = "/sidecore-test-" + std::to_string(::getpid()) + "-unrelated";
  for (const std::string& name : {stale, live, other}) {
    const int fd = ::shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0) << name;
    ::close(fd);
  }
  EXPECT_GE(sidecore::transports::remove_stale_segments(), 1);
  EXPECT_FALSE(exists_in_dev_shm(stale));
  EXPECT_TRUE(exists_in_dev_shm(live));
  EXPECT_TRUE(exists_in_dev_shm(other));
  ::shm_unlink(live.c_str());
  ::shm_unlink(other.c_str());
}

// The data heap is reserved and touched only after the name is gone: what a job killed in the
// meantime leaves behind holds no memory.
TEST(channel, the_data_heap_is_reserved_after_the_name_is_removed) {
  const std::string name = unique_name("late");
  channel_sizes sizes = small_sizes(1, 8);
  sizes.heap_bytes = 64 << 20;
  channel c = channel::create(name, sizes);
  struct stat st {};
  ASSERT_EQ(::stat(("/dev/shm" + name).c_str(), &st), 0);
  EXPECT_LT(static_cast<std::uint64_t>(st.st_blocks) * 512, 8u << 20)
      << "the heap was reserved while the segment still had a name";
  c.unlink();
  c.reserve_heap(4 << 20);
  c.prefault(c.heap().stretch_of(0, 1), 1 << 20);
  const std::uint64_t offset = c.heap().allocate(1 << 20, 1.0);
  std::memset(c.address(offset), 7, 1 << 20);  // usable
}

// A process maps ahead only the part of the buffer it is told to (the start of its stretch),
// and that part takes no page fault when first written: resident memory follows use, not the
// buffer's size.
long shared_resident_kib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "RssShmem:", 9) == 0) kib = std::strtol(line + 9, nullptr, 10);
  std::fclose(f);
  return kib;
}

[[maybe_unused]] long minor_faults() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// A channel of `clients` clients with a heap of heap_bytes, its name removed, set to reserve
// the first `window` bytes of each client's stretch first (reserve_heap).
channel channel_to_reserve(const std::string& name, std::uint32_t clients, std::uint64_t heap_bytes,
                           std::uint64_t window) {
  channel_sizes sizes = small_sizes(clients, 8);
  sizes.heap_bytes = heap_bytes;
  channel c = channel::create(name, sizes);
  c.unlink();
  c.reserve_heap(window);
  return c;
}

TEST(channel, prefault_maps_only_the_window_and_the_window_takes_no_fault) {
  const std::string name = unique_name("window");
  channel c = channel_to_reserve(name, 2, 128 << 20, 8 << 20);
  const long before = shared_resident_kib();
  if (before < 0) GTEST_SKIP() << "no RssShmem in /proc/self/status";
  const std::uint64_t stretch = c.heap().stretch_of(1, 2);
  c.prefault(stretch, 8 << 20);
  const long mapped = shared_resident_kib() - before;
  EXPECT_GE(mapped, 8 * 1024) << "the window was not mapped";
  EXPECT_LT(mapped, 16 * 1024) << "more than the window was mapped";
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A sanitizer's shadow memory takes its own faults on first access: only the mapping counts.
  std::memset(c.address(stretch), 3, 8 << 20);
#else
  const long faults = minor_faults();
  std::memset(c.address(stretch), 3, 8 << 20);
  EXPECT_LE(minor_faults() - faults, 2) << "writing the mapped window faulted";
#endif
}

// A large heap is reserved after start-up, on the core's thread: every client's window first,
// then the rest around them. Nothing counts as reserved before the core reserved it; a writer
// waits for its pages; what a client writes into its window while the core reserves the rest
// is never overwritten; when the reservation stops short, a block is refused with the reason,
// never left to SIGBUS.
TEST(channel, a_large_heap_is_reserved_window_first_and_blocks_wait_for_the_rest) {
  const std::string name = unique_name("steps");
  channel c = channel_to_reserve(name, 2, 512ull << 20, 8 << 20);
  const std::uint64_t second = c.heap().stretch_of(1, 2);
  EXPECT_FALSE(c.heap_reserved(second, 1 << 20, 0.01))
      << "a window counted as reserved before the core reserved it";
  EXPECT_NE(c.heap_reservation_error().find("not reserved this part"), std::string::npos)
      << c.heap_reservation_error();
  // The second client writes into its window as soon as it is ready, while the core goes on
  // with the rest of the heap (which includes the pages just past that window).
  std::atomic<int> window_ready{-1};
  std::thread client([&] {
    window_ready = c.heap_reserved(second, 8 << 20, 30.0) ? 1 : 0;
    if (window_ready == 1) std::memset(c.address(second), 0xab, 8 << 20);
  });
  std::atomic<int> far_ready{-1};
  std::thread far_writer(
      [&] { far_ready = c.heap_reserved(second + (200 << 20), 1 << 20, 30.0) ? 1 : 0; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(window_ready.load(), -1) << "the client did not wait for its window";
  EXPECT_EQ(far_ready.load(), -1) << "the writer did not wait for the reservation";
  std::atomic<bool> stop{false};
  EXPECT_EQ(c.reserve_heap_rest(stop), "");
  client.join();
  far_writer.join();
  EXPECT_EQ(window_ready.load(), 1);
  EXPECT_EQ(far_ready.load(), 1);
  EXPECT_TRUE(c.heap_reserved(c.heap().stretch_of(0, 1) + (500ull << 20), 1 << 20, 0.01));
  const auto* window = reinterpret_cast<const unsigned char*>(c.address(second));
  std::size_t kept = 0;
  for (std::size_t i = 0; i < (8u << 20); ++i) kept += window[i] == 0xab;
  EXPECT_EQ(kept, 8u << 20) << "the reservation of the rest wrote over a client's window";
}

// However many clients share the core, the start of every client's window is reserved before
// the end of any window, and every window before the rest of the heap.
TEST(channel, every_window_starts_early_and_the_windows_come_before_the_rest) {
  const std::string name = unique_name("order");
  // 2 GiB, never touched: only the order is asked.
  channel c = channel_to_reserve(name, 8, 2ull << 30, 64 << 20);
  const std::uint64_t first = c.heap().stretch_of(0, 8), last = c.heap().stretch_of(7, 8);
  const std::uint32_t last_client_start = c.reservation_needed(last, 1 << 20);
  EXPECT_LT(last_client_start, c.reservation_needed(first + (56 << 20), 8 << 20))
      << "the last client's first MiB waits for the whole window of the first";
  EXPECT_LE(last_client_start, 8u) << "more than one step per window before it";
  EXPECT_LT(c.reservation_needed(last + (56 << 20), 8 << 20),
            c.reservation_needed(first + (64 << 20), 1 << 20))
      << "a page past a window came before a window's end";
  EXPECT_LT(c.reservation_needed(first + (64 << 20), 1 << 20),
            c.reservation_needed(last + (64 << 20), 1 << 20))
      << "the rest is not in heap order";
}

TEST(channel, a_reservation_stopped_short_refuses_the_pages_beyond_with_the_reason) {
  const std::string name = unique_name("short");
  channel c = channel_to_reserve(name, 2, 256ull << 20, 8 << 20);
  std::atomic<bool> stop{true};  // as when the core shuts down before it is done
  EXPECT_EQ(c.reserve_heap_rest(stop), "");
  EXPECT_TRUE(c.heap_reservation_stopped());
  const std::uint64_t second = c.heap().stretch_of(1, 2);
  EXPECT_FALSE(c.heap_reserved(second, 4 << 20, 5.0));
  EXPECT_FALSE(c.heap_reserved(second + (32 << 20), 1 << 20, 5.0));
  EXPECT_NE(c.heap_reservation_error().find("stopped reserving"), std::string::npos)
      << c.heap_reservation_error();
}

// Beyond the windows, the core holds its zeros back while a client copies a block (writing
// them took the memory bandwidth the copy needed), but not while a client waits for those
// pages, and not for longer than its patience with one copy.
TEST(channel, the_rest_waits_for_a_copy_but_not_for_a_waiting_client_nor_past_its_patience) {
  const std::string name = unique_name("copies");
  channel c = channel_to_reserve(name, 1, 64 << 20, 8 << 20);
  const std::uint64_t window = c.heap().stretch_of(0, 1);
  const std::uint64_t rest = window + (8 << 20);
  c.begin_copy(0);
  std::atomic<bool> stop{false};
  std::string result = "not returned";
  std::thread core([&] { result = c.reserve_heap_rest(stop, std::chrono::minutes(10)); });
  // Polled, not waited for: a waiting client would let the core go on.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!c.heap_ready(window, 8 << 20) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(c.heap_ready(window, 8 << 20)) << "the window was not reserved";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(c.heap_ready(rest, 1 << 20)) << "the rest was reserved beside a copy";
  EXPECT_TRUE(c.heap_reserved(rest + (8 << 20), 1 << 20, 30.0))
      << "a client waiting for pages of the rest waited for a copy";
  c.end_copy(0);
  core.join();
  EXPECT_EQ(result, "");
  EXPECT_TRUE(c.reserved_fully());

  // A copy that never ends (its client died between the two calls) holds the rest back only for
  // the patience.
  channel other = channel_to_reserve(unique_name("copy-never-ends"), 1, 64 << 20, 8 << 20);
  other.begin_copy(0);
  EXPECT_EQ(other.reserve_heap_rest(stop, std::chrono::milliseconds(1)), "");
  EXPECT_TRUE(other.reserved_fully());
}

// A client's window mapper maps its window as the core reserves it (a later write there takes
// no page fault), and stops at once when asked, even if the core never reserves anything.
TEST(channel, a_window_mapper_maps_the_window_once_reserved_and_stops_when_asked) {
  const std::string name = unique_name("mapper");
  channel c = channel_to_reserve(name, 2, 128 << 20, 16 << 20);
  const long before = shared_resident_kib();
  if (before < 0) GTEST_SKIP() << "no RssShmem in /proc/self/status";
  const std::uint64_t stretch = c.heap().stretch_of(1, 2);
  {
    window_mapper idle(c, stretch, 16 << 20);  // nothing reserved: it waits, then is stopped
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_LT(shared_resident_kib() - before, 1024) << "pages mapped before they were reserved";
  }
  window_mapper mapper(c, stretch, 16 << 20);
  std::atomic<bool> stop{false};
  EXPECT_EQ(c.reserve_heap_rest(stop), "");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (shared_resident_kib() - before < 16 * 1024 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const long mapped = shared_resident_kib() - before;
  EXPECT_GE(mapped, 16 * 1024) << "the window was not mapped";
  EXPECT_LT(mapped, 24 * 1024) << "more than the window was mapped";
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  const long faults = minor_faults();
  std::memset(c.address(stretch), 3, 16 << 20);
  EXPECT_LE(minor_faults() - faults, 2) << "writing the mapped window faulted";
#endif
}

}  // namespace
