/* Irregular blocks, written then read back.
 *
 *   irregular_blocks write <config.xml> <iterations>
 *     Every client tiles its stripe of rows of the NY x NX field with blocks whose number,
 *     ids, extents and positions change every iteration (sidecore_set_block_extents,
 *     damaris_set_block_position), and writes per-block tracer lists of varying lengths; at
 *     iteration 0 it also writes its rows of "grid", a time-invariant variable.
 *
 *   irregular_blocks check <prefix> <iterations> <clients>
 *     Any number of ranks, none of them Sidecore clients: each reads every iteration through
 *     sidecore/read.h and compares every value with what the writers wrote, by block (the
 *     block list must be exactly the one the writers made) and by region (its own stripe in
 *     the new decomposition, plus regions that cut across blocks).
 *
 * The values are formulas of (iteration, global index) or (iteration, source, block, index),
 * and the tilings come from a generator seeded by (iteration, client), so both sides agree. */
#include <Damaris.h>
#include <mpi.h>
#include <sidecore/blocks.h>
#include <sidecore/read.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NY = 60, NX = 50, MAX_TRACERS = 512 };

typedef struct {
  int32_t id;
  int64_t extents[2];
  int64_t position[2];
} tile;

typedef struct {
  uint64_t state;
} generator;

static uint32_t next(generator* g) {
  g->state = g->state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(g->state >> 33);
}

static void stripe_of(int client, int clients, int64_t* row0, int64_t* rows) {
  *row0 = (int64_t)NY * client / clients;
  *rows = (int64_t)NY * (client + 1) / clients - *row0;
}

/* The tiles of one client in one iteration: its stripe cut into bands of 1-7 rows, each band
 * into pieces of 1-13 columns, except the first two bands, whole rows (packed one after the
 * other, they join into one box of the master file); ids are sparse and change with the
 * iteration. */
static int tiling(int iteration, int client, int clients, tile* tiles) {
  generator g = {(uint64_t)iteration * 1000003u + (uint64_t)client * 7919u + 17u};
  int64_t row0, rows;
  stripe_of(client, clients, &row0, &rows);
  int n = 0;
  for (int64_t y = row0, band = 0; y < row0 + rows; ++band) {
    int64_t h = 1 + next(&g) % 7;
    if (y + h > row0 + rows) h = row0 + rows - y;
    for (int64_t x = 0; x < NX;) {
      int64_t w = band < 2 ? NX : 1 + next(&g) % 13;
      if (x + w > NX) w = NX - x;
      tiles[n].id = n * 5 + iteration % 5 + (iteration % 2 ? 100000 : 0);
      tiles[n].extents[0] = h;
      tiles[n].extents[1] = w;
      tiles[n].position[0] = y;
      tiles[n].position[1] = x;
      ++n;
      x += w;
    }
    y += h;
  }
  return n;
}

static double field_value(int iteration, int64_t y, int64_t x) {
  return iteration * 100000.0 + y * 1000.0 + x + 0.25;
}

/* Tracer lists: 0-5 lists per client, ids 7, 18, 29... shifted by the iteration. */
static int tracer_lists(int iteration, int client, int32_t* ids, int64_t* lengths) {
  generator g = {(uint64_t)iteration * 31u + (uint64_t)client * 1009u + 5u};
  int n = (int)(next(&g) % 6);
  for (int i = 0; i < n; ++i) {
    ids[i] = 7 + 11 * i + iteration;
    lengths[i] = 1 + next(&g) % MAX_TRACERS;
  }
  return n;
}

static double tracer_value(int iteration, int source, int32_t block, int64_t i) {
  return iteration * 1.0e7 + source * 1.0e5 + block * 100.0 + i * 0.5;
}

static int failures = 0;
#define CHECK(cond, ...)                     \
  do {                                       \
    if (!(cond)) {                           \
      fprintf(stderr, "FAIL: " __VA_ARGS__); \
      fprintf(stderr, "\n");                 \
      if (++failures > 20) abort();          \
    }                                        \
  } while (0)
