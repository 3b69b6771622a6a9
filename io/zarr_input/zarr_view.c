/* A Zarr store's netCDF-4 view, made and filled (zarr_view.h). */
#define _POSIX_C_SOURCE 200809L
#include "zarr_view.h"

#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_file.h"
#include "matrix_zarr.h"
#include "nc_copy.h"
#include "zarr_meta.h"
#include "zarr_nc_attributes.h"
#include "zarr_source.h"
#include "zarr_view_check.h"

static nc_type nc_type_of(const xio_zarr_array *a) {
  static const nc_type ints[2][4] = {{NC_BYTE, NC_SHORT, NC_INT, NC_INT64},
                                     {NC_UBYTE, NC_USHORT, NC_UINT, NC_UINT64}};
  if (a->kind == 'S') return NC_CHAR;
  if (a->kind == 'f') return a->type_size == 4 ? NC_FLOAT : NC_DOUBLE;
  const int at = a->type_size == 1 ? 0 : a->type_size == 2 ? 1 : a->type_size == 4 ? 2 : 3;
  return ints[a->kind == 'u'][at];
}

/* Local.  The array's axes as the view's dimensions: named by the store
 * (else NAME_dimI), made where new, checked where another array made
 * them. */
static int define_axes(int nc, const char *name, const xio_zarr_array *a, char names[][128],
                       int named, int *ids, const char *shown, xio_error *err) {
  for (int i = 0; i < a->ndims; i++) {
    char axis[300];
    size_t length = 0;
    snprintf(axis, sizeof axis, "%s", names[i]);
    if (!named) snprintf(axis, sizeof axis, "%.250s_dim%d", name[0] == '/' ? name + 1 : name, i);
    if (nc_inq_dimid(nc, axis, &ids[i]) != NC_NOERR) {
      if (xio_nc_failed(nc_def_dim(nc, axis, (size_t)a->shape[i], &ids[i]), "defining an axis",
                        shown, err))
        return -1;
    } else if (nc_inq_dimlen(nc, ids[i], &length) != NC_NOERR || length != (size_t)a->shape[i]) {
      return xio_fail(err, "%s: its axis %s is %lld long, another array's %zu", shown, axis,
                      (long long)a->shape[i], length);
    }
  }
  return 0;
}

/* Local.  The fill value as netCDF takes it: in this machine's order. */
static void native_fill(const xio_zarr_array *a, unsigned char *fill) {
  for (size_t b = 0; b < a->type_size; b++)
    fill[b] = a->fill[a->big_endian ? a->type_size - 1 - b : b];
}

/* Local.  Array `name` of `store` defined in the view: its axes, its
 * chunks (a shard's, where sharded: what one read takes), deflate
 * where the store compresses it (an output keeps its input's storage),
 * its byte order, fill value and attributes. */
static int define_array(int nc, const char *store, const char *name, char *skipped, size_t size,
                        xio_error *err) {
  char shown[4700], names[XIO_MAX_DIMS][128], *attributes = NULL;
  xio_zarr_array a;
  int named, dims[XIO_MAX_DIMS], varid = -1;
  xio_zarr_array_path(store, name, shown, sizeof shown);
  if (xio_zarr_array_read(shown, shown, &a, names, &named, &attributes, err)) return -1;
  int rc = define_axes(nc, name, &a, names, named, dims, shown, err);
  if (rc == 0)
    rc = xio_nc_failed(
        nc_def_var(nc, name[0] == '/' ? name + 1 : name, nc_type_of(&a), a.ndims, dims, &varid),
        "defining it in its view", shown, err);
  size_t chunks[XIO_MAX_DIMS];
  for (int i = 0; i < a.ndims; i++)
    chunks[i] = (size_t)(a.chunks[i] < a.shape[i] ? a.chunks[i] : a.shape[i] ? a.shape[i] : 1);
  if (rc == 0 && a.ndims)
    rc = xio_nc_failed(nc_def_var_chunking(nc, varid, NC_CHUNKED, chunks), "setting its chunks",
                       shown, err);
  const int deflate = a.codecs.count > 0 && a.kind != 'S' && a.ndims;
  if (rc == 0 && deflate)
    rc = xio_nc_failed(nc_def_var_deflate(nc, varid, a.type_size > 1, 1, 4),
                       "setting its compression", shown, err);
  if (rc == 0 && a.big_endian)
    rc = xio_nc_failed(nc_def_var_endian(nc, varid, NC_ENDIAN_BIG), "setting its byte order", shown,
                       err);
  unsigned char fill[16];
  native_fill(&a, fill);
  if (rc == 0 && a.has_fill)
    rc = xio_nc_failed(nc_def_var_fill(nc, varid, 0, fill), "setting its fill value", shown, err);
  if (rc == 0) rc = xio_zarr_nc_attributes(nc, varid, attributes, shown, skipped, size, err);
  free(attributes);
  return rc;
}

