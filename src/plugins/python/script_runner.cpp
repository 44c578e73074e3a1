// Runs <pyscript> files where the stores run: an action plugin of <sidecore/plugin.h> that
// embeds CPython (or joins the interpreter of a Python simulation) and hands each iteration's
// blocks to sidecore_script.py (in sidecore-pyscript/ next to this library) as zero-copy,
// read-only buffers.
//
// The library does not link libpython: inside a Python process it uses that interpreter's
// symbols, and elsewhere Sidecore opens libpython (RTLD_GLOBAL) before opening this library
// (python_scripts.cpp). Every entry point takes the GIL for as long as Python runs and no
// longer, so a dedicated core's other work and a Python simulation's threads go on meanwhile.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
// NumPy's C API, for the blocks' views (made here, not through numpy.frombuffer).
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "plugins/python/call_deadline.hpp"
#include "plugins/python/python_support.hpp"
#include "sidecore/plugin.h"

namespace {

using sidecore::pyscript::call_deadline;
using sidecore::pyscript::call_one;
using sidecore::pyscript::gil;
using sidecore::pyscript::py_ref;
using sidecore::pyscript::take_python_error;

void put_message(char* message, std::size_t size, const char* text) noexcept {
  if (size == 0) return;
  std::snprintf(message, size, "%s", text);
}

void put_message(char* message, std::size_t size, const std::string& text) noexcept {
  put_message(message, size, text.c_str());
}

// The plugin's C boundary: each entry point's body runs here, and an exception (out of memory,
// a watching thread that cannot start) becomes the call's error message without allocating;
// none crosses into the library that called.
template <typename Body>
int guarded(char* message, std::size_t size, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    put_message(message, size, "out of memory in the Python script runner");
  } catch (const std::exception& e) {
    put_message(message, size, e.what());
  } catch (...) {
    put_message(message, size, "unknown C++ exception in the Python script runner");
  }
  return SIDECORE_PLUGIN_ERROR;
}

// Starts the interpreter once per process when the program is not Python itself. Returns ""
// or why it could not.
std::string ensure_interpreter(const char* executable) {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [executable] {
    if (Py_IsInitialized()) return;  // a Python simulation, or a second script
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;  // SIGINT and friends stay the simulation's
    config.parse_argv = 0;
    config.buffered_stdio = 0;  // print() reaches the log at once; nothing lost at exit
    PyStatus status = PyStatus_Ok();
    if (executable != nullptr && executable[0] != '\0') {
      // The interpreter finds its prefix, and a virtual environment's site-packages, from
      // the path of its executable.
      status = PyConfig_SetBytesString(&config, &config.program_name, executable);
    }
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
      failure = std::string("the embedded Python interpreter did not start: ") +
                (status.err_msg != nullptr ? status.err_msg : "unknown reason") +
                (status.func != nullptr ? std::string(" (in ") + status.func + ")" : "");
      return;
    }
    // The thread that started Python gives the GIL up; every call takes it back.
    PyEval_SaveThread();
  });
  return failure;
}

// The Python half (sidecore_script.py and damaris4py), imported from `directory` once per
// process (GIL held).
PyObject* host_module(const char* directory, std::string& error) {
  static PyObject* module = nullptr;  // kept for the life of the process
  if (module != nullptr) return module;
  PyObject* path = PySys_GetObject("path");  // borrowed
  py_ref entry(PyUnicode_FromString(directory));
  if (path == nullptr || !entry || PyList_Insert(path, 0, entry.get()) < 0) {
    error = take_python_error();
    return nullptr;
  }
  py_ref loaded(PyImport_ImportModule("sidecore_script"));
  if (!loaded) {
    error = take_python_error() + "\n(the Python half of the script runner is looked for in " +
            directory + ")";
    return nullptr;
  }
  if (_import_array() < 0) {  // NumPy is loaded by now: sidecore_script imports it
    error = "NumPy's C API is not usable in this interpreter: " + take_python_error();
    return nullptr;
  }
  module = loaded.release();
  return module;
}

