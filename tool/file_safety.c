#define _POSIX_C_SOURCE 200809L
#include "file_safety.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- input ---- */

static int check_input_on_root(void *arg, xio_error *err) {
  const char *path = arg;
  struct stat st;
  if (stat(path, &st) != 0) return xio_fail(err, "%s: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode)) return xio_fail(err, "%s is a directory, not an HDF5 file", path);
  if (access(path, R_OK) != 0) return xio_fail(err, "%s: %s", path, strerror(errno));
#if H5_VERSION_GE(1, 12, 0)
  const htri_t is_hdf5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
  const htri_t is_hdf5 = H5Fis_hdf5(path);
#endif
  if (is_hdf5 <= 0) return xio_fail(err, "%s is not an HDF5 file", path);
  return 0;
}

int tool_check_input(MPI_Comm comm, const char *path, xio_error *err) {
  return xio_on_root(comm, check_input_on_root, (void *)path, err);
}

/* ---- output ---- */

static char partial_to_remove[4200]; /* for the signal handler */

static void remove_partial_and_die(int sig) {
  /* Async-signal-safe calls only, and nowhere to report a failure. */
  if (partial_to_remove[0]) (void)unlink(partial_to_remove);
  (void)signal(sig, SIG_DFL);
  (void)raise(sig);
}

typedef struct {
  const char *path, *input;
  int force;
  tool_output_file *out;
} output_check;

static int check_output_on_root(void *arg, xio_error *err) {
  output_check *c = arg;
  struct stat st, in_st;
  if (stat(c->path, &st) == 0) {
    if (c->input && stat(c->input, &in_st) == 0 && st.st_dev == in_st.st_dev &&
        st.st_ino == in_st.st_ino)
      return xio_fail(err, "output %s is the input file; write to another file", c->path);
    if (S_ISDIR(st.st_mode)) return xio_fail(err, "output %s is a directory", c->path);
    if (!c->force) return xio_fail(err, "output %s exists; use --force to replace it", c->path);
  } else if (errno != ENOENT) {
    return xio_fail(err, "output %s: %s", c->path, strerror(errno));
  }
  char dir[sizeof c->out->final_path];
  snprintf(dir, sizeof dir, "%s", c->path);
  const char *parent = dirname(dir);
  if (stat(parent, &st) != 0)
    return xio_fail(err, "output directory %s: %s", parent, strerror(errno));
  if (!S_ISDIR(st.st_mode)) return xio_fail(err, "output directory %s is not a directory", parent);
  if (access(parent, W_OK | X_OK) != 0)
    return xio_fail(err, "cannot write to %s: %s", parent, strerror(errno));
  snprintf(c->out->temp_path, sizeof c->out->temp_path, "%s.xpose-%ld.partial", c->path,
           (long)getpid());
  return 0;
}

int tool_output_prepare(MPI_Comm comm, const char *path, const char *input, int force,
                        tool_output_file *out, xio_error *err) {
  memset(out, 0, sizeof *out);
  if (strlen(path) >= sizeof out->final_path) return xio_fail(err, "output path is too long");
  snprintf(out->final_path, sizeof out->final_path, "%s", path);
  output_check check = {path, input, force, out};
  if (xio_on_root(comm, check_output_on_root, &check, err) ||
      XIO_MPI(MPI_Bcast(out->temp_path, (int)sizeof out->temp_path, MPI_CHAR, 0, comm), err))
    return -1;
  snprintf(partial_to_remove, sizeof partial_to_remove, "%s", out->temp_path);
  const int signals[] = {SIGINT, SIGTERM, SIGHUP};
  int rc = 0;
  for (size_t i = 0; i < sizeof signals / sizeof *signals; i++)
    if (signal(signals[i], remove_partial_and_die) == SIG_ERR && rc == 0)
      rc = xio_fail(err, "cannot handle signal %d: %s", signals[i], strerror(errno));
  return xio_agree(comm, rc, err);
}

/* fsync a file or directory by name; what rename makes visible must be on disk. */
static int sync_path(const char *path, xio_error *err) {
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return xio_fail(err, "%s: %s", path, strerror(errno));
  int rc = fsync(fd) == 0 || errno == EINVAL /* no sync for this file system */ ? 0 : -1;
  if (rc) xio_fail(err, "syncing %s: %s", path, strerror(errno));
  if (close(fd) != 0 && rc == 0) rc = xio_fail(err, "closing %s: %s", path, strerror(errno));
  return rc;
}

static int publish_on_root(void *arg, xio_error *err) {
  tool_output_file *out = arg;
  if (sync_path(out->temp_path, err)) return -1;
  if (rename(out->temp_path, out->final_path) != 0)
    return xio_fail(err, "renaming %s to %s: %s", out->temp_path, out->final_path, strerror(errno));
  partial_to_remove[0] = '\0';
  /* Persist the rename too; best effort: the file is already in place. */
  char dir[sizeof out->final_path];
  snprintf(dir, sizeof dir, "%s", out->final_path);
  xio_error ignored;
  (void)sync_path(dirname(dir), &ignored);
  return 0;
}

int tool_output_publish(MPI_Comm comm, tool_output_file *out, xio_error *err) {
  const int rc = xio_on_root(comm, publish_on_root, out, err);
  if (rc == 0) out->temp_path[0] = '\0';
  return rc;
}

void tool_output_discard(MPI_Comm comm, tool_output_file *out) {
  xio_error ignored; /* cleaning up after a failure that is reported already */
  int rank = 0;      /* if MPI cannot say, every rank removes it: harmless */
  if (XIO_MPI(MPI_Comm_rank(comm, &rank), &ignored) == 0)
    (void)XIO_MPI(MPI_Barrier(comm), &ignored); /* every rank has closed the file */
  if (rank == 0 && out->temp_path[0]) (void)unlink(out->temp_path); /* gone already is fine */
  out->temp_path[0] = '\0';
  partial_to_remove[0] = '\0';
}
