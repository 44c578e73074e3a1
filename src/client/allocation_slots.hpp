// The blocks damaris_alloc handed out, until they are cleared: a table of reusable slots, each
// found from its block's settings (block_settings::allocation). Once the table holds as many
// slots as the code allocates per iteration, the zero-copy path allocates nothing, hashes
// nothing and touches one slot per block: after a compute phase every line and page the calls
// touch is cold, and a hash table's buckets, nodes and the allocator's state were pages of
// their own (bench/run_cold_write.py --apis alloc).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <utility>
#include <vector>

#include "protocol/message.hpp"
#include "transports/engine.hpp"

namespace sidecore::client {

// A block from damaris_alloc, until it is cleared. Its notification (shape and position as at
// alloc time) is prepared at once, so that commit only hands it over.
struct allocation {
  protocol::message block;  // variable, block, iteration, offset, shape, position
  block_buffer owned;       // process memory (no dedicated core), or a dropped (skipped) block
  void* address = nullptr;
  bool committed = false;
  bool dropped = false;
  bool in_use = false;  // the slot holds a block not yet cleared
};

class allocation_slots {
 public:
  // expected: how many blocks may be allocated at once without the table growing; the table
  // is allocated from memory (the client's arena).
  allocation_slots(std::size_t expected, std::pmr::memory_resource* memory)
      : m_slots(memory), m_free(memory) {
    m_free.reserve(expected);  // first: its start lies next to the first slots
    m_slots.reserve(expected);
  }

  // A free slot, marked in use and not committed, for the caller to fill in place: its
  // address, memory, dropped flag and notification (a few hundred bytes, built where it stays
  // instead of copied through the stack, and not cleared first). Throws std::bad_alloc only
  // when the table must grow.
  std::int32_t claim() {
    std::int32_t slot = 0;
    if (!m_free.empty()) {
      slot = m_free.back();
      m_free.pop_back();
      m_slots[static_cast<std::size_t>(slot)].committed = false;  // remove() freed its memory
    } else {
      // Room for the slot's return to the free list, taken first: remove() cannot fail.
      const std::size_t slots = m_slots.size() + 1;
      if (m_free.capacity() < slots) m_free.reserve(std::max(slots, 2 * m_free.capacity()));
      m_slots.emplace_back();
      slot = static_cast<std::int32_t>(m_slots.size() - 1);
    }
    m_slots[static_cast<std::size_t>(slot)].in_use = true;
    return slot;
  }

  allocation& operator[](std::int32_t slot) noexcept {
    return m_slots[static_cast<std::size_t>(slot)];
  }

  // The slot's block was cleared: its memory (if it owned any) goes back, the slot is reused.
  void remove(std::int32_t slot) noexcept {
    allocation& a = m_slots[static_cast<std::size_t>(slot)];
    a.owned = block_buffer{};
    a.in_use = false;
    m_free.push_back(slot);
  }

  // Calls f(allocation&) for every block not yet cleared, in slot order.
  template <class F>
  void for_each(F&& f) {
    for (allocation& a : m_slots)
      if (a.in_use) f(a);
  }

 private:
  std::pmr::vector<allocation> m_slots;
  std::pmr::vector<std::int32_t> m_free;  // slots not in use; capacity >= m_slots.size()
};

}  // namespace sidecore::client
