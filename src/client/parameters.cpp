// Parameter values and evaluated layouts.
#include "client/parameters.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "common/text.hpp"

namespace sidecore::client {

parameters::parameters(const config::model& model, std::pmr::memory_resource* memory)
    : m_model(model), m_layouts(memory) {
  m_layouts.reserve(model.layouts.size());
  for (const config::parameter& p : model.parameters) {
    m_values.push_back(p.int_value);
    m_reals.push_back(p.real_value);
  }
  m_initial_values = m_values;
  m_dependents.resize(model.parameters.size());
  for (std::size_t l = 0; l < model.layouts.size(); ++l) {
    m_layouts.push_back(evaluate(l, m_values));
    std::vector<std::size_t> reads;
    for (const auto& e : model.layouts[l].dimensions)
      for (std::size_t p : e.parameters()) reads.push_back(p);
    for (const auto& e : model.layouts[l].global_dimensions)
      for (std::size_t p : e.parameters()) reads.push_back(p);
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    for (std::size_t p : reads) m_dependents[p].push_back(l);
  }
}

std::size_t parameters::index_of(std::string_view name) const {
  std::size_t p = m_model.find_parameter(name);
  if (p == config::model::npos)
    throw error(DAMARIS_UNDEFINED_PARAMETER,
                "no parameter " + single_quoted(name) + " in " + m_model.file);
  return p;
}

evaluated_layout parameters::evaluate(std::size_t index,
                                      const std::vector<std::int64_t>& values) const {
  const config::layout& l = m_model.layouts[index];
  evaluated_layout e;
  e.type = l.type;
  for (const config::expression& d : l.dimensions) e.dims.push_back(d.evaluate(values));
  for (const config::expression& d : l.global_dimensions)
    e.global_dims.push_back(d.evaluate(values));
  for (const auto& [before, after] : l.ghosts) {
    e.ghosts_before.push_back(before.evaluate(m_initial_values));
    e.ghosts_after.push_back(after.evaluate(m_initial_values));
  }
  const auto bytes =
      config::array_bytes(e.dims.data(), e.dims.size(), config::element_size(l.type));
  e.too_large = !bytes;
  e.bytes = bytes.value_or(UINT64_MAX);
  return e;
}

void parameters::get(std::string_view name, void* buffer, unsigned size) const {
  std::size_t p = index_of(name);
  if (!buffer)
    throw argument_error("damaris_parameter_get(" + single_quoted(name) + "): buffer is NULL");
  const config::parameter& param = m_model.parameters[p];
  const std::size_t bytes = config::element_size(param.type);
  if (size < bytes)
    throw argument_error("damaris_parameter_get(" + single_quoted(name) + "): buffer of " +
                         std::to_string(size) + " bytes is too small for a " +
                         config::element_type_name(param.type) + " (" + std::to_string(bytes) +
                         " bytes)");
  const std::int64_t i = m_values[p];
  const double d = m_reals[p];
  switch (param.type) {
    case config::element_type::int8: {
      auto x = static_cast<std::int8_t>(i);
      std::memcpy(buffer, &x, 1);
      break;
    }
    case config::element_type::int16: {
      auto x = static_cast<std::int16_t>(i);
      std::memcpy(buffer, &x, 2);
      break;
    }
    case config::element_type::int32: {
      auto x = static_cast<std::int32_t>(i);
      std::memcpy(buffer, &x, 4);
      break;
    }
    case config::element_type::int64:
      std::memcpy(buffer, &i, 8);
      break;
    case config::element_type::float32: {
      auto x = static_cast<float>(d);
      std::memcpy(buffer, &x, 4);
      break;
    }
    case config::element_type::float64:
      std::memcpy(buffer, &d, 8);
      break;
  }
}

void parameters::set(std::string_view name, const void* buffer, unsigned size) {
  std::size_t p = index_of(name);
  if (!buffer)
    throw argument_error("damaris_parameter_set(" + single_quoted(name) + "): buffer is NULL");
  const config::parameter& param = m_model.parameters[p];
  const std::size_t bytes = config::element_size(param.type);
  if (size != bytes)
    throw argument_error("damaris_parameter_set(" + single_quoted(name) +
                         "): " + std::to_string(size) + " bytes given, but the parameter is a " +
                         config::element_type_name(param.type) + " (" + std::to_string(bytes) +
                         " bytes)");
  // Work on copies: if a dependent layout cannot be evaluated with the new value (division by
  // zero...), the call fails and nothing changes.
  std::vector<std::int64_t> values = m_values;
  double real = m_reals[p];
  switch (param.type) {
    case config::element_type::int8: {
      std::int8_t x;
      std::memcpy(&x, buffer, 1);
      values[p] = x;
      break;
    }
    case config::element_type::int16: {
      std::int16_t x;
      std::memcpy(&x, buffer, 2);
      values[p] = x;
      break;
    }
    case config::element_type::int32: {
      std::int32_t x;
      std::memcpy(&x, buffer, 4);
      values[p] = x;
      break;
    }
    case config::element_type::int64:
      std::memcpy(&values[p], buffer, 8);
      break;
    case config::element_type::float32: {
      float x;
      std::memcpy(&x, buffer, 4);
      real = x;
      break;
    }
    case config::element_type::float64:
      std::memcpy(&real, buffer, 8);
      break;
  }
  std::vector<evaluated_layout> updated;
  for (std::size_t l : m_dependents[p]) updated.push_back(evaluate(l, values));
  m_values = std::move(values);
  m_reals[p] = real;
  for (std::size_t i = 0; i < updated.size(); ++i) m_layouts[m_dependents[p][i]] = updated[i];
}

}  // namespace sidecore::client
