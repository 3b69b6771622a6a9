/* A directory store's files (store_files.h). */
#define _GNU_SOURCE /* syncfs, nftw's FTW_ACTIONRETVAL */
#include "store_files.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int tool_store_sync(const char *path, xio_error *err) {
  const int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return xio_fail(err, "%s: %s", path, strerror(errno));
  const int rc = syncfs(fd) == 0 ? 0 : xio_fail(err, "syncing %s: %s", path, strerror(errno));
  (void)close(fd); /* read-only */
  return rc;
}

static int first_failure; /* nftw's callbacks take no argument */

static int evict_one(const char *path, const struct stat *st, int type, struct FTW *at) {
  (void)st, (void)at;
  if (type != FTW_F) return 0;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  const int why = fd < 0 ? errno : posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  if (fd >= 0) (void)close(fd);
  if (why && !first_failure) first_failure = why;
  return 0;
}

int tool_store_evict(const char *path) {
  first_failure = 0;
  if (nftw(path, evict_one, 16, FTW_PHYS) != 0 && !first_failure) first_failure = errno;
  return first_failure;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *at) {
  (void)st, (void)at;
  const int rc = type == FTW_DP ? rmdir(path) : unlink(path);
  if (rc != 0 && errno != ENOENT && !first_failure) first_failure = errno;
  return 0;
}

int tool_store_remove(const char *path, xio_error *err) {
  first_failure = 0;
  if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT && !first_failure)
    first_failure = errno;
  return first_failure ? xio_fail(err, "cannot remove %s: %s", path, strerror(first_failure)) : 0;
}
