#!/usr/bin/env bash
# Builds, mounts, checks and unmounts throttlefs, the write target that behaves like a busy
# parallel file system (see README.md).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mountpoint=${THROTTLE_MOUNT:-/tmp/throttled}
backing=${THROTTLE_BACKING:-/tmp/throttled.backing}
build=${THROTTLE_BUILD:-/tmp/throttlefs-build}
bw=${THROTTLE_BW:-125M}
jitter=${THROTTLE_JITTER:-0.5}
stalls=${THROTTLE_STALLS_PER_GIB:-4}
stall_ms=${THROTTLE_STALL_MS:-50}
meta_ms=${THROTTLE_META_MS:-0}
seed=${THROTTLE_SEED:-1}
binary=$build/throttlefs

usage() {
  cat >&2 <<EOF
usage: $0 build | mount | umount | status | check
  build    compile throttlefs into \$THROTTLE_BUILD ($build)
  mount    build if needed, mount \$THROTTLE_MOUNT ($mountpoint) over \$THROTTLE_BACKING
           ($backing); parameters: THROTTLE_BW=$bw THROTTLE_JITTER=$jitter
           THROTTLE_STALLS_PER_GIB=$stalls THROTTLE_STALL_MS=$stall_ms THROTTLE_META_MS=$meta_ms
  umount   unmount it (the files stay in the backing folder)
  status   say whether it is mounted
  check    mount, measure with dd that writes are throttled and reads are not, unmount
EOF
  exit 2
}

is_mounted() { grep -qs " $mountpoint fuse.throttlefs " /proc/mounts; }

do_build() {
  if ! pkg-config --exists fuse3; then
    echo "throttle: libfuse3 headers missing: apt-get install fuse3 libfuse3-dev pkg-config" >&2
    exit 1
  fi
  mkdir -p "$build"
  if [[ ! -x $binary || $here/throttlefs.c -nt $binary ]]; then
    # shellcheck disable=SC2046
    cc -O2 -Wall -Wextra -std=c11 "$here/throttlefs.c" $(pkg-config --cflags --libs fuse3) \
      -lpthread -o "$binary"
  fi
}

do_mount() {
  if is_mounted; then
    echo "throttle: $mountpoint is already mounted" >&2
    return 0
  fi
  do_build
  mkdir -p "$mountpoint" "$backing"
  "$binary" "$mountpoint" -o "backing=$backing,bw=$bw,jitter=$jitter,stalls_per_gib=$stalls" \
    -o "stall_ms=$stall_ms,meta_ms=$meta_ms,seed=$seed,max_threads=16"
  echo "throttle: $mountpoint mounted (bw=$bw jitter=$jitter stalls_per_gib=$stalls" \
       "stall_ms=$stall_ms meta_ms=$meta_ms) over $backing" >&2
}

do_umount() {
  if is_mounted; then
    # Retried briefly: a process that just closed a file may still hold the mount.
    for _ in 1 2 3 4 5; do
      fusermount3 -u "$mountpoint" 2>/dev/null && break
      sleep 1
    done
    is_mounted && { echo "throttle: $mountpoint is busy" >&2; exit 1; }
  fi
  echo "throttle: $mountpoint unmounted" >&2
}

# Prints the rate dd reports, in MB/s.
dd_rate() {
  dd "$@" 2>&1 | awk '/copied/ { for (i = 1; i <= NF; ++i) if ($i == "s,") {
    v = $(i + 1); u = $(i + 2); if (u ~ /^GB/) v *= 1000; if (u ~ /^kB/) v /= 1000; print v } }'
}

do_check() {
  local was_mounted=0
  is_mounted && was_mounted=1
  do_mount
  local mib=256 target=$mountpoint/throttle_check.bin
  local expected
  expected=$(awk -v b="$bw" 'BEGIN { m = 1; if (b ~ /[kK]$/) m = 1e3; if (b ~ /[mM]$/) m = 1e6;
    if (b ~ /[gG]$/) m = 1e9; sub(/[kKmMgG]$/, "", b); print b * m / 1e6 }')
  local rates=()
  for _ in 1 2 3; do
    rates+=("$(dd_rate if=/dev/zero of="$target" bs=1M count=$mib conv=fdatasync)")
  done
  local read_rate
  read_rate=$(dd_rate if="$target" of=/dev/null bs=1M)
  local plain
  plain=$(dd_rate if=/dev/zero of="$backing/plain_check.bin" bs=1M count=$mib conv=fdatasync)
  rm -f "$target" "$backing/plain_check.bin"
  [[ $was_mounted == 1 ]] || do_umount
  echo "throttle: writes ${rates[*]} MB/s through the mount (target $expected MB/s);" \
       "plain disk $plain MB/s; reads back at $read_rate MB/s"
  # Throttled: well below the plain disk, and within the jitter of the set rate.
  awk -v e="$expected" -v p="$plain" -v r="${rates[*]}" 'BEGIN {
    n = split(r, v, " "); s = 0; for (i = 1; i <= n; ++i) s += v[i]; m = s / n;
    ok = m < 1.3 * e && m > 0.6 * e && (p == "" || m < p);
    printf "throttle: mean %.1f MB/s: %s\n", m, ok ? "throttled as set" : "NOT as set";
    exit ok ? 0 : 1 }'
}

case ${1:-} in
  build) do_build ;;
  mount) do_mount ;;
  umount|unmount) do_umount ;;
  status) if is_mounted; then echo "mounted: $mountpoint"; else echo "not mounted"; exit 1; fi ;;
  check) do_check ;;
  *) usage ;;
esac