// A block's memory as a Python object: read-only buffers on it, counted, so that the runner
// knows whether the script still holds a view (a NumPy array made from it) after its call.
struct block_memory {
  PyObject_HEAD const void* data;  // nullptr once the call is over: no new view can be made
  Py_ssize_t bytes;
  Py_ssize_t exports;
  int iteration;
  int type;  // a sidecore_element_type
  int ndims;
  npy_intp dims[SIDECORE_PLUGIN_MAX_DIMS];  // C order, ghost zones included
};

int block_memory_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  auto* memory = reinterpret_cast<block_memory*>(self);
  if (memory->data == nullptr) {
    PyErr_Format(PyExc_BufferError,
                 "the data of a block of iteration %d was lent for that iteration's call only: "
                 "keep a copy (block.data.copy()) of what must outlive the call",
                 memory->iteration);
    view->obj = nullptr;
    return -1;
  }
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) {
    PyErr_SetString(PyExc_BufferError, "block data is read-only: copy it to change it");
    view->obj = nullptr;
    return -1;
  }
  if (PyBuffer_FillInfo(view, self, const_cast<void*>(memory->data), memory->bytes, 1, flags) < 0)
    return -1;
  ++memory->exports;
  return 0;
}

void block_memory_releasebuffer(PyObject* self, Py_buffer*) {
  --reinterpret_cast<block_memory*>(self)->exports;
}

void block_memory_dealloc(PyObject* self) { Py_TYPE(self)->tp_free(self); }

int npy_type_of(int type) {
  switch (type) {
    case SIDECORE_TYPE_INT8:
      return NPY_INT8;
    case SIDECORE_TYPE_INT16:
      return NPY_INT16;
    case SIDECORE_TYPE_INT32:
      return NPY_INT32;
    case SIDECORE_TYPE_INT64:
      return NPY_INT64;
    case SIDECORE_TYPE_FLOAT32:
      return NPY_FLOAT32;
    case SIDECORE_TYPE_FLOAT64:
      return NPY_FLOAT64;
    default:
      return NPY_NOTYPE;
  }
}

// memory.array(): the whole block as a read-only NumPy array (C order, ghost zones included)
// whose base is a memoryview of the memory: the buffer export lasts as long as the array, or
// any array made from it, so the runner still sees views kept past the call. BufferError once
// the call is over.
PyObject* block_memory_array(PyObject* self, PyObject*) {
  auto* memory = reinterpret_cast<block_memory*>(self);
  py_ref base(PyMemoryView_FromObject(self));
  if (!base) return nullptr;
  PyArray_Descr* descr = PyArray_DescrFromType(npy_type_of(memory->type));
  if (descr == nullptr) return nullptr;
  // Flags without NPY_ARRAY_WRITEABLE: read-only; NumPy works out the alignment itself.
  PyObject* array =
      PyArray_NewFromDescr(&PyArray_Type, descr, memory->ndims, memory->dims, nullptr,
                           const_cast<void*>(memory->data), NPY_ARRAY_C_CONTIGUOUS, nullptr);
  if (array == nullptr) return nullptr;
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), base.release()) < 0) {
    Py_DECREF(array);
    return nullptr;
  }
  return array;
}

// Makes one of the runner's static types ready, once (GIL held); `fill` sets what is its own.
template <typename Fill>
PyTypeObject* ready_type(PyTypeObject& type, const char* name, const char* doc, Py_ssize_t size,
                         destructor dealloc, Fill fill) {
  if (type.tp_name == nullptr) {
    reinterpret_cast<PyObject*>(&type)->ob_refcnt = 1;  // a static type is never freed
    type.tp_name = name;
    type.tp_doc = doc;
    type.tp_basicsize = size;
    type.tp_flags = Py_TPFLAGS_DEFAULT;
    type.tp_dealloc = dealloc;
    type.tp_free = PyObject_Del;
    fill(type);
    if (PyType_Ready(&type) < 0) {
      type.tp_name = nullptr;
      return nullptr;
    }
  }
  return &type;
}

