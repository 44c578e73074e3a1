/* Every error path of the C API during a run: client calls made on a dedicated core, unknown
 * names, blocks out of range, NULL pointers, wrong sizes, commit/clear of blocks never
 * allocated, blocks handed over twice or larger than the buffer, layouts made invalid by a
 * parameter, bad bindings. Each failure is followed by
 * valid calls, and run_c_test.py reads every valid write back: a failed call must leave the
 * run intact. Usage: api_errors <xml> <dedicated cores: 0 or 1> <output dir> */
#include <Damaris.h>
#include <mpi.h>
#include <sidecore/blocks.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "values.h"

static const char* g_out = ".";

/* Event action: leaves a marker per signal so the driver sees the binding survived. */
void api_tick(const char* name, int32_t source, int32_t iteration, const char* args) {
  (void)args;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s_it%d_src%d", g_out, name, (int)iteration, (int)source);
  FILE* f = fopen(path, "a");
  if (f) {
    fputs("ran\n", f);
    fclose(f);
  }
}

/* A dedicated core refuses every client call before (and after) running the server. */
static void server_calls(void) {
  const int srv = DAMARIS_CORE_IS_SERVER;
  const char* const why = "dedicated core";
  double field[VALUES_NX * VALUES_NY] = {0};
  void* ptr = NULL;
  int value = 0, iteration = -1;
  int64_t position[2] = {0, 0};
  MPI_Comm comm = MPI_COMM_NULL;
  EXPECT_RC(damaris_write("field", field), srv, "damaris_write", why);
  EXPECT_RC(damaris_write_block("field", 1, field), srv, "damaris_write_block", why);
  EXPECT_RC(damaris_alloc("field", &ptr), srv, "damaris_alloc", why);
  EXPECT_RC(damaris_alloc_block("field", 1, &ptr), srv, "damaris_alloc_block", why);
  EXPECT(ptr == NULL);
  EXPECT_RC(damaris_commit("field"), srv, "damaris_commit", why);
  EXPECT_RC(damaris_commit_block("field", 1), srv, "damaris_commit_block", why);
  EXPECT_RC(damaris_commit_iteration("field", 0), srv, "damaris_commit_iteration", why);
  EXPECT_RC(damaris_commit_block_iteration("field", 1, 0), srv, "damaris_commit_block_iteration",
            why);
  EXPECT_RC(damaris_clear("field"), srv, "damaris_clear", why);
  EXPECT_RC(damaris_clear_block("field", 1), srv, "damaris_clear_block", why);
  EXPECT_RC(damaris_clear_iteration("field", 0), srv, "damaris_clear_iteration", why);
  EXPECT_RC(damaris_clear_block_iteration("field", 1, 0), srv, "damaris_clear_block_iteration",
            why);
  EXPECT_RC(damaris_end_iteration(), srv, "damaris_end_iteration", why);
  EXPECT_RC(damaris_signal("tick"), srv, "damaris_signal", why);
  /* Parameters are the exception: every process has its own copy, servers included. */
  EXPECT_OK(damaris_parameter_get("NX", &value, sizeof value));
  EXPECT(value == VALUES_NX);
  EXPECT_OK(damaris_parameter_set("NX", &value, sizeof value));
  EXPECT_RC(damaris_parameter_get("nope", &value, sizeof value), DAMARIS_UNDEFINED_PARAMETER,
            "'nope'", NULL);
  EXPECT_RC(damaris_set_position("field", position), srv, "damaris_set_position", why);
  EXPECT_RC(damaris_set_block_position("field", 1, position), srv, "damaris_set_block_position",
            why);
  EXPECT_RC(damaris_client_comm_get(&comm), srv, "damaris_client_comm_get", why);
  EXPECT(comm == MPI_COMM_NULL);
  EXPECT_RC(damaris_get_iteration(&iteration), srv, "damaris_get_iteration", why);
  EXPECT(iteration == -1);
  /* As in Damaris, damaris_stop on a server answers that it is none to stop. */
  EXPECT_RC(damaris_stop(), DAMARIS_NO_SERVER, "damaris_stop", "dedicated core");
}

