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
    // One or more names, separated by spaces, commas, semicolons or '+': "phase rate".
    std::string names = lowercase(r.raw("policy"));
    for (char& c : names)
      if (c == ',' || c == ';' || c == '+') c = ' ';
    bool drain = false, any = false;
    std::size_t at = 0;
    while (at < names.size()) {
      const std::size_t start = names.find_first_not_of(" \t\r\n", at);
      if (start == std::string::npos) break;
      const std::size_t end = std::min(names.find_first_of(" \t\r\n", start), names.size());
      const std::string name = names.substr(start, end - start);
      at = end;
      any = true;
      const auto known =
          std::find_if(schedule_policy_choices.begin(), schedule_policy_choices.end(),
                       [&](const auto& c) { return name == c.name; });
      if (known == schedule_policy_choices.end()) {
        r.fail("invalid policy '" + name + "' in attribute 'policy' of <schedule>",
               "valid values, which may be stacked (\"phase rate\"): drain (store each "
               "iteration as soon as it is complete, the default), rate (limit concurrent "
               "writers and/or bandwidth), slots (each writer stores in its slot of the "
               "iteration time), phase (store while the clients compute), ordered (the "
               "writers store in one order), self (chosen from what is measured)");
      }
      if (known->value == schedule_policy::drain) drain = true;
      s.policies |= static_cast<unsigned>(known->value);
    }
    if (!any) r.invalid("policy", "one or more of drain, rate, slots, phase, ordered, self");
    if (s.uses(schedule_policy::self) &&
        (s.uses(schedule_policy::slots) || s.uses(schedule_policy::phase))) {
      r.fail("policy=\"" + r.raw("policy") + "\" stacks self with slots or phase",
             "self chooses between slots, phase and storing at once by itself: give self "
             "alone, or stacked with rate or ordered");
    }
    if (drain && s.policies != 0) {
      r.fail("policy=\"" + r.raw("policy") + "\" stacks drain with other policies",
             "drain stores at once and cannot be stacked: give drain alone, or the others "
             "without it");
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
  if (r.has("order")) {
    const std::string value = lowercase(trim(r.raw("order")));
    if (value == "iteration") {
      s.order = schedule_order::iteration;
    } else if (value == "writer") {
      s.order = schedule_order::writer;
    } else {
      r.invalid("order",
                "iteration (no writer begins an iteration before every writer stored "
                "the one before, the default) or writer (also writer by writer within "
                "an iteration)");
    }
    if (!s.uses(schedule_policy::ordered)) {
      r.fail("attribute 'order' is given without the ordered policy",
             "add ordered to the policy (policy=\"ordered\", or stacked: \"ordered rate\"), "
             "or remove the attribute");
    }
  }
  if (r.has("trace")) {
    s.trace = trim(r.raw("trace"));
    if (s.trace.empty()) {
      r.fail("empty 'trace' on <schedule>",
             "give the path prefix of the trace files (each writer writes <prefix>.<writer>.csv)");
    }
  }
  if (!s.uses(schedule_policy::rate) && (r.has("writers") || r.has("bandwidth"))) {
    r.fail(
        std::string("attribute '") + (r.has("writers") ? "writers" : "bandwidth") +
            "' is given with policy=\"" + (s.drains() ? std::string("drain") : r.raw("policy")) +
            "\", which takes no such limit",
        "add rate to the policy (policy=\"rate\", or stacked: \"phase rate\") to limit writers or "
        "bandwidth, or remove the attribute");
  }
  if (s.uses(schedule_policy::rate) && s.writers == 0 && s.bandwidth == 0.0) {
    r.fail("policy=\"rate\" is given without a limit",
           "give writers=\"K\" (at most K writers store at once), bandwidth=\"B\" (bytes per "
           "second per writer), or both");
  }
  arch.schedule = s;
}

}  // namespace sidecore::config::detail
