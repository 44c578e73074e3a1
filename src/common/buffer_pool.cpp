// Best-fit reuse among kept buffers, with bounded waste; the pool is immortal so that buffers
// released during static destruction still find it.
#include "common/buffer_pool.hpp"

#include <map>
#include <mutex>

namespace sidecore {
namespace {

struct pool_state {
  std::mutex mutex;
  std::multimap<std::size_t, std::byte*> kept;  // by capacity
  std::uint64_t kept_bytes = 0;
  std::uint64_t limit = 0;
};

pool_state& state() {
  static pool_state* s = new pool_state;  // never destroyed: see the file comment
  return *s;
}

}  // namespace

void pooled_deleter::operator()(std::byte* p) const noexcept {
  if (!p) return;
  pool_state& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.kept_bytes + capacity <= s.limit) {
      try {
        s.kept.emplace(capacity, p);
        s.kept_bytes += capacity;
        return;
      } catch (...) {
      }
    }
  }
  delete[] p;
}

namespace buffer_pool {

block_buffer acquire(std::uint64_t bytes) {
  const std::size_t wanted = bytes ? static_cast<std::size_t>(bytes) : 1;
  pool_state& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.kept.lower_bound(wanted);
    // Reuse only when little is wasted; a much larger buffer stays for a larger block.
    if (it != s.kept.end() && it->first <= wanted + wanted / 4 + 4096) {
      const std::size_t capacity = it->first;
      std::byte* p = it->second;
      s.kept.erase(it);
      s.kept_bytes -= capacity;
      return block_buffer(p, pooled_deleter{capacity});
    }
  }
  return block_buffer(new std::byte[wanted], pooled_deleter{wanted});
}

void set_capacity(std::uint64_t bytes) {
  pool_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.limit = bytes;
}

std::uint64_t kept_bytes() {
  pool_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.kept_bytes;
}

void trim() noexcept {
  pool_state& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (auto& [capacity, p] : s.kept) delete[] p;
  s.kept.clear();
  s.kept_bytes = 0;
}

}  // namespace buffer_pool
}  // namespace sidecore
