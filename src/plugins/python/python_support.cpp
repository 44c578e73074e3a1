#include "plugins/python/python_support.hpp"

namespace sidecore::pyscript {

std::string take_python_error(bool brief) {
  if (!PyErr_Occurred()) return "unknown error (no Python exception was set)";
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  py_ref t(type), v(value), tb(traceback);
  if (tb) PyException_SetTraceback(v.get(), tb.get());
  std::string text;
  py_ref module(PyImport_ImportModule("traceback"));
  if (module) {
    py_ref lines(brief
                     ? PyObject_CallMethod(module.get(), "format_exception_only", "OO",
                                           t.get() ? t.get() : Py_None, v.get() ? v.get() : Py_None)
                     : PyObject_CallMethod(module.get(), "format_exception", "OOO",
                                           t.get() ? t.get() : Py_None, v.get() ? v.get() : Py_None,
                                           tb.get() ? tb.get() : Py_None));
    if (lines) {
      py_ref empty(PyUnicode_FromString(""));
      py_ref joined(empty ? PyUnicode_Join(empty.get(), lines.get()) : nullptr);
      const char* utf8 = joined ? PyUnicode_AsUTF8(joined.get()) : nullptr;
      if (utf8 != nullptr) text = utf8;
    }
  }
  if (text.empty() && v) {
    py_ref s(PyObject_Str(v.get()));
    const char* utf8 = s ? PyUnicode_AsUTF8(s.get()) : nullptr;
    if (utf8 != nullptr) text = utf8;
  }
  PyErr_Clear();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.empty() ? "a Python exception that could not be formatted" : text;
}

}  // namespace sidecore::pyscript