/* Local.  Whether every array named as an axis lies along it alone: netCDF-4 keeps another
 * (a 2-D "time", or a "time" whose axes the store does not name while
 * another array's are) as no variable of that name (_nc4_non_coord_time),
 * and xarray reads no such coordinate either. */
static int coordinates_on_their_axes(int nc, const char *input, const xio_path_array *arrays,
                                     xio_error *err) {
  for (int i = 0; i < arrays->count; i++) {
    const char *name = arrays->paths[i] + 1;
    int v = -1, axis = -1, ndims = 0, dims[NC_MAX_VAR_DIMS];
    if (nc_inq_varid(nc, name, &v) != NC_NOERR || nc_inq_dimid(nc, name, &axis) != NC_NOERR ||
        nc_inq_var(nc, v, NULL, NULL, &ndims, dims, NULL) != NC_NOERR ||
        (ndims == 1 && dims[0] == axis))
      continue;
    char shown[4700], axes[600] = "";
    for (int d = 0, n = 0; d < ndims && n < (int)sizeof axes - NC_MAX_NAME - 2; d++) {
      char axis_name[NC_MAX_NAME + 1] = "?";
      (void)nc_inq_dimname(nc, dims[d], axis_name);
      n += snprintf(axes + n, sizeof axes - (size_t)n, "%s%s", d ? "," : "", axis_name);
    }
    xio_zarr_array_path(input, name, shown, sizeof shown);
    return xio_fail(err,
                    "%s: other arrays lie along an axis named \"%s\", but this one lies along "
                    "(%s): netCDF has no variable of that name for it (are its axes' names, "
                    "_ARRAY_DIMENSIONS or dimension_names, missing?)",
                    shown, name, axes);
  }
  return 0;
}

int xio_zarr_view_create(const char *input, const char *view, char *warning, size_t warning_size,
                         xio_error *err) {
  xio_zarr_node node;
  int format, nc = -1;
  xio_path_array arrays = {0};
  char *attributes = NULL, skipped[2048] = "";
  warning[0] = '\0';
  int rc = xio_zarr_node_at(input, &node, &format, err);
  if (rc == 0 && node != XIO_ZARR_GROUP)
    rc = xio_fail(err, "%s is %s: xpose reads a store whose top is a group of arrays", input,
                  node == XIO_ZARR_ARRAY ? "a Zarr array" : "no Zarr store");
  if (rc == 0) rc = xio_zarr_group_arrays(input, input, &arrays, err);
  if (rc == 0) rc = xio_zarr_group_attributes(input, input, &attributes, err);
  if (rc == 0)
    rc = xio_nc_failed(nc_create(view, NC_NETCDF4 | NC_CLOBBER, &nc),
                       "cannot make its netCDF-4 view", view, err);
  if (rc == 0)
    rc = xio_zarr_nc_attributes(nc, NC_GLOBAL, attributes, input, skipped, sizeof skipped, err);
  for (int i = 0; rc == 0 && i < arrays.count; i++)
    rc = define_array(nc, input, arrays.paths[i], skipped, sizeof skipped, err);
  if (rc == 0) rc = coordinates_on_their_axes(nc, input, &arrays, err);
  if (nc >= 0 && nc_close(nc) != NC_NOERR && rc == 0)
    rc = xio_fail(err, "%s: cannot write its netCDF-4 view %s", input, view);
  if (rc == 0 && skipped[0])
    snprintf(warning, warning_size,
             "attributes netCDF has no form for (null, objects, mixed lists) are not copied: %s",
             skipped);
  free(attributes);
  xio_path_array_free(&arrays);
  return rc;
}

