// Shared heap: alignment, coalescing, limits, timeouts, allocation from several processes, and
// processes killed while they hold its lock or change its free ranges.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "memory/shared_heap.hpp"
#include "unit_support.hpp"

namespace {

using sidecore::allocation_error;
using sidecore::memory::heap_alignment;
using sidecore::memory::heap_extent;
using sidecore::memory::heap_state;
using sidecore::memory::shared_heap;
using clock_type = std::chrono::steady_clock;
using sidecore::testing_support::seconds_since;
using sidecore::testing_support::spawn;
using sidecore::testing_support::wait_for;

constexpr std::uint64_t page = 4096;

std::uint64_t page_round(std::uint64_t n) { return (n + page - 1) / page * page; }

// The heap state, the heap itself and a page of flags in one anonymous MAP_SHARED mapping,
// laid out like a channel segment, so that forked children share all of it with the parent.
class shared_arena {
 public:
  explicit shared_arena(std::uint64_t heap_bytes, std::uint32_t extents = 4096)
      : m_heap_offset(page_round(shared_heap::state_bytes(extents))),
        m_flags_offset(m_heap_offset + page_round(heap_bytes)),
        m_bytes(m_flags_offset + page) {
    void* p = ::mmap(nullptr, m_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap");
    m_base = static_cast<std::byte*>(p);
    shared_heap::initialize(m_base, m_heap_offset, heap_bytes, extents);
  }
  ~shared_arena() { ::munmap(m_base, m_bytes); }
  shared_arena(const shared_arena&) = delete;
  shared_arena& operator=(const shared_arena&) = delete;

  shared_heap heap() const noexcept { return shared_heap(m_base); }
  std::uint64_t heap_offset() const noexcept { return m_heap_offset; }
  std::byte* address(std::uint64_t offset) const noexcept { return m_base + offset; }
  // A word visible to the parent and every forked child.
  std::atomic<std::uint32_t>& flag(int index) const noexcept {
    return reinterpret_cast<std::atomic<std::uint32_t>*>(m_base + m_flags_offset)[index];
  }

 private:
  std::byte* m_base = nullptr;
  std::uint64_t m_heap_offset;
  std::uint64_t m_flags_offset;
  std::uint64_t m_bytes;
};

// Allocates pieces of random sizes until not even one line is left.
std::vector<heap_extent> fill(shared_heap& heap, std::mt19937& random) {
  std::uniform_int_distribution<std::uint64_t> size(1, 700);
  std::vector<heap_extent> pieces;
  for (;;) {
    std::uint64_t bytes = size(random);
    std::optional<std::uint64_t> offset = heap.try_allocate(bytes);
    if (!offset) {
      bytes = 1;
      offset = heap.try_allocate(bytes);
    }
    if (!offset) break;
    pieces.push_back({*offset, bytes});
  }
  return pieces;
}

TEST(shared_heap, allocations_are_aligned_disjoint_and_inside_the_heap) {
  shared_arena arena(64 * 1024);
  shared_heap heap = arena.heap();
  std::mt19937 random(7);
  std::vector<heap_extent> pieces = fill(heap, random);
  ASSERT_GT(pieces.size(), 100u);
  EXPECT_EQ(heap.used(), heap.capacity());

  std::sort(pieces.begin(), pieces.end(),
            [](const heap_extent& a, const heap_extent& b) { return a.offset < b.offset; });
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const heap_extent& p = pieces[i];
    EXPECT_EQ(p.offset % heap_alignment, 0u) << "piece " << i;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(arena.address(p.offset)) % heap_alignment, 0u);
    EXPECT_GE(p.offset, arena.heap_offset());
    EXPECT_LE(p.offset + shared_heap::rounded(p.bytes), arena.heap_offset() + heap.capacity());
    if (i > 0) {
      const heap_extent& previous = pieces[i - 1];
      EXPECT_LE(previous.offset + shared_heap::rounded(previous.bytes), p.offset)
          << "pieces " << i - 1 << " and " << i << " overlap";
    }
  }
}