/* Names that do not exist, in every call that takes one. */
static void unknown_names(void) {
  double field[VALUES_NX * VALUES_NY] = {0};
  void* ptr = NULL;
  int value = 0;
  int64_t position[2] = {0, 0};
  const int var = DAMARIS_UNDEFINED_VARIABLE;
  EXPECT_RC(damaris_write("nope", field), var, "'nope'", "api.xml");
  EXPECT_RC(damaris_write_block("nope", 0, field), var, "'nope'", NULL);
  /* Groups are part of the name: a near miss is still unknown. */
  EXPECT_RC(damaris_write("Field", field), var, "'Field'", NULL);
  EXPECT_RC(damaris_write("field/", field), var, "'field/'", NULL);
  EXPECT_RC(damaris_alloc("nope", &ptr), var, "'nope'", NULL);
  EXPECT_RC(damaris_alloc_block("nope", 1, &ptr), var, "'nope'", NULL);
  EXPECT(ptr == NULL);
  EXPECT_RC(damaris_commit("nope"), var, "'nope'", NULL);
  EXPECT_RC(damaris_commit_block("nope", 1), var, "'nope'", NULL);
  EXPECT_RC(damaris_commit_iteration("nope", 0), var, "'nope'", NULL);
  EXPECT_RC(damaris_commit_block_iteration("nope", 1, 0), var, "'nope'", NULL);
  EXPECT_RC(damaris_clear("nope"), var, "'nope'", NULL);
  EXPECT_RC(damaris_clear_block("nope", 1), var, "'nope'", NULL);
  EXPECT_RC(damaris_clear_iteration("nope", 0), var, "'nope'", NULL);
  EXPECT_RC(damaris_clear_block_iteration("nope", 1, 0), var, "'nope'", NULL);
  EXPECT_RC(damaris_set_position("nope", position), var, "'nope'", NULL);
  EXPECT_RC(damaris_set_block_position("nope", 1, position), var, "'nope'", NULL);

  const int par = DAMARIS_UNDEFINED_PARAMETER;
  EXPECT_RC(damaris_parameter_get("nope", &value, sizeof value), par, "'nope'", "parameter");
  EXPECT_RC(damaris_parameter_set("nope", &value, sizeof value), par, "'nope'", "parameter");
  EXPECT_RC(damaris_parameter_get("nx", &value, sizeof value), par, "'nx'", NULL);

  const int act = DAMARIS_UNDEFINED_ACTION;
  EXPECT_RC(damaris_signal("nope"), act, "'nope'", "event");
  EXPECT_RC(damaris_signal(""), act, "''", NULL);
  EXPECT_RC(damaris_signal("Tick"), act, "'Tick'", NULL);

  /* A runaway name (16 MiB, no configured name is longer than 4096 bytes) is refused without
   * being printed whole. */
  const size_t huge = (size_t)16 << 20;
  char* runaway = malloc(huge + 1);
  if (EXPECT(runaway != NULL)) {
    memset(runaway, 'v', huge);
    runaway[huge] = '\0';
    EXPECT_RC(damaris_write(runaway, field), DAMARIS_ARGUMENT_ERROR, "longer than 4096 bytes",
              NULL);
    EXPECT(strlen(damaris_last_error_message()) < 200);
    EXPECT_RC(damaris_parameter_get(runaway, &value, sizeof value), DAMARIS_ARGUMENT_ERROR,
              "longer than 4096 bytes", NULL);
    free(runaway);
  }
}

/* Block ids are 0 or more (<domains count> is no limit: docs/blocks.md); a negative id is
 * refused by every call that names a block. */
