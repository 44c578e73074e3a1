/* Sidecore plugins: the C interface a shared library implements so that Sidecore loads it by
 * name from the XML and hands it every iteration to store (a store plugin) or to analyse, with
 * the events signalled to it (an action plugin, described after the store plugins below).
 *
 * Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause
 *
 * A plugin is a shared library (built as a module, not linked into the program) that includes
 * only this header and defines one function, sidecore_store_plugin(), returning a descriptor:
 * an ABI version followed by four function pointers. The XML names it:
 *
 *   <store name="out" type="npy" library="/path/to/libsidecore_npy.so">
 *     <option key="FilesPath">out/</option>
 *   </store>
 *
 * Without library="...", a type that is not built in (HDF5, null) is looked up as
 * libsidecore_<type>.so by the dynamic loader's usual search (LD_LIBRARY_PATH, the runpath,
 * the system directories). A library="..." containing a '/' is a path (relative ones to the
 * working directory); otherwise it is searched the same way.
 *
 * Loading. Sidecore opens the library (dlopen, RTLD_NOW | RTLD_LOCAL: every symbol it needs
 * must resolve at once, and its symbols do not clash with another plugin's), calls
 * sidecore_store_plugin() and compares the descriptor's abi_version with the version this
 * Sidecore was built with. A missing library, a missing symbol or a different version fails
 * damaris_initialize() with DAMARIS_CONFIG_ERROR, on every rank, naming the XML file and line,
 * the library and the two versions. The library stays loaded until the process exits, so
 * threads, atexit handlers and thread-local data it leaves behind remain valid.
 *
 * Lifecycle, on every writer (a dedicated core or node, or a simulation process when there is
 * none; only writers create stores, although every process opens and closes a library found by
 * its type alone once, while reading the XML, to check that it exists):
 *
 *   create()            once, in damaris_initialize()
 *   write_iteration()   once per iteration stored, in increasing order of iteration
 *   finish()            once, after the last iteration (damaris_stop / damaris_finalize)
 *   destroy()           once, last
 *
 * Every writer of the store calls create, each write_iteration and finish in the same order,
 * also when it holds no block of that iteration: a plugin may use MPI collectives on the
 * writers' communicator in these calls. Iterations that are not a multiple of the store's
 * frequency="..." are not passed at all. destroy() may come without finish() (another rank
 * failed to initialize, or the run is being torn down after an error): it must release what
 * the store holds and must not communicate.
 *
 * Threads. Calls on one store never overlap. write_iteration() may run on a background I/O
 * thread (<dedicated threads="1"/>) while create(), finish() and destroy() run on the thread
 * that called damaris_initialize(). Two stores (two <store> elements naming the same plugin)
 * are distinct handles whose calls may come from different threads: state shared by all the
 * stores of a plugin (globals) must be protected by the plugin.
 *
 * Ownership. Everything Sidecore passes (configuration, strings, arrays, block data) belongs to
 * Sidecore and is valid only until the call returns: copy what must be kept. Block data is
 * read-only. The store handle returned by create() belongs to the plugin; Sidecore only passes
 * it back.
 *
 * Errors. Each call returns SIDECORE_PLUGIN_OK (0) or an error code below, and on error writes
 * a NUL-terminated explanation into `message` (at most message_size bytes including the NUL,
 * truncated if longer; message_size is at least 256 and message holds "" on entry). Sidecore
 * adds the store's name, the XML file and line and the library. No C++ exception, longjmp or
 * exit() may leave a plugin function: a plugin written in C++ catches everything and returns
 * an error code. Errors of create() fail damaris_initialize() on every rank; errors of
 * write_iteration() and finish() are logged, counted and returned to the program like every
 * store failure (DAMARIS_ERROR_UNKNOWN), and the run goes on with the next iteration.
 */
