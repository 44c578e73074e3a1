#include "client/block_registry.hpp"

#include <algorithm>

namespace sidecore::client {

block_registry::block_registry(std::size_t variables, int domains)
    : m_domains(std::max(1, domains)),
      m_dense_settings(variables * static_cast<std::size_t>(m_domains)),
      m_dense_set(m_dense_settings.size(), false),
      m_dense_handed_over(m_dense_settings.size(), -1) {}

const block_settings* block_registry::find(std::size_t variable, std::int32_t block) const {
  if (dense(block)) {
    const std::size_t i = dense_index(variable, block);
    return m_dense_set[i] ? &m_dense_settings[i] : nullptr;
  }
  auto it = m_sparse_settings.find(key(variable, block));
  return it == m_sparse_settings.end() ? nullptr : &it->second;
}

block_settings& block_registry::settings_of(std::size_t variable, std::int32_t block) {
  if (dense(block)) {
    const std::size_t i = dense_index(variable, block);
    m_dense_set[i] = true;
    return m_dense_settings[i];
  }
  return m_sparse_settings[key(variable, block)];
}

bool block_registry::handed_over(std::size_t variable, std::int32_t block, int iteration) const {
  if (dense(block)) return m_dense_handed_over[dense_index(variable, block)] == iteration;
  return m_sparse_handed_over.count(key(variable, block)) != 0;
}

void block_registry::mark_handed_over(std::size_t variable, std::int32_t block, int iteration) {
  if (dense(block)) {
    m_dense_handed_over[dense_index(variable, block)] = iteration;
    return;
  }
  m_sparse_handed_over.insert(key(variable, block));
}

void block_registry::end_iteration() {
  if (!m_sparse_handed_over.empty()) m_sparse_handed_over.clear();
}

}  // namespace sidecore::client
