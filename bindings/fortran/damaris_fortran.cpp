// The Damaris Fortran API (damaris_*_f): Fortran arguments converted for the C API, nothing more.
//
// Calling convention, that of Damaris and of gfortran (>= 8), Intel, flang and NVIDIA Fortran on
// Linux: lower-case names with a trailing underscore; every argument by reference; the error
// code through `ierr`, the last explicit argument; the length of each character argument by
// value (size_t) after all the explicit ones; MPI communicators as Fortran integer handles.
// Fortran default INTEGER is C int. A call made without the module (implicit interface) and a
// call through the `damaris` module (damaris.f90) reach the same symbols.
#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>

#include "Damaris.h"
#include "sidecore/schedule.h"
#include "sidecore/stats.h"

#define SIDECORE_FORTRAN_API extern "C" __attribute__((visibility("default")))

namespace {

// A Fortran string is blank-padded and not terminated: the text ends at the first NUL (a
// name built with c_null_char) or before the trailing blanks.
std::string from_fortran(const char* text, std::size_t length) {
  if (text == nullptr) return std::string();
  std::size_t end = 0;
  while (end < length && text[end] != '\0') ++end;
  while (end > 0 && text[end - 1] == ' ') --end;
  return std::string(text, end);
}

// Runs one call of the C API and stores its code in *ierr. The C API never throws; copying a
// name can (out of memory), and no exception may unwind through Fortran frames.
template <typename Call>
void to_ierr(int* ierr, Call&& call) noexcept {
  int code = DAMARIS_ERROR_UNKNOWN;
  try {
    code = call();
  } catch (const std::bad_alloc&) {
    code = DAMARIS_ALLOCATION_ERROR;
  } catch (...) {
    code = DAMARIS_ERROR_UNKNOWN;
  }
  if (ierr != nullptr) *ierr = code;
}

// Fortran passes every argument by reference; a null one can only come from an absent
// optional argument passed on, and is refused like a null pointer in the C API.
template <typename... Pointers>
bool any_null(const Pointers*... pointers) {
  return ((pointers == nullptr) || ...);
}

}  // namespace

SIDECORE_FORTRAN_API void damaris_initialize_f_(const char* configfile, const MPI_Fint* comm,
                                                int* ierr, std::size_t configfile_len) {
  to_ierr(ierr, [&] {
    if (any_null(comm)) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    // MPI_Comm_f2c needs MPI: before MPI_Init, damaris_initialize reports the missing call.
    int mpi_ready = 0;
    MPI_Initialized(&mpi_ready);
    const MPI_Comm c_comm = mpi_ready ? MPI_Comm_f2c(*comm) : MPI_COMM_NULL;
    return damaris_initialize(from_fortran(configfile, configfile_len).c_str(), c_comm);
  });
}

SIDECORE_FORTRAN_API void damaris_finalize_f_(int* ierr) {
  to_ierr(ierr, [] { return damaris_finalize(); });
}

SIDECORE_FORTRAN_API void damaris_start_f_(int* is_client, int* ierr) {
  to_ierr(ierr, [&] { return damaris_start(is_client); });
}

SIDECORE_FORTRAN_API void damaris_stop_f_(int* ierr) {
  to_ierr(ierr, [] { return damaris_stop(); });
}

SIDECORE_FORTRAN_API void damaris_write_f_(const char* varname, const void* data, int* ierr,
                                           std::size_t varname_len) {
  to_ierr(ierr, [&] { return damaris_write(from_fortran(varname, varname_len).c_str(), data); });
}

SIDECORE_FORTRAN_API void damaris_write_block_f_(const char* varname, const int* block,
                                                 const void* data, int* ierr,
                                                 std::size_t varname_len) {
  to_ierr(ierr, [&] {
    if (any_null(block)) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_write_block(from_fortran(varname, varname_len).c_str(), *block, data);
  });
}

