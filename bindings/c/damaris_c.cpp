// The Damaris C API. Every function body runs inside guarded(): no exception crosses this
// boundary; the code is returned and the message kept per thread for
// damaris_last_error_message().
#include <pthread.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "Damaris.h"
#include "common/c_boundary.hpp"
#include "common/error.hpp"
#include "common/hot_path.hpp"
#include "common/job_failure.hpp"
#include "common/log.hpp"
#include "common/mpi_finalize_hook.hpp"
#include "plugins/python_scripts.hpp"
#include "runtime/runtime.hpp"
#include "sidecore/blocks.h"
#include "sidecore/schedule.h"
#include "storing/actions.hpp"

namespace {

std::unique_ptr<sidecore::runtime> g_runtime;
// g_runtime's client, null on a dedicated core: the client calls reach it from here, not
// through the runtime object (one page fewer to find after a compute phase).
sidecore::client::client* g_client = nullptr;
// damaris_initialize failed: its error was printed once, and every later call's
// DAMARIS_NOT_INITIALIZED is only logged at debug level (one error, once).
std::atomic<bool> g_initialize_failed{false};

// "DAMARIS_ALLOCATION_ERROR" of damaris_error_string's "DAMARIS_ALLOCATION_ERROR: <generic
// text>": the log names the code, and the message says what went wrong (the generic text
// could contradict it: an allocation refused for another reason than room).
std::string_view code_name(int code) {
  const std::string_view text = damaris_error_string(code);
  return text.substr(0, text.find(':'));
}

// A failed call is logged, so that a program that ignores return codes (most Damaris
// programs do) still shows why: the first failure of each function with each code at error
// level, later ones at debug level, so that a call failing in a loop cannot flood the log.
void log_failure(const char* function, int code) {
  static std::mutex mutex;
  static std::set<std::pair<std::string, int>> seen;
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    first = seen.emplace(function, code).second;
  }
  if (first)
    sidecore::log::error(sidecore::c_boundary::last_error(), " [", code_name(code),
                         "; later failures of this kind are logged at debug level]");
  else
    sidecore::log::debug(sidecore::c_boundary::last_error());
}

// A code a call returns without having failed (DAMARIS_NO_SERVER from damaris_start without
// dedicated resources, which Damaris programs expect): the message is kept, logged at debug.
struct notice {
  int code;
  std::string message;
};

// How guarded() logs a failure beyond the usual first-of-its-kind rule.
enum class failure_report {
  usual,
  // damaris_initialize on a rank other than 0: a configuration error (the same on every rank)
  // is printed in full by rank 0; this rank points there, once.
  config_error_shown_by_rank_0,
};

// Which threads may make a call. Damaris.h says one thread; most calls change the state of the
// iteration (its blocks, its allocations, its notifications), and two threads inside them at
// once corrupted stored data without a word. Those calls are refused while another thread is
// inside one of them. Calls that only read or set a parameter may come from any thread
// (plugins and scripts on the I/O thread use them).
enum class thread_use { one_at_a_time, any };

// The thread inside a call (its thread pointer), or null. A thread's identity is read from its
// thread pointer rather than kept in a thread_local: in a shared library every thread_local
// access is a call into the dynamic loader (__tls_get_addr), whose code and data are pages of
// their own, cold after a compute phase (bench/run_cold_write.py).
std::atomic<const void*> g_call_thread{nullptr};
std::atomic<const char*> g_call_owner{nullptr};

// The calling thread, unique among the live threads of the process.
SIDECORE_HOT_PATH const void* this_thread() noexcept {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__))
  return __builtin_thread_pointer();
#else
  return reinterpret_cast<const void*>(pthread_self());
#endif
}

// Holds the API for this thread for one call (when `needed`); throws when another thread
// holds it. A call made inside another call of the same thread (an action inside
// damaris_start) passes.
class exclusive_call {
 public:
  SIDECORE_HOT_PATH exclusive_call(const char* function, bool needed) {
    if (!needed) return;
    const void* const self = this_thread();
    const void* holder = nullptr;
    if (g_call_thread.compare_exchange_strong(holder, self, std::memory_order_acquire,
                                              std::memory_order_relaxed)) {
      m_outermost = true;
      g_call_owner.store(function, std::memory_order_relaxed);
      return;
    }
    if (holder == self) return;
    const char* other = g_call_owner.load(std::memory_order_relaxed);
    throw sidecore::error(
        DAMARIS_ERROR_UNKNOWN,
        std::string("called while another thread of this process is inside ") +
            (other ? other : "a Sidecore call") +
            "; the Damaris API is used from one thread at a time (call it from one thread, "
            "or serialize the calls with a lock)");
  }
  ~exclusive_call() {
    if (m_outermost) g_call_thread.store(nullptr, std::memory_order_release);
  }
  exclusive_call(const exclusive_call&) = delete;
  exclusive_call& operator=(const exclusive_call&) = delete;

