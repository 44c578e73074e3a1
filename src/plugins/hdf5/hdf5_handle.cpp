// Error reporting for HDF5 calls: the failed call, where it happened and what HDF5 said.
#include "plugins/hdf5/hdf5_handle.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace sidecore::plugins::hdf5 {

namespace {

// Innermost messages are the most specific ("No such file or directory"); outer ones
// mostly repeat the API call, so keep only the last few.
constexpr std::size_t max_stack_messages = 3;

herr_t collect_message(unsigned /*depth*/, const H5E_error2_t* entry, void* out) {
  auto* messages = static_cast<std::vector<std::string>*>(out);
  if (entry != nullptr && entry->desc != nullptr && entry->desc[0] != '\0') {
    // Some descriptions embed ctime() output and its newline; keep messages on one line.
    std::string text = entry->desc;
    std::replace(text.begin(), text.end(), '\n', ' ');
    messages->push_back(std::move(text));
  }
  return 0;
}

std::string error_stack_text() {
  std::vector<std::string> messages;
  if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_message, &messages) < 0 ||
      messages.empty()) {
    return {};
  }
  const std::size_t first =
      messages.size() > max_stack_messages ? messages.size() - max_stack_messages : 0;
  std::string text;
  for (std::size_t i = first; i < messages.size(); ++i) {
    if (!text.empty()) text += "; ";
    text += messages[i];
  }
  return text;
}

// The descriptors this process holds open on path: an MPI-IO driver keeps its own, out of
// HDF5's reach.
std::vector<int> descriptors_of(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<int> found;
  std::error_code ec;
  const fs::path wanted = fs::absolute(path, ec).lexically_normal();
  if (ec) return found;
  for (fs::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ignored;
    if (fs::read_symlink(it->path(), ignored) != wanted) continue;
    const std::string number = it->path().filename().string();
    if (!number.empty() && std::all_of(number.begin(), number.end(), ::isdigit))
      found.push_back(std::stoi(number));
  }
  return found;
}

// Sends every later write to descriptor fd into anonymous memory.
void divert_writes(int fd) noexcept {
  const int sink = ::memfd_create("sidecore-abandoned-file", MFD_CLOEXEC);
  if (sink < 0) return;
  ::dup2(sink, fd);
  ::close(sink);
}

}  // namespace

void throw_hdf5_error(const char* call, const call_site& site) {
  std::string message = "HDF5 store: ";
  message += call;
  message += " failed";
  if (!site.object.empty()) {
    message += " for \"";
    message += site.object;
    message += '"';
  }
  message += " in file \"" + site.file + '"';
  const std::string details = error_stack_text();
  if (!details.empty()) message += ": " + details;
  throw storage_error(message);
}

void abandon_file(file_handle& file) noexcept {
  if (!file.valid()) return;
  const error_print_guard quiet;
  const hid_t fapl = H5Fget_access_plist(file.get());
  const hid_t driver = fapl >= 0 ? H5Pget_driver(fapl) : H5I_INVALID_HID;
  void* vfd = nullptr;
  if (driver == H5FD_SEC2 && H5Fget_vfd_handle(file.get(), fapl, &vfd) >= 0 && vfd != nullptr) {
    // The sec2 driver's handle is its file descriptor.
    divert_writes(*static_cast<int*>(vfd));
  } else if (driver == H5FD_MPIO) {
    // Every writer abandons the file together (they agreed to): the close is collective and
    // flushes metadata, and a writer whose writes failed would take another path through it
    // than the others and leave them all waiting. Its writes go to memory instead, on every
    // writer alike, and the close completes everywhere. The MPI-IO layer's descriptors are
    // found by the file's name.
    const ssize_t length = H5Fget_name(file.get(), nullptr, 0);
    if (length > 0) {
      std::string name(static_cast<std::size_t>(length) + 1, '\0');
      if (H5Fget_name(file.get(), name.data(), name.size()) > 0) {
        name.resize(static_cast<std::size_t>(length));
        for (const int fd : descriptors_of(name)) divert_writes(fd);
      }
    }
  }
  if (fapl >= 0) H5Pclose(fapl);
  // Datasets, groups, attributes and types opened through it, which would keep it open.
  const ssize_t count = H5Fget_obj_count(file.get(), H5F_OBJ_ALL | H5F_OBJ_LOCAL);
  if (count > 0) {
    std::vector<hid_t> ids(static_cast<std::size_t>(count));
    const ssize_t got =
        H5Fget_obj_ids(file.get(), H5F_OBJ_ALL | H5F_OBJ_LOCAL, ids.size(), ids.data());
    for (ssize_t i = 0; i < got; ++i) {
      const hid_t id = ids[static_cast<std::size_t>(i)];
      if (id == file.get()) continue;
      switch (H5Iget_type(id)) {
        case H5I_DATASET:
          H5Dclose(id);
          break;
        case H5I_GROUP:
          H5Gclose(id);
          break;
        case H5I_ATTR:
          H5Aclose(id);
          break;
        case H5I_DATATYPE:
          H5Tclose(id);
          break;
        default:
          break;
      }
    }
  }
  file.close();
}

error_print_guard::error_print_guard() noexcept {
  if (H5Eget_auto2(H5E_DEFAULT, &m_function, &m_data) >= 0) {
    m_saved = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0;
  }
}

error_print_guard::~error_print_guard() {
  if (m_saved) H5Eset_auto2(H5E_DEFAULT, m_function, m_data);
}

}  // namespace sidecore::plugins::hdf5
