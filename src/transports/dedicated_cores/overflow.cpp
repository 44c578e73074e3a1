#include "transports/dedicated_cores/overflow.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"

namespace sidecore::transports {

bool overflow_chain::append(const protocol::message& m) {
  if (m_count % overflow_chunk_messages == 0) {
    memory::shared_heap& heap = m_channel.heap();
    if (heap.capacity() < 2 * sizeof(overflow_chunk)) return false;  // a tiny buffer: no chain
    const std::optional<std::uint64_t> got = heap.try_allocate(sizeof(overflow_chunk), m_hint);
    if (!got) return false;
    // Early in a run, the chunk may land on pages the core is still reserving: no chain then
    // (the caller waits for the ring, which sees a stalled core, instead of waiting twice).
    if (!m_channel.heap_ready(*got, sizeof(overflow_chunk))) {
      heap.release(*got, sizeof(overflow_chunk));
      return false;
    }
    overflow_chunk* fresh = chunk_at(*got);
    fresh->next = 0;
    fresh->count = 0;
    if (m_last != 0)
      chunk_at(m_last)->next = *got;
    else
      m_first = *got;
    m_last = *got;
  }
  overflow_chunk* chunk = chunk_at(m_last);
  std::memcpy(&chunk->messages[chunk->count], &m, sizeof m);
  ++chunk->count;
  ++m_count;
  return true;
}

protocol::message overflow_chain::batch(std::int32_t source) const noexcept {
  protocol::message m{};
  m.kind = protocol::message_kind::batch;
  m.source = source;
  m.offset = m_first;
  m.bytes = m_count;  // notifications, not bytes
  return m;
}

void overflow_chain::discard() noexcept {
  std::vector<memory::heap_extent> chunks;
  for (std::uint64_t at = m_first; at != 0; at = chunk_at(at)->next)
    chunks.push_back({at, sizeof(overflow_chunk)});
  posted();
  if (chunks.empty()) return;
  try {
    m_channel.heap().release(chunks);
  } catch (const std::exception& e) {
    log::error("could not give back the shared memory of notifications never handed over: ",
               e.what());
  }
}

std::string read_overflow(channel& channel, const protocol::message& batch,
                          const std::function<bool(std::uint64_t, std::uint64_t)>& unclaimed,
                          const std::function<void(const protocol::message&)>& handle) {
  const memory::shared_heap& heap = channel.heap();
  const std::uint64_t total = batch.bytes;
  const std::uint64_t most_chunks = (total + overflow_chunk_messages - 1) / overflow_chunk_messages;
  struct checked {
    std::uint64_t offset;
    std::uint32_t count;  // read once: what the client writes later does not count
  };
  std::vector<checked> chunks;
  std::string problem;
  std::uint64_t counted = 0;
  for (std::uint64_t at = batch.offset; at != 0;) {
    if (chunks.size() == most_chunks) {
      problem = "its chain has more chunks than its " + std::to_string(total) +
                " notification(s) need (a loop?)";
      break;
    }
    if (at < heap.begin_offset() || at > heap.end_offset() ||
        heap.end_offset() - at < sizeof(overflow_chunk) || !unclaimed(at, sizeof(overflow_chunk))) {
      problem = "its chain names a chunk at offset " + std::to_string(at) +
                " that is not memory the client allocated (outside the shared buffer, free, or "
                "held by a block)";
      break;
    }
    const auto* chunk = reinterpret_cast<const overflow_chunk*>(channel.address(at));
    const std::uint32_t count = chunk->count;
    const std::uint64_t next = chunk->next;
    if (count == 0 || count > overflow_chunk_messages) {
      problem = "a chunk of its chain holds " + std::to_string(count) +
                " notifications (valid: 1.." + std::to_string(overflow_chunk_messages) + ")";
      break;
    }
    chunks.push_back({at, count});
    counted += count;
    at = next;
  }
  if (problem.empty() && counted != total)
    problem = "its chain holds " + std::to_string(counted) + " notification(s), not the " +
              std::to_string(total) + " it announces";
  // The same chunk twice (a loop the count did not catch) would be given back twice.
  std::vector<std::uint64_t> offsets(chunks.size());
  std::transform(chunks.begin(), chunks.end(), offsets.begin(),
                 [](const checked& c) { return c.offset; });
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  if (problem.empty() && offsets.size() != chunks.size())
    problem = "its chain names the same chunk twice";
  std::vector<memory::heap_extent> release;
  release.reserve(offsets.size());
  for (const std::uint64_t offset : offsets) release.push_back({offset, sizeof(overflow_chunk)});
  const auto give_back = [&] {
    try {
      channel.heap().release(release);
    } catch (const std::exception& e) {
      log::error("could not give back the chunks of a batch of notifications: ", e.what());
    }
  };
  if (!problem.empty()) {
    give_back();
    return problem;
  }
  try {
    protocol::message m;
    for (const checked& c : chunks) {
      const auto* chunk = reinterpret_cast<const overflow_chunk*>(channel.address(c.offset));
      for (std::uint32_t i = 0; i < c.count; ++i) {
        std::memcpy(&m, &chunk->messages[i], sizeof m);
        handle(m);
      }
    }
  } catch (...) {
    give_back();
    throw;
  }
  give_back();
  return {};
}

}  // namespace sidecore::transports