/* Local.  Array `name` of `store` copied into variable varid of the view,
 * in slabs of its first axis of about piece_bytes. */
static int fill_array(int nc, int varid, const char *store, const char *name, uint64_t piece_bytes,
                      xio_error *err) {
  char shown[4700];
  xio_zarr_array a;
  xio_zarr_array_path(store, name, shown, sizeof shown);
  if (xio_zarr_array_read(shown, shown, &a, NULL, NULL, NULL, err)) return -1;
  unsigned char value[16];
  if (a.ndims == 0) {
    if (xio_zarr_scalar_read(&a, value, shown, err)) return -1;
    if (a.big_endian)
      xio_reverse_bytes(value, 1, a.type_size); /* netCDF takes this machine's order */
    const size_t origin[1] = {0}, one[1] = {1};
    return xio_nc_put_vara(nc, varid, origin, one, value, "writing its view", shown, err);
  }
  xio_matrix m;
  if (xio_open_zarr(MPI_COMM_SELF, &a, shown, 1, &m, err)) return -1;
  const uint64_t row_bytes = (uint64_t)m.cols * m.elem_size;
  const int64_t step = xio_zarr_slab_rows(&a, row_bytes, piece_bytes);
  const int64_t rows = step < m.rows ? step : m.rows;
  unsigned char *buf = malloc(rows && row_bytes ? (size_t)(rows * row_bytes) : 1);
  int rc = buf ? 0 : xio_fail(err, "%s: out of memory reading it", shown);
  for (int64_t at = 0; rc == 0 && at < m.rows; at += step) {
    const int64_t n = at + step < m.rows ? step : m.rows - at;
    size_t start[XIO_MAX_DIMS] = {(size_t)at}, count[XIO_MAX_DIMS] = {(size_t)n};
    for (int i = 1; i < a.ndims; i++) count[i] = (size_t)a.shape[i];
    rc = xio_read_block(&m, at, n, 0, m.cols, buf, err);
    if (rc == 0 && a.big_endian) xio_reverse_bytes(buf, (size_t)(n * m.cols), a.type_size);
    if (rc == 0) rc = xio_nc_put_vara(nc, varid, start, count, buf, "writing its view", shown, err);
  }
  free(buf);
  xio_error ignored;
  (void)xio_close(&m, &ignored); /* only read */
  return rc;
}

int xio_zarr_view_fill(const char *input, const char *view, const xio_path_list *skip,
                       uint64_t piece_bytes, xio_error *err) {
  int nc = -1, nvars = 0;
  int rc = xio_nc_failed(nc_open(view, NC_WRITE, &nc), "cannot open its view", view, err);
  if (rc == 0) rc = xio_nc_failed(nc_inq_nvars(nc, &nvars), "reading its view", view, err);
  for (int v = 0; rc == 0 && v < nvars; v++) {
    char name[NC_MAX_NAME + 1];
    rc = xio_nc_failed(nc_inq_varname(nc, v, name), "reading its view", view, err);
    if (rc == 0 && xio_path_index(skip, name) < 0)
      rc = fill_array(nc, v, input, name, piece_bytes, err);
  }
  if (nc >= 0 && nc_close(nc) != NC_NOERR && rc == 0)
    rc = xio_fail(err, "%s: cannot write its netCDF-4 view %s", input, view);
  return rc == 0 ? xio_zarr_view_check(input, view, skip, NULL, 0, piece_bytes, err) : rc;
}
