// The master file of file-per-core output: one HDF5 virtual dataset per variable that maps
// every block, in every writer's file, to its place in the global array.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/model.hpp"
#include "plugins/hdf5/block_data.hpp"
#include "plugins/hdf5/run_marker.hpp"

namespace sidecore::plugins::hdf5 {

// One block as stored in a file-per-core file.
struct block_record {
  std::int32_t writer = 0;
  std::int32_t source = 0;
  std::int32_t block = 0;
  std::vector<std::int64_t> dims;      // interior extents
  std::vector<std::int64_t> position;  // global offset of the interior
  std::int64_t packed_offset = -1;     // in "<variable>/packed" (BlockLayout Packed), or -1
};

// A variable of one iteration as the whole store holds it.
struct variable_record {
  std::size_t variable = 0;           // index in model::variables
  std::int32_t stored_iteration = 0;  // iteration whose files hold the data
  stored_type type = stored_type::int8;
  std::vector<std::int64_t> global_dims;  // empty when the layout gives none
  std::vector<block_record> blocks;       // file-per-core only, ordered by (source, block)
};

// What one writer contributes: its blocks of the variables it wrote in this iteration.
struct local_blocks {
  std::size_t variable = 0;
  stored_type type = stored_type::int8;
  const std::vector<std::int64_t>* global_dims = nullptr;  // may be empty
  std::int32_t source = 0;
  std::int32_t block = 0;
  std::vector<std::int64_t> dims;
  std::vector<std::int64_t> position;
  std::int64_t packed_offset = -1;  // as block_record's
};

// Gathers the blocks of every writer on writer 0 (collective over comm). On writer 0 returns
// one record per variable holding at least one block anywhere, in model order, with the
// global dimensions agreed as the largest of each extent; elsewhere returns nothing.
// `failed` is true on writer 0 when some writer reported failed_here.
std::vector<variable_record> gather_blocks(const std::vector<local_blocks>& mine,
                                           std::int32_t iteration, bool failed_here, MPI_Comm comm,
                                           bool& failed);

// Writes the master file at path (replacing it), marked with the run's id and writer count;
// written under a temporary name and renamed, so that a writer killed meanwhile leaves no torn
// master file. A record without global dimensions becomes a dataset indexed by client when
// per_client_extents gives it extents. source_file(iteration, writer) names the file-per-core
// file of a block, relative to the master's directory. Returns false when no record had global
// dimensions (no file).
bool write_master(const std::string& path, const config::model& model, std::int32_t iteration,
                  const std::vector<variable_record>& records,
                  const std::function<std::string(std::int32_t, std::int32_t)>& source_file,
                  bool complete, const run_marker& run, unsigned permissions = 0);

// The extents of the master file's dataset of a record without global dimensions (a
// per-client scalar, say), whose blocks all have the same extents: [client] or, when a client
// writes several blocks, [client, block], followed by the block's extents (none for a block of
// one element of a 1-D layout, so that a per-client scalar is a vector). Empty when its blocks
// have no such view (none, or of differing extents).
std::vector<std::int64_t> per_client_extents(const variable_record& record);

// A variable without global dimensions whose blocks all have the same extents, as one virtual
// dataset `dataset` of `file` indexed by client (per_client_extents; attribute indexed_by):
// the master file's <variable>, a collective file's by_client/<variable>. source_file(iteration,
// writer) names the file holding a block ("." for `file` itself). Clients that wrote no block
// read as zeros. Creates nothing when the blocks have no such view.
void write_per_client_view(
    hid_t file, const config::model& model, std::int32_t iteration, const variable_record& record,
    const std::function<std::string(std::int32_t, std::int32_t)>& source_file, hid_t lcpl,
    const std::string& path, const std::string& dataset);

// A collective file's view of a variable's blocks indexed by client. Its blocks are datasets of
// the group <variable>, so the view cannot take that name as a master file's does, nor lie in
// that group, whose members programs written for Damaris read as P<source>.
inline std::string per_client_view_name(const std::string& variable) {
  return "by_client/" + variable;
}

// The dataset of a block in a file-per-core file, named as Damaris names it:
// "<variable>/P<source>/B<block>" with a block level, "<variable>/P<source>" without.
std::string block_dataset_name(const std::string& variable, std::int32_t source, std::int32_t block,
                               bool block_level);

// Whether a block's name has the block level: always when the configuration declares several
// domains per client (as in Damaris), and with one domain as soon as the client holds, in
// that file, any block of the variable but its block 0 alone. For blocks ordered by (source,
// block), source_has_more tells that the next block has the same source.
inline bool has_block_level(int domains, std::int32_t block, bool source_has_more) {
  return domains != 1 || block != 0 || source_has_more;
}

}  // namespace sidecore::plugins::hdf5
