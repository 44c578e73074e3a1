// Owning wrappers for HDF5 ids and the checks that turn failed HDF5 calls into storage_error.
#pragma once

#include <hdf5.h>

#include <string>
#include <string_view>
#include <utility>

#include "common/unique_handle.hpp"

namespace sidecore::plugins::hdf5 {

// Owns one HDF5 id and closes it with close_fn (common/unique_handle.hpp). close() reports
// failures where they matter, e.g. on files, whose close flushes data.
template <herr_t (*close_fn)(hid_t)>
struct id_traits {
  using value_type = hid_t;
  static hid_t empty() noexcept { return H5I_INVALID_HID; }
  static bool is_open(hid_t id) noexcept { return id >= 0; }
  static herr_t close(hid_t& id) noexcept { return close_fn(id); }
};
template <herr_t (*close_fn)(hid_t)>
using handle = unique_handle<id_traits<close_fn>>;

using file_handle = handle<H5Fclose>;
using dataset_handle = handle<H5Dclose>;
using dataspace_handle = handle<H5Sclose>;
using property_list_handle = handle<H5Pclose>;
using group_handle = handle<H5Gclose>;
using attribute_handle = handle<H5Aclose>;
using datatype_handle = handle<H5Tclose>;

// Closes a file whose data cannot reach the disk (disk full, I/O error). HDF5 keeps such a
// file open, with its unwritten data, for as long as a flush fails, and tries again when the
// library shuts down (at MPI_Finalize, where it crashed). Its remaining writes are sent to
// anonymous memory instead, every object still open in it is closed, then the file: nothing
// of it stays in the library. The caller removes the partial file. An MPI-IO file is closed
// collectively: every process of its communicator must abandon it together.
void abandon_file(file_handle& file) noexcept;

// Where an HDF5 call happened, for messages: the file and, when relevant, the object in it.
struct call_site {
  const std::string& file;
  std::string_view object;  // dataset or attribute path; empty for file-level calls
};

// Throws storage_error naming the call, the file, the object and the innermost messages
// of the HDF5 error stack. Must be called before any other HDF5 call clears the stack.
[[noreturn]] void throw_hdf5_error(const char* call, const call_site& site);

// Returns id, or throws storage_error when the call that produced it failed.
inline hid_t check_id(hid_t id, const char* call, const call_site& site) {
  if (id < 0) throw_hdf5_error(call, site);
  return id;
}

inline void check_status(herr_t status, const char* call, const call_site& site) {
  if (status < 0) throw_hdf5_error(call, site);
}

// Stops HDF5 from printing its error stack to stderr while alive: failures are reported
// through exceptions instead. Restores the previous handler on destruction.
class error_print_guard {
 public:
  error_print_guard() noexcept;
  error_print_guard(const error_print_guard&) = delete;
  error_print_guard& operator=(const error_print_guard&) = delete;
  ~error_print_guard();

 private:
  H5E_auto2_t m_function = nullptr;
  void* m_data = nullptr;
  bool m_saved = false;
};

}  // namespace sidecore::plugins::hdf5