PyTypeObject* block_memory_type() {
  static PyBufferProcs procs = {block_memory_getbuffer, block_memory_releasebuffer};
  static PyMethodDef methods[] = {
      {"array", block_memory_array, METH_NOARGS,
       "The whole block as a read-only NumPy array, valid during the call only."},
      {nullptr, nullptr, 0, nullptr}};
  static PyTypeObject type{};
  return ready_type(type, "sidecore_script.BlockMemory",
                    "The memory of one block, lent for one call: read-only buffers only.",
                    sizeof(block_memory), block_memory_dealloc, [](PyTypeObject& t) {
                      t.tp_as_buffer = &procs;
                      t.tp_methods = methods;
                    });
}

struct script {
  py_ref host;  // sidecore_script.Script
  // A Sidecore-style script is called without Python frames of ours (its Blocks and
  // Iteration made here; after a long compute phase every frame is cache misses): the Block
  // and Iteration classes, on_iteration, and the script's variables. Empty otherwise.
  py_ref block_type, iteration_type, function, variables;
  // The Iteration's attribute names, made once (not one string per attribute per call).
  py_ref number_name, incomplete_name, blocks_name, dask_name, dask_client_name;
  double time_limit = 0;  // seconds per call (time-limit="S"); 0: none
  std::string who;        // "<pyscript name=...> on writer k" for messages
};

// Takes host.direct (see sidecore_script.Script) apart; leaves the fields empty when None.
bool read_direct_call(script& s) {
  py_ref direct(PyObject_GetAttrString(s.host.get(), "direct"));
  if (!direct) return false;
  if (direct.get() == Py_None) return true;
  if (!PyTuple_Check(direct.get()) || PyTuple_GET_SIZE(direct.get()) != 4) {
    PyErr_SetString(PyExc_TypeError, "sidecore_script.Script.direct is not a 4-tuple");
    return false;
  }
  py_ref* fields[] = {&s.block_type, &s.iteration_type, &s.function, &s.variables};
  for (Py_ssize_t i = 0; i < 4; ++i) {
    PyObject* item = PyTuple_GET_ITEM(direct.get(), i);
    Py_INCREF(item);
    *fields[i] = py_ref(item);
  }
  const std::pair<py_ref*, const char*> names[] = {{&s.number_name, "number"},
                                                   {&s.incomplete_name, "incomplete"},
                                                   {&s.blocks_name, "_blocks"},
                                                   {&s.dask_name, "dask"},
                                                   {&s.dask_client_name, "dask_client"}};
  for (const auto& [field, name] : names) {
    *field = py_ref(PyUnicode_InternFromString(name));
    if (!*field) return false;
  }
  return true;
}

const char* option(const sidecore_action_config* config, const char* key) {
  for (std::uint64_t i = 0; i < config->option_count; ++i)
    if (std::strcmp(config->option_keys[i], key) == 0) return config->option_values[i];
  return "";
}

py_ref int_tuple(const std::int64_t* values, int count) {
  if (values == nullptr) {
    Py_INCREF(Py_None);
    return py_ref(Py_None);
  }
  py_ref tuple(PyTuple_New(count));
  if (!tuple) return tuple;
  for (int i = 0; i < count; ++i) {
    PyObject* item = PyLong_FromLongLong(values[i]);
    if (item == nullptr) return py_ref();
    PyTuple_SET_ITEM(tuple.get(), i, item);
  }
  return tuple;
}

