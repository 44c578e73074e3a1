// Error reporting for HDF5 calls: the failed call, where it happened and what HDF5 said.
#include "plugins/hdf5/hdf5_handle.hpp"

#include <algorithm>
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

error_print_guard::error_print_guard() noexcept {
  if (H5Eget_auto2(H5E_DEFAULT, &m_function, &m_data) >= 0) {
    m_saved = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0;
  }
}

error_print_guard::~error_print_guard() {
  if (m_saved) H5Eset_auto2(H5E_DEFAULT, m_function, m_data);
}

}  // namespace sidecore::plugins::hdf5
