// The clock of the run report and the live counters: seconds since the run's origin, which
// every process sets as it leaves damaris_initialize (together with the others, within the
// skew of the collective that ends it), on the steady clock.
#pragma once

#include <chrono>

namespace sidecore::run_clock {

// Sets the origin to now (before that, it is the first use of the clock).
void set_origin() noexcept;
// Seconds from the origin to t.
double seconds(std::chrono::steady_clock::time_point t) noexcept;
double now() noexcept;
// The wall clock at the origin, in seconds since the Unix epoch.
double origin_unix_seconds() noexcept;

}  // namespace sidecore::run_clock
