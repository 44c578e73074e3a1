/* Output benchmark client: computes a smooth 3D field (three double variables) per client,
 * hands it to the dedicated cores every iteration through the Damaris API, and records the
 * client-visible time of each write; bench/output/run_output.py runs it and aggregates.
 *
 * Usage: sidecore_output_write CONFIG.xml [--iterations N] [--compute-ms MS]
 *          [--compute spin|sleep] [--json FILE] [--label TEXT]
 *
 * The configuration defines the integer parameters NX, NY, NZ (interior extents of each
 * client's block, NZ the slowest) and clients (set here to the number of clients), and the
 * double variables temperature, pressure and velocity on a layout of dimensions NZ,NY,NX. The
 * clients are stacked along z: client r holds z = r*NZ .. r*NZ+NZ-1 of the global array.
 *
 * Each iteration: a compute phase of --compute-ms milliseconds (the fields of the iteration
 * are computed in it, then the client busy-waits, or sleeps with --compute sleep, for the
 * rest), then damaris_write of each variable and damaris_end_iteration, both timed, then a
 * memcpy of the same bytes into a warm buffer, timed, as a yardstick for the same iteration.
 * After the last iteration damaris_sync waits until everything is stored (the drain).
 *
 * The fields, with x, y, z in [0, 1) over the global array, t the iteration and
 * w(u) = 2 pi u (low-frequency waves: at most two periods across the domain):
 *   temperature = 300 + 15 sin w(1.3x + 0.11 + t/100) cos w(0.7y + 0.23) + 5 sin w(1.9z + 0.05)
 *                 + 3 sin w(0.8x + 1.1y + 0.6z + 0.31 + t/70) + t/20
 *   pressure    = 101.325 + 2 cos w(0.9x + 0.17) sin w(1.2y + 0.41 - t/50)
 *                 + 0.5 cos w(0.6z + 0.29) + 0.8 sin w(1.4x + 0.5y + 0.9z + 0.07)
 *   velocity    = 10 sin w(1.1x + 0.13) sin w(0.9y + 0.37) cos w(1.2z + 0.19 + t/200)
 *                 + 2 sin w(0.5x + 1.3y + 0.7z + 0.86 - t/90)
 * Their values stay far inside the range of 16-bit floats (at most 65504).
 */
#define _POSIX_C_SOURCE 200809L

#include <Damaris.h>
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VARIABLES 3
static const char* const variable_names[VARIABLES] = {"temperature", "pressure", "velocity"};

struct options {
  const char* config;
  const char* json;
  const char* label;
  int iterations;
  double compute_ms;
  int sleep_compute; /* 1: the compute phase sleeps instead of keeping the core busy */
};

/* Written through so that the yardstick memcpy cannot be optimized away. */
static volatile unsigned char g_sink;

/* DAMARIS_NO_SERVER is what damaris_start and damaris_stop return, as in Damaris, when the
 * configuration has no dedicated cores or nodes: every process is then a client. */
static void check(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "output_write: %s failed: %s\n  %s\n", call, damaris_error_string(rc),
            damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

static void* checked_malloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "output_write: out of memory (%zu bytes)\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void usage(void) {
  fprintf(stderr,
          "usage: sidecore_output_write CONFIG.xml [--iterations N] [--compute-ms MS]\n"
          "         [--compute spin|sleep] [--json FILE] [--label TEXT]\n");
}

static int parse_options(int argc, char** argv, struct options* o) {
  o->config = NULL;
  o->json = NULL;
  o->label = "";
  o->iterations = 10;
  o->compute_ms = 1000.0;
  o->sleep_compute = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (a[0] != '-') {
      o->config = a;
      continue;
    }
    if (!value) return 0;
    ++i;
    if (strcmp(a, "--iterations") == 0) {
      o->iterations = atoi(value);
    } else if (strcmp(a, "--compute-ms") == 0) {
      o->compute_ms = atof(value);
    } else if (strcmp(a, "--compute") == 0) {
      if (strcmp(value, "spin") == 0) {
        o->sleep_compute = 0;
      } else if (strcmp(value, "sleep") == 0) {
        o->sleep_compute = 1;
      } else {
        return 0;
      }
    } else if (strcmp(a, "--json") == 0) {
      o->json = value;
    } else if (strcmp(a, "--label") == 0) {
      o->label = value;
    } else {
      return 0;
    }
  }
  return o->config != NULL && o->iterations >= 1 && o->compute_ms >= 0.0;
}

