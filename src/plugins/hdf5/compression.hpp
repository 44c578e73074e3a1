// Lossless HDF5 filters chosen in the XML, applied per dataset with chunking.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "plugins/hdf5/hdf5_handle.hpp"

namespace sidecore::plugins::hdf5 {

enum class filter_kind { none, deflate, zstd, blosc, lz4, bzip2 };

struct compression {
  filter_kind filter = filter_kind::none;
  int level = 0;        // meaning depends on the filter; 0 when it takes none
  bool shuffle = true;  // byte shuffle before the filter (not for none)
  // Store option Checksum: a Fletcher-32 checksum on every chunk, checked by HDF5 at each
  // read (flipped bytes on disk make the read fail instead of returning wrong values).
  bool checksum = false;
};

// Whether datasets written with c are chunked and filtered (compression or checksum).
inline bool filtered(const compression& c) { return c.filter != filter_kind::none || c.checksum; }

// Parses "none", "deflate", "deflate:4", "zstd:3", "blosc:5", "lz4", "bzip2:9". Throws
// config_error with `where` and the valid forms. Filters other than deflate must be
// available to HDF5 as plugins (HDF5_PLUGIN_PATH): checked here, with a clear message.
compression parse_compression(const std::string& text, const std::string& where);

std::string compression_text(const compression& c);  // "deflate:4", "none"

// Dataset creation properties: chunked with the given chunk extents and the filters, or the
// default (contiguous) properties when nothing is filtered or the chunk is empty.
property_list_handle make_dataset_properties(const compression& c,
                                             const std::vector<hsize_t>& chunk,
                                             std::size_t element_size, const call_site& site);

}  // namespace sidecore::plugins::hdf5
