# shellcheck shell=bash
# What the scripts that build against MPICH share. Source it.
#
# install_mpich WHO   installs MPICH and the HDF5 built for it (Debian/Ubuntu) when missing,
#                     saying "WHO: installing ..." first. The alternatives that choose the
#                     system's default MPI (mpicc, mpirun, the MPI headers, h5pcc, hdf5.pc) point,
#                     after the installation, where they pointed before it: installing MPICH
#                     never changes what the default build (Open MPI) finds.

# shellcheck source=debian_packages.sh
. "$(dirname "${BASH_SOURCE[0]}")/debian_packages.sh"

install_mpich() {
  local who=$1 missing
  mapfile -t missing < <(missing_packages mpich libmpich-dev libhdf5-mpich-dev)
  ((${#missing[@]})) || return 0
  local groups=(mpi mpirun "mpi-$(gcc -print-multiarch)" h5pcc hdf5.pc) g now
  declare -A before=()
  for g in "${groups[@]}"; do
    before[$g]=$(update-alternatives --query "$g" 2>/dev/null | sed -n 's/^Value: //p' || true)
  done
  install_packages "$who" "${missing[@]}"
  local sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  for g in "${groups[@]}"; do
    now=$(update-alternatives --query "$g" 2>/dev/null | sed -n 's/^Value: //p' || true)
    if [ -n "${before[$g]}" ] && [ "$now" != "${before[$g]}" ]; then
      echo "$who: alternative $g back to ${before[$g]} (not $now)"
      "${sudo_cmd[@]}" update-alternatives --quiet --set "$g" "${before[$g]}"
    fi
  done
}
