# Sourced by the scripts that run the tests in parallel under Open MPI.
#
# keep_ompi_session_dir   keeps Open MPI's top session directory (<tmp>/ompi.<host>.<uid>)
#                         from being removed while tests run. Each mpirun removes that
#                         directory at its end when it is empty, and a second mpirun creating
#                         its own directory inside it at that moment fails at start-up ("A call
#                         to mkdir was unable to create the desired directory ... File
#                         exists", Open MPI issue 8510). A directory of ours inside keeps it
#                         non-empty; it is removed when the calling script exits.

keep_ompi_session_dir() {
  local host
  host=$(hostname)
  local top="${TMPDIR:-/tmp}/ompi.${host%%.*}.$(id -u)"
  ompi_session_keeper="$top/sidecore-tests-$$"
  mkdir -p "$ompi_session_keeper"
  trap 'rmdir "$ompi_session_keeper" 2>/dev/null || true' EXIT
}
