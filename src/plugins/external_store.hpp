// Stores from plugin libraries: loads the library the XML names, checks its ABI version and
// adapts its C descriptor (include/sidecore/plugin.h) to the store interface.
#pragma once

#include <memory>

#include "plugins/store.hpp"

namespace sidecore::plugins {

// Loads context.settings->library, checks that it is a store plugin of this ABI version and
// creates its store. Throws config_error naming the <store>'s file and line and the library
// (cannot be loaded, no sidecore_store_plugin(), another ABI version, an incomplete
// descriptor, options the plugin refuses) and storage_error when the plugin fails otherwise.
std::unique_ptr<store> make_external_store(const store_context& context);

}  // namespace sidecore::plugins
