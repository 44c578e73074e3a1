/* Sidecore: the Damaris C API of Damaris 1.9 and later (1.7's calls, plus damaris_get_type,
 * damaris_has_plugin and damaris_error_string). Programs written for Damaris compile and link
 * unchanged.
 *
 * Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause
 *
 * Roles. After damaris_initialize(), every process of the communicator is either a client
 * (the simulation) or a server (a dedicated core or node). damaris_start() tells which:
 * on a server it runs the server loop and returns only when every client has called
 * damaris_stop(). Client-only calls made on a server return DAMARIS_CORE_IS_SERVER; any call
 * made before damaris_initialize() returns DAMARIS_NOT_INITIALIZED (except damaris_bind() and
 * the error-string functions, which work at any time). Writes, signals and iteration ends
 * after damaris_stop() return DAMARIS_CHANNEL_ERROR. No call terminates the process: each
 * failure returns a code from the enum below and leaves a message readable with
 * damaris_last_error_message().
 *
 * Thread safety. The API is meant to be called from one thread per process (the thread that
 * called damaris_initialize()). damaris_error_string() and damaris_last_error_message() may be
 * called from any thread; the last error message is kept per thread.
 *
 * Iterations. Data written between two damaris_end_iteration() calls belongs to the current
 * iteration (starting at 0). A server stores an iteration once all of its clients have ended
 * it; see docs/design.md for the order in which stores and actions run.
 */
#ifndef SIDECORE_DAMARIS_H
#define SIDECORE_DAMARIS_H

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

/* The Damaris API version this header is compatible with. */
#define DAMARIS_VERSION_MAJOR 1
#define DAMARIS_VERSION_MINOR 7
#define DAMARIS_VERSION_PATCH 0
#define DAMARIS_VERSION "1.7.0"

/* What this build has, as Damaris's configured header says it (test with #ifdef or #if):
 * HDF5 storage always; no VisIt, ParaView (Catalyst) or Python plugins. */
#define HAVE_HDF5_ENABLED 1
/* #undef HAVE_VISIT_ENABLED */
/* #undef HAVE_PARAVIEW_ENABLED */
/* #undef HAVE_PYTHON_ENABLED */

