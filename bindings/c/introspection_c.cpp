// sidecore/introspection.h: a configuration's variables and parameters as this process's
// current parameter values resolve them, for bindings that check arrays before a write.
#include "sidecore/introspection.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "common/agreement.hpp"
#include "common/c_boundary.hpp"
#include "common/error.hpp"
#include "common/mpi_handles.hpp"
#include "config/model.hpp"

struct sidecore_description {
  sidecore::config::model model;
  // Per layout: the parameters its local dimensions read (fetched again at every question).
  std::vector<std::vector<std::size_t>> reads;
  // Parameter values as last fetched (XML values until then), indexed like model.parameters:
  // a question costs the parameters its layout reads, not all of them.
  mutable std::mutex mutex;
  mutable std::vector<std::int64_t> values;
};

namespace {

// Rank 0's text of the file, on every rank; the same config_error on every rank when rank 0
// cannot read it.
std::string text_from_first_rank(const std::string& file, MPI_Comm comm) {
  int rank = 0;
  sidecore::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  std::string text;
  int failed = 0;
  if (rank == 0) {
    try {
      text = sidecore::config::read_configuration_file(file);
    } catch (const sidecore::config_error& e) {
      text = e.what();
      failed = 1;
    }
  }
  sidecore::check_mpi(MPI_Bcast(&failed, 1, MPI_INT, 0, comm), "MPI_Bcast");
  text = sidecore::broadcast(std::move(text), 0, comm);
  if (failed) throw sidecore::config_error(text);
  return text;
}

// A parameter's current value as the expressions read it (integers only: dimensions are
// integer expressions), from the runtime's table.
std::int64_t current_value(const sidecore::config::parameter& p) {
  using sidecore::config::element_type;
  unsigned char buffer[8] = {};
  const unsigned size = static_cast<unsigned>(sidecore::config::element_size(p.type));
  const int code = damaris_parameter_get(p.name.c_str(), buffer, size);
  if (code != DAMARIS_OK)
    throw sidecore::error(
        code, std::string("reading parameter '") + p.name + "': " + damaris_last_error_message());
  switch (p.type) {
    case element_type::int8: {
      std::int8_t v;
      std::memcpy(&v, buffer, 1);
      return v;
    }
    case element_type::int16: {
      std::int16_t v;
      std::memcpy(&v, buffer, 2);
      return v;
    }
    case element_type::int32: {
      std::int32_t v;
      std::memcpy(&v, buffer, 4);
      return v;
    }
    case element_type::int64: {
      std::int64_t v;
      std::memcpy(&v, buffer, 8);
      return v;
    }
    default:
      return p.int_value;
  }
}

const sidecore_description& checked(const sidecore_description* d) {
  if (!d) throw sidecore::argument_error("description is NULL");
  return *d;
}

}  // namespace

SIDECORE_API int sidecore_describe_open(const char* configfile, MPI_Comm comm,
                                        sidecore_description** out) {
  if (out) *out = nullptr;
  return sidecore::c_boundary::guarded_call("sidecore_describe_open", [&] {
    if (!configfile) throw sidecore::argument_error("configfile is NULL");
    if (!out) throw sidecore::argument_error("out is NULL");
    if (comm == MPI_COMM_NULL) throw sidecore::argument_error("comm is MPI_COMM_NULL");
    int mpi_ready = 0;
    MPI_Initialized(&mpi_ready);
    if (!mpi_ready) throw sidecore::error(DAMARIS_MPI_ERROR, "MPI_Init must be called first");
    auto d = std::make_unique<sidecore_description>();
    d->model = sidecore::config::parse_model(text_from_first_rank(configfile, comm), configfile);
    for (const sidecore::config::parameter& p : d->model.parameters)
      d->values.push_back(p.int_value);
    for (const sidecore::config::layout& l : d->model.layouts) {
      std::vector<std::size_t> reads;
      for (const sidecore::config::expression& e : l.dimensions)
        for (std::size_t p : e.parameters()) reads.push_back(p);
      d->reads.push_back(std::move(reads));
    }
    *out = d.release();
  });
}