// One block as the tuple script_host.py expects:
// (variable, type, dims, global_dims, position, ghosts_before, ghosts_after, source, block,
//  block_memory of the data): read-only buffers on Sidecore's memory.
py_ref block_tuple(const sidecore_block& b) {
  PyTypeObject* type = block_memory_type();
  block_memory* memory = type != nullptr ? PyObject_New(block_memory, type) : nullptr;
  if (memory == nullptr) return py_ref();
  memory->data = b.data;
  memory->bytes = static_cast<Py_ssize_t>(b.bytes);
  memory->exports = 0;
  memory->iteration = b.iteration;
  memory->type = static_cast<int>(b.type);
  memory->ndims = std::min(static_cast<int>(b.ndims), SIDECORE_PLUGIN_MAX_DIMS);
  for (int d = 0; d < memory->ndims; ++d) memory->dims[d] = static_cast<npy_intp>(b.dims[d]);
  py_ref data(reinterpret_cast<PyObject*>(memory));
  return py_ref(Py_BuildValue(
      "(siNNNNNiiN)", b.variable, static_cast<int>(b.type), int_tuple(b.dims, b.ndims).release(),
      int_tuple(b.global_dims, b.ndims).release(), int_tuple(b.position, b.ndims).release(),
      int_tuple(b.ghosts_before, b.ndims).release(), int_tuple(b.ghosts_after, b.ndims).release(),
      static_cast<int>(b.source), static_cast<int>(b.block), data.release()));
}

// One block tuple per block of the iteration, in a list (GIL held).
py_ref raw_blocks(const sidecore_iteration& iteration) {
  py_ref blocks(PyList_New(static_cast<Py_ssize_t>(iteration.block_count)));
  if (!blocks) return blocks;
  for (std::uint64_t i = 0; i < iteration.block_count; ++i) {
    py_ref t = block_tuple(iteration.blocks[i]);
    if (!t) return py_ref();
    PyList_SET_ITEM(blocks.get(), static_cast<Py_ssize_t>(i), t.release());
  }
  return blocks;
}

// {variable: [Block...]} of a Sidecore-style script: every variable of the script, the raw
// tuples made Blocks (a tuple subclass: no Python code runs).
py_ref block_views(const script& s, PyObject* raw) {
  py_ref views(PyDict_New());
  if (!views) return views;
  for (Py_ssize_t v = 0; v < PyTuple_GET_SIZE(s.variables.get()); ++v) {
    py_ref list(PyList_New(0));
    if (!list ||
        PyDict_SetItem(views.get(), PyTuple_GET_ITEM(s.variables.get(), v), list.get()) < 0)
      return py_ref();
  }
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(raw); ++i) {
    PyObject* entry = PyList_GET_ITEM(raw, i);
    py_ref block(call_one(s.block_type.get(), entry));
    if (!block) return py_ref();
    PyObject* list = PyDict_GetItemWithError(views.get(), PyTuple_GET_ITEM(entry, 0));  // borrowed
    if (list == nullptr) {
      if (PyErr_Occurred()) return py_ref();
      py_ref fresh(PyList_New(0));
      if (!fresh || PyDict_SetItem(views.get(), PyTuple_GET_ITEM(entry, 0), fresh.get()) < 0)
        return py_ref();
      list = fresh.get();
    }
    if (PyList_Append(list, block.get()) < 0) return py_ref();
  }
  return views;
}

// The blocks of a Sidecore-style script's Iteration, made when the script first asks for them
// (Iteration.blocks calls this object): a script that looks at none of them, or only on some
// iterations, does not pay for them. Callable during the call only.
struct lazy_blocks {
  PyObject_HEAD const script* owner;
  const sidecore_iteration* iteration;  // nullptr once the call is over
  int number;
  PyObject* raw;    // the block tuples, once made (the runner takes their memory back)
  PyObject* views;  // what the call returned
};

