# shellcheck shell=bash
# paraview_build <who> <root> <build>: installs ParaView and Xvfb when missing (Debian/Ubuntu),
# configures and builds the Python build (scripts/python_env.sh) again, so that CMake finds
# ParaView's Python, and fails, naming <who>, when it still does not.
paraview_build() {
  local who=$1 root=$2 build=$3
  # shellcheck source=debian_packages.sh
  . "$root/scripts/lib/debian_packages.sh"
  install_packages "$who" paraview python3-paraview xvfb
  "$root/scripts/python_env.sh" "$build"
  if ! grep -q '^SIDECORE_PARAVIEW_PYTHON_FOUND:INTERNAL=.' "$build/CMakeCache.txt"; then
    echo "$who: ParaView is installed, but no Python of the build imports" \
         "paraview.catalyst (see the configure output above)" >&2
    return 1
  fi
}
