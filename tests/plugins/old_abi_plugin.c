/* A store plugin built for another version of the interface: the loader must refuse it by its
 * first field alone, and never read the rest. */
#include <sidecore/plugin.h>

typedef struct future_descriptor {
  uint32_t abi_version;
  const char* name;
} future_descriptor;

static const future_descriptor descriptor = {SIDECORE_PLUGIN_ABI_VERSION + 1, "future"};

SIDECORE_PLUGIN_EXPORT const sidecore_store_descriptor* sidecore_store_plugin(void) {
  return (const sidecore_store_descriptor*)(const void*)&descriptor;
}