SIDECORE_API void sidecore_describe_close(sidecore_description* description) { delete description; }

SIDECORE_API int sidecore_describe_fortran_order(const sidecore_description* description,
                                                 const char* variable, int32_t* fortran) {
  return sidecore::c_boundary::guarded_call("sidecore_describe_fortran_order", [&] {
    const sidecore_description& d = checked(description);
    if (!variable) throw sidecore::argument_error("variable is NULL");
    if (!fortran) throw sidecore::argument_error("fortran is NULL");
    const std::size_t v = d.model.find_variable(variable);
    if (v == sidecore::config::model::npos)
      throw sidecore::error(DAMARIS_UNDEFINED_VARIABLE, d.model.unknown_variable(variable));
    *fortran = d.model.layouts[d.model.variables[v].layout_index].fortran_order ? 1 : 0;
  });
}

SIDECORE_API int sidecore_describe_variable(const sidecore_description* description,
                                            const char* variable, int32_t* type, int32_t* ndims,
                                            int64_t* extents) {
  return sidecore::c_boundary::guarded_call("sidecore_describe_variable", [&] {
    const sidecore_description& d = checked(description);
    if (!variable) throw sidecore::argument_error("variable is NULL");
    if (!type || !ndims || !extents) throw sidecore::argument_error("an output pointer is NULL");
    const sidecore::config::model& model = d.model;
    const std::size_t v = model.find_variable(variable);
    if (v == sidecore::config::model::npos)
      throw sidecore::error(DAMARIS_UNDEFINED_VARIABLE, model.unknown_variable(variable));
    const std::size_t l = model.variables[v].layout_index;
    const sidecore::config::layout& layout = model.layouts[l];
    if (layout.dimensions.size() > SIDECORE_MAX_DIMENSIONS)
      throw sidecore::error(DAMARIS_INVALID_DIMENSIONS,
                            "layout '" + layout.name + "' has more than 8 dimensions");
    // Only the parameters this layout reads are fetched; the others are never looked at.
    int64_t evaluated[SIDECORE_MAX_DIMENSIONS] = {};
    {
      std::lock_guard<std::mutex> lock(d.mutex);
      for (std::size_t p : d.reads[l]) d.values[p] = current_value(model.parameters[p]);
      for (std::size_t i = 0; i < layout.dimensions.size(); ++i) {
        try {
          evaluated[i] = layout.dimensions[i].evaluate(d.values);
        } catch (const sidecore::error& e) {
          throw sidecore::error(DAMARIS_INVALID_DIMENSIONS, e.what());
        }
      }
    }
    *type = sidecore::config::damaris_type_code(layout.type);
    *ndims = static_cast<int32_t>(layout.dimensions.size());
    std::memcpy(extents, evaluated, layout.dimensions.size() * sizeof(int64_t));
  });
}

SIDECORE_API int sidecore_describe_parameter(const sidecore_description* description,
                                             const char* parameter, int32_t* type) {
  return sidecore::c_boundary::guarded_call("sidecore_describe_parameter", [&] {
    const sidecore_description& d = checked(description);
    if (!parameter) throw sidecore::argument_error("parameter is NULL");
    if (!type) throw sidecore::argument_error("type is NULL");
    const std::size_t p = d.model.find_parameter(parameter);
    if (p == sidecore::config::model::npos)
      throw sidecore::error(DAMARIS_UNDEFINED_PARAMETER, std::string("no parameter named '") +
                                                             parameter + "' in " + d.model.file);
    *type = sidecore::config::damaris_type_code(d.model.parameters[p].type);
  });
}

SIDECORE_API int sidecore_describe_domains(const sidecore_description* description,
                                           int32_t* domains) {
  return sidecore::c_boundary::guarded_call("sidecore_describe_domains", [&] {
    const sidecore_description& d = checked(description);
    if (!domains) throw sidecore::argument_error("domains is NULL");
    *domains = d.model.arch.domains;
  });
}

// An alias of damaris_last_error_message(): one error slot per thread (common/c_boundary.hpp).
SIDECORE_API const char* sidecore_describe_last_error(void) {
  return sidecore::c_boundary::last_error();
}
