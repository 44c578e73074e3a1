// The shared heap's pages, made ready after start-up on background threads: the dedicated
// core reserves them (every client's window first, then the rest) and each client maps its
// window as it becomes ready, so that neither start-up nor the first write waits for them
// when the first compute phase is long enough to cover the work.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "transports/dedicated_cores/channel.hpp"

namespace sidecore::transports {

// On the dedicated core: channel::reserve_heap_rest on its own thread.
class heap_reserver {
 public:
  // Starts at once; a failure is logged (and the clients are refused the pages not reserved).
  explicit heap_reserver(channel& c);
  // Stops between two steps and waits for the thread.
  ~heap_reserver();
  heap_reserver(const heap_reserver&) = delete;
  heap_reserver& operator=(const heap_reserver&) = delete;

 private:
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
};

// On a client: maps [offset, offset + bytes) of the segment (its window) into this process,
// step by step as the core reserves it, so that the first iteration's writes take no page
// fault. Then it maps ahead of the writes on request (map_ahead): blocks held longer (a
// slow store or pipeline on the core) move the allocator into pages the client has not
// touched, and each write there would pay their page faults. A write that gets there first
// maps the pages itself; nothing waits for this thread.
class window_mapper {
 public:
  window_mapper(channel& c, std::uint64_t offset, std::uint64_t bytes);
  // Stops within a few milliseconds, wherever it is, and waits for the thread.
  ~window_mapper();
  window_mapper(const window_mapper&) = delete;
  window_mapper& operator=(const window_mapper&) = delete;

  // Asks for the pages of [from, to) (heap offsets) to be mapped, after what was asked before
  // (pages before `from` not mapped yet are left to the writes); returns at once. Asking for
  // no more than was asked before does nothing. Never waits for the thread, which runs at idle
  // priority (a lock it held could keep the simulation waiting while it is not scheduled).
  void map_ahead(std::uint64_t from, std::uint64_t to);

  // The pages before `offset` are mapped by the writes (shm_engine::map_block): the thread
  // goes on after them. Never waits.
  void skip_to(std::uint64_t offset) noexcept;

  // The end of the window mapped at start.
  std::uint64_t window_end() const noexcept { return m_window_end; }
  // The end of what was asked so far: the window, then what map_ahead asked for.
  std::uint64_t asked_to() const noexcept { return m_to.load(std::memory_order_acquire); }

  // Where the thread has got to: it has mapped no page at or after this offset.
  std::uint64_t mapped_to() const noexcept { return m_mapped_to.load(std::memory_order_acquire); }

 private:
  void run(channel& c);

  const std::uint64_t m_window_end;
  std::mutex m_mutex;  // the thread's sleep and the destructor's stop only
  std::condition_variable m_asked;
  std::uint64_t m_from;                    // the first page not mapped yet (the thread's)
  std::atomic<std::uint64_t> m_to;         // the end of what was asked
  std::atomic<std::uint64_t> m_skip_to;    // where the next pages to map begin at the earliest
  std::atomic<std::uint64_t> m_mapped_to;  // the end of the last piece mapped
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
};

}  // namespace sidecore::transports