PyObject* lazy_blocks_call(PyObject* self, PyObject*, PyObject*) {
  auto* lazy = reinterpret_cast<lazy_blocks*>(self);
  if (lazy->views != nullptr) {
    Py_INCREF(lazy->views);
    return lazy->views;
  }
  if (lazy->iteration == nullptr) {
    PyErr_Format(PyExc_RuntimeError,
                 "the blocks of iteration %d were lent for that iteration's call only: read "
                 "iteration.blocks during the call (and copy what must outlive it)",
                 lazy->number);
    return nullptr;
  }
  py_ref raw = raw_blocks(*lazy->iteration);
  if (!raw) return nullptr;
  py_ref views = block_views(*lazy->owner, raw.get());
  if (!views) return nullptr;
  lazy->raw = raw.release();
  lazy->views = views.release();
  Py_INCREF(lazy->views);
  return lazy->views;
}

void lazy_blocks_dealloc(PyObject* self) {
  auto* lazy = reinterpret_cast<lazy_blocks*>(self);
  Py_XDECREF(lazy->raw);
  Py_XDECREF(lazy->views);
  Py_TYPE(self)->tp_free(self);
}

PyTypeObject* lazy_blocks_type() {
  static PyTypeObject type{};
  return ready_type(type, "sidecore_script.LazyBlocks",
                    "The blocks of one iteration, made on first call, during the script's call.",
                    sizeof(lazy_blocks), lazy_blocks_dealloc,
                    [](PyTypeObject& t) { t.tp_call = lazy_blocks_call; });
}

// The Iteration a Sidecore-style script receives, its attributes set as Iteration.__init__
// would, its blocks to be made on first use.
py_ref direct_iteration(const script& s, const sidecore_iteration& iteration, PyObject* blocks) {
  auto* type = reinterpret_cast<PyTypeObject*>(s.iteration_type.get());
  py_ref empty(PyTuple_New(0));
  py_ref it(empty ? PyBaseObject_Type.tp_new(type, empty.get(), nullptr) : nullptr);
  if (!it) return it;
  py_ref number(PyLong_FromLong(iteration.iteration));
  py_ref dask(PyDict_New());
  if (!number || !dask || PyObject_SetAttr(it.get(), s.number_name.get(), number.get()) < 0 ||
      PyObject_SetAttr(it.get(), s.incomplete_name.get(),
                       iteration.incomplete ? Py_True : Py_False) < 0 ||
      PyObject_SetAttr(it.get(), s.blocks_name.get(), blocks) < 0 ||
      PyObject_SetAttr(it.get(), s.dask_name.get(), dask.get()) < 0 ||
      PyObject_SetAttr(it.get(), s.dask_client_name.get(), Py_None) < 0)
    return py_ref();
  return it;
}

// After a call: the blocks' memory is given back, so that a view the script kept cannot read
// memory later iterations reuse. Returns how many blocks the script still holds views of.
long take_back(PyObject* raw) {
  long kept = 0;
  for (Py_ssize_t i = 0; raw != nullptr && i < PyList_GET_SIZE(raw); ++i) {
    PyObject* entry = PyList_GET_ITEM(raw, i);
    auto* memory =
        reinterpret_cast<block_memory*>(PyTuple_GET_ITEM(entry, PyTuple_GET_SIZE(entry) - 1));
    if (memory->exports > 0) ++kept;
    memory->data = nullptr;  // a Block the script kept can make no view any more
    memory->bytes = 0;
  }
  return kept;
}

constexpr const char* exited =
    "the Python interpreter has exited (a Python program must call finalize(), or leave its "
    "`with sidecore.initialize(...)` block, before it ends)";

// Whether Python can still run: not after the interpreter finalized (a Python program that
// exits without damaris_finalize tears Sidecore down after that), nor while it finalizes.
bool python_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

int fail(char* message, std::size_t size, const std::string& text, int code) {
  put_message(message, size, text);
  return code;
}

