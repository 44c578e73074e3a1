// What several unit tests share: a fresh output directory per test (MPI started, as the HDF5
// store needs it), reading an int32 dataset back, a model of one variable, starting MPI, a
// substring test and running code in a forked child. Helpers used by more than one test file
// live here rather than in each file's anonymous namespace, where a unity build (every test file
// in one translation unit) would see them defined twice.
#pragma once

#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "config/model.hpp"

namespace sidecore::testing_support {

// Starts MPI in this process unless it already runs (never finalized here).
inline void start_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
}

// Whether `part` occurs in `text`.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs `body` in a forked child whose exit code is its return value (97 for an exception).
// The child leaves with _exit so that neither gtest nor MPI runs its exit handlers twice.
template <typename body_type>
inline pid_t spawn(body_type body) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    int code = 97;
    try {
      code = body();
    } catch (...) {
    }
    ::_exit(code);
  }
  return pid;
}

// Exit code of a child, or 128 + the signal that killed it.
inline int wait_for(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Seconds elapsed on the steady clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A model with one 1-D double variable and no store: a processor only indexes and moves its
// blocks. buffer_size: the <buffer>'s, when the test looks at it.
inline config::model one_variable_model(
    std::uint64_t buffer_size = config::model{}.arch.buffer_size) {
  config::model model;
  model.file = "test.xml";
  model.arch.buffer_size = buffer_size;
  config::layout layout;
  layout.name = "l";
  layout.type = config::element_type::float64;
  layout.dimensions.resize(1);
  model.layouts.push_back(layout);
  config::variable v;
  v.name = "v";
  model.variables.push_back(v);
  return model;
}

// Each test gets m_directory ("/tmp/sidecore-<what>-<pid>-<test>/"), empty, removed after.
class output_directory_test : public ::testing::Test {
 protected:
  explicit output_directory_test(std::string what) : m_what(std::move(what)) {}
  void SetUp() override {
    start_mpi();
    m_directory = (std::filesystem::temp_directory_path() /
                   ("sidecore-" + m_what + "-" + std::to_string(::getpid()) + "-" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                      .string() +
                  "/";
    std::filesystem::remove_all(m_directory);
  }
  void TearDown() override { std::filesystem::remove_all(m_directory); }

  std::string m_what;
  std::string m_directory;
};

// The int32 values of a dataset; empty when the file or the dataset cannot be opened.
inline std::vector<std::int32_t> read_int32_dataset(const std::string& file,
                                                    const std::string& dataset) {
  std::vector<std::int32_t> values;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return values;
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  if (d >= 0) {
    const hid_t space = H5Dget_space(d);
    values.resize(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    H5Sclose(space);
    if (H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
      values.clear();
    H5Dclose(d);
  }
  H5Fclose(f);
  return values;
}

}  // namespace sidecore::testing_support
