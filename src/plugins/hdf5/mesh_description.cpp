// JSON description of the configuration's meshes, written as the "meshes" root attribute.
#include "plugins/hdf5/mesh_description.hpp"

#include <cstdio>

#include "plugins/hdf5/hdf5_attributes.hpp"

namespace sidecore::plugins::hdf5 {
namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + '"';
}

}  // namespace

std::string mesh_description(const config::model& model) {
  if (model.meshes.empty()) return {};
  std::string json = "{";
  for (std::size_t m = 0; m < model.meshes.size(); ++m) {
    const config::mesh& mesh = model.meshes[m];
    json += (m ? ", " : "") + quoted(mesh.name) + ": {\"type\": " + quoted(mesh.type) +
            ", \"topology\": " + std::to_string(mesh.topology) + ", \"coordinates\": [";
    for (std::size_t c = 0; c < mesh.coordinates.size(); ++c)
      json += (c ? ", " : "") + quoted(mesh.coordinates[c].name);
    json += "]";
    for (const config::mesh_part& part : mesh.parts)
      json += ", " + quoted(part.role) + ": {\"variable\": " + quoted(part.variable) +
              ", \"offset\": " + std::to_string(part.offset) + "}";
    json += "}";
  }
  return json + "}";
}

void write_mesh_description(hid_t file, const config::model& model, const std::string& path) {
  const std::string text = mesh_description(model);
  if (!text.empty()) write_string_attribute(file, "/", "meshes", text, path);
}

}  // namespace sidecore::plugins::hdf5
