// sidecore/read.h: the C face of reader::run_reader. No exception leaves these functions.
#include "sidecore/read.h"

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "common/c_boundary.hpp"
#include "common/error.hpp"
#include "reader/run_reader.hpp"

struct sidecore_reader {
  sidecore::reader::run_reader run;
  sidecore_reader(const std::string& prefix, std::int32_t iteration) : run(prefix, iteration) {}
};

namespace {

using sidecore::argument_error;
using sidecore::reader::element;

template <typename T>
T* required(T* pointer, const char* what) {
  if (!pointer) throw argument_error(std::string(what) + " is NULL");
  return pointer;
}

element element_of(int32_t type) {
  switch (type) {
    case DAMARIS_TYPE_CHAR:
      return element::int8;
    case DAMARIS_TYPE_SHORT:
      return element::int16;
    case DAMARIS_TYPE_INT:
      return element::int32;
    case DAMARIS_TYPE_LONG:
      return element::int64;
    case DAMARIS_TYPE_FLOAT:
      return element::float32;
    case DAMARIS_TYPE_DOUBLE:
      return element::float64;
    default:
      break;
  }
  throw argument_error("type " + std::to_string(type) +
                       " cannot be read (valid: DAMARIS_TYPE_CHAR, _SHORT, _INT, _LONG, _FLOAT, "
                       "_DOUBLE)");
}

std::vector<std::int64_t> values(const int64_t* p, std::size_t n) { return {p, p + n}; }

}  // namespace

SIDECORE_API int sidecore_read_iterations(const char* prefix, int32_t* iterations, int32_t capacity,
                                          int32_t* count) {
  return sidecore::c_boundary::guarded_call("sidecore_read_iterations", [&] {
    required(count, "count");
    const std::vector<std::int32_t> stored =
        sidecore::reader::stored_iterations(required(prefix, "prefix"));
    if (capacity > 0) required(iterations, "iterations");
    std::copy_n(stored.begin(), std::min<std::size_t>(stored.size(), std::max(capacity, 0)),
                iterations);
    *count = static_cast<int32_t>(stored.size());
  });
}

SIDECORE_API int sidecore_read_open(const char* prefix, int32_t iteration,
                                    sidecore_reader** reader) {
  if (reader) *reader = nullptr;
  return sidecore::c_boundary::guarded_call("sidecore_read_open", [&] {
    required(reader, "reader");
    *reader = new sidecore_reader(required(prefix, "prefix"), iteration);
  });
}

SIDECORE_API void sidecore_read_close(sidecore_reader* reader) { delete reader; }

SIDECORE_API int sidecore_read_complete(const sidecore_reader* reader, int32_t* complete) {
  return sidecore::c_boundary::guarded_call("sidecore_read_complete", [&] {
    *required(complete, "complete") = required(reader, "reader")->run.complete() ? 1 : 0;
  });
}

SIDECORE_API int sidecore_read_variable_count(const sidecore_reader* reader, int32_t* count) {
  return sidecore::c_boundary::guarded_call("sidecore_read_variable_count", [&] {
    *required(count, "count") =
        static_cast<int32_t>(required(reader, "reader")->run.variables().size());
  });
}

SIDECORE_API int sidecore_read_variable(const sidecore_reader* reader, int32_t index,
                                        const char** name, int32_t* type, int32_t* ndims,
                                        int64_t* global_extents, int32_t* block_count) {
  return sidecore::c_boundary::guarded_call("sidecore_read_variable", [&] {
    const auto& variables = required(reader, "reader")->run.variables();
    if (index < 0 || static_cast<std::size_t>(index) >= variables.size())
      throw argument_error("variable index " + std::to_string(index) + " is out of range (0.." +
                           std::to_string(static_cast<long>(variables.size()) - 1) + ")");
    const sidecore::reader::variable_info& v = variables[static_cast<std::size_t>(index)];
    if (name) *name = v.name.c_str();
    if (type) *type = static_cast<int32_t>(v.type);
    if (ndims) {
      std::size_t n = v.global_extents.size();
      if (n == 0 && !v.blocks.empty()) n = v.blocks.front().extents.size();
      *ndims = static_cast<int32_t>(n);
    }
    if (global_extents) {
      std::fill_n(global_extents, SIDECORE_MAX_DIMENSIONS, 0);
      std::copy_n(v.global_extents.begin(),
                  std::min<std::size_t>(v.global_extents.size(), SIDECORE_MAX_DIMENSIONS),
                  global_extents);
    }
    if (block_count) *block_count = static_cast<int32_t>(v.blocks.size());
  });
}

SIDECORE_API int sidecore_read_block_info(const sidecore_reader* reader, const char* variable,
                                          int32_t index, sidecore_block_info* info) {
  return sidecore::c_boundary::guarded_call("sidecore_read_block_info", [&] {
    const sidecore::reader::variable_info& v =
        required(reader, "reader")->run.variable(required(variable, "variable"));
    required(info, "info");
    if (index < 0 || static_cast<std::size_t>(index) >= v.blocks.size())
      throw sidecore::error(DAMARIS_BLOCK_NOT_FOUND,
                            "block index " + std::to_string(index) + " of '" + v.name +
                                "' is out of range (it has " + std::to_string(v.blocks.size()) +
                                " blocks)");
    const sidecore::reader::block_info& b = v.blocks[static_cast<std::size_t>(index)];
    *info = sidecore_block_info{};
    info->writer = b.writer;
    info->source = b.source;
    info->block = b.block;
    info->ndims = static_cast<int32_t>(b.extents.size());
    std::copy(b.extents.begin(), b.extents.end(), info->extents);
    std::copy(b.position.begin(), b.position.end(), info->position);
  });
}

SIDECORE_API int sidecore_read_block(sidecore_reader* reader, const char* variable, int32_t source,
                                     int32_t block, int32_t type, void* buffer,
                                     uint64_t buffer_bytes) {
  return sidecore::c_boundary::guarded_call("sidecore_read_block", [&] {
    required(reader, "reader")
        ->run.read_block(required(variable, "variable"), source, block, element_of(type), buffer,
                         buffer_bytes);
  });
}

SIDECORE_API int sidecore_read_region(sidecore_reader* reader, const char* variable,
                                      const int64_t* start, const int64_t* count, int32_t type,
                                      void* buffer, uint64_t buffer_bytes) {
  return sidecore::c_boundary::guarded_call("sidecore_read_region", [&] {
    sidecore::reader::run_reader& run = required(reader, "reader")->run;
    const std::size_t n = run.variable(required(variable, "variable")).global_extents.size();
    // Without global extents there is no region to give (the reader says so), nor to point at.
    run.read_region(variable, values(n ? required(start, "start") : start, n),
                    values(n ? required(count, "count") : count, n), element_of(type), buffer,
                    buffer_bytes);
  });
}

// An alias of damaris_last_error_message(): one error slot per thread (common/c_boundary.hpp).
SIDECORE_API const char* sidecore_read_last_error(void) {
  return sidecore::c_boundary::last_error();
}