int script_create(const sidecore_action_config* config, void** handle, char* message,
                  std::size_t message_size) {
  return guarded(message, message_size, [&]() -> int {
    const std::string started = ensure_interpreter(option(config, "python"));
    if (!started.empty()) return fail(message, message_size, started, SIDECORE_PLUGIN_CONFIG_ERROR);
    gil held;
    std::string error;
    PyObject* module = host_module(option(config, "host"), error);
    if (module == nullptr) {
      return fail(message, message_size, "the script host did not load: " + error,
                  SIDECORE_PLUGIN_ERROR);
    }
    py_ref options(PyDict_New());
    py_ref variables(PyList_New(0));
    if (!options || !variables) return fail(message, message_size, take_python_error(), 1);
    for (std::uint64_t i = 0; i < config->option_count; ++i) {
      py_ref value(PyUnicode_FromString(config->option_values[i]));
      if (!value || PyDict_SetItemString(options.get(), config->option_keys[i], value.get()) < 0)
        return fail(message, message_size, take_python_error(), SIDECORE_PLUGIN_ERROR);
    }
    for (std::uint64_t i = 0; i < config->variable_count; ++i) {
      py_ref name(PyUnicode_FromString(config->variables[i]));
      if (!name || PyList_Append(variables.get(), name.get()) < 0)
        return fail(message, message_size, take_python_error(), SIDECORE_PLUGIN_ERROR);
    }
    const long comm = static_cast<long>(MPI_Comm_c2f(config->comm));
    const long finish_comm = config->finish_comm == MPI_COMM_NULL
                                 ? -1
                                 : static_cast<long>(MPI_Comm_c2f(config->finish_comm));
    py_ref host(PyObject_CallMethod(module, "Script", "ssOOiiill", config->simulation,
                                    config->action_name, options.get(), variables.get(),
                                    static_cast<int>(config->frequency),
                                    static_cast<int>(config->writer_index),
                                    static_cast<int>(config->writer_count), comm, finish_comm));
    if (!host) {
      // What the configuration or the script's file can fix (the file, its syntax) is said
      // without the host's frames; anything else the script's set-up raised, with them.
      PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
      PyErr_Fetch(&type, &value, &traceback);  // no API call while an exception is set
      py_ref fault(PyObject_GetAttrString(module, "ConfigurationError"));
      PyErr_Clear();
      PyErr_Restore(type, value, traceback);
      const bool config_fault = (fault && PyErr_ExceptionMatches(fault.get())) ||
                                PyErr_ExceptionMatches(PyExc_SyntaxError);
      return fail(message, message_size, take_python_error(config_fault),
                  config_fault ? SIDECORE_PLUGIN_CONFIG_ERROR : SIDECORE_PLUGIN_ERROR);
    }
    auto s = std::make_unique<script>();
    s->host = std::move(host);
    s->time_limit = std::atof(option(config, "time-limit"));
    s->who = std::string("<pyscript name=\"") + config->action_name + "\"> on writer " +
             std::to_string(config->writer_index);
    if (!read_direct_call(*s))
      return fail(message, message_size, take_python_error(), SIDECORE_PLUGIN_ERROR);
    *handle = s.release();
    return SIDECORE_PLUGIN_OK;
  });
}

