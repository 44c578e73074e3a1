// shm_open/mmap wrappers. Pages are reserved by writing zeros to them (a full /dev/shm fails
// here with a message, not later with SIGBUS) and pre-faulted so that the first write is as
// fast as the next; both happen, for the data heap, after the name is gone from /dev/shm.
#include "transports/dedicated_cores/shared_segment.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "common/error.hpp"

namespace sidecore::transports {
namespace {

std::string describe(const std::string& what, const std::string& name, int err) {
  return what + " '/dev/shm" + name + "': " + std::strerror(err);
}

class fd_guard {
 public:
  explicit fd_guard(int fd) : m_fd(fd) {}
  int get() const noexcept { return m_fd; }
  ~fd_guard() {
    if (m_fd >= 0) ::close(m_fd);
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;

 private:
  int m_fd;
};

std::byte* map(int fd, std::size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw allocation_error(describe("cannot map shared memory", name, errno));
  return static_cast<std::byte*>(p);
}

}  // namespace

shared_segment shared_segment::create(const std::string& name, std::size_t bytes,
                                      std::size_t reserved) {
  int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) throw allocation_error(describe("cannot create shared memory", name, errno));
  shared_segment s;
  s.m_fd = fd;  // closed by the destructor or done_reserving()
  s.m_name = name;
  s.m_linked = true;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0)
    throw allocation_error(describe("cannot size shared memory", name, errno));
  reserved = std::min(reserved, bytes);
  if (int err = ::posix_fallocate(fd, 0, static_cast<off_t>(reserved)); err != 0)
    throw allocation_error(describe("cannot reserve " + std::to_string(reserved) +
                                        " bytes of shared memory (is /dev/shm large enough?)",
                                    name, err));
  s.m_base = map(fd, bytes, name);
  s.m_size = bytes;
  return s;
}

int shared_segment::try_reserve(std::size_t offset, std::size_t bytes) noexcept {
  if (m_fd < 0 || offset >= m_size || bytes == 0) return 0;
  bytes = std::min(bytes, m_size - offset);
  // Writing zeros both allocates the pages and clears them, here on the dedicated core. With
  // posix_fallocate the pages would be allocated but cleared only when first mapped, by
  // whichever process maps them first: the client, in its start-up or its first write (on
  // this machine 64 MiB cost 16 ms to fallocate, then 27 ms to map a first time against 9 ms
  // once written). A full /dev/shm fails the write with ENOSPC, not later with SIGBUS.
  static const std::byte zeros[1 << 20] = {};
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t chunk = std::min(sizeof zeros, bytes - done);
    const ssize_t n = ::pwrite(m_fd, zeros, chunk, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return ENOSPC;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

void shared_segment::reserve(std::size_t offset, std::size_t bytes) {
  if (const int err = try_reserve(offset, bytes); err != 0)
    throw allocation_error(describe("cannot reserve " + std::to_string(bytes) +
                                        " bytes at offset " + std::to_string(offset) + " of " +
                                        std::to_string(m_size) +
                                        " bytes of shared memory (is /dev/shm large enough? "
                                        "lower <buffer size=...>)",
                                    m_name, err));
}

std::uint64_t shared_segment::free_space() const noexcept {
  struct statvfs st {};
  if (m_fd < 0 || ::fstatvfs(m_fd, &st) != 0) return UINT64_MAX;
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

void shared_segment::done_reserving() noexcept {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
}

void shared_segment::prefault(std::size_t offset, std::size_t bytes) noexcept {
  if (!m_base || offset >= m_size) return;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t first = offset / page * page;
  const std::size_t end = std::min(m_size, offset + std::min(bytes, m_size - offset));
  if (end <= first) return;
    // A read fault is enough: a shared mapping of tmpfs needs no write notification, so the
    // page is mapped writable and a later write takes no fault. Populating for reading costs
    // about a third of populating for writing (64 MiB: 5-8 ms against 17 ms here), which does
    // the dirty-page work of a write fault on pages already allocated by posix_fallocate.
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
  if (::madvise(m_base + first, end - first, MADV_POPULATE_READ) == 0) return;
  // Kernels before 5.14: read every page (which maps it writable, as above).
  volatile std::byte sink{};
  for (std::size_t at = first; at < end; at += page)
    sink = static_cast<volatile std::byte*>(m_base)[at];
  (void)sink;
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
      m_fd(std::exchange(other.m_fd, -1)),
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
  if (m_fd >= 0) ::close(m_fd);
  m_base = nullptr;
  m_fd = -1;
}

int remove_stale_segments() noexcept {
  int removed = 0;
  DIR* directory = ::opendir("/dev/shm");
  if (!directory) return 0;
  const uid_t me = ::getuid();
  while (const dirent* entry = ::readdir(directory)) {
    const char* name = entry->d_name;
    unsigned long pid = 0;
    char token[17] = {};
    unsigned server = 0;
    int consumed = 0;
    if (std::sscanf(name, "sidecore-%lu-%16[0-9a-f]-%u%n", &pid, token, &server, &consumed) != 3 ||
        name[consumed] != '\0' || std::strlen(token) != 16 || pid == 0)
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours
    const std::string path = std::string("/dev/shm/") + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || st.st_uid != me) continue;
    if (::shm_unlink((std::string("/") + name).c_str()) == 0) ++removed;
  }
  ::closedir(directory);
  return removed;
}

void shared_segment::unlink() noexcept {
  if (m_linked) ::shm_unlink(m_name.c_str());
  m_linked = false;
}

}  // namespace sidecore::transports