#ifndef SIDECORE_PLUGIN_H
#define SIDECORE_PLUGIN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* The version of the store plugin interface: sidecore_block, sidecore_iteration and the store
 * structs and functions below. It changes whenever one of them changes; Sidecore loads only
 * store plugins built with the same value. Action plugins have their own version,
 * SIDECORE_ACTION_ABI_VERSION, which also changes when sidecore_block or sidecore_iteration
 * do. */
#define SIDECORE_PLUGIN_ABI_VERSION 1

/* The name of the one function a plugin library exports (for dlsym). */
#define SIDECORE_STORE_PLUGIN_SYMBOL "sidecore_store_plugin"

/* Blocks have at most this many dimensions (SIDECORE_MAX_DIMENSIONS of Damaris.h, which a
 * plugin need not include; the library checks that the two agree). */
#define SIDECORE_PLUGIN_MAX_DIMS 8

#if defined(__GNUC__) || defined(__clang__)
#define SIDECORE_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define SIDECORE_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes of the plugin functions. Values never change. Any other non-zero value is
 * treated as SIDECORE_PLUGIN_ERROR. */
enum {
  SIDECORE_PLUGIN_OK = 0,          /* success */
  SIDECORE_PLUGIN_ERROR = 1,       /* storing failed (a file, the disk, a library...) */
  SIDECORE_PLUGIN_CONFIG_ERROR = 2 /* create(): an option or its value is invalid */
};

/* Element types, as the XML layout names them: char, character, string, label -> INT8;
 * short -> INT16; int, integer -> INT32; long -> INT64; float, real -> FLOAT32;
 * double -> FLOAT64. Values never change. Elements are in the machine's native byte order. */
typedef enum {
  SIDECORE_TYPE_INT8 = 1,
  SIDECORE_TYPE_INT16 = 2,
  SIDECORE_TYPE_INT32 = 3,
  SIDECORE_TYPE_INT64 = 4,
  SIDECORE_TYPE_FLOAT32 = 5, /* IEEE 754 binary32 */
  SIDECORE_TYPE_FLOAT64 = 6  /* IEEE 754 binary64 */
} sidecore_element_type;

/* Bytes per element of a sidecore_element_type value; 0 for anything else. */
static inline size_t sidecore_element_size(int32_t type) {
  switch (type) {
    case SIDECORE_TYPE_INT8:
      return 1;
    case SIDECORE_TYPE_INT16:
      return 2;
    case SIDECORE_TYPE_INT32:
      return 4;
    case SIDECORE_TYPE_INT64:
      return 8;
    case SIDECORE_TYPE_FLOAT32:
      return 4;
    case SIDECORE_TYPE_FLOAT64:
      return 8;
    default:
      return 0;
  }
}

/* One block: what one client wrote of one variable in one iteration (one domain). Arrays of
 * extents have ndims entries, slowest-varying dimension first (C order, also for variables
 * whose layout is written for Fortran: Sidecore reverses those). */
typedef struct sidecore_block {
  const char* variable;         /* full name, groups joined with '/': "fluid/pressure" */
  int32_t type;                 /* a sidecore_element_type */
  int32_t ndims;                /* 1 .. SIDECORE_PLUGIN_MAX_DIMS (a scalar has one extent of 1) */
  const int64_t* dims;          /* extents of the data in memory, ghost zones included */
  const int64_t* global_dims;   /* the layout's global extents, or NULL when it gives none */
  const int64_t* position;      /* global index of the first interior element (zeros unless
                                   the program called damaris_set_position) */
  const int64_t* ghosts_before; /* ghost widths at the start of each dimension, or NULL when the
                                   layout has no ghost zones */
  const int64_t* ghosts_after;  /* ghost widths at the end of each dimension, or NULL */
  int32_t source;               /* the client that wrote it: its rank among the clients */
  int32_t block;                /* the domain index within that client (0 .. domains-1) */
  int32_t iteration;            /* the iteration it belongs to */
  int32_t reserved;             /* 0; keeps data aligned the same way everywhere */
  const void* data;             /* dims[0] * ... * dims[ndims-1] elements, C order, aligned
                                   for the element type */
  uint64_t bytes;               /* bytes readable at data: at least the elements' size */
} sidecore_block;

