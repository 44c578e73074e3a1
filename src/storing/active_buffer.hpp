// Active buffering (seed 004): a dedicated core moves complete iterations that wait to be
// stored out of the shared buffer, into its own memory up to a limit, then into spill files in
// a node-local directory, so that clients keep writing while the server catches up.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/model.hpp"
#include "memory/shared_heap.hpp"
#include "storing/iteration_processor.hpp"

namespace sidecore::storing {

struct active_buffer_counters {
  std::uint64_t bytes_buffered = 0;  // moved into server memory
  std::uint64_t bytes_spilled = 0;   // moved into spill files
  std::uint64_t spill_files = 0;
  std::uint64_t memory_high_water = 0;  // most bytes held in server memory at once
};

class active_buffer {
 public:
  using release_function = iteration_processor::release_function;

  // tag names spill files (job token and server index), so that jobs never collide.
  active_buffer(const config::architecture& arch, std::string tag, release_function release);

  bool enabled() const noexcept { return m_limit > 0 || !m_spill_directory.empty(); }
  // Moves the shared blocks of one iteration; returns the shared bytes freed. With rescue, the
  // blocks go to server memory whatever the limit (see iteration_processor::rescue).
  std::uint64_t take(int iteration, std::vector<stored_block>& blocks, bool rescue = false);
  const active_buffer_counters& counters() const noexcept { return m_counters; }
  std::uint64_t in_memory() const noexcept { return *m_in_memory; }

 private:
  std::uint64_t to_memory(std::vector<stored_block*>& blocks);
  std::uint64_t to_spill_file(int iteration, std::vector<stored_block*>& blocks);

  std::uint64_t m_limit;
  std::string m_spill_directory;
  std::string m_tag;
  release_function m_release;
  // Shared with the deleters of buffered blocks, which may outlive this object.
  std::shared_ptr<std::uint64_t> m_in_memory = std::make_shared<std::uint64_t>(0);
  active_buffer_counters m_counters;
};

}  // namespace sidecore::storing
