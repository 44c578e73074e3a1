// select-file positions: kept per index block, sorted once, and the two ways a placed block
// is written (by shares over the writers for 1-D datasets, as points otherwise).
#include "plugins/hdf5/index_map.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "common/error.hpp"
#include "common/mpi_handles.hpp"
#include "plugins/hdf5/store_internals.hpp"

namespace sidecore::plugins::hdf5 {

namespace {

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
    case config::element_type::int8:
      widen<std::int8_t>(block.data, count, p.values);
      break;
    case config::element_type::int16:
      widen<std::int16_t>(block.data, count, p.values);
      break;
    case config::element_type::int32:
      widen<std::int32_t>(block.data, count, p.values);
      break;
    case config::element_type::int64:
      widen<std::int64_t>(block.data, count, p.values);
      break;
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
  for (std::size_t k = 1; k < count && p.duplicate < 0; ++k) {
    if (v[p.order[k]] == v[p.order[k - 1]]) p.duplicate = v[p.order[k]];
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

void write_by_shares(hid_t dataset, hid_t file_type, hsize_t total,
                     const std::vector<mapped_block>& blocks, std::size_t element_bytes,
                     MPI_Comm comm, hid_t dxpl, const call_site& site) {
  int size = 1, rank = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const auto writers = static_cast<hsize_t>(size);
  const hsize_t share = (total + writers - 1) / writers;
  const auto owner = [share](std::int64_t position) {
    return static_cast<std::size_t>(static_cast<hsize_t>(position) / share);
  };
  // Elements per destination, then each block's elements in position order, which groups
  // them by destination already.
  std::vector<int> send_counts(static_cast<std::size_t>(size), 0);
  for (const mapped_block& b : blocks)
    for (const std::int64_t position : b.positions->values) ++send_counts[owner(position)];
  std::vector<int> send_offsets(static_cast<std::size_t>(size), 0);
  for (std::size_t w = 1; w < send_offsets.size(); ++w)
    send_offsets[w] = send_offsets[w - 1] + send_counts[w - 1];
  const auto sent = static_cast<std::size_t>(send_offsets.back() + send_counts.back());
  std::vector<std::int64_t> send_positions(sent);
  std::vector<unsigned char> send_values(sent * element_bytes);
  std::vector<int> cursor = send_offsets;
  for (const mapped_block& b : blocks) {
    const block_positions& p = *b.positions;
    const auto* data = static_cast<const unsigned char*>(b.data);
    for (const std::size_t element : p.order) {
      const std::int64_t position = p.values[element];
      const auto slot = static_cast<std::size_t>(cursor[owner(position)]++);
      send_positions[slot] = position;
      std::memcpy(&send_values[slot * element_bytes], data + element * element_bytes,
                  element_bytes);
    }
  }
  std::vector<int> receive_counts(static_cast<std::size_t>(size), 0);
  check_mpi(MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, comm),
            "MPI_Alltoall");
  std::vector<int> receive_offsets(static_cast<std::size_t>(size), 0);
  for (std::size_t w = 1; w < receive_offsets.size(); ++w)
    receive_offsets[w] = receive_offsets[w - 1] + receive_counts[w - 1];
  const auto received = static_cast<std::size_t>(receive_offsets.back() + receive_counts.back());
  std::vector<std::int64_t> receive_positions(received);
  std::vector<unsigned char> receive_values(received * element_bytes);
  check_mpi(MPI_Alltoallv(send_positions.data(), send_counts.data(), send_offsets.data(),
                          MPI_INT64_T, receive_positions.data(), receive_counts.data(),
                          receive_offsets.data(), MPI_INT64_T, comm),
            "MPI_Alltoallv");
  MPI_Datatype element_type = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_contiguous(static_cast<int>(element_bytes), MPI_BYTE, &element_type),
            "MPI_Type_contiguous");
  check_mpi(MPI_Type_commit(&element_type), "MPI_Type_commit");
  const int rc = MPI_Alltoallv(send_values.data(), send_counts.data(), send_offsets.data(),
                               element_type, receive_values.data(), receive_counts.data(),
                               receive_offsets.data(), element_type, comm);
  MPI_Type_free(&element_type);
  check_mpi(rc, "MPI_Alltoallv");

  // This writer's share, [first, first + length).
  const hsize_t first = std::min(total, static_cast<hsize_t>(rank) * share);
  const hsize_t length = std::min(total, first + share) - first;
  std::vector<unsigned char> range(std::max<hsize_t>(length, 1) * element_bytes, 0);
  for (std::size_t k = 0; k < received; ++k) {
    const auto at = static_cast<std::size_t>(static_cast<hsize_t>(receive_positions[k]) - first);
    std::memcpy(&range[at * element_bytes], &receive_values[k * element_bytes], element_bytes);
  }
  const dataspace_handle file_space(check_id(H5Dget_space(dataset), "H5Dget_space", site));
  const hsize_t memory_extent = std::max<hsize_t>(length, 1);
  const dataspace_handle memory_space(
      check_id(H5Screate_simple(1, &memory_extent, nullptr), "H5Screate_simple", site));
  if (length > 0) {
    check_status(
        H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &first, nullptr, &length, nullptr),
        "H5Sselect_hyperslab", site);
  } else {
    check_status(H5Sselect_none(file_space.get()), "H5Sselect_none", site);
    check_status(H5Sselect_none(memory_space.get()), "H5Sselect_none", site);
  }
  check_status(
      H5Dwrite(dataset, file_type, memory_space.get(), file_space.get(), dxpl, range.data()),
      "H5Dwrite", site);
}

}  // namespace sidecore::plugins::hdf5
