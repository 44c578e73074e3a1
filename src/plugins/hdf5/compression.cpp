// Filter selection. deflate is built into HDF5; the others are registered filter ids that
// HDF5 loads from its plugin directory when present.
#include "plugins/hdf5/compression.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "common/error.hpp"
#include "common/text.hpp"

namespace sidecore::plugins::hdf5 {

namespace {

struct filter_info {
  filter_kind kind;
  const char* name;
  H5Z_filter_t id;
  int default_level;
  int max_level;  // -1: the filter takes no level
};

// Registered ids from the HDF Group's filter list.
constexpr filter_info filters[] = {
    {filter_kind::deflate, "deflate", H5Z_FILTER_DEFLATE, 4, 9},
    {filter_kind::zstd, "zstd", 32015, 3, 22},
    {filter_kind::blosc, "blosc", 32001, 5, 9},
    {filter_kind::lz4, "lz4", 32004, 0, -1},
    {filter_kind::bzip2, "bzip2", 307, 9, 9},
};

constexpr const char* valid_forms =
    "none, deflate[:0-9] (also gzip), zstd[:1-22], blosc[:0-9], lz4, bzip2[:1-9]";

std::string lower(std::string_view text) { return lowercase(text); }

const filter_info& info_of(filter_kind kind) {
  for (const filter_info& f : filters) {
    if (f.kind == kind) return f;
  }
  return filters[0];
}

}  // namespace

compression parse_compression(const std::string& text, const std::string& where) {
  compression c;
  const std::size_t colon = text.find(':');
  std::string name = lower(text.substr(0, colon));
  if (name == "gzip") name = "deflate";
  if (name == "none" && colon == std::string::npos) return c;
  const filter_info* found = nullptr;
  for (const filter_info& f : filters) {
    if (name == f.name) found = &f;
  }
  if (found == nullptr) {
    throw config_error(where + ": compression \"" + text + "\" is not supported; valid forms are " +
                       valid_forms);
  }
  c.filter = found->kind;
  c.level = found->default_level;
  if (colon != std::string::npos) {
    const std::string level = text.substr(colon + 1);
    const bool digits =
        !level.empty() && level.size() <= 3 && std::all_of(level.begin(), level.end(), [](char ch) {
          return std::isdigit(static_cast<unsigned char>(ch)) != 0;
        });
    if (found->max_level < 0 || !digits || std::stoi(level) > found->max_level) {
      throw config_error(where + ": compression \"" + text +
                         "\" has an invalid level; valid forms are " + valid_forms);
    }
    c.level = std::stoi(level);
  }
  if (H5Zfilter_avail(found->id) <= 0) {
    throw config_error(where + ": compression \"" + text + "\" needs the HDF5 " + found->name +
                       " filter plugin (filter id " + std::to_string(found->id) +
                       "), which HDF5 cannot find; install it for this HDF5 build and set "
                       "HDF5_PLUGIN_PATH, or use deflate");
  }
  return c;
}

std::string compression_text(const compression& c) {
  if (c.filter == filter_kind::none) return "none";
  const filter_info& f = info_of(c.filter);
  return f.max_level < 0 ? std::string(f.name)
                         : std::string(f.name) + ':' + std::to_string(c.level);
}

property_list_handle make_dataset_properties(const compression& c,
                                             const std::vector<hsize_t>& chunk,
                                             std::size_t element_size, const call_site& site) {
  property_list_handle dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", site));
  if (!filtered(c) || chunk.empty()) return dcpl;
  std::vector<hsize_t> extents = chunk;
  // HDF5 chunks must hold fewer than 4 GiB; halve the largest extent until it fits.
  const auto chunk_bytes = [&] {
    hsize_t bytes = element_size;
    for (const hsize_t e : extents) bytes *= e;
    return bytes;
  };
  for (hsize_t& e : extents) e = std::max<hsize_t>(e, 1);
  while (chunk_bytes() >= (hsize_t{1} << 31)) {
    hsize_t& largest = *std::max_element(extents.begin(), extents.end());
    largest = (largest + 1) / 2;
  }
  check_status(H5Pset_chunk(dcpl.get(), static_cast<int>(extents.size()), extents.data()),
               "H5Pset_chunk", site);
  // Unwritten chunks read as zeros; writing fill values first would only cost time (and
  // parallel HDF5 cannot write them into filtered datasets).
  check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time", site);
  if (c.shuffle && element_size > 1 && c.filter != filter_kind::none) {
    check_status(H5Pset_shuffle(dcpl.get()), "H5Pset_shuffle", site);
  }
  const filter_info& f = info_of(c.filter);
  switch (c.filter) {
    case filter_kind::none:
      break;
    case filter_kind::deflate:
      check_status(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(c.level)), "H5Pset_deflate",
                   site);
      break;
    case filter_kind::blosc: {
      // Slots 0-3 are filled by the filter; then level, shuffle (done above), compressor 0.
      const unsigned values[7] = {0, 0, 0, 0, static_cast<unsigned>(c.level), 0, 0};
      check_status(H5Pset_filter(dcpl.get(), f.id, H5Z_FLAG_OPTIONAL, 7, values), "H5Pset_filter",
                   site);
      break;
    }
    case filter_kind::lz4:
      check_status(H5Pset_filter(dcpl.get(), f.id, H5Z_FLAG_OPTIONAL, 0, nullptr), "H5Pset_filter",
                   site);
      break;
    default: {
      const unsigned level = static_cast<unsigned>(c.level);
      check_status(H5Pset_filter(dcpl.get(), f.id, H5Z_FLAG_OPTIONAL, 1, &level), "H5Pset_filter",
                   site);
      break;
    }
  }
  // Last: the checksum covers the bytes as stored, after compression.
  if (c.checksum) check_status(H5Pset_fletcher32(dcpl.get()), "H5Pset_fletcher32", site);
  return dcpl;
}

}  // namespace sidecore::plugins::hdf5
