// A POSIX shared-memory mapping owned by RAII; created by a server, opened by its clients.
#pragma once

#include <cstddef>
#include <string>

namespace sidecore::transport {

class shared_segment {
 public:
  shared_segment() = default;
  // Creates (O_EXCL), sizes and maps a new segment, reserving its first `reserved` bytes now
  // (the rest with reserve_rest(), once the name is gone). Throws allocation_error with the
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

  // Creator: reserves the pages not reserved by create() (a full /dev/shm fails here with a
  // message, not later with SIGBUS). Throws allocation_error.
  void reserve_rest();
  // Maps every page now (without changing it), so that the first write takes no page fault.
  void prefault() noexcept;

  std::byte* base() const noexcept { return m_base; }
  std::size_t size() const noexcept { return m_size; }
  const std::string& name() const noexcept { return m_name; }

 private:
  std::string m_name;
  std::byte* m_base = nullptr;
  std::size_t m_size = 0;
  std::size_t m_reserved = 0;
  int m_fd = -1;  // creator, until reserve_rest()
  bool m_linked = false;
};

// Removes, from /dev/shm, the segments of this user's Sidecore jobs whose creating process no
// longer exists (a job killed before it could remove them). Names read
// sidecore-<creator pid>-<job token>-<server>. Returns how many were removed.
int remove_stale_segments() noexcept;

}  // namespace sidecore::transport
