#!/usr/bin/env bash
# Builds the configuration parser's libFuzzer target (clang, -fsanitize=fuzzer,address,undefined)
# and fuzzes it for a bounded time, starting from the committed corpus tests/fuzz/corpus.
# Usage: scripts/fuzz_xml.sh [seconds]   (default 60; SIDECORE_FUZZ_BUILD_DIR, default build-fuzz)
# Exits non-zero when an input crashes, leaks, times out or exceeds the memory limit; the input
# is saved as <build>/artifacts/<kind>-<hash> and is replayed with
#   <build>/sidecore_fuzz_xml <build>/artifacts/<kind>-<hash>
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
build=${SIDECORE_FUZZ_BUILD_DIR:-$root/build-fuzz}

# libFuzzer ships with clang's runtime libraries (libclang-rt-<version>-dev on Debian 12).
packages=(clang cmake ninja-build pkg-config libpugixml-dev libopenmpi-dev)
# shellcheck source=lib/debian_packages.sh
. "$root/scripts/lib/debian_packages.sh"
install_packages "sidecore fuzz" "${packages[@]}"
clang_major=$(clang++ -dumpversion | cut -d. -f1)
if [ ! -e "$(clang++ -print-resource-dir)/lib/linux/libclang_rt.fuzzer-x86_64.a" ]; then
  install_packages "sidecore fuzz" "libclang-rt-${clang_major}-dev"
fi

CXX=clang++ cmake -S "$root/tests/fuzz" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >/dev/null
cmake --build "$build"

# New inputs go to a working copy, so the committed corpus only changes by hand.
work="$build/corpus"
mkdir -p "$work" "$build/artifacts"
# Leaks are findings too; the parser opens plugin libraries with dlopen, whose loader state
# LeakSanitizer must not count.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:print_stacktrace=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
echo "sidecore fuzz: ${seconds} s on the configuration parser (corpus $root/tests/fuzz/corpus)"
# -rss_limit_mb/-malloc_limit_mb: a configuration may not make the parser use unbounded memory;
# -timeout: nor take more than 10 s; -max_len: inputs up to 64 KiB.
status=0
(cd "$build" && ./sidecore_fuzz_xml -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -malloc_limit_mb=1024 -max_len=65536 -dict="$root/tests/fuzz/xml.dict" \
  -artifact_prefix="$build/artifacts/" -print_final_stats=1 "$work" "$root/tests/fuzz/corpus") ||
  status=$?
if [ "$status" -ne 0 ]; then
  echo "sidecore fuzz: FAILED (status $status); inputs that fail:" >&2
  ls -l "$build/artifacts/" >&2
  exit 1
fi
echo "sidecore fuzz: no failure in ${seconds} s"