 private:
  bool m_outermost = false;
};

template <typename Body>
int guarded(const char* function, Body&& body, failure_report report = failure_report::usual,
            thread_use threads = thread_use::one_at_a_time) noexcept {
  // What the failure and interrupt messages say this process was in.
  struct in_call {
    explicit in_call(const char* f) noexcept : before(sidecore::job_failure::note_call(f)) {}
    ~in_call() { sidecore::job_failure::note_call(before); }
    const char* before;
  } marker(function);
  int code = DAMARIS_OK;
  try {
    const exclusive_call exclusive(function, threads == thread_use::one_at_a_time);
    if constexpr (std::is_same_v<decltype(body()), notice>) {
      notice n = body();
      if (n.code != DAMARIS_OK) {
        sidecore::c_boundary::record(function, n.message.c_str());
        sidecore::log::debug(sidecore::c_boundary::last_error());
      }
      return n.code;
    } else {
      body();
      return DAMARIS_OK;
    }
  } catch (...) {
    code = sidecore::c_boundary::record_current_exception(function);
  }
  try {
    if (report == failure_report::config_error_shown_by_rank_0 && code == DAMARIS_CONFIG_ERROR) {
      sidecore::log::debug(sidecore::c_boundary::last_error());
      sidecore::log::error(function,
                           ": invalid configuration (rank 0 prints what is wrong); "
                           "every later call returns DAMARIS_NOT_INITIALIZED");
    } else if (code == DAMARIS_NOT_INITIALIZED && g_initialize_failed.load()) {
      sidecore::log::debug(sidecore::c_boundary::last_error());
    } else if (code != DAMARIS_ALREADY_INITIALIZED &&
               std::string_view(function) == "damaris_initialize") {
      sidecore::log::error(sidecore::c_boundary::last_error(), " [", code_name(code),
                           "; every later call returns DAMARIS_NOT_INITIALIZED]");
    } else {
      log_failure(function, code);
    }
  } catch (...) {
    // Logging is best effort: the code and the message are what the caller gets.
  }
  return code;
}

SIDECORE_HOT_PATH sidecore::runtime& current(const char* function) {
  if (!g_runtime)
    throw sidecore::error(
        DAMARIS_NOT_INITIALIZED,
        std::string(function) + (g_initialize_failed.load() ? " after a failed damaris_initialize"
                                                            : " called before damaris_initialize"));
  return *g_runtime;
}

SIDECORE_HOT_PATH sidecore::client::client& current_client(const char* function) {
  if (g_client) return *g_client;
  return current(function).as_client(function);  // throws: not initialized, or a server
}

// A name given to a call: not NULL, and no longer than any name the configuration can declare,
// so that a wrong pointer or a runaway string is refused without being copied or printed whole.
// Its length is measured once, here.
SIDECORE_HOT_PATH std::string_view checked_name(const char* name, const char* what) {
  if (!name) throw sidecore::argument_error(std::string(what) + " is NULL");
  constexpr std::size_t longest = sidecore::config::max_name_bytes;
  // A loop rather than strnlen: names are short, and the call would be a page of libc's code.
  std::size_t length = 0;
  while (length <= longest && name[length] != '\0') ++length;
  if (length > longest)
    throw sidecore::argument_error(std::string(what) + " '" + std::string(name, 60) +
                                   "...' is longer than " + std::to_string(longest) +
                                   " bytes; no configured name is");
  return {name, length};
}

