/* Proxy simulation: a 3D heat stencil over MPI ranks that writes several variables every W
 * iterations through a back-end chosen at run time, and records what each write phase costs
 * the simulation. With --alltoall each iteration opens with a global exchange (an FFT-like
 * transpose: MPI_Alltoall), timed on its own: the communication that background I/O perturbs
 * (seed 003). The stencil sweeps are marked as the compute phase for
 * <schedule policy="phase"> (sidecore_compute_begin/end). */
/* _GNU_SOURCE for RUSAGE_THREAD (Linux); POSIX otherwise. */
#define _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <Damaris.h>
#include <errno.h>
#include <getopt.h>
#include <hdf5.h>
#include <mpi.h>
#include <sidecore/schedule.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#ifdef PROXY_HAVE_ADIOS2
#include <adios2_c.h>
#endif

enum { max_vars = 3 };
static const char* const var_names[max_vars] = {"temperature", "pressure", "density"};

/* The stencil's diffusion number: stable below 1/6. */
static const double alpha = 0.1;

typedef enum {
  backend_none,
  backend_sidecore,
  backend_hdf5_fpp,
  backend_phdf5,
  backend_adios2,
  backend_adios2_async
} backend_kind;

static const char* const backend_names[] = {"none",  "sidecore", "hdf5-fpp",
                                            "phdf5", "adios2",   "adios2-async"};

typedef struct {
  int local[3];   /* per-rank interior extents, C order (z, y, x) */
  int global_set; /* the user gave --global instead of --grid */
  int global[3];
  int vars;
  int iterations;
  int write_period;
  int sweeps;    /* stencil sweeps (each with a halo exchange) per iteration */
  long alltoall; /* bytes sent to each rank by the MPI_Alltoall opening each iteration; 0: none */
  backend_kind backend;
  const char* output;
  const char* xml;
  const char* json;
  int thread_multiple;
  int alloc_derived; /* Sidecore: pressure and density computed into damaris_alloc blocks */
} options;

/* Everything the back-ends need about the decomposition and the fields. */
typedef struct {
  MPI_Comm comm; /* cartesian communicator of the simulation ranks */
  int rank, size;
  int dims[3], coords[3];
  int n[3];            /* interior extents (z, y, x) */
  int g[3];            /* global extents */
  int64_t off[3];      /* global offset of this rank's first interior cell */
  double* temperature; /* (n+2)^3 with one ghost layer per side */
  float* pressure;     /* interior only */
  double* density;     /* interior only */
  const options* opt;
#ifdef PROXY_HAVE_ADIOS2
  adios2_adios* adios;
  adios2_io* io;
  adios2_engine* engine;
  adios2_variable* avars[max_vars];
#endif
} sim_state;

