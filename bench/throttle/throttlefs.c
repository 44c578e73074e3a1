/* throttlefs: a FUSE passthrough file system whose writes pay for their size at a shared,
 * jittery bandwidth, so that a local disk behaves like a busy parallel file system. */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  char* backing;        /* folder that really holds the files */
  char* bandwidth;      /* e.g. "125M": bytes per second, decimal suffixes k, M, G */
  double jitter;        /* each write costs size/bandwidth times a factor in [1-j, 1+j] */
  double stall_per_gib; /* expected stalls per GiB written (a loaded server pausing) */
  double stall_ms;      /* length of one stall */
  double meta_ms;       /* latency added to create, mkdir, unlink, rename, rmdir */
  unsigned seed;
  int verbose;
} throttle_options;

/* The server every writer shares: writes queue behind each other, as on a saturated file
 * system whose bandwidth is split between all clients rather than given to each. */
typedef struct {
  int backing_fd;
  double bytes_per_second;
  throttle_options opt;
  pthread_mutex_t lock;
  double next_free; /* CLOCK_MONOTONIC seconds when the server has drained its queue */
  uint64_t rng;
  uint64_t bytes_written;
  uint64_t writes;
  double delay_total;
} throttle_state;

static throttle_state state;

static const double burst_seconds = 0.005;

#define OPTION(text, member) \
  { text, offsetof(throttle_options, member), 1 }
