// select-file (Collective mode): the variables whose blocks another variable places (OPM
// Flow's index maps), the positions they give, and the check that no global position is given
// twice across the writers.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/mpi_handles.hpp"
#include "common/text.hpp"
#include "plugins/hdf5/store_internals.hpp"

namespace sidecore::plugins::hdf5 {

void hdf5_store::find_mappings() {
  const std::vector<config::variable>& variables = m_context.model->variables;
  m_mapping.assign(variables.size(), config::variable::npos);
  m_is_index.assign(variables.size(), 0);
  if (m_options.mode != file_mode::collective) return;
  const auto me = static_cast<std::size_t>(m_context.settings - m_context.model->stores.data());
  const auto has_global = [&](const config::variable& v) {
    return !m_context.model->layouts[v.layout_index].global_dimensions.empty();
  };
  for (std::size_t i = 0; i < variables.size(); ++i) {
    const config::variable& v = variables[i];
    if (v.store_index != me || !v.enabled || v.select_file == config::variable::npos) continue;
    if (!has_global(v)) {
      const config::layout& l = m_context.model->layouts[v.layout_index];
      throw config_error(store_where(m_context) + ": FileMode Collective: variable \"" + v.name +
                         "\" (line " + std::to_string(v.line) +
                         ") has select-file, which places its elements in a global dataset, but "
                         "layout \"" +
                         l.name + "\" (line " + std::to_string(l.line) +
                         ") has no global dimensions; add global=\"...\" to the layout");
    }
    m_mapping[i] = v.select_file;
    m_is_index[v.select_file] = 1;
  }
  for (std::size_t i = 0; i < variables.size(); ++i) {
    const config::variable& v = variables[i];
    if (m_is_index[i] && v.store_index == me && v.enabled &&
        m_mapping[i] == config::variable::npos && has_global(v))
      m_mapping[i] = i;
  }
}

void hdf5_store::keep_positions(const iteration_data& data) {
  if (m_options.mode != file_mode::collective) return;
  try {
    for (const variable_blocks& vb : data.variables)
      if (m_is_index[index_of(vb.var)]) m_positions.update(index_of(vb.var), vb);
    for (const variable_blocks& vb : data.index_variables) m_positions.update(index_of(vb.var), vb);
  } catch (const storage_error& e) {
    // Thrown here, it would leave the other writers waiting in a collective call.
    const std::string message = e.what();
    const std::string prefix = "HDF5 store: ";
    if (m_index_problem.empty())
      m_index_problem =
          message.compare(0, prefix.size(), prefix) == 0 ? message.substr(prefix.size()) : message;
  }
}

std::string hdf5_store::mapping_problem(const variable_blocks& vb,
                                        const std::vector<prepared_block>& mine,
                                        const std::vector<std::int64_t>& global,
                                        std::int32_t iteration) const {
  const std::size_t variable = index_of(vb.var);
  const std::string& index = m_context.model->variables[m_mapping[variable]].name;
  const std::uint64_t total = element_total(global);
  for (const prepared_block& p : mine) {
    const block_view& block = *p.view;
    const std::string where = "iteration " + std::to_string(iteration) + ", " +
                              block_name(*vb.var, block) + " (select-file=\"" + index + "\")";
    const block_positions* positions = positions_of(variable, block);
    if (positions == nullptr)
      return where + ": index variable \"" + index + "\" has no block from source " +
             std::to_string(block.source) + " block " + std::to_string(block.block_id) +
             "; write it in this iteration, or once before when it is time-varying=\"false\"";
    if (positions->values.size() != element_total(p.dims))
      return where + " has " + std::to_string(element_total(p.dims)) + " elements " +
             dims_text(p.dims) + " but the block of \"" + index + "\" (iteration " +
             std::to_string(positions->iteration) + ") gives " +
             std::to_string(positions->values.size()) + " positions";
    if (!positions->values.empty() &&
        (positions->smallest < 0 || static_cast<std::uint64_t>(positions->largest) >= total)) {
      const std::int64_t bad = positions->smallest < 0 ? positions->smallest : positions->largest;
      return where + ": \"" + index + "\" gives position " + std::to_string(bad) +
             ", outside the dataset's " + std::to_string(total) + " elements (global dimensions " +
             dims_text(global) + "; positions count from 0)";
    }
    if (positions->duplicate >= 0)
      return where + ": \"" + index + "\" gives position " + std::to_string(positions->duplicate) +
             " to two elements of the block";
  }
  return {};
}

void hdf5_store::check_positions_unique(const collective_plan& plan, std::int32_t iteration) {
  const std::vector<const variable_blocks*>& selected = plan.selected;
  const std::vector<std::vector<prepared_block>>& prepared = plan.prepared;
  const std::vector<std::int64_t>& agreed = plan.agreed;
  const std::vector<std::size_t>& offsets = plan.offsets;
  // Which mapped variables need the check, agreed so that every writer makes the same calls.
  std::vector<int> needed(selected.size(), 0);
  std::vector<std::uint64_t> totals(selected.size(), 0);
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const variable_blocks& vb = *selected[i];
    const std::size_t variable = index_of(vb.var);
    const std::size_t ndims = vb.layout->dimensions.size();
    const std::int64_t* entry = agreed.data() + offsets[i];
    if (m_mapping[variable] == config::variable::npos || entry[ndims + 1] == 0) continue;
    totals[i] = element_total(std::vector<std::int64_t>(entry, entry + ndims));
    const auto key = std::make_pair(m_positions.generation(m_mapping[variable]), totals[i]);
    const auto it = m_unique_checked.find(variable);
    needed[i] = it == m_unique_checked.end() || it->second != key ? 1 : 0;
  }
  if (selected.empty()) return;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, needed.data(), static_cast<int>(needed.size()), MPI_INT,
                          MPI_MAX, m_context.comm),
            "MPI_Allreduce");
  for (std::size_t i = 0; i < selected.size(); ++i) {
    if (needed[i] == 0) continue;
    const variable_blocks& vb = *selected[i];
    const std::size_t variable = index_of(vb.var);
    // One bit per element of the dataset: a position set twice, here or on another writer.
    std::vector<unsigned char> seen((totals[i] + 7) / 8, 0);
    std::int64_t counts[2] = {0, -1};  // positions given here; a position given twice here
    for (const prepared_block& p : prepared[i]) {
      const block_positions* positions = positions_of(variable, *p.view);
      if (positions == nullptr) continue;
      for (const std::int64_t v : positions->values) {
        const auto bit = static_cast<std::uint64_t>(v);
        const auto mask = static_cast<unsigned char>(1u << (bit % 8));
        if ((seen[bit / 8] & mask) != 0 && counts[1] < 0) counts[1] = v;
        seen[bit / 8] |= mask;
        ++counts[0];
      }
    }
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, seen.data(), static_cast<int>(seen.size()),
                            MPI_UNSIGNED_CHAR, MPI_BOR, m_context.comm),
              "MPI_Allreduce");
    std::int64_t given = counts[0], twice = counts[1];
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &given, 1, MPI_INT64_T, MPI_SUM, m_context.comm),
              "MPI_Allreduce");
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &twice, 1, MPI_INT64_T, MPI_MAX, m_context.comm),
              "MPI_Allreduce");
    std::int64_t distinct = 0;
    for (const unsigned char byte : seen) distinct += __builtin_popcount(byte);
    const std::string& index = m_context.model->variables[m_mapping[variable]].name;
    const std::string where = "HDF5 store: iteration " + std::to_string(iteration) +
                              ", variable \"" + vb.var->name + "\" (select-file=\"" + index +
                              "\"): ";
    if (twice >= 0)
      throw storage_error(where + "\"" + index + "\" gives position " + std::to_string(twice) +
                          " to elements of two blocks; each position may hold one element");
    if (distinct != given)
      throw storage_error(where + "\"" + index + "\" gives " + std::to_string(given) +
                          " positions but only " + std::to_string(distinct) +
                          " distinct ones: blocks of different writers share positions; each "
                          "position may hold one element");
    m_unique_checked[variable] =
        std::make_pair(m_positions.generation(m_mapping[variable]), totals[i]);
  }
}

}  // namespace sidecore::plugins::hdf5