TEST(shared_heap, zero_bytes_still_takes_one_aligned_line) {
  shared_arena arena(4096);
  shared_heap heap = arena.heap();
  std::optional<std::uint64_t> a = heap.try_allocate(0);
  std::optional<std::uint64_t> b = heap.try_allocate(0);
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(heap.used(), 2 * heap_alignment);
}

TEST(shared_heap, freeing_in_random_order_coalesces_into_one_range) {
  for (unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    shared_arena arena(64 * 1024);
    shared_heap heap = arena.heap();
    std::mt19937 random(seed);
    std::vector<heap_extent> pieces = fill(heap, random);
    ASSERT_EQ(heap.used(), heap.capacity());
    std::shuffle(pieces.begin(), pieces.end(), random);

    // Half one by one, the rest in a single batch.
    const std::size_t half = pieces.size() / 2;
    for (std::size_t i = 0; i < half; ++i) heap.release(pieces[i].offset, pieces[i].bytes);
    heap.release(std::vector<heap_extent>(pieces.begin() + half, pieces.end()));

    EXPECT_EQ(heap.used(), 0u);
    std::optional<std::uint64_t> whole = heap.try_allocate(heap.capacity());
    ASSERT_TRUE(whole.has_value()) << "free ranges were not merged back into one";
    EXPECT_EQ(*whole, arena.heap_offset());
  }
}

TEST(shared_heap, try_allocate_returns_nothing_when_full) {
  shared_arena arena(8 * 1024);
  shared_heap heap = arena.heap();
  std::vector<std::uint64_t> offsets;
  for (std::uint64_t i = 0; i < heap.capacity() / 1024; ++i) {
    std::optional<std::uint64_t> offset = heap.try_allocate(1024);
    ASSERT_TRUE(offset.has_value()) << "allocation " << i;
    offsets.push_back(*offset);
  }
  EXPECT_FALSE(heap.try_allocate(1).has_value());
  EXPECT_FALSE(heap.try_allocate(1024).has_value());

  heap.release(offsets[3], 1024);
  EXPECT_FALSE(heap.try_allocate(1025).has_value()) << "only 1024 bytes are free";
  std::optional<std::uint64_t> again = heap.try_allocate(1024);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, offsets[3]);
}

TEST(shared_heap, request_larger_than_whole_heap_throws_at_once_naming_sizes) {
  shared_arena arena(1024 * 1024);
  shared_heap heap = arena.heap();
  ASSERT_EQ(heap.capacity(), 1024u * 1024u);

  const auto start = clock_type::now();
  try {
    heap.allocate(2 * 1024 * 1024, 30.0);
    ADD_FAILURE() << "no error for a request twice the heap";
  } catch (const allocation_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("2.00 MiB"), std::string::npos) << message;
    EXPECT_NE(message.find("1.00 MiB"), std::string::npos) << message;
  }
  // A request that can never fit must not wait for its timeout.
  EXPECT_LT(seconds_since(start), 15.0);

  EXPECT_THROW(heap.try_allocate(heap.capacity() + 1), allocation_error);
  EXPECT_EQ(heap.used(), 0u);
  // The whole heap is still a valid request.
  EXPECT_EQ(heap.allocate(heap.capacity(), 1.0), arena.heap_offset());
}

TEST(shared_heap, allocate_throws_after_timeout_when_nothing_is_freed) {
  shared_arena arena(16 * 1024);
  shared_heap heap = arena.heap();
  ASSERT_TRUE(heap.try_allocate(heap.capacity() - 1024).has_value());

  const double timeout = 0.3;
  const auto start = clock_type::now();
  try {
    heap.allocate(2048, timeout);
    ADD_FAILURE() << "allocation succeeded in a full heap";
  } catch (const allocation_error& e) {
    EXPECT_NE(std::string(e.what()).find("waited"), std::string::npos) << e.what();
  }
  EXPECT_GE(seconds_since(start), timeout);
  EXPECT_EQ(heap.used(), heap.capacity() - 1024);
  // What does fit is still served after a timed-out wait.
  EXPECT_TRUE(heap.try_allocate(1024).has_value());
}

