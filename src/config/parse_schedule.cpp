// Reading <architecture><schedule>: when the writers move data out to the stores.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <pugixml.hpp>
#include <string>

#include "common/error.hpp"
#include "common/text.hpp"
#include "config/xml_vocabulary.hpp"

namespace sidecore::config::detail {
namespace {

// Everything a message about the <schedule> element needs: where it is.
class schedule_reader {
 public:
  schedule_reader(const pugi::xml_node& node, std::string_view text, const std::string& file)
      : m_node(node), m_line(line_of(node, text)), m_where(file + ":" + std::to_string(m_line)) {}

  int line() const { return m_line; }

  [[noreturn]] void fail(const std::string& what, const std::string& hint) const {
    throw config_error(m_where + ": " + what + "; " + hint);
  }

  bool has(const char* name) const { return value_of(name) != nullptr; }

  std::string raw(const char* name) const {
    const char* value = value_of(name);
    return value ? value : "";
  }

  [[noreturn]] void invalid(const char* name, const std::string& expected) const {
    fail("invalid value '" + raw(name) + "' for attribute '" + name + "' of <schedule>",
         "expected " + expected);
  }

 private:
  static int line_of(const pugi::xml_node& node, std::string_view text) {
    const std::ptrdiff_t offset = node.offset_debug();
    if (offset < 0) return 0;
    const auto end =
        text.begin() + std::min<std::size_t>(static_cast<std::size_t>(offset), text.size());
    return 1 + static_cast<int>(std::count(text.begin(), end, '\n'));
  }

  // Attributes as the rest of the parser reads them: without a namespace prefix.
  const char* value_of(const char* name) const {
    for (pugi::xml_attribute a : m_node.attributes()) {
      if (!is_xml_plumbing(a.name()) && local_name(a.name()) == name) return a.value();
    }
    return nullptr;
  }

  const pugi::xml_node& m_node;
  int m_line;
  std::string m_where;
};

// "100000", "2.5e6", "100MB", "1.5 GiB/s", "512k": bytes per second; units are powers of 1024
// as elsewhere in the configuration (k, m, g, t, with or without i, b and /s). Nothing when
// the text is not of that form.
std::optional<double> bytes_per_second(const std::string& raw) {
  const std::string text = trim(raw);
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || errno == ERANGE || !std::isfinite(number)) return std::nullopt;
  std::string unit = lowercase(trim(end));
  if (unit.size() >= 2 && unit.compare(unit.size() - 2, 2, "/s") == 0) {
    unit = trim(unit.substr(0, unit.size() - 2));
  }
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  if (unit.size() == 2 && unit.back() == 'i') unit.pop_back();
  double scale = 1.0;
  if (!unit.empty()) {
    const std::string prefixes = "kmgt";
    const auto at = unit.size() == 1 ? prefixes.find(unit[0]) : std::string::npos;
    if (at == std::string::npos) return std::nullopt;
    scale = std::pow(1024.0, static_cast<double>(at + 1));
  }
  const double value = number * scale;
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace

void read_schedule(const pugi::xml_node& architecture_node, std::string_view text,
                   const std::string& file, architecture& arch) {
  pugi::xml_node node;
  for (pugi::xml_node n : architecture_node.children()) {
    if (n.type() == pugi::node_element && local_name(n.name()) == "schedule") {
      node = n;
      break;
    }
  }
  if (!node) return;
  const schedule_reader r(node, text, file);
  schedule_settings s;
  s.line = r.line();

  if (r.has("policy")) {
    const std::string value = lowercase(trim(r.raw("policy")));
    bool known = false;
    for (const auto& c : schedule_policy_choices) {
      if (value == c.name) {
        s.policy = c.value;
        known = true;
      }
    }
    if (!known) {
      const bool later =
          value == "slots" || value == "phase" || value == "ordered" || value == "self";
      r.fail("invalid value '" + r.raw("policy") + "' for attribute 'policy' of <schedule>",
             std::string(later ? "this policy is not available yet; " : "") +
                 "valid values: drain (store each iteration as soon as it is complete, the "
                 "default), rate (limit concurrent writers and/or bandwidth)");
    }
  }
  if (r.has("writers")) {
    const std::string value = trim(r.raw("writers"));
    errno = 0;
    char* end = nullptr;
    const long long count = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || errno != 0 || count < 1 || count > INT_MAX) {
      r.invalid("writers", "an integer from 1 to " + std::to_string(INT_MAX) +
                               ": how many writers of the job may store at the same time");
    }
    s.writers = static_cast<int>(count);
  }
  if (r.has("bandwidth")) {
    const std::optional<double> value = bytes_per_second(r.raw("bandwidth"));
    if (!value || *value < 1.0) {
      r.invalid("bandwidth",
                "bytes per second per writer, at least 1: a number with an optional unit "
                "k, M, G or T (powers of 1024, 'B' and '/s' optional), e.g. 200MB/s or 5e7");
    }
    s.bandwidth = *value;
  }
  if (r.has("trace")) {
    s.trace = trim(r.raw("trace"));
    if (s.trace.empty()) {
      r.fail("empty 'trace' on <schedule>",
             "give the path prefix of the trace files (each writer writes <prefix>.<writer>.csv)");
    }
  }
  if (s.policy == schedule_policy::drain && (r.has("writers") || r.has("bandwidth"))) {
    r.fail(std::string("attribute '") + (r.has("writers") ? "writers" : "bandwidth") +
               "' is given with policy=\"drain\", which stores at once and takes no limit",
           "use policy=\"rate\" to limit writers or bandwidth, or remove the attribute");
  }
  if (s.policy == schedule_policy::rate && s.writers == 0 && s.bandwidth == 0.0) {
    r.fail("policy=\"rate\" is given without a limit",
           "give writers=\"K\" (at most K writers store at once), bandwidth=\"B\" (bytes per "
           "second per writer), or both");
  }
  arch.schedule = s;
}

}  // namespace sidecore::config::detail
