/* An action plugin for the tests: records every call it receives as text, which the tests read
 * back with sidecore_test_action_log(); options make it fail on demand. C99, -pedantic -Werror:
 * it also checks that the action part of <sidecore/plugin.h> is valid C99. */
#include <sidecore/plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char action_log[65536];

static void note(const char* text) {
  size_t used = strlen(action_log);
  size_t length = strlen(text);
  if (used + length + 1 < sizeof action_log) memcpy(action_log + used, text, length + 1);
}

SIDECORE_PLUGIN_EXPORT const char* sidecore_test_action_log(void);
const char* sidecore_test_action_log(void) { return action_log; }
SIDECORE_PLUGIN_EXPORT void sidecore_test_action_clear(void);
void sidecore_test_action_clear(void) { action_log[0] = '\0'; }

typedef struct probe_action {
  int fail_iteration;  /* iteration whose on_iteration fails, -1 for none */
  char fail_event[64]; /* event whose on_event fails, "" for none */
} probe_action;

static const char* option(const sidecore_action_config* config, const char* key) {
  uint64_t i;
  for (i = 0; i < config->option_count; ++i)
    if (strcmp(config->option_keys[i], key) == 0) return config->option_values[i];
  return NULL;
}

static int probe_create(const sidecore_action_config* config, void** action, char* message,
                        size_t message_size) {
  char text[512];
  uint64_t i;
  const char* fail = option(config, "FailCreate");
  probe_action* self;
  snprintf(text, sizeof text,
           "create sim=%s name=%s frequency=%d writer=%d/%d variables=", config->simulation,
           config->action_name, (int)config->frequency, (int)config->writer_index,
           (int)config->writer_count);
  note(text);
  for (i = 0; i < config->variable_count; ++i) {
    note(i ? "," : "");
    note(config->variables[i]);
  }
  note(" options=");
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
  self = (probe_action*)calloc(1, sizeof *self);
  if (self == NULL) return SIDECORE_PLUGIN_ERROR;
  self->fail_iteration =
      option(config, "FailIteration") ? atoi(option(config, "FailIteration")) : -1;
  if (option(config, "FailEvent"))
    snprintf(self->fail_event, sizeof self->fail_event, "%s", option(config, "FailEvent"));
  *action = self;
  return SIDECORE_PLUGIN_OK;
}

static int probe_on_iteration(void* action, const sidecore_iteration* iteration, char* message,
                              size_t message_size) {
  const probe_action* self = (const probe_action*)action;
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
    snprintf(text, sizeof text, "  block %s P%d B%d it=%d first=%g\n", b->variable, (int)b->source,
             (int)b->block, (int)b->iteration,
             b->type == SIDECORE_TYPE_FLOAT64 ? ((const double*)b->data)[0]
                                              : (double)((const int32_t*)b->data)[0]);
    note(text);
  }
  if (iteration->iteration == self->fail_iteration) {
    snprintf(message, message_size, "FailIteration: iteration %d refused",
             (int)iteration->iteration);
    return SIDECORE_PLUGIN_ERROR;
  }
  return SIDECORE_PLUGIN_OK;
}

static int probe_on_event(void* action, const sidecore_event* event, char* message,
                          size_t message_size) {
  const probe_action* self = (const probe_action*)action;
  char text[256];
  snprintf(text, sizeof text, "event %s source=%d iteration=%d scope=%d\n", event->name,
           (int)event->source, (int)event->iteration, (int)event->scope);
  note(text);
  if (strcmp(event->name, self->fail_event) == 0) {
    snprintf(message, message_size, "FailEvent: event %s refused", event->name);
    return SIDECORE_PLUGIN_ERROR;
  }
  return SIDECORE_PLUGIN_OK;
}

static int probe_finish(void* action, char* message, size_t message_size) {
  (void)action;
  (void)message;
  (void)message_size;
  note("finish\n");
  return SIDECORE_PLUGIN_OK;
}

static void probe_destroy(void* action) {
  note("destroy\n");
  free(action);
}

static const sidecore_action_descriptor descriptor = {SIDECORE_ACTION_ABI_VERSION,
                                                      "probe",
                                                      probe_create,
                                                      probe_on_iteration,
                                                      probe_on_event,
                                                      probe_finish,
                                                      probe_destroy};

SIDECORE_PLUGIN_EXPORT const sidecore_action_descriptor* sidecore_action_plugin(void) {
  return &descriptor;
}
