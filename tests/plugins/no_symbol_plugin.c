/* A shared library that is not a store plugin: it exports no sidecore_store_plugin(). Its
 * constructor leaves a mark in the environment, so that a test can tell whether it was loaded. */
#define _POSIX_C_SOURCE 200112L
#include <stdlib.h>

__attribute__((visibility("default"))) int sidecore_test_something_else(void);
int sidecore_test_something_else(void) { return 42; }

__attribute__((constructor)) static void mark_loaded(void) {
  setenv("SIDECORE_TEST_NO_SYMBOL_PLUGIN_LOADED", "1", 1);
}
