// Extents, positions or ghost widths of one block: at most SIDECORE_MAX_DIMENSIONS values (the
// parser refuses a layout with more), held in place. A client's layouts and block settings hold
// these instead of std::vectors, so that a call reads a block's shape from the table it is
// in, not from one allocation per vector spread over the heap: after a compute phase each of
// them was a page to find again (bench/run_cold_write.py).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/model.hpp"

namespace sidecore::client {

class extent_list {
 public:
  static constexpr std::size_t capacity = config::max_dimensions;

  extent_list() = default;
  extent_list(const std::int64_t* values, std::size_t count) { assign(values, count); }

  void assign(const std::int64_t* values, std::size_t count) {
    check_room(count);
    for (std::size_t i = 0; i < count; ++i) m_values[i] = values[i];
    m_size = static_cast<std::uint32_t>(count);
  }
  void push_back(std::int64_t value) {
    check_room(size() + 1);
    m_values[m_size++] = value;
  }
  void clear() noexcept { m_size = 0; }

  std::size_t size() const noexcept { return m_size; }
  bool empty() const noexcept { return m_size == 0; }
  std::int64_t& operator[](std::size_t i) noexcept { return m_values[i]; }
  std::int64_t operator[](std::size_t i) const noexcept { return m_values[i]; }
  std::int64_t* begin() noexcept { return m_values.data(); }
  std::int64_t* end() noexcept { return m_values.data() + m_size; }
  const std::int64_t* begin() const noexcept { return m_values.data(); }
  const std::int64_t* end() const noexcept { return m_values.data() + m_size; }
  const std::int64_t* data() const noexcept { return m_values.data(); }

  std::vector<std::int64_t> to_vector() const { return {begin(), end()}; }

 private:
  static void check_room(std::size_t count) {
    if (count > capacity)
      throw std::length_error(std::to_string(count) + " extents; a block has at most " +
                              std::to_string(capacity) + " dimensions");
  }

  std::array<std::int64_t, capacity> m_values{};
  std::uint32_t m_size = 0;
};

}  // namespace sidecore::client
