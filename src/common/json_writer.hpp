// A small JSON text builder for the run report: objects, arrays, strings, numbers, with the
// commas put where they belong. No parsing, no DOM: the report is written once, in order.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace sidecore {

class json_writer {
 public:
  // indent > 0: one value per line, nested `indent` spaces per level (for people to read).
  explicit json_writer(int indent = 0) : m_indent(indent) {}

  json_writer& begin_object() { return open('{'); }
  json_writer& end_object() { return close('}'); }
  json_writer& begin_array() { return open('['); }
  json_writer& end_array() { return close(']'); }
  // The key of the next value, inside an object.
  json_writer& key(std::string_view name) {
    separate();
    string(name);
    m_text += m_indent > 0 ? ": " : ":";
    m_after_key = true;
    return *this;
  }
  json_writer& value(std::string_view text) {
    separate();
    string(text);
    return *this;
  }
  json_writer& value(const char* text) { return value(std::string_view(text)); }
  json_writer& value(bool b) { return raw(b ? "true" : "false"); }
  json_writer& value(std::uint64_t n) { return raw(std::to_string(n)); }
  json_writer& value(std::int64_t n) { return raw(std::to_string(n)); }
  json_writer& value(int n) { return raw(std::to_string(n)); }
  json_writer& value(unsigned n) { return raw(std::to_string(n)); }
  // Not finite (no such thing in JSON): null.
  json_writer& value(double x) {
    if (!std::isfinite(x)) return null();
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", x);  // reads back exactly
    return raw(text);
  }
  json_writer& null() { return raw("null"); }
  // Text that is already JSON (a value, as another json_writer made it).
  json_writer& raw(std::string_view json) {
    separate();
    m_text += json;
    return *this;
  }
  template <typename T>
  json_writer& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }
  // A whole vector as an array.
  template <typename T>
  json_writer& array(const std::vector<T>& values) {
    begin_array();
    for (const T& v : values) value(v);
    return end_array();
  }
  template <typename T, typename Get>
  json_writer& column(std::string_view name, const std::vector<T>& rows, Get get) {
    key(name).begin_array();
    for (const T& r : rows) value(get(r));
    return end_array();
  }
  const std::string& text() const noexcept { return m_text; }

 private:
  json_writer& open(char c) {
    separate();
    m_text += c;
    m_first.push_back(true);
    return *this;
  }
  json_writer& close(char c) {
    const bool empty = m_first.back();
    m_first.pop_back();
    if (!empty) new_line();
    m_text += c;
    return *this;
  }
  void new_line() {
    if (m_indent <= 0) return;
    m_text += '\n';
    m_text.append(m_first.size() * static_cast<std::size_t>(m_indent), ' ');
  }
  void separate() {
    if (m_after_key) {
      m_after_key = false;
      return;
    }
    if (m_first.empty()) return;
    if (!m_first.back()) m_text += ',';
    m_first.back() = false;
    new_line();
  }
  void string(std::string_view s) {
    m_text += '"';
    for (char c : s) {
      switch (c) {
        case '"':
          m_text += "\\\"";
          break;
        case '\\':
          m_text += "\\\\";
          break;
        case '\n':
          m_text += "\\n";
          break;
        case '\t':
          m_text += "\\t";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
            m_text += escaped;
          } else {
            m_text += c;
          }
      }
    }
    m_text += '"';
  }

  int m_indent;
  std::string m_text;
  std::vector<bool> m_first;
  bool m_after_key = false;
};

}  // namespace sidecore
