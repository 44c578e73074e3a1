// The block buffer pool: released buffers serve later blocks of a similar size, within a cap;
// the arena is safe to reserve and trim while other threads write.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "memory/buffer_pool.hpp"

namespace {

struct pool_guard {
  explicit pool_guard(std::uint64_t capacity) {
    sidecore::buffer_pool::trim();
    sidecore::buffer_pool::set_capacity(capacity);
  }
  ~pool_guard() {
    sidecore::buffer_pool::set_capacity(0);
    sidecore::buffer_pool::trim();
  }
};

}  // namespace

TEST(buffer_pool, released_buffer_serves_the_next_block_of_similar_size) {
  pool_guard guard(64 << 20);
  std::byte* first = nullptr;
  {
    sidecore::block_buffer a = sidecore::buffer_pool::acquire(8 << 20);
    first = a.get();
    a[0] = std::byte{42};
  }
  sidecore::block_buffer b = sidecore::buffer_pool::acquire((8 << 20) - 100);
  EXPECT_EQ(b.get(), first);
}

TEST(buffer_pool, a_much_larger_buffer_is_not_wasted_on_a_small_block) {
  pool_guard guard(64 << 20);
  std::byte* large = nullptr;
  {
    sidecore::block_buffer a = sidecore::buffer_pool::acquire(16 << 20);
    large = a.get();
  }
  sidecore::block_buffer small = sidecore::buffer_pool::acquire(1 << 20);
  EXPECT_NE(small.get(), large);
  sidecore::block_buffer again = sidecore::buffer_pool::acquire(16 << 20);
  EXPECT_EQ(again.get(), large);
}

TEST(buffer_pool, nothing_is_kept_beyond_the_capacity) {
  pool_guard guard(6 << 20);
  { sidecore::block_buffer a = sidecore::buffer_pool::acquire(4 << 20); }
  EXPECT_EQ(sidecore::buffer_pool::kept_bytes(), 4u << 20);
  {
    sidecore::block_buffer a = sidecore::buffer_pool::acquire(4 << 20);  // the kept one
    sidecore::block_buffer b = sidecore::buffer_pool::acquire(4 << 20);  // a new one
    EXPECT_EQ(sidecore::buffer_pool::kept_bytes(), 0u);
  }
  // Released in reverse order: b is kept, a would exceed the 6 MiB cap and is freed.
  EXPECT_EQ(sidecore::buffer_pool::kept_bytes(), 4u << 20);
  sidecore::buffer_pool::trim();
  EXPECT_EQ(sidecore::buffer_pool::kept_bytes(), 0u);
}

TEST(buffer_pool, two_live_buffers_never_share_memory) {
  pool_guard guard(64 << 20);
  sidecore::block_buffer a = sidecore::buffer_pool::acquire(1 << 20);
  sidecore::block_buffer b = sidecore::buffer_pool::acquire(1 << 20);
  EXPECT_NE(a.get(), b.get());
  a.reset();
  sidecore::block_buffer c = sidecore::buffer_pool::acquire(1 << 20);
  EXPECT_NE(c.get(), b.get());
}

TEST(buffer_pool, the_arena_serves_blocks_first_and_takes_them_back) {
  pool_guard guard(0);
  sidecore::buffer_pool::reserve_arena(8 << 20);
  std::byte* first = nullptr;
  {
    sidecore::block_buffer a = sidecore::buffer_pool::acquire(1 << 20);
    sidecore::block_buffer b = sidecore::buffer_pool::acquire(1 << 20);
    first = a.get();
    EXPECT_NE(a.get(), b.get());
    EXPECT_EQ(sidecore::buffer_pool::kept_bytes(), 0u);  // arena memory is not "kept"
  }
  sidecore::block_buffer again = sidecore::buffer_pool::acquire(1 << 20);
  EXPECT_EQ(again.get(), first);  // the same warm memory
  // Larger than the arena: served from the heap instead, never refused.
  sidecore::block_buffer big = sidecore::buffer_pool::acquire(16 << 20);
  ASSERT_NE(big.get(), nullptr);
  big[(16 << 20) - 1] = std::byte{1};
}

long anonymous_resident_kib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "RssAnon:", 8) == 0) kib = std::strtol(line + 8, nullptr, 10);
  std::fclose(f);
  return kib;
}

// Polls the growth of RssAnon since `before` until it reaches `kib` (or 30 s pass).
long resident_growth_reaching(long before, long kib) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  long grown = anonymous_resident_kib() - before;
  while (grown < kib && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    grown = anonymous_resident_kib() - before;
  }
  return grown;
}

