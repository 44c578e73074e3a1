/* A simulation whose output Python scripts (<pyscript>) analyse where the stores run. Each
 * client writes, every iteration, three variables whose values follow formulas that
 * test_scripts.py recomputes:
 *   field   double[NZ][NY][NX] at position (0, 0, c*NX) of a global (NZ, NY, NX*clients) box:
 *           value(it, z, y, gx) = it*1e6 + z*1e4 + y*1e2 + gx
 *   halo    int[NY+2][NX+3] with ghost zones 1:1 and 2:1: the interior holds
 *           it*1000 + c*100 + y*10 + x, every ghost cell -1
 *   column  float, a Fortran layout dimensions="NX,NY" (stored C order [NY][NX]):
 *           element (x, y) = it + c*0.5 + x*0.25 + y*4
 * and prints, at the end, whether libpython is mapped in the process (a configuration without
 * scripts must never load it). Usage: script_writer <xml> <iterations> */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../initialize_or_leave.h"

#define NX 5
#define NY 4
#define NZ 3

static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "script_writer: %s returned %d (%s): %s\n", call, rc, damaris_error_string(rc),
            damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

static int python_is_loaded(void) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (!maps) return -1;
  char line[4096];
  int found = 0;
  while (!found && fgets(line, sizeof line, maps)) found = strstr(line, "libpython") != NULL;
  fclose(maps);
  return found;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (argc < 3) {
    fprintf(stderr, "usage: script_writer <xml> <iterations>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = atoi(argv[2]);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  initialize_or_leave("script_writer", argv[1]);
  int is_client = 0;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm comm;
    check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
    int c = 0;
    MPI_Comm_rank(comm, &c);
    static double field[NZ][NY][NX];
    static int halo[NY + 2][NX + 3];
    static float column[NY][NX];
    const int64_t position[3] = {0, 0, (int64_t)c * NX};
    check(damaris_set_position("field", position), "damaris_set_position");
    for (int it = 0; it < iterations; ++it) {
      for (int z = 0; z < NZ; ++z)
        for (int y = 0; y < NY; ++y)
          for (int x = 0; x < NX; ++x)
            field[z][y][x] = it * 1e6 + z * 1e4 + y * 1e2 + (double)(c * NX + x);
      for (int y = 0; y < NY + 2; ++y)
        for (int x = 0; x < NX + 3; ++x) {
          const int inside = y >= 1 && y < NY + 1 && x >= 2 && x < NX + 2;
          halo[y][x] = inside ? it * 1000 + c * 100 + (y - 1) * 10 + (x - 2) : -1;
        }
      for (int y = 0; y < NY; ++y)
        for (int x = 0; x < NX; ++x) column[y][x] = (float)(it + c * 0.5 + x * 0.25 + y * 4);
      check(damaris_write("field", field), "damaris_write(field)");
      check(damaris_write("halo", halo), "damaris_write(halo)");
      check(damaris_write("column", column), "damaris_write(column)");
      check(damaris_end_iteration(), "damaris_end_iteration");
    }
    check(damaris_stop(), "damaris_stop");
  }
  const int loaded = python_is_loaded();
  check(damaris_finalize(), "damaris_finalize");
  printf("rank %d: done, %s, python %s\n", rank, is_client ? "client" : "server",
         loaded ? "loaded" : "not loaded");
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
