// sidecore._sidecore: the C API (Damaris.h, sidecore/introspection.h) as Python functions.
// Glue only: every call goes to the C API, a failing code becomes sidecore.Error (or one of its
// subclasses, defined in sidecore/_errors.py), and calls that can wait release the GIL. The
// public API is the pure-Python layer in sidecore/__init__.py.
#include <hdf5.h>
#include <mpi.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "Damaris.h"
#include "module_support.hpp"
#include "sidecore/blocks.h"
#include "sidecore/environment.h"
#include "sidecore/introspection.h"
#include "sidecore/read.h"
#include "sidecore/schedule.h"
#include "sidecore/stats.h"
#include "sidecore/version.h"

// NumPy's C API, for the arrays alloc() lends: made directly on Sidecore's memory, without a
// round trip through Python code.
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

namespace nb = nanobind;

namespace {

using sidecore_python::check;
using sidecore_python::classes;
using sidecore_python::element;
using sidecore_python::element_of;
using sidecore_python::in_python_terms;
using sidecore_python::raise;

// The description of the configuration given to initialize(), for the checks of write/alloc.
sidecore_description* g_description = nullptr;

const sidecore_description* description(const char* call) {
  if (!g_description)
    raise(classes().error, DAMARIS_NOT_INITIALIZED,
          std::string(call) + " called before sidecore.initialize");
  return g_description;
}

int npy_type_of(int32_t type) {
  switch (type) {
    case DAMARIS_TYPE_CHAR:
      return NPY_INT8;
    case DAMARIS_TYPE_SHORT:
      return NPY_INT16;
    case DAMARIS_TYPE_INT:
      return NPY_INT32;
    case DAMARIS_TYPE_LONG:
      return NPY_INT64;
    case DAMARIS_TYPE_FLOAT:
      return NPY_FLOAT32;
    case DAMARIS_TYPE_DOUBLE:
      return NPY_FLOAT64;
    default:
      return NPY_NOTYPE;
  }
}

std::string dtype_name(nb::dlpack::dtype d) {
  using nb::dlpack::dtype_code;
  std::string kind;
  switch (static_cast<dtype_code>(d.code)) {
    case dtype_code::Int:
      kind = "int";
      break;
    case dtype_code::UInt:
      kind = "uint";
      break;
    case dtype_code::Float:
      kind = "float";
      break;
    case dtype_code::Complex:
      kind = "complex";
      break;
    case dtype_code::Bool:
      return "bool";
    default:
      kind = "type" + std::to_string(d.code) + "_";
      break;
  }
  return kind + std::to_string(d.bits);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

// A variable as its layout resolves now: element type and C-order extents.
struct layout_now {
  int32_t type = DAMARIS_TYPE_UNDEFINED;
  std::vector<int64_t> shape;
};
layout_now layout_of(const char* call, const char* variable) {
  int32_t type = 0, ndims = 0;
  int64_t extents[SIDECORE_MAX_DIMENSIONS] = {};
  check(sidecore_describe_variable(description(call), variable, &type, &ndims, extents), call);
  return layout_now{type, std::vector<int64_t>(extents, extents + ndims)};
}

// Blocks given their own extents (set_block_extents), C order: their arrays have that shape.
std::map<std::pair<std::string, int32_t>, std::vector<int64_t>> g_block_extents;

// The shape a block's arrays have now: its own extents, or the layout's.
layout_now block_layout_of(const char* call, const char* variable, int32_t block) {
  layout_now layout = layout_of(call, variable);
  if (g_block_extents.empty()) return layout;  // no block has its own: no key to build
  auto it = g_block_extents.find({std::string(variable), block});
  if (it != g_block_extents.end()) layout.shape = it->second;
  return layout;
}

void set_block_extents(const std::string& variable, int32_t block, std::vector<int64_t> shape) {
  const layout_now layout = layout_of("set_block_extents", variable.c_str());
  if (shape.empty()) {  // back to the layout's extents
    check(sidecore_set_block_extents(variable.c_str(), block, nullptr), "set_block_extents");
    g_block_extents.erase({variable, block});
    return;
  }
  if (shape.size() != layout.shape.size())
    raise(classes().shape_error, DAMARIS_INVALID_DIMENSIONS,
          "set_block_extents('" + variable + "'): " + std::to_string(shape.size()) +
              " extents given, the layout has " + std::to_string(layout.shape.size()) +
              " dimensions");
  int32_t fortran = 0;
  check(
      sidecore_describe_fortran_order(description("set_block_extents"), variable.c_str(), &fortran),
      "set_block_extents");
  std::vector<int64_t> program_order = shape;
  if (fortran) std::reverse(program_order.begin(), program_order.end());
  check(sidecore_set_block_extents(variable.c_str(), block, program_order.data()),
        "set_block_extents");
  g_block_extents[{variable, block}] = std::move(shape);
}

// Checks an array against the block's shape: same element type, same shape, C order.
void check_array(const char* call, const std::string& variable, int32_t block,
                 const nb::ndarray<nb::ro, nb::device::cpu>& array) {
  const layout_now expected = block_layout_of(call, variable.c_str(), block);
  const element e = element_of(expected.type);
  if (array.dtype() != e.dtype)
    raise(classes().dtype_error, DAMARIS_ARGUMENT_ERROR,
          std::string(call) + "('" + variable + "'): the array's dtype is " +
              dtype_name(array.dtype()) + ", the variable's layout holds " + e.name +
              " (convert with array.astype(numpy." + e.name + "))");
  std::vector<int64_t> given;
  for (std::size_t i = 0; i < array.ndim(); ++i)
    given.push_back(static_cast<int64_t>(array.shape(i)));
  if (given != expected.shape)
    raise(classes().shape_error, DAMARIS_INVALID_DIMENSIONS,
          std::string(call) + "('" + variable + "'): the array's shape is " + shape_text(given) +
              ", the variable's layout is " + shape_text(expected.shape) +
              " with the current parameter values (C order, slowest-varying first)");
  int64_t stride = 1;
  for (std::size_t i = array.ndim(); i-- > 0;) {
    if (array.shape(i) != 1 && array.stride(i) != stride)
      raise(classes().error, DAMARIS_ARGUMENT_ERROR,
            std::string(call) + "('" + variable + "'): the array is not C-contiguous");
    stride *= static_cast<int64_t>(array.shape(i));
  }
}

// The arrays alloc() lent for the current iteration, by (variable, block): sidecore._lent's
// LentArray, each with a lease shared by the views taken from it. commit() makes the array
// read-only; release(), end_iteration() and finalize() end its lease, after which any use of
// it raises ReleasedArrayError (docs/python.md). The pages they lay on are remembered:
// finalize() unmaps Sidecore's memory, and what NumPy lets through without asking the
// subclass (a memoryview, np.asarray's plain view) must not crash a program that still reads
// it, so those pages are mapped again, read-only zeros.
class lent_arrays {
 public:
  // A new array of `type` on the block at `address`, lent for (variable, block).
  nb::object lend(const char* variable, int32_t block, int iteration, int npy_type, int ndims,
                  npy_intp* dims, void* address) {
    static nb::handle array_type;  // sidecore._lent.LentArray, kept for the process
    if (!array_type)
      array_type = nb::object(nb::module_::import_("sidecore._lent").attr("LentArray")).release();
    // [ended by, variable, block, iteration] (sidecore/_lent.py)
    nb::list lease;
    lease.append(nb::none());
    lease.append(nb::str(variable));
    lease.append(block);
    lease.append(iteration);
    PyArray_Descr* type = PyArray_DescrFromType(npy_type);
    if (!type) throw nb::python_error();
    // No owner, no base: the memory is Sidecore's until the block is cleared. The
    // descriptor's reference is stolen, also on failure.
    PyObject* made = PyArray_NewFromDescr(reinterpret_cast<PyTypeObject*>(array_type.ptr()), type,
                                          ndims, dims, nullptr, address, NPY_ARRAY_CARRAY, nullptr);
    if (!made) throw nb::python_error();
    nb::object array = nb::steal(made);
    nb::setattr(array, "_lease", lease);
    auto* a = reinterpret_cast<PyArrayObject*>(made);
    remember(PyArray_DATA(a), static_cast<std::size_t>(PyArray_NBYTES(a)));
    for (entry& e : m_entries)
      if (e.block == block && e.variable == variable) {  // allocated again: the old one is done
        end(e, "alloc() of the same block");
        e.array = array;
        e.lease = std::move(lease);
        return array;
      }
    m_entries.push_back(entry{variable, block, array, std::move(lease)});
    return array;
  }
  // commit(): the block is handed over as it is; its array can still be read.
  void freeze(const char* variable, int32_t block) {
    if (entry* e = find(variable, block)) freeze(e->array);
  }
  // release(): the block's memory is Sidecore's again.
  void give_back(const char* variable, int32_t block) {
    for (auto e = m_entries.begin(); e != m_entries.end(); ++e)
      if (e->block == block && e->variable == variable) {
        end(*e, "release()");
        m_entries.erase(e);
        return;
      }
  }
  // end_iteration() and finalize(): every block of the iteration.
  void give_back_all(const char* by) {
    for (entry& e : m_entries) end(e, by);
    m_entries.clear();
  }
  // After finalize(): the remembered pages that nothing maps any more become read-only
  // zeros (MAP_FIXED_NOREPLACE never replaces what the process has mapped there since).
  void keep_readable() {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    for (const auto& [begin, end] : m_pages) {
      if (map_zeros(begin, end - begin)) continue;
      for (std::uintptr_t p = begin; p < end; p += page) map_zeros(p, page);  // partly mapped
    }
    m_pages.clear();
  }

 private:
  struct entry {
    std::string variable;
    int32_t block;
    nb::object array;
    nb::list lease;  // sidecore/_lent.py
  };
  entry* find(const char* variable, int32_t block) {
    for (entry& e : m_entries)
      if (e.block == block && e.variable == variable) return &e;
    return nullptr;
  }
  static void freeze(const nb::object& array) {
    PyArray_CLEARFLAGS(reinterpret_cast<PyArrayObject*>(array.ptr()), NPY_ARRAY_WRITEABLE);
  }
  static void end(entry& e, const char* by) {
    freeze(e.array);
    e.lease[0] = nb::str(by);
  }
  static bool map_zeros(std::uintptr_t address, std::size_t bytes) {
    void* wanted = reinterpret_cast<void*>(address);
    void* got =
        ::mmap(wanted, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == MAP_FAILED) return false;
    if (got != wanted) {  // a kernel before 4.17 takes the flag as a hint
      ::munmap(got, bytes);
      return false;
    }
    return true;
  }
  // Adds the pages under [data, data + bytes), merged with the intervals they touch: they
  // stay few (the blocks of one buffer).
  void remember(const void* data, std::size_t bytes) {
    if (!data || bytes == 0) return;
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto address = reinterpret_cast<std::uintptr_t>(data);
    std::uintptr_t begin = address / page * page;
    std::uintptr_t end = (address + bytes + page - 1) / page * page;
    auto it = m_pages.upper_bound(begin);
    if (it != m_pages.begin() && std::prev(it)->second >= begin) --it;
    while (it != m_pages.end() && it->first <= end) {
      begin = std::min(begin, it->first);
      end = std::max(end, it->second);
      it = m_pages.erase(it);
    }
    m_pages.emplace(begin, end);
  }

  std::vector<entry> m_entries;
  std::map<std::uintptr_t, std::uintptr_t> m_pages;  // [begin, end) of the lent arrays' pages
};
// Never destroyed: its arrays must not be released after the interpreter is gone.
lent_arrays& lent() {
  static lent_arrays* arrays = new lent_arrays;
  return *arrays;
}

void initialize(const std::string& config, int64_t fortran_comm) {
  if (g_description)
    raise(classes().error, DAMARIS_ALREADY_INITIALIZED, "sidecore.initialize: already initialized");
  MPI_Comm comm = MPI_Comm_f2c(static_cast<MPI_Fint>(fortran_comm));
  int code = DAMARIS_OK;
  {
    nb::gil_scoped_release unlocked;
    code = damaris_initialize(config.c_str(), comm);
  }
  check(code, "initialize");
  sidecore_description* d = nullptr;
  {
    nb::gil_scoped_release unlocked;
    code = sidecore_describe_open(config.c_str(), comm, &d);
  }
  if (code != DAMARIS_OK) {
    const std::string message = sidecore_describe_last_error();
    {
      nb::gil_scoped_release unlocked;
      damaris_finalize();
    }
    raise(classes().error, code, in_python_terms("initialize", message));
  }
  g_description = d;
}

void finalize() {
  int code = DAMARIS_OK;
  {
    nb::gil_scoped_release unlocked;
    code = damaris_finalize();
  }
  lent().give_back_all("finalize()");
  lent().keep_readable();
  sidecore_describe_close(g_description);
  g_description = nullptr;
  g_block_extents.clear();
  check(code, "finalize");
}

// (is_client, has dedicated resources)
std::tuple<bool, bool> start() {
  int is_client = 1, code = DAMARIS_OK;
  {
    nb::gil_scoped_release unlocked;
    code = damaris_start(&is_client);
  }
  if (code == DAMARIS_NO_SERVER) return {true, false};
  check(code, "start");
  return {is_client != 0, true};
}

void stop() {
  int code = DAMARIS_OK;
  {
    nb::gil_scoped_release unlocked;
    code = damaris_stop();
  }
  if (code != DAMARIS_NO_SERVER) check(code, "stop");
}

void write_block(const std::string& variable, int32_t block,
                 nb::ndarray<nb::ro, nb::device::cpu> array) {
  check_array("write", variable, block, array);
  const void* data = array.data();
  int code = DAMARIS_OK;
  {
    nb::gil_scoped_release unlocked;
    code = damaris_write_block(variable.c_str(), block, data);
  }
  check(code, "write");
}

nb::object alloc(const char* variable, int32_t block) {
  void* address = nullptr;
  int32_t type = DAMARIS_TYPE_UNDEFINED, ndims = 0;
  int64_t extents[SIDECORE_MAX_DIMENSIONS] = {};
  int code = DAMARIS_OK;
  {
    nb::gil_scoped_release unlocked;  // alloc may wait for room in the buffer
    code = sidecore_alloc_block_shaped(variable, block, &address, &type, &ndims, extents);
  }
  check(code, "alloc");
  npy_intp dims[SIDECORE_MAX_DIMENSIONS] = {};
  std::copy(extents, extents + ndims, dims);
  int iteration = 0;
  damaris_get_iteration(&iteration);
  return lent().lend(variable, block, iteration, npy_type_of(type), ndims, dims, address);
}

int current_iteration() {
  int it = 0;
  check(damaris_get_iteration(&it), "iteration");
  return it;
}

// commit() and release(): of the current iteration unless one is given; the block's array, if
// alloc() lent one for the current iteration, becomes read-only.
template <int (*Current)(const char*, int32_t), int (*Given)(const char*, int32_t, int32_t)>
void finish_block(const char* variable, int32_t block, std::optional<int32_t> iteration) {
  const char* call = Given == damaris_commit_block_iteration ? "commit" : "release";
  int code = DAMARIS_OK;
  {
    nb::gil_scoped_release unlocked;
    code = iteration ? Given(variable, block, *iteration) : Current(variable, block);
  }
  check(code, call);
  if (iteration && *iteration != current_iteration()) return;  // lent arrays are this one's
  if (Given == damaris_commit_block_iteration)
    lent().freeze(variable, block);
  else
    lent().give_back(variable, block);
}

void end_iteration() {
  int code = DAMARIS_OK;
  {
    nb::gil_scoped_release unlocked;
    code = damaris_end_iteration();
  }
  lent().give_back_all("end_iteration()");
  check(code, "end_iteration");
}

// A call without arguments, made with the GIL released, for sidecore.<name>.
void plain_call(int (*call)(void), const char* name) {
  int code = DAMARIS_OK;
  {
    nb::gil_scoped_release unlocked;
    code = call();
  }
  check(code, name);
}

void send_signal(const std::string& event) {
  int code = DAMARIS_OK;
  {
    nb::gil_scoped_release unlocked;
    code = damaris_signal(event.c_str());
  }
  check(code, "signal");
}

// sidecore_stats() as a dict with the C struct's field names: the client's counters, and its
// writer's (None when the writer is out of reach, on dedicated nodes); client_write_seconds
// is None unless SIDECORE_WRITE_TIMES=1 measures it.
nb::dict stats() {
  sidecore_stats_t s = SIDECORE_STATS_INIT;
  const int code = sidecore_stats(&s);
  check(code, "stats");
  nb::dict d;
#define SIDECORE_STATS_FIELD(name) d[#name] = s.name
  SIDECORE_STATS_FIELD(client_iterations);
  SIDECORE_STATS_FIELD(client_blocks_written);
  SIDECORE_STATS_FIELD(client_bytes_written);
  SIDECORE_STATS_FIELD(client_blocks_dropped);
  SIDECORE_STATS_FIELD(client_bytes_dropped);
  SIDECORE_STATS_FIELD(client_iterations_skipped);
  if (s.flags & SIDECORE_STATS_WRITE_TIMES)
    SIDECORE_STATS_FIELD(client_write_seconds);
  else
    d["client_write_seconds"] = nb::none();
  const bool writer = (s.flags & SIDECORE_STATS_WRITER) != 0;
#define SIDECORE_WRITER_FIELD(name) d[#name] = writer ? nb::cast(s.name) : nb::none()
  SIDECORE_WRITER_FIELD(bytes_received);
  SIDECORE_WRITER_FIELD(blocks_received);
  SIDECORE_WRITER_FIELD(bytes_buffered);
  SIDECORE_WRITER_FIELD(buffer_peak);
  SIDECORE_WRITER_FIELD(buffer_capacity);
  SIDECORE_WRITER_FIELD(bytes_spilled);
  SIDECORE_WRITER_FIELD(bytes_in_server_memory);
  SIDECORE_WRITER_FIELD(bytes_written);
  SIDECORE_WRITER_FIELD(bytes_dropped);
  SIDECORE_WRITER_FIELD(bytes_skipped);
  SIDECORE_WRITER_FIELD(bytes_failed);
  SIDECORE_WRITER_FIELD(bytes_pending);
  SIDECORE_WRITER_FIELD(iterations_complete);
  SIDECORE_WRITER_FIELD(iterations_stored);
  SIDECORE_WRITER_FIELD(iterations_incomplete);
  SIDECORE_WRITER_FIELD(store_failures);
  SIDECORE_WRITER_FIELD(latency_count);
  SIDECORE_WRITER_FIELD(latency_min);
  SIDECORE_WRITER_FIELD(latency_mean);
  SIDECORE_WRITER_FIELD(latency_max);
  SIDECORE_WRITER_FIELD(latency_last);
  SIDECORE_WRITER_FIELD(store_seconds);
  SIDECORE_WRITER_FIELD(throughput_bytes_per_second);
  SIDECORE_WRITER_FIELD(io_debt_seconds);
#undef SIDECORE_WRITER_FIELD
#undef SIDECORE_STATS_FIELD
  return d;
}

nb::object parameter_get(const std::string& name) {
  int32_t type = 0;
  check(sidecore_describe_parameter(description("parameter_get"), name.c_str(), &type),
        "parameter_get");
  unsigned char buffer[8] = {};
  auto get = [&](unsigned size) {
    check(damaris_parameter_get(name.c_str(), buffer, size), "parameter_get");
  };
  switch (type) {
    case DAMARIS_TYPE_CHAR: {
      get(1);
      int8_t v;
      std::memcpy(&v, buffer, 1);
      return nb::int_(v);
    }
    case DAMARIS_TYPE_SHORT: {
      get(2);
      int16_t v;
      std::memcpy(&v, buffer, 2);
      return nb::int_(v);
    }
    case DAMARIS_TYPE_INT: {
      get(4);
      int32_t v;
      std::memcpy(&v, buffer, 4);
      return nb::int_(v);
    }
    case DAMARIS_TYPE_LONG: {
      get(8);
      int64_t v;
      std::memcpy(&v, buffer, 8);
      return nb::int_(v);
    }
    case DAMARIS_TYPE_FLOAT: {
      get(4);
      float v;
      std::memcpy(&v, buffer, 4);
      return nb::float_(v);
    }
    default: {
      get(8);
      double v;
      std::memcpy(&v, buffer, 8);
      return nb::float_(v);
    }
  }
}

// value is a Python int or float, already checked by the Python layer to fit the type.
void parameter_set(const std::string& name, nb::handle value) {
  int32_t type = 0;
  check(sidecore_describe_parameter(description("parameter_set"), name.c_str(), &type),
        "parameter_set");
  auto set = [&](const auto& v) {
    check(damaris_parameter_set(name.c_str(), &v, sizeof v), "parameter_set");
  };
  switch (type) {
    case DAMARIS_TYPE_CHAR:
      set(static_cast<int8_t>(nb::cast<int64_t>(value)));
      break;
    case DAMARIS_TYPE_SHORT:
      set(static_cast<int16_t>(nb::cast<int64_t>(value)));
      break;
    case DAMARIS_TYPE_INT:
      set(static_cast<int32_t>(nb::cast<int64_t>(value)));
      break;
    case DAMARIS_TYPE_LONG:
      set(nb::cast<int64_t>(value));
      break;
    case DAMARIS_TYPE_FLOAT:
      set(static_cast<float>(nb::cast<double>(value)));
      break;
    default:
      set(nb::cast<double>(value));
      break;
  }
}

std::string parameter_type(const std::string& name) {
  int32_t type = 0;
  check(sidecore_describe_parameter(description("parameter_type"), name.c_str(), &type),
        "parameter_type");
  return element_of(type).name;
}

std::tuple<std::string, std::vector<int64_t>> variable_layout(const std::string& variable) {
  const layout_now layout = layout_of("layout", variable.c_str());
  return {element_of(layout.type).name, layout.shape};
}

void set_position(const std::string& variable, int32_t block,
                  const std::vector<int64_t>& position) {
  const layout_now layout = layout_of("set_position", variable.c_str());
  if (position.size() != layout.shape.size())
    raise(classes().shape_error, DAMARIS_ARGUMENT_ERROR,
          "set_position('" + variable + "'): " + std::to_string(position.size()) +
              " coordinates given, the variable's layout has " +
              std::to_string(layout.shape.size()) + " dimensions");
  check(damaris_set_block_position(variable.c_str(), block, position.data()), "set_position");
}

int64_t client_comm() {
  MPI_Comm comm = MPI_COMM_NULL;
  check(damaris_client_comm_get(&comm), "client_comm");
  return static_cast<int64_t>(MPI_Comm_c2f(comm));
}

// Where this process stands (sidecore/environment.h), for damaris4py.client.
nb::dict environment() {
  sidecore_environment_t e{};
  check(sidecore_environment_get(&e), "environment");
  int32_t count = 0;
  check(sidecore_environment_known_clients(nullptr, 0, &count), "environment");
  std::vector<int32_t> known(static_cast<std::size_t>(count));
  check(sidecore_environment_known_clients(known.data(), count, &count), "environment");
  nb::dict d;
  d["is_client"] = e.is_client != 0;
  d["has_servers"] = e.has_servers != 0;
  d["is_dedicated_core"] = e.is_dedicated_core != 0;
  d["is_dedicated_node"] = e.is_dedicated_node != 0;
  d["clients_per_node"] = e.clients_per_node;
  d["cores_per_node"] = e.cores_per_node;
  d["servers_per_node"] = e.servers_per_node;
  d["number_of_nodes"] = e.number_of_nodes;
  d["known_clients"] = known;
  d["magic_number"] = std::string(e.magic_number);
  return d;
}

// Fortran handles (mpi4py's MPI.Comm.f2py makes the communicator); None on a client.
std::optional<int64_t> server_comm() {
  MPI_Comm comm = MPI_COMM_NULL;
  const int code = sidecore_server_comm_get(&comm);
  if (code == DAMARIS_NO_SERVER) return std::nullopt;
  check(code, "server_comm");
  return static_cast<int64_t>(MPI_Comm_c2f(comm));
}

int64_t global_comm() {
  MPI_Comm comm = MPI_COMM_NULL;
  check(sidecore_global_comm_get(&comm), "global_comm");
  return static_cast<int64_t>(MPI_Comm_c2f(comm));
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  const std::size_t end = version.find('\n');
  if (end != std::string::npos) version.resize(end);
  while (!version.empty() &&
         (version.back() == '\r' || version.back() == ' ' || version.back() == '\0'))
    version.pop_back();
  return version;
}

std::string hdf5_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

// Ends the whole job (MPI_Abort on MPI_COMM_WORLD): what leaving `with sidecore.initialize()`
// by an exception does by default, once the traceback is printed, because finalizing there is
// collective and the other ranks may be waiting for this one elsewhere (a halo exchange).
// Returns false, without ending anything, only when MPI cannot abort (not initialized, or
// finalized already); never throws.
bool abort_job(int code) noexcept {
  int initialized = 0, finalized = 0;
  if (MPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return false;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return false;
  std::fflush(nullptr);  // the log lines of the C library, before the process goes
  MPI_Abort(MPI_COMM_WORLD, code);
  return false;
}

}  // namespace

NB_MODULE(_sidecore, m) {
  if (_import_array() < 0) throw nb::python_error();  // NumPy's C API
  m.doc() = "The Sidecore C API; use the sidecore package, not this module.";
  m.def("version", [] { return std::string(sidecore_version()); });
  m.def("mpi_library_version", &mpi_library_version);
  m.def("hdf5_version", &hdf5_version);
  m.def("hdf5_header_version", [] { return std::string(H5_VERS_INFO); });
  m.def("error_string", [](int code) { return std::string(damaris_error_string(code)); });
  m.def("initialized", [] { return g_description != nullptr; });
  m.def("initialize", &initialize, nb::arg("config"), nb::arg("fortran_comm"));
  m.def("finalize", &finalize);
  m.def("abort_job", &abort_job, nb::arg("code"), nb::call_guard<nb::gil_scoped_release>());
  m.def("start", &start);
  m.def("stop", &stop);
  m.def("write", &write_block, nb::arg("variable"), nb::arg("block"), nb::arg("array").noconvert());
  // Session.alloc, .commit, .release and .end_iteration are these functions themselves.
  m.def("alloc", &alloc, nb::arg("name"), nb::arg("block") = 0,
        "Zero copy: reserves block `block` of variable `name` in "
        "Sidecore's buffer for the current iteration (damaris_alloc_block()) and returns a "
        "writable NumPy array (sidecore.LentArray) on that memory, of the block's dtype and "
        "shape (C order). Fill it in place (a[...] = values, never a = values), then "
        "commit(name) and release(name). commit() makes the array read-only; after release(), "
        "end_iteration() or finalize() the array and its views raise ReleasedArrayError when "
        "used (the memory is reused for other blocks): copy what you keep first. A block "
        "allocated and not committed "
        "is committed by end_iteration(). The GIL is released while it waits for room in the "
        "buffer. Raises Error (ALLOCATION_ERROR for a block allocated twice or too large, "
        "UNDEFINED_VARIABLE, INVALID_BLOCK...).");
  m.def("commit", &finish_block<damaris_commit_block, damaris_commit_block_iteration>,
        nb::arg("name"), nb::arg("block") = 0, nb::arg("iteration").none() = nb::none(),
        "Declares an allocated block complete "
        "(damaris_commit_block_iteration()): it is stored as it is now. Its array becomes "
        "read-only. iteration: the one the block was allocated in (the current one by "
        "default). Raises Error (BLOCK_NOT_FOUND when not allocated).");
  m.def("release", &finish_block<damaris_clear_block, damaris_clear_block_iteration>,
        nb::arg("name"), nb::arg("block") = 0, nb::arg("iteration").none() = nb::none(),
        "Gives an allocated block up "
        "(damaris_clear_block_iteration()), committing it first if it was not. Its array and "
        "its views then raise ReleasedArrayError when used. Also named clear().");
  m.def("python_scripts", [] { return damaris_has_plugin(DAMARIS_PLUGIN_PYTHON) == 1; });
  m.def("paraview_python", [] { return std::string(sidecore_paraview_python()); });
  m.def("signal", &send_signal, nb::arg("event"));
  m.def("end_iteration", &end_iteration,
        "Ends the current iteration (damaris_end_iteration()): hands it to "
        "the servers, or, in synchronous mode, stores it here. Arrays from alloc() for it "
        "then raise ReleasedArrayError when used. The GIL is released. Raises Error (ERROR_UNKNOWN "
        "when a store "
        "failed, CHANNEL_ERROR...).");
  m.def("sync", [] { plain_call(damaris_sync, "sync"); });
  m.def("compute_begin", [] { plain_call(sidecore_compute_begin, "compute_begin"); });
  m.def("compute_end", [] { plain_call(sidecore_compute_end, "compute_end"); });
  m.def("iteration", &current_iteration);
  m.def("stats", &stats);
  m.def("parameter_get", &parameter_get, nb::arg("name"));
  m.def("parameter_set", &parameter_set, nb::arg("name"), nb::arg("value"));
  m.def("parameter_type", &parameter_type, nb::arg("name"));
  m.def("layout", &variable_layout, nb::arg("variable"));
  sidecore_python::add_reader(m);
  m.def("set_block_extents", &set_block_extents, nb::arg("variable"), nb::arg("block"),
        nb::arg("shape"));
  m.def("set_position", &set_position, nb::arg("variable"), nb::arg("block"), nb::arg("position"));
  m.def("client_comm", &client_comm);
  m.def("environment", &environment);
  m.def("server_comm", &server_comm);
  m.def("global_comm", &global_comm);
  m.attr("OK") = static_cast<int>(DAMARIS_OK);
}
