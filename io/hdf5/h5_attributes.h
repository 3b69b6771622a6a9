/* Attributes copied from the input to the output: a transposed dataset's
 * (the per-axis ones permuted), a dimension scale's, a file's (with its
 * history), any other object's. */
#ifndef XIO_ATTRIBUTES_H
#define XIO_ATTRIBUTES_H

#include "h5_matrix.h"

/* Attributes left out of a copy: their names, the first few. */
typedef struct {
  int count;
  char names[512];
} xio_skipped_attributes;

/* Local.  obj's attribute `name` as text (netCDF's are fixed-size
 * strings, h5py's variable-length ones), of any length; NULL where it has
 * none, it is not one string, or out of memory.  Free it. */
char *xio_read_text_attribute(hid_t obj, const char *name);

/* Local.  The order obj's attributes were made in where it kept it
 * (netCDF-C does), else by name. */
H5_index_t xio_attribute_order(hid_t obj);

/* Copies every attribute of from's dataset onto to's, its axes permuted
 * (axis i of `to` is from's axis source[i]), with its exact type; those
 * naming the axes in order (DIMENSION_LABELS, netCDF-4's
 * _Netcdf4Coordinates) are permuted as the axes are.  Dimension scales'
 * links are left to xio_copy_dimension_scales.  Left out, and named in
 * *skipped: other attributes holding references (they cannot point from
 * one file into another). */
int xio_copy_attributes(const xio_matrix *from, const xio_matrix *to, const int *source,
                        xio_skipped_attributes *skipped, xio_error *err);

/* The same for the attributes of from's file (its root group) onto to's
 * file, nothing permuted; with `history` (NULL: copied as it is), the
 * output's history attribute is that line, then the input's history on
 * the lines after it (NCO's way). */
int xio_copy_file_attributes(const xio_matrix *from, const xio_matrix *to, const char *history,
                             xio_skipped_attributes *skipped, xio_error *err);

/* The same for a dimension scale's copy: nothing swapped. */
int xio_copy_scale_attributes(const xio_matrix *from, const xio_matrix *to,
                              xio_skipped_attributes *skipped, xio_error *err);

/* Local.  The same for any object (a group, a dataset that is copied as
 * it is, a named datatype): every attribute but the links to dimension
 * scales (made anew by attaching); references are left out, named in
 * *skipped (which this adds to).  `shown` names `from` in messages. */
int xio_copy_object_attributes(hid_t from, hid_t to, const char *shown,
                               xio_skipped_attributes *skipped, xio_error *err);

/* Local.  Whether `to` holds from's attributes as the copy functions
 * above write them: the same names, types, shapes and values, with
 * `source` (of ndims; NULL: none) as xio_copy_attributes takes it, and
 * with `root` the files' root groups, `to`'s history a line of its own
 * then from's.  Those left out or made anew are not compared.  *differs
 * is "" when they match, else the name of the first that does not (or
 * that `to` has beyond them).  -1 with a message when they cannot be
 * listed. */
int xio_compare_attributes(hid_t from, hid_t to, const int *source, int ndims, int root,
                           char *differs, size_t size, xio_error *err);

#endif
