// What the script runner's files share of CPython: owned references, the GIL, and the pending
// exception as text.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string>
#include <utility>

namespace sidecore::pyscript {

// An owned reference; null means no object (a Python error is set when a call returned it).
class py_ref {
 public:
  py_ref() = default;
  explicit py_ref(PyObject* object) noexcept : m_object(object) {}
  py_ref(const py_ref&) = delete;
  py_ref& operator=(const py_ref&) = delete;
  py_ref(py_ref&& other) noexcept : m_object(std::exchange(other.m_object, nullptr)) {}
  py_ref& operator=(py_ref&& other) noexcept {
    if (this != &other) {
      Py_XDECREF(m_object);
      m_object = std::exchange(other.m_object, nullptr);
    }
    return *this;
  }
  ~py_ref() { Py_XDECREF(m_object); }
  PyObject* get() const noexcept { return m_object; }
  PyObject* release() noexcept { return std::exchange(m_object, nullptr); }
  explicit operator bool() const noexcept { return m_object != nullptr; }

 private:
  PyObject* m_object = nullptr;
};

// f(argument): a new reference, or null with a Python error set.
inline PyObject* call_one(PyObject* function, PyObject* argument) {
#if PY_VERSION_HEX >= 0x03090000
  return PyObject_CallOneArg(function, argument);
#else
  return PyObject_CallFunctionObjArgs(function, argument, nullptr);
#endif
}

// Holds the GIL for its lifetime, from any thread (a background I/O thread included).
class gil {
 public:
  gil() noexcept : m_state(PyGILState_Ensure()) {}
  ~gil() { PyGILState_Release(m_state); }
  gil(const gil&) = delete;
  gil& operator=(const gil&) = delete;

 private:
  PyGILState_STATE m_state;
};

// The pending Python exception as text, with its traceback unless `brief` (cleared
// afterwards).
std::string take_python_error(bool brief = false);

}  // namespace sidecore::pyscript
