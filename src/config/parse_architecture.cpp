// Reading <architecture>: domains, dedicated resources, the shared buffer and the queue.
#include <cctype>
#include <set>

#include "common/error.hpp"
#include "config/builder.hpp"

namespace sidecore::config::detail {
namespace {

// "64MB", "2 GiB", "512k": a size written with a unit, which expressions do not know.
// Returns the expression meant ("64*1024*1024"), or "" when text has no such form.
std::string size_with_unit(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
    ++digits;
  }
  if (digits == 0) return {};
  std::string unit = lowercase(trim(text.substr(digits)));
  if (unit.size() > 1 && unit.back() == 'b') unit.pop_back();
  if (unit.size() > 1 && unit.back() == 'i') unit.pop_back();
  const std::string units = "kmgt";
  if (unit.size() != 1 || units.find(unit[0]) == std::string::npos) return {};
  std::string meant = text.substr(0, digits);
  for (std::size_t i = 0; i <= units.find(unit[0]); ++i) meant += "*1024";
  return meant;
}

}  // namespace

void builder::read_architecture(xml arch) {
  check_element(arch);
  architecture& a = m_model.arch;
  std::set<std::string> seen;
  for (xml n : elements(arch)) {
    check_element(n);
    const std::string name = name_of(n);
    if (!seen.insert(name).second) {
      fail(n, "second <" + name + "> in <architecture>",
           "give each architecture element at most once");
    }
    if (name == "domains") {
      // Each client keeps a position and a state per variable and domain: a bound keeps a typo
      // (count="100000000") from exhausting the memory of every process.
      a.domains = static_cast<int>(integer(n, "count", 1, 1, max_domains));
    } else if (name == "dedicated") {
      a.dedicated_cores =
          static_cast<int>(integer(n, "cores", 0, 0, std::numeric_limits<int>::max()));
      a.dedicated_nodes =
          static_cast<int>(integer(n, "nodes", 0, 0, std::numeric_limits<int>::max()));
      a.io_threads = static_cast<int>(integer(n, "threads", 0, 0, 1));
      if (a.dedicated_cores > 0 && a.dedicated_nodes > 0) {
        fail(n, "both dedicated cores and dedicated nodes are requested",
             "set either cores or nodes (the other to 0)");
      }
      if (a.io_threads > 0 && (a.dedicated_cores > 0 || a.dedicated_nodes > 0)) {
        fail(n,
             "threads=\"" + std::to_string(a.io_threads) +
                 "\" is requested together with dedicated cores or nodes",
             "a background I/O thread replaces dedicated resources: use threads=\"1\" with "
             "cores=\"0\" nodes=\"0\", or threads=\"0\"");
      }
    } else if (name == "buffer") {
      a.buffer_name = name_attribute(n);
      a.buffer_line = line_of(n);
      m_buffer_size = {n, attribute(n, "size")};
      if (has(n, "server-memory")) m_server_memory = {n, attribute(n, "server-memory")};
      if (has(n, "spill-directory")) a.spill_directory = attribute(n, "spill-directory");
      pick(n, "type", shm_type_choices, std::string("posix"));
      integer(n, "blocks", 0, 0);
      flag(n, "enabled", true);
      a.policy = pick(n, "policy", policy_choices, full_buffer_policy::wait);
      if (has(n, "timeout")) {
        const auto seconds = real(attribute(n, "timeout"));
        if (!seconds || *seconds < 0) {
          fail(
              n,
              "invalid value '" + attribute(n, "timeout") + "' for attribute 'timeout' of <buffer>",
              "expected a number of seconds >= 0 (0 waits forever)");
        }
        a.wait_timeout_seconds = *seconds;
      }
    } else if (name == "queue") {
      a.queue_name = name_attribute(n);
      m_queue_size = {n, attribute(n, "size")};
    }
  }
}

// Sizes may be expressions ("64*1024*1024") over parameters, so they wait for <data>.
void builder::evaluate_architecture_sizes() {
  const auto size_of = [this](const std::pair<xml, std::string>& source, const char* attribute_name,
                              const char* what, std::int64_t minimum, bool bytes) {
    const std::string at = place(source.first, attribute_name);
    const std::string text = trim(source.second);
    if (const std::string meant = size_with_unit(text); bytes && !meant.empty()) {
      throw config_error(at + ": the " + std::string(what) + " '" + text +
                         "' has a unit, which sizes do not take; write it in bytes as an " +
                         "integer expression, e.g. " + meant);
    }
    const expression e =
        integer_expression(source.first, source.second, m_parameter_names, what, at);
    const std::int64_t value = e.evaluate(parameter_values());
    if (value < minimum) {
      fail(source.first, std::string(what) + " '" + source.second + "' is " + std::to_string(value),
           "the " + std::string(what) + " must be at least " + std::to_string(minimum));
    }
    return static_cast<std::uint64_t>(value);
  };
  if (m_buffer_size.first) {
    m_model.arch.buffer_size = size_of(m_buffer_size, "size", "buffer size", 1, true);
  }
  if (m_queue_size.first) {
    m_model.arch.queue_size = size_of(m_queue_size, "size", "queue size", 1, false);
  }
  if (m_server_memory.first) {
    m_model.arch.server_memory =
        size_of(m_server_memory, "server-memory", "server-memory size", 0, true);
  }
}

}  // namespace sidecore::config::detail
