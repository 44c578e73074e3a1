#include "module_support.hpp"

#include <Python.h>

#include <cctype>

#include "Damaris.h"
#include "sidecore/codes.h"

namespace sidecore_python {

error_classes& classes() {
  static error_classes* c = [] {
    nb::module_ errors = nb::module_::import_("sidecore._errors");
    return new error_classes{errors.attr("Error"), errors.attr("DtypeError"),
                             errors.attr("ShapeError")};
  }();
  return *c;
}

[[noreturn]] void raise(const nb::object& cls, int code, const std::string& message) {
  nb::object instance = cls(code, message);
  PyErr_SetObject(cls.ptr(), instance.ptr());
  throw nb::python_error();
}

std::string in_python_terms(const char* call, const std::string& message) {
  std::size_t end = 0;
  while (end < message.size() &&
         (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '_'))
    ++end;
  const bool names_c_function =
      message.compare(0, 8, "damaris_") == 0 || message.compare(0, 9, "sidecore_") == 0;
  if (!names_c_function || message.compare(end, 2, ": ") != 0) return message;
  return "sidecore." + std::string(call) + message.substr(end);
}

void check(int code, const char* call) {
  if (code != DAMARIS_OK)
    raise(classes().error, code, in_python_terms(call, damaris_last_error_message()));
}

element element_of(int32_t type) {
  using nb::dlpack::dtype_code;
  auto make = [](const char* name, dtype_code code, int bits) {
    return element{name,
                   nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1}};
  };
  switch (type) {
    case DAMARIS_TYPE_CHAR:
      return make("int8", dtype_code::Int, 8);
    case DAMARIS_TYPE_SHORT:
      return make("int16", dtype_code::Int, 16);
    case DAMARIS_TYPE_INT:
      return make("int32", dtype_code::Int, 32);
    case DAMARIS_TYPE_LONG:
      return make("int64", dtype_code::Int, 64);
    case DAMARIS_TYPE_FLOAT:
      return make("float32", dtype_code::Float, 32);
    case DAMARIS_TYPE_DOUBLE:
      return make("float64", dtype_code::Float, 64);
    default:
      return make("undefined", dtype_code::Int, 0);
  }
}

}  // namespace sidecore_python