TEST(shared_heap, full_buffer_blocks_then_resumes_when_another_process_frees) {
  shared_arena arena(16 * 1024);
  shared_heap heap = arena.heap();
  const std::uint64_t first = heap.allocate(8 * 1024, 1.0);
  ASSERT_TRUE(heap.try_allocate(8 * 1024).has_value());
  ASSERT_FALSE(heap.try_allocate(1).has_value());
  std::atomic<std::uint32_t>& freed = arena.flag(0);

  pid_t child = spawn([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    shared_heap mine = arena.heap();
    freed.store(1);
    mine.release(first, 8 * 1024);
    return 0;
  });
  ASSERT_GT(child, 0);

  std::uint64_t offset = 0;
  EXPECT_NO_THROW(offset = heap.allocate(4 * 1024, 20.0));
  EXPECT_EQ(freed.load(), 1u) << "allocate returned before the other process freed anything";
  EXPECT_EQ(offset, first);
  EXPECT_EQ(wait_for(child), 0);
  EXPECT_EQ(heap.used(), 12u * 1024u);
}

TEST(shared_heap, concurrent_processes_never_receive_overlapping_ranges) {
  // Small enough that processes often wait for each other, large enough that one process
  // never holds all of it (each process holds at most one range at a time).
  shared_arena arena(64 * 1024);
  constexpr int processes = 4;
  constexpr int rounds = 10000;

  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    children.push_back(spawn([&arena, p] {
      shared_heap heap = arena.heap();
      std::mt19937 random(100 + p);
      std::uniform_int_distribution<std::uint64_t> size(1, 16 * 1024);
      for (int round = 0; round < rounds; ++round) {
        const std::uint64_t bytes = size(random);
        const std::uint64_t offset = heap.allocate(bytes, 20.0);
        if (offset % heap_alignment != 0) return 3;
        auto* data = reinterpret_cast<unsigned char*>(arena.address(offset));
        const auto pattern = static_cast<unsigned char>(p * 61 + round);
        std::memset(data, pattern, bytes);
        if (round % 8 == 0) std::this_thread::yield();
        for (std::uint64_t i = 0; i < bytes; ++i)
          if (data[i] != pattern) return 2;  // someone else wrote into this range
        heap.release(offset, bytes);
      }
      return 0;
    }));
    ASSERT_GT(children.back(), 0);
  }
  for (int p = 0; p < processes; ++p) EXPECT_EQ(wait_for(children[p]), 0) << "process " << p;

  shared_heap heap = arena.heap();
  EXPECT_EQ(heap.used(), 0u);
  EXPECT_TRUE(heap.try_allocate(heap.capacity()).has_value());
}

TEST(shared_heap, used_and_high_water_track_allocations) {
  shared_arena arena(8 * 1024);
  shared_heap heap = arena.heap();
  EXPECT_EQ(heap.used(), 0u);
  EXPECT_EQ(heap.high_water(), 0u);

  const std::uint64_t a = *heap.try_allocate(100);  // 128 bytes
  const std::uint64_t b = *heap.try_allocate(1);    // 64 bytes
  EXPECT_EQ(heap.used(), 192u);
  EXPECT_EQ(heap.high_water(), 192u);

  heap.release(a, 100);
  EXPECT_EQ(heap.used(), 64u);
  EXPECT_EQ(heap.high_water(), 192u);

  const std::uint64_t c = heap.allocate(64, 1.0);
  EXPECT_EQ(heap.used(), 128u);
  EXPECT_EQ(heap.high_water(), 192u);

  const std::uint64_t d = *heap.try_allocate(1000);  // 1024 bytes
  EXPECT_EQ(heap.used(), 1152u);
  EXPECT_EQ(heap.high_water(), 1152u);

  heap.release({{b, 1}, {c, 64}, {d, 1000}});
  EXPECT_EQ(heap.used(), 0u);
  EXPECT_EQ(heap.high_water(), 1152u);
}

}  // namespace

