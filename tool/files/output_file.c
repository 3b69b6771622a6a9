#define _GNU_SOURCE /* renameat2, fallocate */
#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "checksum.h"
#include "mpi_io_name.h"
#include "size.h"
#include "store_files.h"

static int lock_fd = -1; /* rank 0's, for the whole run */

const char *tool_file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return S_ISREG(mode) ? "a regular file" : "not a regular file";
}

/* "<dir>/<stem><suffix>", the stem being OUT's own name, or when that would
 * pass NAME_MAX its first 200 bytes, '~' and a hash of the whole. */
static void beside(const char *path, const char *suffix, char *to, size_t size) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const int dir_length = (int)(base - path);
  if (strlen(base) + strlen(suffix) <= NAME_MAX) {
    snprintf(to, size, "%s%s", path, suffix);
    return;
  }
  const uint64_t hash = xio_checksum_block(base, 1, (int64_t)strlen(base), 1, 0, 0, 1);
  snprintf(to, size, "%.*s%.200s~%016llx%s", dir_length, path, base, (unsigned long long)hash,
           suffix);
}

static int sync_fd(int fd) { return fsync(fd) == 0 || errno == EINVAL /* cannot sync */ ? 0 : -1; }

/* fsync a file or directory by name; what rename makes visible must be on disk. */
static int sync_path(const char *path, xio_error *err) {
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return xio_fail(err, "%s: %s", path, strerror(errno));
  int rc = sync_fd(fd) == 0 ? 0 : xio_fail(err, "syncing %s: %s", path, strerror(errno));
  if (close(fd) != 0 && rc == 0) rc = xio_fail(err, "closing %s: %s", path, strerror(errno));
  return rc;
}

int tool_sync_parent(const char *path, xio_error *err) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s", path);
  return sync_path(dirname(dir), err);
}

static void unlock(tool_output_file *out) {
  if (lock_fd < 0) return;
  (void)unlink(out->lock_path); /* while still holding it: the next run makes a new one */
  (void)close(lock_fd);
  lock_fd = -1;
}

/* An flock on the lock file, whose inode must still be the one at its
 * name (a run finishing meanwhile unlinks it). */
