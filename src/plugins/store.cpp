// The store registry: builds the built-in store named by the XML type (and defines the "null"
// store), or hands a plugin store to the loader.
#include "plugins/store.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "common/error.hpp"
#include "common/log.hpp"
#include "plugins/external_store.hpp"
#include "plugins/hdf5/hdf5_store.hpp"

namespace sidecore::plugins {

namespace {

// Discards every iteration: measures the cost of everything but the storage itself. Option
// Delay (seconds per iteration) makes it behave like a slow file system, for tests and
// benchmarks of back-pressure and active buffering.
class null_store final : public store {
 public:
  explicit null_store(double delay) : m_delay(delay) {}
  void write_iteration(const iteration_data& /*data*/) override {
    if (m_delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(m_delay));
  }

 private:
  double m_delay;
};

std::unique_ptr<store> make_null_store(const store_context& context) {
  double delay = 0;
  for (const auto& [key, value] : context.settings->options) {
    if (key != "Delay") {
      // Nothing is stored, so an option left over from another type changes nothing: warn.
      if (context.writer_index == 0)
        log::warning(store_location(context), ": store \"", context.settings->name, "\": option \"",
                     key, "\" means nothing to a null store (its only option is Delay); ignored");
      continue;
    }
    char* end = nullptr;
    delay = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || delay < 0)
      throw config_error(store_location(context) + ": store \"" + context.settings->name +
                         "\": Delay \"" + value + "\" is not a number of seconds >= 0");
  }
  return std::make_unique<null_store>(delay);
}

store_needs no_needs(const store_context&) { return {}; }

struct store_type {
  const char* name;  // as documented; matched ignoring case
  std::unique_ptr<store> (*make)(const store_context&);
  store_needs (*needs)(const store_context&);
};

constexpr store_type builtin_store_types[] = {
    {"HDF5", hdf5::make_hdf5_store, hdf5::hdf5_store_needs},
    {"null", make_null_store, no_needs},
};

bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string store_location(const store_context& context) {
  const std::string file = context.model != nullptr && !context.model->file.empty()
                               ? context.model->file
                               : "<configuration>";
  return file + ':' + std::to_string(context.settings->line);
}

std::unique_ptr<store> make_store(const store_context& context) {
  if (context.settings == nullptr) throw argument_error("make_store: no store settings given");
  const config::store& settings = *context.settings;
  if (!settings.library.empty()) return make_external_store(context);
  for (const store_type& type : builtin_store_types) {
    if (equals_ignoring_case(type.name, settings.type)) return type.make(context);
  }
  std::string valid;
  for (const store_type& type : builtin_store_types) {
    if (!valid.empty()) valid += ", ";
    valid += type.name;
  }
  throw config_error(store_location(context) + ": store \"" + settings.name +
                     "\": unknown type \"" + settings.type + "\"; valid types are " + valid +
                     ", or a plugin's type with library=\"...\" naming its library");
}

store_needs needs_of(const config::model& model, const config::store& settings) {
  store_context context;
  context.model = &model;
  context.settings = &settings;
  // Plugins (ABI 1) declare no collective writes: each writer runs them on its own.
  if (!settings.library.empty()) return {};
  for (const store_type& type : builtin_store_types) {
    if (equals_ignoring_case(type.name, settings.type)) return type.needs(context);
  }
  return {};  // make_store reports the unknown type
}

}  // namespace sidecore::plugins
