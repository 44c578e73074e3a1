// Byte counts as people read them in messages ("12.50 MiB").
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace sidecore {

inline std::string mib(std::uint64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

}  // namespace sidecore
