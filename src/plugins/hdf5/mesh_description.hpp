// The meshes of a configuration as a JSON text stored with the data, so that a reader can
// rebuild them (above all unstructured meshes, whose pieces are ordinary variables).
#pragma once

#include <hdf5.h>

#include <string>

#include "config/model.hpp"

namespace sidecore::plugins::hdf5 {

// {"<mesh>": {"type": "unstructured", "topology": 3, "coordinates": ["g/xyz"],
//             "vertex_global_id": {"variable": "g/gid", "offset": -1}, ...}, ...}
// Variables are full names (the datasets' paths, before /P<source> in file-per-core files).
// "" when the configuration declares no mesh.
std::string mesh_description(const config::model& model);

// Writes it as the string attribute "meshes" of the file's root group (nothing without meshes).
void write_mesh_description(hid_t file, const config::model& model, const std::string& path);

}  // namespace sidecore::plugins::hdf5