TEST(shared_heap, each_client_starts_in_its_own_stretch_and_reuses_it) {
  shared_arena arena(4 << 20);
  shared_heap heap = arena.heap();
  const std::uint64_t s0 = heap.stretch_of(0, 4), s2 = heap.stretch_of(2, 4);
  EXPECT_EQ(s0, arena.heap_offset());
  EXPECT_EQ(s2, arena.heap_offset() + (2u << 20));
  const std::uint64_t a = *heap.try_allocate(100000, s2);
  const std::uint64_t b = *heap.try_allocate(100000, s0);
  EXPECT_EQ(a, s2);
  EXPECT_EQ(b, s0);
  // Freed and asked again: the client gets the same (warm) memory back.
  heap.release(a, 100000);
  EXPECT_EQ(*heap.try_allocate(100000, s2), s2);
}

TEST(shared_heap, a_full_stretch_spills_over_to_the_rest_of_the_heap) {
  shared_arena arena(1 << 20);
  shared_heap heap = arena.heap();
  const std::uint64_t hint = heap.stretch_of(1, 2);  // the second half
  std::vector<std::uint64_t> got;
  for (int i = 0; i < 8; ++i) got.push_back(*heap.try_allocate(128 << 10, hint));
  // The whole heap is used: four blocks from the hint on, then the search wrapped around.
  EXPECT_EQ(heap.used(), heap.capacity());
  EXPECT_EQ(got[0], hint);
  EXPECT_EQ(got[4], arena.heap_offset());
  EXPECT_FALSE(heap.try_allocate(64, hint).has_value());
  for (std::uint64_t offset : got) heap.release(offset, 128 << 10);
  EXPECT_EQ(*heap.try_allocate(1 << 20, 0), arena.heap_offset());  // everything coalesced
}

namespace {

// The update point at which a forked child kills itself (see shared_heap::set_update_probe).
int g_die_at = 0;

void die_at_armed_point(int point) {
  if (point == g_die_at) ::kill(::getpid(), SIGKILL);
}

heap_state* state_of(shared_arena& arena) {
  return reinterpret_cast<heap_state*>(arena.address(0));
}

// A forked child that takes the heap's lock and is killed while it still holds it.
pid_t child_dying_with_the_lock(shared_arena& arena, void (*before_dying)(heap_state*)) {
  return spawn([&arena, before_dying] {
    heap_state* state = state_of(arena);
    if (pthread_mutex_lock(&state->mutex) != 0) return 3;
    before_dying(state);
    ::kill(::getpid(), SIGKILL);
    return 4;
  });
}

}  // namespace