int on_iteration(void* handle, const sidecore_iteration* iteration, char* message,
                 std::size_t message_size) {
  auto* s = static_cast<script*>(handle);
  if (!python_alive()) return fail(message, message_size, exited, SIDECORE_PLUGIN_ERROR);
  gil held;
  call_deadline deadline(s->time_limit, s->who, iteration->iteration);
  py_ref result;
  py_ref raw;  // the block tuples, when made
  if (s->function) {
    lazy_blocks* lazy = nullptr;
    PyTypeObject* type = lazy_blocks_type();
    if (type != nullptr) lazy = PyObject_New(lazy_blocks, type);
    if (lazy == nullptr)
      return fail(message, message_size, take_python_error(), SIDECORE_PLUGIN_ERROR);
    lazy->owner = s;
    lazy->iteration = iteration;
    lazy->number = iteration->iteration;
    lazy->raw = nullptr;
    lazy->views = nullptr;
    py_ref holder(reinterpret_cast<PyObject*>(lazy));
    py_ref it = direct_iteration(*s, *iteration, holder.get());
    if (it) result = py_ref(call_one(s->function.get(), it.get()));
    lazy->iteration = nullptr;  // the call is over: no blocks made from now on
    if (lazy->raw != nullptr) {
      Py_INCREF(lazy->raw);
      raw = py_ref(lazy->raw);
    }
  } else {
    raw = raw_blocks(*iteration);
    if (!raw) return fail(message, message_size, take_python_error(), SIDECORE_PLUGIN_ERROR);
    result = py_ref(PyObject_CallMethod(s->host.get(), "run", "iiO", iteration->iteration,
                                        iteration->incomplete, raw.get()));
  }
  const bool timed_out = deadline.finish();
  std::string error = result ? std::string() : take_python_error();
  if (timed_out && !error.empty()) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", s->time_limit);
    error = "the call outlived the script's time-limit of " + std::string(limit) +
            " s and was stopped by a TimeoutError: " + error;
  }
  result = py_ref();
  // The host's own views are gone (the traceback too); buffers still exported are the
  // script's.
  const long kept = take_back(raw.get());
  if (kept > 0) {
    py_ref warned(
        PyObject_CallMethod(s->host.get(), "kept_views", "il", iteration->iteration, kept));
    if (!warned) {
      const std::string why = take_python_error();
      if (error.empty()) error = why;
    }
  }
  if (!error.empty()) {
    // A script that holds the writers' communicator may have left the other writers in one of
    // its collectives: the host ends the job then (MPI_Abort) rather than let it hang.
    py_ref ended(PyObject_CallMethod(s->host.get(), "end_job_if_others_may_wait", "is",
                                     iteration->iteration, error.c_str()));
    if (!ended) PyErr_Clear();
    return fail(message, message_size, error, SIDECORE_PLUGIN_ERROR);
  }
  return SIDECORE_PLUGIN_OK;
}

int script_on_iteration(void* handle, const sidecore_iteration* iteration, char* message,
                        std::size_t message_size) {
  return guarded(message, message_size,
                 [&] { return on_iteration(handle, iteration, message, message_size); });
}

int script_finish(void* handle, char* message, std::size_t message_size) {
  return guarded(message, message_size, [&]() -> int {
    auto* s = static_cast<script*>(handle);
    if (!python_alive()) return fail(message, message_size, exited, SIDECORE_PLUGIN_ERROR);
    gil held;
    call_deadline deadline(s->time_limit, s->who, -1);
    py_ref result(PyObject_CallMethod(s->host.get(), "finish", nullptr));
    deadline.finish();
    if (!result) return fail(message, message_size, take_python_error(), SIDECORE_PLUGIN_ERROR);
    return SIDECORE_PLUGIN_OK;
  });
}

void script_destroy(void* handle) {
  auto* s = static_cast<script*>(handle);
  if (s == nullptr) return;
  if (!python_alive()) {
    // The interpreter and its objects are gone, or going: nothing is given back.
    for (py_ref* held : {&s->host, &s->block_type, &s->iteration_type, &s->function, &s->variables})
      held->release();
    delete s;
    return;
  }
  gil held;  // the reference is dropped with the GIL held
  // What the script holds outside this process (its Dask worker) is let go, even when the
  // run failed before finish().
  py_ref closed(PyObject_CallMethod(s->host.get(), "close", nullptr));
  if (!closed) {
    const std::string why = take_python_error(true);
    std::fprintf(stderr, "sidecore: warning: closing a Python script failed: %s\n", why.c_str());
  }
  delete s;
}

const sidecore_action_descriptor descriptor = {SIDECORE_ACTION_ABI_VERSION,
                                               "pyscript",
                                               script_create,
                                               script_on_iteration,
                                               nullptr,
                                               script_finish,
                                               script_destroy};

}  // namespace

extern "C" SIDECORE_PLUGIN_EXPORT const sidecore_action_descriptor* sidecore_action_plugin(void) {
  return &descriptor;
}
