#include "config/output_names.hpp"

#include <charconv>

namespace sidecore::config {
namespace {

bool parse_count(std::string_view text, std::int32_t& value) {
  if (text.empty()) return false;
  for (const char c : text)
    if (c < '0' || c > '9') return false;
  const auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && stop == text.data() + text.size();
}

bool strip_suffix(std::string_view& text, std::string_view suffix) {
  if (text.size() < suffix.size() || text.substr(text.size() - suffix.size()) != suffix)
    return false;
  text.remove_suffix(suffix.size());
  return true;
}

}  // namespace

std::optional<output_name_parts> parse_output_file_name(std::string_view name) {
  output_name_parts parts;
  parts.part = strip_suffix(name, ".part");
  if (!strip_suffix(name, ".h5")) return std::nullopt;
  const std::size_t it = name.rfind("_It");
  if (it == std::string_view::npos || it == 0) return std::nullopt;
  const std::string_view numbers = name.substr(it + 3);
  const std::size_t pr = numbers.find("_Pr");
  if (!parse_count(numbers.substr(0, pr), parts.iteration)) return std::nullopt;
  if (pr != std::string_view::npos && !parse_count(numbers.substr(pr + 3), parts.writer))
    return std::nullopt;
  parts.simulation = std::string(name.substr(0, it));
  return parts;
}

}  // namespace sidecore::config
