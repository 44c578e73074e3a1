/* A program written the way Damaris programs are: rank 0 writes the XML file just before
 * damaris_initialize (the other ranks never see it), layouts named after basic types, a group
 * named with a path, Damaris's own XML slips (ghost= for ghosts=, an unknown attribute), start,
 * stop and start again, write, alloc/commit/clear, an event, DAMARIS_NO_SERVER without
 * dedicated resources, damaris_get_type and damaris_has_plugin. run_compat.py reads the files
 * back and compares them, path by path and value by value, with Damaris's naming rules.
 *
 * Usage: damaris_style <out dir> <cores|nodes|thread|sync> <domains> <FilePerCore|Collective>
 */
#include <Damaris.h>
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

enum { NX = 4, NY = 3, ITERATIONS = 3 };

static const char* g_out = ".";

/* Event action, found by name in the executable: leaves a mark per client and iteration. */
void compat_mark(const char* name, int32_t source, int32_t iteration, const char* args) {
  (void)name;
  (void)args;
  char path[4096];
  snprintf(path, sizeof path, "%s/mark_it%d_src%d", g_out, (int)iteration, (int)source);
  FILE* f = fopen(path, "a");
  if (f) {
    fputs("ran\n", f);
    fclose(f);
  }
}

static double cell_value(int iteration, int source, int block, int domains, int y, int x) {
  return iteration * 100000.0 + (source * domains + block) * 1000.0 + y * NX + x;
}

