/* Preloaded into one rank of a job (LD_PRELOAD), makes the file system full for that rank only:
 * every write to a file whose path ends with $SIDECORE_FAIL_WRITES_MATCH fails with ENOSPC when
 * the rank ($OMPI_COMM_WORLD_RANK or $PMI_RANK) is $SIDECORE_FAIL_WRITES_RANK. A real disk fills
 * up for every writer at once; this is the case where one writer's write fails and the other's
 * does not (a write that needs a new block, beside one that fits in an allocated one), which
 * must not leave the writers in different collective calls. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static int failing_rank(void) {
  const char* wanted = getenv("SIDECORE_FAIL_WRITES_RANK");
  const char* rank = getenv("OMPI_COMM_WORLD_RANK");
  if (!rank) rank = getenv("PMI_RANK");
  return wanted && rank && strcmp(wanted, rank) == 0;
}

/* Whether writes to fd must fail. */
static int refused(int fd) {
  const char* match = getenv("SIDECORE_FAIL_WRITES_MATCH");
  if (!match || !failing_rank()) return 0;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  const size_t length = strlen(match);
  return (size_t)n >= length && strcmp(path + n - length, match) == 0;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void* buffer, size_t count) {
  if (refused(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return NEXT(write)(fd, buffer, count);
}

ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  if (refused(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return NEXT(pwrite)(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void* buffer, size_t count, off_t offset) {
  if (refused(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return NEXT(pwrite64)(fd, buffer, count, offset);
}

ssize_t writev(int fd, const struct iovec* vector, int count) {
  if (refused(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return NEXT(writev)(fd, vector, count);
}

ssize_t pwritev(int fd, const struct iovec* vector, int count, off_t offset) {
  if (refused(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return NEXT(pwritev)(fd, vector, count, offset);
}

ssize_t pwritev64(int fd, const struct iovec* vector, int count, off_t offset) {
  if (refused(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return NEXT(pwritev64)(fd, vector, count, offset);
}
