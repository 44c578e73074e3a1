// Notifications a client could not put in its ring (full while its dedicated core was busy,
// storing the previous iteration) wait in the shared heap instead of making the client wait:
// a chain of chunks, handed over as one `batch` notification once the ring has room again,
// or at once at an end of iteration, a signal or a stop (the ring keeps slots free for those).
// A client may thus hand over any number of blocks per iteration at the same cost per block.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

#include "protocol/message.hpp"
#include "transports/dedicated_cores/channel.hpp"

namespace sidecore::transports {

inline constexpr std::uint32_t overflow_chunk_messages = 128;

// In the shared heap. Plain data: the server reads what the client wrote.
struct overflow_chunk {
  std::uint64_t next;   // offset of the next chunk, from the segment base; 0 for the last
  std::uint32_t count;  // notifications held (1..overflow_chunk_messages)
  std::uint32_t unused;
  protocol::message messages[overflow_chunk_messages];
};
static_assert(std::is_trivially_copyable_v<overflow_chunk>, "chunks are shared as bytes");

// Ring slots kept free by plain notifications, for the batches an end of iteration, a signal
// or a stop must hand over without waiting for the core.
inline constexpr std::uint32_t ring_slots_for_batches = 16;

// Client side: the chain being filled. One per ring (one producer).
class overflow_chain {
 public:
  // hint: where this client's searches of the shared heap start.
  overflow_chain(channel& channel, std::uint64_t hint) noexcept
      : m_channel(channel), m_hint(hint) {}
  overflow_chain(const overflow_chain&) = delete;
  overflow_chain& operator=(const overflow_chain&) = delete;
  ~overflow_chain() { discard(); }

  bool empty() const noexcept { return m_count == 0; }
  // True at a chunk's end: the moment to try handing the chain over.
  bool chunk_full() const noexcept { return m_count > 0 && m_count % overflow_chunk_messages == 0; }
  // Appends m. False (m not kept) when the heap has no room for a new chunk now.
  bool append(const protocol::message& m);
  // The batch notification that hands the chain over (source: the client's index).
  protocol::message batch(std::int32_t source) const noexcept;
  // The batch was posted: the chunks are the server's now; the chain starts again empty.
  void posted() noexcept { m_first = m_last = m_count = 0; }
  // Gives the chunks back to the heap (never handed over; the blocks they announce stay
  // allocated, as those of a client that ends without announcing its blocks).
  void discard() noexcept;

 private:
  overflow_chunk* chunk_at(std::uint64_t offset) const noexcept {
    return reinterpret_cast<overflow_chunk*>(m_channel.address(offset));
  }

  channel& m_channel;
  std::uint64_t m_hint;
  std::uint64_t m_first = 0;  // offsets of the first and last chunks; 0: none
  std::uint64_t m_last = 0;
  std::uint64_t m_count = 0;  // notifications in the chain
};

// Server side: the notifications of a batch, in order. `unclaimed(offset, bytes)` says whether
// a range is memory a client allocated that no block of the server holds. Every chunk is
// checked before any notification is given to `handle`; then the chunks go back to the heap.
// Returns "" or what is wrong with the chain (no notification handled then; the chunks that
// were checked go back).
std::string read_overflow(channel& channel, const protocol::message& batch,
                          const std::function<bool(std::uint64_t, std::uint64_t)>& unclaimed,
                          const std::function<void(const protocol::message&)>& handle);

}  // namespace sidecore::transports