TEST(shared_heap, a_process_killed_inside_an_allocation_or_a_free_poisons_the_heap) {
  for (const bool freeing : {false, true}) {
    for (int point = 1; point <= 3; ++point) {
      SCOPED_TRACE(std::string(freeing ? "free" : "allocation") + ", killed at point " +
                   std::to_string(point));
      shared_arena arena(64 * 1024);
      shared_heap heap = arena.heap();
      // a, b, c side by side: freeing b alone moves the free ranges around.
      const std::uint64_t a = *heap.try_allocate(1000);
      const std::uint64_t b = *heap.try_allocate(1000);
      const std::uint64_t c = *heap.try_allocate(1000);
      std::memset(arena.address(a), 0x5a, 1000);
      std::memset(arena.address(c), 0xa5, 1000);

      const pid_t child = spawn([&arena, freeing, point, b] {
        g_die_at = point;
        shared_heap::set_update_probe(die_at_armed_point);
        shared_heap mine = arena.heap();
        if (freeing)
          mine.release(b, 1000);
        else
          (void)mine.try_allocate(5000);
        return 5;  // the probe did not fire
      });
      ASSERT_GT(child, 0);
      ASSERT_EQ(wait_for(child), 128 + SIGKILL) << "the child was not killed inside the update";

      // The next user finds the lock's owner dead in the middle of an update.
      const auto start = clock_type::now();
      try {
        (void)heap.try_allocate(64);
        ADD_FAILURE() << "allocation from a heap whose owner died mid-update succeeded";
      } catch (const allocation_error& e) {
        EXPECT_NE(std::string(e.what()).find("died while it was allocating or freeing"),
                  std::string::npos)
            << e.what();
      }
      // Every later allocation fails at once, waiting or not.
      EXPECT_THROW(heap.allocate(64, 20.0), allocation_error);
      EXPECT_LT(seconds_since(start), 5.0);
      EXPECT_NE(heap.poisoned(), "");
      // What was handed over is still there, and giving it back does no harm.
      EXPECT_NO_THROW(heap.release({{a, 1000}, {c, 1000}}));
      EXPECT_EQ(static_cast<unsigned char>(arena.address(a)[999]), 0x5au);
      EXPECT_EQ(static_cast<unsigned char>(arena.address(c)[0]), 0xa5u);
    }
  }
}

TEST(shared_heap, a_process_killed_holding_the_lock_between_updates_is_survived) {
  shared_arena arena(64 * 1024);
  shared_heap heap = arena.heap();
  const std::uint64_t a = *heap.try_allocate(1000);
  const pid_t child = child_dying_with_the_lock(arena, [](heap_state*) {});
  ASSERT_GT(child, 0);
  ASSERT_EQ(wait_for(child), 128 + SIGKILL);

  EXPECT_EQ(heap.used(), 1024u);  // locks, finds the owner dead, checks and goes on
  EXPECT_EQ(heap.poisoned(), "");
  EXPECT_EQ(heap.check(), "");
  const std::optional<std::uint64_t> b = heap.try_allocate(2000);
  ASSERT_TRUE(b.has_value());
  heap.release({{a, 1000}, {*b, 2000}});
  EXPECT_EQ(heap.used(), 0u);
  EXPECT_EQ(heap.check(), "");
}

