/* An action plugin for Sidecore: for every iteration it is given, the count, minimum, maximum and
 * mean of each of its variables over every block of every writer (interior elements only, ghost
 * zones left out), combined with MPI_Allreduce on the writers' communicator; the first writer
 * appends one CSV line per variable and iteration:
 *
 *   iteration,variable,count,min,max,mean
 *   0,temperature,48,0,1047,523.5
 *
 * Events routed to it (<event name="..." plugin="stats"/>) are appended, one line each, to
 * <Output>.events.<writer>: name,source,iteration,scope.
 *
 * Options: Output (required): the CSV file, created or truncated by the first writer.
 *
 * When writers cannot call MPI where they run (background I/O threads without
 * MPI_THREAD_MULTIPLE: comm is MPI_COMM_SELF while writer_count > 1), each writer keeps its
 * partial results and they are combined in finish(), over finish_comm. */
#include <math.h>
#include <sidecore/plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one writer has seen of one variable in one iteration. */
typedef struct partial {
  double min;
  double max;
  double sum;
  double count;
} partial;

typedef struct stats {
  char* output;
  int writer_index;
  int writer_count;
  MPI_Comm comm;        /* usable in on_iteration */
  MPI_Comm finish_comm; /* MPI_COMM_NULL, or the writers' communicator for finish() */
  int deferred;         /* combine in finish(): comm does not span the writers */
  size_t variables;
  char** names;
  /* Deferred results: iterations[i] and variables partials from partials[i * variables]. */
  size_t kept;
  size_t capacity;
  int* iterations;
  partial* partials;
  FILE* events; /* opened at the first event */
} stats;

static void say(char* message, size_t size, const char* text, const char* detail) {
  snprintf(message, size, "%s%s", text, detail ? detail : "");
}

static char* copy(const char* text) {
  size_t n = strlen(text) + 1;
  char* c = malloc(n);
  if (c) memcpy(c, text, n);
  return c;
}

static void release(stats* self) {
  size_t v;
  if (!self) return;
  if (self->events) fclose(self->events);
  for (v = 0; v < self->variables; ++v) free(self->names[v]);
  free(self->names);
  free(self->iterations);
  free(self->partials);
  free(self->output);
  free(self);
}

static int stats_create(const sidecore_action_config* config, void** action, char* message,
                        size_t message_size) {
  const char* output = NULL;
  uint64_t i;
  int size = 0;
  stats* self;
  for (i = 0; i < config->option_count; ++i) {
    if (strcmp(config->option_keys[i], "Output") == 0) {
      output = config->option_values[i];
    } else {
      say(message, message_size, "unknown option ", config->option_keys[i]);
      strncat(message, "; the only option is Output (the CSV file)",
              message_size - strlen(message) - 1);
      return SIDECORE_PLUGIN_CONFIG_ERROR;
    }
  }
  if (output == NULL || output[0] == '\0') {
    say(message, message_size, "option Output (the CSV file to write) is required", NULL);
    return SIDECORE_PLUGIN_CONFIG_ERROR;
  }
  self = calloc(1, sizeof *self);
  if (!self) return SIDECORE_PLUGIN_ERROR;
  self->output = copy(output);
  self->writer_index = config->writer_index;
  self->writer_count = config->writer_count;
  self->comm = config->comm;
  self->finish_comm = config->finish_comm;
  MPI_Comm_size(config->comm, &size);
  self->deferred = size != config->writer_count;
  self->variables = (size_t)config->variable_count;
  self->names = calloc(self->variables ? self->variables : 1, sizeof *self->names);
  if (!self->output || !self->names) {
    release(self);
    return SIDECORE_PLUGIN_ERROR;
  }
  for (i = 0; i < config->variable_count; ++i) {
    self->names[i] = copy(config->variables[i]);
    if (!self->names[i]) {
      release(self);
      return SIDECORE_PLUGIN_ERROR;
    }
  }
  if (self->writer_index == 0) {
    FILE* f = fopen(self->output, "w");
    if (!f) {
      say(message, message_size, "cannot create ", self->output);
      release(self);
      return SIDECORE_PLUGIN_ERROR;
    }
    fputs("iteration,variable,count,min,max,mean\n", f);
    fclose(f);
  }
  *action = self;
  return SIDECORE_PLUGIN_OK;
}