static void blocks_out_of_range(void) {
  double field[VALUES_NX * VALUES_NY] = {0};
  void* ptr = NULL;
  int64_t position[2] = {0, 0};
  int64_t extents[2] = {2, 3};
  const int bad = DAMARIS_INVALID_BLOCK;
  EXPECT_RC(damaris_write_block("field", -1, field), bad, "block -1", "'field'");
  EXPECT_RC(damaris_write_block("counts", -1000, field), bad, "block -1000", "'counts'");
  EXPECT_RC(damaris_alloc_block("field", -5, &ptr), bad, "block -5", NULL);
  EXPECT(ptr == NULL);
  EXPECT_RC(damaris_commit_block("field", -2), bad, "block -2", NULL);
  EXPECT_RC(damaris_commit_block_iteration("field", -7, 0), bad, "block -7", NULL);
  EXPECT_RC(damaris_clear_block("field", -2), bad, "block -2", NULL);
  EXPECT_RC(damaris_clear_block_iteration("field", -1, 0), bad, "block -1", NULL);
  EXPECT_RC(damaris_set_block_position("field", -2, position), bad, "block -2", NULL);
  EXPECT_RC(sidecore_set_block_extents("field", -2, extents), bad, "block -2", NULL);
  /* Extents below 1 are refused and change nothing. */
  extents[1] = 0;
  EXPECT_RC(sidecore_set_block_extents("field", 5, extents), DAMARIS_INVALID_DIMENSIONS, "'field'",
            "extent 1 is 0");
  EXPECT_RC(sidecore_set_block_extents("nope", 5, extents), DAMARIS_UNDEFINED_VARIABLE, "'nope'",
            NULL);
  /* Blocks beyond <domains count> that were never allocated are not found. */
  EXPECT_RC(damaris_commit_block("field", 2), DAMARIS_BLOCK_NOT_FOUND, "block 2", NULL);
}

/* NULL where a pointer is required, and sizes that do not match the parameter's type. */
static void bad_arguments(void) {
  double field[VALUES_NX * VALUES_NY] = {0};
  void* ptr = NULL;
  int value = 0, current = -1;
  long long wide = 0;
  short narrow = 0;
  float single = 0;
  double real = 0;
  const int arg = DAMARIS_ARGUMENT_ERROR;
  EXPECT_RC(damaris_write("field", NULL), arg, "data", "NULL");
  EXPECT_RC(damaris_write_block("field", 1, NULL), arg, "data", "NULL");
  EXPECT_RC(damaris_write(NULL, field), arg, "varname", "NULL");
  EXPECT_RC(damaris_write_block(NULL, 0, field), arg, "varname", "NULL");
  EXPECT_RC(damaris_alloc("field", NULL), arg, "ptr", "NULL");
  EXPECT_RC(damaris_alloc_block("field", 1, NULL), arg, "ptr", "NULL");
  EXPECT_RC(damaris_alloc(NULL, &ptr), arg, "varname", "NULL");
  EXPECT(ptr == NULL);
  {
    int32_t type = 0, ndims = 0;
    int64_t extents[8];
    EXPECT_RC(sidecore_alloc_block_shaped("field", 1, &ptr, &type, NULL, extents), arg, "NULL",
              NULL);
    EXPECT_RC(sidecore_alloc_block_shaped(NULL, 1, &ptr, &type, &ndims, extents), arg, "variable",
              "NULL");
    EXPECT(ptr == NULL);
  }
  EXPECT_RC(damaris_commit(NULL), arg, "varname", "NULL");
  EXPECT_RC(damaris_commit_block_iteration(NULL, 0, 0), arg, "varname", "NULL");
  EXPECT_RC(damaris_clear(NULL), arg, "varname", "NULL");
  EXPECT_RC(damaris_clear_block_iteration(NULL, 0, 0), arg, "varname", "NULL");
  EXPECT_RC(damaris_signal(NULL), arg, "signal_name", "NULL");
  EXPECT_RC(damaris_bind(NULL, api_tick), arg, "signal_name", "NULL");
  EXPECT_RC(damaris_parameter_get(NULL, &value, sizeof value), arg, "param_name", "NULL");
  EXPECT_RC(damaris_parameter_get("NX", NULL, 4), arg, "buffer", "NULL");
  EXPECT_RC(damaris_parameter_set(NULL, &value, sizeof value), arg, "param_name", "NULL");
  EXPECT_RC(damaris_parameter_set("NX", NULL, 4), arg, "buffer", "NULL");
  EXPECT_RC(damaris_set_position("field", NULL), arg, "position", "NULL");
  EXPECT_RC(damaris_set_block_position("field", 1, NULL), arg, "position", "NULL");
  EXPECT_RC(damaris_set_position(NULL, (const int64_t*)field), arg, "var_name", "NULL");
  EXPECT_RC(damaris_client_comm_get(NULL), arg, "comm", "NULL");
  EXPECT_RC(damaris_get_iteration(NULL), arg, "iteration", "NULL");
  EXPECT_RC(damaris_start(NULL), arg, "is_client", "NULL");

  /* parameter_set: exactly the size of the type. NX is an int, scale a double. */
  EXPECT_RC(damaris_parameter_set("NX", &wide, sizeof wide), arg, "'NX'", "8 bytes");
  EXPECT_RC(damaris_parameter_set("NX", &narrow, sizeof narrow), arg, "'NX'", "2 bytes");
  EXPECT_RC(damaris_parameter_set("NX", &value, 0), arg, "'NX'", "0 bytes");
  EXPECT_RC(damaris_parameter_set("scale", &single, sizeof single), arg, "'scale'", "4 bytes");
  /* parameter_get: at least the size of the type. */
  EXPECT_RC(damaris_parameter_get("NX", &narrow, sizeof narrow), arg, "'NX'", "2 bytes");
  EXPECT_RC(damaris_parameter_get("scale", &single, sizeof single), arg, "'scale'", "4 bytes");

  /* All or nothing: D divides NX in layout "ratio" (NX/D), so 0 cannot be set. */
  int zero = 0;
  EXPECT_RC(damaris_parameter_set("D", &zero, sizeof zero), DAMARIS_CONFIG_ERROR, "NX/D",
            "api.xml");
  value = -1;
  EXPECT_OK(damaris_parameter_get("D", &value, sizeof value));
  EXPECT(value == 1);

  /* The failed calls changed nothing. */
  value = -1;
  EXPECT_OK(damaris_parameter_get("NX", &value, sizeof value));
  EXPECT(value == VALUES_NX);
  wide = -1;
  EXPECT_OK(damaris_parameter_get("NX", &wide, sizeof wide)); /* a larger buffer is fine */
  EXPECT((int)wide == VALUES_NX);
  EXPECT_OK(damaris_parameter_get("scale", &real, sizeof real));
  EXPECT(real == 1.5);
  EXPECT_OK(damaris_get_iteration(&current));
  EXPECT(current == 0);

  /* A NULL function is refused and keeps the binding made before. */
  EXPECT_RC(damaris_bind("tick", NULL), DAMARIS_BIND_ERROR, "damaris_bind", "tick");
}

