// Communicators Sidecore owns: freed with their owner, and their errors returned as codes.
#include <gtest/gtest.h>
#include <mpi.h>

#include "common/error.hpp"
#include "common/mpi_handles.hpp"
#include "unit_support.hpp"

using sidecore::communicator;

TEST(communicator, makes_mpi_errors_return_codes_instead_of_ending_the_job) {
  sidecore::testing_support::start_mpi();
  MPI_Comm dup = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_SELF, &dup), MPI_SUCCESS);
  communicator owned(dup);
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  ASSERT_EQ(MPI_Comm_get_errhandler(owned.get(), &handler), MPI_SUCCESS);
  EXPECT_EQ(handler, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&handler);
  // An invalid call on it returns an error (rank 5 of a one-process communicator)...
  int value = 0;
  const int rc = MPI_Send(&value, 1, MPI_INT, 5, 0, owned.get());
  EXPECT_NE(rc, MPI_SUCCESS);
  // ...which check_mpi turns into an exception naming the call.
  try {
    sidecore::check_mpi(rc, "MPI_Send");
    ADD_FAILURE() << "no exception";
  } catch (const sidecore::mpi_error& e) {
    EXPECT_NE(std::string(e.what()).find("MPI_Send failed"), std::string::npos) << e.what();
  }
}
