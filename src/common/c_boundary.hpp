// The C boundary: every function of Sidecore's C API (Damaris.h and the sidecore/*.h extension
// headers) runs its body inside a guard, and an exception becomes a Damaris error code plus a
// message in this thread's one error slot, which damaris_last_error_message() and its aliases
// (sidecore_*_last_error) return. Nothing crosses into C, and nothing on the failure path
// allocates: a call that failed for lack of memory still reports it.
#pragma once

#include "Damaris.h"

// Marks a function of the C API: C linkage, exported from libsidecore (everything else is
// hidden). Used only in bindings/c, where every exported function lives.
#define SIDECORE_API extern "C" __attribute__((visibility("default")))

namespace sidecore::c_boundary {

// This thread's message of the latest failed call ("" before any failure); valid until this
// thread's next failed call.
const char* last_error() noexcept;

// Records "function: what" as this thread's latest failure (cut to the slot's size).
void record(const char* function, const char* what) noexcept;

// Called inside a catch block: records the exception in flight and returns its code
// (sidecore::error: its own; std::bad_alloc: DAMARIS_ALLOCATION_ERROR; others:
// DAMARIS_ERROR_UNKNOWN).
int record_current_exception(const char* function) noexcept;

// Runs body; DAMARIS_OK, or the code of what it threw (recorded as above).
template <typename Body>
int guarded_call(const char* function, Body&& body) noexcept {
  try {
    body();
    return DAMARIS_OK;
  } catch (...) {
    return record_current_exception(function);
  }
}

}  // namespace sidecore::c_boundary
