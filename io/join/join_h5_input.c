#include "join_h5_input.h"

#include <hdf5.h>
#include <netcdf.h>
#include <stdlib.h>
#include <string.h>

#include "nc_copy.h"

/* The input open, its datasets as the view's variables (by id). */
typedef struct {
  hid_t file;
  int view, nvars, unlimited;
  hid_t *dsets, *types; /* each variable's dataset, and the type it is read as */
  size_t records;
  int records_known;
} input;

/* The memory type netCDF-C reads netCDF's `type` as; NC_CHAR's is the
 * dataset's own (a string of one byte). */
static hid_t memory_type(nc_type type) {
  switch (type) {
    case NC_BYTE: return H5T_NATIVE_SCHAR;
    case NC_UBYTE: return H5T_NATIVE_UCHAR;
    case NC_SHORT: return H5T_NATIVE_SHORT;
    case NC_USHORT: return H5T_NATIVE_USHORT;
    case NC_INT: return H5T_NATIVE_INT;
    case NC_UINT: return H5T_NATIVE_UINT;
    case NC_INT64: return H5T_NATIVE_LLONG;
    case NC_UINT64: return H5T_NATIVE_ULLONG;
    case NC_FLOAT: return H5T_NATIVE_FLOAT;
    case NC_DOUBLE: return H5T_NATIVE_DOUBLE;
    default: return H5I_INVALID_HID;
  }
}

/* The type dataset d is read as where it holds netCDF's `type` (byte
 * order aside), else -1.  To be closed. */
static hid_t read_type(hid_t d, nc_type type) {
  const hid_t stored = H5Dget_type(d);
  if (stored < 0) return -1;
  if (type == NC_CHAR)
    return H5Tget_class(stored) == H5T_STRING && H5Tget_size(stored) == 1
               ? stored
               : (H5Tclose(stored), -1); /* only read */
  const hid_t native = H5Tget_native_type(stored, H5T_DIR_DEFAULT);
  (void)H5Tclose(stored); /* only read */
  if (native >= 0 && H5Tequal(native, memory_type(type)) > 0) return native;
  if (native >= 0) (void)H5Tclose(native);
  return -1;
}

/* Whether variable v's dataset has the view's lengths, its records (a
 * leading record dimension only) as many as the others'. */
static int plain_shape(input *in, int v, int nd, const int *dimids, hsize_t *dims) {
  const hid_t space = H5Dget_space(in->dsets[v]);
  const int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  const int read = rank == nd && H5Sget_simple_extent_dims(space, dims, NULL) == nd;
  if (space >= 0) (void)H5Sclose(space); /* only read */
  if (!read) return 0;
  for (int d = 0; d < nd; d++) {
    size_t length = 0;
    if (dimids[d] != in->unlimited) {
      if (nc_inq_dimlen(in->view, dimids[d], &length) != NC_NOERR || length != dims[d]) return 0;
    } else if (d > 0 || (in->records_known && in->records != dims[0])) {
      return 0;
    } else {
      in->records = (size_t)dims[0];
      in->records_known = 1;
    }
  }
  return 1;
}

/* Whether variable v is in the input as a plain dataset of its name. */
static int plain_variable(input *in, int v) {
  char name[NC_MAX_NAME + 1];
  nc_type type;
  int nd = 0, dimids[NC_MAX_VAR_DIMS], dimid = -1;
  hsize_t dims[NC_MAX_VAR_DIMS];
  if (nc_inq_var(in->view, v, name, &type, &nd, dimids, NULL) != NC_NOERR) return 0;
  /* a variable named as a dimension but not its coordinate is stored under another name */
  if (nc_inq_dimid(in->view, name, &dimid) == NC_NOERR && (nd != 1 || dimids[0] != dimid)) return 0;
  if (H5Lexists(in->file, name, H5P_DEFAULT) <= 0 ||
      (in->dsets[v] = H5Dopen2(in->file, name, H5P_DEFAULT)) < 0)
    return 0;
  in->types[v] = read_type(in->dsets[v], type);
  return in->types[v] >= 0 && plain_shape(in, v, nd, dimids, dims);
}

