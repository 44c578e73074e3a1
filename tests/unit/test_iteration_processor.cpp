// The server's iteration processor: when writers wait for space, the blocks of open
// iterations move out of the shared buffer, younger ones first, then the oldest open one.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "config/model.hpp"
#include "storing/active_buffer.hpp"
#include "storing/iteration_processor.hpp"
#include "unit_support.hpp"

namespace sidecore {
namespace {

using testing_support::one_variable_model;

using storing::stored_block;

// MPI is started by the global environment of test_hdf5_store.cpp (the same program).
class rescue : public ::testing::Test {
 protected:
  // A block of `iteration` from `source` that lives at [offset, offset + 64) of a shared buffer.
  stored_block shared_block(int iteration, int source, std::uint64_t offset) {
    stored_block b;
    b.variable = 0;
    b.view.iteration = iteration;
    b.view.source = source;
    b.view.block_id = 0;
    b.view.data = m_memory.data();
    b.view.bytes = 64;
    b.view.dims = {8};
    b.shared = {offset, 64};
    return b;
  }

  std::vector<double> m_memory = std::vector<double>(8, 1.5);
  std::vector<std::uint64_t> m_released;  // offsets given back to the shared buffer
};

TEST_F(rescue, younger_iterations_move_first_then_the_open_one) {
  const config::model model = one_variable_model();
  const auto release = [this](const std::vector<memory::heap_extent>& ranges) {
    for (const auto& r : ranges) m_released.push_back(r.offset);
  };
  storing::iteration_processor processor(model, MPI_COMM_SELF, 2, release);
  config::architecture arch;  // no server-memory: only the rescue moves blocks
  storing::active_buffer buffer(arch, "test", release);

  // Source 0 has written iterations 0 and 1 and ended both; source 1 has written nothing yet.
  processor.add_block(shared_block(0, 0, 0));
  processor.end_iteration(0, 0, false);
  processor.add_block(shared_block(1, 0, 64));
  processor.end_iteration(0, 1, false);

  EXPECT_EQ(processor.rescue(buffer), 64u);  // iteration 1, younger than the open one
  EXPECT_EQ(m_released, (std::vector<std::uint64_t>{64}));
  EXPECT_EQ(processor.rescue(buffer), 64u);  // nothing younger left: the open iteration 0
  EXPECT_EQ(m_released, (std::vector<std::uint64_t>{64, 0}));
  EXPECT_EQ(processor.rescue(buffer), 0u);  // everything is out already
  EXPECT_EQ(buffer.in_memory(), 128u);
  // The moved blocks are still stored when the iteration completes: their data was copied.
  processor.end_iteration(1, 0, false);
  processor.end_iteration(1, 1, false);
  EXPECT_EQ(processor.stored_iterations(), 2);
  EXPECT_EQ(buffer.in_memory(), 0u);
}

}  // namespace
}  // namespace sidecore
