/* Damaris.h is valid C99 (compiled with -std=c99 -pedantic): Damaris programs predating C11
 * include it unchanged. Also pins the error values without _Static_assert. */
#include <Damaris.h>
#include <stdio.h>
#include <string.h>

/* A negative array size stops the build when a value moves. */
#define PIN(name, value) typedef char pin_##name[(name) == (value) ? 1 : -1]
PIN(DAMARIS_OK, 0);
PIN(DAMARIS_CORE_IS_SERVER, 3);
PIN(DAMARIS_ALLOCATION_ERROR, 5);
PIN(DAMARIS_CONFIG_ERROR, 6);
PIN(DAMARIS_ARGUMENT_ERROR, 7);
PIN(DAMARIS_NOT_INITIALIZED, 12);
PIN(DAMARIS_BIND_ERROR, 21);
PIN(DAMARIS_ERROR_UNKNOWN, 22);
/* Every other code, in Damaris's order (no Damaris release has added one). */
PIN(DAMARIS_INIT_ERROR, 1);
PIN(DAMARIS_FINALIZE_ERROR, 2);
PIN(DAMARIS_NO_SERVER, 4);
PIN(DAMARIS_MPI_ERROR, 8);
PIN(DAMARIS_DATASPACE_ERROR, 9);
PIN(DAMARIS_CHANNEL_ERROR, 10);
PIN(DAMARIS_INVALID_TAG, 11);
PIN(DAMARIS_ALREADY_INITIALIZED, 13);
PIN(DAMARIS_UNDEFINED_ACTION, 14);
PIN(DAMARIS_UNDEFINED_PARAMETER, 15);
PIN(DAMARIS_UNDEFINED_VARIABLE, 16);
PIN(DAMARIS_INVALID_BLOCK, 17);
PIN(DAMARIS_INVALID_DIMENSIONS, 18);
PIN(DAMARIS_BLOCK_NOT_FOUND, 19);
PIN(DAMARIS_REACTOR_NOT_FOUND, 20);

/* The Damaris 1.9 enums. No public Damaris source pins their values, so these are Sidecore's
 * own; pinned all the same, since programs built against one Sidecore release must keep
 * working with the next. */
PIN(DAMARIS_TYPE_UNDEFINED, 0);
PIN(DAMARIS_TYPE_SHORT, 1);
PIN(DAMARIS_TYPE_INT, 2);
PIN(DAMARIS_TYPE_LONG, 3);
PIN(DAMARIS_TYPE_FLOAT, 4);
PIN(DAMARIS_TYPE_DOUBLE, 5);
PIN(DAMARIS_TYPE_CHAR, 6);
PIN(DAMARIS_TYPE_USHORT, 7);
PIN(DAMARIS_TYPE_UINT, 8);
PIN(DAMARIS_TYPE_ULONG, 9);
PIN(DAMARIS_TYPE_UCHAR, 10);
PIN(DAMARIS_TYPE_STRING, 11);
PIN(DAMARIS_TYPE_LABEL, 12);
PIN(DAMARIS_PLUGIN_HDF5, 1);
PIN(DAMARIS_PLUGIN_PYTHON, 2);
PIN(DAMARIS_PLUGIN_PARAVIEW, 3);
PIN(DAMARIS_PLUGIN_VISIT, 4);

/* The Damaris 1.9 calls OPM Flow and PDI's Damaris plugin make, with their exact types: a
 * changed parameter or return type fails this initialization under -Werror. */
static int (*const get_type_entry)(const char*, DAMARIS_TYPE_STR*) = damaris_get_type;
static int (*const has_plugin_entry)(DAMARIS_PLUGIN_TYPE) = damaris_has_plugin;
static const char* (*const error_string_entry)(int) = damaris_error_string;

/* The signal_t type accepts a plain C function. */
static void action(const char* name, int32_t source, int32_t iteration, const char* args) {
  (void)name;
  (void)source;
  (void)iteration;
  (void)args;
}

int main(void) {
  signal_t f = action;
  (void)f;
  /* No MPI_Init: these calls need no runtime. */
  const char* text = damaris_error_string(DAMARIS_CONFIG_ERROR);
  if (!text || strncmp(text, "DAMARIS_CONFIG_ERROR", 20) != 0) {
    fprintf(stderr, "damaris_error_string(DAMARIS_CONFIG_ERROR) = %s\n", text ? text : "(NULL)");
    return 1;
  }
  /* Any int has a name, including codes no release defines. */
  if (error_string_entry(-1) == NULL || error_string_entry(1000) == NULL) {
    fprintf(stderr, "damaris_error_string() returned NULL for an unknown code\n");
    return 1;
  }
  /* Needs no runtime either: HDF5 is always there, VisIt never. */
  if (has_plugin_entry(DAMARIS_PLUGIN_HDF5) != 1 || has_plugin_entry(DAMARIS_PLUGIN_VISIT) != 0 ||
      has_plugin_entry((DAMARIS_PLUGIN_TYPE)77) != 0) {
    fprintf(stderr, "damaris_has_plugin(): HDF5 %d, VisIt %d, 77 %d (expected 1, 0, 0)\n",
            has_plugin_entry(DAMARIS_PLUGIN_HDF5), has_plugin_entry(DAMARIS_PLUGIN_VISIT),
            has_plugin_entry((DAMARIS_PLUGIN_TYPE)77));
    return 1;
  }
  {
    /* Before damaris_initialize(): refused with its code. */
    DAMARIS_TYPE_STR type = DAMARIS_TYPE_DOUBLE;
    const int code = get_type_entry("v", &type);
    if (code != DAMARIS_NOT_INITIALIZED) {
      fprintf(stderr, "damaris_get_type() before initialize returned %d\n", code);
      return 1;
    }
  }
  if (strcmp(sidecore_version(), SIDECORE_VERSION_STRING) != 0) {
    fprintf(stderr, "sidecore_version() = %s, header says %s\n", sidecore_version(),
            SIDECORE_VERSION_STRING);
    return 1;
  }
  printf("Damaris.h compiles as C99; %s, Sidecore %s\n", text, sidecore_version());
  return 0;
}