/* Everything this writer holds of one iteration for one store. */
typedef struct sidecore_iteration {
  int32_t iteration;
  /* 1 when some client dropped data of this iteration (<buffer policy="skip">) or stopped
   * before ending it: what is here is all there will be; 0 otherwise. */
  int32_t incomplete;
  uint64_t block_count;
  const sidecore_block* blocks; /* by variable (configuration order), then source, then block */
  uint64_t variable_count;
  const char* const* variables; /* full names of every variable assigned to the store, in
                                   configuration order, including those of which this writer
                                   holds no block now (collective stores take part anyway) */
} sidecore_iteration;

/* What a store is created from. */
typedef struct sidecore_store_config {
  const char* simulation;           /* <simulation name="..."> */
  const char* store_name;           /* <store name="..."> */
  const char* store_type;           /* <store type="...">, as written */
  const char* library;              /* the library as the XML names it, or libsidecore_<type>.so */
  uint64_t option_count;            /* <option key="...">value</option> children */
  const char* const* option_keys;   /* option_count keys, in XML order, unique, trimmed */
  const char* const* option_values; /* the matching values, trimmed ("" when empty) */
  int32_t writer_index;             /* this writer among the writers (0 .. writer_count-1),
                                       the number to put in file names so that writers do not
                                       collide; its rank in comm unless comm is MPI_COMM_SELF */
  int32_t writer_count;             /* writers of this store */
  /* The communicator of every writer of the store: usable in create(), write_iteration() and
   * finish(). Do not free it. When writers run on background threads and MPI does not provide
   * MPI_THREAD_MULTIPLE, it is MPI_COMM_SELF (writer_index/count still count every writer) and
   * finish_comm is the communicator of all writers, usable in finish() only; otherwise
   * finish_comm is MPI_COMM_NULL. */
  MPI_Comm comm;
  MPI_Comm finish_comm;
} sidecore_store_config;

/* The functions of a store plugin. Sidecore reads abi_version first (it is the first field of
 * every version of this struct) and the rest only when it matches. */
typedef struct sidecore_store_descriptor {
  uint32_t abi_version; /* SIDECORE_PLUGIN_ABI_VERSION, as the plugin was built */
  const char* name;     /* short name for messages ("npy"); may be NULL */

  /* Checks the options and prepares the store (creates directories...). On success returns
   * SIDECORE_PLUGIN_OK and sets *store to the plugin's handle (NULL is a valid handle). On
   * failure returns SIDECORE_PLUGIN_CONFIG_ERROR (an option is wrong: name the valid ones) or
   * SIDECORE_PLUGIN_ERROR, releases whatever it acquired, and destroy() is not called.
   * Required. */
  int (*create)(const sidecore_store_config* config, void** store, char* message,
                size_t message_size);

  /* Stores one iteration (see sidecore_iteration; block_count may be 0). A failure affects
   * this iteration only: the next call comes with the next iteration. Required. */
  int (*write_iteration)(void* store, const sidecore_iteration* iteration, char* message,
                         size_t message_size);

  /* After the last iteration: write what depends on all of them (an index, a summary). May be
   * NULL when there is nothing to do. */
  int (*finish)(void* store, char* message, size_t message_size);

  /* Releases the store. Called exactly once for every successful create(); must not fail or
   * communicate. Required. */
  void (*destroy)(void* store);
} sidecore_store_descriptor;

/* Defined by the plugin library: returns its descriptor, which must stay valid while the
 * library is loaded (a static const object). Called once per <store> element, before create();
 * must not fail. Example:
 *
 *   static const sidecore_store_descriptor descriptor = {
 *       SIDECORE_PLUGIN_ABI_VERSION, "npy", npy_create, npy_write_iteration, NULL, npy_destroy};
 *   SIDECORE_PLUGIN_EXPORT const sidecore_store_descriptor* sidecore_store_plugin(void) {
 *     return &descriptor;
 *   }
 */
