// sidecore/read.h for Python: one iteration of a run's output (sidecore.read_output).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "module_support.hpp"
#include "sidecore/read.h"

namespace sidecore_python {
namespace {

class output_reader {
 public:
  output_reader(const std::string& prefix, int32_t iteration) {
    int code = DAMARIS_OK;
    {
      nb::gil_scoped_release unlocked;
      code = sidecore_read_open(prefix.c_str(), iteration, &m_reader);
    }
    check(code, "read_output");
  }
  ~output_reader() { sidecore_read_close(m_reader); }
  output_reader(const output_reader&) = delete;
  output_reader& operator=(const output_reader&) = delete;

  void close() {
    sidecore_read_close(m_reader);
    m_reader = nullptr;
  }
  sidecore_reader* get() const {
    if (!m_reader) raise(classes().error, DAMARIS_ARGUMENT_ERROR, "the output is closed");
    return m_reader;
  }
  bool complete() const {
    int32_t complete = 0;
    check(sidecore_read_complete(get(), &complete), "Output.complete");
    return complete != 0;
  }
  // (name, dtype name, global shape, block count) per variable.
  std::vector<std::tuple<std::string, std::string, std::vector<int64_t>, int32_t>> variables()
      const {
    int32_t count = 0;
    check(sidecore_read_variable_count(get(), &count), "read_output");
    std::vector<std::tuple<std::string, std::string, std::vector<int64_t>, int32_t>> out;
    for (int32_t i = 0; i < count; ++i) {
      const char* name = nullptr;
      int32_t type = 0, ndims = 0, blocks = 0;
      int64_t global[SIDECORE_MAX_DIMENSIONS];
      check(sidecore_read_variable(get(), i, &name, &type, &ndims, global, &blocks), "read_output");
      std::vector<int64_t> shape;
      if (global[0] != 0) shape.assign(global, global + ndims);
      out.emplace_back(name, element_of(type).name, std::move(shape), blocks);
    }
    return out;
  }
  // (writer, source, block, shape, position) per block of a variable.
  std::vector<std::tuple<int32_t, int32_t, int32_t, std::vector<int64_t>, std::vector<int64_t>>>
  blocks(const std::string& variable) const {
    const int32_t count = block_count(variable);
    std::vector<std::tuple<int32_t, int32_t, int32_t, std::vector<int64_t>, std::vector<int64_t>>>
        out;
    out.reserve(static_cast<std::size_t>(count));
    for (int32_t i = 0; i < count; ++i) {
      sidecore_block_info b;
      check(sidecore_read_block_info(get(), variable.c_str(), i, &b), "Output.blocks");
      out.emplace_back(b.writer, b.source, b.block,
                       std::vector<int64_t>(b.extents, b.extents + b.ndims),
                       std::vector<int64_t>(b.position, b.position + b.ndims));
    }
    return out;
  }
  // Raises UNDEFINED_VARIABLE, for sidecore.<call>, when the iteration has no such variable.
  void require(const std::string& variable, const std::string& call) const {
    sidecore_block_info ignored;
    const int code = sidecore_read_block_info(get(), variable.c_str(), 0, &ignored);
    if (code == DAMARIS_UNDEFINED_VARIABLE) check(code, call.c_str());
  }
  int32_t block_count(const std::string& variable) const {
    int32_t count = 0;
    check(sidecore_read_variable_count(get(), &count), "Output.blocks");
    for (int32_t i = 0; i < count; ++i) {
      const char* name = nullptr;
      int32_t blocks = 0;
      check(sidecore_read_variable(get(), i, &name, nullptr, nullptr, nullptr, &blocks),
            "Output.blocks");
      if (variable == name) return blocks;
    }
    sidecore_block_info ignored;  // raises UNDEFINED_VARIABLE with the list of variables
    check(sidecore_read_block_info(get(), variable.c_str(), 0, &ignored), "Output.blocks");
    return 0;
  }
  // Reads into a NumPy array the caller made (shape and dtype decided in Python).
  void read_block(const std::string& variable, int32_t source, int32_t block, int32_t type,
                  nb::ndarray<nb::device::cpu, nb::c_contig> out) {
    int code = DAMARIS_OK;
    {
      nb::gil_scoped_release unlocked;
      code = sidecore_read_block(get(), variable.c_str(), source, block, type, out.data(),
                                 out.nbytes());
    }
    check(code, "Output.read_block");
  }
  void read_region(const std::string& variable, const std::vector<int64_t>& start,
                   const std::vector<int64_t>& count, int32_t type,
                   nb::ndarray<nb::device::cpu, nb::c_contig> out) {
    int code = DAMARIS_OK;
    {
      nb::gil_scoped_release unlocked;
      code = sidecore_read_region(get(), variable.c_str(), start.data(), count.data(), type,
                                  out.data(), out.nbytes());
    }
    check(code, "Output.read_region");
  }

 private:
  sidecore_reader* m_reader = nullptr;
};

std::vector<int32_t> stored_iterations(const std::string& prefix) {
  int32_t count = 0;
  check(sidecore_read_iterations(prefix.c_str(), nullptr, 0, &count), "stored_iterations");
  std::vector<int32_t> out(static_cast<std::size_t>(count));
  check(sidecore_read_iterations(prefix.c_str(), out.data(), count, &count), "stored_iterations");
  out.resize(std::min<std::size_t>(out.size(), static_cast<std::size_t>(count)));
  return out;
}

}  // namespace

void add_reader(nb::module_& m) {
  nb::class_<output_reader>(m, "OutputReader")
      .def(nb::init<const std::string&, int32_t>(), nb::arg("prefix"), nb::arg("iteration"))
      .def("close", &output_reader::close)
      .def("complete", &output_reader::complete)
      .def("variables", &output_reader::variables)
      .def("blocks", &output_reader::blocks, nb::arg("variable"))
      .def("require", &output_reader::require, nb::arg("variable"), nb::arg("call"))
      .def("read_block", &output_reader::read_block, nb::arg("variable"), nb::arg("source"),
           nb::arg("block"), nb::arg("type"), nb::arg("out").noconvert())
      .def("read_region", &output_reader::read_region, nb::arg("variable"), nb::arg("start"),
           nb::arg("count"), nb::arg("type"), nb::arg("out").noconvert());
  m.def("stored_iterations", &stored_iterations, nb::arg("prefix"));
}

}  // namespace sidecore_python