// The allocating routines are functions returning the address (TYPE(C_PTR) in Fortran).
SIDECORE_FORTRAN_API void* damaris_alloc_f_(const char* varname, int* ierr,
                                            std::size_t varname_len) {
  void* ptr = nullptr;
  to_ierr(ierr, [&] { return damaris_alloc(from_fortran(varname, varname_len).c_str(), &ptr); });
  return ptr;
}

SIDECORE_FORTRAN_API void* damaris_alloc_block_f_(const char* varname, const int* block, int* ierr,
                                                  std::size_t varname_len) {
  void* ptr = nullptr;
  to_ierr(ierr, [&] {
    if (any_null(block)) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_alloc_block(from_fortran(varname, varname_len).c_str(), *block, &ptr);
  });
  return ptr;
}

SIDECORE_FORTRAN_API void damaris_commit_f_(const char* varname, int* ierr,
                                            std::size_t varname_len) {
  to_ierr(ierr, [&] { return damaris_commit(from_fortran(varname, varname_len).c_str()); });
}

SIDECORE_FORTRAN_API void damaris_commit_block_f_(const char* varname, const int* block, int* ierr,
                                                  std::size_t varname_len) {
  to_ierr(ierr, [&] {
    if (any_null(block)) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_commit_block(from_fortran(varname, varname_len).c_str(), *block);
  });
}

SIDECORE_FORTRAN_API void damaris_commit_iteration_f_(const char* varname, const int* iteration,
                                                      int* ierr, std::size_t varname_len) {
  to_ierr(ierr, [&] {
    if (any_null(iteration)) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_commit_iteration(from_fortran(varname, varname_len).c_str(), *iteration);
  });
}

SIDECORE_FORTRAN_API void damaris_commit_block_iteration_f_(const char* varname, const int* block,
                                                            const int* iteration, int* ierr,
                                                            std::size_t varname_len) {
  to_ierr(ierr, [&] {
    if (any_null(block, iteration)) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_commit_block_iteration(from_fortran(varname, varname_len).c_str(), *block,
                                          *iteration);
  });
}

SIDECORE_FORTRAN_API void damaris_clear_f_(const char* varname, int* ierr,
                                           std::size_t varname_len) {
  to_ierr(ierr, [&] { return damaris_clear(from_fortran(varname, varname_len).c_str()); });
}

SIDECORE_FORTRAN_API void damaris_clear_block_f_(const char* varname, const int* block, int* ierr,
                                                 std::size_t varname_len) {
  to_ierr(ierr, [&] {
    if (any_null(block)) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_clear_block(from_fortran(varname, varname_len).c_str(), *block);
  });
}

SIDECORE_FORTRAN_API void damaris_clear_iteration_f_(const char* varname, const int* iteration,
                                                     int* ierr, std::size_t varname_len) {
  to_ierr(ierr, [&] {
    if (any_null(iteration)) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_clear_iteration(from_fortran(varname, varname_len).c_str(), *iteration);
  });
}

SIDECORE_FORTRAN_API void damaris_clear_block_iteration_f_(const char* varname, const int* block,
                                                           const int* iteration, int* ierr,
                                                           std::size_t varname_len) {
  to_ierr(ierr, [&] {
    if (any_null(block, iteration)) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_clear_block_iteration(from_fortran(varname, varname_len).c_str(), *block,
                                         *iteration);
  });
}

SIDECORE_FORTRAN_API void damaris_signal_f_(const char* signal_name, int* ierr,
                                            std::size_t signal_name_len) {
  to_ierr(ierr, [&] { return damaris_signal(from_fortran(signal_name, signal_name_len).c_str()); });
}

// The buffer size is a default INTEGER, as in Damaris; a negative one is refused rather than
// converted to a huge unsigned value.
SIDECORE_FORTRAN_API void damaris_parameter_get_f_(const char* param_name, void* buffer,
                                                   const int* size, int* ierr,
                                                   std::size_t param_name_len) {
  to_ierr(ierr, [&] {
    if (any_null(size) || *size < 0) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_parameter_get(from_fortran(param_name, param_name_len).c_str(), buffer,
                                 static_cast<unsigned int>(*size));
  });
}

