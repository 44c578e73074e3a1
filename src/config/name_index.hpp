// Positions of a list's items by name: the model's variables, parameters, layouts and events.
// The parser extends it as it adds items, so that a configuration of 50,000 variables is read in
// linear time; the client looks its variables up in it on every damaris_write and damaris_alloc.
//
// For that second use it is one flat table: an array of slots (a name's FNV-1a hash, where its
// bytes are in a pool kept beside the table, and its position) probed linearly. After a compute
// phase a lookup touches a slot's line and the name's bytes, where a std::unordered_map touched
// its buckets, a node and the string the node pointed to (three places in the heap) and the code
// of libstdc++'s hash and libc's memcmp (bench/run_cold_write.py counts those pages).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <string_view>
#include <vector>

#include "common/fnv1a.hpp"
#include "common/hot_path.hpp"

namespace sidecore::config {

class name_index {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  name_index() = default;
  // Its table and names are allocated from memory (the client keeps its own index among the
  // other tables its calls read).
  explicit name_index(std::pmr::memory_resource* memory) : m_slots(memory), m_pool(memory) {}
  template <typename T>
  name_index(const std::vector<T>& items, std::pmr::memory_resource* memory) : name_index(memory) {
    extend(items);
  }

  // Indexes the items added to the list since the last call (items[i] is found as i; of two
  // items of one name the first is found). The names of indexed items must not change.
  template <typename T>
  void extend(const std::vector<T>& items) {
    if (m_covered > items.size()) clear();  // a list replaced by a shorter one
    if (m_covered == items.size()) return;
    make_room(items.size());
    std::size_t bytes = m_pool.size();
    for (std::size_t i = m_covered; i < items.size(); ++i) bytes += items[i].name.size();
    if (bytes > m_pool.capacity()) m_pool.reserve(std::max(bytes, 2 * m_pool.capacity()));
    for (; m_covered < items.size(); ++m_covered) add(items[m_covered].name, m_covered);
  }

  // At least what extend(items) allocates on an empty index: its table (under four slots per
  // item, eight at least) and the names' bytes.
  template <typename T>
  static std::size_t bytes_for(const std::vector<T>& items) {
    std::size_t bytes = std::max<std::size_t>(8, 4 * items.size()) * sizeof(slot);
    for (const T& item : items) bytes += item.name.size();
    return bytes;
  }

  // The first item of that name; npos when absent. A list holding items extend() has not seen
  // is searched in order.
  template <typename T>
  SIDECORE_HOT_PATH std::size_t find(const std::vector<T>& items,
                                     std::string_view name) const noexcept {
    if (m_covered == items.size()) return find(name);
    for (std::size_t i = 0; i < items.size(); ++i)
      if (items[i].name == name) return i;
    return npos;
  }

  // Among the indexed names only.
  SIDECORE_HOT_PATH std::size_t find(std::string_view name) const noexcept {
    if (m_slots.empty()) return npos;
    const std::uint64_t hash = fnv1a(name);
    for (std::size_t s = static_cast<std::size_t>(hash) & m_mask;; s = (s + 1) & m_mask) {
      const slot& candidate = m_slots[s];
      if (candidate.position == empty) return npos;
      if (candidate.hash == hash && candidate.length == name.size() &&
          same_bytes(m_pool.data() + candidate.offset, name))
        return candidate.position;
    }
  }

 private:
  static constexpr std::uint32_t empty = static_cast<std::uint32_t>(-1);
  struct slot {
    std::uint64_t hash = 0;
    std::uint32_t offset = 0;  // of the name in m_pool
    std::uint32_t length = 0;
    std::uint32_t position = empty;
  };

  // Slots for `count` names with half the table empty, so that every probe ends soon.
  void make_room(std::size_t count) {
    std::size_t capacity = m_slots.empty() ? 8 : m_slots.size();
    while (capacity < 2 * count) capacity *= 2;
    if (capacity == m_slots.size()) return;
    std::pmr::vector<slot> old(capacity, slot{}, m_slots.get_allocator());
    old.swap(m_slots);
    m_mask = capacity - 1;
    for (const slot& s : old)
      if (s.position != empty) place(s);
  }

  void clear() noexcept {
    m_slots.clear();
    m_pool.clear();
    m_mask = 0;
    m_covered = 0;
  }

  void add(std::string_view name, std::size_t position) {
    if (find(name) != npos) return;
    place({fnv1a(name), static_cast<std::uint32_t>(m_pool.size()),
           static_cast<std::uint32_t>(name.size()), static_cast<std::uint32_t>(position)});
    m_pool.insert(m_pool.end(), name.begin(), name.end());
  }

  void place(const slot& s) {
    std::size_t at = static_cast<std::size_t>(s.hash) & m_mask;
    while (m_slots[at].position != empty) at = (at + 1) & m_mask;
    m_slots[at] = s;
  }

  // A loop rather than memcmp: names are short, and the call would be a page of libc's code.
  SIDECORE_HOT_PATH static bool same_bytes(const char* stored, std::string_view name) noexcept {
    for (std::size_t i = 0; i < name.size(); ++i)
      if (stored[i] != name[i]) return false;
    return true;
  }

  std::pmr::vector<slot> m_slots;
  std::pmr::vector<char> m_pool;  // every indexed name's bytes, one after the other
  std::size_t m_mask = 0;
  std::size_t m_covered = 0;  // items indexed
};

}  // namespace sidecore::config