/* Whether the input holds the view's variables and dimensions, nothing
 * else: each dimension without a variable of its name is a dataset. */
static int plain_input(input *in) {
  int ndims = 0;
  H5G_info_t info;
  if (nc_inq(in->view, &ndims, &in->nvars, NULL, &in->unlimited) != NC_NOERR ||
      H5Gget_info(in->file, &info) < 0)
    return 0;
  hsize_t objects = (hsize_t)in->nvars;
  for (int d = 0; d < ndims; d++) {
    char name[NC_MAX_NAME + 1];
    int v = -1;
    if (nc_inq_dimname(in->view, d, name) != NC_NOERR) return 0;
    if (nc_inq_varid(in->view, name, &v) == NC_NOERR) continue;
    if (H5Lexists(in->file, name, H5P_DEFAULT) <= 0) return 0;
    objects++;
  }
  if (info.nlinks != objects) return 0;
  in->dsets = malloc(sizeof *in->dsets * (size_t)in->nvars);
  in->types = malloc(sizeof *in->types * (size_t)in->nvars);
  if (!in->dsets || !in->types) return 0; /* nothing opened yet */
  for (int v = 0; v < in->nvars; v++) in->dsets[v] = in->types[v] = -1;
  for (int v = 0; v < in->nvars; v++)
    if (!plain_variable(in, v)) return 0;
  return in->records_known; /* else the record dimension's length is netCDF-C's to say */
}

/* Records [from, from + n) of variable v (nd axes, `dims` long) into buf. */
static int read_records(const input *in, int v, int nd, const hsize_t *dims, hsize_t from,
                        hsize_t n, void *buf) {
  hsize_t start[NC_MAX_VAR_DIMS] = {0}, count[NC_MAX_VAR_DIMS];
  for (int d = 0; d < nd; d++) count[d] = dims[d];
  start[0] = from;
  count[0] = n;
  const hid_t file_space = H5Dget_space(in->dsets[v]);
  const hid_t memory = H5Screate_simple(nd, count, NULL);
  const int ok = file_space >= 0 && memory >= 0 &&
                 H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
                 H5Dread(in->dsets[v], in->types[v], memory, file_space, H5P_DEFAULT, buf) >= 0;
  if (memory >= 0) (void)H5Sclose(memory);
  if (file_space >= 0) (void)H5Sclose(file_space);
  return ok;
}

/* Variable v's records into the view from its record `at`, in pieces. */
static int copy_records(const input *in, int v, size_t at, uint64_t piece_bytes) {
  int nd = 0;
  hsize_t dims[NC_MAX_VAR_DIMS];
  const hid_t space = H5Dget_space(in->dsets[v]);
  const int shaped = space >= 0 && nc_inq_varndims(in->view, v, &nd) == NC_NOERR &&
                     H5Sget_simple_extent_dims(space, dims, NULL) == nd;
  if (space >= 0) (void)H5Sclose(space);
  if (!shaped) return 0;
  uint64_t slab = H5Tget_size(in->types[v]);
  for (int d = 1; d < nd; d++) slab *= dims[d];
  if (slab == 0 || in->records == 0) return 1;
  hsize_t step = slab >= piece_bytes ? 1 : piece_bytes / slab;
  if (step > in->records) step = in->records;
  void *buf = malloc((size_t)(slab * step));
  int ok = buf != NULL;
  for (hsize_t done = 0; ok && done < in->records; done += step) {
    const hsize_t n = in->records - done < step ? in->records - done : step;
    size_t to[NC_MAX_VAR_DIMS] = {at + (size_t)done}, count[NC_MAX_VAR_DIMS];
    for (int d = 0; d < nd; d++) count[d] = (size_t)dims[d];
    count[0] = (size_t)n;
    xio_error ignored; /* a copy that fails is made by netCDF-C instead */
    ok = read_records(in, v, nd, dims, done, n, buf) &&
         xio_nc_put_vara(in->view, v, to, count, buf, "", "", &ignored) == 0;
  }
  free(buf);
  return ok;
}

