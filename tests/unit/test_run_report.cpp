// The run report is written as a regular file only: a symlink or device node at its path
// (SIDECORE_REPORT names any path) is never followed nor replaced.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "runtime/run_report.hpp"
#include "unit_support.hpp"

namespace {

class run_report_file : public sidecore::testing_support::output_directory_test {
 protected:
  run_report_file() : output_directory_test("report") {}

  std::string write(const std::string& path) {
    sidecore::run_report::run_facts facts;
    facts.simulation = "sim";
    return sidecore::run_report::gather_and_write(MPI_COMM_SELF, path, facts, "", "", nullptr,
                                                  nullptr);
  }
  static std::string content(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
};

TEST_F(run_report_file, a_regular_file_is_replaced_whole) {
  std::filesystem::create_directories(m_directory);
  const std::string path = m_directory + "report.json";
  std::ofstream(path) << "old";
  EXPECT_EQ(write(path), "");
  const std::string text = content(path);
  EXPECT_EQ(text.rfind("{", 0), 0u) << text;
  EXPECT_NE(text.find("\"sim\""), std::string::npos) << text;
}

TEST_F(run_report_file, a_symlink_is_neither_followed_nor_replaced) {
  std::filesystem::create_directories(m_directory);
  const std::string victim = m_directory + "victim.txt";
  std::ofstream(victim) << "precious";
  const std::string path = m_directory + "report.json";
  ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
  const std::string why = write(path);
  EXPECT_NE(why.find("exists and is not a regular file"), std::string::npos) << why;
  EXPECT_EQ(content(victim), "precious");
  struct stat status {};
  ASSERT_EQ(::lstat(path.c_str(), &status), 0);
  EXPECT_TRUE(S_ISLNK(status.st_mode));
  // A device node is refused the same way.
  const std::string device = write("/dev/null");
  EXPECT_NE(device.find("exists and is not a regular file"), std::string::npos) << device;
}

}  // namespace
