/* A shared library that is not a store plugin: it exports no sidecore_store_plugin(). */
__attribute__((visibility("default"))) int sidecore_test_something_else(void);
int sidecore_test_something_else(void) { return 42; }
