#include "nc_copy.h"

#include <hdf5.h>
#include <netcdf.h>
#include <stdlib.h>
#include <string.h>

#include "h5_compat.h"

int xio_nc_failed(int status, const char *what, const char *path, xio_error *err) {
  return status == NC_NOERR ? 0 : xio_fail(err, "%s: %s: %s", path, what, nc_strerror(status));
}

static int host_endian(void) {
  const uint16_t one = 1;
  return *(const unsigned char *)&one ? NC_ENDIAN_LITTLE : NC_ENDIAN_BIG;
}

void xio_reverse_bytes(unsigned char *v, size_t n, size_t size) {
  for (size_t i = 0; i < n; i++, v += size)
    for (size_t b = 0; b < size / 2; b++) {
      const unsigned char t = v[b];
      v[b] = v[size - 1 - b], v[size - 1 - b] = t;
    }
}

/* 1 where nc writes variable varid (values of `size` bytes, of the other
 * byte order) without converting: a probe of distinct bytes written at
 * `start` (the values written next replace it) and read back. */
static int writes_unconverted(int nc, int varid, int ndims, const size_t *start, size_t size) {
  size_t one[NC_MAX_VAR_DIMS];
  unsigned char probe[16], back[16] = {0};
  for (int d = 0; d < ndims; d++) one[d] = 1;
  for (size_t b = 0; b < size; b++) probe[b] = (unsigned char)(b + 1);
  if (nc_put_vara(nc, varid, start, one, probe) != NC_NOERR ||
      nc_get_vara(nc, varid, start, one, back) != NC_NOERR)
    return -1;
  if (memcmp(back, probe, size) == 0) return 0;
  xio_reverse_bytes(back, 1, size);
  return memcmp(back, probe, size) == 0 ? 1 : -1;
}

int xio_nc_put_vara(int nc, int varid, const size_t *start, const size_t *count, void *values,
                    const char *what, const char *path, xio_error *err) {
  int ndims = 0, endian = NC_ENDIAN_NATIVE;
  nc_type type;
  size_t size = 0, n = 1;
  if (xio_nc_failed(nc_inq_var(nc, varid, NULL, &type, &ndims, NULL, NULL), what, path, err) ||
      xio_nc_failed(nc_inq_type(nc, type, NULL, &size), what, path, err))
    return -1;
  for (int d = 0; d < ndims; d++) n *= count[d];
  if (n == 0) return 0;
  const int other = size > 1 && size <= 16 && nc_inq_var_endian(nc, varid, &endian) == NC_NOERR &&
                    endian != NC_ENDIAN_NATIVE && endian != host_endian();
  const int unconverted = other ? writes_unconverted(nc, varid, ndims, start, size) : 0;
  if (unconverted < 0)
    return xio_fail(err, "%s: %s: netCDF-C does not write its byte order back as given", path,
                    what);
  if (unconverted) xio_reverse_bytes(values, n, size);
  return xio_nc_failed(nc_put_vara(nc, varid, start, count, values), what, path, err);
}

/* A netCDF-4 input's storage of variable v given to the view's `id`:
 * chunks, filters, byte order (netCDF-3's have none: netCDF-C's
 * defaults). */
static int define_storage(int in, int v, int out, int id, const char *input, xio_error *err) {
  int format = 0, contiguous = 0, shuffle = 0, deflate = 0, level = 0, fletcher = 0, endian = 0;
  size_t chunks[NC_MAX_VAR_DIMS];
  if (xio_nc_failed(nc_inq_format(in, &format), "reading its format", input, err)) return -1;
  if (format != NC_FORMAT_NETCDF4 && format != NC_FORMAT_NETCDF4_CLASSIC) return 0;
  if (xio_nc_failed(nc_inq_var_chunking(in, v, &contiguous, chunks), "reading its chunks", input,
                    err) ||
      xio_nc_failed(nc_inq_var_deflate(in, v, &shuffle, &deflate, &level), "reading its filters",
                    input, err) ||
      xio_nc_failed(nc_inq_var_fletcher32(in, v, &fletcher), "reading its filters", input, err) ||
      xio_nc_failed(nc_inq_var_endian(in, v, &endian), "reading its byte order", input, err))
    return -1;
  if (contiguous == NC_CHUNKED &&
      xio_nc_failed(nc_def_var_chunking(out, id, NC_CHUNKED, chunks), "chunks", input, err))
    return -1;
  if ((shuffle || deflate) &&
      xio_nc_failed(nc_def_var_deflate(out, id, shuffle, deflate, level), "filters", input, err))
    return -1;
  if (fletcher && xio_nc_failed(nc_def_var_fletcher32(out, id, fletcher), "Fletcher32", input, err))
    return -1;
  /* netCDF-C writes little-endian unless told: only big-endian is said */
  return endian == NC_ENDIAN_BIG
             ? xio_nc_failed(nc_def_var_endian(out, id, endian), "byte order", input, err)
             : 0;
}

