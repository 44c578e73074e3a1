// The XDMF description of a store's output: a temporal collection per grid, pointing at the
// global datasets (master or collective files), so that ParaView and VisIt open the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/model.hpp"
#include "plugins/hdf5/block_data.hpp"

namespace sidecore::plugins::hdf5 {

// One global dataset available at one iteration.
struct xdmf_dataset {
  std::size_t variable = 0;  // index in model::variables
  std::string file;          // relative to the XDMF file's directory
  std::string path;          // dataset path inside file, without the leading '/'
  std::string name;          // the attribute's name when it is not `path` (a view's variable)
  stored_type type = stored_type::float64;
  std::vector<std::int64_t> dims;  // global extents, C order
};

struct xdmf_step {
  std::int32_t iteration = 0;
  std::vector<xdmf_dataset> datasets;
};

// Renders the XDMF (version 2) text describing every step. A variable on a declared
// rectilinear or curvilinear mesh whose coordinate variables are in the step goes on that
// mesh; any other variable of 1 to 3 dimensions goes on a regular grid (CoRectMesh, origin 0,
// spacing 1) named after its extents. Coordinate variables become geometry, not attributes.
std::string render_xdmf(const config::model& model, const std::vector<xdmf_step>& steps);

// Writes text to path through a temporary file in the same directory and a rename, so that
// a reader never sees a half-written file. The temporary file is created exclusively, never
// through a symlink; permissions (e.g. 0600) applied when not 0. Throws storage_error.
void write_file_atomically(const std::string& path, const std::string& text,
                           unsigned permissions = 0);

}  // namespace sidecore::plugins::hdf5