static void die(const char* what, const char* detail) {
  fprintf(stderr, "proxy: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* DAMARIS_NO_SERVER is what damaris_start and damaris_stop return, as in Damaris, when the
 * configuration has no dedicated cores or nodes: every process is then a client. */
static void check_damaris(int rc, const char* call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    fprintf(stderr, "proxy: %s failed: %s\n  %s\n", call, damaris_error_string(rc),
            damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* HDF5 calls return a negative value on failure; the library has already printed its stack. */
static hid_t check_h5(hid_t id, const char* call) {
  if (id < 0) die("HDF5 call failed", call);
  return id;
}

static size_t interior_count(const sim_state* s) { return (size_t)s->n[0] * s->n[1] * s->n[2]; }

static size_t ghosted_index(const sim_state* s, int z, int y, int x) {
  return ((size_t)z * (s->n[1] + 2) + y) * (s->n[2] + 2) + x;
}

static size_t var_bytes(const sim_state* s, int v) {
  return interior_count(s) * (v == 1 ? sizeof(float) : sizeof(double));
}

static void usage(void) {
  fprintf(stderr,
          "usage: proxy [options]\n"
          "  --grid NX,NY,NZ     interior cells per rank (default 64,64,64; one value: a cube)\n"
          "  --global GX,GY,GZ   global cells instead, split over the ranks (must divide)\n"
          "  --vars N            variables written, 1..3: temperature(double), pressure(float),\n"
          "                      density(double) (default 3)\n"
          "  --iterations I      (default 100)\n"
          "  --write-period W    write every W iterations (default 10)\n"
          "  --sweeps K          stencil sweeps per iteration (default 1)\n"
          "  --alltoall BYTES    open each iteration with an MPI_Alltoall of BYTES per rank\n"
          "                      pair, timed apart as the communication time (default 0)\n"
          "  --backend B         none | sidecore | hdf5-fpp | phdf5 | adios2 | adios2-async\n"
          "  --output DIR        output directory of the direct back-ends (default proxy_out)\n"
          "  --xml FILE          Sidecore configuration (backend sidecore)\n"
          "  --json FILE         timings as JSON, written by the first simulation rank\n"
          "  --thread-multiple   initialize MPI with MPI_THREAD_MULTIPLE (Sidecore thread mode\n"
          "                      with collective output needs it)\n"
          "  --alloc-derived     backend sidecore: the derived variables (pressure, density)\n"
          "                      are computed into blocks of damaris_alloc and committed, no\n"
          "                      copy (the temperature, held with its ghosts, is written)\n");
}

/* Parses "A,B,C" (x, y, z as the user thinks of them) or "A" into C order (z, y, x). */
static int parse_extents(const char* text, int out[3]) {
  int a = 0, b = 0, c = 0;
  int got = sscanf(text, "%d,%d,%d", &a, &b, &c);
  if (got == 1)
    b = c = a;
  else if (got != 3)
    return -1;
  if (a < 1 || b < 1 || c < 1) return -1;
  out[0] = c;
  out[1] = b;
  out[2] = a;
  return 0;
}

static int parse_options(int argc, char** argv, options* o) {
  static const struct option longs[] = {{"grid", required_argument, NULL, 'g'},
                                        {"global", required_argument, NULL, 'G'},
                                        {"vars", required_argument, NULL, 'v'},
                                        {"iterations", required_argument, NULL, 'i'},
                                        {"write-period", required_argument, NULL, 'w'},
                                        {"sweeps", required_argument, NULL, 'k'},
                                        {"backend", required_argument, NULL, 'b'},
                                        {"output", required_argument, NULL, 'o'},
                                        {"xml", required_argument, NULL, 'x'},
                                        {"json", required_argument, NULL, 'j'},
                                        {"thread-multiple", no_argument, NULL, 't'},
                                        {"help", no_argument, NULL, 'h'},
                                        {"alltoall", required_argument, NULL, 'a'},
                                        {"alloc-derived", no_argument, NULL, 'z'},
                                        {NULL, 0, NULL, 0}};
  *o = (options){.local = {64, 64, 64},
                 .vars = 3,
                 .iterations = 100,
                 .write_period = 10,
                 .sweeps = 1,
                 .backend = backend_none,
                 .output = "proxy_out"};
  int c;
  while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
    switch (c) {
      case 'g':
        if (parse_extents(optarg, o->local)) return -1;
        break;
      case 'G':
        if (parse_extents(optarg, o->global)) return -1;
        o->global_set = 1;
        break;
      case 'v':
        o->vars = atoi(optarg);
        break;
      case 'i':
        o->iterations = atoi(optarg);
        break;
      case 'w':
        o->write_period = atoi(optarg);
        break;
      case 'k':
        o->sweeps = atoi(optarg);
        break;
      case 'a':
        o->alltoall = atol(optarg);
        break;
      case 'b': {
        int found = 0;
        for (size_t i = 0; i < sizeof backend_names / sizeof *backend_names; ++i) {
          if (strcmp(optarg, backend_names[i]) == 0) {
            o->backend = (backend_kind)i;
            found = 1;
          }
        }
        if (!found) return -1;
        break;
      }
      case 'o':
        o->output = optarg;
        break;
      case 'x':
        o->xml = optarg;
        break;
      case 'j':
        o->json = optarg;
        break;
      case 't':
        o->thread_multiple = 1;
        break;
      case 'z':
        o->alloc_derived = 1;
        break;
      default:
        return -1;
    }
  }
  if (o->vars < 1 || o->vars > max_vars || o->iterations < 1 || o->write_period < 1 ||
      o->sweeps < 1 || o->alltoall < 0 || optind != argc)
    return -1;
  if (o->backend == backend_sidecore && !o->xml) return -1;
  if (o->alloc_derived && o->backend != backend_sidecore) {
    fprintf(stderr, "proxy: --alloc-derived needs --backend sidecore\n");
    return -1;
  }
#ifndef PROXY_HAVE_ADIOS2
  if (o->backend == backend_adios2 || o->backend == backend_adios2_async) {
    fprintf(stderr, "proxy: built without ADIOS2 (configure with ADIOS2_DIR)\n");
    return -1;
  }
#endif
  return 0;
}

/* A rough deterministic start (integers, exact in any language) so that a reader can
 * recompute every stored value: see run_matrix.py. */
static double initial_temperature(int64_t gz, int64_t gy, int64_t gx) {
  return 300.0 + (double)((gx * 7 + gy * 13 + gz * 29) % 101);
}

static void init_fields(sim_state* s) {
  size_t ghosted = (size_t)(s->n[0] + 2) * (s->n[1] + 2) * (s->n[2] + 2);
  s->temperature = calloc(ghosted, sizeof(double));
  s->pressure = malloc(interior_count(s) * sizeof(float));
  s->density = malloc(interior_count(s) * sizeof(double));
  if (!s->temperature || !s->pressure || !s->density) die("out of memory", NULL);
  for (int z = 1; z <= s->n[0]; ++z)
    for (int y = 1; y <= s->n[1]; ++y)
      for (int x = 1; x <= s->n[2]; ++x)
        s->temperature[ghosted_index(s, z, y, x)] =
            initial_temperature(s->off[0] + z - 1, s->off[1] + y - 1, s->off[2] + x - 1);
  /* Touch the derived fields now so the first write phase does not pay their page faults. */
  memset(s->pressure, 0, interior_count(s) * sizeof(float));
  memset(s->density, 0, interior_count(s) * sizeof(double));
}

/* Face datatypes of the ghosted array: [dim][0] interior low face, [1] low ghost,
 * [2] interior high face, [3] high ghost. */
static void make_face_types(const sim_state* s, MPI_Datatype faces[3][4]) {
  int sizes[3] = {s->n[0] + 2, s->n[1] + 2, s->n[2] + 2};
  for (int d = 0; d < 3; ++d) {
    int plane_index[4] = {1, 0, s->n[d], s->n[d] + 1};
    for (int p = 0; p < 4; ++p) {
      int sub[3], start[3];
      for (int e = 0; e < 3; ++e) {
        sub[e] = e == d ? 1 : s->n[e];
        start[e] = e == d ? plane_index[p] : 1;
      }
      MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &faces[d][p]);
      MPI_Type_commit(&faces[d][p]);
    }
  }
}

static void exchange_halos(sim_state* s, MPI_Datatype faces[3][4]) {
  for (int d = 0; d < 3; ++d) {
    int lower, upper;
    MPI_Cart_shift(s->comm, d, 1, &lower, &upper);
    /* Outer edges keep ghosts at 0 (MPI_PROC_NULL leaves the receive buffer alone). */
    MPI_Sendrecv(s->temperature, 1, faces[d][0], lower, 10 + d, s->temperature, 1, faces[d][3],
                 upper, 10 + d, s->comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(s->temperature, 1, faces[d][2], upper, 20 + d, s->temperature, 1, faces[d][1],
                 lower, 20 + d, s->comm, MPI_STATUS_IGNORE);
  }
}

/* One explicit 7-point step. The sum is written in a fixed order so that numpy can reproduce
 * it bit for bit. */
static void stencil_step(sim_state* s, double* next) {
  const size_t sy = (size_t)s->n[2] + 2, sz = sy * (s->n[1] + 2);
  const double* t = s->temperature;
  for (int z = 1; z <= s->n[0]; ++z)
    for (int y = 1; y <= s->n[1]; ++y) {
      size_t row = ghosted_index(s, z, y, 0);
      for (int x = 1; x <= s->n[2]; ++x) {
        size_t c = row + x;
        double sum = t[c - 1] + t[c + 1];
        sum = sum + t[c - sy];
        sum = sum + t[c + sy];
        sum = sum + t[c - sz];
        sum = sum + t[c + sz];
        next[c] = t[c] + alpha * (sum - 6.0 * t[c]);
      }
    }
  /* The outer ghosts of both buffers stay 0; inner ones are refreshed before each step. */
  s->temperature = next;
}

/* The derived variables: cheap functions of the temperature, computed before each write phase
 * (outside the timed region). */
static void derive_fields_into(const sim_state* s, float* pressure, double* density) {
  size_t i = 0;
  for (int z = 1; z <= s->n[0]; ++z)
    for (int y = 1; y <= s->n[1]; ++y)
      for (int x = 1; x <= s->n[2]; ++x, ++i) {
        double t = s->temperature[ghosted_index(s, z, y, x)];
        if (pressure) pressure[i] = (float)(100000.0 + 350.0 * t);
        if (density) density[i] = 1.0 / (1.0 + 0.01 * t);
      }
}

static void derive_fields(sim_state* s) { derive_fields_into(s, s->pressure, s->density); }

/* --alloc-derived: the derived variables' blocks of this phase, from damaris_alloc. The time
 * spent in damaris_alloc (waiting for room, if the buffer is full) belongs to the visible write
 * time; the computation into the blocks replaces derive_fields, outside it. */
static void* derived_block[max_vars];

static double sidecore_alloc_derived(sim_state* s) {
  const double a0 = MPI_Wtime();
  for (int v = 1; v < s->opt->vars; ++v)
    check_damaris(damaris_alloc(var_names[v], &derived_block[v]), "damaris_alloc");
  const double seconds = MPI_Wtime() - a0;
  derive_fields_into(s, s->opt->vars > 1 ? derived_block[1] : NULL,
                     s->opt->vars > 2 ? derived_block[2] : NULL);
  return seconds;
}

static void make_dir(const char* path) {
  if (mkdir(path, 0755) != 0 && errno != EEXIST) die("cannot create output directory", path);
}

static void sidecore_setup(sim_state* s) {
  int values[6] = {s->n[2], s->n[1], s->n[0], s->g[2], s->g[1], s->g[0]};
  const char* names[6] = {"NX", "NY", "NZ", "GX", "GY", "GZ"};
  for (int i = 0; i < 6; ++i)
    check_damaris(damaris_parameter_set(names[i], &values[i], sizeof values[i]),
                  "damaris_parameter_set");
  for (int v = 0; v < s->opt->vars; ++v)
    check_damaris(damaris_set_position(var_names[v], s->off), "damaris_set_position");
}

/* Time of the last phase's damaris_end_iteration, part of its visible write time: the rest
 * is the damaris_write calls. */
static double sidecore_end_time = 0.0;

static void sidecore_write(sim_state* s) {
  const void* data[max_vars] = {s->temperature, s->pressure, s->density};
  for (int v = 0; v < s->opt->vars; ++v) {
    if (v > 0 && s->opt->alloc_derived) {
      check_damaris(damaris_commit(var_names[v]), "damaris_commit");
      check_damaris(damaris_clear(var_names[v]), "damaris_clear");
    } else {
      check_damaris(damaris_write(var_names[v], data[v]), "damaris_write");
    }
  }
  const double e0 = MPI_Wtime();
  check_damaris(damaris_end_iteration(), "damaris_end_iteration");
  sidecore_end_time = MPI_Wtime() - e0;
}

/* Memory space of a variable: the ghosted temperature is selected in place, so no copy is
 * made by the proxy; HDF5 gathers the interior itself. */
static hid_t memory_space(const sim_state* s, int v) {
  hsize_t n[3] = {(hsize_t)s->n[0], (hsize_t)s->n[1], (hsize_t)s->n[2]};
  if (v != 0) return check_h5(H5Screate_simple(3, n, NULL), "H5Screate_simple");
  hsize_t full[3] = {n[0] + 2, n[1] + 2, n[2] + 2}, one[3] = {1, 1, 1};
  hid_t space = check_h5(H5Screate_simple(3, full, NULL), "H5Screate_simple");
  check_h5(H5Sselect_hyperslab(space, H5S_SELECT_SET, one, NULL, n, NULL), "H5Sselect_hyperslab");
  return space;
}

static const void* var_data(const sim_state* s, int v) {
  return v == 0   ? (const void*)s->temperature
         : v == 1 ? (const void*)s->pressure
                  : (const void*)s->density;
}

static hid_t var_type(int v) { return v == 1 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE; }

/* Contiguous datasets whose fill value is never written: the data overwrites all of it. */
static hid_t dataset_properties(void) {
  hid_t dcpl = check_h5(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
  check_h5(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  return dcpl;
}

static void hdf5_fpp_write(sim_state* s, int phase) {
  char path[4096];
  snprintf(path, sizeof path, "%s/fpp_p%04d_r%05d.h5", s->opt->output, phase, s->rank);
  hid_t file = check_h5(H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "H5Fcreate");
  hsize_t three = 3;
  hid_t attr_space = check_h5(H5Screate_simple(1, &three, NULL), "H5Screate_simple");
  hid_t attr =
      check_h5(H5Acreate2(file, "position", H5T_NATIVE_INT64, attr_space, H5P_DEFAULT, H5P_DEFAULT),
               "H5Acreate2");
  check_h5(H5Awrite(attr, H5T_NATIVE_INT64, s->off), "H5Awrite");
  H5Aclose(attr);
  H5Sclose(attr_space);
  hsize_t n[3] = {(hsize_t)s->n[0], (hsize_t)s->n[1], (hsize_t)s->n[2]};
  hid_t dcpl = dataset_properties();
  for (int v = 0; v < s->opt->vars; ++v) {
    hid_t fspace = check_h5(H5Screate_simple(3, n, NULL), "H5Screate_simple");
    hid_t mspace = memory_space(s, v);
    hid_t dset = check_h5(
        H5Dcreate2(file, var_names[v], var_type(v), fspace, H5P_DEFAULT, dcpl, H5P_DEFAULT),
        "H5Dcreate2");
    check_h5(H5Dwrite(dset, var_type(v), mspace, fspace, H5P_DEFAULT, var_data(s, v)), "H5Dwrite");
    H5Dclose(dset);
    H5Sclose(mspace);
    H5Sclose(fspace);
  }
  H5Pclose(dcpl);
  check_h5(H5Fclose(file), "H5Fclose");
}

static void phdf5_write(sim_state* s, int phase) {
  char path[4096];
  snprintf(path, sizeof path, "%s/coll_p%04d.h5", s->opt->output, phase);
  hid_t fapl = check_h5(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  check_h5(H5Pset_fapl_mpio(fapl, s->comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
  /* Metadata read and written collectively: what HDF5 recommends at scale. */
  check_h5(H5Pset_all_coll_metadata_ops(fapl, 1), "H5Pset_all_coll_metadata_ops");
  check_h5(H5Pset_coll_metadata_write(fapl, 1), "H5Pset_coll_metadata_write");
  hid_t file = check_h5(H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "H5Fcreate");
  H5Pclose(fapl);
  hid_t dxpl = check_h5(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
  check_h5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
  hsize_t g[3] = {(hsize_t)s->g[0], (hsize_t)s->g[1], (hsize_t)s->g[2]};
  hsize_t n[3] = {(hsize_t)s->n[0], (hsize_t)s->n[1], (hsize_t)s->n[2]};
  hsize_t off[3] = {(hsize_t)s->off[0], (hsize_t)s->off[1], (hsize_t)s->off[2]};
  hid_t dcpl = dataset_properties();
  for (int v = 0; v < s->opt->vars; ++v) {
    hid_t fspace = check_h5(H5Screate_simple(3, g, NULL), "H5Screate_simple");
    hid_t dset = check_h5(
        H5Dcreate2(file, var_names[v], var_type(v), fspace, H5P_DEFAULT, dcpl, H5P_DEFAULT),
        "H5Dcreate2");
    check_h5(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, off, NULL, n, NULL),
             "H5Sselect_hyperslab");
    hid_t mspace = memory_space(s, v);
    check_h5(H5Dwrite(dset, var_type(v), mspace, fspace, dxpl, var_data(s, v)), "H5Dwrite");
    H5Dclose(dset);
    H5Sclose(mspace);
    H5Sclose(fspace);
  }
  H5Pclose(dcpl);
  H5Pclose(dxpl);
  check_h5(H5Fclose(file), "H5Fclose");
}

#ifdef PROXY_HAVE_ADIOS2
static void check_adios(int failed, const char* call) {
  if (failed) die("ADIOS2 call failed", call);
}

/* One BP5 engine per rank on its own file, opened once for the whole run (the wheel is a
 * serial build). Variables carry their global shape and position so that the files of all
 * ranks together describe the global arrays. */
static void adios2_setup(sim_state* s, int async) {
  s->adios = adios2_init_serial();
  check_adios(!s->adios, "adios2_init_serial");
  s->io = adios2_declare_io(s->adios, "proxy");
  check_adios(!s->io, "adios2_declare_io");
  check_adios(adios2_set_engine(s->io, "BP5") != adios2_error_none, "adios2_set_engine");
  /* Min/max per block are not needed by any reader of this output. */
  check_adios(adios2_set_parameter(s->io, "StatsLevel", "0") != adios2_error_none,
              "adios2_set_parameter(StatsLevel)");
  check_adios(
      adios2_set_parameter(s->io, "AsyncWrite", async ? "true" : "false") != adios2_error_none,
      "adios2_set_parameter(AsyncWrite)");
  size_t shape[3], start[3], count[3], mstart[3] = {1, 1, 1}, mcount[3];
  for (int d = 0; d < 3; ++d) {
    shape[d] = (size_t)s->g[d];
    start[d] = (size_t)s->off[d];
    count[d] = (size_t)s->n[d];
    mcount[d] = (size_t)s->n[d] + 2;
  }
  for (int v = 0; v < s->opt->vars; ++v) {
    s->avars[v] =
        adios2_define_variable(s->io, var_names[v], v == 1 ? adios2_type_float : adios2_type_double,
                               3, shape, start, count, adios2_constant_dims_true);
    check_adios(!s->avars[v], "adios2_define_variable");
  }
  check_adios(adios2_set_memory_selection(s->avars[0], 3, mstart, mcount) != adios2_error_none,
              "adios2_set_memory_selection");
  char path[4096];
  snprintf(path, sizeof path, "%s/bp5_r%05d.bp", s->opt->output, s->rank);
  s->engine = adios2_open(s->io, path, adios2_mode_write);
  check_adios(!s->engine, "adios2_open");
}

static void adios2_write(sim_state* s) {
  adios2_step_status status;
  check_adios(
      adios2_begin_step(s->engine, adios2_step_mode_append, -1.0f, &status) != adios2_error_none,
      "adios2_begin_step");
  for (int v = 0; v < s->opt->vars; ++v)
    check_adios(adios2_put(s->engine, s->avars[v], var_data(s, v), adios2_mode_deferred) !=
                    adios2_error_none,
                "adios2_put");
  check_adios(adios2_end_step(s->engine) != adios2_error_none, "adios2_end_step");
}

static void adios2_teardown(sim_state* s) {
  check_adios(adios2_close(s->engine) != adios2_error_none, "adios2_close");
  adios2_finalize(s->adios);
}
#endif

static void write_phase(sim_state* s, int phase) {
  switch (s->opt->backend) {
    case backend_none:
      break;
    case backend_sidecore:
      sidecore_write(s);
      break;
    case backend_hdf5_fpp:
      hdf5_fpp_write(s, phase);
      break;
    case backend_phdf5:
      phdf5_write(s, phase);
      break;
#ifdef PROXY_HAVE_ADIOS2
    case backend_adios2:
    case backend_adios2_async:
      adios2_write(s);
      break;
#else
    default:
      break;
#endif
  }
}

/* Waits until every phase is stored (or handed to the file system) by the back-end. */
static void flush_backend(sim_state* s) {
  switch (s->opt->backend) {
    case backend_sidecore:
      check_damaris(damaris_sync(), "damaris_sync");
      break;
#ifdef PROXY_HAVE_ADIOS2
    case backend_adios2:
    case backend_adios2_async:
      adios2_teardown(s);
      break;
#endif
    default:
      break;
  }
}

static void json_array(FILE* f, const double* values, int count) {
  fputc('[', f);
  for (int i = 0; i < count; ++i) fprintf(f, "%s%.9g", i ? ", " : "", values[i]);
  fputc(']', f);
}

/* Minor page faults taken so far by the calling thread (by the whole process where
 * RUSAGE_THREAD does not exist). Those of a write phase show a back-end copying into memory it
 * has just mapped: every 4 KiB page of it is faulted in and zeroed during the copy. */
static double thread_minor_faults(void) {
  struct rusage u;
#ifdef RUSAGE_THREAD
  if (getrusage(RUSAGE_THREAD, &u) == 0) return (double)u.ru_minflt;
#endif
  if (getrusage(RUSAGE_SELF, &u) == 0) return (double)u.ru_minflt;
  return 0.0;
}

static void json_matrix(FILE* f, const char* name, const double* values, int rows, int cols) {
  fprintf(f, "  \"%s\": [\n", name);
  for (int r = 0; r < rows; ++r) {
    fputs("    ", f);
    json_array(f, values + (size_t)r * cols, cols);
    fputs(r + 1 < rows ? ",\n" : "\n", f);
  }
  fputs("  ],\n", f);
}

int main(int argc, char** argv) {
  options opt;
  int provided = 0;
  int parsed = parse_options(argc, argv, &opt);
  MPI_Init_thread(&argc, &argv, opt.thread_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                  &provided);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (parsed != 0) {
    if (world_rank == 0) usage();
    MPI_Finalize();
    return 2;
  }

  MPI_Comm sim_comm = MPI_COMM_WORLD;
  if (opt.backend == backend_sidecore) {
    check_damaris(damaris_initialize(opt.xml, MPI_COMM_WORLD), "damaris_initialize");
    int is_client = 0;
    check_damaris(damaris_start(&is_client), "damaris_start");
    if (!is_client) {
      check_damaris(damaris_finalize(), "damaris_finalize");
      MPI_Finalize();
      return 0;
    }
    check_damaris(damaris_client_comm_get(&sim_comm), "damaris_client_comm_get");
  }

  sim_state s = {.opt = &opt};
  MPI_Comm_size(sim_comm, &s.size);
  MPI_Dims_create(s.size, 3, s.dims);
  int periods[3] = {0, 0, 0};
  MPI_Cart_create(sim_comm, 3, s.dims, periods, 0, &s.comm);
  MPI_Comm_rank(s.comm, &s.rank);
  MPI_Cart_coords(s.comm, s.rank, 3, s.coords);
  for (int d = 0; d < 3; ++d) {
    if (opt.global_set) {
      if (opt.global[d] % s.dims[d] != 0) die("--global is not divisible by the rank grid", NULL);
      s.n[d] = opt.global[d] / s.dims[d];
    } else {
      s.n[d] = opt.local[d];
    }
    s.g[d] = s.n[d] * s.dims[d];
    s.off[d] = (int64_t)s.coords[d] * s.n[d];
  }
  init_fields(&s);
  size_t ghosted = (size_t)(s.n[0] + 2) * (s.n[1] + 2) * (s.n[2] + 2);
  double* other = calloc(ghosted, sizeof(double));
  if (!other) die("out of memory", NULL);
  MPI_Datatype faces[3][4];
  make_face_types(&s, faces);

  if (opt.backend != backend_none && opt.backend != backend_sidecore && s.rank == 0)
    make_dir(opt.output);
  MPI_Barrier(s.comm);
  if (opt.backend == backend_sidecore) sidecore_setup(&s);
#ifdef PROXY_HAVE_ADIOS2
  if (opt.backend == backend_adios2 || opt.backend == backend_adios2_async)
    adios2_setup(&s, opt.backend == backend_adios2_async);
#endif

  /* The same bytes copied into a warm private buffer after each phase: the floor any
   * back-end that takes a copy can reach. */
  size_t phase_bytes = 0;
  for (int v = 0; v < opt.vars; ++v) phase_bytes += var_bytes(&s, v);
  char* scratch = malloc(phase_bytes);
  if (!scratch) die("out of memory", NULL);
  memset(scratch, 1, phase_bytes);

  const int phases = opt.iterations / opt.write_period;
  double* write_time = calloc((size_t)phases + 1, sizeof(double));
  double* memcpy_time = calloc((size_t)phases + 1, sizeof(double));
  double* write_faults = calloc((size_t)phases + 1, sizeof(double));
  double* end_time = calloc((size_t)phases + 1, sizeof(double));
  double compute_time = 0.0;
  double comm_time = 0.0, comm_max = 0.0; /* the all-to-all: in all, and the slowest one */
  char* send = NULL;
  char* receive = NULL;
  if (opt.alltoall > 0) {
    send = malloc((size_t)opt.alltoall * (size_t)s.size);
    receive = malloc((size_t)opt.alltoall * (size_t)s.size);
    if (!send || !receive) die("out of memory", NULL);
    memset(send, 7, (size_t)opt.alltoall * (size_t)s.size);
  }
  const int marks = opt.backend == backend_sidecore;

  MPI_Barrier(s.comm);
  const double t_start = MPI_Wtime();
  int phase = 0;
  for (int it = 0; it < opt.iterations; ++it) {
    if (opt.alltoall > 0) {
      double c0 = MPI_Wtime();
      MPI_Alltoall(send, (int)opt.alltoall, MPI_BYTE, receive, (int)opt.alltoall, MPI_BYTE, s.comm);
      double c = MPI_Wtime() - c0;
      comm_time += c;
      if (c > comm_max) comm_max = c;
    }
    if (marks) check_damaris(sidecore_compute_begin(), "sidecore_compute_begin");
    double t0 = MPI_Wtime();
    for (int k = 0; k < opt.sweeps; ++k) {
      exchange_halos(&s, faces);
      double* previous = s.temperature;
      stencil_step(&s, other);
      other = previous;
    }
    compute_time += MPI_Wtime() - t0;
    if (marks) check_damaris(sidecore_compute_end(), "sidecore_compute_end");
    if ((it + 1) % opt.write_period == 0) {
      /* Counted outside the timed calls. */
      const double faults = thread_minor_faults();
      const double alloc_seconds = opt.alloc_derived ? sidecore_alloc_derived(&s) : 0.0;
      if (!opt.alloc_derived) derive_fields(&s);
      double w0 = MPI_Wtime();
      write_phase(&s, phase);
      double w1 = MPI_Wtime();
      write_faults[phase] = thread_minor_faults() - faults;
      end_time[phase] = sidecore_end_time;
      const double m0 = MPI_Wtime();
      size_t at = 0;
      for (int v = 0; v < opt.vars; ++v) {
        const char* src = v == 1 ? (const char*)s.pressure : v == 2 ? (const char*)s.density : NULL;
        if (v == 0) {
          /* The interior rows of the ghosted field, as every back-end has to gather them. */
          for (int z = 1; z <= s.n[0]; ++z)
            for (int y = 1; y <= s.n[1]; ++y) {
              size_t row = (size_t)s.n[2] * sizeof(double);
              memcpy(scratch + at, &s.temperature[ghosted_index(&s, z, y, 1)], row);
              at += row;
            }
        } else {
          memcpy(scratch + at, src, var_bytes(&s, v));
          at += var_bytes(&s, v);
        }
      }
      double w2 = MPI_Wtime();
      write_time[phase] = w1 - w0 + alloc_seconds;
      memcpy_time[phase] = w2 - m0;
      ++phase;
    }
  }
  const double t_loop = MPI_Wtime();
  flush_backend(&s);
  const double t_flushed = MPI_Wtime();
  MPI_Barrier(s.comm);
  const double t_end = MPI_Wtime();

  /* Rank 0 gathers every rank's timings. */
  double mine[3] = {t_loop - t_start, t_flushed - t_loop, t_end - t_start};
  double* all_write = NULL;
  double* all_memcpy = NULL;
  double* all_faults = NULL;
  double* all_end = NULL;
  double* all_run = NULL;
  double* all_compute = NULL;
  double* all_comm = NULL;
  double mine_comm[2] = {comm_time, comm_max};
  if (s.rank == 0) {
    all_write = malloc(sizeof(double) * (size_t)s.size * (phases + 1));
    all_memcpy = malloc(sizeof(double) * (size_t)s.size * (phases + 1));
    all_faults = malloc(sizeof(double) * (size_t)s.size * (phases + 1));
    all_end = malloc(sizeof(double) * (size_t)s.size * (phases + 1));
    all_run = malloc(sizeof(double) * 3 * (size_t)s.size);
    all_compute = malloc(sizeof(double) * (size_t)s.size);
    all_comm = malloc(sizeof(double) * 2 * (size_t)s.size);
  }
  MPI_Gather(write_time, phases, MPI_DOUBLE, all_write, phases, MPI_DOUBLE, 0, s.comm);
  MPI_Gather(memcpy_time, phases, MPI_DOUBLE, all_memcpy, phases, MPI_DOUBLE, 0, s.comm);
  MPI_Gather(write_faults, phases, MPI_DOUBLE, all_faults, phases, MPI_DOUBLE, 0, s.comm);
  MPI_Gather(end_time, phases, MPI_DOUBLE, all_end, phases, MPI_DOUBLE, 0, s.comm);
  MPI_Gather(mine, 3, MPI_DOUBLE, all_run, 3, MPI_DOUBLE, 0, s.comm);
  MPI_Gather(&compute_time, 1, MPI_DOUBLE, all_compute, 1, MPI_DOUBLE, 0, s.comm);
  MPI_Gather(mine_comm, 2, MPI_DOUBLE, all_comm, 2, MPI_DOUBLE, 0, s.comm);
  if (s.rank == 0) {
    FILE* f = opt.json ? fopen(opt.json, "w") : stdout;
    if (!f) die("cannot write the JSON file", opt.json);
    fprintf(f, "{\n  \"backend\": \"%s\",\n  \"xml\": \"%s\",\n", backend_names[opt.backend],
            opt.xml ? opt.xml : "");
    fprintf(f, "  \"ranks\": %d,\n  \"rank_grid\": [%d, %d, %d],\n", s.size, s.dims[0], s.dims[1],
            s.dims[2]);
    fprintf(f, "  \"local\": [%d, %d, %d],\n  \"global\": [%d, %d, %d],\n", s.n[0], s.n[1], s.n[2],
            s.g[0], s.g[1], s.g[2]);
    fputs("  \"variables\": [", f);
    for (int v = 0; v < opt.vars; ++v) fprintf(f, "%s\"%s\"", v ? ", " : "", var_names[v]);
    fprintf(f, "],\n  \"iterations\": %d,\n  \"write_period\": %d,\n  \"sweeps\": %d,\n",
            opt.iterations, opt.write_period, opt.sweeps);
    fprintf(f, "  \"alpha\": %.17g,\n  \"phases\": %d,\n  \"bytes_per_rank_per_phase\": %zu,\n",
            alpha, phases, phase_bytes);
    fprintf(f, "  \"mpi_thread_level\": %d,\n  \"alloc_derived\": %s,\n", provided,
            opt.alloc_derived ? "true" : "false");
    json_matrix(f, "write_time", all_write, s.size, phases);
    json_matrix(f, "memcpy_time", all_memcpy, s.size, phases);
    json_matrix(f, "write_faults", all_faults, s.size, phases);
    if (opt.backend == backend_sidecore)
      json_matrix(f, "end_iteration_time", all_end, s.size, phases);
    double* column = malloc(sizeof(double) * (size_t)s.size);
    const char* run_names[3] = {"loop_time", "flush_time", "total_time"};
    for (int k = 0; k < 3; ++k) {
      for (int r = 0; r < s.size; ++r) column[r] = all_run[3 * r + k];
      fprintf(f, "  \"%s\": ", run_names[k]);
      json_array(f, column, s.size);
      fputs(",\n", f);
    }
    free(column);
    fputs("  \"compute_time\": ", f);
    json_array(f, all_compute, s.size);
    fprintf(f, ",\n  \"alltoall_bytes\": %ld,\n", opt.alltoall);
    double* comm_column = malloc(sizeof(double) * (size_t)s.size);
    for (int k = 0; k < 2; ++k) {
      for (int r = 0; r < s.size; ++r) comm_column[r] = all_comm[2 * r + k];
      fprintf(f, "  \"%s\": ", k == 0 ? "comm_time" : "comm_max");
      json_array(f, comm_column, s.size);
      fputs(k == 0 ? ",\n" : "\n}\n", f);
    }
    free(comm_column);
    if (f != stdout) fclose(f);
    free(all_write);
    free(all_memcpy);
    free(all_faults);
    free(all_end);
    free(all_run);
    free(all_compute);
    free(all_comm);
  }
  free(send);
  free(receive);

  for (int d = 0; d < 3; ++d)
    for (int p = 0; p < 4; ++p) MPI_Type_free(&faces[d][p]);
  free(write_time);
  free(memcpy_time);
  free(write_faults);
  free(end_time);
  free(scratch);
  free(other);
  free(s.temperature);
  free(s.pressure);
  free(s.density);
  MPI_Comm_free(&s.comm);
  if (opt.backend == backend_sidecore) {
    check_damaris(damaris_stop(), "damaris_stop");
    check_damaris(damaris_finalize(), "damaris_finalize");
  }
  MPI_Finalize();
  return 0;
}
