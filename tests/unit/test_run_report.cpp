// The run report is written as a regular file only: a symlink or device node at its path
// (SIDECORE_REPORT names any path) is never followed nor replaced. By default each run gets a
// report of its own, in the directory of the HDF5 stores.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "config/model.hpp"
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

// A model with HDF5 stores writing to the given FilesPaths.
sidecore::config::model stores_writing_to(const std::vector<std::string>& paths) {
  sidecore::config::model m;
  m.simulation_name = "sim";
  for (const std::string& p : paths) {
    sidecore::config::store s;
    s.name = "s" + std::to_string(m.stores.size());
    s.type = "HDF5";
    s.options.emplace_back("FilesPath", p);
    m.stores.push_back(s);
  }
  return m;
}

// Unsets (or sets) an environment variable for one test.
struct scoped_variable {
  scoped_variable(const char* name, const char* value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~scoped_variable() {
    if (m_old.empty())
      ::unsetenv(m_name);
    else
      ::setenv(m_name, m_old.c_str(), 1);
  }
  const char* m_name;
  std::string m_old;
};

TEST_F(run_report_file, by_default_each_run_has_its_own_report_beside_the_output) {
  const scoped_variable report("SIDECORE_REPORT", nullptr);
  const scoped_variable job("SLURM_JOB_ID", "4021/7");
  for (const char* other : {"PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID"})
    ::unsetenv(other);
  std::filesystem::create_directories(m_directory);
  const sidecore::config::model m = stores_writing_to({m_directory, m_directory + "//"});
  const std::string first = sidecore::run_report::path_for(m);
  EXPECT_EQ(first, m_directory + "sim_4021_7_report.json");
  EXPECT_EQ(write(first), "");
  // A second run of the same job: a new name, the first report kept.
  const std::string second = sidecore::run_report::path_for(m);
  EXPECT_EQ(second, m_directory + "sim_4021_7-2_report.json");
  EXPECT_EQ(write(second), "");
  EXPECT_NE(content(first).find("\"sim\""), std::string::npos);
  EXPECT_EQ(sidecore::run_report::path_for(m), m_directory + "sim_4021_7-3_report.json");

  // Outside a batch job: the local start time; stores writing to different directories (or
  // none): the working directory.
  const scoped_variable no_job("SLURM_JOB_ID", nullptr);
  const std::string here = sidecore::run_report::path_for(stores_writing_to({m_directory, "/"}));
  EXPECT_EQ(here.find('/'), std::string::npos) << here;
  EXPECT_EQ(here.rfind("sim_20", 0), 0u) << here;  // sim_YYYYmmdd-HHMMSS_report.json
  EXPECT_EQ(here.size(), std::string("sim_20261127-225100_report.json").size()) << here;
}

TEST_F(run_report_file, sidecore_report_names_the_file_or_the_directory) {
  std::filesystem::create_directories(m_directory);
  const sidecore::config::model m = stores_writing_to({m_directory});
  {
    const scoped_variable report("SIDECORE_REPORT", m_directory.c_str());
    EXPECT_EQ(sidecore::run_report::path_for(m), m_directory + "sim_report.json");
  }
  {
    const scoped_variable report("SIDECORE_REPORT", "/tmp/elsewhere.json");
    EXPECT_EQ(sidecore::run_report::path_for(m), "/tmp/elsewhere.json");
  }
  const scoped_variable report("SIDECORE_REPORT", "off");
  EXPECT_EQ(sidecore::run_report::path_for(m), "");
}

}  // namespace