static double element(const void* data, int32_t type, size_t index) {
  switch (type) {
    case SIDECORE_TYPE_INT8:
      return ((const int8_t*)data)[index];
    case SIDECORE_TYPE_INT16:
      return ((const int16_t*)data)[index];
    case SIDECORE_TYPE_INT32:
      return ((const int32_t*)data)[index];
    case SIDECORE_TYPE_INT64:
      return (double)((const int64_t*)data)[index];
    case SIDECORE_TYPE_FLOAT32:
      return ((const float*)data)[index];
    default:
      return ((const double*)data)[index];
  }
}

/* Adds the interior elements of a block (its extents without the ghost zones). */
static void add_block(const sidecore_block* b, partial* p) {
  int64_t lo[SIDECORE_PLUGIN_MAX_DIMS], hi[SIDECORE_PLUGIN_MAX_DIMS], at[SIDECORE_PLUGIN_MAX_DIMS];
  int d;
  int n = b->ndims;
  for (d = 0; d < n; ++d) {
    lo[d] = b->ghosts_before ? b->ghosts_before[d] : 0;
    hi[d] = b->dims[d] - (b->ghosts_after ? b->ghosts_after[d] : 0);
    if (hi[d] <= lo[d]) return;
    at[d] = lo[d];
  }
  for (;;) {
    size_t index = 0;
    double x;
    for (d = 0; d < n; ++d) index = index * (size_t)b->dims[d] + (size_t)at[d];
    x = element(b->data, b->type, index);
    if (p->count == 0 || x < p->min) p->min = x;
    if (p->count == 0 || x > p->max) p->max = x;
    p->sum += x;
    p->count += 1;
    for (d = n - 1; d >= 0; --d) {
      if (++at[d] < hi[d]) break;
      at[d] = lo[d];
    }
    if (d < 0) return;
  }
}

/* Combines the partials of every writer (count partial records, `rows` of them) in place. */
static int combine(partial* p, size_t rows, MPI_Comm comm) {
  size_t i;
  size_t n = rows;
  double* low = malloc(2 * n * sizeof *low);
  double* total = malloc(2 * n * sizeof *total);
  int rc = MPI_SUCCESS;
  if (!low || !total) {
    free(low);
    free(total);
    return MPI_ERR_NO_MEM;
  }
  for (i = 0; i < n; ++i) {
    /* An empty partial takes no part in the minimum and the maximum. */
    low[2 * i] = p[i].count > 0 ? p[i].min : INFINITY;
    low[2 * i + 1] = p[i].count > 0 ? -p[i].max : INFINITY;
    total[2 * i] = p[i].sum;
    total[2 * i + 1] = p[i].count;
  }
  if (n > 0) rc = MPI_Allreduce(MPI_IN_PLACE, low, (int)(2 * n), MPI_DOUBLE, MPI_MIN, comm);
  if (rc == MPI_SUCCESS && n > 0)
    rc = MPI_Allreduce(MPI_IN_PLACE, total, (int)(2 * n), MPI_DOUBLE, MPI_SUM, comm);
  for (i = 0; i < n && rc == MPI_SUCCESS; ++i) {
    p[i].min = low[2 * i];
    p[i].max = -low[2 * i + 1];
    p[i].sum = total[2 * i];
    p[i].count = total[2 * i + 1];
  }
  free(low);
  free(total);
  return rc;
}

static int append_lines(const stats* self, const int* iterations, const partial* p, size_t rows,
                        char* message, size_t message_size) {
  size_t r, v;
  FILE* f = fopen(self->output, "a");
  if (!f) {
    say(message, message_size, "cannot append to ", self->output);
    return SIDECORE_PLUGIN_ERROR;
  }
  for (r = 0; r < rows; ++r) {
    for (v = 0; v < self->variables; ++v) {
      const partial* x = &p[r * self->variables + v];
      if (x->count > 0)
        fprintf(f, "%d,%s,%.0f,%.17g,%.17g,%.17g\n", iterations[r], self->names[v], x->count,
                x->min, x->max, x->sum / x->count);
      else
        fprintf(f, "%d,%s,0,,,\n", iterations[r], self->names[v]);
    }
  }
  if (fclose(f) != 0) {
    say(message, message_size, "cannot write ", self->output);
    return SIDECORE_PLUGIN_ERROR;
  }
  return SIDECORE_PLUGIN_OK;
}