/* commit and clear of blocks that were never allocated (or already cleared). */
static void blocks_never_allocated(int iteration) {
  const int nf = DAMARIS_BLOCK_NOT_FOUND;
  EXPECT_RC(damaris_commit("field"), nf, "'field'", "block 0");
  EXPECT_RC(damaris_commit_block("field", 1), nf, "'field'", "block 1");
  EXPECT_RC(damaris_commit_iteration("field", iteration + 5), nf, "'field'", NULL);
  EXPECT_RC(damaris_commit_block_iteration("counts", 1, iteration), nf, "'counts'", NULL);
  EXPECT_RC(damaris_clear("field"), nf, "'field'", "block 0");
  EXPECT_RC(damaris_clear_block("field", 1), nf, "'field'", "block 1");
  EXPECT_RC(damaris_clear_iteration("counts", iteration), nf, "'counts'", NULL);
  EXPECT_RC(damaris_clear_block_iteration("field", 1, iteration + 1), nf, "'field'", NULL);
}

/* A parameter that makes a layout dimension 0 or negative: parameter_set accepts it (another
 * parameter may fix the layout before the next write), the write is refused. */
static void invalid_dimensions(int iteration, int source) {
  int counts[VALUES_N];
  values_counts(counts, VALUES_N, iteration, source);
  int n = 0;
  EXPECT_OK(damaris_parameter_set("N", &n, sizeof n));
  EXPECT_RC(damaris_write("counts", counts), DAMARIS_INVALID_DIMENSIONS, "'counts'", "dimension");
  EXPECT_RC(damaris_write_block("counts", 1, counts), DAMARIS_INVALID_DIMENSIONS, "'counts'", NULL);
  /* The zero-copy path must refuse it as well: there is no room to hand out for no data. */
  void* ptr = NULL;
  if (!EXPECT_RC(damaris_alloc("spare", &ptr), DAMARIS_INVALID_DIMENSIONS, "'spare'", NULL) && ptr)
    EXPECT_OK(damaris_clear("spare"));
  n = -3;
  EXPECT_OK(damaris_parameter_set("N", &n, sizeof n));
  EXPECT_RC(damaris_write("counts", counts), DAMARIS_INVALID_DIMENSIONS, "'counts'", "-3");
  n = VALUES_N;
  EXPECT_OK(damaris_parameter_set("N", &n, sizeof n));
  EXPECT_OK(damaris_write("counts", counts));
}

