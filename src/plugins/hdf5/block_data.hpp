// What a block looks like on disk: its interior (ghost zones removed) in the stored type.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/model.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "plugins/store.hpp"

namespace sidecore::plugins::hdf5 {

// Element types as written to files. float16 is IEEE binary16, which h5py reads as float16.
enum class stored_type : std::uint8_t { int8, int16, int32, int64, float16, float32, float64 };

// Precision reduction: full keeps the layout's type; single stores doubles as 32-bit floats;
// half stores doubles and floats as 16-bit floats. Integers are never reduced.
enum class precision { full, single, half };

stored_type stored_type_of(config::element_type type, precision reduction) noexcept;
std::size_t stored_size(stored_type type) noexcept;
bool is_float(stored_type type) noexcept;
const char* stored_type_name(stored_type type) noexcept;  // "float16", "int32", ...

// The HDF5 type of a stored type: the float16 type is built (and closed with this object),
// the others are HDF5's predefined native types.
class stored_hdf5_type {
 public:
  explicit stored_hdf5_type(stored_type type);
  hid_t get() const noexcept { return m_owned.valid() ? m_owned.get() : m_predefined; }

 private:
  datatype_handle m_owned;
  hid_t m_predefined = H5I_INVALID_HID;
};

// Ghost zones of each layout: config::ghost_widths, config::evaluate_ghosts.
using config::evaluate_ghosts;
using config::ghost_widths;

// One block ready to be written: contiguous interior data in the stored type. data points
// either into the block itself (nothing to remove or convert) or into the owned staging copy.
struct prepared_block {
  const block_view* view = nullptr;
  std::vector<std::int64_t> dims;      // interior extents
  std::vector<std::int64_t> position;  // global offset of the interior (never empty for ndims>0)
  const void* data = nullptr;
  std::uint64_t bytes = 0;  // dims product times stored_size
  std::vector<unsigned char> staging;
};

// Interior extents of a block, or throws storage_error when the ghosts leave nothing.
std::vector<std::int64_t> interior_dims(const config::variable& var, const block_view& block,
                                        const ghost_widths& ghosts);

// Removes the ghost zones and converts to the stored type. The block must have been checked
// (enough bytes for its dimensions).
prepared_block prepare_block(const config::variable& var, const block_view& block,
                             const ghost_widths& ghosts, config::element_type type,
                             precision reduction);

// IEEE binary16 bits of a double (or a float, converted exactly), rounded once to nearest
// even (infinity past 65504, subnormals kept).
std::uint16_t to_half(double value) noexcept;

}  // namespace sidecore::plugins::hdf5
