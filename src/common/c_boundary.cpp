#include "common/c_boundary.hpp"

#include <cstdio>
#include <exception>
#include <new>

#include "common/error.hpp"

namespace sidecore::c_boundary {
namespace {

// Large enough for a configuration error naming a file, a line and the valid choices; a longer
// message is cut, never allocated.
constexpr std::size_t slot_size = 8192;
thread_local char t_slot[slot_size];

}  // namespace

const char* last_error() noexcept { return t_slot; }

void record(const char* function, const char* what) noexcept {
  std::snprintf(t_slot, slot_size, "%s: %s", function ? function : "?", what ? what : "");
}

int record_current_exception(const char* function) noexcept {
  try {
    throw;
  } catch (const error& e) {
    record(function, e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    record(function, "out of memory");
    return DAMARIS_ALLOCATION_ERROR;
  } catch (const std::exception& e) {
    record(function, e.what());
    return DAMARIS_ERROR_UNKNOWN;
  } catch (...) {
    record(function, "unknown exception");
    return DAMARIS_ERROR_UNKNOWN;
  }
}

}  // namespace sidecore::c_boundary
