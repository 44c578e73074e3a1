#include "transports/memory_budget.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/units.hpp"
#include "memory/shared_heap.hpp"

namespace sidecore::transports {
namespace {

// Memory this machine lets the job use: physical memory, or a smaller cgroup (v2) limit.
std::uint64_t usable_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  std::uint64_t bytes = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * page : 0;
  std::ifstream limit("/sys/fs/cgroup/memory.max");
  std::uint64_t cgroup = 0;
  if (limit >> cgroup && cgroup > 0 && (bytes == 0 || cgroup < bytes)) bytes = cgroup;
  return bytes;
}

// Bytes one client writes in an iteration when it writes every variable of every domain, as the
// parameters stand at start-up, in the heap's allocation granularity; 0 when a layout cannot be
// evaluated yet. Sizes the part of the shared buffer mapped ahead of the first write.
std::uint64_t bytes_per_iteration(const config::model& model) {
  std::vector<std::int64_t> values;
  values.reserve(model.parameters.size());
  for (const config::parameter& p : model.parameters)
    values.push_back(config::is_integer(p.type) ? p.int_value
                                                : static_cast<std::int64_t>(p.real_value));
  std::uint64_t total = 0;
  for (const config::variable& v : model.variables) {
    if (!v.enabled) continue;
    const config::layout& layout = model.layouts[v.layout_index];
    std::vector<std::int64_t> extents;
    try {
      for (const config::expression& d : layout.dimensions) extents.push_back(d.evaluate(values));
    } catch (const error&) {
      return 0;
    }
    const std::optional<std::uint64_t> bytes =
        config::array_bytes(extents, config::element_size(layout.type));
    if (!bytes) return 0;
    const std::uint64_t block = memory::shared_heap::rounded(*bytes);
    const std::uint64_t domains = static_cast<std::uint64_t>(std::max(1, model.arch.domains));
    if (block > (UINT64_MAX - total) / domains) return UINT64_MAX;
    total += block * domains;
  }
  return total;
}

}  // namespace

void check_node_memory(const config::model& model, const topology::layout& topo, const char* mode,
                       bool per_process) {
  const std::uint64_t memory = usable_memory();
  const std::uint64_t size = model.arch.buffer_size;
  const std::uint64_t processes =
      per_process ? static_cast<std::uint64_t>(std::max(1, topo.node_size)) : 1;
  if (memory == 0 || size == 0) return;
  const std::uint64_t total = size * processes;
  const std::string what =
      per_process ? "<buffer size> of " + readable_bytes(size) + " per process (" + mode +
                        ": each process holds its own buffer) x " + std::to_string(processes) +
                        " processes on this node = " + readable_bytes(total) + ", of " +
                        readable_bytes(memory) + " of memory"
                  : "<buffer size> of " + readable_bytes(size) + " of shared memory per node (" +
                        mode + "), of " + readable_bytes(memory) + " of memory";
  if (total > memory / 10 * 9)
    throw config_error(what + " in " + model.file +
                       ": lower <buffer size=...> (it is per "
                       "node with dedicated cores, per process with a background thread or "
                       "dedicated nodes)");
  if (total > memory / 2 && topo.node_rank == 0)
    log::warning(what, ": more than half of the node's memory is set aside for buffers");
}

std::uint64_t first_iteration_window(const config::model& model) {
  return std::max<std::uint64_t>(bytes_per_iteration(model), 4u << 20);
}

}  // namespace sidecore::transports
