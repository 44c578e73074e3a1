#!/usr/bin/env bash
# Fails when a C or C++ file of the tree differs from what clang-format makes of it with the
# checked-in .clang-format (docs/testing.md). Installs clang-format on Debian/Ubuntu if missing.
# Usage: scripts/check_format.sh          check (CI)
#        scripts/check_format.sh --fix    format the files in place
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=lib/debian_packages.sh
. "$root/scripts/lib/debian_packages.sh"
command -v clang-format >/dev/null || install_packages check_format.sh clang-format
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' | grep -v '^tests/fuzz/corpus/')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
drift=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || drift+=("$f")
done
if ((${#drift[@]})); then
  echo "check_format.sh: ${#drift[@]} file(s) differ from clang-format ($(clang-format --version)):" >&2
  printf '  %s\n' "${drift[@]}" >&2
  echo "run scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "check_format.sh: ${#files[@]} files formatted"
