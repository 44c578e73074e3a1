/* Writes two variables (a 2D field with ghost zones, whose ghosts hold -1e6 so that counting
 * them shows, and a vector of ints) for a few iterations, and signals two events routed to the
 * stats action plugin: "mark" (scope core) at odd iterations, "group_mark" (scope group) twice
 * by every client at iteration 1 and twice by client 0 alone at iteration 2 (a group that must
 * not run with dedicated cores). check_stats.py recomputes every number from the formulas
 * below. Usage: stats_writer <xml> <iterations> [iterations of client 0]: client 0 may stop
 * before the others. */
#include <Damaris.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../initialize_or_leave.h"

/* Shapes of stats.xml.in: field is NY x NX with one ghost cell on each side. */
enum { NY = 4, NX = 5, N = 6 };

static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "stats_writer: %s returned %d (%s): %s\n", call, rc, damaris_error_string(rc),
            damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: stats_writer <xml> <iterations>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = atoi(argv[2]);
  const int first_client_iterations = argc > 3 ? atoi(argv[3]) : iterations;
  initialize_or_leave("stats_writer", argv[1]);
  int is_client = 0;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm comm;
    check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
    int source = 0;
    MPI_Comm_rank(comm, &source);
    const int mine = source == 0 ? first_client_iterations : iterations;
    for (int it = 0; it < mine; ++it) {
      double field[NY][NX];
      for (int y = 0; y < NY; ++y)
        for (int x = 0; x < NX; ++x) {
          const int ghost = y == 0 || y == NY - 1 || x == 0 || x == NX - 1;
          field[y][x] = ghost ? -1e6 : it * 1000.0 + source * 100.0 + y * 10.0 + x + 0.25;
        }
      check(damaris_write("field", field), "damaris_write field");
      int counts[N];
      for (int i = 0; i < N; ++i) counts[i] = (i - 3) * (source + 1) + it;
      check(damaris_write("counts", counts), "damaris_write counts");
      if (it % 2 == 1) check(damaris_signal("mark"), "damaris_signal mark");
      if (it == 1 || (it == 2 && source == 0)) {
        check(damaris_signal("group_mark"), "damaris_signal group_mark");
        check(damaris_signal("group_mark"), "damaris_signal group_mark");
      }
      check(damaris_end_iteration(), "damaris_end_iteration");
    }
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
