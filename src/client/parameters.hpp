// This process's parameter values and the layouts evaluated with them. Setting a parameter
// re-evaluates exactly the layouts that read it, all or nothing.
#pragma once

#include <cstdint>
#include <memory_resource>
#include <string_view>
#include <vector>

#include "client/extent_list.hpp"
#include "config/model.hpp"

namespace sidecore::client {

struct evaluated_layout {
  extent_list dims;
  extent_list global_dims;
  // Ghost widths per dimension (empty when none), evaluated once with the initial parameter
  // values, as the stores use them.
  extent_list ghosts_before;
  extent_list ghosts_after;
  config::element_type type = config::element_type::int8;
  std::uint64_t bytes = 0;
  bool too_large = false;  // the extents' byte count does not fit in 64 bits
};

class parameters {
 public:
  // The evaluated layouts are allocated from memory (the client's arena: its calls read them).
  explicit parameters(const config::model& model,
                      std::pmr::memory_resource* memory = std::pmr::get_default_resource());

  // damaris_parameter_get/set semantics; throw error with the Damaris code.
  void get(std::string_view name, void* buffer, unsigned size) const;
  void set(std::string_view name, const void* buffer, unsigned size);

  const evaluated_layout& layout(std::size_t index) const noexcept { return m_layouts[index]; }

 private:
  evaluated_layout evaluate(std::size_t layout, const std::vector<std::int64_t>& values) const;
  std::size_t index_of(std::string_view name) const;

  const config::model& m_model;
  std::vector<std::int64_t> m_values;          // integer parameters (expressions read them)
  std::vector<std::int64_t> m_initial_values;  // as in the XML: ghost widths read these
  std::vector<double> m_reals;                 // float/double parameters
  std::pmr::vector<evaluated_layout> m_layouts;
  std::vector<std::vector<std::size_t>> m_dependents;  // per parameter: layouts reading it
};

}  // namespace sidecore::client
