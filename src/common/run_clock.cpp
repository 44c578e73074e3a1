// Atomics: the background I/O thread reads the origin that the simulation's thread sets.
#include "common/run_clock.hpp"

#include <atomic>
#include <cstdint>

namespace sidecore::run_clock {
namespace {

std::int64_t steady_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

struct origin {
  std::atomic<std::int64_t> steady{steady_ns(std::chrono::steady_clock::now())};
  std::atomic<std::int64_t> unix_ns{std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count()};
};

origin& the_origin() {
  static origin o;
  return o;
}

}  // namespace

void set_origin() noexcept {
  origin& o = the_origin();
  o.steady.store(steady_ns(std::chrono::steady_clock::now()), std::memory_order_relaxed);
  o.unix_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count(),
                  std::memory_order_relaxed);
}

double seconds(std::chrono::steady_clock::time_point t) noexcept {
  return static_cast<double>(steady_ns(t) - the_origin().steady.load(std::memory_order_relaxed)) *
         1e-9;
}

double now() noexcept { return seconds(std::chrono::steady_clock::now()); }

double origin_unix_seconds() noexcept {
  return static_cast<double>(the_origin().unix_ns.load(std::memory_order_relaxed)) * 1e-9;
}

}  // namespace sidecore::run_clock