int xio_nc_define_all(int in, int out, int record, const char *input, xio_error *err) {
  int ndims = 0, nvars = 0, ngatts = 0, unlimited = -1;
  char name[NC_MAX_NAME + 1];
  if (xio_nc_failed(nc_inq(in, &ndims, &nvars, &ngatts, &unlimited), "reading its header", input,
                    err))
    return -1;
  for (int d = 0; d < ndims; d++) {
    size_t length = 0;
    int id = 0;
    if (xio_nc_failed(nc_inq_dim(in, d, name, &length), "reading a dimension", input, err) ||
        xio_nc_failed(
            nc_def_dim(out, name, d == unlimited || d == record ? NC_UNLIMITED : length, &id),
            "defining a dimension", input, err))
      return -1;
  }
  for (int a = 0; a < ngatts; a++)
    if (xio_nc_failed(nc_inq_attname(in, NC_GLOBAL, a, name), "reading an attribute", input, err) ||
        xio_nc_failed(nc_copy_att(in, NC_GLOBAL, name, out, NC_GLOBAL), name, input, err))
      return -1;
  for (int v = 0; v < nvars; v++) {
    int dimids[NC_MAX_VAR_DIMS], nd = 0, natts = 0, id = 0;
    nc_type type;
    if (xio_nc_failed(nc_inq_var(in, v, name, &type, &nd, dimids, &natts), "reading a variable",
                      input, err) ||
        xio_nc_failed(nc_def_var(out, name, type, nd, dimids, &id), name, input, err) ||
        define_storage(in, v, out, id, input, err))
      return -1;
    for (int a = 0; a < natts; a++) {
      char att[NC_MAX_NAME + 1];
      if (xio_nc_failed(nc_inq_attname(in, v, a, att), "reading an attribute", input, err) ||
          xio_nc_failed(nc_copy_att(in, v, att, out, id), att, input, err))
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

int xio_nc_extend_records(const char *view, size_t records, const char *input, xio_error *err) {
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

int xio_nc_copy_values(int in, int out, int v, size_t at, uint64_t piece_bytes, const char *input,
                       xio_error *err) {
  char name[NC_MAX_NAME + 1];
  int dimids[NC_MAX_VAR_DIMS], nd = 0;
  nc_type type;
  size_t size = 0, start[NC_MAX_VAR_DIMS] = {0}, count[NC_MAX_VAR_DIMS] = {0};
  if (xio_nc_failed(nc_inq_var(in, v, name, &type, &nd, dimids, NULL), "reading a variable", input,
                    err) ||
      xio_nc_failed(nc_inq_type(in, type, NULL, &size), name, input, err))
    return -1;
  uint64_t slab = size; /* bytes of one position of the first axis */
  for (int d = 0; d < nd; d++) {
    if (xio_nc_failed(nc_inq_dimlen(in, dimids[d], &count[d]), name, input, err)) return -1;
    if (count[d] == 0) return 0;
    if (d > 0) slab *= count[d];
  }
  const size_t first = nd > 0 ? count[0] : 1;
  size_t step = slab >= piece_bytes ? 1 : (size_t)(piece_bytes / slab);
  if (step > first) step = first;
  void *buf = malloc((size_t)(slab * step));
  int rc = buf ? 0 : xio_fail(err, "out of memory copying %s of %s", name, input);
  size_t to[NC_MAX_VAR_DIMS] = {0};
  for (size_t done = 0; rc == 0 && done < first; done += step) {
    start[0] = done;
    to[0] = at + done;
    if (nd > 0) count[0] = first - done < step ? first - done : step;
    rc = xio_nc_failed(nc_get_vara(in, v, start, count, buf), name, input, err) ||
                 xio_nc_put_vara(out, v, to, count, buf, name, input, err)
             ? -1
             : 0;
  }
  free(buf);
  return rc;
}