/* Zero-copy path with its own errors in between. */
static void alloc_commit_clear(int iteration, int source) {
  double* p = NULL;
  void* again = NULL;
  EXPECT_OK(damaris_alloc("field", (void**)&p));
  if (!EXPECT(p != NULL)) return;
  EXPECT_RC(damaris_alloc("field", &again), DAMARIS_ALLOCATION_ERROR, "'field'",
            "already written or allocated");
  values_field(p, iteration, source, 0);
  EXPECT_RC(damaris_clear_iteration("field", iteration - 1), DAMARIS_BLOCK_NOT_FOUND, "'field'",
            NULL);
  EXPECT_OK(damaris_commit("field"));
  EXPECT_OK(damaris_commit("field")); /* committing twice is harmless */
  EXPECT_OK(damaris_clear("field"));
  EXPECT_RC(damaris_clear("field"), DAMARIS_BLOCK_NOT_FOUND, "'field'", NULL);
  EXPECT_RC(damaris_commit("field"), DAMARIS_BLOCK_NOT_FOUND, "'field'", NULL);
  /* Cleared, but handed over: it cannot be allocated again in this iteration. */
  EXPECT_RC(damaris_alloc("field", &again), DAMARIS_ALLOCATION_ERROR, "'field'",
            "already written or allocated");

  p = NULL;
  EXPECT_OK(damaris_alloc_block("field", 1, (void**)&p));
  if (!EXPECT(p != NULL)) return;
  values_field(p, iteration, source, 1);
  EXPECT_OK(damaris_commit_block_iteration("field", 1, iteration));
  EXPECT_OK(damaris_clear_block_iteration("field", 1, iteration));
}

static void write_fields(int iteration, int source) {
  double field[VALUES_NX * VALUES_NY];
  void* ptr = NULL;
  for (int b = 0; b < 2; ++b) {
    values_field(field, iteration, source, b);
    EXPECT_OK(damaris_write_block("field", b, field));
    /* The copy is made: the caller's buffer is free at once. */
    memset(field, 0xff, sizeof field);
  }
  /* A block is handed over once per iteration, whichever call tries again; the stored values
   * stay those of the first write (run_c_test.py checks them). */
  EXPECT_RC(damaris_write_block("field", 0, field), DAMARIS_ALLOCATION_ERROR, "'field'",
            "already written or allocated");
  EXPECT_RC(damaris_alloc_block("field", 1, &ptr), DAMARIS_ALLOCATION_ERROR, "'field'",
            "already written or allocated");
  EXPECT(ptr == NULL);
}

/* Blocks that could never be stored fail at once, in every mode, and nothing of them is
 * stored: one larger than the whole buffer (1 MiB buffer, 2 MB block), one placed outside its
 * variable's global extents. */
