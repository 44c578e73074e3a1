// The block buffer pool: released buffers serve later blocks of a similar size, within a cap.
#include <gtest/gtest.h>

#include "common/buffer_pool.hpp"

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
  pool_guard guard(1 << 20);
  std::byte* first = nullptr;
  {
    sidecore::block_buffer a = sidecore::buffer_pool::acquire(4 << 20);
    first = a.get();
  }
  // Not kept (over the cap): a new buffer of the same size is a fresh allocation, which the
  // allocator may or may not place at the same address; what must hold is that two live
  // buffers never share memory.
  sidecore::block_buffer b = sidecore::buffer_pool::acquire(4 << 20);
  sidecore::block_buffer c = sidecore::buffer_pool::acquire(4 << 20);
  EXPECT_NE(b.get(), c.get());
  (void)first;
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
