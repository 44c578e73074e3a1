! A simulation written for Sidecore's `damaris` module: every call checked against an explicit
! interface (built with -Werror=implicit-interface), two blocks per client
! (<domains count="2"/>), error codes compared with the module's constants.
!
! Usage: mpirun -np N fortran_module_calls <config.xml> <iterations>
! Per iteration and block, each client writes a 2D field (write_block_f), a 3D field (alloc_f
! for block 0, alloc_block_f for block 1, then the commit and clear variants) placed with
! set_position_f / set_block_position_f, plus a scalar (write_f) for block 0; it enlarges NX
! from the second iteration on and signals "tick". run_fortran_test.py recomputes the values.

module module_calls_checks
  use mpi
  use damaris
  implicit none
contains
  subroutine expect(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    integer :: ierr

    if (got /= want) then
      print '(a,a,a,i0,a,i0)', 'FAIL: ', what, ': got ', got, ', expected ', want
      call mpi_abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine expect

  ! Calls that must fail, each with its Damaris code.
  subroutine check_refusals()
    integer :: ierr, value
    double precision :: field(8, 8)

    field = 0
    value = 0
    call damaris_write_f('no_such_variable', field, ierr)
    call expect(ierr, DAMARIS_UNDEFINED_VARIABLE, 'write_f of an unknown variable')
    call damaris_write_block_f('temperature', -1, field, ierr)
    call expect(ierr, DAMARIS_INVALID_BLOCK, 'write_block_f of block -1')
    call damaris_parameter_get_f('NO_SUCH_PARAMETER', value, 4, ierr)
    call expect(ierr, DAMARIS_UNDEFINED_PARAMETER, 'parameter_get_f of an unknown parameter')
    call damaris_parameter_set_f('NX', value, 3, ierr)
    call expect(ierr, DAMARIS_ARGUMENT_ERROR, 'parameter_set_f with a size of 3 for an int')
    call damaris_parameter_get_f('NX', value, -1, ierr)
    call expect(ierr, DAMARIS_ARGUMENT_ERROR, 'parameter_get_f with a negative size')
    call damaris_signal_f('no_such_event', ierr)
    call expect(ierr, DAMARIS_UNDEFINED_ACTION, 'signal_f of an unknown event')
    call damaris_commit_f('temperature', ierr)
    call expect(ierr, DAMARIS_BLOCK_NOT_FOUND, 'commit_f of a block never allocated')
    call damaris_clear_block_f('fluid/density', 1, ierr)
    call expect(ierr, DAMARIS_BLOCK_NOT_FOUND, 'clear_block_f of a block never allocated')
  end subroutine check_refusals

  ! Live counters (sidecore_stats_f) after ending iteration `it`: this client's exact; its
  ! writer (a dedicated core, or its own synchronous stores) known, with a buffer.
  subroutine check_stats(it, rank, nx, blocks, bytes)
    integer, intent(in) :: it, rank, nx
    integer(c_int64_t), intent(in) :: blocks, bytes
    type(sidecore_stats_t) :: stats
    integer :: ierr

    call expect(int(stats%size), int(c_sizeof(stats)), 'the initial size of sidecore_stats_t')
    call sidecore_stats_f(stats, ierr)
    call expect(ierr, DAMARIS_OK, 'sidecore_stats_f')
    call expect(int(stats%size), int(c_sizeof(stats)), 'the size sidecore_stats_f filled')
    call expect(int(stats%version), 1, 'the version from sidecore_stats_f')
    call expect(int(stats%client_iterations), it + 1, 'client_iterations')
    call expect(int(stats%client_blocks_written), int(blocks), 'client_blocks_written')
    call expect(int(stats%client_bytes_written), int(bytes), 'client_bytes_written')
    call expect(int(stats%client_bytes_dropped), 0, 'client_bytes_dropped')
    call expect(int(iand(stats%flags, SIDECORE_STATS_WRITER)), int(SIDECORE_STATS_WRITER), &
                'the writer flag of sidecore_stats_f')
    if (stats%buffer_capacity <= 0) call expect(int(stats%buffer_capacity), 1, 'buffer_capacity')
    if (rank < 0 .or. nx < 0) call expect(0, 1, 'arguments')
  end subroutine check_stats
end module module_calls_checks

program module_calls
  use mpi
  use damaris
  use module_calls_checks
  implicit none
  character(len=512) :: config
  character(len=16) :: arg
  integer :: ierr, is_client, comm, iterations, current

  call mpi_init(ierr)
  call get_command_argument(1, config)
  call get_command_argument(2, arg)
  read (arg, *) iterations

  call damaris_get_iteration_f(current, ierr)
  call expect(ierr, DAMARIS_NOT_INITIALIZED, 'get_iteration_f before initialize_f')
  call damaris_initialize_f(config, MPI_COMM_WORLD, ierr)
  call expect(ierr, DAMARIS_OK, 'damaris_initialize_f')
  call damaris_initialize_f(config, MPI_COMM_WORLD, ierr)
  call expect(ierr, DAMARIS_ALREADY_INITIALIZED, 'a second damaris_initialize_f')
  ! Without dedicated cores, start and stop return DAMARIS_NO_SERVER, as in Damaris.
  call damaris_start_f(is_client, ierr)
  if (ierr /= DAMARIS_NO_SERVER) call expect(ierr, DAMARIS_OK, 'damaris_start_f')
  if (is_client == 1) then
    comm = MPI_COMM_NULL
    call damaris_client_comm_get_f(comm, ierr)
    call expect(ierr, DAMARIS_OK, 'damaris_client_comm_get_f')
    call simulate(comm, iterations)
    call damaris_stop_f(ierr)
    if (ierr /= DAMARIS_NO_SERVER) call expect(ierr, DAMARIS_OK, 'damaris_stop_f')
  else
    ! A dedicated core returns from damaris_start_f once its clients have stopped.
    call damaris_end_iteration_f(ierr)
    call expect(ierr, DAMARIS_CORE_IS_SERVER, 'end_iteration_f on a dedicated core')
    call sidecore_compute_begin_f(ierr)
    call expect(ierr, DAMARIS_CORE_IS_SERVER, 'sidecore_compute_begin_f on a dedicated core')
  end if
  call damaris_finalize_f(ierr)
  call expect(ierr, DAMARIS_OK, 'damaris_finalize_f')
  call damaris_finalize_f(ierr)
  call expect(ierr, DAMARIS_NOT_INITIALIZED, 'a second damaris_finalize_f')
  call mpi_finalize(ierr)

contains

  subroutine simulate(comm, iterations)
    integer, intent(in) :: comm, iterations
    integer, parameter :: ny = 3, nz = 2, blocks = 2
    ! Names as Fortran programs build them: blank-padded, or ended by a NUL.
    character(len=40), parameter :: temperature_name = 'temperature'
    character(len=*), parameter :: density_name = 'fluid/density'//c_null_char//'ignored'
    integer :: rank, it, b, nx, value, current, nclients, i, j, k, ierr
    integer(c_int64_t) :: position(3), blocks_so_far, bytes_so_far
    double precision, allocatable :: temperature(:, :)
    real(c_float), pointer :: density(:, :, :)
    type(c_ptr) :: memory

    call mpi_comm_rank(comm, rank, ierr)
    call mpi_comm_size(comm, nclients, ierr)
    call check_refusals()
    nx = 4
    blocks_so_far = 0
    bytes_so_far = 0
    do it = 0, iterations - 1
      call damaris_get_iteration_f(current, ierr)
      call expect(ierr, DAMARIS_OK, 'damaris_get_iteration_f')
      call expect(current, it, 'the iteration from damaris_get_iteration_f')

      if (it == 1) then
        ! Both kinds of size: C_SIZEOF (INTEGER(C_SIZE_T)) and a default INTEGER.
        call damaris_parameter_get_f('NX', value, c_sizeof(value), ierr)
        call expect(ierr, DAMARIS_OK, 'damaris_parameter_get_f (c_sizeof)')
        call expect(value, 4, 'NX from the XML')
        nx = 5 + rank
        call damaris_parameter_set_f('NX', nx, storage_size(nx) / 8, ierr)
        call expect(ierr, DAMARIS_OK, 'damaris_parameter_set_f (storage_size)')
        value = 0
        call damaris_parameter_get_f('NX   ', value, 4, ierr)
        call expect(value, nx, 'NX after damaris_parameter_set_f')
      end if

      allocate (temperature(nx, ny))
      do b = 0, blocks - 1
        do j = 1, ny
          do i = 1, nx
            temperature(i, j) = it * 10000 + rank * 1000 + b * 100 + i * 10 + j
          end do
        end do
        position(1:2) = [int(rank * 16 + it, c_int64_t), int(b * ny, c_int64_t)]
        call damaris_set_block_position_f(temperature_name, b, position, ierr)
        call expect(ierr, DAMARIS_OK, 'damaris_set_block_position_f(temperature)')
        call damaris_write_block_f(temperature_name, b, temperature, ierr)
        call expect(ierr, DAMARIS_OK, 'damaris_write_block_f(temperature)')
      end do
      deallocate (temperature)

      do b = 0, blocks - 1
        position = [int(rank * 16 + it, c_int64_t), int(b * ny, c_int64_t), 0_c_int64_t]
        if (b == 0) then
          call damaris_set_position_f(density_name, position, ierr)
          call expect(ierr, DAMARIS_OK, 'damaris_set_position_f(fluid/density)')
          memory = damaris_alloc_f(density_name, ierr)
          call expect(ierr, DAMARIS_OK, 'damaris_alloc_f(fluid/density)')
        else
          call damaris_set_block_position_f(density_name, b, position, ierr)
          call expect(ierr, DAMARIS_OK, 'damaris_set_block_position_f(fluid/density)')
          memory = damaris_alloc_block_f(density_name, b, ierr)
          call expect(ierr, DAMARIS_OK, 'damaris_alloc_block_f(fluid/density)')
        end if
        if (.not. c_associated(memory)) call expect(1, 0, 'the address from damaris_alloc')
        call c_f_pointer(memory, density, [nx, ny, nz])
        do k = 1, nz
          do j = 1, ny
            do i = 1, nx
              density(i, j, k) = it * 10000 + rank * 1000 + b * 500 + k * 100 + i * 10 + j
            end do
          end do
        end do
        if (b == 0) then
          call damaris_commit_iteration_f(density_name, it, ierr)
          call expect(ierr, DAMARIS_OK, 'damaris_commit_iteration_f')
          call damaris_clear_iteration_f(density_name, it, ierr)
          call expect(ierr, DAMARIS_OK, 'damaris_clear_iteration_f')
        else if (mod(it, 2) == 0) then
          call damaris_commit_block_f(density_name, b, ierr)
          call expect(ierr, DAMARIS_OK, 'damaris_commit_block_f')
          call damaris_clear_block_f(density_name, b, ierr)
          call expect(ierr, DAMARIS_OK, 'damaris_clear_block_f')
        else
          call damaris_commit_block_iteration_f(density_name, b, it, ierr)
          call expect(ierr, DAMARIS_OK, 'damaris_commit_block_iteration_f')
          call damaris_clear_block_iteration_f(density_name, b, it, ierr)
          call expect(ierr, DAMARIS_OK, 'damaris_clear_block_iteration_f')
        end if
      end do

      blocks_so_far = blocks_so_far + 5
      bytes_so_far = bytes_so_far + blocks * (nx * ny * 8 + nx * ny * nz * 4) + 4
      ! A scalar passed where the interface declares an assumed-type array (gfortran).
      call damaris_write_f('step', it * 100 + rank, ierr)
      call expect(ierr, DAMARIS_OK, 'damaris_write_f(step)')

      call damaris_signal_f('tick'//c_null_char, ierr)
      call expect(ierr, DAMARIS_OK, 'damaris_signal_f(tick)')
      call damaris_end_iteration_f(ierr)
      call expect(ierr, DAMARIS_OK, 'damaris_end_iteration_f')
      call check_stats(it, rank, nx, blocks_so_far, bytes_so_far)
      ! Compute phases (Sidecore extension): harmless without <schedule policy="phase">.
      call sidecore_compute_begin_f(ierr)
      call expect(ierr, DAMARIS_OK, 'sidecore_compute_begin_f')
      call sidecore_compute_end_f(ierr)
      call expect(ierr, DAMARIS_OK, 'sidecore_compute_end_f')
    end do
    call damaris_get_iteration_f(current, ierr)
    call expect(current, iterations, 'the iteration after the last damaris_end_iteration_f')
    print '(a,i0,a,i0,a)', 'module_calls: client ', rank, ' of ', nclients, ' done'
  end subroutine simulate
end program module_calls

! The action of the event "tick": one line per run in tick_<source>_<iteration>.
subroutine fortran_tick(name, source, iteration, args) bind(c, name='fortran_tick')
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int32_t
  implicit none
  type(c_ptr), value :: name, args
  integer(c_int32_t), value :: source, iteration
  character(len=64) :: path
  integer :: unit

  write (path, '(a,i0,a,i0)') 'tick_', source, '_', iteration
  open (newunit=unit, file=trim(path), status='unknown', position='append', action='write')
  write (unit, '(a)') 'ran'
  close (unit)
end subroutine fortran_tick
