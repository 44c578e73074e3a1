/* Preloaded into every process of the AddressSanitizer test run (CMakePresets.json, preset
 * asan-ubsan; docs/testing.md): dlclose() keeps the library loaded. Open MPI and PMIx unload
 * their components at MPI_Finalize, before LeakSanitizer looks at the memory they kept; the
 * frames of those allocations then belong to no module, and the suppressions of
 * tests/sanitizers/lsan.supp, which name the MPI libraries, cannot match them. With every
 * library still mapped, the cheap frame-pointer unwinder is enough to name the module that
 * allocated, where a full unwinder at every malloc made the run several times slower. This
 * Open MPI (4.1) has no parameter to keep its components loaded. */
int dlclose(void* handle);

int dlclose(void* handle) {
  (void)handle;
  return 0;
}
