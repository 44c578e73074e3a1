/* An action plugin built for another version of the action interface: the loader must refuse
 * it by its first field alone, and never read the rest. */
#include <sidecore/plugin.h>

typedef struct future_descriptor {
  uint32_t abi_version;
  const char* name;
} future_descriptor;

static const future_descriptor descriptor = {SIDECORE_ACTION_ABI_VERSION + 1, "future"};

SIDECORE_PLUGIN_EXPORT const sidecore_action_descriptor* sidecore_action_plugin(void) {
  return (const sidecore_action_descriptor*)(const void*)&descriptor;
}