/* The configuration, as a Damaris user writes it (with the slips Damaris's own files have). */
static void write_configuration(const char* path, const char* mode, int domains, int clients,
                                const char* file_mode) {
  const char* dedicated = "cores=\"0\" nodes=\"0\"";
  if (strcmp(mode, "cores") == 0) dedicated = "cores=\"1\" nodes=\"0\"";
  if (strcmp(mode, "nodes") == 0) dedicated = "cores=\"0\" nodes=\"1\"";
  if (strcmp(mode, "thread") == 0) dedicated = "cores=\"0\" nodes=\"0\" threads=\"1\"";
  FILE* f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  fprintf(f,
          "<?xml version=\"1.0\"?>\n"
          "<simulation name=\"compat\" language=\"c\" "
          "xmlns=\"http://damaris.gforge.inria.fr/damaris/model\">\n"
          "  <architecture>\n"
          "    <domains count=\"%d\"/>\n"
          "    <dedicated %s/>\n"
          "    <buffer name=\"buffer\" size=\"16777216\"/>\n"
          "    <placement />\n"
          "    <queue name=\"queue\" size=\"100\"/>\n"
          "  </architecture>\n"
          "  <data>\n"
          "    <parameter name=\"NX\" type=\"int\" value=\"%d\"/>\n"
          "    <parameter name=\"NY\" type=\"int\" value=\"%d\"/>\n"
          "    <parameter name=\"BLOCKS\" type=\"int\" value=\"%d\"/>\n"
          "    <layout name=\"cells\" type=\"double\" dimensions=\"NY,NX\" "
          "global=\"NY,NX*BLOCKS\" ghost=\"1:1\"/>\n"
          "    <group name=\"fluid/cells\">\n"
          "      <variable name=\"p\" layout=\"cells\" store=\"h5\" unit=\"Pa\" colour=\"red\"/>\n"
          "    </group>\n"
          "    <variable name=\"step\" layout=\"int\" store=\"h5\"/>\n"
          "    <variable name=\"dt\" layout=\"double\" store=\"h5\" mesh=\"mesh\"/>\n"
          "    <group name=\"umesh_vars\">\n"
          "      <variable name=\"xyz\" layout=\"double\"/>\n"
          "      <variable name=\"gid\" layout=\"long\"/>\n"
          "      <mesh name=\"fluid_mesh\" type=\"unstructured\" topology=\"3\">\n"
          "        <coord name=\"umesh_vars/xyz\" unit=\"m\"/>\n"
          "        <vertex_global_id name=\"gid\" offset=\"-1\"/>\n"
          "        <section_connectivity name=\"step\"/>\n"
          "      </mesh>\n"
          "    </group>\n"
          "  </data>\n"
          "  <storage>\n"
          "    <store name=\"h5\" type=\"HDF5\">\n"
          "      <option key=\"FileMode\">%s</option>\n"
          "      <option key=\"FilesPath\">%s/</option>\n"
          "    </store>\n"
          "  </storage>\n"
          "  <actions>\n"
          "    <event name=\"mark\" action=\"compat_mark\" scope=\"core\"/>\n"
          "  </actions>\n"
          "  <log FileName=\"%s/log/compat\" RotationSize=\"5\" "
          "LogFormat=\"[%%TimeStamp%%]: %%Message%%\" LogLevel=\"info\"/>\n"
          "</simulation>\n",
          domains, dedicated, NX, NY, clients * domains, file_mode, g_out, g_out);
  fclose(f);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_begin();
  if (argc < 5) {
    fprintf(stderr, "usage: damaris_style <out> <cores|nodes|thread|sync> <domains> <file mode>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  g_out = argv[1];
  const char* mode = argv[2];
  const int domains = atoi(argv[3]);
  const int dedicated = strcmp(mode, "cores") == 0 || strcmp(mode, "nodes") == 0;
  const int started = dedicated ? DAMARIS_OK : DAMARIS_NO_SERVER;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* The simulation's own count of clients, as it would know it from its launch. */
  const int clients = atoi(getenv("COMPAT_CLIENTS") ? getenv("COMPAT_CLIENTS") : "0");

  char xml[4096];
  snprintf(xml, sizeof xml, "%s/compat.xml", g_out);
  if (check_rank == 0) {
    /* The others are already inside damaris_initialize, before the file exists. */
    const struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    write_configuration(xml, mode, domains, clients, argv[4]);
  }
  if (!EXPECT_OK(damaris_initialize(xml, MPI_COMM_WORLD))) MPI_Abort(MPI_COMM_WORLD, 2);

  DAMARIS_TYPE_STR type = DAMARIS_TYPE_UNDEFINED;
  EXPECT_OK(damaris_get_type("step", &type));
  EXPECT(type == DAMARIS_TYPE_INT);
  EXPECT_OK(damaris_get_type("dt", &type));
  EXPECT(type == DAMARIS_TYPE_DOUBLE);
  EXPECT_OK(damaris_get_type("fluid/cells/p", &type));
  EXPECT(type == DAMARIS_TYPE_DOUBLE);
  EXPECT_RC(damaris_get_type("fluid/p", &type), DAMARIS_UNDEFINED_VARIABLE, "fluid/p", NULL);
  EXPECT(type == DAMARIS_TYPE_UNDEFINED);
  EXPECT(damaris_has_plugin(DAMARIS_PLUGIN_HDF5) == 1);
  /* Python scripts run when Sidecore was built with Python. */
#ifdef SIDECORE_TEST_BUILT_WITH_PYTHON
  EXPECT(damaris_has_plugin(DAMARIS_PLUGIN_PYTHON) == 1);
#else
  EXPECT(damaris_has_plugin(DAMARIS_PLUGIN_PYTHON) == 0);
#endif
#ifndef HAVE_HDF5_ENABLED
  EXPECT(!"HAVE_HDF5_ENABLED is defined");
#endif

  /* Damaris's C++ example starts, stops and starts its servers again before it computes. */
  int is_client = -1;
  EXPECT_RC(damaris_start(&is_client), started, "damaris_start", "every process is a client");
  if (is_client) EXPECT_RC(damaris_stop(), started, "damaris_stop", "every process is a client");
  int again = -1;
  EXPECT_RC(damaris_start(&again), started, "damaris_start", "every process is a client");
  EXPECT(again == is_client);

  if (is_client) {
    MPI_Comm comm;
    int source = -1, nclients = 0;
    EXPECT_OK(damaris_client_comm_get(&comm));
    MPI_Comm_rank(comm, &source);
    MPI_Comm_size(comm, &nclients);
    EXPECT(nclients == clients);
    double cells[NY * NX];
    for (int it = 0; it < ITERATIONS; ++it) {
      for (int b = 0; b < domains; ++b) {
        for (int y = 0; y < NY; ++y)
          for (int x = 0; x < NX; ++x) cells[y * NX + x] = cell_value(it, source, b, domains, y, x);
        const int64_t position[2] = {0, (int64_t)(source * domains + b) * NX};
        EXPECT_OK(damaris_set_block_position("fluid/cells/p", b, position));
        EXPECT_OK(damaris_write_block("fluid/cells/p", b, cells));
      }
      const int step = it * 10 + source;
      EXPECT_OK(damaris_write("step", &step));
      double* dt = NULL;
      if (EXPECT_OK(damaris_alloc("dt", (void**)&dt))) {
        *dt = 0.5 * it + source;
        EXPECT_OK(damaris_commit("dt"));
        EXPECT_OK(damaris_clear("dt"));
      }
      EXPECT_OK(damaris_signal("mark"));
      EXPECT_OK(damaris_end_iteration());
    }
    EXPECT_RC(damaris_stop(), started, "damaris_stop", "every process is a client");
  }
  EXPECT_OK(damaris_finalize());
  int status = check_finish("damaris_style");
  MPI_Finalize();
  return status;
}
