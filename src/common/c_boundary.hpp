// The C boundary of Sidecore's extension headers (introspection, read): a call's body runs
// here, and any exception becomes a Damaris error code plus a message kept for the caller's
// *_last_error() function. Nothing crosses into C.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "common/error.hpp"

namespace sidecore {

template <typename Body>
int guarded_call(std::string& last_error, const char* function, Body&& body) noexcept {
  try {
    body();
    return DAMARIS_OK;
  } catch (const error& e) {
    last_error = std::string(function) + ": " + e.what();
    return e.code();
  } catch (const std::bad_alloc&) {
    last_error = std::string(function) + ": out of memory";
    return DAMARIS_ALLOCATION_ERROR;
  } catch (const std::exception& e) {
    last_error = std::string(function) + ": " + e.what();
    return DAMARIS_ERROR_UNKNOWN;
  } catch (...) {
    last_error = std::string(function) + ": unknown exception";
    return DAMARIS_ERROR_UNKNOWN;
  }
}

}  // namespace sidecore
