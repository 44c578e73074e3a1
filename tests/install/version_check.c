/* The header and the library agree: SIDECORE_VERSION_MATCHES(), the version strings, and each
 * HAVE_*_ENABLED macro defined exactly when damaris_has_plugin() answers 1. Built in the tree
 * and against an installed prefix (run_damaris_package_test.sh), as C99.
 * Exit status 0 when everything agrees; 1 with a message naming what disagrees. */
#include <Damaris.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "version_check: %s\n", what);
    ++failures;
  }
}

int main(void) {
  char dotted[64];
  if (!SIDECORE_VERSION_MATCHES())
    fprintf(stderr, "version_check: header %d (Damaris API %d), library %u (Damaris API %u)\n",
            SIDECORE_VERSION_NUMBER, SIDECORE_DAMARIS_API_VERSION_NUMBER, sidecore_version_number(),
            sidecore_damaris_api_version_number());
  expect(SIDECORE_VERSION_MATCHES(), "SIDECORE_VERSION_MATCHES() is false");
  expect(strcmp(sidecore_version(), SIDECORE_VERSION_STRING) == 0,
         "sidecore_version() differs from SIDECORE_VERSION_STRING");
  snprintf(dotted, sizeof dotted, "%d.%d.%d", SIDECORE_VERSION_MAJOR, SIDECORE_VERSION_MINOR,
           SIDECORE_VERSION_PATCH);
  expect(strcmp(dotted, SIDECORE_VERSION_STRING) == 0,
         "SIDECORE_VERSION_STRING differs from MAJOR.MINOR.PATCH");
  snprintf(dotted, sizeof dotted, "%d.%d.%d", DAMARIS_VERSION_MAJOR, DAMARIS_VERSION_MINOR,
           DAMARIS_VERSION_PATCH);
  expect(strcmp(dotted, DAMARIS_VERSION) == 0, "DAMARIS_VERSION differs from MAJOR.MINOR.PATCH");
  /* OPM Flow asks for Damaris 1.9 or newer. */
  expect(DAMARIS_VERSION_MAJOR == 1 && DAMARIS_VERSION_MINOR >= 9, "DAMARIS_VERSION below 1.9");

#ifdef HAVE_HDF5_ENABLED
  expect(damaris_has_plugin(DAMARIS_PLUGIN_HDF5) == 1, "HAVE_HDF5_ENABLED but no HDF5 plugin");
#if !HAVE_HDF5_ENABLED
  expect(0, "HAVE_HDF5_ENABLED is defined but #if HAVE_HDF5_ENABLED is false");
#endif
#else
  expect(damaris_has_plugin(DAMARIS_PLUGIN_HDF5) == 0, "HDF5 plugin without HAVE_HDF5_ENABLED");
#endif
#ifdef HAVE_PYTHON_ENABLED
  expect(damaris_has_plugin(DAMARIS_PLUGIN_PYTHON) == 1,
         "HAVE_PYTHON_ENABLED but damaris_has_plugin(DAMARIS_PLUGIN_PYTHON) is 0");
#else
  expect(damaris_has_plugin(DAMARIS_PLUGIN_PYTHON) == 0,
         "damaris_has_plugin(DAMARIS_PLUGIN_PYTHON) is 1 but HAVE_PYTHON_ENABLED is not defined");
#endif
#ifdef HAVE_PARAVIEW_ENABLED
  expect(damaris_has_plugin(DAMARIS_PLUGIN_PARAVIEW) == 1, "HAVE_PARAVIEW_ENABLED but no plugin");
#else
  expect(damaris_has_plugin(DAMARIS_PLUGIN_PARAVIEW) == 0, "ParaView plugin without the macro");
#endif
#ifdef HAVE_VISIT_ENABLED
  expect(damaris_has_plugin(DAMARIS_PLUGIN_VISIT) == 1, "HAVE_VISIT_ENABLED but no plugin");
#else
  expect(damaris_has_plugin(DAMARIS_PLUGIN_VISIT) == 0, "VisIt plugin without the macro");
#endif
  if (failures == 0) {
#ifdef HAVE_PYTHON_ENABLED
    const char* python = "with Python scripts";
#else
    const char* python = "without Python scripts";
#endif
    printf("version_check: Sidecore %s, Damaris API %s, %s: header and library agree\n",
           sidecore_version(), DAMARIS_VERSION, python);
  }
  return failures == 0 ? 0 : 1;
}
