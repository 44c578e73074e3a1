/* Lifecycle of the C API: every call made before damaris_initialize() and after
 * damaris_finalize(), initialize / start / finalize called twice, the error names, and the
 * error code values, which Damaris programs compile in and therefore may never change.
 * Usage: api_lifecycle <xml> */
#include <Damaris.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "values.h"

_Static_assert(DAMARIS_OK == 0, "DAMARIS_OK");
_Static_assert(DAMARIS_INIT_ERROR == 1, "DAMARIS_INIT_ERROR");
_Static_assert(DAMARIS_FINALIZE_ERROR == 2, "DAMARIS_FINALIZE_ERROR");
_Static_assert(DAMARIS_CORE_IS_SERVER == 3, "DAMARIS_CORE_IS_SERVER");
_Static_assert(DAMARIS_NO_SERVER == 4, "DAMARIS_NO_SERVER");
_Static_assert(DAMARIS_ALLOCATION_ERROR == 5, "DAMARIS_ALLOCATION_ERROR");
_Static_assert(DAMARIS_CONFIG_ERROR == 6, "DAMARIS_CONFIG_ERROR");
_Static_assert(DAMARIS_ARGUMENT_ERROR == 7, "DAMARIS_ARGUMENT_ERROR");
_Static_assert(DAMARIS_MPI_ERROR == 8, "DAMARIS_MPI_ERROR");
_Static_assert(DAMARIS_DATASPACE_ERROR == 9, "DAMARIS_DATASPACE_ERROR");
_Static_assert(DAMARIS_CHANNEL_ERROR == 10, "DAMARIS_CHANNEL_ERROR");
_Static_assert(DAMARIS_INVALID_TAG == 11, "DAMARIS_INVALID_TAG");
_Static_assert(DAMARIS_NOT_INITIALIZED == 12, "DAMARIS_NOT_INITIALIZED");
_Static_assert(DAMARIS_ALREADY_INITIALIZED == 13, "DAMARIS_ALREADY_INITIALIZED");
_Static_assert(DAMARIS_UNDEFINED_ACTION == 14, "DAMARIS_UNDEFINED_ACTION");
_Static_assert(DAMARIS_UNDEFINED_PARAMETER == 15, "DAMARIS_UNDEFINED_PARAMETER");
_Static_assert(DAMARIS_UNDEFINED_VARIABLE == 16, "DAMARIS_UNDEFINED_VARIABLE");
_Static_assert(DAMARIS_INVALID_BLOCK == 17, "DAMARIS_INVALID_BLOCK");
_Static_assert(DAMARIS_INVALID_DIMENSIONS == 18, "DAMARIS_INVALID_DIMENSIONS");
_Static_assert(DAMARIS_BLOCK_NOT_FOUND == 19, "DAMARIS_BLOCK_NOT_FOUND");
_Static_assert(DAMARIS_REACTOR_NOT_FOUND == 20, "DAMARIS_REACTOR_NOT_FOUND");
_Static_assert(DAMARIS_BIND_ERROR == 21, "DAMARIS_BIND_ERROR");
_Static_assert(DAMARIS_ERROR_UNKNOWN == 22, "DAMARIS_ERROR_UNKNOWN");

/* Indexed by code. */
static const char* const code_names[] = {"DAMARIS_OK",
                                         "DAMARIS_INIT_ERROR",
                                         "DAMARIS_FINALIZE_ERROR",
                                         "DAMARIS_CORE_IS_SERVER",
                                         "DAMARIS_NO_SERVER",
                                         "DAMARIS_ALLOCATION_ERROR",
                                         "DAMARIS_CONFIG_ERROR",
                                         "DAMARIS_ARGUMENT_ERROR",
                                         "DAMARIS_MPI_ERROR",
                                         "DAMARIS_DATASPACE_ERROR",
                                         "DAMARIS_CHANNEL_ERROR",
                                         "DAMARIS_INVALID_TAG",
                                         "DAMARIS_NOT_INITIALIZED",
                                         "DAMARIS_ALREADY_INITIALIZED",
                                         "DAMARIS_UNDEFINED_ACTION",
                                         "DAMARIS_UNDEFINED_PARAMETER",
                                         "DAMARIS_UNDEFINED_VARIABLE",
                                         "DAMARIS_INVALID_BLOCK",
                                         "DAMARIS_INVALID_DIMENSIONS",
                                         "DAMARIS_BLOCK_NOT_FOUND",
                                         "DAMARIS_REACTOR_NOT_FOUND",
                                         "DAMARIS_BIND_ERROR",
                                         "DAMARIS_ERROR_UNKNOWN"};

void api_tick(const char* name, int32_t source, int32_t iteration, const char* args) {
  (void)name;
  (void)source;
  (void)iteration;
  (void)args;
}

