/* The HDF5 view of inputs joined (join_h5_view.h): which join they take,
 * which datasets are joined, and the view made.  Its fill is
 * join_h5_fill.c's. */
#include "join_h5_view.h"

#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdio.h>
#include <string.h>

#include "h5_compat.h"
#include "h5_copy.h"
#include "h5_types.h"
#include "netcdf3.h"

#ifdef XIO_HAVE_NETCDF
/* Whether dataset d is as netCDF-C reads a variable: of an atomic type
 * of netCDF's (integers, floats, NC_CHAR's one-byte strings) and, unless
 * it is a dimension itself, a dimension on each axis (netCDF-C names an
 * axis with none "phony_dim_N"). */
static int netcdf_variable(hid_t d) {
  const hid_t type = H5Dget_type(d), space = H5Dget_space(d);
  const H5T_class_t kind = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
  int ok = kind == H5T_INTEGER || kind == H5T_FLOAT ||
           (kind == H5T_STRING && H5Tis_variable_str(type) == 0 && H5Tget_size(type) == 1);
  const int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  if (ndims < 0) ok = 0;
  if (ok && H5DSis_scale(d) <= 0)
    for (int i = 0; ok && i < ndims; i++) ok = H5DSget_num_scales(d, (unsigned)i) > 0;
  if (space >= 0) (void)H5Sclose(space); /* only read */
  if (type >= 0) (void)H5Tclose(type);
  return ok;
}

/* A link visit's: 1 (which ends it) at the first object netCDF-C cannot
 * join: a group, a named datatype, a soft or external link, a dataset
 * that is no netCDF variable. */
static herr_t not_netcdf(hid_t group, const char *name, const xio_link_info *info, void *data) {
  (void)data;
  if (info->type != H5L_TYPE_HARD) return 1;
  const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  if (object < 0) return -1;
  const H5I_type_t kind = H5Iget_type(object);
  const int other = kind != H5I_DATASET || !netcdf_variable(object);
  (void)H5Oclose(object); /* only read */
  return other;
}
#endif

