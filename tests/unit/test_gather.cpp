// gather_parts: every rank's bytes on rank 0, in rounds of at most round_bytes each.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/gather.hpp"
#include "unit_support.hpp"

namespace sidecore {
namespace {

using testing_support::contains;
using testing_support::start_mpi;

TEST(gather_parts, one_process_gets_its_own_part_back_whole) {
  start_mpi();
  const std::string mine(1000, 'x');
  const std::vector<std::string> parts = gather_parts(MPI_COMM_SELF, mine, 1000);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0], mine);
  EXPECT_EQ(gather_parts(MPI_COMM_SELF, "").at(0), "");
}

TEST(gather_parts, a_part_larger_than_a_round_is_refused_naming_its_rank_and_size) {
  start_mpi();
  try {
    gather_parts(MPI_COMM_SELF, std::string(1001, 'x'), 1000);
    FAIL() << "a part of 1001 bytes went in rounds of 1000";
  } catch (const mpi_error& e) {
    EXPECT_TRUE(contains(e.what(), "rank 0's part of 1001 bytes")) << e.what();
  }
}

// Run on 3 processes by unit.gather_parts.three_ranks.
TEST(gather_parts_three_ranks, parts_of_any_size_arrive_whole_and_in_rank_order_in_rounds) {
  start_mpi();
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ASSERT_EQ(size, 3) << "run on 3 processes";
  // Parts of 5, 0 and 15 bytes, each of its own bytes. In rounds of at most 16 or 15 bytes,
  // ranks 0 and 1 travel in the first and rank 2 in the second; in rounds of 1000, all in one.
  const auto part_of = [](int r) {
    std::string p(r == 1 ? 0 : static_cast<std::size_t>(5 * (r + 1)), '\0');
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<char>('a' + r * 7 + i % 7);
    return p;
  };
  for (std::size_t round_bytes : {16u, 15u, 1000u}) {
    const std::vector<std::string> parts = gather_parts(MPI_COMM_WORLD, part_of(rank), round_bytes);
    if (rank != 0) {
      EXPECT_TRUE(parts.empty());
      continue;
    }
    ASSERT_EQ(parts.size(), 3u) << round_bytes;
    for (int r = 0; r < 3; ++r)
      EXPECT_EQ(parts[r], part_of(r)) << "rank " << r << ", rounds of " << round_bytes;
  }
  // Rank 2's 15 bytes cannot travel in rounds of 10: every rank is told so.
  try {
    gather_parts(MPI_COMM_WORLD, part_of(rank), 10);
    FAIL() << "a part of 15 bytes went in rounds of 10";
  } catch (const mpi_error& e) {
    EXPECT_TRUE(contains(e.what(), "rank 2's part of 15 bytes")) << e.what();
  }
}

}  // namespace
}  // namespace sidecore