#define OK(call)                                                                             \
  do {                                                                                       \
    int rc_ = (call);                                                                        \
    if (rc_ != DAMARIS_OK) {                                                                 \
      fprintf(stderr, "FAIL: %s returned %d: %s\n", #call, rc_, sidecore_read_last_error()); \
      abort();                                                                               \
    }                                                                                        \
  } while (0)

static double grid_value(int64_t row) { return 0.5 * (double)row - 3.0; }

static int write_run(const char* config, int iterations) {
  if (damaris_initialize(config, MPI_COMM_WORLD) != DAMARIS_OK) return 1;
  int is_client = 0;
  damaris_start(&is_client);
  if (is_client) {
    MPI_Comm comm;
    damaris_client_comm_get(&comm);
    int client, clients;
    MPI_Comm_rank(comm, &client);
    MPI_Comm_size(comm, &clients);
    static tile tiles[NY * NX];
    static double data[NY * NX];
    static double list[MAX_TRACERS];
    for (int it = 0; it < iterations; ++it) {
      const int n = tiling(it, client, clients, tiles);
      for (int t = 0; t < n; ++t) {
        const tile* b = &tiles[t];
        for (int64_t y = 0; y < b->extents[0]; ++y)
          for (int64_t x = 0; x < b->extents[1]; ++x)
            data[y * b->extents[1] + x] = field_value(it, b->position[0] + y, b->position[1] + x);
        if (sidecore_set_block_extents("field", b->id, b->extents) != DAMARIS_OK ||
            damaris_set_block_position("field", b->id, b->position) != DAMARIS_OK ||
            damaris_write_block("field", b->id, data) != DAMARIS_OK) {
          fprintf(stderr, "FAIL: write of block %d: %s\n", b->id, damaris_last_error_message());
          return 1;
        }
      }
      int32_t ids[8];
      int64_t lengths[8];
      const int lists = tracer_lists(it, client, ids, lengths);
      for (int l = 0; l < lists; ++l) {
        /* Zero-copy for these: alloc, fill, commit; every other one allocated with the call
         * that also says what it reserved. */
        void* target = NULL;
        int32_t type = -1, ndims = -1;
        int64_t extents[8] = {0};
        const int rc = sidecore_set_block_extents("tracers", ids[l], &lengths[l]) != DAMARIS_OK ? -1
                       : l % 2 ? sidecore_alloc_block_shaped("tracers", ids[l], &target, &type,
                                                             &ndims, extents)
                               : damaris_alloc_block("tracers", ids[l], &target);
        if (rc != DAMARIS_OK) {
          fprintf(stderr, "FAIL: alloc of list %d: %s\n", ids[l], damaris_last_error_message());
          return 1;
        }
        if (l % 2 && (type != DAMARIS_TYPE_DOUBLE || ndims != 1 || extents[0] != lengths[l])) {
          fprintf(stderr,
                  "FAIL: list %d allocated as type %d, %d dimension(s), %lld values; "
                  "expected double, 1, %lld\n",
                  ids[l], (int)type, (int)ndims, (long long)extents[0], (long long)lengths[l]);
          return 1;
        }
        for (int64_t i = 0; i < lengths[l]; ++i)
          ((double*)target)[i] = tracer_value(it, client, ids[l], i);
        if (damaris_commit_block("tracers", ids[l]) != DAMARIS_OK) return 1;
      }
      (void)list;
      if (it == 0) {
        int64_t row0, rows;
        stripe_of(client, clients, &row0, &rows);
        for (int64_t y = 0; y < rows; ++y) data[y] = grid_value(row0 + y);
        if (sidecore_set_block_extents("grid", 0, &rows) != DAMARIS_OK ||
            damaris_set_block_position("grid", 0, &row0) != DAMARIS_OK ||
            damaris_write_block("grid", 0, data) != DAMARIS_OK) {
          fprintf(stderr, "FAIL: write of grid: %s\n", damaris_last_error_message());
          return 1;
        }
      }
      damaris_end_iteration();
    }
    damaris_stop();
  }
  return damaris_finalize() == DAMARIS_OK ? 0 : 1;
}

static int compare_tiles(const void* a, const void* b) {
  const sidecore_block_info* x = a;
  const sidecore_block_info* y = b;
  if (x->source != y->source) return x->source < y->source ? -1 : 1;
  return x->block < y->block ? -1 : x->block > y->block;
}

static void check_iteration(const char* prefix, int it, int clients, int rank, int ranks) {
  sidecore_reader* r = NULL;
  OK(sidecore_read_open(prefix, it, &r));
  int32_t complete = 0;
  OK(sidecore_read_complete(r, &complete));
  CHECK(complete == 1, "iteration %d is not complete", it);

  /* The field's blocks: exactly the tiles every client made, each with its values. */
  static tile tiles[NY * NX];
  static double values[NY * NX];
  int32_t type = 0, ndims = 0, count = 0;
  int64_t global[SIDECORE_MAX_DIMENSIONS];
  int32_t variables = 0;
  OK(sidecore_read_variable_count(r, &variables));
  CHECK(variables == 3, "iteration %d: %d variables, expected 3", it, variables);
  int found_field = 0;
  for (int32_t v = 0; v < variables; ++v) {
    const char* name = NULL;
    int32_t blocks = 0;
    OK(sidecore_read_variable(r, v, &name, &type, &ndims, global, &blocks));
    if (strcmp(name, "field") != 0) continue;
    found_field = 1;
    count = blocks;
    CHECK(type == DAMARIS_TYPE_DOUBLE && ndims == 2 && global[0] == NY && global[1] == NX,
          "field: type %d, %d dims, global %lld x %lld", type, ndims, (long long)global[0],
          (long long)global[1]);
  }
  CHECK(found_field, "iteration %d has no variable 'field'", it);
  int expected = 0;
  for (int c = 0; c < clients; ++c) expected += tiling(it, c, clients, tiles);
  CHECK(count == expected, "iteration %d: %d blocks of field, the writers wrote %d", it, count,
        expected);
  for (int c = 0, index = 0; c < clients; ++c) {
    const int n = tiling(it, c, clients, tiles);
    static sidecore_block_info want[NY * NX];
    for (int t = 0; t < n; ++t) {
      want[t].source = c;
      want[t].block = tiles[t].id;
      memcpy(want[t].extents, tiles[t].extents, sizeof tiles[t].extents);
      memcpy(want[t].position, tiles[t].position, sizeof tiles[t].position);
    }
    qsort(want, (size_t)n, sizeof want[0], compare_tiles);
    for (int t = 0; t < n && index < count; ++t, ++index) {
      sidecore_block_info got;
      OK(sidecore_read_block_info(r, "field", index, &got));
      CHECK(got.source == c && got.block == want[t].block && got.ndims == 2 &&
                got.extents[0] == want[t].extents[0] && got.extents[1] == want[t].extents[1] &&
                got.position[0] == want[t].position[0] && got.position[1] == want[t].position[1],
            "iteration %d, field block #%d: source %d id %d %lldx%lld at (%lld,%lld); expected "
            "source %d id %d %lldx%lld at (%lld,%lld)",
            it, index, got.source, got.block, (long long)got.extents[0], (long long)got.extents[1],
            (long long)got.position[0], (long long)got.position[1], c, want[t].block,
            (long long)want[t].extents[0], (long long)want[t].extents[1],
            (long long)want[t].position[0], (long long)want[t].position[1]);
      /* Each rank checks the values of a share of the blocks. */
      if (index % ranks != rank) continue;
      OK(sidecore_read_block(r, "field", c, want[t].block, DAMARIS_TYPE_DOUBLE, values,
                             sizeof values));
      for (int64_t y = 0; y < want[t].extents[0]; ++y)
        for (int64_t x = 0; x < want[t].extents[1]; ++x) {
          const double w = field_value(it, want[t].position[0] + y, want[t].position[1] + x);
          const double g = values[y * want[t].extents[1] + x];
          CHECK(g == w, "iteration %d, block %d of source %d, element (%lld,%lld): %g, expected %g",
                it, want[t].block, c, (long long)y, (long long)x, g, w);
        }
    }
  }

  /* Regions: this rank's stripe of a new decomposition, then regions cutting across blocks. */
  int64_t row0, rows;
  stripe_of(rank, ranks, &row0, &rows);
  int64_t start[2] = {row0, 0}, extent[2] = {rows, NX};
  OK(sidecore_read_region(r, "field", start, extent, DAMARIS_TYPE_DOUBLE, values, sizeof values));
  for (int64_t y = 0; y < rows; ++y)
    for (int64_t x = 0; x < NX; ++x)
      CHECK(values[y * NX + x] == field_value(it, row0 + y, x),
            "iteration %d, region row %lld col %lld: %g, expected %g", it, (long long)(row0 + y),
            (long long)x, values[y * NX + x], field_value(it, row0 + y, x));
  generator g = {(uint64_t)(it * 977 + rank)};
  for (int k = 0; k < 8; ++k) {
    start[0] = next(&g) % NY;
    start[1] = next(&g) % NX;
    extent[0] = 1 + next(&g) % (NY - start[0]);
    extent[1] = 1 + next(&g) % (NX - start[1]);
    float single[NY * NX];
    OK(sidecore_read_region(r, "field", start, extent, DAMARIS_TYPE_FLOAT, single, sizeof single));
    for (int64_t y = 0; y < extent[0]; ++y)
      for (int64_t x = 0; x < extent[1]; ++x) {
        const float w = (float)field_value(it, start[0] + y, start[1] + x);
        CHECK(single[y * extent[1] + x] == w,
              "iteration %d, region at (%lld,%lld): %g, expected %g", it, (long long)(start[0] + y),
              (long long)(start[1] + x), single[y * extent[1] + x], w);
      }
  }

  /* Tracer lists: every list of every client, with its length and values. */
  for (int c = rank; c < clients; c += ranks) {
    int32_t ids[8];
    int64_t lengths[8];
    const int lists = tracer_lists(it, c, ids, lengths);
    for (int l = 0; l < lists; ++l) {
      double list[MAX_TRACERS];
      OK(sidecore_read_block(r, "tracers", c, ids[l], DAMARIS_TYPE_DOUBLE, list, sizeof list));
      for (int64_t i = 0; i < lengths[l]; ++i)
        CHECK(list[i] == tracer_value(it, c, ids[l], i), "iteration %d, tracers %d of %d[%lld]", it,
              ids[l], c, (long long)i);
    }
  }
  int64_t total_lists = 0;
  for (int c = 0; c < clients; ++c) {
    int32_t ids[8];
    int64_t lengths[8];
    total_lists += tracer_lists(it, c, ids, lengths);
  }
  int32_t listed = -1;
  for (int32_t v = 0; v < variables; ++v) {
    const char* name = NULL;
    int32_t blocks = 0;
    OK(sidecore_read_variable(r, v, &name, NULL, NULL, NULL, &blocks));
    if (strcmp(name, "tracers") == 0) listed = blocks;
  }
  if (total_lists > 0)
    CHECK(listed == total_lists, "iteration %d: %d tracer lists, expected %lld", it, listed,
          (long long)total_lists);

  /* The time-invariant grid, stored at iteration 0, is part of every iteration. */
  int64_t grid_start = 0, grid_count = NY;
  double grid[NY];
  OK(sidecore_read_region(r, "grid", &grid_start, &grid_count, DAMARIS_TYPE_DOUBLE, grid,
                          sizeof grid));
  for (int64_t y = 0; y < NY; ++y)
    CHECK(grid[y] == grid_value(y), "iteration %d, grid[%lld]: %g, expected %g", it, (long long)y,
          grid[y], grid_value(y));

  /* Errors name what is wrong. */
  CHECK(sidecore_read_block(r, "field", 0, -3, DAMARIS_TYPE_DOUBLE, values, sizeof values) ==
            DAMARIS_BLOCK_NOT_FOUND,
        "block -3 was found");
  CHECK(sidecore_read_block(r, "nope", 0, 0, DAMARIS_TYPE_DOUBLE, values, sizeof values) ==
            DAMARIS_UNDEFINED_VARIABLE,
        "variable 'nope' was found");
  start[0] = 0;
  start[1] = 0;
  extent[0] = NY + 1;
  extent[1] = 1;
  CHECK(sidecore_read_region(r, "field", start, extent, DAMARIS_TYPE_DOUBLE, values,
                             sizeof values) == DAMARIS_INVALID_DIMENSIONS,
        "a region past the global extents was read");
  sidecore_read_close(r);
}

static int check_run(const char* prefix, int iterations, int clients) {
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int32_t stored[64], count = 0;
  OK(sidecore_read_iterations(prefix, stored, 64, &count));
  CHECK(count == iterations, "%d iterations stored, expected %d", count, iterations);
  for (int it = 0; it < iterations; ++it) check_iteration(prefix, it, clients, rank, ranks);
  sidecore_reader* r = NULL;
  CHECK(sidecore_read_open(prefix, iterations + 5, &r) == DAMARIS_ARGUMENT_ERROR && r == NULL,
        "an iteration that was never stored opened");
  CHECK(strstr(sidecore_read_last_error(), "stored iterations") != NULL, "message: %s",
        sidecore_read_last_error());
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("checked %d iterations of %d clients on %d ranks: %s\n", iterations, clients, ranks,
           all ? "FAILED" : "ok");
  return all ? 1 : 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 2;
  if (argc == 4 && strcmp(argv[1], "write") == 0)
    rc = write_run(argv[2], atoi(argv[3]));
  else if (argc == 5 && strcmp(argv[1], "check") == 0)
    rc = check_run(argv[2], atoi(argv[3]), atoi(argv[4]));
  else
    fprintf(stderr,
            "usage: %s write <config.xml> <iterations> | check <prefix> <iterations> <clients>\n",
            argv[0]);
  MPI_Finalize();
  return rc;
}
