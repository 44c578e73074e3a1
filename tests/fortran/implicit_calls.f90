! A simulation written as for Damaris: no Sidecore module, every damaris_*_f routine called
! through an implicit interface, one block per client (<domains count="1"/>).
!
! Usage: mpirun -np N fortran_implicit_calls <config.xml> <iterations>
! Each client writes, per iteration, a 2D field (write_f), a 3D field (alloc_f, commit_f,
! clear_f) and a scalar (write_block_f, block 0), places the fields with set_position_f,
! enlarges NX from the second iteration on (parameter_set_f) and signals "tick".
! The values are formulas of (iteration, client, indices) that run_fortran_test.py recomputes.

program implicit_calls
  use mpi
  implicit none
  character(len=512) :: config   ! passed blank-padded: the routines trim it
  character(len=16) :: arg
  integer :: ierr, is_client, comm, iterations

  call mpi_init(ierr)
  call get_command_argument(1, config)
  call get_command_argument(2, arg)
  read (arg, *) iterations

  call damaris_initialize_f(config, MPI_COMM_WORLD, ierr)
  call expect(ierr, 0, 'damaris_initialize_f')
  ! Without dedicated cores, start and stop return DAMARIS_NO_SERVER (4), as in Damaris.
  call damaris_start_f(is_client, ierr)
  if (ierr .ne. 4) call expect(ierr, 0, 'damaris_start_f')
  if (is_client .gt. 0) then
    call damaris_client_comm_get_f(comm, ierr)
    call expect(ierr, 0, 'damaris_client_comm_get_f')
    call simulate(comm, iterations)
    call damaris_stop_f(ierr)
    if (ierr .ne. 4) call expect(ierr, 0, 'damaris_stop_f')
  end if
  call damaris_finalize_f(ierr)
  call expect(ierr, 0, 'damaris_finalize_f')
  call mpi_finalize(ierr)
end program implicit_calls

subroutine simulate(comm, iterations)
  use mpi
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_associated
  implicit none
  integer, intent(in) :: comm, iterations
  integer, parameter :: ny = 3, nz = 2
  character(len=32) :: padded_name
  integer :: rank, it, nx, value, current, step, i, j, k, ierr
  integer(8) :: plane_position(2), box_position(3)
  double precision, allocatable :: temperature(:, :)
  real, pointer :: density(:, :, :)
  type(c_ptr) :: memory
  type(c_ptr), external :: damaris_alloc_f

  call mpi_comm_rank(comm, rank, ierr)
  padded_name = 'temperature'
  nx = 4
  do it = 0, iterations - 1
    call damaris_get_iteration_f(current, ierr)
    call expect(ierr, 0, 'damaris_get_iteration_f')
    call expect(current, it, 'the iteration from damaris_get_iteration_f')

    if (it .eq. 1) then
      ! Each client enlarges its own blocks: parameters are per process.
      call damaris_parameter_get_f('NX', value, 4, ierr)
      call expect(ierr, 0, 'damaris_parameter_get_f')
      call expect(value, 4, 'NX from the XML')
      nx = 5 + rank
      call damaris_parameter_set_f('NX', nx, 4, ierr)
      call expect(ierr, 0, 'damaris_parameter_set_f')
      call damaris_parameter_get_f('NX', value, 4, ierr)
      call expect(value, nx, 'NX after damaris_parameter_set_f')
    end if

    allocate (temperature(nx, ny))
    do j = 1, ny
      do i = 1, nx
        temperature(i, j) = it * 10000 + rank * 1000 + i * 10 + j
      end do
    end do
    plane_position(1) = rank * 16 + it
    plane_position(2) = 0
    call damaris_set_position_f(padded_name, plane_position, ierr)
    call expect(ierr, 0, 'damaris_set_position_f(temperature)')
    call damaris_write_f('temperature', temperature, ierr)
    call expect(ierr, 0, 'damaris_write_f(temperature)')
    deallocate (temperature)

    box_position(1) = rank * 16 + it
    box_position(2) = 0
    box_position(3) = 0
    call damaris_set_position_f('fluid/density', box_position, ierr)
    call expect(ierr, 0, 'damaris_set_position_f(fluid/density)')
    memory = damaris_alloc_f('fluid/density', ierr)
    call expect(ierr, 0, 'damaris_alloc_f(fluid/density)')
    if (.not. c_associated(memory)) call expect(1, 0, 'the address from damaris_alloc_f')
    call c_f_pointer(memory, density, (/nx, ny, nz/))
    do k = 1, nz
      do j = 1, ny
        do i = 1, nx
          density(i, j, k) = it * 10000 + rank * 1000 + k * 100 + i * 10 + j
        end do
      end do
    end do
    call damaris_commit_f('fluid/density', ierr)
    call expect(ierr, 0, 'damaris_commit_f(fluid/density)')
    call damaris_clear_f('fluid/density', ierr)
    call expect(ierr, 0, 'damaris_clear_f(fluid/density)')

    step = it * 100 + rank
    call damaris_write_block_f('step', 0, step, ierr)
    call expect(ierr, 0, 'damaris_write_block_f(step)')

    call damaris_signal_f('tick', ierr)
    call expect(ierr, 0, 'damaris_signal_f(tick)')
    call damaris_end_iteration_f(ierr)
    call expect(ierr, 0, 'damaris_end_iteration_f')
  end do
  call damaris_get_iteration_f(current, ierr)
  call expect(current, iterations, 'the iteration after the last damaris_end_iteration_f')
  print '(a,i0,a)', 'implicit_calls: client ', rank, ' done'
end subroutine simulate

! The action of the event "tick" (named in the XML, found in the executable): one line per run
! in tick_<source>_<iteration>, which run_fortran_test.py counts.
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

subroutine expect(got, want, what)
  use mpi
  implicit none
  integer, intent(in) :: got, want
  character(len=*), intent(in) :: what
  integer :: ierr

  if (got .ne. want) then
    print '(a,a,a,i0,a,i0)', 'FAIL: ', what, ': got ', got, ', expected ', want
    call mpi_abort(MPI_COMM_WORLD, 1, ierr)
  end if
end subroutine expect