SIDECORE_FORTRAN_API void damaris_parameter_set_f_(const char* param_name, const void* buffer,
                                                   const int* size, int* ierr,
                                                   std::size_t param_name_len) {
  to_ierr(ierr, [&] {
    if (any_null(size) || *size < 0) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_parameter_set(from_fortran(param_name, param_name_len).c_str(), buffer,
                                 static_cast<unsigned int>(*size));
  });
}

// Sidecore extensions, reached only through the generic damaris_parameter_get_f and
// damaris_parameter_set_f of the module: the same routines with an INTEGER(C_SIZE_T) size, the
// kind of C_SIZEOF() and of gfortran's SIZEOF() (which Damaris's manual passes).
SIDECORE_FORTRAN_API void sidecore_parameter_get_sz_f_(const char* param_name, void* buffer,
                                                       const std::size_t* size, int* ierr,
                                                       std::size_t param_name_len) {
  to_ierr(ierr, [&] {
    if (any_null(size) || *size > UINT_MAX) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_parameter_get(from_fortran(param_name, param_name_len).c_str(), buffer,
                                 static_cast<unsigned int>(*size));
  });
}

SIDECORE_FORTRAN_API void sidecore_parameter_set_sz_f_(const char* param_name, const void* buffer,
                                                       const std::size_t* size, int* ierr,
                                                       std::size_t param_name_len) {
  to_ierr(ierr, [&] {
    if (any_null(size) || *size > UINT_MAX) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_parameter_set(from_fortran(param_name, param_name_len).c_str(), buffer,
                                 static_cast<unsigned int>(*size));
  });
}

// Positions are INTEGER(8) (C int64_t), one per dimension, fastest first for a Fortran layout.
SIDECORE_FORTRAN_API void damaris_set_position_f_(const char* varname, const std::int64_t* position,
                                                  int* ierr, std::size_t varname_len) {
  to_ierr(ierr, [&] {
    return damaris_set_position(from_fortran(varname, varname_len).c_str(), position);
  });
}

SIDECORE_FORTRAN_API void damaris_set_block_position_f_(const char* varname, const int* block,
                                                        const std::int64_t* position, int* ierr,
                                                        std::size_t varname_len) {
  to_ierr(ierr, [&] {
    if (any_null(block)) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    return damaris_set_block_position(from_fortran(varname, varname_len).c_str(), *block, position);
  });
}

// The communicator is set only on success, as in Damaris.
SIDECORE_FORTRAN_API void damaris_client_comm_get_f_(MPI_Fint* comm, int* ierr) {
  to_ierr(ierr, [&] {
    if (any_null(comm)) return static_cast<int>(DAMARIS_ARGUMENT_ERROR);
    MPI_Comm client_comm = MPI_COMM_NULL;
    const int code = damaris_client_comm_get(&client_comm);
    if (code == DAMARIS_OK) *comm = MPI_Comm_c2f(client_comm);
    return code;
  });
}

SIDECORE_FORTRAN_API void damaris_end_iteration_f_(int* ierr) {
  to_ierr(ierr, [] { return damaris_end_iteration(); });
}

SIDECORE_FORTRAN_API void sidecore_compute_begin_f_(int* ierr) {
  to_ierr(ierr, [] { return sidecore_compute_begin(); });
}

SIDECORE_FORTRAN_API void sidecore_compute_end_f_(int* ierr) {
  to_ierr(ierr, [] { return sidecore_compute_end(); });
}

// The module's TYPE(sidecore_stats_t) is this struct; its `size` component starts at 264.
static_assert(sizeof(sidecore_stats_t) == 264,
              "update the initial size of sidecore_stats_t in damaris.f90");

SIDECORE_FORTRAN_API void sidecore_stats_f_(sidecore_stats_t* stats, int* ierr) {
  to_ierr(ierr, [&] { return sidecore_stats(stats); });
}

SIDECORE_FORTRAN_API void damaris_get_iteration_f_(int* iteration, int* ierr) {
  to_ierr(ierr, [&] { return damaris_get_iteration(iteration); });
}