// MPI_Finalize reached with Sidecore still initialized (damaris_finalize forgotten, or MPI
// finalized at exit as mpi4py does): finalize now, inside MPI_Finalize where every process of
// the job is too, so that what was written is stored and no thread of Sidecore outlives MPI.
void finalize_within_mpi_finalize() {
  if (!g_runtime) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* what =
      "MPI_Finalize was called before damaris_finalize: Sidecore finalizes inside MPI_Finalize, "
      "storing what was written; call damaris_finalize before MPI_Finalize";
  if (rank == 0)
    sidecore::log::error(what);
  else
    sidecore::log::debug(what);
  damaris_finalize();
}

}  // namespace

SIDECORE_API int damaris_initialize(const char* configfile, MPI_Comm comm) {
  int mpi_ready = 0;
  MPI_Initialized(&mpi_ready);
  int rank = 0;
  if (mpi_ready && comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
  // Configuration errors are agreed: every rank returns the same one, the first rank logs it.
  const int code = guarded(
      "damaris_initialize",
      [&] {
        if (g_runtime) throw sidecore::error(DAMARIS_ALREADY_INITIALIZED, "already initialized");
        if (!mpi_ready)
          throw sidecore::error(DAMARIS_MPI_ERROR,
                                "MPI_Init must be called before damaris_initialize");
        if (!configfile) throw sidecore::argument_error("configfile is NULL");
        if (comm == MPI_COMM_NULL)
          throw sidecore::argument_error(
              "comm is MPI_COMM_NULL; pass the communicator of every process of the simulation "
              "(usually MPI_COMM_WORLD)");
        sidecore::log::set_identity(rank, "initializing");
        g_runtime = std::make_unique<sidecore::runtime>(configfile, comm);
        g_client = g_runtime->client_if_any();
        g_initialize_failed = false;
        static const bool hooked = sidecore::call_at_mpi_finalize(finalize_within_mpi_finalize);
        static_cast<void>(hooked);
      },
      rank != 0 ? failure_report::config_error_shown_by_rank_0 : failure_report::usual);
  // A second call while initialized changes nothing; any other failure leaves the library
  // uninitialized, and the later calls' DAMARIS_NOT_INITIALIZED say nothing new.
  if (code != DAMARIS_OK && code != DAMARIS_ALREADY_INITIALIZED) g_initialize_failed = true;
  return code;
}

SIDECORE_API int damaris_finalize(void) {
  return guarded("damaris_finalize", [&] {
    current("damaris_finalize");
    // Release even if finalize fails, so that a second call reports NOT_INITIALIZED.
    g_client = nullptr;
    std::unique_ptr<sidecore::runtime> rt = std::move(g_runtime);
    try {
      rt->finalize();
    } catch (const sidecore::error& e) {
      throw sidecore::error(DAMARIS_FINALIZE_ERROR, e.what());
    }
  });
}

// Without dedicated cores or nodes, damaris_start and damaris_stop return DAMARIS_NO_SERVER
// after doing their work, as Damaris does (every process is then a client).
const char* const no_dedicated_resources =
    "no dedicated cores or nodes in this configuration: every process is a client";

SIDECORE_API int damaris_start(int* is_client) {
  return guarded("damaris_start", [&]() -> notice {
    sidecore::runtime& rt = current("damaris_start");
    if (!is_client) throw sidecore::argument_error("is_client is NULL");
    *is_client = rt.is_server() ? 0 : 1;
    *is_client = rt.start() ? 1 : 0;
    if (!rt.has_dedicated_resources()) return {DAMARIS_NO_SERVER, no_dedicated_resources};
    return {DAMARIS_OK, {}};
  });
}

SIDECORE_API int damaris_stop(void) {
  return guarded("damaris_stop", [&]() -> notice {
    sidecore::runtime& rt = current("damaris_stop");
    if (rt.is_server())
      return {DAMARIS_NO_SERVER,
              "called on a dedicated core or node, which stops when its clients have stopped"};
    rt.stop();
    if (!rt.has_dedicated_resources()) return {DAMARIS_NO_SERVER, no_dedicated_resources};
    return {DAMARIS_OK, {}};
  });
}

SIDECORE_API SIDECORE_HOT_PATH int damaris_write(const char* varname, const void* data) {
  return guarded("damaris_write", [&] {
    current_client("damaris_write").write(checked_name(varname, "varname"), 0, data);
  });
}

SIDECORE_API SIDECORE_HOT_PATH int damaris_write_block(const char* varname, int32_t block,
                                                       const void* data) {
  return guarded("damaris_write_block", [&] {
    current_client("damaris_write_block").write(checked_name(varname, "varname"), block, data);
  });
}

SIDECORE_API SIDECORE_HOT_PATH int damaris_alloc(const char* varname, void** ptr) {
  return guarded("damaris_alloc", [&] {
    auto& c = current_client("damaris_alloc");
    if (!ptr) throw sidecore::argument_error("ptr is NULL");
    *ptr = c.alloc(checked_name(varname, "varname"), 0);
  });
}

SIDECORE_API SIDECORE_HOT_PATH int damaris_alloc_block(const char* varname, int32_t block,
                                                       void** ptr) {
  return guarded("damaris_alloc_block", [&] {
    auto& c = current_client("damaris_alloc_block");
    if (!ptr) throw sidecore::argument_error("ptr is NULL");
    *ptr = c.alloc(checked_name(varname, "varname"), block);
  });
}

SIDECORE_API int sidecore_alloc_block_shaped(const char* variable, int32_t block, void** address,
                                             int32_t* type, int32_t* ndims, int64_t* extents) {
  return guarded("sidecore_alloc_block_shaped", [&] {
    auto& c = current_client("sidecore_alloc_block_shaped");
    if (!address || !type || !ndims || !extents)
      throw sidecore::argument_error("an output pointer is NULL");
    const auto allocated = c.alloc_shaped(checked_name(variable, "variable"), block);
    *address = allocated.address;
    *type = sidecore::config::damaris_type_code(allocated.type);
    *ndims = static_cast<int32_t>(allocated.extents->size());
    std::copy(allocated.extents->begin(), allocated.extents->end(), extents);
  });
}

SIDECORE_API SIDECORE_HOT_PATH int damaris_commit(const char* varname) {
  return guarded("damaris_commit", [&] {
    auto& c = current_client("damaris_commit");
    c.commit(checked_name(varname, "varname"), 0, c.iteration());
  });
}

SIDECORE_API SIDECORE_HOT_PATH int damaris_commit_block(const char* varname, int32_t block) {
  return guarded("damaris_commit_block", [&] {
    auto& c = current_client("damaris_commit_block");
    c.commit(checked_name(varname, "varname"), block, c.iteration());
  });
}

SIDECORE_API int damaris_commit_iteration(const char* varname, int32_t iteration) {
  return guarded("damaris_commit_iteration", [&] {
    current_client("damaris_commit_iteration")
        .commit(checked_name(varname, "varname"), 0, iteration);
  });
}

SIDECORE_API int damaris_commit_block_iteration(const char* varname, int32_t block,
                                                int32_t iteration) {
  return guarded("damaris_commit_block_iteration", [&] {
    current_client("damaris_commit_block_iteration")
        .commit(checked_name(varname, "varname"), block, iteration);
  });
}

SIDECORE_API SIDECORE_HOT_PATH int damaris_clear(const char* varname) {
  return guarded("damaris_clear", [&] {
    auto& c = current_client("damaris_clear");
    c.clear(checked_name(varname, "varname"), 0, c.iteration());
  });
}

SIDECORE_API SIDECORE_HOT_PATH int damaris_clear_block(const char* varname, int32_t block) {
  return guarded("damaris_clear_block", [&] {
    auto& c = current_client("damaris_clear_block");
    c.clear(checked_name(varname, "varname"), block, c.iteration());
  });
}

SIDECORE_API int damaris_clear_iteration(const char* varname, int32_t iteration) {
  return guarded("damaris_clear_iteration", [&] {
    current_client("damaris_clear_iteration").clear(checked_name(varname, "varname"), 0, iteration);
  });
}

SIDECORE_API int damaris_clear_block_iteration(const char* varname, int32_t block,
                                               int32_t iteration) {
  return guarded("damaris_clear_block_iteration", [&] {
    current_client("damaris_clear_block_iteration")
        .clear(checked_name(varname, "varname"), block, iteration);
  });
}

SIDECORE_API int damaris_signal(const char* signal_name) {
  return guarded("damaris_signal", [&] {
    current_client("damaris_signal").signal(checked_name(signal_name, "signal_name"));
  });
}

SIDECORE_API int damaris_bind(const char* signal_name, signal_t sig) {
  return guarded(
      "damaris_bind",
      [&] {
        sidecore::storing::action_registry::instance().bind(
            std::string(checked_name(signal_name, "signal_name")), sig);
      },
      failure_report::usual, thread_use::any);
}

SIDECORE_API int damaris_parameter_get(const char* param_name, void* buffer, unsigned int size) {
  return guarded(
      "damaris_parameter_get",
      [&] {
        current("damaris_parameter_get")
            .parameter_table()
            .get(checked_name(param_name, "param_name"), buffer, size);
      },
      failure_report::usual, thread_use::any);
}

SIDECORE_API int damaris_parameter_set(const char* param_name, const void* buffer,
                                       unsigned int size) {
  return guarded(
      "damaris_parameter_set",
      [&] {
        current("damaris_parameter_set")
            .parameter_table()
            .set(checked_name(param_name, "param_name"), buffer, size);
      },
      failure_report::usual, thread_use::any);
}

SIDECORE_API int damaris_set_position(const char* var_name, const int64_t* position) {
  return guarded("damaris_set_position", [&] {
    current_client("damaris_set_position")
        .set_position(checked_name(var_name, "var_name"), 0, position);
  });
}

SIDECORE_API int damaris_set_block_position(const char* var_name, int32_t block,
                                            const int64_t* position) {
  return guarded("damaris_set_block_position", [&] {
    current_client("damaris_set_block_position")
        .set_position(checked_name(var_name, "var_name"), block, position);
  });
}

SIDECORE_API int damaris_client_comm_get(MPI_Comm* comm) {
  return guarded(
      "damaris_client_comm_get",
      [&] {
        sidecore::runtime& rt = current("damaris_client_comm_get");
        if (!comm) throw sidecore::argument_error("comm is NULL");
        rt.as_client("damaris_client_comm_get");
        *comm = rt.client_comm();
      },
      failure_report::usual, thread_use::any);
}

SIDECORE_API SIDECORE_HOT_PATH int damaris_end_iteration(void) {
  return guarded("damaris_end_iteration",
                 [&] { current_client("damaris_end_iteration").end_iteration(); });
}

SIDECORE_API int sidecore_set_block_extents(const char* variable, int32_t block,
                                            const int64_t* extents) {
  return guarded("sidecore_set_block_extents", [&] {
    current_client("sidecore_set_block_extents")
        .set_extents(checked_name(variable, "variable"), block, extents);
  });
}

SIDECORE_API int sidecore_compute_begin(void) {
  return guarded("sidecore_compute_begin",
                 [&] { current_client("sidecore_compute_begin").compute_phase(true); });
}

SIDECORE_API int sidecore_compute_end(void) {
  return guarded("sidecore_compute_end",
                 [&] { current_client("sidecore_compute_end").compute_phase(false); });
}

SIDECORE_API int damaris_sync(void) {
  return guarded("damaris_sync", [&] { current_client("damaris_sync").sync(); });
}

SIDECORE_API int damaris_get_iteration(int* iteration) {
  return guarded(
      "damaris_get_iteration",
      [&] {
        auto& c = current_client("damaris_get_iteration");
        if (!iteration) throw sidecore::argument_error("iteration is NULL");
        *iteration = c.iteration();
      },
      failure_report::usual, thread_use::any);
}

SIDECORE_API int damaris_get_type(const char* variable_name, DAMARIS_TYPE_STR* vartype) {
  return guarded(
      "damaris_get_type",
      [&] {
        const sidecore::config::model& model = current("damaris_get_type").model();
        if (!vartype) throw sidecore::argument_error("vartype is NULL");
        *vartype = DAMARIS_TYPE_UNDEFINED;
        const std::string name(checked_name(variable_name, "variable_name"));
        const std::size_t v = model.find_variable(name);
        if (v == sidecore::config::model::npos)
          throw sidecore::error(DAMARIS_UNDEFINED_VARIABLE, model.unknown_variable(name));
        const std::string& type = model.layouts[model.variables[v].layout_index].type_name;
        static const std::pair<const char*, DAMARIS_TYPE_STR> types[] = {
            {"short", DAMARIS_TYPE_SHORT},    {"int", DAMARIS_TYPE_INT},
            {"integer", DAMARIS_TYPE_INT},    {"long", DAMARIS_TYPE_LONG},
            {"float", DAMARIS_TYPE_FLOAT},    {"real", DAMARIS_TYPE_FLOAT},
            {"double", DAMARIS_TYPE_DOUBLE},  {"char", DAMARIS_TYPE_CHAR},
            {"character", DAMARIS_TYPE_CHAR}, {"string", DAMARIS_TYPE_STRING},
            {"label", DAMARIS_TYPE_LABEL}};
        for (const auto& [spelling, value] : types)
          if (type == spelling) *vartype = value;
      },
      failure_report::usual, thread_use::any);
}

SIDECORE_API int damaris_has_plugin(DAMARIS_PLUGIN_TYPE plugin) {
  if (plugin == DAMARIS_PLUGIN_HDF5) return 1;
  if (plugin == DAMARIS_PLUGIN_PYTHON) return sidecore::plugins::python_scripts_supported() ? 1 : 0;
  return 0;
}

SIDECORE_API const char* damaris_error_string(int code) {
  switch (code) {
    case DAMARIS_OK:
      return "DAMARIS_OK: success";
    case DAMARIS_INIT_ERROR:
      return "DAMARIS_INIT_ERROR: initialization failed";
    case DAMARIS_FINALIZE_ERROR:
      return "DAMARIS_FINALIZE_ERROR: finalization failed";
    case DAMARIS_CORE_IS_SERVER:
      return "DAMARIS_CORE_IS_SERVER: client call made on a dedicated core";
    case DAMARIS_NO_SERVER:
      return "DAMARIS_NO_SERVER: no dedicated resource";
    case DAMARIS_ALLOCATION_ERROR:
      return "DAMARIS_ALLOCATION_ERROR: the buffer cannot hold the request";
    case DAMARIS_CONFIG_ERROR:
      return "DAMARIS_CONFIG_ERROR: invalid configuration";
    case DAMARIS_ARGUMENT_ERROR:
      return "DAMARIS_ARGUMENT_ERROR: invalid argument";
    case DAMARIS_MPI_ERROR:
      return "DAMARIS_MPI_ERROR: an MPI call failed";
    case DAMARIS_DATASPACE_ERROR:
      return "DAMARIS_DATASPACE_ERROR: invalid data space";
    case DAMARIS_CHANNEL_ERROR:
      return "DAMARIS_CHANNEL_ERROR: communication channel failed";
    case DAMARIS_INVALID_TAG:
      return "DAMARIS_INVALID_TAG: invalid message tag";
    case DAMARIS_NOT_INITIALIZED:
      return "DAMARIS_NOT_INITIALIZED: damaris_initialize was not called";
    case DAMARIS_ALREADY_INITIALIZED:
      return "DAMARIS_ALREADY_INITIALIZED: already initialized";
    case DAMARIS_UNDEFINED_ACTION:
      return "DAMARIS_UNDEFINED_ACTION: no such event or script";
    case DAMARIS_UNDEFINED_PARAMETER:
      return "DAMARIS_UNDEFINED_PARAMETER: no such parameter";
    case DAMARIS_UNDEFINED_VARIABLE:
      return "DAMARIS_UNDEFINED_VARIABLE: no such variable";
    case DAMARIS_INVALID_BLOCK:
      return "DAMARIS_INVALID_BLOCK: block id out of range";
    case DAMARIS_INVALID_DIMENSIONS:
      return "DAMARIS_INVALID_DIMENSIONS: invalid dimensions";
    case DAMARIS_BLOCK_NOT_FOUND:
      return "DAMARIS_BLOCK_NOT_FOUND: block not allocated";
    case DAMARIS_REACTOR_NOT_FOUND:
      return "DAMARIS_REACTOR_NOT_FOUND: messaging not available";
    case DAMARIS_BIND_ERROR:
      return "DAMARIS_BIND_ERROR: cannot bind the function";
    case DAMARIS_ERROR_UNKNOWN:
      return "DAMARIS_ERROR_UNKNOWN: unknown error";
    default:
      return "unknown error code";
  }
}

SIDECORE_API const char* damaris_last_error_message(void) {
  return sidecore::c_boundary::last_error();
}

SIDECORE_API const char* sidecore_version(void) { return SIDECORE_VERSION_STRING; }

// bindings/c/current_runtime.hpp: the runtime, for the extension calls in other files.
namespace sidecore {
runtime* current_runtime() noexcept { return g_runtime.get(); }
}  // namespace sidecore
