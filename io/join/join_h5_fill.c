/* The HDF5 view of inputs joined, filled (join_h5_view.h): each input
 * checked against it, its records copied into it. */
#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_compat.h"
#include "h5_copy.h"
#include "h5_types.h"
#include "join_h5_view.h"
#include "record_order.h"

/* One input held against the view: the names in messages, and what the
 * check learns. */
typedef struct {
  hid_t view, input;
  const char *first, *path; /* the view's input and this one, as messages name them */
  const xio_path_list *joined;
  hsize_t records;
  int records_known, links;
  xio_error *err;
  int failed;
} input_check;

/* "4 x 3", "records x 3" (a joined one's), "a scalar". */
static void describe_shape(int ndims, const hsize_t *dims, int joined, char *text, size_t size) {
  int used = snprintf(text, size, "%s", ndims ? "" : "a scalar");
  for (int i = 0; i < ndims && used >= 0 && (size_t)used < size; i++) {
    const char *between = i ? " x " : "";
    used += i == 0 && joined ? snprintf(text + used, size - (size_t)used, "records")
                             : snprintf(text + used, size - (size_t)used, "%s%llu", between,
                                        (unsigned long long)dims[i]);
  }
}

/* Whether types a and b are one, but perhaps for their byte order (the
 * reads convert it: join_source.c). */
static int same_type(hid_t a, hid_t b) {
  if (H5Tequal(a, b) > 0) return 1;
  if (H5Tget_class(a) != H5Tget_class(b) || H5Tget_size(a) != H5Tget_size(b)) return 0;
  const hid_t na = H5Tget_native_type(a, H5T_DIR_DEFAULT),
              nb = H5Tget_native_type(b, H5T_DIR_DEFAULT);
  const int same = na >= 0 && nb >= 0 && H5Tequal(na, nb) > 0;
  if (na >= 0) (void)H5Tclose(na);
  if (nb >= 0) (void)H5Tclose(nb);
  return same;
}

/* Dataset `name` of the view and of the input: the same type and shape,
 * a joined one's records aside (counted, as many in each). */
static int same_dataset(input_check *c, hid_t ours, hid_t theirs, const char *name) {
  hsize_t a[H5S_MAX_RANK] = {0}, b[H5S_MAX_RANK] = {0};
  const hid_t sa = H5Dget_space(ours), sb = H5Dget_space(theirs);
  const hid_t ta = H5Dget_type(ours), tb = H5Dget_type(theirs);
  const int na = sa >= 0 ? H5Sget_simple_extent_dims(sa, a, NULL) : -1;
  const int nb = sb >= 0 ? H5Sget_simple_extent_dims(sb, b, NULL) : -1;
  const int typed = ta >= 0 && tb >= 0 && same_type(ta, tb);
  (void)H5Sclose(sa), (void)H5Sclose(sb), (void)H5Tclose(ta), (void)H5Tclose(tb);
  if (na < 0 || nb < 0) return xio_fail_h5(c->err, "%s:/%s: cannot read its shape", c->path, name);
  const int joined = xio_path_index(c->joined, name) >= 0;
  int same = typed && na == nb;
  for (int i = joined ? 1 : 0; same && i < na; i++) same = a[i] == b[i];
  if (!same) {
    char shape_a[256], shape_b[256];
    describe_shape(na, a, joined, shape_a, sizeof shape_a);
    describe_shape(nb, b, joined, shape_b, sizeof shape_b);
    return xio_fail(c->err, "%s and %s differ: dataset /%s is %s in the first, %s in the other%s",
                    c->first, c->path, name, shape_a, shape_b, typed ? "" : ", of another type");
  }
  if (!joined) return 0;
  if (c->records_known && b[0] != c->records)
    return xio_fail(c->err,
                    "%s: its datasets joined hold %llu and %llu records (/%s): they must hold as "
                    "many",
                    c->path, (unsigned long long)c->records, (unsigned long long)b[0], name);
  c->records = b[0];
  c->records_known = 1;
  return 0;
}

/* A link visit's over the view: the input has the same link, to an
 * object of the same kind; datasets as same_dataset says. */
static herr_t check_link(hid_t group, const char *name, const xio_link_info *info, void *data) {
  input_check *c = data;
  xio_link_info theirs;
  c->links++;
  if (H5Lexists(c->input, name, H5P_DEFAULT) <= 0 ||
      H5Lget_info(c->input, name, &theirs, H5P_DEFAULT) < 0 || theirs.type != info->type) {
    c->failed = 1;
    return xio_fail(c->err,
                    "%s and %s differ: /%s is in the first, not in the other (or not as "
                    "such a link)",
                    c->first, c->path, name);
  }
  if (info->type != H5L_TYPE_HARD) return 0;
  hid_t ours = H5Oopen(group, name, H5P_DEFAULT), other = H5Oopen(c->input, name, H5P_DEFAULT);
  const H5I_type_t kind = ours >= 0 ? H5Iget_type(ours) : H5I_BADID;
  int rc = ours < 0 || other < 0 ? xio_fail_h5(c->err, "%s:/%s: cannot open it", c->path, name) : 0;
  if (rc == 0 && kind != H5Iget_type(other))
    rc = xio_fail(c->err,
                  "%s and %s differ: /%s is a group, a dataset or a datatype in the "
                  "first, another kind in the other",
                  c->first, c->path, name);
  if (rc == 0 && kind == H5I_DATASET) rc = same_dataset(c, ours, other, name);
  if (ours >= 0) (void)H5Oclose(ours); /* only read */
  if (other >= 0) (void)H5Oclose(other);
  c->failed = rc != 0;
  return rc;
}

