// Fuzz target of the configuration parser: any bytes give a model or a config_error naming the
// file, never another exception, a crash, a leak or a hang. Built for libFuzzer by
// scripts/fuzz_xml.sh and, with replay_main.cpp, run over the corpus by the test fuzz.xml_corpus.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>

#include "common/error.hpp"
#include "config/model.hpp"

namespace {

constexpr const char* file_name = "fuzz.xml";

[[noreturn]] void broken_contract(const char* what, const std::exception* e) {
  std::fprintf(stderr, "parse_model: %s", what);
  if (e != nullptr) std::fprintf(stderr, " (%s: %s)", typeid(*e).name(), e->what());
  std::fprintf(stderr, "\n");
  std::abort();
}

// Parses once; true when a model came out. Any exception other than config_error, and any
// config_error whose message does not start with the file's name, aborts (a finding).
bool parse(std::string_view text, bool strict) {
  try {
    sidecore::config::parse_options options;
    options.strict = strict;
    const sidecore::config::model model = sidecore::config::parse_model(text, file_name, options);
    // What every store does with a model: evaluate the ghosts with the initial values.
    (void)sidecore::config::evaluate_ghosts(model);
    return true;
  } catch (const sidecore::config_error& e) {
    const std::string_view message = e.what();
    if (message.substr(0, std::string_view(file_name).size()) != file_name) {
      broken_contract("a config_error that does not name the file", &e);
    }
    if (message.size() <= std::string_view(file_name).size() + 1) {
      broken_contract("a config_error without a message", &e);
    }
  } catch (const std::exception& e) {
    broken_contract("an exception other than config_error", &e);
  } catch (...) {
    broken_contract("an exception of unknown type", nullptr);
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // A model that parses is parsed again in strict mode, where every warning is refused.
  if (parse(text, false)) parse(text, true);
  return 0;
}