/* Whether fixed variable v holds the view's values (the first input's). */
static int same_values(const input *in, int v) {
  const hid_t space = H5Dget_space(in->dsets[v]);
  const hssize_t values = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  if (space >= 0) (void)H5Sclose(space);
  if (values < 0) return 0;
  const size_t bytes = (size_t)values * H5Tget_size(in->types[v]);
  unsigned char *ours = malloc(bytes + 1), *theirs = malloc(bytes + 1);
  const int same = ours && theirs &&
                   H5Dread(in->dsets[v], in->types[v], H5S_ALL, H5S_ALL, H5P_DEFAULT, ours) >= 0 &&
                   nc_get_var(in->view, v, theirs) == NC_NOERR && memcmp(ours, theirs, bytes) == 0;
  free(ours);
  free(theirs);
  return same;
}

/* The record coordinate's first and last values, where there is one. */
static void record_span(const input *in, xio_join_h5_found *found) {
  char name[NC_MAX_NAME + 1];
  int v = -1, nd = 0;
  found->spanned = 0;
  if (in->records == 0 || nc_inq_dimname(in->view, in->unlimited, name) != NC_NOERR ||
      nc_inq_varid(in->view, name, &v) != NC_NOERR ||
      nc_inq_varndims(in->view, v, &nd) != NC_NOERR || nd != 1)
    return;
  const hsize_t ends[2] = {0, in->records - 1}, two = 2;
  double values[2];
  const hid_t file_space = H5Dget_space(in->dsets[v]), memory = H5Screate_simple(1, &two, NULL);
  found->spanned =
      file_space >= 0 && memory >= 0 &&
      H5Sselect_elements(file_space, H5S_SELECT_SET, 2, ends) >= 0 &&
      H5Dread(in->dsets[v], H5T_NATIVE_DOUBLE, memory, file_space, H5P_DEFAULT, values) >= 0;
  if (memory >= 0) (void)H5Sclose(memory);
  if (file_space >= 0) (void)H5Sclose(file_space);
  found->first = values[0];
  found->last = values[1];
}

/* Each variable copied (records) or compared (fixed values). */
static int read_all(const input *in, size_t at, const xio_path_list *skip, uint64_t piece_bytes) {
  for (int v = 0; v < in->nvars; v++) {
    char name[NC_MAX_NAME + 1];
    int nd = 0, dimids[NC_MAX_VAR_DIMS];
    if (nc_inq_var(in->view, v, name, NULL, &nd, dimids, NULL) != NC_NOERR) return 0;
    const int record = nd > 0 && dimids[0] == in->unlimited;
    if (record && xio_path_index(skip, name) >= 0) continue;
    if (!(record ? copy_records(in, v, at, piece_bytes) : same_values(in, v))) return 0;
  }
  return 1;
}

int xio_join_h5_fill(const char *path, int view, size_t at, const xio_path_list *skip,
                     uint64_t piece_bytes, xio_join_h5_found *found) {
  input in = {.file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), .view = view};
  const int done = in.file >= 0 && plain_input(&in) && read_all(&in, at, skip, piece_bytes);
  if (done) {
    found->records = in.records;
    record_span(&in, found);
  }
  for (int v = 0; in.dsets && in.types && v < in.nvars; v++) {
    if (in.types[v] >= 0) (void)H5Tclose(in.types[v]); /* only read */
    if (in.dsets[v] >= 0) (void)H5Dclose(in.dsets[v]);
  }
  free(in.dsets);
  free(in.types);
  if (in.file >= 0) (void)H5Fclose(in.file);
  return done;
}