static const double two_pi = 6.283185307179586;

static double wave_sin(double cycles) { return sin(two_pi * cycles); }
static double wave_cos(double cycles) { return cos(two_pi * cycles); }

/* Fills the three fields of iteration t. Every term is built from one-dimensional tables and
 * per-row values (a wave along x + y + z expands with the angle-sum formula), so 2^21 points
 * cost milliseconds. Wave numbers and phases are not commensurate with the grid: sines
 * sampled at whole periods repeat exactly (sin(pi - a) == sin(a)), and deflate would find
 * those mirrored rows and report ratios no real field gives. */
static void fill_fields(double* const fields[VARIABLES], int nx, int ny, int nz, int z0,
                        int global_nz, int t, double* tables) {
  double* x_temperature = tables;          /* sin(2 pi (1.3 x + 0.11 + t/100)) */
  double* x_pressure = x_temperature + nx; /* cos(2 pi (0.9 x + 0.17)) */
  double* x_velocity = x_pressure + nx;    /* sin(2 pi (1.1 x + 0.13)) */
  double* sin_x[VARIABLES] = {x_velocity + nx, x_velocity + 2 * nx, x_velocity + 3 * nx};
  double* cos_x[VARIABLES] = {x_velocity + 4 * nx, x_velocity + 5 * nx, x_velocity + 6 * nx};
  double* y_temperature = x_velocity + 7 * (size_t)nx; /* cos(2 pi (0.7 y + 0.23)) */
  double* y_pressure = y_temperature + ny;             /* sin(2 pi (1.2 y + 0.41 - t/50)) */
  double* y_velocity = y_pressure + ny;                /* sin(2 pi (0.9 y + 0.37)) */
  double* z_temperature = y_velocity + ny;             /* sin(2 pi (1.9 z + 0.05)) */
  double* z_pressure = z_temperature + nz;             /* cos(2 pi (0.6 z + 0.29)) */
  double* z_velocity = z_pressure + nz;                /* cos(2 pi (1.2 z + 0.19 + t/200)) */
  /* The oblique waves: amplitude * sin(2 pi (kx x + ky y + kz z + phase)), per variable. */
  static const double oblique_x[VARIABLES] = {0.8, 1.4, 0.5};
  static const double oblique_y[VARIABLES] = {1.1, 0.5, 1.3};
  static const double oblique_z[VARIABLES] = {0.6, 0.9, 0.7};
  const double oblique_phase[VARIABLES] = {0.31 + t / 70.0, 0.07, 0.86 - t / 90.0};
  static const double oblique_amplitude[VARIABLES] = {3.0, 0.8, 2.0};

  for (int i = 0; i < nx; ++i) {
    const double x = (double)i / nx;
    x_temperature[i] = wave_sin(1.3 * x + 0.11 + t / 100.0);
    x_pressure[i] = wave_cos(0.9 * x + 0.17);
    x_velocity[i] = wave_sin(1.1 * x + 0.13);
    for (int v = 0; v < VARIABLES; ++v) {
      sin_x[v][i] = oblique_amplitude[v] * wave_sin(oblique_x[v] * x);
      cos_x[v][i] = oblique_amplitude[v] * wave_cos(oblique_x[v] * x);
    }
  }
  for (int j = 0; j < ny; ++j) {
    const double y = (double)j / ny;
    y_temperature[j] = wave_cos(0.7 * y + 0.23);
    y_pressure[j] = wave_sin(1.2 * y + 0.41 - t / 50.0);
    y_velocity[j] = wave_sin(0.9 * y + 0.37);
  }
  for (int k = 0; k < nz; ++k) {
    const double z = (double)(z0 + k) / global_nz;
    z_temperature[k] = wave_sin(1.9 * z + 0.05);
    z_pressure[k] = wave_cos(0.6 * z + 0.29);
    z_velocity[k] = wave_cos(1.2 * z + 0.19 + t / 200.0);
  }
  const double drift = t / 20.0;
  size_t n = 0;
  for (int k = 0; k < nz; ++k) {
    const double z = (double)(z0 + k) / global_nz;
    for (int j = 0; j < ny; ++j) {
      const double y = (double)j / ny;
      /* sin(a + b) = sin a cos b + cos a sin b, with b the y and z part of the wave. */
      double sin_b[VARIABLES], cos_b[VARIABLES];
      for (int v = 0; v < VARIABLES; ++v) {
        const double b = oblique_y[v] * y + oblique_z[v] * z + oblique_phase[v];
        sin_b[v] = wave_sin(b);
        cos_b[v] = wave_cos(b);
      }
      const double t_row = 300.0 + 5.0 * z_temperature[k] + drift;
      const double t_amp = 15.0 * y_temperature[j];
      const double p_row = 101.325 + 0.5 * z_pressure[k];
      const double p_amp = 2.0 * y_pressure[j];
      const double v_amp = 10.0 * y_velocity[j] * z_velocity[k];
      double* temperature = fields[0] + n;
      double* pressure = fields[1] + n;
      double* velocity = fields[2] + n;
      for (int i = 0; i < nx; ++i) {
        temperature[i] =
            t_row + t_amp * x_temperature[i] + sin_x[0][i] * cos_b[0] + cos_x[0][i] * sin_b[0];
        pressure[i] =
            p_row + p_amp * x_pressure[i] + sin_x[1][i] * cos_b[1] + cos_x[1][i] * sin_b[1];
        velocity[i] = v_amp * x_velocity[i] + sin_x[2][i] * cos_b[2] + cos_x[2][i] * sin_b[2];
      }
      n += (size_t)nx;
    }
  }
}

