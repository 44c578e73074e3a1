// Dataspace and attribute helpers; every call checked and reported with its file and object.
#include "plugins/hdf5/hdf5_attributes.hpp"

namespace sidecore::plugins::hdf5 {

dataspace_handle make_simple_space(const std::vector<hsize_t>& dims, const call_site& site) {
  if (dims.empty()) {
    return dataspace_handle(check_id(H5Screate(H5S_SCALAR), "H5Screate", site));
  }
  return dataspace_handle(
      check_id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
               "H5Screate_simple", site));
}

void write_attribute(hid_t object, const std::string& object_path, const char* name, hid_t type,
                     const std::vector<hsize_t>& shape, const void* value,
                     const std::string& file) {
  const std::string label = object_path + " (attribute \"" + name + "\")";
  const call_site site{file, label};
  dataspace_handle space = make_simple_space(shape, site);
  attribute_handle attribute(check_id(
      H5Acreate2(object, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2", site));
  check_status(H5Awrite(attribute.get(), type, value), "H5Awrite", site);
  check_status(attribute.close(), "H5Aclose", site);
}

void write_int_attribute(hid_t object, const std::string& object_path, const char* name,
                         std::int32_t value, const std::string& file) {
  write_attribute(object, object_path, name, H5T_NATIVE_INT32, {}, &value, file);
}

void write_double_attribute(hid_t object, const std::string& object_path, const char* name,
                            double value, const std::string& file) {
  write_attribute(object, object_path, name, H5T_NATIVE_DOUBLE, {}, &value, file);
}

void write_int64_array_attribute(hid_t object, const std::string& object_path, const char* name,
                                 const std::vector<std::int64_t>& values, const std::string& file) {
  write_attribute(object, object_path, name, H5T_NATIVE_INT64, {values.size()}, values.data(),
                  file);
}

template <typename T>
std::vector<T> read_int_array_attribute(hid_t object, const char* name, const call_site& site) {
  const htri_t exists = H5Aexists(object, name);
  if (exists < 0) check_status(-1, "H5Aexists", site);
  if (exists == 0) return {};
  const attribute_handle attribute(check_id(H5Aopen(object, name, H5P_DEFAULT), "H5Aopen", site));
  const dataspace_handle space(check_id(H5Aget_space(attribute.get()), "H5Aget_space", site));
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) check_status(-1, "H5Sget_simple_extent_npoints", site);
  std::vector<T> values(static_cast<std::size_t>(n));
  const hid_t type = sizeof(T) == 8 ? H5T_NATIVE_INT64 : H5T_NATIVE_INT32;
  if (n > 0) check_status(H5Aread(attribute.get(), type, values.data()), "H5Aread", site);
  return values;
}
template std::vector<std::int32_t> read_int_array_attribute(hid_t, const char*, const call_site&);
template std::vector<std::int64_t> read_int_array_attribute(hid_t, const char*, const call_site&);

void write_clients_left_out(hid_t file_id, const std::vector<std::int32_t>& clients,
                            const std::string& file) {
  if (clients.empty()) return;
  write_attribute(file_id, "/", "clients_left_out", H5T_NATIVE_INT32, {clients.size()},
                  clients.data(), file);
}

void write_string_attribute(hid_t object, const std::string& object_path, const char* name,
                            const std::string& value, const std::string& file) {
  const std::string label = object_path + " (attribute \"" + name + "\")";
  const call_site site{file, label};
  datatype_handle type(check_id(H5Tcopy(H5T_C_S1), "H5Tcopy", site));
  check_status(H5Tset_size(type.get(), value.size() + 1), "H5Tset_size", site);
  check_status(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), "H5Tset_strpad", site);
  write_attribute(object, object_path, name, type.get(), {}, value.c_str(), file);
}

property_list_handle make_intermediate_group_lcpl(const call_site& site) {
  property_list_handle lcpl(check_id(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate", site));
  check_status(H5Pset_create_intermediate_group(lcpl.get(), 1), "H5Pset_create_intermediate_group",
               site);
  return lcpl;
}

}  // namespace sidecore::plugins::hdf5
