#define _POSIX_C_SOURCE 200809L
#include "input_file.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
  return 0;
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