int xio_join_h5_wanted(const char *first, const char *concat, xio_error *err) {
  if (concat && concat[0] == '/') return 1; /* datasets named */
  if (xio_nc3_signature(first) >= 0) return 0;
#ifndef XIO_HAVE_NETCDF
  (void)err;
  return 1;
#else
  const hid_t file = H5Fopen(first, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return xio_fail_h5(err, "%s: cannot open as an HDF5 file", first);
  const herr_t found = XIO_LINK_VISIT(file, H5_INDEX_NAME, H5_ITER_INC, not_netcdf, NULL);
  (void)H5Fclose(file); /* only read */
  if (found < 0) return xio_fail_h5(err, "%s: cannot list its objects", first);
  return found > 0;
#endif
}

/* A dataset's shape: its rank (-1 where it cannot be read), lengths and
 * largest lengths. */
static int shape_of(hid_t d, hsize_t *dims, hsize_t *maxdims) {
  const hid_t space = H5Dget_space(d);
  int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  if (ndims > 0 && H5Sget_simple_extent_dims(space, dims, maxdims) < 0) ndims = -1;
  if (space >= 0) (void)H5Sclose(space); /* only read */
  return ndims;
}

/* Whether dataset `path` of `file` can be joined: an axis to join along,
 * elements that copy (no references), one name (a second would copy its
 * first input's records alone).  0, or -1 with why. */
static int joinable(hid_t file, const char *shown, const char *path, xio_error *err) {
  if (H5Oexists_by_name(file, path, H5P_DEFAULT) <= 0)
    return xio_fail(err, "--concat: %s has no dataset %s", shown, path);
  const hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  if (d < 0) return xio_fail_h5(err, "--concat: %s:%s is not a dataset", shown, path);
  hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
  const hid_t type = H5Dget_type(d);
  xio_object_info info;
  int rc = type < 0 || XIO_OBJECT_INFO(d, &info) < 0
               ? xio_fail_h5(err, "%s:%s: cannot read its type", shown, path)
               : 0;
  if (rc == 0 && shape_of(d, dims, maxdims) < 1)
    rc = xio_fail(err, "%s:%s has no axis to join the inputs along (a scalar)", shown, path);
  if (rc == 0 && xio_type_has_reference(type))
    rc = xio_fail(err,
                  "%s:%s holds references, which point into its own file: it cannot be "
                  "joined",
                  shown, path);
  if (rc == 0 && info.rc > 1)
    rc = xio_fail(err, "%s:%s has %u names (hard links): xpose joins datasets of one name", shown,
                  path, info.rc);
  if (type >= 0) (void)H5Tclose(type); /* only read */
  (void)H5Dclose(d);
  return rc;
}

typedef struct {
  const char *shown;
  xio_path_array *joined;
  xio_error *err;
  int failed;
} unlimited_listing;

/* A link visit's: every dataset whose first axis is unlimited, listed. */
static herr_t list_unlimited(hid_t group, const char *name, const xio_link_info *info, void *data) {
  unlimited_listing *l = data;
  if (info->type != H5L_TYPE_HARD || H5Oexists_by_name(group, name, H5P_DEFAULT) <= 0) return 0;
  const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  l->failed = object < 0;
  if (l->failed) return xio_fail_h5(l->err, "%s:/%s: cannot open it", l->shown, name);
  hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
  const int record = H5Iget_type(object) == H5I_DATASET && shape_of(object, dims, maxdims) > 0 &&
                     maxdims[0] == H5S_UNLIMITED;
  (void)H5Oclose(object); /* only read */
  if (!record) return 0;
  l->failed = joinable(group, l->shown, name, l->err) != 0 ||
              (xio_path_array_add(l->joined, name) != 0 &&
               xio_fail(l->err, "out of memory listing the datasets of %s", l->shown));
  return l->failed ? -1 : 0;
}

/* The datasets named by `concat` ("/a,/g/b"), each joinable. */
static int list_named(hid_t file, const char *shown, const char *concat, xio_path_array *joined,
                      xio_error *err) {
  for (const char *p = concat; *p;) {
    const char *end = strchr(p, ',');
    const size_t length = end ? (size_t)(end - p) : strlen(p);
    char path[512];
    if (length == 0 || p[0] != '/' || length >= sizeof path)
      return xio_fail(err,
                      "--concat %s: %s is joined as an HDF5 file (it has groups, strings, "
                      "user-defined types or axes of no netCDF dimension): name the datasets "
                      "to join by their paths, each from the root (/matrix,/g/x)",
                      concat, shown);
    snprintf(path, sizeof path, "%.*s", (int)length, p);
    if (xio_path_index(&(xio_path_list){(const char(*)[512])joined->paths, joined->count}, path) >=
        0)
      return xio_fail(err, "--concat %s names %s twice", concat, path);
    if (joinable(file, shown, path, err)) return -1;
    if (xio_path_array_add(joined, path)) return xio_fail(err, "out of memory");
    p += length + (end != NULL);
  }
  return 0;
}

/* The first input's datasets joined: those `concat` names, else those of
 * an unlimited first axis; their records (first-axis length) in *records,
 * the same for all. */
static int list_joined(hid_t first, const char *shown, const char *concat, xio_path_array *joined,
                       hsize_t *records, xio_error *err) {
  err->message[0] = '\0';
  unlimited_listing listing = {shown, joined, err, 0};
  if (concat && list_named(first, shown, concat, joined, err)) return -1;
  if (!concat && XIO_LINK_VISIT(first, H5_INDEX_NAME, H5_ITER_INC, list_unlimited, &listing) < 0)
    return listing.failed ? -1 : xio_fail_h5(err, "%s: cannot list its datasets", shown);
  if (joined->count == 0)
    return xio_fail(err,
                    "%s has no dataset whose first axis is unlimited (a record dimension) to "
                    "join the inputs along: name those to join with --concat /DATASET[,...]",
                    shown);
  for (int j = 0; j < joined->count; j++) {
    hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
    const hid_t d = H5Dopen2(first, joined->paths[j], H5P_DEFAULT);
    const int ndims = d >= 0 ? shape_of(d, dims, maxdims) : -1;
    if (d >= 0) (void)H5Dclose(d);
    if (ndims < 1) return xio_fail_h5(err, "%s:%s: cannot read its shape", shown, joined->paths[j]);
    if (j > 0 && dims[0] != *records)
      return xio_fail(err,
                      "%s: %s has %llu records and %s %llu along the first axis the inputs are "
                      "joined along: the datasets joined must have as many",
                      shown, joined->paths[0], (unsigned long long)*records, joined->paths[j],
                      (unsigned long long)dims[0]);
    *records = dims[0];
  }
  return 0;
}

/* Input `path`'s records: the first-axis length of its dataset `dataset`
 * (the fill checks the others'). */
static int count_records(const char *path, const char *dataset, const char *first, hsize_t *records,
                         xio_error *err) {
  if (xio_nc3_signature(path) >= 0)
    return xio_fail(err,
                    "%s is a netCDF-3 file, which cannot be joined to %s, read as an HDF5 file "
                    "(groups, strings, axes of no netCDF dimension, or --concat naming "
                    "datasets): convert it first with `nccopy -k nc4 %s %s.nc4`",
                    path, first, path, path);
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return xio_fail_h5(err, "%s: cannot open as an HDF5 file", path);
  hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
  const hid_t d = H5Oexists_by_name(file, dataset, H5P_DEFAULT) > 0
                      ? H5Dopen2(file, dataset, H5P_DEFAULT)
                      : H5I_INVALID_HID;
  const int ndims = d >= 0 ? shape_of(d, dims, maxdims) : -1;
  if (d >= 0) (void)H5Dclose(d); /* only read */
  (void)H5Fclose(file);
  if (ndims < 1)
    return xio_fail(err, "%s and %s differ: %s joins dataset %s, which the other has not", first,
                    path, first, dataset);
  *records = dims[0];
  return 0;
}

typedef struct {
  hid_t first, view;
  const char *shown;
  const xio_path_array *joined;
  hsize_t records; /* of all the inputs */
  xio_skipped_attributes skipped;
} view_maker;

/* The creation properties of joined dataset `source`'s view: its own
 * storage, allocated only where written (a dataset the run rearranges
 * never is). */
static hid_t joined_creation(hid_t source) {
  const hid_t dcpl = xio_copy_creation(source);
  const int chunked = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED;
  if (dcpl >= 0 &&
      H5Pset_alloc_time(dcpl, chunked ? H5D_ALLOC_TIME_INCR : H5D_ALLOC_TIME_LATE) < 0) {
    (void)H5Pclose(dcpl);
    return H5I_INVALID_HID;
  }
  return dcpl;
}

/* xio_copy_rest's, where it meets joined dataset `index`: made in the
 * view with all the records, in the first input's place for it. */
static int make_joined(void *user, int index, xio_error *err) {
  view_maker *vm = user;
  const char *path = vm->joined->paths[index];
  const hid_t source = H5Dopen2(vm->first, path, H5P_DEFAULT);
  /* transient: a named datatype's view is a copy of it, equal but not linked */
  hid_t stored = source >= 0 ? H5Dget_type(source) : H5I_INVALID_HID;
  hid_t type = stored >= 0 ? H5Tcopy(stored) : H5I_INVALID_HID;
  hid_t dcpl = source >= 0 ? joined_creation(source) : H5I_INVALID_HID;
  hid_t space = H5I_INVALID_HID, copy = H5I_INVALID_HID;
  hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK], chunk[H5S_MAX_RANK] = {0};
  const int ndims = source >= 0 ? shape_of(source, dims, maxdims) : -1;
  int rc = type < 0 || dcpl < 0 || ndims < 1
               ? xio_fail_h5(err, "%s:%s: cannot read its type, shape or storage", vm->shown, path)
               : 0;
  if (rc == 0 && H5Pget_layout(dcpl) == H5D_CHUNKED) (void)H5Pget_chunk(dcpl, ndims, chunk);
  dims[0] = vm->records;
  if (rc == 0 && maxdims[0] != H5S_UNLIMITED) /* a chunk may be longer than the records */
    maxdims[0] = vm->records > chunk[0] ? vm->records : chunk[0];
  if (rc == 0 && (space = H5Screate_simple(ndims, dims, maxdims)) < 0)
    rc = xio_fail_h5(err, "%s:%s: cannot shape its view", vm->shown, path);
  if (rc == 0 &&
      (copy = H5Dcreate2(vm->view, path, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
    rc = xio_fail_h5(err, "%s:%s: cannot make its view", vm->shown, path);
  if (rc == 0) rc = xio_copy_object_attributes(source, copy, vm->shown, &vm->skipped, err);
  hid_t opened = source;
  xio_release(H5Dclose, &copy, &rc, err);
  xio_release(H5Sclose, &space, &rc, err);
  xio_release(H5Pclose, &dcpl, &rc, err);
  xio_release(H5Tclose, &type, &rc, err);
  xio_release(H5Tclose, &stored, &rc, err);
  xio_release(H5Dclose, &opened, &rc, err);
  return rc;
}

/* A new file for the view, its links and attributes in creation order
 * (netCDF-C's way, which the output keeps). */
static hid_t create_view(const char *view, const char *shown, xio_error *err) {
  const unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), file = H5I_INVALID_HID;
  if (fcpl >= 0 && H5Pset_link_creation_order(fcpl, order) >= 0 &&
      H5Pset_attr_creation_order(fcpl, order) >= 0)
    file = H5Fcreate(view, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  if (fcpl >= 0) (void)H5Pclose(fcpl);
  if (file < 0) xio_fail_h5(err, "%s: cannot make the inputs' view %s", shown, view);
  return file;
}

/* The first input's objects into the view (open as vm->view), its file
 * attributes with them; the data of variable-length and the dimension
 * scales' attachments after it is closed (xio_finish_rest). */
static int copy_first(view_maker *vm, const char *view, uint64_t piece_bytes, xio_error *err) {
  xio_copy_stats copied, finished;
  const xio_path_list joined = xio_path_array_list(vm->joined), none = {NULL, 0};
  hid_t from = H5Gopen2(vm->first, "/", H5P_DEFAULT), to = H5Gopen2(vm->view, "/", H5P_DEFAULT);
  int rc = from < 0 || to < 0 ? xio_fail_h5(err, "%s: cannot open its root group", vm->shown)
                              : xio_copy_object_attributes(from, to, vm->shown, &vm->skipped, err);
  xio_release(H5Gclose, &to, &rc, err);
  xio_release(H5Gclose, &from, &rc, err);
  if (rc == 0)
    rc = xio_copy_rest(MPI_COMM_SELF, vm->first, vm->view, vm->shown, &joined, make_joined, vm,
                       piece_bytes, NULL, &copied, err);
  xio_release(H5Fclose, &vm->view, &rc, err);
  if (rc == 0) rc = xio_finish_rest(vm->first, view, vm->shown, &none, piece_bytes, &finished, err);
  return rc;
}

int xio_join_h5_view_create(const char *const *inputs, int count, const char *concat,
                            const char *view, uint64_t piece_bytes, xio_path_array *joined,
                            int64_t *records, char *warning, size_t warning_size, xio_error *err) {
  view_maker vm = {.first = H5Fopen(inputs[0], H5F_ACC_RDONLY, H5P_DEFAULT),
                   .view = H5I_INVALID_HID,
                   .shown = inputs[0],
                   .joined = joined};
  warning[0] = '\0';
  hsize_t held = 0; /* by input i */
  int rc = vm.first < 0 ? xio_fail_h5(err, "%s: cannot open as an HDF5 file", inputs[0])
                        : list_joined(vm.first, inputs[0], concat, joined, &held, err);
  for (int i = 0; rc == 0 && i < count; i++) {
    if (i > 0) rc = count_records(inputs[i], joined->paths[0], inputs[0], &held, err);
    records[i] = (int64_t)held;
    vm.records += held;
  }
  if (rc == 0 && (vm.view = create_view(view, inputs[0], err)) < 0) rc = -1;
  if (rc == 0) rc = copy_first(&vm, view, piece_bytes, err);
  xio_release(H5Fclose, &vm.view, &rc, err); /* where copy_first did not come to it */
  xio_release(H5Fclose, &vm.first, &rc, err);
  if (rc == 0 && vm.skipped.count)
    snprintf(warning, warning_size,
             "%d attribute(s) of %s were not copied (%s): references cannot point from it into "
             "another file",
             vm.skipped.count, inputs[0], vm.skipped.names);
  return rc;
}