/* A link visit's over the input: counted; the first the view lacks named. */
static herr_t count_link(hid_t group, const char *name, const xio_link_info *info, void *data) {
  (void)group, (void)info;
  input_check *c = data;
  c->links--;
  if (H5Lexists(c->view, name, H5P_DEFAULT) > 0) return 0;
  c->failed = 1;
  return xio_fail(c->err, "%s and %s differ: /%s is in the other, not in the first", c->first,
                  c->path, name);
}

/* The input holds the view's links and objects, nothing more: its
 * records into c->records. */
static int same_structure(input_check *c) {
  if (XIO_LINK_VISIT(c->view, H5_INDEX_NAME, H5_ITER_INC, check_link, c) < 0 ||
      XIO_LINK_VISIT(c->input, H5_INDEX_NAME, H5_ITER_INC, count_link, c) < 0)
    return c->failed ? -1 : xio_fail_h5(c->err, "%s: cannot list its objects", c->path);
  if (c->links != 0) /* as many names, all the view's: another link of the same name */
    return xio_fail(c->err, "%s and %s differ: other links", c->first, c->path);
  return 0;
}

/* Records [from, from + n) of `source` into `target` from its record
 * `to`, as `memory` (variable-length data: its native type, released). */
static int copy_piece(hid_t source, hid_t target, hid_t memory, int ndims, const hsize_t *dims,
                      hsize_t from, hsize_t n, hsize_t to, void *buf) {
  hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
  for (int i = 0; i < ndims; i++) count[i] = dims[i];
  count[0] = n;
  const hid_t in = H5Dget_space(source), out = H5Dget_space(target);
  const hid_t piece = H5Screate_simple(ndims, count, NULL);
  int ok = in >= 0 && out >= 0 && piece >= 0;
  start[0] = from;
  ok = ok && H5Sselect_hyperslab(in, H5S_SELECT_SET, start, NULL, count, NULL) >= 0;
  start[0] = to;
  ok = ok && H5Sselect_hyperslab(out, H5S_SELECT_SET, start, NULL, count, NULL) >= 0;
  const int read = ok && H5Dread(source, memory, piece, in, H5P_DEFAULT, buf) >= 0;
  ok = read && H5Dwrite(target, memory, piece, out, H5P_DEFAULT, buf) >= 0;
  if (read && xio_type_is_variable_length(memory)) (void)XIO_RECLAIM(memory, piece, buf);
  if (piece >= 0) (void)H5Sclose(piece);
  if (out >= 0) (void)H5Sclose(out);
  if (in >= 0) (void)H5Sclose(in);
  return ok;
}

/* Joined dataset `name`'s records (c->records) from the input into the
 * view from its record `at`, in pieces of about piece_bytes. */
static int copy_records(const input_check *c, const char *name, hsize_t at, uint64_t piece_bytes) {
  const hid_t source = H5Dopen2(c->input, name, H5P_DEFAULT);
  const hid_t target = H5Dopen2(c->view, name, H5P_DEFAULT);
  const hid_t stored = target >= 0 ? H5Dget_type(target) : H5I_INVALID_HID;
  const hid_t memory = stored < 0 ? H5I_INVALID_HID
                       : xio_type_is_variable_length(stored)
                           ? H5Tget_native_type(stored, H5T_DIR_ASCEND)
                           : H5Tcopy(stored);
  hsize_t dims[H5S_MAX_RANK];
  const hid_t space = source >= 0 ? H5Dget_space(source) : H5I_INVALID_HID;
  const int ndims = space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
  uint64_t slab = memory >= 0 ? H5Tget_size(memory) : 0;
  for (int i = 1; i < ndims; i++) slab *= dims[i];
  const hsize_t step = slab == 0 ? 1 : slab >= piece_bytes ? 1 : piece_bytes / slab;
  void *buf = ndims > 0 && slab
                  ? malloc((size_t)(slab * (step < c->records ? step : c->records)) + 1)
                  : NULL;
  int ok = ndims > 0 && memory >= 0 && target >= 0 && (buf || !slab || !c->records);
  for (hsize_t done = 0; ok && slab && done < c->records; done += step) {
    const hsize_t n = c->records - done < step ? c->records - done : step;
    ok = copy_piece(source, target, memory, ndims, dims, done, n, at + done, buf);
  }
  free(buf);
  if (space >= 0) (void)H5Sclose(space);
  if (memory >= 0) (void)H5Tclose(memory);
  if (stored >= 0) (void)H5Tclose(stored);
  if (target >= 0) (void)H5Dclose(target);
  if (source >= 0) (void)H5Dclose(source);
  return ok ? 0
            : xio_fail_h5(c->err, "%s:%s: cannot copy its records into the inputs' view", c->path,
                          name);
}

