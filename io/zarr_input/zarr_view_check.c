/* A store's view read back against the store (zarr_view_check.h). */
#include "zarr_view_check.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "matrix_zarr.h"
#include "zarr_meta.h"
#include "zarr_source.h"

/* An array's values and its view's variable's, read a slab of the first
 * axis at a time into the same memory type. */
typedef struct {
  const xio_zarr_array *a;
  hid_t dset, stored, memory; /* the view's; the array's values' type; the one both are read as */
  int64_t offset;             /* of the array's axis 0 in the view's: a joined view's records */
  unsigned char *ours, *theirs;
} slab_check;

/* Local.  The view's values of axis 0's [at, at + n) (a scalar: its one). */
static int read_view(const slab_check *c, int64_t at, int64_t n, size_t count) {
  hsize_t start[XIO_MAX_DIMS] = {(hsize_t)(c->offset + at)}, size[XIO_MAX_DIMS];
  for (int i = 0; i < c->a->ndims; i++) size[i] = i ? (hsize_t)c->a->shape[i] : (hsize_t)n;
  const hsize_t values = count;
  const hid_t space = H5Dget_space(c->dset), memory = H5Screate_simple(1, &values, NULL);
  const int ok = space >= 0 && memory >= 0 &&
                 (c->a->ndims == 0 ||
                  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, size, NULL) >= 0) &&
                 H5Dread(c->dset, c->memory, c->a->ndims ? memory : H5S_ALL,
                         c->a->ndims ? space : H5S_ALL, H5P_DEFAULT, c->theirs) >= 0;
  if (memory >= 0) (void)H5Sclose(memory);
  if (space >= 0) (void)H5Sclose(space);
  return ok ? 0 : -1;
}

/* Local.  Whether the store's and the view's values of axis 0's [at, at +
 * n) are the same (the store's read through m; a scalar's by itself). */
static int same_slab(const slab_check *c, const xio_matrix *m, int64_t at, int64_t n,
                     const char *shown, int *same, xio_error *err) {
  const size_t count = c->a->ndims ? (size_t)(n * m->cols) : 1;
  int rc = c->a->ndims ? xio_read_block(m, at, n, 0, m->cols, c->ours, err)
                       : xio_zarr_scalar_read(c->a, c->ours, shown, err);
  if (rc == 0 && c->a->kind != 'S' &&
      H5Tconvert(c->stored, c->memory, count, c->ours, NULL, H5P_DEFAULT) < 0)
    rc = xio_fail_h5(err, "%s: cannot convert its values to this machine's order", shown);
  if (rc == 0 && read_view(c, at, n, count))
    rc = xio_fail_h5(err, "%s: cannot read its values in xpose's netCDF-4 view back", shown);
  if (rc == 0) *same = memcmp(c->ours, c->theirs, count * c->a->type_size) == 0;
  return rc;
}

/* Local.  Array `name` of `store` against its variable in the view, from
 * record `at` of axis `along` where it lies along it first. */
static int check_array(hid_t view, const char *store, const char *name, const char *along,
                       int64_t at, uint64_t piece_bytes, xio_error *err) {
  char shown[4700], names[XIO_MAX_DIMS][128];
  int named = 0;
  xio_zarr_array a;
  xio_matrix m = {.comm = MPI_COMM_NULL};
  xio_zarr_array_path(store, name, shown, sizeof shown);
  if (xio_zarr_array_read(shown, shown, &a, names, &named, NULL, err) ||
      (a.ndims && xio_open_zarr(MPI_COMM_SELF, &a, shown, 1, &m, err)))
    return -1;
  slab_check c = {.a = &a, .dset = H5Dopen2(view, name, H5P_DEFAULT), .stored = xio_zarr_type(&a)};
  if (along && named && strcmp(names[0], along) == 0) c.offset = at;
  c.memory = c.dset < 0 || c.stored < 0 ? H5I_INVALID_HID
             : a.kind == 'S'            ? H5Dget_type(c.dset) /* characters: no byte order */
                                        : H5Tget_native_type(c.stored, H5T_DIR_ASCEND);
  const int64_t rows = a.ndims ? m.rows : 1;
  const uint64_t row_bytes = a.ndims ? (uint64_t)m.cols * a.type_size : a.type_size;
  const int64_t step = xio_zarr_slab_rows(&a, row_bytes, piece_bytes);
  const size_t bytes = (size_t)((step < rows ? step : rows) * row_bytes) + 16;
  c.ours = malloc(bytes), c.theirs = malloc(bytes);
  int rc = c.memory < 0         ? xio_fail_h5(err, "%s: its netCDF-4 view lacks it", shown)
           : c.ours && c.theirs ? 0
                                : xio_fail(err, "%s: out of memory reading its view back", shown);
  int same = 1;
  for (int64_t row = 0; rc == 0 && same && row < rows; row += step) {
    rc = same_slab(&c, &m, row, row + step < rows ? step : rows - row, shown, &same, err);
    if (rc == 0 && !same)
      rc = xio_fail(err,
                    "%s: its values in xpose's netCDF-4 view differ from the store's (from "
                    "position %lld of its first axis): netCDF-C or xpose wrote them wrongly",
                    shown, (long long)row);
  }
  free(c.ours), free(c.theirs);
  if (c.memory >= 0) (void)H5Tclose(c.memory);
  if (c.stored >= 0) (void)H5Tclose(c.stored);
  if (c.dset >= 0) (void)H5Dclose(c.dset);
  xio_error ignored;
  if (a.ndims) (void)xio_close(&m, &ignored); /* only read */
  return rc;
}

int xio_zarr_view_check(const char *input, const char *view, const xio_path_list *skip,
                        const char *along, int64_t at, uint64_t piece_bytes, xio_error *err) {
  xio_path_array arrays = {0};
  if (xio_zarr_group_arrays(input, input, &arrays, err)) return -1;
  const hid_t file = H5Fopen(view, H5F_ACC_RDONLY, H5P_DEFAULT);
  int rc =
      file < 0 ? xio_fail_h5(err, "%s: cannot read its netCDF-4 view %s back", input, view) : 0;
  for (int i = 0; rc == 0 && i < arrays.count; i++)
    if (xio_path_index(skip, arrays.paths[i]) < 0)
      rc = check_array(file, input, arrays.paths[i], along, at, piece_bytes, err);
  if (file >= 0) (void)H5Fclose(file); /* only read */
  xio_path_array_free(&arrays);
  return rc;
}
