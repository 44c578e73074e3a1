// What the files of the Python module share: its error classes and element types.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>  // raise() passes its message as a Python str

#include <cstdint>
#include <string>

namespace sidecore_python {

namespace nb = nanobind;

// The error classes of sidecore._errors, looked up once (the module outlives every call).
struct error_classes {
  nb::object error, dtype_error, shape_error;
};
error_classes& classes();

// Raises cls(code, message) as the pending Python exception.
[[noreturn]] void raise(const nb::object& cls, int code, const std::string& message);

// The C API's message in the Python user's terms: the C function it starts with ("damaris_x: "
// or "sidecore_x: ", which a Python program never calls) becomes "sidecore.<call>: ".
std::string in_python_terms(const char* call, const std::string& message);

// Raises sidecore.Error for a failed C call made on behalf of sidecore.<call>, with this
// thread's message (damaris_last_error_message()) in the Python user's terms. No-op for
// DAMARIS_OK.
void check(int code, const char* call);

// NumPy's name of a DAMARIS_TYPE_* element type, and its DLPack dtype.
struct element {
  const char* name;
  nb::dlpack::dtype dtype;
};
element element_of(int32_t type);

// Adds OutputReader and stored_iterations (sidecore/read.h: sidecore.read_output) to m.
void add_reader(nb::module_& m);

}  // namespace sidecore_python
