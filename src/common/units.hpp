// Byte counts as people read them in messages: MiB ("12.50 MiB") from 1 MiB up to 1 TiB, so
// that buffer sizes compare at a glance, then TiB ("1024.00 TiB"); below 1 MiB, bytes
// ("4096 bytes"), which "0.00 MiB" would hide.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace sidecore {

inline std::string readable_bytes(std::uint64_t bytes) {
  char text[64];
  const double value = static_cast<double>(bytes);
  if (bytes < (std::uint64_t{1} << 20))
    std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
  else if (bytes >= (std::uint64_t{1} << 40))
    std::snprintf(text, sizeof text, "%.2f TiB", value / (1024.0 * 1024.0 * 1024.0 * 1024.0));
  else
    std::snprintf(text, sizeof text, "%.2f MiB", value / (1024.0 * 1024.0));
  return text;
}

}  // namespace sidecore
