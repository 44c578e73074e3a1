// Typed exceptions used inside Sidecore; translated to Damaris error codes at the C boundary.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "Damaris.h"
#include "common/units.hpp"

namespace sidecore {

// Base of every exception Sidecore throws. Carries the Damaris error code the C API returns.
class error : public std::runtime_error {
 public:
  error(int code, const std::string& message) : std::runtime_error(message), m_code(code) {}
  int code() const noexcept { return m_code; }

 private:
  int m_code;
};

// Invalid XML configuration: the message names the file, the line and what would be valid.
class config_error : public error {
 public:
  explicit config_error(const std::string& message) : error(DAMARIS_CONFIG_ERROR, message) {}
};

// Shared memory could not hold a request, or waiting for space timed out.
class allocation_error : public error {
 public:
  explicit allocation_error(const std::string& message)
      : error(DAMARIS_ALLOCATION_ERROR, message) {}
};

// A block larger than the whole buffer it must go through: no amount of waiting helps.
inline allocation_error block_never_fits(std::uint64_t bytes, std::uint64_t capacity,
                                         const std::string& buffer) {
  return allocation_error("a block of " + readable_bytes(bytes) + " can never fit in " + buffer +
                          " of " + readable_bytes(capacity) +
                          "; raise <buffer size=...> in the XML");
}

// A caller passed something invalid (null pointer, wrong size, bad block id...).
class argument_error : public error {
 public:
  argument_error(int code, const std::string& message) : error(code, message) {}
  explicit argument_error(const std::string& message) : error(DAMARIS_ARGUMENT_ERROR, message) {}
};

// An MPI call failed.
class mpi_error : public error {
 public:
  explicit mpi_error(const std::string& message) : error(DAMARIS_MPI_ERROR, message) {}
};

// Storage (HDF5) failed; reported as DAMARIS_ERROR_UNKNOWN since Damaris has no I/O code.
class storage_error : public error {
 public:
  explicit storage_error(const std::string& message) : error(DAMARIS_ERROR_UNKNOWN, message) {}
};

}  // namespace sidecore
