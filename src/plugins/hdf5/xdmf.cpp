// Renders the XDMF file. Arrays are stored in C order (slowest first), which is XDMF's own
// order, so extents are written as they are; only rectilinear axes are listed fastest first
// (VXVYVZ takes X, the fastest axis, first).
#include "plugins/hdf5/xdmf.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <system_error>
#include <utility>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/text.hpp"

namespace sidecore::plugins::hdf5 {

namespace {

std::string extents_text(const std::vector<std::int64_t>& dims) {
  std::string text;
  for (const std::int64_t d : dims) {
    if (!text.empty()) text += ' ';
    text += std::to_string(d);
  }
  return text;
}

const char* number_type(stored_type type) {
  switch (type) {
    case stored_type::int8:
      return "NumberType=\"Char\" Precision=\"1\"";
    case stored_type::int16:
      return "NumberType=\"Int\" Precision=\"2\"";
    case stored_type::int32:
      return "NumberType=\"Int\" Precision=\"4\"";
    case stored_type::int64:
      return "NumberType=\"Int\" Precision=\"8\"";
    // Readers have no 16-bit float; HDF5 converts it when asked for 32-bit floats.
    case stored_type::float16:
    case stored_type::float32:
      return "NumberType=\"Float\" Precision=\"4\"";
    case stored_type::float64:
      return "NumberType=\"Float\" Precision=\"8\"";
  }
  return "NumberType=\"Float\" Precision=\"8\"";
}

void data_item(std::ostringstream& out, const xdmf_dataset& d, const char* indent,
               const std::vector<std::int64_t>& dims = {}) {
  out << indent << "<DataItem Dimensions=\"" << extents_text(dims.empty() ? d.dims : dims) << "\" "
      << number_type(d.type) << " Format=\"HDF\">" << xml_escaped(d.file) << ":/"
      << xml_escaped(d.path) << "</DataItem>\n";
}

// One grid of a step: its geometry and topology, then the attributes placed on it.
struct grid {
  std::string name;
  std::string topology;  // full <Topology .../> element
  std::vector<const xdmf_dataset*> geometry;
  std::string geometry_type;
  std::string geometry_inline;       // for CoRectMesh: origin and spacing items
  std::vector<std::int64_t> points;  // point extents, C order
  // Extents written on the attributes' data items when they must differ from the datasets'
  // (readers want the grid's rank); empty to use the dataset's own.
  std::vector<std::int64_t> attribute_dims;
  std::vector<std::pair<const xdmf_dataset*, const char*>> attributes;  // dataset, center
};

std::vector<std::int64_t> minus_one(std::vector<std::int64_t> dims) {
  for (std::int64_t& d : dims) --d;
  return dims;
}

// The center of a variable on a grid of these point extents, or nullptr when it fits neither
// the points nor the cells.
const char* center_on(const std::vector<std::int64_t>& points, const xdmf_dataset& d) {
  if (d.dims == points) return "Node";
  if (d.dims == minus_one(points)) return "Cell";
  return nullptr;
}

grid regular_grid(const std::vector<std::int64_t>& dims) {
  grid g;
  g.name = "grid";
  for (const std::int64_t d : dims) g.name += '_' + std::to_string(d);
  // Always a 3D grid with leading extents of 1: readers (VTK's among them) mis-read 2D
  // CoRectMesh topologies, and XDMF has no 1D structured one.
  g.points = dims;
  while (g.points.size() < 3) g.points.insert(g.points.begin(), 1);
  g.attribute_dims = g.points;
  g.topology =
      "<Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" + extents_text(g.points) + "\"/>";
  g.geometry_type = "ORIGIN_DXDYDZ";
  g.geometry_inline =
      "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
      "Format=\"XML\">0 0 0</DataItem>\n"
      "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
      "Format=\"XML\">1 1 1</DataItem>\n";
  return g;
}

// The grid of a declared mesh at one step, or false when the mesh cannot be described
// (unsupported type, coordinates missing from the step or of inconsistent shapes).
bool mesh_grid(const config::mesh& mesh, const std::map<std::string, const xdmf_dataset*>& by_name,
               grid& g) {
  const bool rectilinear = mesh.type == "rectilinear";
  const bool curvilinear = mesh.type == "curvilinear";
  if (!rectilinear && !curvilinear) return false;
  const std::size_t axes = mesh.coordinates.size();
  if (axes < 2 || axes > 3) return false;
  std::vector<const xdmf_dataset*> coords;
  for (const config::coordinate& c : mesh.coordinates) {
    const auto it = by_name.find(c.name);
    if (it == by_name.end()) return false;
    coords.push_back(it->second);
  }
  g.name = mesh.name;
  g.geometry = coords;
  const bool three = axes == 3;
  if (rectilinear) {
    for (const xdmf_dataset* c : coords) {
      if (c->dims.size() != 1) return false;
    }
    // Coordinates are listed x, y, z: x is the fastest axis, the last C dimension.
    for (std::size_t a = axes; a-- > 0;) g.points.push_back(coords[a]->dims[0]);
    g.topology = std::string("<Topology TopologyType=\"") + (three ? "3DRectMesh" : "2DRectMesh") +
                 "\" Dimensions=\"" + extents_text(g.points) + "\"/>";
    g.geometry_type = three ? "VXVYVZ" : "VXVY";
  } else {
    for (const xdmf_dataset* c : coords) {
      if (c->dims != coords[0]->dims || c->dims.size() != axes) return false;
    }
    g.points = coords[0]->dims;
    g.topology = std::string("<Topology TopologyType=\"") + (three ? "3DSMesh" : "2DSMesh") +
                 "\" Dimensions=\"" + extents_text(g.points) + "\"/>";
    g.geometry_type = three ? "X_Y_Z" : "X_Y";
  }
  return true;
}

void render_grid(std::ostringstream& out, const grid& g, std::int32_t iteration) {
  out << "      <Grid Name=\"" << xml_escaped(g.name) << "\" GridType=\"Uniform\">\n";
  out << "        <Time Value=\"" << iteration << "\"/>\n";
  out << "        " << g.topology << "\n";
  out << "        <Geometry GeometryType=\"" << g.geometry_type << "\">\n";
  out << g.geometry_inline;
  for (const xdmf_dataset* c : g.geometry) data_item(out, *c, "          ");
  out << "        </Geometry>\n";
  for (const auto& [dataset, center] : g.attributes) {
    out << "        <Attribute Name=\""
        << xml_escaped(dataset->name.empty() ? dataset->path : dataset->name)
        << "\" AttributeType=\"Scalar\" Center=\"" << center << "\">\n";
    data_item(out, *dataset, "          ", g.attribute_dims);
    out << "        </Attribute>\n";
  }
  out << "      </Grid>\n";
}

}  // namespace

std::string render_xdmf(const config::model& model, const std::vector<xdmf_step>& steps) {
  std::map<std::string, bool> is_coordinate;
  for (const config::mesh& m : model.meshes) {
    for (const config::coordinate& c : m.coordinates) is_coordinate[c.name] = true;
  }

  // Grids per step, keyed by name; the order of first appearance is kept across steps.
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<std::int32_t, grid>>> series;
  for (const xdmf_step& step : steps) {
    std::map<std::string, const xdmf_dataset*> by_name;
    for (const xdmf_dataset& d : step.datasets) by_name[model.variables[d.variable].name] = &d;
    std::map<std::string, grid> grids;
    std::vector<std::string> step_order;
    const auto place = [&](grid candidate, const xdmf_dataset& d, const char* center) {
      auto it = grids.find(candidate.name);
      if (it == grids.end()) {
        step_order.push_back(candidate.name);
        it = grids.emplace(candidate.name, std::move(candidate)).first;
      }
      it->second.attributes.emplace_back(&d, center);
    };
    for (const xdmf_dataset& d : step.datasets) {
      const config::variable& var = model.variables[d.variable];
      if (is_coordinate.count(var.name) != 0) continue;
      if (d.dims.empty() || d.dims.size() > 3) continue;
      bool placed = false;
      if (!var.mesh.empty()) {
        for (const config::mesh& m : model.meshes) {
          if (m.name != var.mesh) continue;
          grid g;
          if (mesh_grid(m, by_name, g)) {
            if (const char* center = center_on(g.points, d)) {
              place(std::move(g), d, center);
              placed = true;
            }
          }
          break;
        }
      }
      if (!placed) place(regular_grid(d.dims), d, "Node");
    }
    for (const std::string& name : step_order) {
      if (series.count(name) == 0) order.push_back(name);
      series[name].emplace_back(step.iteration, std::move(grids[name]));
    }
  }

  std::ostringstream out;
  out << "<?xml version=\"1.0\" ?>\n";
  out << "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n";
  out << "<Xdmf Version=\"2.0\">\n";
  out << "  <Domain>\n";
  for (const std::string& name : order) {
    out << "    <Grid Name=\"" << xml_escaped(name)
        << "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (const auto& [iteration, g] : series[name]) render_grid(out, g, iteration);
    out << "    </Grid>\n";
  }
  out << "  </Domain>\n";
  out << "</Xdmf>\n";
  return out.str();
}

void write_file_atomically(const std::string& path, const std::string& text, unsigned permissions) {
  const std::string temporary = path + ".tmp";
  {
    // A stale temporary file, or a symlink planted under its name, is removed, not followed.
    ::unlink(temporary.c_str());  // if it stays, O_EXCL below fails and says why
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          permissions != 0 ? static_cast<mode_t>(permissions) : 0666);
    if (fd < 0)
      throw storage_error("HDF5 store: cannot create \"" + temporary +
                          "\": " + std::strerror(errno));
    int err = 0;
    std::size_t done = 0;
    while (done < text.size() && err == 0) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n > 0)
        done += static_cast<std::size_t>(n);
      else if (n < 0 && errno != EINTR)
        err = errno;
    }
    // The umask may have taken bits away from what was asked.
    if (err == 0 && permissions != 0 && ::fchmod(fd, static_cast<mode_t>(permissions)) != 0)
      err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
      ::unlink(temporary.c_str());
      throw storage_error("HDF5 store: cannot write \"" + temporary + "\": " + std::strerror(err));
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw storage_error("HDF5 store: cannot rename \"" + temporary + "\" to \"" + path +
                        "\": " + error.message());
  }
}

}  // namespace sidecore::plugins::hdf5
