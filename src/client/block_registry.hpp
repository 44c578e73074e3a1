// What a client knows about each of its blocks: the position and extents the program set for
// it (kept until changed, as damaris_set_position's position is), and whether it was handed
// over in the current iteration. Block ids below <domains count> live in dense arrays, so the
// classic write path allocates nothing; any other id (a client may write any number of blocks)
// lives in hash tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sidecore::client {

struct block_settings {
  std::vector<std::int64_t> position;  // C order; empty: zeros
  std::vector<std::int64_t> extents;   // C order; empty: the layout's
  std::uint64_t bytes = 0;             // of the extents, when set
};

class block_registry {
 public:
  block_registry(std::size_t variables, int domains);

  // The settings of a block, or nullptr when the program set nothing for it.
  const block_settings* find(std::size_t variable, std::int32_t block) const;
  // The settings of a block, created empty when missing.
  block_settings& settings_of(std::size_t variable, std::int32_t block);

  bool handed_over(std::size_t variable, std::int32_t block, int iteration) const;
  void mark_handed_over(std::size_t variable, std::int32_t block, int iteration);
  // The iteration ended: every block may be handed over again.
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
  std::vector<block_settings> m_dense_settings;   // variable * domains + block
  std::vector<bool> m_dense_set;                  // the program set something for it
  std::vector<int> m_dense_handed_over;           // last iteration handed over, or -1
  std::unordered_map<std::uint64_t, block_settings> m_sparse_settings;
  std::unordered_set<std::uint64_t> m_sparse_handed_over;  // in the current iteration
};

}  // namespace sidecore::client
