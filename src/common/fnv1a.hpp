// FNV-1a, 64 bits: a hash of short text (names, host identities) with no table and no call.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/hot_path.hpp"

namespace sidecore {

SIDECORE_HOT_PATH inline std::uint64_t fnv1a(
    std::string_view text, std::uint64_t hash = 14695981039346656037ull) noexcept {
  for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return hash;
}

}  // namespace sidecore