static void check_error_strings(void) {
  const int count = (int)(sizeof code_names / sizeof code_names[0]);
  EXPECT(count == DAMARIS_ERROR_UNKNOWN + 1);
  for (int code = 0; code < count; ++code) {
    const char* text = damaris_error_string(code);
    const size_t length = strlen(code_names[code]);
    /* The name must be followed by the end or a separator, so that DAMARIS_OK does not pass
     * for a longer name. */
    int named = text && strncmp(text, code_names[code], length) == 0 &&
                (text[length] == '\0' || text[length] == ':');
    if (!EXPECT(named))
      fprintf(stderr, "    damaris_error_string(%d) = \"%s\", expected it to start with %s\n", code,
              text ? text : "(NULL)", code_names[code]);
  }
  EXPECT(damaris_error_string(-1) != NULL);
  EXPECT(damaris_error_string(DAMARIS_ERROR_UNKNOWN + 1) != NULL);
  EXPECT(damaris_error_string(1 << 30) != NULL);
}

/* Every call that needs a runtime, with valid arguments: before damaris_initialize() and after
 * damaris_finalize() there is none, and each must say so without touching anything. */
static void check_calls_without_runtime(const char* phase) {
  fprintf(stderr, "[rank %d] calls %s\n", check_rank, phase);
  const char* const why = "before damaris_initialize";
  double field[VALUES_NX * VALUES_NY] = {0};
  void* ptr = NULL;
  int value = 0, is_client = -1, iteration = -1;
  int64_t position[2] = {0, 0};
  MPI_Comm comm = MPI_COMM_NULL;
  const int no = DAMARIS_NOT_INITIALIZED;
  EXPECT_RC(damaris_finalize(), no, "damaris_finalize", why);
  EXPECT_RC(damaris_start(&is_client), no, "damaris_start", why);
  EXPECT(is_client == -1);
  EXPECT_RC(damaris_stop(), no, "damaris_stop", why);
  EXPECT_RC(damaris_write("field", field), no, "damaris_write", why);
  EXPECT_RC(damaris_write_block("field", 1, field), no, "damaris_write_block", why);
  EXPECT_RC(damaris_alloc("field", &ptr), no, "damaris_alloc", why);
  EXPECT_RC(damaris_alloc_block("field", 1, &ptr), no, "damaris_alloc_block", why);
  EXPECT(ptr == NULL);
  EXPECT_RC(damaris_commit("field"), no, "damaris_commit", why);
  EXPECT_RC(damaris_commit_block("field", 1), no, "damaris_commit_block", why);
  EXPECT_RC(damaris_commit_iteration("field", 0), no, "damaris_commit_iteration", why);
  EXPECT_RC(damaris_commit_block_iteration("field", 1, 0), no, "damaris_commit_block_iteration",
            why);
  EXPECT_RC(damaris_clear("field"), no, "damaris_clear", why);
  EXPECT_RC(damaris_clear_block("field", 1), no, "damaris_clear_block", why);
  EXPECT_RC(damaris_clear_iteration("field", 0), no, "damaris_clear_iteration", why);
  EXPECT_RC(damaris_clear_block_iteration("field", 1, 0), no, "damaris_clear_block_iteration", why);
  EXPECT_RC(damaris_signal("tick"), no, "damaris_signal", why);
  EXPECT_RC(damaris_parameter_get("NX", &value, sizeof value), no, "damaris_parameter_get", why);
  EXPECT_RC(damaris_parameter_set("NX", &value, sizeof value), no, "damaris_parameter_set", why);
  EXPECT_RC(damaris_set_position("field", position), no, "damaris_set_position", why);
  EXPECT_RC(damaris_set_block_position("field", 1, position), no, "damaris_set_block_position",
            why);
  EXPECT_RC(damaris_client_comm_get(&comm), no, "damaris_client_comm_get", why);
  EXPECT(comm == MPI_COMM_NULL);
  EXPECT_RC(damaris_end_iteration(), no, "damaris_end_iteration", why);
  EXPECT_RC(damaris_get_iteration(&iteration), no, "damaris_get_iteration", why);
  EXPECT(iteration == -1);

  /* The header promises NOT_INITIALIZED for any call without a runtime, whatever the
   * arguments: a program that forgot damaris_initialize must be told that first. */
  EXPECT_RC(damaris_write(NULL, NULL), no, "damaris_write", why);
  EXPECT_RC(damaris_alloc(NULL, NULL), no, "damaris_alloc", why);
  EXPECT_RC(damaris_alloc_block("field", 0, NULL), no, "damaris_alloc_block", why);
  EXPECT_RC(damaris_start(NULL), no, "damaris_start", why);
  EXPECT_RC(damaris_client_comm_get(NULL), no, "damaris_client_comm_get", why);
  EXPECT_RC(damaris_get_iteration(NULL), no, "damaris_get_iteration", why);
  EXPECT_RC(damaris_parameter_get("NX", NULL, 4), no, "damaris_parameter_get", why);
  EXPECT_RC(damaris_set_position("field", NULL), no, "damaris_set_position", why);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 3) {
    fprintf(stderr, "usage: api_lifecycle <xml> <dedicated cores: 0|1>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const char* xml = argv[1];
  /* As in Damaris: without dedicated resources damaris_start and damaris_stop do their work and
   * return DAMARIS_NO_SERVER (every process is a client); damaris_stop on a server returns it too.
   */
  const int dedicated = atoi(argv[2]) != 0;
  const int started = dedicated ? DAMARIS_OK : DAMARIS_NO_SERVER;

  EXPECT(damaris_last_error_message() != NULL && damaris_last_error_message()[0] == '\0');
  EXPECT(strcmp(sidecore_version(), SIDECORE_VERSION_STRING) == 0);
  /* OPM Flow asks for the Damaris 1.9 API (sidecore/version.h). */
  EXPECT(DAMARIS_VERSION_MAJOR == 1 && DAMARIS_VERSION_MINOR == 9);
  check_error_strings();
  check_calls_without_runtime("before damaris_initialize");

  /* Binding needs no runtime: a program binds its actions before it initializes. */
  EXPECT_OK(damaris_bind("tick", api_tick));

  /* A NULL file is refused locally, before any collective, and leaves nothing behind. */
  EXPECT_RC(damaris_initialize(NULL, MPI_COMM_WORLD), DAMARIS_ARGUMENT_ERROR, "damaris_initialize",
            "configfile");
  EXPECT_RC(damaris_write("field", NULL), DAMARIS_NOT_INITIALIZED, "damaris_write", NULL);
  /* So is a null communicator (MPI would end the job on it). */
  EXPECT_RC(damaris_initialize(xml, MPI_COMM_NULL), DAMARIS_ARGUMENT_ERROR, "damaris_initialize",
            "MPI_COMM_NULL");

  if (!EXPECT_OK(damaris_initialize(xml, MPI_COMM_WORLD))) {
    int status = check_finish("api_lifecycle");
    MPI_Finalize();
    return status;
  }
  EXPECT_RC(damaris_initialize(xml, MPI_COMM_WORLD), DAMARIS_ALREADY_INITIALIZED,
            "damaris_initialize", "already initialized");
  /* Even with another (missing) file: the runtime is there, the file is not even read. */
  EXPECT_RC(damaris_initialize("/nonexistent/other.xml", MPI_COMM_WORLD),
            DAMARIS_ALREADY_INITIALIZED, "damaris_initialize", "already initialized");

  EXPECT_RC(damaris_start(NULL), DAMARIS_ARGUMENT_ERROR, "damaris_start", "is_client");
  int is_client = -1;
  EXPECT_RC(damaris_start(&is_client), started, "damaris_start", "every process is a client");
  EXPECT(is_client == 0 || is_client == 1);
  if (!dedicated) EXPECT(is_client == 1);
  if (is_client == 0) {
    EXPECT_RC(damaris_stop(), DAMARIS_NO_SERVER, "damaris_stop", "dedicated core");
  }
  if (is_client == 1) {
    int again = -1;
    EXPECT_RC(damaris_start(&again), DAMARIS_ALREADY_INITIALIZED, "damaris_start",
              "before damaris_stop");
    MPI_Comm comm;
    int source = -1, iteration = -1;
    EXPECT_OK(damaris_client_comm_get(&comm));
    MPI_Comm_rank(comm, &source);
    EXPECT_OK(damaris_get_iteration(&iteration));
    EXPECT(iteration == 0);
    double field[VALUES_NX * VALUES_NY];
    for (int b = 0; b < 2; ++b) {
      values_field(field, 0, source, b);
      EXPECT_OK(damaris_write_block("field", b, field));
    }
    EXPECT_OK(damaris_signal("tick"));
    EXPECT_OK(damaris_end_iteration());
    EXPECT_OK(damaris_get_iteration(&iteration));
    EXPECT(iteration == 1);
    EXPECT_RC(damaris_stop(), started, "damaris_stop", "every process is a client");
    EXPECT_RC(damaris_stop(), started, "damaris_stop", "every process is a client"); /* harmless */
  }
  EXPECT_OK(damaris_finalize());
  EXPECT_RC(damaris_finalize(), DAMARIS_NOT_INITIALIZED, "damaris_finalize",
            "before damaris_initialize");
  check_calls_without_runtime("after damaris_finalize");

  /* A finalized job may initialize again (and store nothing this time). */
  if (EXPECT_OK(damaris_initialize(xml, MPI_COMM_WORLD))) {
    is_client = -1;
    EXPECT_RC(damaris_start(&is_client), started, "damaris_start", "every process is a client");
    if (is_client == 1) EXPECT_RC(damaris_stop(), started, "damaris_stop", "every process");
    EXPECT_OK(damaris_finalize());
  }
  EXPECT_RC(damaris_stop(), DAMARIS_NOT_INITIALIZED, "damaris_stop", NULL);

  int status = check_finish("api_lifecycle");
  MPI_Finalize();
  return status;
}