SIDECORE_PLUGIN_EXPORT const sidecore_store_descriptor* sidecore_store_plugin(void);

/* Action plugins.
 *
 * An action plugin analyses data where the stores run, and answers events. The library defines
 * sidecore_action_plugin(), returning a sidecore_action_descriptor, and the XML names it in
 * <actions>:
 *
 *   <actions>
 *     <plugin name="stats" library="/path/to/libstats_action.so" frequency="2"
 *             variables="temperature,fluid/pressure">
 *       <option key="Output">stats.csv</option>
 *     </plugin>
 *     <event name="snapshot" plugin="stats" scope="core"/>
 *   </actions>
 *
 * library="..." is found as a store's is (a path when it contains '/', else the dynamic
 * loader's search). frequency="N" (default 1) passes every N-th iteration (those that are a
 * multiple of N); frequency="0" passes none: the plugin only answers events. variables="..."
 * (comma separated full names, groups joined with '/') chooses the variables whose blocks it
 * receives; without it, every enabled variable. An <event> with plugin="..." instead of
 * action="..." is routed to the plugin: each time it fires (by its scope, as for any event)
 * the plugin's on_event() is called.
 *
 * Loading, versions and errors follow the store plugins' rules, with the action descriptor's
 * own version, SIDECORE_ACTION_ABI_VERSION, read from its first field: a missing library, a
 * library without sidecore_action_plugin() or another version fails damaris_initialize() with
 * DAMARIS_CONFIG_ERROR naming the XML file and line, the library and the two versions. Store
 * plugins and action plugins are versioned apart: a change to one never refuses the other. A
 * library may be both (it exports both functions).
 *
 * Lifecycle, on every writer (where the stores run: each dedicated core or node, or each
 * simulation process when there is none, synchronously or on its background I/O thread):
 *
 *   create()         once, in damaris_initialize()
 *   on_iteration()   once per iteration passed, in increasing order, after the stores ran on
 *                    it and before its memory is released; on every writer, also when it holds
 *                    no block: a plugin may use MPI collectives on config->comm here
 *   on_event()       each time an event routed to it fires on this writer, between two
 *                    iterations: after the blocks the signalling client wrote before the
 *                    signal arrived, possibly before their iteration was passed. Events fire
 *                    on one writer or on some of them (scope core or group) or on all of them
 *                    in no common order (bcast): on_event() must not call collectives
 *   finish()         once, after the last iteration, on every writer (collectives allowed)
 *   destroy()        once, last; also without finish() after an error elsewhere; must not
 *                    communicate
 *
 * Threads, ownership and return codes are as for stores: calls on one action never overlap
 * and come from the thread that runs the stores (on_iteration and on_event may come from a
 * background I/O thread, create, finish and destroy from the thread of damaris_initialize);
 * everything passed is Sidecore's and valid until the call returns; block data is read-only.
 * Errors of create() fail damaris_initialize(); errors of on_iteration(), on_event() and
 * finish() are logged, counted and returned to the program as store failures are
 * (DAMARIS_ERROR_UNKNOWN), and the run goes on. With dedicated cores, an event signalled with
 * execution="local" runs in the client, where no action plugin lives: an event routed to a
 * plugin cannot be local.
 */

/* The version of the action plugin interface (the structs and functions below, and the
 * sidecore_block and sidecore_iteration they use). Sidecore loads only action plugins built
 * with the same value. */
#define SIDECORE_ACTION_ABI_VERSION 1

/* The name of the function an action plugin library exports (for dlsym). */
#define SIDECORE_ACTION_PLUGIN_SYMBOL "sidecore_action_plugin"

