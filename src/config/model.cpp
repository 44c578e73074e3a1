// Model helpers: element types, lookups by name, name suggestions and reading the file.
#include "config/model.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "common/error.hpp"

namespace sidecore::config {

std::optional<std::uint64_t> array_bytes(const std::int64_t* extents, std::size_t count,
                                         std::size_t element_bytes) noexcept {
  std::uint64_t bytes = element_bytes;
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t e = extents[i];
    if (__builtin_mul_overflow(bytes, static_cast<std::uint64_t>(e > 0 ? e : 0), &bytes))
      return std::nullopt;
  }
  return bytes;
}

std::size_t element_size(element_type type) noexcept {
  switch (type) {
    case element_type::int8:
      return 1;
    case element_type::int16:
      return 2;
    case element_type::int32:
      return 4;
    case element_type::int64:
      return 8;
    case element_type::float32:
      return 4;
    case element_type::float64:
      return 8;
  }
  return 0;
}

const char* element_type_name(element_type type) noexcept {
  switch (type) {
    case element_type::int8:
      return "char";
    case element_type::int16:
      return "short";
    case element_type::int32:
      return "int";
    case element_type::int64:
      return "long";
    case element_type::float32:
      return "float";
    case element_type::float64:
      return "double";
  }
  return "unknown";
}

std::int32_t damaris_type_code(element_type type) noexcept {
  switch (type) {
    case element_type::int8:
      return DAMARIS_TYPE_CHAR;
    case element_type::int16:
      return DAMARIS_TYPE_SHORT;
    case element_type::int32:
      return DAMARIS_TYPE_INT;
    case element_type::int64:
      return DAMARIS_TYPE_LONG;
    case element_type::float32:
      return DAMARIS_TYPE_FLOAT;
    case element_type::float64:
      return DAMARIS_TYPE_DOUBLE;
  }
  return DAMARIS_TYPE_UNDEFINED;
}

bool is_integer(element_type type) noexcept {
  return type != element_type::float32 && type != element_type::float64;
}

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Levenshtein distance, ignoring case: "filename" should still point at "FileName".
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::size_t model::find_parameter(std::string_view name) const {
  return parameter_names.find(parameters, name);
}
std::size_t model::find_variable(std::string_view name) const {
  return variable_names.find(variables, name);
}
std::string model::unknown_variable(std::string_view name) const {
  std::vector<std::string> names;
  names.reserve(variables.size());
  for (const variable& v : variables) names.push_back(v.name);
  std::string text = "no variable '" + std::string(name) + "' in " + file;
  if (const std::string* nearest = detail::closest(name, names))
    text += "; did you mean '" + *nearest + "'?";
  constexpr std::size_t listed = 12;  // more names would hide the message
  if (names.empty()) {
    text += " (it declares none)";
  } else if (names.size() <= listed) {
    text += " (declared: ";
    for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
    text += ")";
  } else {
    text += " (" + std::to_string(names.size()) + " variables declared)";
  }
  return text;
}

std::size_t model::find_layout(std::string_view name) const {
  return layout_names.find(layouts, name);
}
std::size_t model::find_event(std::string_view name) const {
  return event_names.find(events, name);
}
void model::index_names() {
  parameter_names.extend(parameters);
  layout_names.extend(layouts);
  variable_names.extend(variables);
  event_names.extend(events);
}

std::string store::option(std::string_view key, std::string_view fallback) const {
  for (const auto& [k, v] : options) {
    if (k == key) return v;
  }
  return std::string(fallback);
}

namespace detail {

const std::string* closest(std::string_view given, const std::vector<std::string>& valid) {
  std::size_t best = std::string::npos;
  const std::string* nearest = nullptr;
  for (const auto& candidate : valid) {
    const std::size_t d = edit_distance(given, candidate);
    if (d < best) {
      best = d;
      nearest = &candidate;
    }
  }
  // Beyond this distance the "nearest" name is a coincidence, not a typo.
  if (nearest && best <= std::max<std::size_t>(2, std::max(given.size(), nearest->size()) / 2))
    return nearest;
  return nullptr;
}

std::string suggest(std::string_view given, const std::vector<std::string>& valid,
                    std::string_view noun) {
  std::string hint;
  if (const std::string* nearest = closest(given, valid))
    hint = "did you mean '" + *nearest + "'? ";
  hint += "valid ";
  hint += noun;
  hint += ": ";
  for (std::size_t i = 0; i < valid.size(); ++i) {
    if (i) hint += ", ";
    hint += valid[i];
  }
  return hint;
}

}  // namespace detail

std::string read_configuration_file(const std::string& path) {
  const std::string what = "cannot read configuration file '" + path + "': ";
  const auto fail = [&what](int err) { throw config_error(what + std::strerror(err)); };
  if (path.empty()) {
    throw config_error("no configuration file given; pass the path of the XML file");
  }
  // O_NONBLOCK: opening a FIFO nobody writes to must not wait; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(errno);
  struct fd_closer {
    int fd;
    ~fd_closer() { ::close(fd); }
  } closer{fd};
  struct stat status {};
  if (::fstat(fd, &status) != 0) fail(errno);
  if (S_ISDIR(status.st_mode))
    throw config_error(what + "it is a directory; pass the path of the XML file itself");
  // A device, FIFO or socket could be endless (/dev/zero) or never answer: only a regular
  // file is read. A program that builds its configuration passes the XML text instead.
  if (!S_ISREG(status.st_mode))
    throw config_error(what +
                       "it is not a regular file (a FIFO, device or socket); pass an XML file, "
                       "or the XML text itself to damaris_initialize");
  if (static_cast<std::uint64_t>(status.st_size) > max_configuration_bytes)
    throw config_error(what + "it holds " + std::to_string(status.st_size) +
                       " bytes; a configuration may hold at most " +
                       std::to_string(max_configuration_bytes) + " bytes");
  std::string content;
  content.reserve(static_cast<std::size_t>(status.st_size));
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      content.append(chunk, static_cast<std::size_t>(n));
      if (content.size() > max_configuration_bytes)  // it grew while being read
        throw config_error(what + "it grew beyond " + std::to_string(max_configuration_bytes) +
                           " bytes while being read");
    } else if (n == 0) {
      break;
    } else if (errno == EISDIR) {  // file systems where fstat did not say so
      throw config_error(what + "it is a directory; pass the path of the XML file itself");
    } else if (errno != EINTR) {
      fail(errno);
    }
  }
  return content;
}

std::vector<ghost_widths> evaluate_ghosts(const config::model& model) {
  std::vector<std::int64_t> values;
  values.reserve(model.parameters.size());
  for (const parameter& p : model.parameters) values.push_back(p.int_value);
  std::vector<ghost_widths> result(model.layouts.size());
  for (std::size_t l = 0; l < model.layouts.size(); ++l) {
    for (const auto& [before, after] : model.layouts[l].ghosts) {
      result[l].before.push_back(before.evaluate(values));
      result[l].after.push_back(after.evaluate(values));
    }
  }
  return result;
}

model load_model_file(const std::string& path) {
  return parse_model(read_configuration_file(path), path);
}

}  // namespace sidecore::config