static void sleep_s(double seconds) {
  if (seconds <= 0.0) return;
  struct timespec d;
  d.tv_sec = (time_t)seconds;
  d.tv_nsec = (long)((seconds - (double)d.tv_sec) * 1e9);
  while (nanosleep(&d, &d) != 0 && errno == EINTR) {
  }
}

static void print_array(FILE* f, const char* name, const double* values, int n) {
  fprintf(f, "\"%s\": [", name);
  for (int i = 0; i < n; ++i) fprintf(f, "%s%.9g", i ? ", " : "", values[i]);
  fprintf(f, "]");
}

static void run_client(const struct options* o) {
  MPI_Comm comm;
  check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  check(damaris_parameter_set("clients", &size, sizeof size), "damaris_parameter_set(clients)");
  int nx = 0, ny = 0, nz = 0;
  check(damaris_parameter_get("NX", &nx, sizeof nx), "damaris_parameter_get(NX)");
  check(damaris_parameter_get("NY", &ny, sizeof ny), "damaris_parameter_get(NY)");
  check(damaris_parameter_get("NZ", &nz, sizeof nz), "damaris_parameter_get(NZ)");
  const int64_t position[3] = {(int64_t)rank * nz, 0, 0};
  for (int v = 0; v < VARIABLES; ++v) {
    check(damaris_set_position(variable_names[v], position), "damaris_set_position");
  }

  const size_t count = (size_t)nx * ny * nz;
  const size_t variable_bytes = count * sizeof(double);
  double* fields[VARIABLES];
  for (int v = 0; v < VARIABLES; ++v) fields[v] = checked_malloc(variable_bytes);
  unsigned char* yardstick = checked_malloc(VARIABLES * variable_bytes);
  memset(yardstick, 0, VARIABLES * variable_bytes); /* warm: no page faults in the memcpy */
  const size_t table_count = 9 * (size_t)nx + 3 * (size_t)ny + 3 * (size_t)nz;
  double* tables = checked_malloc(table_count * sizeof(double));

  const int n = o->iterations;
  double* write_s = checked_malloc((size_t)n * sizeof(double));
  double* end_s = checked_malloc((size_t)n * sizeof(double));
  double* memcpy_s = checked_malloc((size_t)n * sizeof(double));
  double* fill_s = checked_malloc((size_t)n * sizeof(double));
  double* compute_s = checked_malloc((size_t)n * sizeof(double));
  const double compute = o->compute_ms * 1e-3;

  MPI_Barrier(comm);
  const double loop_start = now_s();
  for (int it = 0; it < n; ++it) {
    const double c0 = now_s();
    fill_fields(fields, nx, ny, nz, rank * nz, nz * size, it, tables);
    const double c1 = now_s();
    if (o->sleep_compute) {
      sleep_s(compute - (c1 - c0));
    } else {
      while (now_s() - c0 < compute) {
      }
    }
    const double t0 = now_s();
    for (int v = 0; v < VARIABLES; ++v) {
      check(damaris_write(variable_names[v], fields[v]), "damaris_write");
    }
    const double t1 = now_s();
    check(damaris_end_iteration(), "damaris_end_iteration");
    const double t2 = now_s();
    for (int v = 0; v < VARIABLES; ++v) {
      memcpy(yardstick + (size_t)v * variable_bytes, fields[v], variable_bytes);
    }
    const double t3 = now_s();
    g_sink = yardstick[(size_t)it % (VARIABLES * variable_bytes)];
    fill_s[it] = c1 - c0;
    compute_s[it] = t0 - c0;
    write_s[it] = t1 - t0;
    end_s[it] = t2 - t1;
    memcpy_s[it] = t3 - t2;
  }
  const double loop_end = now_s();
  check(damaris_sync(), "damaris_sync");
  const double drained = now_s();

  /* Per iteration, the slowest client: the one the simulation waits for. */
  double* arrays[5] = {write_s, end_s, memcpy_s, fill_s, compute_s};
  for (int a = 0; a < 5; ++a) {
    MPI_Allreduce(MPI_IN_PLACE, arrays[a], n, MPI_DOUBLE, MPI_MAX, comm);
  }
  double sync_s = drained - loop_end, loop_s = loop_end - loop_start;
  MPI_Allreduce(MPI_IN_PLACE, &sync_s, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, &loop_s, 1, MPI_DOUBLE, MPI_MAX, comm);

  if (rank == 0) {
    FILE* f = o->json ? fopen(o->json, "w") : stdout;
    if (!f) {
      fprintf(stderr, "output_write: cannot open %s\n", o->json);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fprintf(f, "{\"label\": \"%s\", \"clients\": %d, \"iterations\": %d, ", o->label, size, n);
    fprintf(f, "\"dims\": [%d, %d, %d], \"variables\": %d, \"bytes_per_iteration\": %zu, ", nz, ny,
            nx, VARIABLES, VARIABLES * variable_bytes);
    fprintf(f, "\"compute_ms\": %.6g, \"compute_mode\": \"%s\", ", o->compute_ms,
            o->sleep_compute ? "sleep" : "spin");
    fprintf(f, "\"loop_s\": %.9g, \"sync_s\": %.9g, ", loop_s, sync_s);
    print_array(f, "write_s", write_s, n);
    fprintf(f, ", ");
    print_array(f, "end_s", end_s, n);
    fprintf(f, ", ");
    print_array(f, "memcpy_s", memcpy_s, n);
    fprintf(f, ", ");
    print_array(f, "fill_s", fill_s, n);
    fprintf(f, ", ");
    print_array(f, "compute_s", compute_s, n);
    fprintf(f, "}\n");
    if (f != stdout) fclose(f);
  }
  for (int v = 0; v < VARIABLES; ++v) free(fields[v]);
  free(yardstick);
  free(tables);
  free(write_s);
  free(end_s);
  free(memcpy_s);
  free(fill_s);
  free(compute_s);
}

int main(int argc, char** argv) {
  struct options o;
  if (!parse_options(argc, argv, &o)) {
    usage();
    return 2;
  }
  MPI_Init(&argc, &argv);
  check(damaris_initialize(o.config, MPI_COMM_WORLD), "damaris_initialize");
  int is_client = 0;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    run_client(&o);
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