static int stats_on_iteration(void* action, const sidecore_iteration* iteration, char* message,
                              size_t message_size) {
  stats* self = action;
  partial* p;
  uint64_t b;
  size_t v;
  int rc = SIDECORE_PLUGIN_OK;
  if (self->deferred) {
    if (self->kept == self->capacity) {
      size_t capacity = self->capacity ? 2 * self->capacity : 16;
      int* iterations = realloc(self->iterations, capacity * sizeof *iterations);
      partial* partials;
      if (!iterations) return SIDECORE_PLUGIN_ERROR;
      self->iterations = iterations;
      partials = realloc(self->partials,
                         capacity * (self->variables ? self->variables : 1) * sizeof *partials);
      if (!partials) return SIDECORE_PLUGIN_ERROR;
      self->partials = partials;
      self->capacity = capacity;
    }
    p = self->partials + self->kept * self->variables;
  } else {
    p = malloc((self->variables ? self->variables : 1) * sizeof *p);
    if (!p) return SIDECORE_PLUGIN_ERROR;
  }
  memset(p, 0, self->variables * sizeof *p);
  /* Blocks come by variable, in the order of config->variables. */
  for (b = 0, v = 0; b < iteration->block_count; ++b) {
    const sidecore_block* block = &iteration->blocks[b];
    while (v < self->variables && strcmp(self->names[v], block->variable) != 0) ++v;
    if (v == self->variables) {
      say(message, message_size, "unexpected block of variable ", block->variable);
      rc = SIDECORE_PLUGIN_ERROR;
      break;
    }
    add_block(block, &p[v]);
  }
  if (self->deferred) {
    if (rc == SIDECORE_PLUGIN_OK) self->iterations[self->kept++] = iteration->iteration;
    return rc;
  }
  /* Every writer takes part, also after a local failure, so that none waits for ever. */
  if (combine(p, self->variables, self->comm) != MPI_SUCCESS) {
    say(message, message_size, "MPI_Allreduce failed", NULL);
    rc = SIDECORE_PLUGIN_ERROR;
  }
  if (rc == SIDECORE_PLUGIN_OK && self->writer_index == 0)
    rc = append_lines(self, &iteration->iteration, p, 1, message, message_size);
  free(p);
  return rc;
}

static int stats_on_event(void* action, const sidecore_event* event, char* message,
                          size_t message_size) {
  stats* self = action;
  if (!self->events) {
    char path[4096];
    snprintf(path, sizeof path, "%s.events.%d", self->output, self->writer_index);
    self->events = fopen(path, "w");
    if (!self->events) {
      say(message, message_size, "cannot create ", path);
      return SIDECORE_PLUGIN_ERROR;
    }
  }
  fprintf(self->events, "%s,%d,%d,%d\n", event->name, (int)event->source, (int)event->iteration,
          (int)event->scope);
  fflush(self->events);
  return SIDECORE_PLUGIN_OK;
}

static int stats_finish(void* action, char* message, size_t message_size) {
  stats* self = action;
  unsigned long kept[2];
  int rc = SIDECORE_PLUGIN_OK;
  if (!self->deferred) return SIDECORE_PLUGIN_OK;
  if (self->finish_comm == MPI_COMM_NULL) {
    say(message, message_size, "no communicator spans the writers: results are per writer", NULL);
    return SIDECORE_PLUGIN_ERROR;
  }
  /* Every writer must have kept the same iterations. */
  kept[0] = (unsigned long)self->kept;
  kept[1] = ~(unsigned long)self->kept;
  MPI_Allreduce(MPI_IN_PLACE, kept, 2, MPI_UNSIGNED_LONG, MPI_MAX, self->finish_comm);
  if (kept[0] != ~kept[1]) {
    say(message, message_size, "the writers passed different numbers of iterations", NULL);
    return SIDECORE_PLUGIN_ERROR;
  }
  if (combine(self->partials, self->kept * self->variables, self->finish_comm) != MPI_SUCCESS) {
    say(message, message_size, "MPI_Allreduce failed", NULL);
    return SIDECORE_PLUGIN_ERROR;
  }
  if (self->writer_index == 0)
    rc = append_lines(self, self->iterations, self->partials, self->kept, message, message_size);
  return rc;
}

static void stats_destroy(void* action) { release(action); }

static const sidecore_action_descriptor stats_descriptor = {SIDECORE_ACTION_ABI_VERSION,
                                                            "stats",
                                                            stats_create,
                                                            stats_on_iteration,
                                                            stats_on_event,
                                                            stats_finish,
                                                            stats_destroy};

SIDECORE_PLUGIN_EXPORT const sidecore_action_descriptor* sidecore_action_plugin(void) {
  return &stats_descriptor;
}