// Only the warm part of the arena is resident at first: a large buffer costs memory only as
// far as it is used.
TEST(buffer_pool, the_arena_maps_ahead_only_its_warm_part) {
  pool_guard guard(0);
  sidecore::buffer_pool::trim();
  const long before = anonymous_resident_kib();
  if (before < 0) GTEST_SKIP() << "no RssAnon in /proc/self/status";
  sidecore::buffer_pool::reserve_arena(256 << 20, 8 << 20);
  // Nothing is warmed before warm_arena (the end of damaris_initialize), however long.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LT(anonymous_resident_kib() - before, 4 * 1024) << "warmed before warm_arena";
  sidecore::buffer_pool::warm_arena();
  // The warm part is mapped on a background thread, soon after.
  const long grown = resident_growth_reaching(before, 8 * 1024);
  EXPECT_GE(grown, 8 * 1024) << "the warm part was not mapped";
  EXPECT_LT(grown, 64 * 1024) << "the whole arena was mapped";
  sidecore::block_buffer a = sidecore::buffer_pool::acquire(4 << 20);
  std::memset(a.get(), 1, 4 << 20);  // first blocks land in the warm part
  EXPECT_LT(anonymous_resident_kib() - before, 64 * 1024);
}

// The warm part is mapped while the application already writes its first blocks there: the
// mapping changes no byte they wrote, and trimming stops it wherever it is.
TEST(buffer_pool, blocks_written_while_the_arena_warms_keep_their_bytes) {
  pool_guard guard(0);
  sidecore::buffer_pool::trim();
  const long before = anonymous_resident_kib();
  if (before < 0) GTEST_SKIP() << "no RssAnon in /proc/self/status";
  sidecore::buffer_pool::reserve_arena(256 << 20, 96 << 20);
  sidecore::buffer_pool::warm_arena();
  const std::size_t bytes = 48u << 20;
  sidecore::block_buffer a = sidecore::buffer_pool::acquire(bytes);
  std::memset(a.get(), 0x5a, bytes);
  EXPECT_GE(resident_growth_reaching(before, 96 * 1024), 96 * 1024)
      << "the warm part was not mapped";
  std::size_t kept = 0;
  for (std::size_t i = 0; i < bytes; ++i) kept += a[i] == std::byte{0x5a};
  EXPECT_EQ(kept, bytes) << "warming the arena changed a block written meanwhile";
  a.reset();
  sidecore::buffer_pool::reserve_arena(0);  // no-op while the arena exists
  sidecore::buffer_pool::trim();
  sidecore::buffer_pool::reserve_arena(1u << 30, 1u << 30);  // a long warm-up, stopped at once
  sidecore::buffer_pool::warm_arena();
  sidecore::buffer_pool::trim();
}

TEST(buffer_pool, acquisitions_race_safely_with_reserving_and_trimming_the_arena) {
  // One thread writes blocks (the write path reads the arena without the pool's mutex) while
  // another reserves and trims the arena: every buffer must stay usable and private, whether
  // it came from the arena or not. A thread sanitizer reports any unordered access here.
  pool_guard guard(1 << 20);
  std::atomic<bool> done{false}, racing{false};
  std::atomic<int> corrupted{0};
  std::thread writer([&] {
    // Not before the other thread is in its loop: on a loaded machine the writer could
    // otherwise finish every round before the race begins.
    while (!racing.load()) std::this_thread::yield();
    for (int round = 0; round < 20000; ++round) {
      const std::size_t bytes = 64 + static_cast<std::size_t>(round % 7) * 1000;
      sidecore::block_buffer a = sidecore::buffer_pool::acquire(bytes);
      sidecore::block_buffer b = sidecore::buffer_pool::acquire(bytes);
      std::memset(a.get(), 0x11, bytes);
      std::memset(b.get(), 0x22, bytes);
      if (a[bytes - 1] != std::byte{0x11} || b[0] != std::byte{0x22}) ++corrupted;
    }
    done = true;
  });
  int cycles = 0;
  while (!done.load()) {
    sidecore::buffer_pool::reserve_arena(256 << 10);
    racing = true;
    std::this_thread::yield();
    sidecore::buffer_pool::trim();
    ++cycles;
  }
  writer.join();
  EXPECT_EQ(corrupted.load(), 0);
  EXPECT_GT(cycles, 0);
  // Whatever the interleaving, the arena is given back once nothing uses it.
  sidecore::buffer_pool::trim();
  sidecore::buffer_pool::reserve_arena(256 << 10);
  {
    sidecore::block_buffer a = sidecore::buffer_pool::acquire(1000);
    EXPECT_EQ(sidecore::buffer_pool::kept_bytes(), 0u);
  }
}
