#define _POSIX_C_SOURCE 200809L
#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "h5_metadata_walk.h"
#include "netcdf3.h"
#include "output_file.h"
#include "zarr_meta.h"

/* "netCDF-3 classic" and the like, from the file's first 4 bytes, or NULL. */
static const char *netcdf3_kind(const char *path) {
  const int version = xio_nc3_signature(path);
  return version == 1   ? "a netCDF-3 classic file"
         : version == 2 ? "a netCDF-3 64-bit offset file"
         : version == 5 ? "a netCDF-3 CDF-5 (64-bit data) file"
                        : NULL;
}

extern char **environ;

/* The walk's time limit: metadata that takes longer is a loop in HDF5. */
enum { METADATA_SECONDS = 300 };

/* xpose again, in its hidden --metadata-walk mode, on `path`: its pid, or
 * -1 where it cannot be started.  Quiet, with no signal blocked. */
static pid_t spawn_walk(const char *path) {
  char *const argv[] = {"xpose", TOOL_METADATA_WALK, (char *)path, NULL};
  posix_spawn_file_actions_t files;
  posix_spawnattr_t attr;
  sigset_t none, all;
  sigemptyset(&none), sigfillset(&all);
  pid_t pid = -1;
  if (posix_spawn_file_actions_init(&files) != 0) return -1;
  if (posix_spawnattr_init(&attr) == 0) {
    if (posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0) != 0 ||
        posix_spawn_file_actions_addopen(&files, 2, "/dev/null", O_WRONLY, 0) != 0 ||
        posix_spawnattr_setsigmask(&attr, &none) != 0 ||
        posix_spawnattr_setsigdefault(&attr, &all) != 0 ||
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) != 0 ||
        posix_spawn(&pid, "/proc/self/exe", &files, &attr, argv, environ) != 0)
      pid = -1;
    posix_spawnattr_destroy(&attr);
  }
  posix_spawn_file_actions_destroy(&files);
  return pid;
}

/* Rank 0: `path`'s metadata read first by a process of its own
 * (h5_metadata_walk.h), where HDF5 crashing or looping on damaged
 * metadata costs a message, not the job.  Where the walk cannot be
 * started, the run goes on. */
static int metadata_survives(const char *path, xio_error *err) {
  const pid_t pid = spawn_walk(path);
  if (pid < 0) return 0;
  const char *limit = getenv("XPOSE_METADATA_SECONDS"); /* the tests' */
  const double most = limit && atof(limit) > 0 ? atof(limit) : METADATA_SECONDS;
  int status = 0;
  pid_t done = 0;
  for (double waited = 0; (done = waitpid(pid, &status, WNOHANG)) == 0 && waited < most;
       waited += 0.002)
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  if (done == 0) {
    kill(pid, SIGKILL);
    (void)waitpid(pid, &status, 0);
    return xio_fail(err,
                    "%s: reading its metadata (attributes, dimension scales) did not end "
                    "in %.0f s: the file is damaged",
                    path, most);
  }
  if (done == pid && WIFSIGNALED(status))
    return xio_fail(err,
                    "%s: its metadata is damaged: HDF5 crashes reading it (%s, in a "
                    "process of its own; attributes or dimension scales)",
                    path, strsignal(WTERMSIG(status)));
  return 0;
}

int tool_metadata_walk_main(const char *path) { return xio_h5_metadata_walk(path) == 0 ? 0 : 1; }

typedef struct {
  const char *path;
  int netcdf3_read, zarr_read; /* such inputs taken (else refused, saying why) */
  int netcdf3, zarr;
} input_check;

/* Rank 0: a directory as an input, a Zarr store or refused. */
static int check_directory(input_check *c, xio_error *err) {
  xio_zarr_node node = XIO_ZARR_NONE;
  int format;
  if (c->zarr_read && xio_zarr_node_at(c->path, &node, &format, err)) return -1;
  if (node == XIO_ZARR_NONE)
    return xio_fail(err, "%s is a directory, not an HDF5 file%s", c->path,
                    c->zarr_read ? " or a Zarr store" : "");
#ifndef XIO_HAVE_NETCDF /* the store's view is netCDF-C's (zarr_view.h) */
  return xio_fail(err,
                  "%s is a Zarr store, which this xpose, built without netCDF-C "
                  "(libnetcdf-mpi-dev), does not read",
                  c->path);
#endif
  c->zarr = 1;
  return 0;
}

static int check_input_on_root(void *arg, xio_error *err) {
  input_check *c = arg;
  const char *path = c->path;
  struct stat st;
  if (stat(path, &st) != 0) return xio_fail(err, "%s: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode)) return check_directory(c, err);
  if (!S_ISREG(st.st_mode))
    return xio_fail(err, "%s is %s, not an HDF5 file", path, tool_file_kind(st.st_mode));
  if (access(path, R_OK) != 0) return xio_fail(err, "%s: %s", path, strerror(errno));
#if H5_VERSION_GE(1, 12, 0)
  const htri_t is_hdf5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
  const htri_t is_hdf5 = H5Fis_hdf5(path);
#endif
  const char *netcdf3 = is_hdf5 <= 0 ? netcdf3_kind(path) : NULL;
  c->netcdf3 = netcdf3 && c->netcdf3_read;
  if (netcdf3 && !c->netcdf3_read)
#ifdef XIO_HAVE_NETCDF /* the output of `xpose verify` */
    return xio_fail(err, "%s is %s, which is no output of xpose (it writes netCDF-4 files)", path,
                    netcdf3);
#else
    return xio_fail(err,
                    "%s is %s, which this xpose, built without netCDF-C (libnetcdf-mpi-dev), does "
                    "not read: convert it first with `nccopy -k nc4 %s %s.nc4`",
                    path, netcdf3, path, path);
#endif
  if (netcdf3) return 0;
  if (is_hdf5 <= 0) return xio_fail(err, "%s is not an HDF5 file", path);
  return metadata_survives(path, err);
}

int tool_check_input(MPI_Comm comm, const char *path, tool_input_kind *kind, xio_error *err) {
#ifdef XIO_HAVE_NETCDF
  input_check c = {path, kind != NULL, kind != NULL, 0, 0};
#else /* netCDF-3 files refused with a hint, Zarr stores too (check_directory) */
  input_check c = {path, 0, kind != NULL, 0, 0};
#endif
  int found[2];
  const int rc = xio_on_root(comm, check_input_on_root, &c, err);
  found[0] = c.netcdf3, found[1] = c.zarr;
  if (rc || XIO_MPICHECK(MPI_Bcast(found, 2, MPI_INT, 0, comm), err)) return -1;
  if (kind) *kind = found[0] ? TOOL_INPUT_NETCDF3 : found[1] ? TOOL_INPUT_ZARR : TOOL_INPUT_HDF5;
  return 0;
}
