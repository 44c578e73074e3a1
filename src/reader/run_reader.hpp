// Reads back what HDF5 stores wrote for one iteration, whichever file mode and however many
// clients and writers wrote it: the variables, their blocks (source, id, extents, position),
// one block by id, or a region of the global array assembled from the blocks that cover it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "reader/iteration_files.hpp"

namespace sidecore::reader {

// Element types as the read calls name them: the values of Damaris.h's DAMARIS_TYPE_STR.
enum class element : int { int8 = 6, int16 = 1, int32 = 2, int64 = 3, float32 = 4, float64 = 5 };
std::size_t element_bytes(element type) noexcept;

struct block_info {
  std::int32_t writer = 0;             // the writer whose file holds it
  std::int32_t source = 0;             // the client that wrote it
  std::int32_t block = 0;              // its id
  std::vector<std::int64_t> extents;   // interior extents, C order
  std::vector<std::int64_t> position;  // global offset of its first element (zeros if none)
};

struct variable_info {
  std::string name;                          // full name, groups joined with '/'
  element type = element::float64;           // as stored (16-bit floats: float32)
  std::vector<std::int64_t> global_extents;  // empty when the layout gives none
  std::vector<block_info> blocks;            // ordered by (source, block)
};

// The iterations stored under prefix (a FilesPath followed by the simulation's name, e.g.
// "out/sim"): those with a file-per-core or a collective file, ascending.
std::vector<std::int32_t> stored_iterations(const std::string& prefix);

class run_reader {
 public:
  // Opens the output of one iteration; throws error (DAMARIS_ARGUMENT_ERROR) naming what was
  // looked for when there is none.
  run_reader(const std::string& prefix, std::int32_t iteration);
  ~run_reader();
  run_reader(const run_reader&) = delete;
  run_reader& operator=(const run_reader&) = delete;

  std::int32_t iteration() const noexcept { return m_iteration; }
  // False when a writer's file of the run that wrote the iteration is missing or unreadable,
  // or some file says it misses data (complete = 0).
  bool complete() const noexcept { return m_complete; }
  // The iteration's files: missing, torn, or left by another run.
  const iteration_files& files() const noexcept { return m_survey; }
  const std::vector<variable_info>& variables() const noexcept { return m_variables; }
  // Throws error(DAMARIS_UNDEFINED_VARIABLE) naming the stored variables when absent.
  const variable_info& variable(const std::string& name) const;

  // Reads block (source, block) of a variable, converted to type, into out (as many bytes as
  // its extents times the element size; bytes says how many out has).
  void read_block(const std::string& variable, std::int32_t source, std::int32_t block,
                  element type, void* out, std::uint64_t bytes);
  // Reads the region [start, start + count) of a variable's global array, in C order; elements
  // no block covers read as 0, unless a writer's file is missing or unreadable: then throws
  // storage_error naming it (its blocks could have been there).
  void read_region(const std::string& variable, const std::vector<std::int64_t>& start,
                   const std::vector<std::int64_t>& count, element type, void* out,
                   std::uint64_t bytes);

 private:
  struct location;  // where a block's elements lie: file, dataset, offset in the dataset
  struct opened;    // the HDF5 files, opened once
  // only: the variables to take from the file (all when nullptr).
  void scan_file(std::size_t file, bool per_core, const std::set<std::string>* only);
  // File-per-core output: the time-invariant variables the master file maps from an earlier
  // iteration's files, scanned from those files.
  void add_earlier_variables(const std::string& prefix, const std::string& master_path);
  // The blocks of a variable stored packed (BlockLayout Packed) in a file-per-core file.
  void scan_packed(
      std::size_t file, const std::string& variable,
      const std::function<std::size_t(const std::string&, element,
                                      const std::vector<std::int64_t>&)>& variable_slot);
  const location& where(const std::string& variable, std::size_t block) const;

  std::int32_t m_iteration;
  std::string m_prefix;
  iteration_files m_survey;
  bool m_complete = true;
  std::vector<variable_info> m_variables;
  std::map<std::string, std::size_t> m_index;      // name -> m_variables
  std::vector<std::vector<location>> m_locations;  // like m_variables[v].blocks
  std::unique_ptr<opened> m_files;
};

}  // namespace sidecore::reader
