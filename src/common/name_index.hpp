// Names to their positions in a list fixed at construction (a configuration's variables), for
// the lookups on a call's path. One array of slots and one pool holding every name's bytes are
// allocated once, side by side: after a compute phase a lookup touches a slot's line and the
// name's bytes, where a std::unordered_map touched its buckets, a node and the string the node
// pointed to (three places in the heap) and the code of libstdc++'s hash and libc's memcmp
// (bench/run_cold_write.py counts those pages).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/fnv1a.hpp"
#include "common/hot_path.hpp"

namespace sidecore {

class name_index {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  // names[i] is found as i; a name given twice is found at its first position.
  explicit name_index(const std::vector<std::string_view>& names) {
    std::size_t bytes = 0;
    for (std::string_view n : names) bytes += n.size();
    m_pool.reserve(bytes);
    std::size_t capacity = 8;
    while (capacity < 2 * names.size()) capacity *= 2;  // half empty: every probe ends
    m_slots.assign(capacity, slot{});
    m_mask = capacity - 1;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (find(names[i]) != npos) continue;
      const std::uint64_t hash = fnv1a(names[i]);
      std::size_t s = static_cast<std::size_t>(hash) & m_mask;
      while (m_slots[s].value != empty) s = (s + 1) & m_mask;
      m_slots[s] = {hash, static_cast<std::uint32_t>(m_pool.size()),
                    static_cast<std::uint32_t>(names[i].size()), static_cast<std::uint32_t>(i)};
      m_pool.insert(m_pool.end(), names[i].begin(), names[i].end());
    }
  }

  // The position of name, or npos.
  SIDECORE_HOT_PATH std::size_t find(std::string_view name) const noexcept {
    const std::uint64_t hash = fnv1a(name);
    for (std::size_t s = static_cast<std::size_t>(hash) & m_mask;; s = (s + 1) & m_mask) {
      const slot& candidate = m_slots[s];
      if (candidate.value == empty) return npos;
      if (candidate.hash == hash && candidate.length == name.size() &&
          same_bytes(m_pool.data() + candidate.offset, name))
        return candidate.value;
    }
  }

 private:
  static constexpr std::uint32_t empty = static_cast<std::uint32_t>(-1);
  struct slot {
    std::uint64_t hash = 0;
    std::uint32_t offset = 0;  // of the name in m_pool
    std::uint32_t length = 0;
    std::uint32_t value = empty;
  };

  // A loop rather than memcmp: names are short, and the call would be a page of libc's code.
  SIDECORE_HOT_PATH static bool same_bytes(const char* stored, std::string_view name) noexcept {
    for (std::size_t i = 0; i < name.size(); ++i)
      if (stored[i] != name[i]) return false;
    return true;
  }

  std::vector<slot> m_slots;
  std::vector<char> m_pool;
  std::size_t m_mask = 0;
};

}  // namespace sidecore
