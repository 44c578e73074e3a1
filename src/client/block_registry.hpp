// What a client knows about each of its blocks: the position and extents the program set for
// it (kept until changed, as damaris_set_position's position is), and the last iteration it
// was handed over in. Block ids below <domains count> live in a dense array, so the classic
// write path allocates nothing; any other id (a client may write any number of blocks) lives
// in a hash table, whose entries stay while they carry a position or extents. The last block
// looked up is remembered: an irregular code sets a block's extents and position and writes
// it, three calls on the same block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <unordered_map>
#include <vector>

#include "client/extent_list.hpp"

namespace sidecore::client {

struct block_settings {
  extent_list position;          // C order; empty: zeros
  extent_list extents;           // C order; empty: the layout's
  std::uint64_t bytes = 0;       // of the extents, when set
  int handed_over = -1;          // the last iteration it was written or allocated in
  std::int32_t allocation = -1;  // its slot in the client's allocation_slots, until cleared
};

class block_registry {
 public:
  // The dense array is allocated from memory (the client's arena).
  block_registry(std::size_t variables, int domains, std::pmr::memory_resource* memory);

  // The settings of a block, or nullptr when the program never set nor wrote it.
  block_settings* find(std::size_t variable, std::int32_t block);
  // The settings of a block, created empty when missing. The reference stays valid until
  // end_iteration.
  block_settings& settings_of(std::size_t variable, std::int32_t block);

  // The iteration ended: forgets the blocks that carry nothing but a hand-over mark.
  void end_iteration();

 private:
  bool dense(std::int32_t block) const noexcept { return block < m_domains; }
  std::size_t dense_index(std::size_t variable, std::int32_t block) const noexcept {
    return variable * static_cast<std::size_t>(m_domains) + static_cast<std::size_t>(block);
  }
  static std::uint64_t key(std::size_t variable, std::int32_t block) noexcept {
    return (static_cast<std::uint64_t>(variable) << 32) | static_cast<std::uint32_t>(block);
  }

  int m_domains;
  std::pmr::vector<block_settings> m_dense;  // variable * domains + block
  std::unordered_map<std::uint64_t, block_settings> m_sparse;
  // The sparse entry last looked up (element pointers of an unordered_map survive rehashing).
  std::uint64_t m_last_key = ~std::uint64_t{0};
  block_settings* m_last = nullptr;
};

}  // namespace sidecore::client