/* 1 with the first and last records of the record coordinate, the first
 * joined 1-D dimension scale of numbers, where there is one. */
static int record_span(const input_check *c, double *first, double *last) {
  for (int j = 0; c->records && j < c->joined->count; j++) {
    const hid_t d = H5Dopen2(c->input, c->joined->paths[j], H5P_DEFAULT);
    const hid_t space = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID,
                type = d >= 0 ? H5Dget_type(d) : -1;
    const H5T_class_t kind = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
    int found = space >= 0 && H5Sget_simple_extent_ndims(space) == 1 && H5DSis_scale(d) > 0 &&
                (kind == H5T_INTEGER || kind == H5T_FLOAT);
    const hsize_t ends[2] = {0, c->records - 1}, two = 2;
    double values[2] = {0, 0};
    const hid_t memory = found ? H5Screate_simple(1, &two, NULL) : H5I_INVALID_HID;
    found = found && memory >= 0 && H5Sselect_elements(space, H5S_SELECT_SET, 2, ends) >= 0 &&
            H5Dread(d, H5T_NATIVE_DOUBLE, memory, space, H5P_DEFAULT, values) >= 0;
    if (memory >= 0) (void)H5Sclose(memory);
    if (type >= 0) (void)H5Tclose(type);
    if (space >= 0) (void)H5Sclose(space);
    if (d >= 0) (void)H5Dclose(d);
    *first = values[0], *last = values[1];
    if (found) return 1;
  }
  return 0;
}

/* Input c->path (the i-th) checked against the view (the first too: it
 * may have changed since the view was made), its fixed values compared
 * (the first's are the view's), its records of the datasets joined but
 * those in `skip` copied in from record `at`. */
static int fill_from(input_check *c, int i, const xio_path_list *skip, hsize_t at,
                     uint64_t piece_bytes) {
  char differs[1024] = "";
  if (same_structure(c) ||
      (i > 0 && xio_compare_values(c->input, c->view, c->path, c->joined, piece_bytes, differs,
                                   sizeof differs, c->err)))
    return -1;
  if (differs[0])
    return xio_fail(c->err,
                    "%s and %s differ: the values of %s, which is not joined (it does not vary "
                    "along the records), are not the same",
                    c->first, c->path, differs);
  for (int j = 0; j < c->joined->count; j++)
    if (xio_path_index(skip, c->joined->paths[j]) < 0 &&
        copy_records(c, c->joined->paths[j], at, piece_bytes))
      return -1;
  return 0;
}

int xio_join_h5_view_fill(const char *const *inputs, int count, const char *view,
                          const xio_path_list *joined, const xio_path_list *skip,
                          uint64_t piece_bytes, const int64_t *records, char *warning,
                          size_t warning_size, xio_error *err) {
  warning[0] = '\0';
  hid_t file = H5Fopen(view, H5F_ACC_RDWR, H5P_DEFAULT);
  hsize_t at = 0;
  xio_record_order order = {0};
  int rc = file < 0 || joined->count == 0
               ? xio_fail_h5(err, "%s: cannot open the inputs' view %s", inputs[0], view)
               : 0;
  for (int i = 0; rc == 0 && i < count; i++) {
    input_check c = {.view = file,
                     .input = H5Fopen(inputs[i], H5F_ACC_RDONLY, H5P_DEFAULT),
                     .first = inputs[0],
                     .path = inputs[i],
                     .joined = joined,
                     .err = err};
    rc = c.input < 0 ? xio_fail_h5(err, "%s: cannot open as an HDF5 file", inputs[i])
                     : fill_from(&c, i, skip, at, piece_bytes);
    if (rc == 0 && c.records != (hsize_t)records[i])
      rc = xio_fail(err, "%s changed while the inputs were read: %llu records, %lld before",
                    inputs[i], (unsigned long long)c.records, (long long)records[i]);
    double head = 0, tail = 0; /* set first: a call's arguments come in no set order */
    const int spanned = rc == 0 && record_span(&c, &head, &tail);
    if (rc == 0)
      xio_record_order_next(&order, inputs[i], spanned, head, tail, warning, warning_size);
    at += c.records;
    xio_release(H5Fclose, &c.input, &rc, err);
  }
  xio_release(H5Fclose, &file, &rc, err);
  return rc;
}
