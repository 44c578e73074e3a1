// select-file positions: kept per index block, checked once, turned into HDF5 selections.
#include "plugins/hdf5/index_map.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "common/error.hpp"
#include "plugins/hdf5/store_internals.hpp"

namespace sidecore::plugins::hdf5 {

namespace {

// Above this many runs a union of hyperslabs costs HDF5 more to build than a point list.
constexpr std::size_t max_hyperslab_runs = 256;

template <typename T>
void widen(const void* data, std::size_t count, std::vector<std::int64_t>& out) {
  const T* values = static_cast<const T*>(data);
  out.resize(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<std::int64_t>(values[i]);
}

block_positions read_positions(const config::variable& var, const config::layout& layout,
                               const block_view& block) {
  const std::size_t bytes = element_type_info(layout.type).bytes;
  const std::string problem = block_problem(var, block, bytes);
  if (!problem.empty()) throw storage_error("HDF5 store: index " + problem);
  const auto count = static_cast<std::size_t>(element_count(block.dims));
  block_positions p;
  p.iteration = block.iteration;
  switch (layout.type) {
    case config::element_type::int8: widen<std::int8_t>(block.data, count, p.values); break;
    case config::element_type::int16: widen<std::int16_t>(block.data, count, p.values); break;
    case config::element_type::int32: widen<std::int32_t>(block.data, count, p.values); break;
    case config::element_type::int64: widen<std::int64_t>(block.data, count, p.values); break;
    default:
      throw storage_error("HDF5 store: index variable \"" + var.name +
                          "\" does not have an integer layout");
  }
  p.order.resize(count);
  std::iota(p.order.begin(), p.order.end(), std::size_t{0});
  const auto& v = p.values;
  if (!std::is_sorted(v.begin(), v.end())) {
    std::sort(p.order.begin(), p.order.end(),
              [&v](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  }
  for (std::size_t k = 0; k < count; ++k) {
    const std::int64_t value = v[p.order[k]];
    if (k == 0) {
      p.runs = 1;
      continue;
    }
    const std::int64_t before = v[p.order[k - 1]];
    if (value == before && p.duplicate < 0) p.duplicate = value;
    if (value != before + 1) ++p.runs;
  }
  if (count > 0) {
    p.smallest = v[p.order.front()];
    p.largest = v[p.order.back()];
  }
  return p;
}

}  // namespace

void index_map::update(std::size_t variable, const variable_blocks& index) {
  if (index.blocks.empty()) return;
  for (const block_view* block : index.blocks) {
    m_blocks[{variable, block->source, block->block_id}] =
        read_positions(*index.var, *index.layout, *block);
  }
  ++m_generations[variable];
}

const block_positions* index_map::find(std::size_t variable, std::int32_t source,
                                       std::int32_t block) const {
  const auto it = m_blocks.find({variable, source, block});
  return it == m_blocks.end() ? nullptr : &it->second;
}

std::uint64_t index_map::generation(std::size_t variable) const {
  const auto it = m_generations.find(variable);
  return it == m_generations.end() ? 0 : it->second;
}

void select_positions(hid_t file_space, const block_positions& p,
                      const std::vector<hsize_t>& global, const call_site& site) {
  const std::size_t count = p.values.size();
  if (global.size() == 1 && p.runs <= max_hyperslab_runs) {
    check_status(H5Sselect_none(file_space), "H5Sselect_none", site);
    std::size_t k = 0;
    while (k < count) {
      std::size_t end = k + 1;
      while (end < count && p.values[p.order[end]] == p.values[p.order[end - 1]] + 1) ++end;
      const hsize_t start = static_cast<hsize_t>(p.values[p.order[k]]);
      const hsize_t length = end - k;
      check_status(H5Sselect_hyperslab(file_space, H5S_SELECT_OR, &start, nullptr, &length,
                                       nullptr),
                   "H5Sselect_hyperslab", site);
      k = end;
    }
    return;
  }
  // Points: each linear position unravelled into the dataset's extents (C order).
  const std::size_t ndims = global.size();
  std::vector<hsize_t> coordinates(count * ndims);
  for (std::size_t k = 0; k < count; ++k) {
    auto linear = static_cast<hsize_t>(p.values[p.order[k]]);
    for (std::size_t d = ndims; d-- > 0;) {
      coordinates[k * ndims + d] = linear % global[d];
      linear /= global[d];
    }
  }
  check_status(H5Sselect_elements(file_space, H5S_SELECT_SET, count, coordinates.data()),
               "H5Sselect_elements", site);
}

std::vector<unsigned char> gather_in_position_order(const void* data, std::size_t element_bytes,
                                                    const block_positions& p) {
  const std::size_t count = p.order.size();
  std::vector<unsigned char> out(count * element_bytes);
  const auto* in = static_cast<const unsigned char*>(data);
  switch (element_bytes) {
    case 8:
      for (std::size_t k = 0; k < count; ++k) std::memcpy(&out[k * 8], in + p.order[k] * 8, 8);
      break;
    case 4:
      for (std::size_t k = 0; k < count; ++k) std::memcpy(&out[k * 4], in + p.order[k] * 4, 4);
      break;
    default:
      for (std::size_t k = 0; k < count; ++k)
        std::memcpy(&out[k * element_bytes], in + p.order[k] * element_bytes, element_bytes);
  }
  return out;
}

}  // namespace sidecore::plugins::hdf5
