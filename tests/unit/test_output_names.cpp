// Output file names: what the store writes, the reader and `sidecore inspect` read back.
#include <gtest/gtest.h>

#include <string>

#include "config/output_names.hpp"

namespace {

namespace cfg = sidecore::config;

TEST(output_names, every_written_name_reads_back_as_its_parts) {
  for (const std::string simulation : {"sim", "a_It2", "x_Pr3", "run.v2"}) {
    for (int iteration : {0, 7, 2147483647}) {
      const auto shared =
          cfg::parse_output_file_name(cfg::iteration_file_name(simulation, iteration));
      ASSERT_TRUE(shared) << simulation << " " << iteration;
      EXPECT_EQ(shared->simulation, simulation);
      EXPECT_EQ(shared->iteration, iteration);
      EXPECT_EQ(shared->writer, -1);
      EXPECT_FALSE(shared->part);
      const auto per_writer = cfg::parse_output_file_name(
          cfg::per_writer_file_name(simulation, iteration, 12) + ".part");
      ASSERT_TRUE(per_writer) << simulation << " " << iteration;
      EXPECT_EQ(per_writer->simulation, simulation);
      EXPECT_EQ(per_writer->iteration, iteration);
      EXPECT_EQ(per_writer->writer, 12);
      EXPECT_TRUE(per_writer->part);
    }
  }
}

TEST(output_names, other_names_are_not_output_files) {
  for (const char* name : {"sim.xmf", "sim_It.h5", "_It3.h5", "sim_It3.h5x", "sim_It-3.h5",
                           "sim_It+3.h5", "sim_It3_Pr.h5", "sim_It3_Pr-1.h5", "sim_It3_Pr1x.h5",
                           "sim_It2147483648.h5", "sim_It 3.h5", "sim_It3.part", "sim"}) {
    EXPECT_FALSE(cfg::parse_output_file_name(name)) << name;
  }
}

}  // namespace
