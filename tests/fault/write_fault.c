/* LD_PRELOAD shim for fault-injection tests: write(), pwrite(), writev()
 * and pwritev() (and their 64-bit names) to files whose path contains
 * WRITE_FAULT_PATH fail with WRITE_FAULT_ERRNO (ENOSPC or EIO) once
 * WRITE_FAULT_AFTER bytes have been written to such files, and from then
 * on, as on a full disk.  With WRITE_FAULT_RANK set, only in the MPI rank
 * of that number (OMPI_COMM_WORLD_RANK, or Slurm's SLURM_PROCID).  With
 * WRITE_FAULT_DELAY_US instead of WRITE_FAULT_AFTER, such writes succeed
 * after that many microseconds (a slow file system, for runs that must
 * last).  With WRITE_FAULT_LOSE=1, writes past WRITE_FAULT_AFTER bytes
 * report success and write nothing: a file system that loses data without
 * saying so; with WRITE_FAULT_LOSE_BYTES too, only that many bytes are
 * lost, the writes after them going through.  With
 * WRITE_FAULT_NO_FALLOCATE=1, fallocate() fails with EOPNOTSUPP, as on
 * file systems that have none.  WRITE_FAULT_SYNC names the calls among
 * fsync and fdatasync ("fsync,fdatasync": both) that fail with EIO on such
 * files (WRITE_FAULT_AFTER not needed): pages the writes left in the page
 * cache did not reach the disk.  Everything else passes through. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static struct {
  int configured, active, error, lose;
  const char *sync;
  long delay_us;
  const char *path;
  long long after, written, lose_bytes, lost;
} fault;

static void configure(void) {
  if (fault.configured) return;
  fault.configured = 1;
  const char *path = getenv("WRITE_FAULT_PATH"), *after = getenv("WRITE_FAULT_AFTER");
  const char *error = getenv("WRITE_FAULT_ERRNO"), *rank = getenv("WRITE_FAULT_RANK");
  const char *my_rank = getenv("OMPI_COMM_WORLD_RANK"), *delay = getenv("WRITE_FAULT_DELAY_US");
  const char *sync = getenv("WRITE_FAULT_SYNC");
  if (!my_rank) my_rank = getenv("SLURM_PROCID");
  if (!path || (!after && !delay && !sync)) return;
  if (rank && (!my_rank || strcmp(rank, my_rank) != 0)) return;
  fault.path = path;
  fault.sync = sync;
  fault.after = after ? atoll(after) : -1;
  fault.delay_us = delay ? atol(delay) : 0;
  fault.error = error && strcmp(error, "EIO") == 0 ? EIO : ENOSPC;
  fault.lose = getenv("WRITE_FAULT_LOSE") && strcmp(getenv("WRITE_FAULT_LOSE"), "1") == 0;
  const char *lose_bytes = getenv("WRITE_FAULT_LOSE_BYTES");
  fault.lose_bytes = lose_bytes ? atoll(lose_bytes) : -1;
  fault.active = 1;
}

/* Whether the fault applies to fd's file. */
static int targeted(int fd) {
  configure();
  if (!fault.active) return 0;
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  return strstr(target, fault.path) != NULL;
}

/* 0: let the write through; -1: fail it (errno set); 1: lose it. */
static int inject(int fd, size_t bytes) {
  if (!targeted(fd)) return 0;
  if (fault.delay_us) usleep((useconds_t)fault.delay_us);
  const int lost_enough = fault.lose_bytes >= 0 && fault.lost >= fault.lose_bytes;
  if (fault.after >= 0 && fault.written + (long long)bytes > fault.after && !lost_enough) {
    fault.lost += (long long)bytes;
    if (fault.lose) return 1;
    errno = fault.error;
    return -1;
  }
  fault.written += (long long)bytes;
  return 0;
}

static size_t iov_bytes(const struct iovec *iov, int count) {
  size_t total = 0;
  for (int i = 0; i < count; i++) total += iov[i].iov_len;
  return total;
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

/* What a call returns: the real call's result, -1 (failed) or all of it
 * (lost). */
#define INJECTED(bytes, real)                   \
  do {                                          \
    const int fault_ = inject(fd, (bytes));     \
    if (fault_ < 0) return -1;                  \
    if (fault_ > 0) return (ssize_t)(bytes);    \
    return real;                                \
  } while (0)

ssize_t write(int fd, const void *buf, size_t count) {
  INJECTED(count, REAL(write)(fd, buf, count));
}
ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
  INJECTED(count, REAL(pwrite)(fd, buf, count, offset));
}
ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t offset) {
  INJECTED(count, REAL(pwrite64)(fd, buf, count, offset));
}
ssize_t writev(int fd, const struct iovec *iov, int count) {
  INJECTED(iov_bytes(iov, count), REAL(writev)(fd, iov, count));
}
ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t offset) {
  INJECTED(iov_bytes(iov, count), REAL(pwritev)(fd, iov, count, offset));
}
ssize_t pwritev64(int fd, const struct iovec *iov, int count, off64_t offset) {
  INJECTED(iov_bytes(iov, count), REAL(pwritev64)(fd, iov, count, offset));
}

static int no_fallocate(void) {
  const char *no = getenv("WRITE_FAULT_NO_FALLOCATE");
  return no && strcmp(no, "1") == 0;
}
int fallocate(int fd, int mode, off_t offset, off_t len) {
  if (no_fallocate()) return errno = EOPNOTSUPP, -1;
  return REAL(fallocate)(fd, mode, offset, len);
}
int fallocate64(int fd, int mode, off64_t offset, off64_t len) {
  if (no_fallocate()) return errno = EOPNOTSUPP, -1;
  return REAL(fallocate64)(fd, mode, offset, len);
}

/* Whether `call` of fd's file fails ("fsync" is not inside "fdatasync"). */
static int sync_fails(int fd, const char *call) {
  return targeted(fd) && fault.sync && strstr(fault.sync, call);
}
int fsync(int fd) {
  if (sync_fails(fd, "fsync")) return errno = EIO, -1;
  return REAL(fsync)(fd);
}
int fdatasync(int fd) {
  if (sync_fails(fd, "fdatasync")) return errno = EIO, -1;
  return REAL(fdatasync)(fd);
}
