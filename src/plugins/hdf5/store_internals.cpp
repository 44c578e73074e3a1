// Helpers the HDF5 store's output modes share: names for messages, element types, block
// checks, and the byte counts behind the compression ratio.
#include "plugins/hdf5/store_internals.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <mpi.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/mpi_handles.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "plugins/hdf5/hdf5_attributes.hpp"
#include "plugins/hdf5/hdf5_handle.hpp"
#include "plugins/hdf5/mesh_description.hpp"

namespace sidecore::plugins::hdf5 {

std::string config_file(const config::model* model) {
  return model != nullptr && !model->file.empty() ? model->file : "<configuration>";
}

std::string store_where(const store_context& context) {
  return config_file(context.model) + ':' + std::to_string(context.settings->line) + ": store \"" +
         context.settings->name + '"';
}

type_info element_type_info(config::element_type type) {
  switch (type) {
    case config::element_type::int8:
      return {H5T_NATIVE_INT8, 1};
    case config::element_type::int16:
      return {H5T_NATIVE_INT16, 2};
    case config::element_type::int32:
      return {H5T_NATIVE_INT32, 4};
    case config::element_type::int64:
      return {H5T_NATIVE_INT64, 8};
    case config::element_type::float32:
      return {H5T_NATIVE_FLOAT, 4};
    case config::element_type::float64:
      return {H5T_NATIVE_DOUBLE, 8};
  }
  throw storage_error("HDF5 store: unknown element type " + std::to_string(static_cast<int>(type)));
}

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string text = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) text += ',';
    text += std::to_string(dims[i]);
  }
  return text + ')';
}

std::string block_name(const config::variable& var, const block_view& block) {
  return "variable \"" + var.name + "\" source " + std::to_string(block.source) + " block " +
         std::to_string(block.block_id);
}

std::int64_t element_count(const std::vector<std::int64_t>& dims) {
  std::int64_t count = 1;
  for (const std::int64_t d : dims) count *= d;
  return count;
}

std::vector<hsize_t> to_hsize(const std::vector<std::int64_t>& values) {
  return std::vector<hsize_t>(values.begin(), values.end());
}

std::string block_problem(const config::variable& var, const block_view& block,
                          std::size_t element_bytes) {
  const std::string name = block_name(var, block);
  for (const std::int64_t d : block.dims) {
    if (d < 0) return name + " has negative dimensions " + dims_text(block.dims);
  }
  if (!block.position.empty() && block.position.size() != block.dims.size()) {
    return name + " has position " + dims_text(block.position) + " but dimensions " +
           dims_text(block.dims);
  }
  if (!block.global_dims.empty() && block.global_dims.size() != block.dims.size()) {
    return name + " has global dimensions " + dims_text(block.global_dims) + " but dimensions " +
           dims_text(block.dims);
  }
  const auto needed = static_cast<std::uint64_t>(element_count(block.dims)) * element_bytes;
  // More bytes than needed is allowed (allocations may be rounded up); fewer would make
  // HDF5 read past the block.
  if (block.bytes < needed) {
    return name + " holds " + std::to_string(block.bytes) + " bytes but dimensions " +
           dims_text(block.dims) + " need " + std::to_string(needed);
  }
  if (needed > 0 && block.data == nullptr) return name + " has no data";
  return {};
}

void add_dataset_bytes(byte_counts& counts, hid_t dataset, std::uint64_t elements,
                       config::element_type type) {
  counts.raw += elements * config::element_size(type);
  counts.stored += H5Dget_storage_size(dataset);
}

void write_ratio_attributes(hid_t file, const byte_counts& counts, const std::string& path) {
  const auto raw = static_cast<std::int64_t>(counts.raw);
  const auto stored = static_cast<std::int64_t>(counts.stored);
  write_attribute(file, "/", "raw_bytes", H5T_NATIVE_INT64, {}, &raw, path);
  write_attribute(file, "/", "stored_bytes", H5T_NATIVE_INT64, {}, &stored, path);
  write_double_attribute(file, "/", "compression_ratio", counts.ratio(), path);
}

void log_written(const std::string& path, const byte_counts& counts, bool speaker) {
  if (!speaker) return;
  const log::level lvl = counts.stored != counts.raw ? log::level::info : log::level::debug;
  log::emit(lvl, "HDF5 store: wrote ", path, ": ", readable_bytes(counts.raw),
            " of data stored in ", readable_bytes(counts.stored), " (compression ratio ",
            counts.ratio(), ')');
}

std::uint64_t element_total(const std::vector<std::int64_t>& dims) {
  return static_cast<std::uint64_t>(element_count(dims));
}

void create_directories(const std::string& path, const store_context& context) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  // create_directories reports no error when another writer created it first.
  if (error || !std::filesystem::is_directory(path)) {
    throw storage_error("HDF5 store: cannot create directory \"" + path + "\" (FilesPath of " +
                        store_where(context) + ")" +
                        (error ? ": " + error.message() : std::string()));
  }
  // A directory that exists but cannot be written (read-only file system, no permission) is
  // found now, at initialization, rather than by the first iteration's store.
  if (::access(path.c_str(), W_OK | X_OK) != 0) {
    const int err = errno;
    throw storage_error("HDF5 store: cannot write into directory \"" + path + "\" (FilesPath of " +
                        store_where(context) + "): " + std::strerror(err));
  }
}

void ensure_space(const std::string& path, std::uint64_t bytes) {
  std::filesystem::path directory = std::filesystem::path(path).parent_path();
  if (directory.empty()) directory = ".";
  struct statvfs info {};
  if (::statvfs(directory.c_str(), &info) != 0) return;  // cannot tell: let the write find out
  const std::uint64_t available = static_cast<std::uint64_t>(info.f_bavail) * info.f_frsize;
  if (available < bytes)
    throw storage_error("HDF5 store: not enough space for \"" + path +
                        "\": " + readable_bytes(available) + " free in \"" + directory.string() +
                        "\", " + readable_bytes(bytes) + " needed (No space left on device)");
}

namespace {

void fsync_path(const std::string& path, int flags, const char* what) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0)
    throw storage_error("HDF5 store: cannot open " + std::string(what) + " \"" + path +
                        "\" to flush it: " + std::strerror(errno));
  const int status = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  // Directories of some file systems refuse fsync (EINVAL): nothing more can be done there.
  if (status != 0 && !(saved == EINVAL && (flags & O_DIRECTORY)))
    throw storage_error("HDF5 store: fsync of " + std::string(what) + " \"" + path +
                        "\" failed: " + std::strerror(saved));
}

}  // namespace

void sync_file(const std::string& path) {
  fsync_path(path, O_RDONLY, "file");
  log::debug("HDF5 store: flushed ", path, " to stable storage");
}

void free_temporary_name(const std::string& temporary) noexcept {
  // A name that cannot be removed makes the exclusive creation fail, with HDF5's message on
  // the directory or the file: that one says more than unlink's would.
  ::unlink(temporary.c_str());
}

void apply_permissions(const std::string& file, unsigned permissions) {
  if (permissions == 0) return;
  if (::chmod(file.c_str(), static_cast<mode_t>(permissions)) != 0)
    throw storage_error("HDF5 store: cannot set the permissions of \"" + file +
                        "\" (option Permissions): " + std::strerror(errno));
}

void sync_directory_of(const std::string& path) {
  std::filesystem::path directory = std::filesystem::path(path).parent_path();
  if (directory.empty()) directory = ".";
  fsync_path(directory.string(), O_RDONLY | O_DIRECTORY, "directory");
}

}  // namespace sidecore::plugins::hdf5
