// shm_open/mmap wrappers. Pages are reserved with posix_fallocate (a full /dev/shm fails here
// with a message, not later with SIGBUS) and pre-faulted with MAP_POPULATE so that the first
// write is as fast as the next.
#include "transport/shared_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/error.hpp"

namespace sidecore::transport {
namespace {

std::string describe(const std::string& what, const std::string& name, int err) {
  return what + " '/dev/shm" + name + "': " + std::strerror(err);
}

class fd_guard {
 public:
  explicit fd_guard(int fd) : m_fd(fd) {}
  ~fd_guard() {
    if (m_fd >= 0) ::close(m_fd);
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;

 private:
  int m_fd;
};

std::byte* map(int fd, std::size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) throw allocation_error(describe("cannot map shared memory", name, errno));
  return static_cast<std::byte*>(p);
}

}  // namespace

shared_segment shared_segment::create(const std::string& name, std::size_t bytes) {
  int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) throw allocation_error(describe("cannot create shared memory", name, errno));
  fd_guard guard(fd);
  shared_segment s;
  s.m_name = name;
  s.m_linked = true;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int err = errno;
    s.unlink();
    throw allocation_error(describe("cannot size shared memory", name, err));
  }
  int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err != 0) {
    s.unlink();
    throw allocation_error(describe("cannot reserve " + std::to_string(bytes) +
                                        " bytes of shared memory (is /dev/shm large enough? "
                                        "lower <buffer size=...>)",
                                    name, err));
  }
  try {
    s.m_base = map(fd, bytes, name);
  } catch (...) {
    s.unlink();
    throw;
  }
  s.m_size = bytes;
  return s;
}

shared_segment shared_segment::open(const std::string& name) {
  int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) throw allocation_error(describe("cannot open shared memory", name, errno));
  fd_guard guard(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw allocation_error(describe("cannot stat", name, errno));
  shared_segment s;
  s.m_name = name;
  s.m_size = static_cast<std::size_t>(st.st_size);
  s.m_base = map(fd, s.m_size, name);
  return s;
}

shared_segment::shared_segment(shared_segment&& other) noexcept
    : m_name(std::move(other.m_name)),
      m_base(std::exchange(other.m_base, nullptr)),
      m_size(std::exchange(other.m_size, 0)),
      m_linked(std::exchange(other.m_linked, false)) {}

shared_segment& shared_segment::operator=(shared_segment&& other) noexcept {
  if (this != &other) {
    this->~shared_segment();
    new (this) shared_segment(std::move(other));
  }
  return *this;
}

shared_segment::~shared_segment() {
  unlink();
  if (m_base) ::munmap(m_base, m_size);
  m_base = nullptr;
}

void shared_segment::unlink() noexcept {
  if (m_linked) ::shm_unlink(m_name.c_str());
  m_linked = false;
}

}  // namespace sidecore::transport
