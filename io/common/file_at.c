#define _POSIX_C_SOURCE 200809L /* pread, pwrite */
#include "file_at.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* No single read or write moves more: Linux moves at most 2 GiB - 4 KiB. */
#define MAX_CALL_BYTES ((size_t)1 << 30)

static int transfer_all(int fd, int writing, unsigned char *buf, size_t bytes, uint64_t offset,
                        const char *shown, xio_error *err) {
  const char *doing = writing ? "writing" : "reading";
  while (bytes > 0) {
    const size_t ask = bytes < MAX_CALL_BYTES ? bytes : MAX_CALL_BYTES;
    const ssize_t n =
        writing ? pwrite(fd, buf, ask, (off_t)offset) : pread(fd, buf, ask, (off_t)offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return xio_fail(err, "%s %s failed at byte %llu: %s", doing, shown,
                      (unsigned long long)offset, strerror(errno));
    if (n == 0)
      return xio_fail(err, "%s %s failed at byte %llu: %s", doing, shown,
                      (unsigned long long)offset,
                      writing ? "nothing written" : "the file ends there (truncated?)");
    buf += n;
    bytes -= (size_t)n;
    offset += (uint64_t)n;
  }
  return 0;
}

int xio_read_at(int fd, void *buf, size_t bytes, uint64_t offset, const char *shown,
                xio_error *err) {
  return transfer_all(fd, 0, buf, bytes, offset, shown, err);
}

int xio_write_at(int fd, const void *buf, size_t bytes, uint64_t offset, const char *shown,
                 xio_error *err) {
  return transfer_all(fd, 1, (unsigned char *)buf, bytes, offset, shown, err); /* only read */
}
