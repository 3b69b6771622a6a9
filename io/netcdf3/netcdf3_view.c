#include "netcdf3_view.h"

#include <hdf5.h>
#include <netcdf.h>
#include <stdlib.h>
#include <string.h>

#include "h5_compat.h"
#include "netcdf3.h"

static int nc_failed(int status, const char *what, const char *path, xio_error *err) {
  return status == NC_NOERR ? 0 : xio_fail(err, "%s: %s: %s", path, what, nc_strerror(status));
}

/* Dimensions, variables and attributes, in the input's order (so each
 * dimension keeps its id). */
static int define_all(int in, int out, const char *input, xio_error *err) {
  int ndims = 0, nvars = 0, ngatts = 0, unlimited = -1;
  char name[NC_MAX_NAME + 1];
  if (nc_failed(nc_inq(in, &ndims, &nvars, &ngatts, &unlimited), "reading its header", input, err))
    return -1;
  for (int d = 0; d < ndims; d++) {
    size_t length = 0;
    int id = 0;
    if (nc_failed(nc_inq_dim(in, d, name, &length), "reading a dimension", input, err) ||
        nc_failed(nc_def_dim(out, name, d == unlimited ? NC_UNLIMITED : length, &id),
                  "defining a dimension", input, err))
      return -1;
  }
  for (int a = 0; a < ngatts; a++)
    if (nc_failed(nc_inq_attname(in, NC_GLOBAL, a, name), "reading an attribute", input, err) ||
        nc_failed(nc_copy_att(in, NC_GLOBAL, name, out, NC_GLOBAL), name, input, err))
      return -1;
  for (int v = 0; v < nvars; v++) {
    int dimids[NC_MAX_VAR_DIMS], nd = 0, natts = 0, id = 0;
    nc_type type;
    if (nc_failed(nc_inq_var(in, v, name, &type, &nd, dimids, &natts), "reading a variable", input,
                  err) ||
        nc_failed(nc_def_var(out, name, type, nd, dimids, &id), name, input, err))
      return -1;
    for (int a = 0; a < natts; a++) {
      char att[NC_MAX_NAME + 1];
      if (nc_failed(nc_inq_attname(in, v, a, att), "reading an attribute", input, err) ||
          nc_failed(nc_copy_att(in, v, att, out, id), att, input, err))
        return -1;
    }
  }
  return 0;
}

/* HDF5 keeps no length for netCDF-4's unlimited dimension: readers take
 * the longest dataset along it.  The view's datasets are made that long
 * (with nothing written, their chunks stay unallocated). */
static herr_t extend_one(hid_t group, const char *name, const xio_link_info *info, void *records) {
  if (info->type != H5L_TYPE_HARD) return 0;
  const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  if (object < 0) return -1;
  herr_t rc = 0;
  if (H5Iget_type(object) == H5I_DATASET) {
    const hid_t space = H5Dget_space(object);
    hsize_t dims[H5S_MAX_RANK], max[H5S_MAX_RANK];
    const int rank = space >= 0 ? H5Sget_simple_extent_dims(space, dims, max) : -1;
    if (rank < 0) rc = -1;
    if (rc == 0 && rank > 0 && max[0] == H5S_UNLIMITED && dims[0] < *(hsize_t *)records) {
      dims[0] = *(hsize_t *)records;
      rc = H5Dset_extent(object, dims);
    }
    if (space >= 0) H5Sclose(space);
  }
  H5Oclose(object);
  return rc;
}

static int extend_records(const char *view, size_t records, const char *input, xio_error *err) {
  hsize_t n = records;
  const hid_t file = H5Fopen(view, H5F_ACC_RDWR, H5P_DEFAULT);
  const herr_t walked =
      file < 0 ? -1 : XIO_LINK_ITERATE(file, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, extend_one, &n);
  const herr_t closed = file < 0 ? -1 : H5Fclose(file);
  return walked < 0 || closed < 0
             ? xio_fail_h5(err, "%s: cannot give its netCDF-4 view (%s) its %llu records", input,
                           view, (unsigned long long)records)
             : 0;
}