/* What an action plugin is created from. */
typedef struct sidecore_action_config {
  const char* simulation;           /* <simulation name="..."> */
  const char* action_name;          /* <plugin name="..."> */
  const char* library;              /* library="...", as written */
  uint64_t option_count;            /* <option key="...">value</option> children */
  const char* const* option_keys;   /* option_count keys, in XML order, unique, trimmed */
  const char* const* option_values; /* the matching values, trimmed ("" when empty) */
  uint64_t variable_count;          /* the variables whose blocks on_iteration() receives */
  const char* const* variables;     /* their full names, in configuration order */
  int32_t frequency;                /* frequency="...": 0 when no iteration is passed */
  int32_t writer_index;             /* this writer among the writers (0 .. writer_count-1) */
  int32_t writer_count;             /* writers, each with its own instance of the plugin */
  int32_t reserved;                 /* 0 */
  /* As in sidecore_store_config: the writers' communicator (usable in create, on_iteration
   * and finish; MPI_COMM_SELF on background threads without MPI_THREAD_MULTIPLE, and then
   * finish_comm spans the writers, usable in finish only; MPI_COMM_NULL otherwise). Do not
   * free them. */
  MPI_Comm comm;
  MPI_Comm finish_comm;
} sidecore_action_config;

/* Scopes of an event (<event scope="...">). Values never change. */
enum {
  SIDECORE_EVENT_SCOPE_CORE = 0,  /* each signal, on the signalling client's writer */
  SIDECORE_EVENT_SCOPE_GROUP = 1, /* once per iteration, when all of a writer's clients sent it */
  SIDECORE_EVENT_SCOPE_BCAST = 2  /* each signal, on every writer */
};

/* One event that fired. */
typedef struct sidecore_event {
  const char* name;  /* <event name="..."> */
  int32_t source;    /* the client that signalled it (group scope: the one that completed the
                        group), its rank among the clients */
  int32_t iteration; /* the client's iteration when it signalled */
  int32_t scope;     /* SIDECORE_EVENT_SCOPE_* */
  int32_t reserved;  /* 0 */
} sidecore_event;

/* The functions of an action plugin. Sidecore reads abi_version first (the first field of every
 * version of this struct) and the rest only when it matches. */
typedef struct sidecore_action_descriptor {
  uint32_t abi_version; /* SIDECORE_ACTION_ABI_VERSION, as the plugin was built */
  const char* name;     /* short name for messages ("stats"); may be NULL */

  /* Checks the options and prepares the action. Returns as a store's create() does; on failure
   * destroy() is not called. Required. */
  int (*create)(const sidecore_action_config* config, void** action, char* message,
                size_t message_size);

  /* One iteration (blocks of the chosen variables that this writer holds; block_count may be
   * 0). May be NULL when the plugin only answers events. */
  int (*on_iteration)(void* action, const sidecore_iteration* iteration, char* message,
                      size_t message_size);

  /* One event routed to the plugin. May be NULL when no event is. */
  int (*on_event)(void* action, const sidecore_event* event, char* message, size_t message_size);

  /* After the last iteration. May be NULL. */
  int (*finish)(void* action, char* message, size_t message_size);

  /* Releases the action. Called exactly once for every successful create(); must not fail or
   * communicate. Required. */
  void (*destroy)(void* action);
} sidecore_action_descriptor;

/* Defined by an action plugin library: returns its descriptor, which must stay valid while the
 * library is loaded (a static const object). Called once per <plugin> element, before
 * create(); must not fail. Example:
 *
 *   static const sidecore_action_descriptor descriptor = {
 *       SIDECORE_ACTION_ABI_VERSION, "stats", stats_create, stats_on_iteration, NULL,
 *       stats_finish, stats_destroy};
 *   SIDECORE_PLUGIN_EXPORT const sidecore_action_descriptor* sidecore_action_plugin(void) {
 *     return &descriptor;
 *   }
 */
SIDECORE_PLUGIN_EXPORT const sidecore_action_descriptor* sidecore_action_plugin(void);

#ifdef __cplusplus
}
#endif

#endif /* SIDECORE_PLUGIN_H */
