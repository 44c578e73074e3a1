#include "client/block_registry.hpp"

#include <algorithm>

#include "common/hot_path.hpp"

namespace sidecore::client {

block_registry::block_registry(std::size_t variables, int domains,
                               std::pmr::memory_resource* memory)
    : m_domains(std::max(1, domains)),
      m_dense(variables * static_cast<std::size_t>(m_domains), memory) {}

SIDECORE_HOT_PATH block_settings* block_registry::find(std::size_t variable, std::int32_t block) {
  if (dense(block)) return &m_dense[dense_index(variable, block)];
  const std::uint64_t k = key(variable, block);
  if (k == m_last_key) return m_last;
  auto it = m_sparse.find(k);
  if (it == m_sparse.end()) return nullptr;
  m_last_key = k;
  m_last = &it->second;
  return m_last;
}

SIDECORE_HOT_PATH block_settings& block_registry::settings_of(std::size_t variable,
                                                              std::int32_t block) {
  if (dense(block)) return m_dense[dense_index(variable, block)];
  const std::uint64_t k = key(variable, block);
  if (k != m_last_key) {
    m_last = &m_sparse[k];
    m_last_key = k;
  }
  return *m_last;
}

SIDECORE_HOT_PATH void block_registry::end_iteration() {
  // Written blocks with no settings of their own would otherwise pile up when a code numbers
  // its blocks differently every iteration.
  for (auto it = m_sparse.begin(); it != m_sparse.end();) {
    if (it->second.position.empty() && it->second.extents.empty())
      it = m_sparse.erase(it);
    else
      ++it;
  }
  m_last_key = ~std::uint64_t{0};
  m_last = nullptr;
}

}  // namespace sidecore::client
