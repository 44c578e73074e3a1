// Ghost removal and precision reduction, done in memory so that HDF5 always writes a
// contiguous buffer of the stored type: type conversion inside H5Dwrite would turn parallel
// collective writes into independent ones, which filtered (compressed) datasets refuse.
#include "plugins/hdf5/block_data.hpp"

#include <cstring>
#include <string>

#include "common/error.hpp"

namespace sidecore::plugins::hdf5 {

stored_type stored_type_of(config::element_type type, precision reduction) noexcept {
  switch (type) {
    case config::element_type::int8:
      return stored_type::int8;
    case config::element_type::int16:
      return stored_type::int16;
    case config::element_type::int32:
      return stored_type::int32;
    case config::element_type::int64:
      return stored_type::int64;
    case config::element_type::float32:
      return reduction == precision::half ? stored_type::float16 : stored_type::float32;
    case config::element_type::float64:
      return reduction == precision::half     ? stored_type::float16
             : reduction == precision::single ? stored_type::float32
                                              : stored_type::float64;
  }
  return stored_type::int8;
}

std::size_t stored_size(stored_type type) noexcept {
  switch (type) {
    case stored_type::int8:
      return 1;
    case stored_type::int16:
    case stored_type::float16:
      return 2;
    case stored_type::int32:
    case stored_type::float32:
      return 4;
    case stored_type::int64:
    case stored_type::float64:
      return 8;
  }
  return 1;
}

bool is_float(stored_type type) noexcept {
  return type == stored_type::float16 || type == stored_type::float32 ||
         type == stored_type::float64;
}

const char* stored_type_name(stored_type type) noexcept {
  switch (type) {
    case stored_type::int8:
      return "int8";
    case stored_type::int16:
      return "int16";
    case stored_type::int32:
      return "int32";
    case stored_type::int64:
      return "int64";
    case stored_type::float16:
      return "float16";
    case stored_type::float32:
      return "float32";
    case stored_type::float64:
      return "float64";
  }
  return "?";
}

stored_hdf5_type::stored_hdf5_type(stored_type type) {
  switch (type) {
    case stored_type::int8:
      m_predefined = H5T_NATIVE_INT8;
      return;
    case stored_type::int16:
      m_predefined = H5T_NATIVE_INT16;
      return;
    case stored_type::int32:
      m_predefined = H5T_NATIVE_INT32;
      return;
    case stored_type::int64:
      m_predefined = H5T_NATIVE_INT64;
      return;
    case stored_type::float32:
      m_predefined = H5T_NATIVE_FLOAT;
      return;
    case stored_type::float64:
      m_predefined = H5T_NATIVE_DOUBLE;
      return;
    case stored_type::float16:
      break;
  }
  // binary16: sign bit 15, 5 exponent bits at 10 (bias 15), 10 mantissa bits. The fields
  // are set before shrinking the size, since a float32 copy has them beyond 16 bits.
  const std::string where = "<float16 type>";
  const call_site site{where, {}};
  m_owned = datatype_handle(check_id(H5Tcopy(H5T_IEEE_F32LE), "H5Tcopy", site));
  const hid_t id = m_owned.get();
  check_status(H5Tset_fields(id, 15, 10, 5, 0, 10), "H5Tset_fields", site);
  check_status(H5Tset_size(id, 2), "H5Tset_size", site);
  check_status(H5Tset_ebias(id, 15), "H5Tset_ebias", site);
}

std::vector<std::int64_t> interior_dims(const config::variable& var, const block_view& block,
                                        const ghost_widths& ghosts) {
  std::vector<std::int64_t> dims = block.dims;
  if (ghosts.empty()) return dims;
  if (ghosts.before.size() != dims.size()) {
    throw storage_error("HDF5 store: variable \"" + var.name + "\" has " +
                        std::to_string(dims.size()) + " dimensions but its layout gives " +
                        std::to_string(ghosts.before.size()) + " ghost zones");
  }
  for (std::size_t d = 0; d < dims.size(); ++d) {
    dims[d] -= ghosts.before[d] + ghosts.after[d];
    if (dims[d] < 0 || ghosts.before[d] < 0 || ghosts.after[d] < 0) {
      throw storage_error("HDF5 store: variable \"" + var.name + "\": ghost zones " +
                          std::to_string(ghosts.before[d]) + ':' + std::to_string(ghosts.after[d]) +
                          " do not fit in dimension " + std::to_string(d) + " of extent " +
                          std::to_string(block.dims[d]));
    }
  }
  return dims;
}

std::uint16_t to_half(double value) noexcept {
  // Works on the double's bits, so that a double is rounded once (through a float it would be
  // rounded twice, and a value just past a halfway point could fall back to it).
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  const auto sign = static_cast<std::uint16_t>((bits >> 48) & 0x8000u);
  const std::uint64_t magnitude = bits & 0x7fffffffffffffffull;
  constexpr std::uint64_t infinity = 0x7ff0000000000000ull;
  if (magnitude >= infinity) {  // infinity, or NaN (kept quiet)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (magnitude > infinity ? 0x200u : 0u));
  }
  const int exponent = static_cast<int>(magnitude >> 52) - 1023;
  std::uint64_t mantissa = magnitude & 0xfffffffffffffull;
  if (exponent > 15) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (exponent >= -14) {
    // Normal: keep 10 of 52 mantissa bits; a carry out of the mantissa correctly bumps the
    // exponent, up to infinity.
    std::uint64_t half = (static_cast<std::uint64_t>(exponent + 15) << 10) | (mantissa >> 42);
    const std::uint64_t rest = mantissa & ((std::uint64_t{1} << 42) - 1);
    const std::uint64_t halfway = std::uint64_t{1} << 41;
    if (rest > halfway || (rest == halfway && (half & 1u) != 0)) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  // Subnormal: the value counted in units of 2^-24 is (1.mantissa * 2^52) >> shift.
  mantissa |= std::uint64_t{1} << 52;
  const int shift = 28 - exponent;
  if (shift >= 54) return sign;
  std::uint64_t half = mantissa >> shift;
  const std::uint64_t rest = mantissa & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t halfway = std::uint64_t{1} << (shift - 1);
  if (rest > halfway || (rest == halfway && (half & 1u) != 0)) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

namespace {

// Copies or converts count elements from source (layout type) to target (stored type).
void convert_run(const unsigned char* source, config::element_type from, unsigned char* target,
                 stored_type to, std::size_t count) {
  const bool same = stored_type_of(from, precision::full) == to;
  if (same) {
    std::memcpy(target, source, count * stored_size(to));
    return;
  }
  for (std::size_t i = 0; i < count; ++i) {
    double value = 0.0;  // a float converts to double exactly
    if (from == config::element_type::float64) {
      std::memcpy(&value, source + i * sizeof value, sizeof value);
    } else {
      float single = 0.0f;
      std::memcpy(&single, source + i * sizeof single, sizeof single);
      value = single;
    }
    if (to == stored_type::float32) {
      const auto single = static_cast<float>(value);
      std::memcpy(target + i * sizeof single, &single, sizeof single);
    } else {
      const std::uint16_t half = to_half(value);
      std::memcpy(target + i * sizeof half, &half, sizeof half);
    }
  }
}

}  // namespace

prepared_block prepare_block(const config::variable& var, const block_view& block,
                             const ghost_widths& ghosts, config::element_type type,
                             precision reduction) {
  prepared_block out;
  out.view = &block;
  out.dims = interior_dims(var, block, ghosts);
  out.position =
      block.position.empty() ? std::vector<std::int64_t>(block.dims.size(), 0) : block.position;
  const stored_type target = stored_type_of(type, reduction);
  std::uint64_t count = 1;
  for (const std::int64_t d : out.dims) count *= static_cast<std::uint64_t>(d);
  out.bytes = count * stored_size(target);
  const bool convert = target != stored_type_of(type, precision::full);
  if (ghosts.empty() && !convert) {
    out.data = block.data;
    return out;
  }
  out.staging.resize(static_cast<std::size_t>(out.bytes));
  out.data = out.staging.data();
  if (count == 0) return out;

  const std::size_t source_size = config::element_size(type);
  const std::size_t ndims = block.dims.size();
  if (ndims == 0) {
    convert_run(static_cast<const unsigned char*>(block.data), type, out.staging.data(), target, 1);
    return out;
  }
  // Element strides of the full block (C order), then one run per interior row.
  std::vector<std::uint64_t> strides(ndims, 1);
  for (std::size_t d = ndims - 1; d > 0; --d) {
    strides[d - 1] = strides[d] * static_cast<std::uint64_t>(block.dims[d]);
  }
  const auto before = [&](std::size_t d) -> std::uint64_t {
    return ghosts.empty() ? 0 : static_cast<std::uint64_t>(ghosts.before[d]);
  };
  const auto row = static_cast<std::size_t>(out.dims[ndims - 1]);
  std::vector<std::int64_t> index(ndims, 0);  // interior index of the current row
  const auto* source = static_cast<const unsigned char*>(block.data);
  unsigned char* target_pointer = out.staging.data();
  const std::size_t target_row_bytes = row * stored_size(target);
  for (;;) {
    std::uint64_t offset = 0;
    for (std::size_t d = 0; d < ndims; ++d) {
      offset += (static_cast<std::uint64_t>(index[d]) + before(d)) * strides[d];
    }
    convert_run(source + offset * source_size, type, target_pointer, target, row);
    target_pointer += target_row_bytes;
    // Next row: odometer over every dimension but the last.
    std::size_t d = ndims - 1;
    while (d > 0) {
      --d;
      if (++index[d] < out.dims[d]) break;
      index[d] = 0;
      if (d == 0) return out;
    }
    if (ndims == 1) return out;
  }
}

}  // namespace sidecore::plugins::hdf5
