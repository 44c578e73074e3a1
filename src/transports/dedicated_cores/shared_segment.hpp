// A POSIX shared-memory mapping owned by RAII; created by a server, opened by its clients.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sidecore::transports {

class shared_segment {
 public:
  shared_segment() = default;
  // Creates (O_EXCL), sizes and maps a new segment, reserving its first `reserved` bytes now
  // (the rest with reserve(), once the name is gone). Throws allocation_error with the
  // reason (name taken, /dev/shm too small...).
  static shared_segment create(const std::string& name, std::size_t bytes, std::size_t reserved);
  // Maps an existing segment. Throws allocation_error when it does not exist.
  static shared_segment open(const std::string& name);

  shared_segment(const shared_segment&) = delete;
  shared_segment& operator=(const shared_segment&) = delete;
  shared_segment(shared_segment&& other) noexcept;
  shared_segment& operator=(shared_segment&& other) noexcept;
  ~shared_segment();

  // Removes the name from /dev/shm; the mappings stay valid until every process unmaps.
  // Done right after every process of the group has mapped it, so that nothing is left behind
  // even if the job is killed.
  void unlink() noexcept;

  // Creator: reserves the pages of [offset, offset + bytes) by writing zeros to them (a full
  // /dev/shm fails here with a message, not later with SIGBUS). Throws allocation_error. May run on
  // another thread than the segment's other calls, but not beside done_reserving().
  void reserve(std::size_t offset, std::size_t bytes);
  // The same without throwing: 0, or the error number.
  int try_reserve(std::size_t offset, std::size_t bytes) noexcept;
  // Creator: bytes the file system holding the segment can still give (UINT64_MAX if unknown).
  std::uint64_t free_space() const noexcept;
  // Creator: no more reservations (closes the descriptor kept for them).
  void done_reserving() noexcept;
  // Maps the pages of [offset, offset + bytes) (clipped to the segment) into this process now,
  // without changing them, so that the first write there takes no page fault. The rest is
  // mapped on first use: a process's resident memory grows with what it touches, not with the
  // buffer's size.
  void prefault(std::size_t offset, std::size_t bytes) noexcept;

  std::byte* base() const noexcept { return m_base; }
  std::size_t size() const noexcept { return m_size; }
  const std::string& name() const noexcept { return m_name; }

 private:
  std::string m_name;
  std::byte* m_base = nullptr;
  std::size_t m_size = 0;
  int m_fd = -1;  // creator, until done_reserving()
  bool m_linked = false;
};

// Removes, from /dev/shm, the segments of this user's Sidecore jobs whose creating process no
// longer exists (a job killed before it could remove them). Names read
// sidecore-<creator pid>-<job token>-<server>. Returns how many were removed.
int remove_stale_segments() noexcept;

}  // namespace sidecore::transports
