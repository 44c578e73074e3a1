// Small text helpers every module needs the same way: case-insensitive comparison (XML values
// and option names), trimming and XML escaping.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace sidecore {

// "1 client", "3 clients": a count and its noun, plural unless the count is 1 (the noun's
// plural is noun + "s" unless given).
inline std::string counted(long long count, std::string_view noun, std::string_view plural = {}) {
  std::string text = std::to_string(count) + " ";
  if (count == 1) return text.append(noun);
  if (!plural.empty()) return text.append(plural);
  return text.append(noun).append("s");
}

// 'text', as messages name a variable, parameter or layout.
inline std::string single_quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

inline bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

inline std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Without the white space (spaces, tabs, line ends) at either end.
inline std::string trimmed(std::string_view text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

// text with &, <, >, " and ' written as XML entities: any string may then stand in an attribute
// value or an element's text without ending it early.
inline std::string xml_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace sidecore