/* The Sidecore release that provides it. */
#define SIDECORE_VERSION_MAJOR 0
#define SIDECORE_VERSION_MINOR 1
#define SIDECORE_VERSION_PATCH 0
#define SIDECORE_VERSION_STRING "0.1.0"
#define SIDECORE_VERSION_NUMBER \
  (SIDECORE_VERSION_MAJOR * 10000 + SIDECORE_VERSION_MINOR * 100 + SIDECORE_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes: Damaris's names and values (those of every Damaris header we could read); they
 * will never change. */
enum {
  DAMARIS_OK = 0,                 /* success */
  DAMARIS_INIT_ERROR = 1,         /* initialization failed (see the message) */
  DAMARIS_FINALIZE_ERROR = 2,     /* finalization failed */
  DAMARIS_CORE_IS_SERVER = 3,     /* client-only call made on a server process */
  DAMARIS_NO_SERVER = 4,          /* no dedicated core or node (damaris_start/stop): not a failure */
  DAMARIS_ALLOCATION_ERROR = 5,   /* the buffer cannot hold the request (or wait timed out) */
  DAMARIS_CONFIG_ERROR = 6,       /* invalid XML configuration */
  DAMARIS_ARGUMENT_ERROR = 7,     /* invalid argument (null pointer, wrong size...) */
  DAMARIS_MPI_ERROR = 8,          /* an MPI call failed */
  DAMARIS_DATASPACE_ERROR = 9,    /* invalid data space */
  DAMARIS_CHANNEL_ERROR = 10,     /* a communication channel failed */
  DAMARIS_INVALID_TAG = 11,       /* invalid message tag */
  DAMARIS_NOT_INITIALIZED = 12,   /* call made before damaris_initialize() */
  DAMARIS_ALREADY_INITIALIZED = 13, /* damaris_initialize() called twice */
  DAMARIS_UNDEFINED_ACTION = 14,  /* no event or script of that name */
  DAMARIS_UNDEFINED_PARAMETER = 15, /* no parameter of that name */
  DAMARIS_UNDEFINED_VARIABLE = 16,  /* no variable of that name */
  DAMARIS_INVALID_BLOCK = 17,     /* negative block id (Sidecore accepts any id >= 0) */
  DAMARIS_INVALID_DIMENSIONS = 18, /* a layout evaluates to invalid dimensions */
  DAMARIS_BLOCK_NOT_FOUND = 19,   /* commit/clear of a block that was not allocated */
  DAMARIS_REACTOR_NOT_FOUND = 20, /* internal messaging not available */
  DAMARIS_BIND_ERROR = 21,        /* damaris_bind() failed */
  DAMARIS_ERROR_UNKNOWN = 22      /* anything else, including storage failures */
};

/* The element type of a variable's layout, as damaris_get_type() reports it (Damaris 1.9 API,
 * the names OPM Flow compares against). The values are Sidecore's own: no public Damaris source
 * we could read pins them, so compile against this header. The XML
 * types map as: short -> SHORT; int, integer -> INT; long -> LONG; float, real -> FLOAT;
 * double -> DOUBLE; char, character -> CHAR; string -> STRING; label -> LABEL. The unsigned
 * types have no XML spelling and are never reported. */
typedef enum {
  DAMARIS_TYPE_UNDEFINED = 0,
  DAMARIS_TYPE_SHORT = 1,
  DAMARIS_TYPE_INT = 2,
  DAMARIS_TYPE_LONG = 3,
  DAMARIS_TYPE_FLOAT = 4,
  DAMARIS_TYPE_DOUBLE = 5,
  DAMARIS_TYPE_CHAR = 6,
  DAMARIS_TYPE_USHORT = 7,
  DAMARIS_TYPE_UINT = 8,
  DAMARIS_TYPE_ULONG = 9,
  DAMARIS_TYPE_UCHAR = 10,
  DAMARIS_TYPE_STRING = 11,
  DAMARIS_TYPE_LABEL = 12
} DAMARIS_TYPE_STR;

/* The optional plugins damaris_has_plugin() asks about (the type is Damaris 1.9's; no public
 * Damaris source we could read names its enumerators, so these names are Sidecore's). */
typedef enum {
  DAMARIS_PLUGIN_HDF5 = 1,     /* HDF5 storage (always present in Sidecore) */
  DAMARIS_PLUGIN_PYTHON = 2,   /* Python scripts (<pyscript>): 1 when built with Python */
  DAMARIS_PLUGIN_PARAVIEW = 3, /* ParaView Catalyst in situ visualisation */
  DAMARIS_PLUGIN_VISIT = 4     /* VisIt libsim in situ visualisation */
} DAMARIS_PLUGIN_TYPE;

/* A function run for an event: (event name, source client, iteration, argument string). */
typedef void (*signal_t)(const char*, int32_t, int32_t, const char*);

/* Reads the XML file (on the first rank of comm only, then broadcast: the other ranks never
 * open it, so rank 0 may write it just before the call), splits comm into clients
 * and servers and maps the shared memory. Collective over comm; MPI must be initialized.
 * configfile is only read during the call.
 * Returns DAMARIS_OK; DAMARIS_CONFIG_ERROR for a missing or invalid file (the same on every
 * rank); DAMARIS_ALLOCATION_ERROR when the shared memory cannot be created;
 * DAMARIS_ALREADY_INITIALIZED; DAMARIS_MPI_ERROR (MPI not initialized or an MPI call failed);
 * DAMARIS_ARGUMENT_ERROR for a NULL configfile. */
int damaris_initialize(const char* configfile, MPI_Comm comm);

/* Releases everything damaris_initialize() acquired (shared memory, communicators, files) and
 * logs the run's counters (bytes stored at info level; dropped iterations and store failures as
 * warnings and errors). Collective over the comm given
 * to damaris_initialize(). A client that did not call damaris_stop() is stopped here (with a
 * warning) so that its server can finish. Afterwards damaris_initialize() may be called again.
 * Returns DAMARIS_OK, DAMARIS_NOT_INITIALIZED, or DAMARIS_FINALIZE_ERROR (message says why). */
int damaris_finalize(void);

/* On a client, sets *is_client to 1 and returns at once. On a server, runs the server loop
 * until every client has called damaris_stop(), then sets *is_client to 0. Without dedicated
 * cores or nodes every process is a client: *is_client is 1 and the call returns
 * DAMARIS_NO_SERVER, as in Damaris (test `err == DAMARIS_OK || err == DAMARIS_NO_SERVER`).
 * After damaris_stop(), damaris_start() may be called again to start the servers again (as
 * Damaris's C++ example does): that second call is collective over every process of the
 * communicator given to damaris_initialize(), and iterations carry on where they were.
 * Returns DAMARIS_OK, DAMARIS_NO_SERVER, DAMARIS_NOT_INITIALIZED, DAMARIS_ARGUMENT_ERROR (NULL
 * is_client), DAMARIS_ALREADY_INITIALIZED (called again before damaris_stop), or the code of a
 * store failure on a server. */
int damaris_start(int* is_client);

/* Client only: tells the servers this client will send nothing more (until a new
 * damaris_start()). Further calls are harmless. Without dedicated cores or nodes it finishes
 * the client's pending output and returns DAMARIS_NO_SERVER, as in Damaris; on a server it
 * does nothing and returns DAMARIS_NO_SERVER too.
 * Returns DAMARIS_OK, DAMARIS_NO_SERVER, DAMARIS_NOT_INITIALIZED, or a store's code (without
 * dedicated resources, when storing what was left fails). */
int damaris_stop(void);

/* Client only: copies the data of block 0 of a variable for the current iteration. Returns
 * once the data is copied: the caller may reuse its buffer at once. Same as
 * damaris_write_block(varname, 0, data). */
int damaris_write(const char* varname, const void* data);

/* Client only: copies block `block` (any id 0 or more, see sidecore/blocks.h) of a variable.
 * Its size is the variable's layout evaluated with the current parameter values, or the
 * block's own extents (sidecore_set_block_extents()); its global position is the one last set
 * with damaris_set_block_position() (zeros by default).
 * Returns DAMARIS_OK (also when policy="skip" drops the block: drops are counted and reported
 * at finalize); DAMARIS_UNDEFINED_VARIABLE; DAMARIS_INVALID_BLOCK; DAMARIS_ARGUMENT_ERROR (NULL
 * name or data); DAMARIS_INVALID_DIMENSIONS (a dimension < 1, or more than 8 dimensions);
 * DAMARIS_INVALID_DIMENSIONS also when the block, without its ghost zones, does not lie inside
 * the layout's global extents at its position; DAMARIS_ALLOCATION_ERROR (block larger than
 * the whole buffer, block already written or allocated in this iteration, or policy="wait"
 * timed out);
 * DAMARIS_CHANNEL_ERROR (the server stopped consuming messages); DAMARIS_CORE_IS_SERVER;
 * DAMARIS_NOT_INITIALIZED. */
int damaris_write_block(const char* varname, int32_t block, const void* data);

/* Client only: reserves room for block 0 in the shared buffer and returns its address in *ptr.
 * Fill it, then damaris_commit() and damaris_clear(); no copy is ever made. The memory belongs
 * to Sidecore: do not free it, and do not touch it after damaris_clear() or after the end of
 * the iteration. Allocating the same block twice in one iteration is an error.
 * Returns the codes of damaris_write_block(), and DAMARIS_ALLOCATION_ERROR when the block is
 * already allocated. */
int damaris_alloc(const char* varname, void** ptr);
int damaris_alloc_block(const char* varname, int32_t block, void** ptr);

/* Client only: declares the allocated block complete: it will be stored as it is now. The
 * _iteration forms name the iteration the block was allocated in (the current one by default).
 * Returns DAMARIS_OK (committing twice is harmless), DAMARIS_BLOCK_NOT_FOUND (not allocated),
 * DAMARIS_UNDEFINED_VARIABLE, DAMARIS_INVALID_BLOCK, DAMARIS_CHANNEL_ERROR,
 * DAMARIS_CORE_IS_SERVER, DAMARIS_NOT_INITIALIZED. */
int damaris_commit(const char* varname);
int damaris_commit_block(const char* varname, int32_t block);
int damaris_commit_iteration(const char* varname, int32_t iteration);
int damaris_commit_block_iteration(const char* varname, int32_t block, int32_t iteration);

/* Client only: gives the block up: the pointer from alloc must not be used afterwards. A block
 * not yet committed is committed first. Returns the codes of damaris_commit(). */
int damaris_clear(const char* varname);
int damaris_clear_block(const char* varname, int32_t block);
int damaris_clear_iteration(const char* varname, int32_t iteration);
int damaris_clear_block_iteration(const char* varname, int32_t block, int32_t iteration);

/* Client only: triggers the event named in the XML. Handled after every block this client
 * wrote before the call, and in the order signals were sent (see docs/design.md for scopes).
 * A failing remote action is logged, not returned (the client has gone on by then).
 * Returns DAMARIS_OK, DAMARIS_UNDEFINED_ACTION (also for any name longer than 63 characters,
 * which no event may have), DAMARIS_ARGUMENT_ERROR (NULL name), DAMARIS_CHANNEL_ERROR,
 * DAMARIS_CORE_IS_SERVER, DAMARIS_NOT_INITIALIZED. */
int damaris_signal(const char* signal_name);

/* Associates a function with an event name, in this process (call it on the servers too for
 * remote events: the same code usually runs on every rank). Takes precedence over the symbol
 * named by the event's action. May be called before damaris_initialize(). Thread-safe.
 * Returns DAMARIS_OK, DAMARIS_BIND_ERROR (NULL function), DAMARIS_ARGUMENT_ERROR (NULL name). */
int damaris_bind(const char* signal_name, signal_t sig);

/* Copies the current value of a parameter into buffer; size must be at least the size of the
 * parameter's type (4 for int, 8 for double...). Allowed on clients and servers: each process
 * has its own copy of the parameters.
 * Returns DAMARIS_OK, DAMARIS_UNDEFINED_PARAMETER, DAMARIS_ARGUMENT_ERROR (NULL or too small
 * buffer), DAMARIS_NOT_INITIALIZED. */
int damaris_parameter_get(const char* param_name, void* buffer, unsigned int size);

/* Sets a parameter on this process; size must equal the size of its type. Every layout that
 * depends on it is re-evaluated: the following writes use the new dimensions (the server stores
 * each block with the dimensions it was written with). All or nothing: if a dependent layout
 * cannot be evaluated (division by zero), nothing changes.
 * Returns DAMARIS_OK, DAMARIS_UNDEFINED_PARAMETER, DAMARIS_ARGUMENT_ERROR (NULL buffer or wrong
 * size), DAMARIS_CONFIG_ERROR (a dependent layout cannot be evaluated), DAMARIS_NOT_INITIALIZED. */
int damaris_parameter_set(const char* param_name, const void* buffer, unsigned int size);

/* Sets the global position (one int64_t per dimension, as many as the layout has, in the
 * layout's order: fastest first for a Fortran layout, like its dimensions) of the first
 * interior element of block 0 / block `block` of a variable, for the writes that follow. A
 * block must lie inside the layout's global extents (checked at the write).
 * Returns DAMARIS_OK, DAMARIS_UNDEFINED_VARIABLE, DAMARIS_INVALID_BLOCK,
 * DAMARIS_ARGUMENT_ERROR, DAMARIS_CORE_IS_SERVER, DAMARIS_NOT_INITIALIZED. */
int damaris_set_position(const char* var_name, const int64_t* position);
int damaris_set_block_position(const char* var_name, int32_t block, const int64_t* position);

/* Client only: the communicator of the clients (the simulation's replacement for comm). The
 * communicator belongs to Sidecore: do not free it. */
int damaris_client_comm_get(MPI_Comm* comm);

/* Client only: ends the current iteration. With dedicated resources it only posts a message;
 * without, the stores run inside this call (collectively over the clients for Collective
 * output). With dedicated cores and policy="wait", a client more than 4 iterations ahead of
 * the slowest client of its dedicated core waits here for it (at most the buffer's timeout).
 * Returns DAMARIS_OK, DAMARIS_CHANNEL_ERROR (that wait timed out, or the server stopped
 * consuming), DAMARIS_ERROR_UNKNOWN when a store failed: in synchronous mode for this
 * iteration; with dedicated cores or a background thread for an earlier one, reported once
 * (the message names the failure; the iteration has ended either way), DAMARIS_CORE_IS_SERVER,
 * DAMARIS_NOT_INITIALIZED. */
int damaris_end_iteration(void);

/* The current iteration number (0 before the first damaris_end_iteration()). */
int damaris_get_iteration(int* iteration);

/* Damaris 1.9 API. Stores in *vartype the element type of a variable's layout (see
 * DAMARIS_TYPE_STR). Works on clients and servers. Returns DAMARIS_OK,
 * DAMARIS_UNDEFINED_VARIABLE (*vartype is then DAMARIS_TYPE_UNDEFINED), DAMARIS_ARGUMENT_ERROR
 * (NULL argument), DAMARIS_NOT_INITIALIZED. */
int damaris_get_type(const char* variable_name, DAMARIS_TYPE_STR* vartype);

/* Damaris 1.9 API. 1 when this build has the plugin, 0 otherwise (also for a value outside the
 * enum). May be called at any time, before damaris_initialize() too. Thread-safe. */
int damaris_has_plugin(DAMARIS_PLUGIN_TYPE plugin);

/* Damaris 1.9 API (OPM Flow prints every failure with it). A static, human-readable name for an
 * error code ("DAMARIS_CONFIG_ERROR: ..."), also for a code outside the enum. Never NULL; may be
 * called at any time, from any thread. */
const char* damaris_error_string(int code);

/* Sidecore extensions. */

/* The message of the last failed call on this thread ("" if none; a successful call does not
 * clear it, as with errno). Valid until the next call into the API from this thread. Failed
 * calls are also logged: the first failure of each function with each code at error level
 * (configuration errors by the first rank only), later ones at debug level. */
const char* damaris_last_error_message(void);

/* Client only: returns once every iteration this client has ended is stored (written by its
 * stores), whatever the mode: with dedicated cores it waits for its server, in thread mode for
 * the I/O thread; in synchronous mode it returns at once. Blocks of the current iteration are
 * not waited for: end the iteration first. Waits at most the buffer's timeout.
 * Returns DAMARIS_OK, DAMARIS_CHANNEL_ERROR (timeout), DAMARIS_ERROR_UNKNOWN when a store
 * failed since the last report (dedicated cores, thread mode), DAMARIS_CORE_IS_SERVER,
 * DAMARIS_NOT_INITIALIZED. */
int damaris_sync(void);

/* The Sidecore version at run time ("0.1.0"). */
const char* sidecore_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SIDECORE_DAMARIS_H */
