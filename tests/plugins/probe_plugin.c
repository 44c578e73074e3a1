/* A store plugin for the loader's tests: records every call it receives as text, which the
 * tests read back with sidecore_test_probe_log(); options make it fail on demand. Compiled as
 * C99 with -pedantic -Werror, so it also checks that <sidecore/plugin.h> is valid C99. */
#include <sidecore/plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char probe_log[65536];

static void note(const char* text) {
  size_t used = strlen(probe_log);
  size_t length = strlen(text);
  if (used + length + 1 < sizeof probe_log) memcpy(probe_log + used, text, length + 1);
}

static void note_list(const char* name, const int64_t* values, int32_t n) {
  char text[256];
  int32_t i;
  if (values == NULL) {
    snprintf(text, sizeof text, " %s=none", name);
    note(text);
    return;
  }
  snprintf(text, sizeof text, " %s=", name);
  note(text);
  for (i = 0; i < n; ++i) {
    snprintf(text, sizeof text, i ? ",%lld" : "%lld", (long long)values[i]);
    note(text);
  }
}

/* The test reads what the plugin saw, and clears it. */
SIDECORE_PLUGIN_EXPORT const char* sidecore_test_probe_log(void);
const char* sidecore_test_probe_log(void) { return probe_log; }
SIDECORE_PLUGIN_EXPORT void sidecore_test_probe_clear(void);
void sidecore_test_probe_clear(void) { probe_log[0] = '\0'; }

typedef struct probe {
  int fail_write; /* iteration whose write fails, -1 for none */
  int fail_finish;
} probe;

static const char* option(const sidecore_store_config* config, const char* key) {
  uint64_t i;
  for (i = 0; i < config->option_count; ++i)
    if (strcmp(config->option_keys[i], key) == 0) return config->option_values[i];
  return NULL;
}

static int probe_create(const sidecore_store_config* config, void** store, char* message,
                        size_t message_size) {
  char text[512];
  uint64_t i;
  const char* fail = option(config, "FailCreate");
  probe* self;
  snprintf(text, sizeof text,
           "create sim=%s store=%s type=%s library=%s writer=%d/%d options=", config->simulation,
           config->store_name, config->store_type, config->library, (int)config->writer_index,
           (int)config->writer_count);
  note(text);
  for (i = 0; i < config->option_count; ++i) {
    snprintf(text, sizeof text, "%s%s:%s", i ? "," : "", config->option_keys[i],
             config->option_values[i]);
    note(text);
  }
  note("\n");
  if (fail != NULL && strcmp(fail, "config") == 0) {
    snprintf(message, message_size, "option FailCreate asks for a configuration error");
    return SIDECORE_PLUGIN_CONFIG_ERROR;
  }
  if (fail != NULL && strcmp(fail, "storage") == 0) {
    snprintf(message, message_size, "option FailCreate asks for a storage error");
    return SIDECORE_PLUGIN_ERROR;
  }
  self = (probe*)malloc(sizeof *self);
  if (self == NULL) return SIDECORE_PLUGIN_ERROR;
  self->fail_write = option(config, "FailWrite") ? atoi(option(config, "FailWrite")) : -1;
  self->fail_finish = option(config, "FailFinish") != NULL;
  *store = self;
  return SIDECORE_PLUGIN_OK;
}

static int probe_write_iteration(void* store, const sidecore_iteration* iteration, char* message,
                                 size_t message_size) {
  const probe* self = (const probe*)store;
  char text[512];
  uint64_t i;
  snprintf(text, sizeof text, "iteration %d incomplete=%d variables=", (int)iteration->iteration,
           (int)iteration->incomplete);
  note(text);
  for (i = 0; i < iteration->variable_count; ++i) {
    note(i ? "," : "");
    note(iteration->variables[i]);
  }
  note("\n");
  for (i = 0; i < iteration->block_count; ++i) {
    const sidecore_block* b = &iteration->blocks[i];
    snprintf(text, sizeof text, "  block %s type=%d size=%u P%d B%d it=%d bytes=%llu", b->variable,
             (int)b->type, (unsigned)sidecore_element_size(b->type), (int)b->source, (int)b->block,
             (int)b->iteration, (unsigned long long)b->bytes);
    note(text);
    note_list("dims", b->dims, b->ndims);
    note_list("global", b->global_dims, b->ndims);
    note_list("position", b->position, b->ndims);
    note_list("ghosts_before", b->ghosts_before, b->ndims);
    note_list("ghosts_after", b->ghosts_after, b->ndims);
    if (b->type == SIDECORE_TYPE_FLOAT64) {
      snprintf(text, sizeof text, " first=%g", ((const double*)b->data)[0]);
      note(text);
    } else if (b->type == SIDECORE_TYPE_INT32) {
      snprintf(text, sizeof text, " first=%d", (int)((const int32_t*)b->data)[0]);
      note(text);
    }
    note("\n");
  }
  if (iteration->iteration == self->fail_write) {
    snprintf(message, message_size, "FailWrite: iteration %d refused", (int)iteration->iteration);
    return SIDECORE_PLUGIN_ERROR;
  }
  return SIDECORE_PLUGIN_OK;
}

static int probe_finish(void* store, char* message, size_t message_size) {
  const probe* self = (const probe*)store;
  note("finish\n");
  if (self->fail_finish) {
    /* Fills the buffer to its very end, without a NUL: Sidecore must cope. */
    memset(message, 'x', message_size);
    return 7;
  }
  return SIDECORE_PLUGIN_OK;
}

static void probe_destroy(void* store) {
  note("destroy\n");
  free(store);
}

static const sidecore_store_descriptor descriptor = {
    SIDECORE_PLUGIN_ABI_VERSION, "probe",      probe_create,
    probe_write_iteration,       probe_finish, probe_destroy};

SIDECORE_PLUGIN_EXPORT const sidecore_store_descriptor* sidecore_store_plugin(void) {
  return &descriptor;
}