int xio_nc3_view_create(const char *input, const char *view, xio_error *err) {
  int in = -1, out = -1, unlimited = -1;
  size_t records = 0;
  int rc = xio_nc3_header_check(input, err);
  if (rc == 0) rc = nc_failed(nc_open(input, NC_NOWRITE, &in), "cannot open", input, err);
  if (rc == 0)
    rc = nc_failed(nc_create(view, NC_NETCDF4 | NC_CLOBBER, &out), "cannot make its netCDF-4 view",
                   view, err);
  if (rc == 0) rc = define_all(in, out, input, err);
  if (rc == 0 && nc_inq_unlimdim(in, &unlimited) == NC_NOERR && unlimited >= 0)
    rc = nc_failed(nc_inq_dimlen(in, unlimited, &records), "reading its records", input, err);
  if (out >= 0 && nc_close(out) != NC_NOERR && rc == 0)
    rc = xio_fail(err, "%s: cannot write its netCDF-4 view %s", input, view);
  if (in >= 0) (void)nc_close(in); /* only read */
  if (rc == 0 && records > 0) rc = extend_records(view, records, input, err);
  return rc;
}

static int skipped(const xio_path_list *skip, const char *name) {
  for (int i = 0; i < skip->count; i++)
    if (strcmp(skip->paths[i] + (skip->paths[i][0] == '/'), name) == 0) return 1;
  return 0;
}

/* Variable v's values, in slabs along its first axis of about
 * piece_bytes. */
static int copy_values(int in, int out, int v, uint64_t piece_bytes, const char *input,
                       xio_error *err) {
  char name[NC_MAX_NAME + 1];
  int dimids[NC_MAX_VAR_DIMS], nd = 0;
  nc_type type;
  size_t size = 0, start[NC_MAX_VAR_DIMS] = {0}, count[NC_MAX_VAR_DIMS] = {0};
  if (nc_failed(nc_inq_var(in, v, name, &type, &nd, dimids, NULL), "reading a variable", input,
                err) ||
      nc_failed(nc_inq_type(in, type, NULL, &size), name, input, err))
    return -1;
  uint64_t slab = size; /* bytes of one position of the first axis */
  for (int d = 0; d < nd; d++) {
    if (nc_failed(nc_inq_dimlen(in, dimids[d], &count[d]), name, input, err)) return -1;
    if (count[d] == 0) return 0;
    if (d > 0) slab *= count[d];
  }
  const size_t first = nd > 0 ? count[0] : 1;
  size_t step = slab >= piece_bytes ? 1 : (size_t)(piece_bytes / slab);
  if (step > first) step = first;
  void *buf = malloc((size_t)(slab * step));
  int rc = buf ? 0 : xio_fail(err, "out of memory copying %s of %s", name, input);
  for (size_t at = 0; rc == 0 && at < first; at += step) {
    start[0] = at;
    if (nd > 0) count[0] = first - at < step ? first - at : step;
    rc = nc_failed(nc_get_vara(in, v, start, count, buf), name, input, err) ||
                 nc_failed(nc_put_vara(out, v, start, count, buf), name, input, err)
             ? -1
             : 0;
  }
  free(buf);
  return rc;
}

int xio_nc3_view_fill(const char *input, const char *view, const xio_path_list *skip,
                      uint64_t piece_bytes, xio_error *err) {
  int in = -1, out = -1, nvars = 0;
  int rc = xio_nc3_header_check(input, err);
  if (rc == 0) rc = nc_failed(nc_open(input, NC_NOWRITE, &in), "cannot open", input, err);
  if (rc == 0) rc = nc_failed(nc_open(view, NC_WRITE, &out), "cannot open its view", view, err);
  if (rc == 0) rc = nc_failed(nc_inq_nvars(in, &nvars), "reading its header", input, err);
  for (int v = 0; rc == 0 && v < nvars; v++) {
    char name[NC_MAX_NAME + 1];
    rc = nc_failed(nc_inq_varname(in, v, name), "reading a variable", input, err);
    if (rc == 0 && !skipped(skip, name)) rc = copy_values(in, out, v, piece_bytes, input, err);
  }
  if (out >= 0 && nc_close(out) != NC_NOERR && rc == 0)
    rc = xio_fail(err, "%s: cannot write its netCDF-4 view %s", input, view);
  if (in >= 0) (void)nc_close(in); /* only read */
  return rc;
}
