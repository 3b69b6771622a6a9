/* A chunk that is a file of its own, read whole (chunk_file.h). */
#define _POSIX_C_SOURCE 200809L
#include "chunk_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chunk_box.h"
#include "shard.h"

uint64_t xio_chunk_file_most(const xio_filters *filters, size_t chunk_bytes) {
  return 2 * (uint64_t)xio_chunk_encode_bound(filters, chunk_bytes) + 4096;
}

int xio_chunk_file_read(const char *path, uint64_t most, xio_codec_scratch *scratch,
                        const unsigned char **bytes, size_t *size, char *why, size_t why_size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return 1;
  struct stat st = {0};
  unsigned char *stored = NULL;
  int rc = fd >= 0 && fstat(fd, &st) == 0 ? 0 : -1;
  if (rc == 0 && (uint64_t)st.st_size > most) {
    snprintf(why, why_size,
             "(%s): it holds %lld bytes, more than its chunk encodes to: it is damaged", path,
             (long long)st.st_size);
    (void)close(fd); /* read-only */
    return -1;
  }
  if (rc == 0 && !(stored = xio_codec_scratch_buffer(scratch, (size_t)st.st_size + 1))) rc = -1;
  if (rc)
    snprintf(why, why_size, "cannot be read: %s", strerror(fd >= 0 && !stored ? ENOMEM : errno));
  for (size_t done = 0; rc == 0 && done < (size_t)st.st_size;) {
    const ssize_t got = read(fd, stored + done, (size_t)st.st_size - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      snprintf(why, why_size, "cannot be read: %s", got < 0 ? strerror(errno) : "it ends early");
      rc = -1;
    }
    done += got > 0 ? (size_t)got : 0;
  }
  if (fd >= 0) (void)close(fd); /* read-only */
  *bytes = stored, *size = rc == 0 ? (size_t)st.st_size : 0;
  return rc;
}

/* `size` bytes at `offset` of fd into `to`: 0, or -1 with why. */
static int read_at(int fd, unsigned char *to, size_t size, uint64_t offset, char *why,
                   size_t why_size) {
  for (size_t done = 0; done < size;) {
    const ssize_t got = pread(fd, to + done, size - done, (off_t)(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      snprintf(why, why_size, "cannot be read: %s", got < 0 ? strerror(errno) : "it ends early");
      return -1;
    }
    done += (size_t)got;
  }
  return 0;
}

int xio_chunk_file_read_inner(const char *path, const xio_shard_layout *l, uint64_t most,
                              const int64_t *origin, xio_codec_scratch *scratch,
                              const unsigned char **bytes, size_t *size, char *why,
                              size_t why_size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return 1;
  struct stat st = {0};
  const size_t index_bytes = xio_shard_index_bytes(l);
  unsigned char *index = malloc(index_bytes), *stored = NULL;
  uint64_t at = 0, length = 0;
  int rc = fd >= 0 && index && fstat(fd, &st) == 0 ? 0 : -1;
  if (rc) snprintf(why, why_size, "cannot be read: %s", strerror(index ? errno : ENOMEM));
  char damage[200] = "";
  if (rc == 0 && (uint64_t)st.st_size < index_bytes) {
    snprintf(why, why_size, "(%s): its shard holds %lld bytes, fewer than its index: it is damaged",
             path, (long long)st.st_size);
    rc = -1;
  }
  if (rc == 0)
    rc = read_at(fd, index, index_bytes, (uint64_t)st.st_size - index_bytes, why, why_size);
  if (rc == 0 && (rc = xio_shard_entry(l, index, (uint64_t)st.st_size - index_bytes,
                                       xio_shard_inner_number(l, origin), &at, &length, damage,
                                       sizeof damage)) < 0)
    snprintf(why, why_size, "(%s): its shard's index %s: it is damaged", path, damage);
  if (rc == 0 && length > most) {
    snprintf(why, why_size,
             "(%s): its shard's index gives it %llu bytes, more than it encodes to: it is damaged",
             path, (unsigned long long)length);
    rc = -1;
  }
  if (rc == 0 && !(stored = xio_codec_scratch_buffer(scratch, (size_t)length + 1))) {
    snprintf(why, why_size, "cannot be read: %s", strerror(ENOMEM));
    rc = -1;
  }
  if (rc == 0) rc = read_at(fd, stored, (size_t)length, at, why, why_size);
  if (fd >= 0) (void)close(fd); /* read-only */
  free(index);
  *bytes = stored, *size = rc == 0 ? (size_t)length : 0;
  return rc;
}

const unsigned char *xio_chunk_file_fill(const void *fill, size_t type_size, size_t chunk_bytes,
                                         xio_codec_scratch *scratch) {
  unsigned char *chunk = xio_codec_scratch_buffer(scratch, chunk_bytes);
  if (!chunk) return NULL;
  if (fill)
    xio_chunk_fill(chunk, chunk_bytes, fill, type_size);
  else
    memset(chunk, 0, chunk_bytes);
  return chunk;
}
