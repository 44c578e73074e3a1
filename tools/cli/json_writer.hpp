// A small JSON emitter for the command-line tool: objects, arrays, strings, numbers, booleans,
// indented two spaces per level. The caller pairs every begin with its end.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace sidecore::cli {

class json_writer {
 public:
  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }

  // The key of the next value inside an object.
  json_writer& key(std::string_view name) {
    separate();
    quote(name);
    m_out += ": ";
    m_after_key = true;
    return *this;
  }

  void value(std::string_view text) {
    separate();
    quote(text);
  }
  void value(const char* text) { value(std::string_view(text)); }
  void value(const std::string& text) { value(std::string_view(text)); }
  void value(bool flag) {
    separate();
    m_out += flag ? "true" : "false";
  }
  void value(std::uint64_t number) {
    separate();
    m_out += std::to_string(number);
  }
  void value(std::int64_t number) {
    separate();
    m_out += std::to_string(number);
  }
  void value(int number) { value(static_cast<std::int64_t>(number)); }
  void value(double number) {
    separate();
    char text[40];
    std::snprintf(text, sizeof text, "%.10g", number);
    m_out += text;
  }
  void null() {
    separate();
    m_out += "null";
  }

  template <typename T>
  void array(const std::vector<T>& items) {
    begin_array();
    for (const T& item : items) value(item);
    end_array();
  }

  // The document, ending with a line break.
  std::string text() const { return m_out + "\n"; }

 private:
  void open(char bracket) {
    separate();
    m_out += bracket;
    m_first.push_back(true);
  }
  void close(char bracket) {
    const bool empty = m_first.back();
    m_first.pop_back();
    if (!empty) newline();
    m_out += bracket;
  }
  // A comma between siblings and each one on its own line; nothing after a key.
  void separate() {
    if (m_after_key) {
      m_after_key = false;
      return;
    }
    if (m_first.empty()) return;
    if (!m_first.back()) m_out += ',';
    m_first.back() = false;
    newline();
  }
  void newline() {
    m_out += '\n';
    m_out.append(2 * m_first.size(), ' ');
  }
  void quote(std::string_view text) {
    m_out += '"';
    for (const char c : text) {
      switch (c) {
        case '"': m_out += "\\\""; break;
        case '\\': m_out += "\\\\"; break;
        case '\n': m_out += "\\n"; break;
        case '\r': m_out += "\\r"; break;
        case '\t': m_out += "\\t"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
            m_out += escaped;
          } else {
            m_out += c;
          }
      }
    }
    m_out += '"';
  }

  std::string m_out;
  std::vector<bool> m_first;  // per open bracket: nothing written in it yet
  bool m_after_key = false;
};

}  // namespace sidecore::cli
