// Small HDF5 helpers shared by the store's writers: dataspaces, attributes, link properties.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "plugins/hdf5/hdf5_handle.hpp"

namespace sidecore::plugins::hdf5 {

// A simple dataspace of the given extents; a scalar one when dims is empty.
dataspace_handle make_simple_space(const std::vector<hsize_t>& dims, const call_site& site);

// Writes one attribute (replacing none: the name must be new); shape empty means a scalar.
void write_attribute(hid_t object, const std::string& object_path, const char* name, hid_t type,
                     const std::vector<hsize_t>& shape, const void* value, const std::string& file);
void write_int_attribute(hid_t object, const std::string& object_path, const char* name,
                         std::int32_t value, const std::string& file);
void write_double_attribute(hid_t object, const std::string& object_path, const char* name,
                            double value, const std::string& file);
void write_int64_array_attribute(hid_t object, const std::string& object_path, const char* name,
                                 const std::vector<std::int64_t>& values, const std::string& file);
// An incomplete iteration's file: the root attribute "clients_left_out" (int32, the client
// indices that dropped data of it, stopped before ending it or never ended it), when any.
void write_clients_left_out(hid_t file_id, const std::vector<std::int32_t>& clients,
                            const std::string& file);
// An integer attribute's values, converted by HDF5 to T (std::int32_t or std::int64_t); empty
// when the attribute is absent. Throws storage_error naming `site` when it cannot be read.
template <typename T>
std::vector<T> read_int_array_attribute(hid_t object, const char* name, const call_site& site);
// Fixed-length, null-terminated ASCII: the form h5py and Damaris-era readers decode directly.
void write_string_attribute(hid_t object, const std::string& object_path, const char* name,
                            const std::string& value, const std::string& file);

// Link creation properties that create the groups of names like "coordinates/x2d".
property_list_handle make_intermediate_group_lcpl(const call_site& site);

}  // namespace sidecore::plugins::hdf5
