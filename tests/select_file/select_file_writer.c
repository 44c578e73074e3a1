/* Index-mapped output writer: each client owns cells whose global numbers are a permutation of
 * the rank-ordered numbering (or that numbering itself), writes them through select-file and
 * once more in rank order. check_select_file.py recomputes every value from the same formulas.
 * A fault (out_of_range, duplicate_in_block, duplicate_across_writers, no_index) spoils the
 * index: the store must then refuse the iteration with a message instead of writing a wrong
 * file, and the writer prints what damaris_end_iteration said and goes on.
 * Usage: select_file_writer <xml> <iterations> <permuted|contiguous> [scale [fault [domains]]]
 * (domains: blocks per client, as <domains count> says). */
#include <Damaris.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../initialize_or_leave.h"

static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "select_file_writer: %s returned %d (%s): %s\n", call, rc,
            damaris_error_string(rc), damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

static long gcd(long a, long b) { return b == 0 ? a : gcd(b, a % b); }

/* Cells of client r (uneven on purpose), times a scale given on the command line. */
static int scale = 1;
static int cells_of(int r) { return scale * (5 + 3 * r); }

/* Global number of the k-th cell in rank order: k -> (a*k + n/2) mod n, a coprime with n
 * (check_select_file.py: global_number). */
static long global_number(long k, long n, int permuted) {
  if (!permuted) return k;
  long a = 1 + n / 3;
  while (gcd(a, n) != 1) ++a;
  return (a * k + n / 2) % n;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 4) {
    fprintf(stderr, "usage: select_file_writer <xml> <iterations> <permuted|contiguous>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int iterations = atoi(argv[2]);
  const int permuted = strcmp(argv[3], "permuted") == 0;
  if (argc > 4) scale = atoi(argv[4]);
  const char* fault = argc > 5 ? argv[5] : "none";
  const int domains = argc > 6 ? atoi(argv[6]) : 1;
  initialize_or_leave("select_file_writer", argv[1]);
  int is_client = -1;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm comm;
    check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* Each client holds `domains` blocks of cells_of(rank) cells; cells are numbered in rank
     * order, then block order. */
    const int n_local = cells_of(rank);
    int n_total = 0, offset = 0;
    for (int r = 0; r < size; ++r) {
      if (r < rank) offset += domains * cells_of(r);
      n_total += domains * cells_of(r);
    }
    check(damaris_parameter_set("n_local", &n_local, sizeof n_local), "damaris_parameter_set");
    check(damaris_parameter_set("n_total", &n_total, sizeof n_total), "damaris_parameter_set");
    const char* names[] = {"cell_index",    "fields/pressure", "fields/saturation",
                           "fields/region", "fields/porosity", "fields/pressure_plain"};
    const int cells = domains * n_local;
    for (int b = 0; b < domains; ++b) {
      const int64_t position[1] = {offset + b * n_local};
      for (int v = 0; v < 6; ++v)
        check(damaris_set_block_position(names[v], b, position), "damaris_set_block_position");
      const int64_t position_2d[2] = {0, offset + b * n_local};
      check(damaris_set_block_position("fields/pressure_2d", b, position_2d),
            "damaris_set_block_position");
    }

    int* index = malloc(sizeof(int) * cells);
    double* pressure = malloc(sizeof(double) * cells);
    float* saturation = malloc(sizeof(float) * cells);
    int* region = malloc(sizeof(int) * cells);
    double* porosity = malloc(sizeof(double) * cells);
    for (int i = 0; i < cells; ++i) index[i] = (int)global_number(offset + i, n_total, permuted);
    if (strcmp(fault, "out_of_range") == 0 && rank == 0) index[0] = n_total;
    if (strcmp(fault, "duplicate_in_block") == 0 && rank == 0) index[1] = index[0];
    /* Client 1 takes the first cell of client 0 too. */
    if (strcmp(fault, "duplicate_across_writers") == 0 && rank == 1)
      index[0] = (int)global_number(0, n_total, permuted);
    for (int i = 0; i < cells; ++i) porosity[i] = 0.5 + index[i] / 1024.0;
    for (int it = 0; it < iterations; ++it) {
      /* Values are functions of the cell's global number g. */
      for (int i = 0; i < cells; ++i) {
        const int g = index[i];
        pressure[i] = 1000.0 * it + g + 0.25;
        saturation[i] = (float)(it + (g % 97) / 128.0);
        region[i] = 7 * g + it;
      }
      for (int b = 0; b < domains; ++b) {
        const int first = b * n_local;
        if (it == 0 && strcmp(fault, "no_index") != 0)
          check(damaris_write_block("cell_index", b, index + first), "damaris_write cell_index");
        if (it == 0)
          check(damaris_write_block("fields/porosity", b, porosity + first),
                "damaris_write porosity");
        check(damaris_write_block("fields/pressure", b, pressure + first),
              "damaris_write pressure");
        check(damaris_write_block("fields/saturation", b, saturation + first),
              "damaris_write saturation");
        check(damaris_write_block("fields/region", b, region + first), "damaris_write region");
        check(damaris_write_block("fields/pressure_plain", b, pressure + first),
              "damaris_write pressure_plain");
        check(damaris_write_block("fields/pressure_2d", b, pressure + first),
              "damaris_write pressure_2d");
      }
      const int rc = damaris_end_iteration();
      if (strcmp(fault, "none") == 0) {
        check(rc, "damaris_end_iteration");
      } else if (rc != DAMARIS_OK) {
        printf("select_file_writer: rank %d iteration %d: damaris_end_iteration returned %d: %s\n",
               rank, it, rc, damaris_last_error_message());
        fflush(stdout);
      }
    }
    free(index);
    free(pressure);
    free(saturation);
    free(region);
    free(porosity);
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
