# What the scripts of this folder share to install what they need on Debian/Ubuntu. Source it.
#
# missing_packages PKG...       prints, one per line, the packages of PKG... not installed.
# install_packages WHO PKG...   installs those of PKG... that are missing (apt-get, through sudo
#                               unless root), saying "WHO: installing ..." first; returns 2,
#                               saying so, when there is no apt-get to install them with.
# build_packages (an array)     what building and testing Sidecore needs (scripts/setup.sh).
# test_packages (an array)      what the tests need beyond that (scripts/test.sh): valgrind,
#                               whose lackey tool bench.cold_write traces a hand-over with,
#                               FUSE 3, for the proxy matrix's throttled target (bench/throttle),
#                               and gdb, whose stacks of a job that hangs the tests print.

build_packages=(build-essential ccache cmake ninja-build pkg-config gfortran libopenmpi-dev
                openmpi-bin libhdf5-openmpi-dev hdf5-tools libpugixml-dev libcli11-dev libgtest-dev
                python3-venv python3-dev)
test_packages=(valgrind fuse3 libfuse3-dev gdb)

missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

install_packages() {
  local who=$1
  shift
  local missing
  mapfile -t missing < <(missing_packages "$@")
  ((${#missing[@]})) || return 0
  if ! command -v apt-get >/dev/null; then
    echo "$who: ${missing[*]} not installed, and no apt-get to install them with" >&2
    return 2
  fi
  echo "$who: installing ${missing[*]}"
  local sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
}
