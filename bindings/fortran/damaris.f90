! The damaris module: explicit interfaces to the damaris_*_f routines and the error codes.
!
! A program that `use damaris` has every call checked by the compiler (names are CHARACTER,
! blocks, iterations, sizes and ierr default INTEGER, positions INTEGER(8)); the data arguments
! take any type. The routines themselves are in libsidecore (bindings/fortran/damaris_fortran.cpp)
! and are the same symbols a program without the module calls, so the module holds interfaces
! and constants only: it needs no library of its own. Like Damaris's module it makes
! ISO_C_BINDING available (TYPE(C_PTR), C_F_POINTER) for damaris_alloc_f.
module damaris
  use, intrinsic :: iso_c_binding
  implicit none

  ! Error codes: the names and values of Damaris.h (and of Damaris 1.7), never changed.
  integer(c_int), parameter :: DAMARIS_OK = 0
  integer(c_int), parameter :: DAMARIS_INIT_ERROR = 1
  integer(c_int), parameter :: DAMARIS_FINALIZE_ERROR = 2
  integer(c_int), parameter :: DAMARIS_CORE_IS_SERVER = 3
  integer(c_int), parameter :: DAMARIS_NO_SERVER = 4
  integer(c_int), parameter :: DAMARIS_ALLOCATION_ERROR = 5
  integer(c_int), parameter :: DAMARIS_CONFIG_ERROR = 6
  integer(c_int), parameter :: DAMARIS_ARGUMENT_ERROR = 7
  integer(c_int), parameter :: DAMARIS_MPI_ERROR = 8
  integer(c_int), parameter :: DAMARIS_DATASPACE_ERROR = 9
  integer(c_int), parameter :: DAMARIS_CHANNEL_ERROR = 10
  integer(c_int), parameter :: DAMARIS_INVALID_TAG = 11
  integer(c_int), parameter :: DAMARIS_NOT_INITIALIZED = 12
  integer(c_int), parameter :: DAMARIS_ALREADY_INITIALIZED = 13
  integer(c_int), parameter :: DAMARIS_UNDEFINED_ACTION = 14
  integer(c_int), parameter :: DAMARIS_UNDEFINED_PARAMETER = 15
  integer(c_int), parameter :: DAMARIS_UNDEFINED_VARIABLE = 16
  integer(c_int), parameter :: DAMARIS_INVALID_BLOCK = 17
  integer(c_int), parameter :: DAMARIS_INVALID_DIMENSIONS = 18
  integer(c_int), parameter :: DAMARIS_BLOCK_NOT_FOUND = 19
  integer(c_int), parameter :: DAMARIS_REACTOR_NOT_FOUND = 20
  integer(c_int), parameter :: DAMARIS_BIND_ERROR = 21
  integer(c_int), parameter :: DAMARIS_ERROR_UNKNOWN = 22

  ! Sidecore extension (sidecore/stats.h, docs/observability.md): the live counters of this
  ! client and of its writer. The components are the C struct's, in its order (unsigned
  ! counters as INTEGER(C_INT64_T)); `size` starts as the size of the type, as the C API
  ! asks, so that a variable of this type is ready for sidecore_stats_f as declared.
  integer(c_int32_t), parameter :: SIDECORE_STATS_WRITER = 1
  integer(c_int32_t), parameter :: SIDECORE_STATS_WRITE_TIMES = 2
  type, bind(c) :: sidecore_stats_t
    integer(c_int32_t) :: size = 264
    integer(c_int32_t) :: version = 0
    integer(c_int32_t) :: flags = 0
    integer(c_int32_t) :: reserved = 0
    integer(c_int64_t) :: client_iterations = 0
    integer(c_int64_t) :: client_blocks_written = 0
    integer(c_int64_t) :: client_bytes_written = 0
    integer(c_int64_t) :: client_blocks_dropped = 0
    integer(c_int64_t) :: client_bytes_dropped = 0
    integer(c_int64_t) :: client_iterations_skipped = 0
    real(c_double) :: client_write_seconds = 0
    integer(c_int64_t) :: bytes_received = 0
    integer(c_int64_t) :: blocks_received = 0
    integer(c_int64_t) :: bytes_buffered = 0
    integer(c_int64_t) :: buffer_peak = 0
    integer(c_int64_t) :: buffer_capacity = 0
    integer(c_int64_t) :: bytes_spilled = 0
    integer(c_int64_t) :: bytes_in_server_memory = 0
    integer(c_int64_t) :: bytes_written = 0
    integer(c_int64_t) :: bytes_dropped = 0
    integer(c_int64_t) :: bytes_skipped = 0
    integer(c_int64_t) :: bytes_failed = 0
    integer(c_int64_t) :: bytes_pending = 0
    integer(c_int64_t) :: iterations_complete = 0
    integer(c_int64_t) :: iterations_stored = 0
    integer(c_int64_t) :: iterations_incomplete = 0
    integer(c_int64_t) :: store_failures = 0
    integer(c_int64_t) :: latency_count = 0
    real(c_double) :: latency_min = 0
    real(c_double) :: latency_mean = 0
    real(c_double) :: latency_max = 0
    real(c_double) :: latency_last = 0
    real(c_double) :: store_seconds = 0
    real(c_double) :: throughput_bytes_per_second = 0
    real(c_double) :: io_debt_seconds = 0
  end type sidecore_stats_t

  ! Not BIND(C): the compiler passes the length of each name after the explicit arguments, which
  ! is what the routines expect. Data arguments are assumed-type: arrays of any type, kind and
  ! rank (non-contiguous sections are copied in); with gfortran (NO_ARG_CHECK) or a compiler
  ! honouring IGNORE_TKR, a scalar as well.
  interface
    subroutine damaris_initialize_f(configfile, comm, ierr)
      import :: c_int
      character(len=*), intent(in) :: configfile
      integer, intent(in) :: comm  ! a Fortran MPI handle (MPI_COMM_WORLD, or comm%MPI_VAL)
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_initialize_f

    subroutine damaris_finalize_f(ierr)
      import :: c_int
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_finalize_f

    subroutine damaris_start_f(is_client, ierr)
      import :: c_int
      integer(c_int), intent(out) :: is_client
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_start_f

    subroutine damaris_stop_f(ierr)
      import :: c_int
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_stop_f

    subroutine damaris_write_f(varname, data, ierr)
      import :: c_int
      character(len=*), intent(in) :: varname
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: data
      !DIR$ IGNORE_TKR data
      type(*), dimension(*), intent(in) :: data
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_write_f

    subroutine damaris_write_block_f(varname, block, data, ierr)
      import :: c_int
      character(len=*), intent(in) :: varname
      integer(c_int), intent(in) :: block
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: data
      !DIR$ IGNORE_TKR data
      type(*), dimension(*), intent(in) :: data
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_write_block_f

    ! The memory belongs to Sidecore: map it with C_F_POINTER, fill it, then commit and clear.
    function damaris_alloc_f(varname, ierr) result(ptr)
      import :: c_int, c_ptr
      character(len=*), intent(in) :: varname
      integer(c_int), intent(out) :: ierr
      type(c_ptr) :: ptr
    end function damaris_alloc_f

    function damaris_alloc_block_f(varname, block, ierr) result(ptr)
      import :: c_int, c_ptr
      character(len=*), intent(in) :: varname
      integer(c_int), intent(in) :: block
      integer(c_int), intent(out) :: ierr
      type(c_ptr) :: ptr
    end function damaris_alloc_block_f

    subroutine damaris_commit_f(varname, ierr)
      import :: c_int
      character(len=*), intent(in) :: varname
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_commit_f

    subroutine damaris_commit_block_f(varname, block, ierr)
      import :: c_int
      character(len=*), intent(in) :: varname
      integer(c_int), intent(in) :: block
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_commit_block_f

    subroutine damaris_commit_iteration_f(varname, iteration, ierr)
      import :: c_int
      character(len=*), intent(in) :: varname
      integer(c_int), intent(in) :: iteration
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_commit_iteration_f

    subroutine damaris_commit_block_iteration_f(varname, block, iteration, ierr)
      import :: c_int
      character(len=*), intent(in) :: varname
      integer(c_int), intent(in) :: block
      integer(c_int), intent(in) :: iteration
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_commit_block_iteration_f

    subroutine damaris_clear_f(varname, ierr)
      import :: c_int
      character(len=*), intent(in) :: varname
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_clear_f

    subroutine damaris_clear_block_f(varname, block, ierr)
      import :: c_int
      character(len=*), intent(in) :: varname
      integer(c_int), intent(in) :: block
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_clear_block_f

    subroutine damaris_clear_iteration_f(varname, iteration, ierr)
      import :: c_int
      character(len=*), intent(in) :: varname
      integer(c_int), intent(in) :: iteration
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_clear_iteration_f

    subroutine damaris_clear_block_iteration_f(varname, block, iteration, ierr)
      import :: c_int
      character(len=*), intent(in) :: varname
      integer(c_int), intent(in) :: block
      integer(c_int), intent(in) :: iteration
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_clear_block_iteration_f

    subroutine damaris_signal_f(signal_name, ierr)
      import :: c_int
      character(len=*), intent(in) :: signal_name
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_signal_f

    ! One INTEGER(8) per dimension, in the layout's order (fastest first for a Fortran layout).
    subroutine damaris_set_position_f(varname, position, ierr)
      import :: c_int, c_int64_t
      character(len=*), intent(in) :: varname
      integer(c_int64_t), dimension(*), intent(in) :: position
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_set_position_f

    subroutine damaris_set_block_position_f(varname, block, position, ierr)
      import :: c_int, c_int64_t
      character(len=*), intent(in) :: varname
      integer(c_int), intent(in) :: block
      integer(c_int64_t), dimension(*), intent(in) :: position
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_set_block_position_f

    subroutine damaris_client_comm_get_f(comm, ierr)
      import :: c_int
      integer, intent(inout) :: comm  ! set on success only
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_client_comm_get_f

    subroutine damaris_end_iteration_f(ierr)
      import :: c_int
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_end_iteration_f

    ! Sidecore extension (sidecore/schedule.h): mark this client's compute phases for
    ! <schedule policy="phase">.
    subroutine sidecore_compute_begin_f(ierr)
      import :: c_int
      integer(c_int), intent(out) :: ierr
    end subroutine sidecore_compute_begin_f

    subroutine sidecore_compute_end_f(ierr)
      import :: c_int
      integer(c_int), intent(out) :: ierr
    end subroutine sidecore_compute_end_f

    ! Fills stats (sidecore_stats()); ierr as the C function returns.
    subroutine sidecore_stats_f(stats, ierr)
      import :: c_int, sidecore_stats_t
      type(sidecore_stats_t), intent(inout) :: stats
      integer(c_int), intent(out) :: ierr
    end subroutine sidecore_stats_f

    subroutine damaris_get_iteration_f(iteration, ierr)
      import :: c_int
      integer(c_int), intent(out) :: iteration
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_get_iteration_f
  end interface

  ! Parameters: `size` is the size of the value in bytes, a default INTEGER (4,
  ! storage_size(x)/8) or, through Sidecore's second routine, INTEGER(C_SIZE_T) (c_sizeof(x),
  ! gfortran's sizeof(x)). The value is a scalar of the parameter's type.
  interface damaris_parameter_get_f
    subroutine damaris_parameter_get_f(param_name, buffer, size, ierr)
      import :: c_int
      character(len=*), intent(in) :: param_name
      type(*), intent(inout) :: buffer
      integer(c_int), intent(in) :: size
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_parameter_get_f

    subroutine sidecore_parameter_get_sz_f(param_name, buffer, size, ierr)
      import :: c_int, c_size_t
      character(len=*), intent(in) :: param_name
      type(*), intent(inout) :: buffer
      integer(c_size_t), intent(in) :: size
      integer(c_int), intent(out) :: ierr
    end subroutine sidecore_parameter_get_sz_f
  end interface damaris_parameter_get_f

  interface damaris_parameter_set_f
    subroutine damaris_parameter_set_f(param_name, buffer, size, ierr)
      import :: c_int
      character(len=*), intent(in) :: param_name
      type(*), intent(in) :: buffer
      integer(c_int), intent(in) :: size
      integer(c_int), intent(out) :: ierr
    end subroutine damaris_parameter_set_f

    subroutine sidecore_parameter_set_sz_f(param_name, buffer, size, ierr)
      import :: c_int, c_size_t
      character(len=*), intent(in) :: param_name
      type(*), intent(in) :: buffer
      integer(c_size_t), intent(in) :: size
      integer(c_int), intent(out) :: ierr
    end subroutine sidecore_parameter_set_sz_f
  end interface damaris_parameter_set_f
end module damaris
