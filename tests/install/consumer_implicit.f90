! An outside Fortran program written as for Damaris (no module): built against the installed
! Sidecore with sidecore.pc alone. Writes 4 integers per client and iteration and signals an
! event whose action (consumer_event) it implements.
program consumer_implicit
  use mpi
  implicit none
  integer :: ierr, is_client, comm, rank, it, i
  integer :: values(4)

  call mpi_init(ierr)
  call damaris_initialize_f('consumer.xml', MPI_COMM_WORLD, ierr)
  if (ierr .ne. 0) call mpi_abort(MPI_COMM_WORLD, 1, ierr)
  call damaris_start_f(is_client, ierr)
  if (is_client .gt. 0) then
    call damaris_client_comm_get_f(comm, ierr)
    call mpi_comm_rank(comm, rank, ierr)
    do it = 0, 1
      do i = 1, 4
        values(i) = it * 1000 + rank * 10 + (i - 1)
      end do
      call damaris_write_f('values', values, ierr)
      if (ierr .ne. 0) call mpi_abort(MPI_COMM_WORLD, 2, ierr)
      call damaris_signal_f('ran', ierr)
      call damaris_end_iteration_f(ierr)
    end do
    call damaris_stop_f(ierr)
  end if
  call damaris_finalize_f(ierr)
  call mpi_finalize(ierr)
end program consumer_implicit

subroutine consumer_event(name, source, iteration, args) bind(c, name='consumer_event')
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int32_t
  implicit none
  type(c_ptr), value :: name, args
  integer(c_int32_t), value :: source, iteration
  character(len=64) :: path
  integer :: unit

  write (path, '(a,i0,a,i0)') 'event_ran_', source, '_', iteration
  open (newunit=unit, file=trim(path), status='replace', action='write')
  close (unit)
end subroutine consumer_event