TEST(shared_heap, a_dead_owner_that_left_the_free_ranges_inconsistent_poisons_the_heap) {
  shared_arena arena(64 * 1024);
  shared_heap heap = arena.heap();
  ASSERT_TRUE(heap.try_allocate(1000).has_value());
  // Not inside an update (the marker is down), yet free and used no longer add up.
  const pid_t child =
      child_dying_with_the_lock(arena, [](heap_state* state) { state->used += heap_alignment; });
  ASSERT_GT(child, 0);
  ASSERT_EQ(wait_for(child), 128 + SIGKILL);

  try {
    (void)heap.try_allocate(64);
    ADD_FAILURE() << "allocation from an inconsistent heap succeeded";
  } catch (const allocation_error& e) {
    EXPECT_NE(std::string(e.what()).find("inconsistent"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is not the heap's"), std::string::npos) << e.what();
  }
}

TEST(shared_heap, a_writer_waiting_for_space_fails_at_once_when_the_heap_is_poisoned) {
  shared_arena arena(16 * 1024);
  shared_heap heap = arena.heap();
  const std::uint64_t whole = *heap.try_allocate(heap.capacity());
  std::atomic<int> outcome{0};  // 1: allocated, 2: allocation_error naming the death
  std::thread writer([&] {
    shared_heap mine = arena.heap();
    try {
      mine.release(mine.allocate(4096, 60.0), 4096);
      outcome = 1;
    } catch (const allocation_error& e) {
      outcome = std::string(e.what()).find("died") != std::string::npos ? 2 : 3;
    }
  });
  while (heap.waiters() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  const auto start = clock_type::now();
  const pid_t child = spawn([&arena, whole] {
    g_die_at = 2;
    shared_heap::set_update_probe(die_at_armed_point);
    arena.heap().release(whole, 16 * 1024);
    return 5;
  });
  ASSERT_GT(child, 0);
  ASSERT_EQ(wait_for(child), 128 + SIGKILL);
  // The next process to take the lock (here: looking at the waiters, as the dedicated core's
  // loop does when idle) finds the death, poisons the heap and wakes the writer.
  (void)heap.waiters();
  writer.join();
  EXPECT_EQ(outcome.load(), 2);
  EXPECT_LT(seconds_since(start), 20.0);
}

TEST(shared_heap, a_range_given_back_twice_or_never_allocated_is_refused_without_harm) {
  shared_arena arena(64 * 1024);
  shared_heap heap = arena.heap();
  const std::uint64_t a = *heap.try_allocate(1000);
  const std::uint64_t b = *heap.try_allocate(1000);
  heap.release(a, 1000);
  try {
    heap.release(a, 1000);
    ADD_FAILURE() << "a double free was accepted";
  } catch (const allocation_error& e) {
    EXPECT_NE(std::string(e.what()).find("free already"), std::string::npos) << e.what();
  }
  EXPECT_THROW(heap.release(arena.heap_offset() + heap.capacity(), 64), allocation_error);
  EXPECT_THROW(heap.release(b + 1, 64), allocation_error);  // not on the granularity
  EXPECT_THROW(heap.release(b, ~0ull - 10), allocation_error);
  // A batch: the valid range is given back, the bad one reported.
  EXPECT_THROW(heap.release({{a, 1000}, {b, 1000}}), allocation_error);
  EXPECT_EQ(heap.used(), 0u);
  EXPECT_EQ(heap.check(), "");
  EXPECT_EQ(heap.poisoned(), "");
  EXPECT_EQ(*heap.try_allocate(heap.capacity()), arena.heap_offset());
}

TEST(shared_heap, is_allocated_tells_allocated_ranges_from_free_or_foreign_ones) {
  shared_arena arena(64 * 1024);
  shared_heap heap = arena.heap();
  const std::uint64_t a = *heap.try_allocate(1000);
  const std::uint64_t b = *heap.try_allocate(1000);
  heap.release(a, 1000);
  EXPECT_TRUE(heap.is_allocated(b, 1000));
  EXPECT_TRUE(heap.is_allocated(b, 1));
  EXPECT_FALSE(heap.is_allocated(a, 1000));       // free
  EXPECT_FALSE(heap.is_allocated(b, 2000));       // runs into free space
  EXPECT_FALSE(heap.is_allocated(b + 8, 64));     // off the granularity
  EXPECT_FALSE(heap.is_allocated(0, 64));         // before the heap
  EXPECT_FALSE(heap.is_allocated(b, ~0ull - 5));  // would wrap around
  EXPECT_FALSE(heap.is_allocated(arena.heap_offset() + heap.capacity(), 64));
}

TEST(shared_heap, free_ranges_keep_their_invariants_through_random_use) {
  shared_arena arena(256 * 1024);
  shared_heap heap = arena.heap();
  std::mt19937 random(11);
  std::uniform_int_distribution<std::uint64_t> size(1, 9000);
  std::vector<heap_extent> live;
  for (int round = 0; round < 5000; ++round) {
    if (live.empty() || random() % 3 != 0) {
      const std::uint64_t bytes = size(random);
      if (auto offset = heap.try_allocate(bytes, heap.stretch_of(random() % 4, 4)))
        live.push_back({*offset, bytes});
    } else {
      const std::size_t k = random() % live.size();
      heap.release(live[k].offset, live[k].bytes);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    }
    if (round % 97 == 0) ASSERT_EQ(heap.check(), "") << "round " << round;
  }
  heap.release(live);
  EXPECT_EQ(heap.check(), "");
  EXPECT_EQ(heap.used(), 0u);
}
