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
  if (strcmp(sidecore_version(), SIDECORE_VERSION_STRING) != 0) {
    fprintf(stderr, "sidecore_version() = %s, header says %s\n", sidecore_version(),
            SIDECORE_VERSION_STRING);
    return 1;
  }
  printf("Damaris.h compiles as C99; %s, Sidecore %s\n", text, sidecore_version());
  return 0;
}