static int lock_output(tool_output_file *out, xio_error *err) {
  for (int attempt = 0; attempt < 100; attempt++) {
    const int fd = open(out->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      return xio_fail(err, "cannot create the lock %s: %s", out->lock_path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int saved = errno;
      char holder[128] = "";
      const ssize_t got = pread(fd, holder, sizeof holder - 1, 0);
      holder[got > 0 ? got : 0] = '\0';
      holder[strcspn(holder, "\n")] = '\0';
      (void)close(fd);
      if (saved == EWOULDBLOCK)
        return xio_fail(err,
                        "another xpose run%s%s is writing %s (it holds %s); wait for it to end",
                        holder[0] ? " " : "", holder, out->final_path, out->lock_path);
      /* File systems without flock: go on, but say so. */
      snprintf(out->lock_note, sizeof out->lock_note,
               "cannot lock %s (%s): concurrent runs to this output are not detected",
               out->lock_path, strerror(saved));
      return 0;
    }
    struct stat held, named;
    if (fstat(fd, &held) == 0 && stat(out->lock_path, &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      char host[256] = "?";
      (void)gethostname(host, sizeof host - 1);
      char holder[320];
      const int n = snprintf(holder, sizeof holder, "(pid %ld on %s)\n", (long)getpid(), host);
      if (ftruncate(fd, 0) != 0 || pwrite(fd, holder, (size_t)n, 0) != n) {
        /* the content is a courtesy for the message above; the lock holds */
      }
      lock_fd = fd;
      return 0;
    }
    (void)close(fd); /* unlinked by a run that just ended: take the new one */
  }
  return xio_fail(err, "cannot take the lock %s: it keeps changing", out->lock_path);
}

typedef struct {
  MPI_Comm comm;
  const char *path;
  const char *const *inputs; /* none where input_count is 0 */
  int input_count;
  int force;
  tool_partial_policy partial;
  tool_output_file *out;
} output_check;

/* Whether file `path` lies in `folder` (by any name). */
static int lies_in(const char *path, const char *folder) {
  char parent[4200];
  snprintf(parent, sizeof parent, "%s", path);
  char *slash = strrchr(parent, '/');
  if (slash) *slash = '\0';
  struct stat a, b;
  return stat(slash ? (parent[0] ? parent : "/") : ".", &a) == 0 && stat(folder, &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The input must not be one of xpose's own files for this output: taking
 * the lock would overwrite it, starting over would remove it. */
static int check_input_is_not_ours(const output_check *c, const char *input, xio_error *err) {
  struct stat in_st, st;
  if (stat(input, &in_st) != 0) return 0; /* its own checks say why */
  const tool_output_file *out = c->out;
  const char *const own[] = {out->partial_path,     out->record_path,      out->lock_path,
                             out->scratch_paths[0], out->scratch_paths[1], out->view_path,
                             out->store_views};
  const char *const what[] = {"partial output", "resume record", "lock",
                              "scratch file",   "scratch file",  "netCDF-4 view of its input",
                              "folder of its input stores' views"};
  if (lies_in(input, out->store_views)) {
    c->out->usage_error = 1;
    return xio_fail(err, "input %s lies in %s, the folder of output %s's views of its input "
                    "stores: give another input or output", input, out->store_views, c->path);
  }
  for (int i = 0; i < (int)(sizeof own / sizeof *own); i++)
    if (stat(own[i], &st) == 0 && st.st_dev == in_st.st_dev && st.st_ino == in_st.st_ino) {
      c->out->usage_error = 1;
      if (strcmp(input, own[i]) == 0)
        return xio_fail(err, "input %s is the %s of output %s: give another input or output", input,
                        what[i], c->path);
      return xio_fail(err, "input %s is %s, the %s of output %s: give another input or output",
                      input, own[i], what[i], c->path);
    }
  return 0;
}

/* The input that the output's path is, by any name or link, or NULL. */
static const char *output_is_an_input(const output_check *c, const struct stat *st) {
  struct stat in_st;
  for (int i = 0; i < c->input_count; i++)
    if (stat(c->inputs[i], &in_st) == 0 && st->st_dev == in_st.st_dev && st->st_ino == in_st.st_ino)
      return c->inputs[i];
  return NULL;
}

static int check_output_on_root(void *arg, xio_error *err) {
  output_check *c = arg;
  tool_output_file *out = c->out;
  struct stat st, in_st;
  for (int i = 0; i < c->input_count; i++)
    if (check_input_is_not_ours(c, c->inputs[i], err)) return -1;
  char name[sizeof out->partial_path];
  if (xio_mpi_io_name(c->comm, out->partial_path, out->partial_path, name, sizeof name, err)) {
    out->usage_error = 1;
    return -1;
  }
  if (lstat(c->path, &st) == 0 && S_ISLNK(st.st_mode) && stat(c->path, &in_st) != 0) {
    if (!c->force) /* renaming onto it would replace the link: as good as a file */
      return xio_fail(
          err, "output %s exists (a symbolic link to nothing); use --force to replace it", c->path);
  } else if (stat(c->path, &st) == 0) {
    const char *input = output_is_an_input(c, &st);
    if (input && c->input_count == 1)
      return xio_fail(err, "output %s is the input file; write to another file", c->path);
    if (input)
      return xio_fail(err, "output %s is the input %s; write to another file", c->path, input);
    if (out->store && (c->force || c->partial != TOOL_PARTIAL_KEEP || !S_ISDIR(st.st_mode)))
      return xio_fail(err, "output %s exists; xpose never replaces a store (or anything else)",
                      c->path);
    if (out->store)
      out->final_exists = 1; /* --resume: a published store, checked */
    else if (S_ISDIR(st.st_mode))
      return xio_fail(err, "output %s is a directory", c->path);
    else if (!S_ISREG(st.st_mode))
      return xio_fail(err, "output %s is %s; xpose replaces regular files only", c->path,
                      tool_file_kind(st.st_mode));
    else if (!c->force && c->partial != TOOL_PARTIAL_KEEP)
      return xio_fail(err, "output %s exists; use --force to replace it", c->path);
    else
      out->final_exists = !c->force;
  } else if (errno != ENOENT) {
    return xio_fail(err, "output %s: %s", c->path, strerror(errno));
  }
  char dir[sizeof out->final_path];
  snprintf(dir, sizeof dir, "%s", c->path);
  const char *parent = dirname(dir);
  if (stat(parent, &st) != 0)
    return xio_fail(err, "output directory %s: %s", parent, strerror(errno));
  if (!S_ISDIR(st.st_mode)) return xio_fail(err, "output directory %s is not a directory", parent);
  if (access(parent, W_OK | X_OK) != 0)
    return xio_fail(err, "cannot write to %s: %s", parent, strerror(errno));

  if (lock_output(out, err)) return -1;
  if (lstat(out->partial_path, &st) == 0) {
    if (out->store ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
      return xio_fail(err, "%s is %s, where xpose keeps its partial output; remove it",
                      out->partial_path, tool_file_kind(st.st_mode));
    if (out->final_exists) {
      return xio_fail(err, "output %s exists; use --force to replace it", c->path);
    } else if (c->partial == TOOL_PARTIAL_KEEP) {
      out->partial_found = 1;
    } else if (c->partial == TOOL_PARTIAL_REFUSE) {
      return xio_fail(err,
                      "%s is left from an interrupted run: add --resume to continue it, or "
                      "--force to start over",
                      out->partial_path);
    } else if (tool_output_remove_partial(out, err)) { /* the lock says no run writes it */
      return -1;
    }
  } else if (errno != ENOENT) {
    return xio_fail(err, "%s: %s", out->partial_path, strerror(errno));
  } else if (unlink(out->record_path) != 0 && errno != ENOENT) { /* a record of nothing */
    return xio_fail(err, "cannot remove %s: %s", out->record_path, strerror(errno));
  }
  out->owned = 1;
  return 0;
}

int tool_output_prepare(MPI_Comm comm, const char *path, const char *const *inputs, int input_count,
                        int force, tool_partial_policy partial, int store, tool_output_file *out,
                        xio_error *err) {
  memset(out, 0, sizeof *out);
  out->store = store;
  if (strlen(path) >= sizeof out->final_path - 1)
    return xio_fail(err, "output path %.64s... is too long", path);
  snprintf(out->final_path, sizeof out->final_path, "%s", path);
  beside(path, ".xpose-partial", out->partial_path, sizeof out->partial_path);
  beside(path, ".xpose-resume", out->record_path, sizeof out->record_path);
  beside(path, ".xpose-lock", out->lock_path, sizeof out->lock_path);
  for (int j = 0; j < TOOL_SCRATCH_FILES; j++) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".xpose-scratch-%d", j + 1);
    beside(path, suffix, out->scratch_paths[j], sizeof out->scratch_paths[j]);
  }
  beside(path, ".xpose-netcdf4", out->view_path, sizeof out->view_path);
  beside(path, ".xpose-store-views", out->store_views, sizeof out->store_views);
  out->force = force;
  output_check check = {comm, path, inputs, input_count, force, partial, out};
  const int rc = xio_on_root(comm, check_output_on_root, &check, err);
  if (rc) unlock(out); /* rank 0's, if it took it */
  int flags[4] = {out->partial_found, out->owned, out->final_exists, out->usage_error};
  if (XIO_MPICHECK(MPI_Bcast(flags, 4, MPI_INT, 0, comm), err) ||
      XIO_MPICHECK(MPI_Bcast(out->lock_note, (int)sizeof out->lock_note, MPI_CHAR, 0, comm), err))
    return -1;
  out->partial_found = flags[0];
  out->owned = flags[1];
  out->final_exists = flags[2];
  out->usage_error = flags[3];
  return rc;
}

static int reserve_on_root(void *arg, xio_error *err) {
  const struct {
    const tool_output_file *out;
    uint64_t bytes;
  } *r = arg;
  if (r->bytes == 0) return 0; /* compressed: its size is not known ahead */
  const char *path = r->out->partial_path;
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return xio_fail(err, "%s: %s", path, strerror(errno));
  int rc = 0;
  const int failed = fallocate(fd, 0, 0, (off_t)r->bytes) != 0 ? errno : 0;
  struct statvfs fs;
  char dir[sizeof r->out->final_path];
  snprintf(dir, sizeof dir, "%s", r->out->final_path);
  const char *parent = dirname(dir);
  const uint64_t free_bytes =
      fstatvfs(fd, &fs) == 0 ? (uint64_t)fs.f_bavail * (uint64_t)fs.f_frsize : UINT64_MAX;
  struct stat st;
  const uint64_t have = fstat(fd, &st) == 0 ? (uint64_t)st.st_blocks * 512u : 0;
  const int no_room = failed == ENOSPC || failed == EDQUOT ||
                      ((failed == EOPNOTSUPP || failed == ENOSYS) && r->bytes > have &&
                       r->bytes - have > free_bytes);
  char need[32], room[32];
  tool_format_bytes(r->bytes, need, sizeof need);
  tool_format_bytes(free_bytes == UINT64_MAX ? 0 : free_bytes, room, sizeof room);
  if (no_room)
    rc = xio_fail(err, "not enough space for %s: it needs %s and %s has %s free%s",
                  r->out->final_path, need, parent, room,
                  failed == EDQUOT ? " (or the quota is reached)" : "");
  else if (failed && failed != EOPNOTSUPP && failed != ENOSYS)
    rc = xio_fail(err, "cannot reserve %s for %s: %s", need, r->out->final_path, strerror(failed));
  if (close(fd) != 0 && rc == 0) rc = xio_fail(err, "closing %s: %s", path, strerror(errno));
  return rc;
}

uint64_t tool_output_free_bytes(const tool_output_file *out) {
  char dir[sizeof out->final_path];
  snprintf(dir, sizeof dir, "%s", out->final_path);
  struct statvfs fs;
  return statvfs(dirname(dir), &fs) == 0 ? (uint64_t)fs.f_bavail * (uint64_t)fs.f_frsize
                                         : UINT64_MAX;
}

void tool_output_explain_full(const tool_output_file *out, uint64_t next_bytes, int64_t passes_done,
                              int64_t passes, xio_error *err) {
  struct statvfs fs;
  struct stat st;
  if (statvfs(out->partial_path, &fs) != 0 || stat(out->partial_path, &st) != 0) return;
  const uint64_t free_bytes = (uint64_t)fs.f_bavail * (uint64_t)fs.f_frsize;
  if (free_bytes >= next_bytes && free_bytes >= ((uint64_t)1 << 20)) return;
  const uint64_t written = (uint64_t)st.st_blocks * 512u;
  char dir[sizeof out->final_path], room[32], have[32], need[128] = "";
  snprintf(dir, sizeof dir, "%s", out->final_path);
  tool_format_bytes(free_bytes, room, sizeof room);
  tool_format_bytes(written, have, sizeof have);
  if (passes_done > 0) {
    char total[32];
    tool_format_bytes((uint64_t)((double)written * (double)passes / (double)passes_done), total,
                      sizeof total);
    snprintf(need, sizeof need, "; by its %lld of %lld passes written it needs about %s",
             (long long)passes_done, (long long)passes, total);
  }
  char cause[sizeof err->message];
  snprintf(cause, sizeof cause, "%s", err->message);
  xio_fail(err, "not enough space for %s: %s is full (%s free) with %s of it written%s (%.300s)",
           out->final_path, dirname(dir), room, have, need, cause);
}

int tool_output_reserve(MPI_Comm comm, const tool_output_file *out, uint64_t bytes,
                        xio_error *err) {
  struct {
    const tool_output_file *out;
    uint64_t bytes;
  } request = {out, bytes};
  return xio_on_root(comm, reserve_on_root, &request, err);
}

static int room_on_root(void *arg, xio_error *err) {
  const struct {
    const tool_output_file *out;
    uint64_t bytes;
    const char *what;
  } *r = arg;
  struct statvfs fs;
  if (r->bytes == 0 || statvfs(r->out->partial_path, &fs) != 0) return 0;
  const uint64_t free_bytes = (uint64_t)fs.f_bavail * (uint64_t)fs.f_frsize;
  if (r->bytes <= free_bytes) return 0;
  char dir[sizeof r->out->final_path], need[32], room[32];
  snprintf(dir, sizeof dir, "%s", r->out->final_path);
  tool_format_bytes(r->bytes, need, sizeof need);
  tool_format_bytes(free_bytes, room, sizeof room);
  return xio_fail(err, "not enough space for %s: %s need %s more and %s has %s free",
                  r->out->final_path, r->what, need, dirname(dir), room);
}

int tool_output_check_room(MPI_Comm comm, const tool_output_file *out, uint64_t bytes,
                           const char *what, xio_error *err) {
  struct {
    const tool_output_file *out;
    uint64_t bytes;
    const char *what;
  } request = {out, bytes, what};
  return xio_on_root(comm, room_on_root, &request, err);
}

static int sync_on_root(void *arg, xio_error *err) {
  const tool_output_file *out = arg;
  return out->store ? tool_store_sync(out->partial_path, err) : sync_path(out->partial_path, err);
}

int tool_drop_cached_pages(const char *path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* an errno value, not errno */
  (void)close(fd);
  return rc;
}

int tool_output_evict(MPI_Comm comm, const tool_output_file *out, xio_error *err) {
  if (xio_on_root(comm, sync_on_root, (void *)out, err)) return -1;
  /* Every rank, for its node's cache; clean pages only, hence the sync. */
  const int why =
      out->store ? tool_store_evict(out->partial_path) : tool_drop_cached_pages(out->partial_path);
  const int rc = why ? xio_fail(err, "cannot drop %s from the page cache: %s", out->partial_path,
                                strerror(why))
                     : 0;
  return xio_agree(comm, rc, err);
}

static int publish_on_root(void *arg, xio_error *err) {
  tool_output_file *out = arg;
  if (sync_on_root(out, err)) return -1;
  int rc = 0;
  if (out->force) {
    rc = rename(out->partial_path, out->final_path);
  } else {
    rc = renameat2(AT_FDCWD, out->partial_path, AT_FDCWD, out->final_path, RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) { /* not on this file system */
      rc = link(out->partial_path, out->final_path);
      if (rc == 0) (void)unlink(out->partial_path);
    }
  }
  if (rc != 0 && errno == EEXIST)
    return xio_fail(err,
                    "%s appeared while xpose was writing it, and is left alone; the verified "
                    "transpose is %s: rename it yourself, or rerun with --force",
                    out->final_path, out->partial_path);
  if (rc != 0)
    return xio_fail(err, "renaming %s to %s: %s; the verified transpose is kept there",
                    out->partial_path, out->final_path, strerror(errno));
  out->owned = 0;                 /* published: nothing left to remove */
  (void)unlink(out->record_path); /* a record of nothing now; a next run removes it too */
  /* Persist the rename too; best effort: the file is already in place. */
  xio_error ignored;
  (void)tool_sync_parent(out->final_path, &ignored);
  return 0;
}

int tool_output_publish(MPI_Comm comm, tool_output_file *out, xio_error *err) {
  const int rc = xio_on_root(comm, publish_on_root, out, err);
  tool_output_release(comm, out, 1);
  return rc;
}

void tool_output_release(MPI_Comm comm, tool_output_file *out, int keep) {
  xio_error ignored; /* cleaning up after a failure that is reported already */
  int rank = 0;      /* if MPI cannot say, every rank tries: harmless */
  if (XIO_MPICHECK(MPI_Comm_rank(comm, &rank), &ignored) == 0)
    (void)XIO_MPICHECK(MPI_Barrier(comm), &ignored); /* every rank has closed the file */
  if (rank == 0 && out->owned && !keep) (void)tool_output_remove_partial(out, &ignored);
  if (rank == 0) unlock(out);
  out->owned = 0;
}

int tool_output_remove_partial(const tool_output_file *out, xio_error *err) {
  const char *const files[] = {out->partial_path, out->record_path};
  if (out->store && tool_store_remove(out->partial_path, err)) return -1;
  for (int i = out->store; i < 2; i++)
    if (unlink(files[i]) != 0 && errno != ENOENT)
      return xio_fail(err, "cannot remove %s: %s", files[i], strerror(errno));
  return 0;
}
