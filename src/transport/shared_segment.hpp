// A POSIX shared-memory mapping owned by RAII; created by a server, opened by its clients.
#pragma once

#include <cstddef>
#include <string>

namespace sidecore::transport {

class shared_segment {
 public:
  shared_segment() = default;
  // Creates (O_EXCL), sizes, reserves and maps a new segment. Throws allocation_error with the
  // reason (name taken, /dev/shm too small...).
  static shared_segment create(const std::string& name, std::size_t bytes);
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

  std::byte* base() const noexcept { return m_base; }
  std::size_t size() const noexcept { return m_size; }
  const std::string& name() const noexcept { return m_name; }

 private:
  std::string m_name;
  std::byte* m_base = nullptr;
  std::size_t m_size = 0;
  bool m_linked = false;
};

}  // namespace sidecore::transport