static const struct fuse_opt option_spec[] = {OPTION("backing=%s", backing),
                                              OPTION("bw=%s", bandwidth),
                                              OPTION("jitter=%lf", jitter),
                                              OPTION("stalls_per_gib=%lf", stall_per_gib),
                                              OPTION("stall_ms=%lf", stall_ms),
                                              OPTION("meta_ms=%lf", meta_ms),
                                              OPTION("seed=%u", seed),
                                              OPTION("throttle_verbose", verbose),
                                              FUSE_OPT_END};

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_until(double when) {
  struct timespec ts;
  ts.tv_sec = (time_t)when;
  ts.tv_nsec = (long)((when - (double)ts.tv_sec) * 1e9);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

static void sleep_ms(double ms) {
  if (ms > 0) sleep_until(now_seconds() + ms * 1e-3);
}

/* xorshift64*: fast, and reproducible from the seed (rand() is neither thread-safe nor
 * guaranteed to be the same everywhere). Called with the lock held. */
static double next_uniform(void) {
  state.rng ^= state.rng >> 12;
  state.rng ^= state.rng << 25;
  state.rng ^= state.rng >> 27;
  return (double)((state.rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/* Books the write on the shared server and returns when it would have completed there. */
static double reserve(size_t bytes) {
  pthread_mutex_lock(&state.lock);
  double factor = 1.0 + state.opt.jitter * (2.0 * next_uniform() - 1.0);
  if (factor < 0.0) factor = 0.0;
  double cost = (double)bytes / state.bytes_per_second * factor;
  double stall_chance = state.opt.stall_per_gib * (double)bytes / (1024.0 * 1024.0 * 1024.0);
  if (stall_chance > 0 && next_uniform() < stall_chance) cost += state.opt.stall_ms * 1e-3;
  /* An idle server banks a few milliseconds of credit, so that a lone sequential writer
   * whose requests arrive with FUSE's round trip between them still gets the full rate. */
  double now = now_seconds();
  double start = state.next_free > now - burst_seconds ? state.next_free : now - burst_seconds;
  state.next_free = start + cost;
  double done = state.next_free;
  state.bytes_written += bytes;
  state.writes += 1;
  if (done > now) state.delay_total += done - now;
  pthread_mutex_unlock(&state.lock);
  return done;
}

/* FUSE paths start with '/'; the backing folder is reached relative to its descriptor. */
static const char* relative(const char* path) {
  while (*path == '/') ++path;
  return *path ? path : ".";
}

static int fail(int rc) { return rc < 0 ? -errno : rc; }

static void* tfs_init(struct fuse_conn_info* conn, struct fuse_config* cfg) {
  /* Large requests keep the per-write overhead of the daemon small on a 2-core machine. */
  conn->max_write = 1 << 20;
  cfg->use_ino = 1;
  /* The backing files change only through this mount: the kernel may keep their pages. */
  cfg->kernel_cache = 1;
  cfg->attr_timeout = 1.0;
  cfg->entry_timeout = 1.0;
  return NULL;
}

static void tfs_destroy(void* unused) {
  (void)unused;
  if (state.opt.verbose)
    fprintf(stderr, "throttlefs: %llu writes, %.1f MiB, %.2f s of delay booked\n",
            (unsigned long long)state.writes, state.bytes_written / 1048576.0, state.delay_total);
}

static int tfs_getattr(const char* path, struct stat* st, struct fuse_file_info* fi) {
  if (fi) return fail(fstat((int)fi->fh, st));
  return fail(fstatat(state.backing_fd, relative(path), st, AT_SYMLINK_NOFOLLOW));
}

static int tfs_access(const char* path, int mask) {
  return fail(faccessat(state.backing_fd, relative(path), mask, 0));
}

static int tfs_readlink(const char* path, char* buf, size_t size) {
  ssize_t n = readlinkat(state.backing_fd, relative(path), buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = '\0';
  return 0;
}

static int tfs_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t offset,
                       struct fuse_file_info* fi, enum fuse_readdir_flags flags) {
  (void)offset;
  (void)fi;
  (void)flags;
  int fd = openat(state.backing_fd, relative(path), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return -errno;
  DIR* dir = fdopendir(fd);
  if (!dir) {
    int err = errno;
    close(fd);
    return -err;
  }
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) {
    struct stat st = {0};
    st.st_ino = entry->d_ino;
    st.st_mode = (mode_t)entry->d_type << 12;
    if (fill(buf, entry->d_name, &st, 0, 0)) break;
  }
  closedir(dir);
  return 0;
}

static int tfs_mkdir(const char* path, mode_t mode) {
  sleep_ms(state.opt.meta_ms);
  return fail(mkdirat(state.backing_fd, relative(path), mode));
}

static int tfs_unlink(const char* path) {
  sleep_ms(state.opt.meta_ms);
  return fail(unlinkat(state.backing_fd, relative(path), 0));
}

static int tfs_rmdir(const char* path) {
  sleep_ms(state.opt.meta_ms);
  return fail(unlinkat(state.backing_fd, relative(path), AT_REMOVEDIR));
}

static int tfs_symlink(const char* target, const char* path) {
  return fail(symlinkat(target, state.backing_fd, relative(path)));
}

static int tfs_rename(const char* from, const char* to, unsigned int flags) {
  sleep_ms(state.opt.meta_ms);
  return fail(renameat2(state.backing_fd, relative(from), state.backing_fd, relative(to), flags));
}

static int tfs_link(const char* from, const char* to) {
  return fail(linkat(state.backing_fd, relative(from), state.backing_fd, relative(to), 0));
}

static int tfs_chmod(const char* path, mode_t mode, struct fuse_file_info* fi) {
  if (fi) return fail(fchmod((int)fi->fh, mode));
  return fail(fchmodat(state.backing_fd, relative(path), mode, 0));
}

static int tfs_chown(const char* path, uid_t uid, gid_t gid, struct fuse_file_info* fi) {
  if (fi) return fail(fchown((int)fi->fh, uid, gid));
  return fail(fchownat(state.backing_fd, relative(path), uid, gid, AT_SYMLINK_NOFOLLOW));
}

static int tfs_truncate(const char* path, off_t size, struct fuse_file_info* fi) {
  if (fi) return fail(ftruncate((int)fi->fh, size));
  int fd = openat(state.backing_fd, relative(path), O_WRONLY);
  if (fd < 0) return -errno;
  int rc = fail(ftruncate(fd, size));
  close(fd);
  return rc;
}

static int tfs_utimens(const char* path, const struct timespec tv[2], struct fuse_file_info* fi) {
  if (fi) return fail(futimens((int)fi->fh, tv));
  return fail(utimensat(state.backing_fd, relative(path), tv, AT_SYMLINK_NOFOLLOW));
}

static int tfs_create(const char* path, mode_t mode, struct fuse_file_info* fi) {
  sleep_ms(state.opt.meta_ms);
  int fd = openat(state.backing_fd, relative(path), fi->flags | O_CREAT, mode);
  if (fd < 0) return -errno;
  fi->fh = (uint64_t)fd;
  return 0;
}

static int tfs_open(const char* path, struct fuse_file_info* fi) {
  /* O_APPEND is handled by the kernel's offsets; the backing descriptor writes with pwrite. */
  int fd = openat(state.backing_fd, relative(path), fi->flags & ~O_APPEND);
  if (fd < 0) return -errno;
  fi->fh = (uint64_t)fd;
  /* Truncation on open drops cached pages of the old contents. */
  if (fi->flags & O_TRUNC) fi->keep_cache = 0;
  return 0;
}

static int tfs_read(const char* path, char* buf, size_t size, off_t offset,
                    struct fuse_file_info* fi) {
  (void)path;
  ssize_t n = pread((int)fi->fh, buf, size, offset);
  return n < 0 ? -errno : (int)n;
}

static int tfs_write(const char* path, const char* buf, size_t size, off_t offset,
                     struct fuse_file_info* fi) {
  (void)path;
  double done = reserve(size);
  size_t written = 0;
  while (written < size) {
    ssize_t n = pwrite((int)fi->fh, buf + written, size - written, offset + (off_t)written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    written += (size_t)n;
  }
  /* The reply, and so the writer's write(2), waits for the server's turn. */
  sleep_until(done);
  return (int)written;
}

static int tfs_statfs(const char* path, struct statvfs* st) {
  (void)path;
  return fail(fstatvfs(state.backing_fd, st));
}

static int tfs_release(const char* path, struct fuse_file_info* fi) {
  (void)path;
  close((int)fi->fh);
  return 0;
}

static int tfs_fsync(const char* path, int datasync, struct fuse_file_info* fi) {
  (void)path;
  /* Data reached the shared server when each write returned; the backing disk's own flush is
   * what remains. */
  return fail(datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh));
}

static int tfs_fallocate(const char* path, int mode, off_t offset, off_t length,
                         struct fuse_file_info* fi) {
  (void)path;
  return fail(fallocate((int)fi->fh, mode, offset, length));
}

static off_t tfs_lseek(const char* path, off_t off, int whence, struct fuse_file_info* fi) {
  (void)path;
  off_t r = lseek((int)fi->fh, off, whence);
  return r < 0 ? -errno : r;
}

static const struct fuse_operations operations = {
    .init = tfs_init,
    .destroy = tfs_destroy,
    .getattr = tfs_getattr,
    .access = tfs_access,
    .readlink = tfs_readlink,
    .readdir = tfs_readdir,
    .mkdir = tfs_mkdir,
    .unlink = tfs_unlink,
    .rmdir = tfs_rmdir,
    .symlink = tfs_symlink,
    .rename = tfs_rename,
    .link = tfs_link,
    .chmod = tfs_chmod,
    .chown = tfs_chown,
    .truncate = tfs_truncate,
    .utimens = tfs_utimens,
    .create = tfs_create,
    .open = tfs_open,
    .read = tfs_read,
    .write = tfs_write,
    .statfs = tfs_statfs,
    .release = tfs_release,
    .fsync = tfs_fsync,
    .fallocate = tfs_fallocate,
    .lseek = tfs_lseek,
};

/* "125M" -> 125e6; plain numbers are bytes per second. */
static double parse_bandwidth(const char* text) {
  char* end = NULL;
  double value = strtod(text, &end);
  switch (*end) {
    case 'k':
    case 'K':
      value *= 1e3;
      ++end;
      break;
    case 'm':
    case 'M':
      value *= 1e6;
      ++end;
      break;
    case 'g':
    case 'G':
      value *= 1e9;
      ++end;
      break;
    default:
      break;
  }
  return *end == '\0' || strcmp(end, "B") == 0 ? value : -1.0;
}

static void usage(const char* program) {
  fprintf(stderr,
          "usage: %s MOUNTPOINT -o backing=DIR[,bw=125M,jitter=0.5,stalls_per_gib=4,\n"
          "          stall_ms=50,meta_ms=0,seed=1,throttle_verbose] [FUSE options]\n"
          "  backing=DIR        folder that holds the files (required)\n"
          "  bw=RATE            shared write bandwidth in bytes/s, suffix k/M/G (125M)\n"
          "  jitter=J           each write costs size/bw times a uniform factor in [1-J,1+J]\n"
          "  stalls_per_gib=S   expected pauses per GiB written (server hiccups)\n"
          "  stall_ms=MS        length of one pause\n"
          "  meta_ms=MS         latency of create, mkdir, unlink, rmdir, rename\n"
          "  seed=N             random seed\n"
          "  throttle_verbose   print totals at unmount (with -f)\n",
          program);
}

int main(int argc, char** argv) {
  struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
  state.opt.jitter = 0.5;
  state.opt.stall_per_gib = 4.0;
  state.opt.stall_ms = 50.0;
  state.opt.seed = 1;
  if (fuse_opt_parse(&args, &state.opt, option_spec, NULL) == -1) return 1;
  if (!state.opt.backing) {
    usage(argv[0]);
    fuse_opt_free_args(&args);
    return 1;
  }
  state.bytes_per_second = parse_bandwidth(state.opt.bandwidth ? state.opt.bandwidth : "125M");
  if (state.bytes_per_second <= 0 || state.opt.jitter < 0 || state.opt.jitter > 1) {
    fprintf(stderr, "throttlefs: bw must be positive and jitter in [0, 1]\n");
    return 1;
  }
  state.backing_fd = open(state.opt.backing, O_RDONLY | O_DIRECTORY);
  if (state.backing_fd < 0) {
    perror(state.opt.backing);
    return 1;
  }
  state.rng = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)state.opt.seed * 0xD1B54A32D192ED03ULL);
  if (state.rng == 0) state.rng = 1;
  pthread_mutex_init(&state.lock, NULL);
  /* Files are created with exactly the mode asked for, as on a local file system. */
  umask(0);
  int rc = fuse_main(args.argc, args.argv, &operations, NULL);
  fuse_opt_free_args(&args);
  return rc;
}