static void blocks_that_cannot_be_stored(void) {
  double tile[VALUES_NX * VALUES_NY] = {0};
  int64_t inside[2] = {0, VALUES_NX}, outside[2] = {0, VALUES_NX + 1}, negative[2] = {-1, 0};
  EXPECT_OK(damaris_set_position("tile", outside));
  EXPECT_RC(damaris_write("tile", tile), DAMARIS_INVALID_DIMENSIONS, "'tile'",
            "global extents (3,8)");
  EXPECT_OK(damaris_set_position("tile", negative));
  EXPECT_RC(damaris_write("tile", tile), DAMARIS_INVALID_DIMENSIONS, "position (-1,0)", NULL);
  EXPECT_OK(damaris_set_position("tile", inside)); /* fits, but is not written */

  const size_t bytes = (size_t)VALUES_N * 100000 * sizeof(int);
  int* huge = calloc(1, bytes);
  void* ptr = NULL;
  if (!EXPECT(huge != NULL)) return;
  EXPECT_RC(damaris_write("huge", huge), DAMARIS_ALLOCATION_ERROR, "'huge'", "can never fit");
  EXPECT_RC(damaris_alloc("huge", &ptr), DAMARIS_ALLOCATION_ERROR, "'huge'", "can never fit");
  EXPECT(ptr == NULL);
  free(huge);
}

static void client_run(int source, int iterations) {
  int iteration = -1;
  /* Iteration 0: every error before any data, then the writes, then errors in between. */
  unknown_names();
  blocks_out_of_range();
  bad_arguments();
  blocks_never_allocated(0);
  write_fields(0, source);
  unknown_names();
  blocks_out_of_range();
  invalid_dimensions(0, source);
  blocks_that_cannot_be_stored();
  EXPECT_OK(damaris_signal("tick"));
  EXPECT_OK(damaris_end_iteration());
  EXPECT_OK(damaris_get_iteration(&iteration));
  EXPECT(iteration == 1);

  /* Iteration 1: zero copy, with errors in the middle of it. */
  alloc_commit_clear(1, source);
  blocks_never_allocated(1);
  invalid_dimensions(1, source);
  EXPECT_OK(damaris_signal("tick"));
  EXPECT_OK(damaris_end_iteration());

  /* Further iterations: plain writes after all of that. */
  for (int it = 2; it < iterations; ++it) {
    int counts[VALUES_N];
    write_fields(it, source);
    values_counts(counts, VALUES_N, it, source);
    EXPECT_OK(damaris_write("counts", counts));
    EXPECT_RC(damaris_write("nope", counts), DAMARIS_UNDEFINED_VARIABLE, "'nope'", NULL);
    /* A typo: the nearest declared name is offered. */
    EXPECT_RC(damaris_write("cuonts", counts), DAMARIS_UNDEFINED_VARIABLE, "no variable 'cuonts'",
              "did you mean 'counts'?");
    EXPECT_OK(damaris_signal("tick"));
    EXPECT_OK(damaris_end_iteration());
  }
  EXPECT_OK(damaris_get_iteration(&iteration));
  EXPECT(iteration == iterations);
  EXPECT_STARTED(damaris_stop());
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 4) {
    fprintf(stderr, "usage: api_errors <xml> <dedicated cores> <output dir>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int cores = atoi(argv[2]);
  g_out = argv[3];
  const int iterations = 4;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* One node: the dedicated cores are its last ranks. */
  const int server_expected = rank >= size - cores;

  EXPECT_OK(damaris_bind("tick", api_tick));
  if (!EXPECT_OK(damaris_initialize(argv[1], MPI_COMM_WORLD))) MPI_Abort(MPI_COMM_WORLD, 2);

  MPI_Comm comm = MPI_COMM_NULL;
  int rc = damaris_client_comm_get(&comm);
  EXPECT(rc == (server_expected ? DAMARIS_CORE_IS_SERVER : DAMARIS_OK));
  if (server_expected) server_calls();

  int is_client = -1;
  EXPECT_STARTED(damaris_start(&is_client));
  EXPECT(is_client == !server_expected);
  if (is_client == 1) {
    int source = -1;
    EXPECT_OK(damaris_client_comm_get(&comm));
    MPI_Comm_rank(comm, &source);
    client_run(source, iterations);
  } else {
    /* The server has run; it is still a server. */
    server_calls();
  }
  EXPECT_OK(damaris_finalize());
  int status = check_finish("api_errors");
  MPI_Finalize();
  return status;
}
