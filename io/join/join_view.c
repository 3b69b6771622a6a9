#include "join_view.h"

#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "join_h5_input.h"
#include "nc_copy.h"
#include "netcdf3.h"
#include "record_order.h"

/* Opens an input read-only, a netCDF-3 one's header checked first
 * (netCDF-C trusts it: netcdf3.h). */
static int open_input(const char *path, int *nc, xio_error *err) {
  if (xio_nc3_signature(path) >= 0 && xio_nc3_header_check(path, err)) return -1;
  return xio_nc_failed(nc_open(path, NC_NOWRITE, nc), "cannot open", path, err);
}

/* The dimension to join along (*join): the record dimension, or the
 * fixed one named `concat` (NULL: none named), the first of every
 * variable that has it. */
static int join_dimension(int nc, const char *path, const char *concat, int *join, xio_error *err) {
  int unlimited = -1, nvars = 0;
  char name[NC_MAX_NAME + 1] = "";
  if (xio_nc_failed(nc_inq_unlimdim(nc, &unlimited), "reading its header", path, err) ||
      xio_nc_failed(nc_inq_nvars(nc, &nvars), "reading its header", path, err))
    return -1;
  if (unlimited >= 0 && nc_inq_dimname(nc, unlimited, name) != NC_NOERR) name[0] = '\0';
  *join = unlimited;
  if (!concat)
    return unlimited >= 0 ? 0
                          : xio_fail(err,
                                     "%s has no record (unlimited) dimension to join the inputs "
                                     "along: name one with --concat NAME",
                                     path);
  if (nc_inq_dimid(nc, concat, join) != NC_NOERR)
    return xio_fail(err, "--concat %s: %s has no dimension %s", concat, path, concat);
  if (unlimited >= 0 && unlimited != *join)
    return xio_fail(err,
                    "--concat %s: %s has a record dimension, %s, which the inputs are joined "
                    "along: give --concat %s, or none",
                    concat, path, name, name);
  for (int v = 0; v < nvars; v++) {
    int nd = 0, dimids[NC_MAX_VAR_DIMS];
    if (xio_nc_failed(nc_inq_var(nc, v, name, NULL, &nd, dimids, NULL), "a variable", path, err))
      return -1;
    for (int d = 1; d < nd; d++)
      if (dimids[d] == *join)
        return xio_fail(err,
                        "variable %s of %s has %s, the dimension the inputs are joined along, as "
                        "its axis %d: they are joined along the first axis of every variable",
                        name, path, concat, d + 1);
  }
  return 0;
}

/* Whether every dimension of nc is netCDF's: netCDF-C names the axes of
 * an HDF5 dataset with no dimension scale "phony_dim_N", which a view
 * would make datasets of the output. */
static int netcdf_dimensions(int nc, const char *path, xio_error *err) {
  int ndims = 0;
  if (xio_nc_failed(nc_inq_ndims(nc, &ndims), "reading its header", path, err)) return -1;
  for (int d = 0; d < ndims; d++) {
    char name[NC_MAX_NAME + 1] = "";
    if (nc_inq_dimname(nc, d, name) == NC_NOERR && strncmp(name, "phony_dim_", 10) == 0)
      return xio_fail(err,
                      "%s has datasets with no netCDF dimensions (no dimension scales): join "
                      "it as an HDF5 file, naming the datasets to join (--concat /DATASET,...)",
                      path);
  }
  return 0;
}

/* What the join needs of the first input: netCDF dimensions, one to join
 * along (join_dimension), one group, atomic types. */
static int joinable(int nc, const char *path, const char *concat, int *join, xio_error *err) {
  int groups = 0, nvars = 0;
  if (netcdf_dimensions(nc, path, err) || join_dimension(nc, path, concat, join, err) ||
      xio_nc_failed(nc_inq_grps(nc, &groups, NULL), "reading its groups", path, err) ||
      xio_nc_failed(nc_inq_nvars(nc, &nvars), "reading its header", path, err))
    return -1;
  if (groups > 0)
    return xio_fail(err, "%s has groups: inputs of one group are joined, not yet others", path);
  for (int v = 0; v < nvars; v++) {
    nc_type type = NC_NAT;
    char name[NC_MAX_NAME + 1] = "";
    (void)nc_inq_varname(nc, v, name);
    if (xio_nc_failed(nc_inq_vartype(nc, v, &type), name, path, err)) return -1;
    if (type < NC_BYTE || type > NC_UINT64) /* NC_STRING and user-defined types follow */
      return xio_fail(err,
                      "%s: variable %s has a type the join does not copy (strings and "
                      "user-defined types)",
                      path, name);
  }
  return 0;
}

/* 0 where input `b` has the first input's (`a`'s) dimensions (the
 * length of `join`, the one joined along, aside) and variables; else -1
 * with the first difference, naming both. */
static int same_structure(int a, int b, int join, const char *first, const char *path,
                          xio_error *err) {
  int na = 0, nb = 0, va = 0, vb = 0, ua = -1, ub = -1;
  if (xio_nc_failed(nc_inq(a, &na, &va, NULL, &ua), "reading its header", first, err) ||
      xio_nc_failed(nc_inq(b, &nb, &vb, NULL, &ub), "reading its header", path, err))
    return -1;
  if (na != nb || va != vb || ua != ub)
    return xio_fail(err,
                    "%s and %s differ: %d dimensions and %d variables in the first, %d and %d "
                    "in the other (or another record dimension)",
                    first, path, na, va, nb, vb);
  for (int d = 0; d < na; d++) {
    char name_a[NC_MAX_NAME + 1], name_b[NC_MAX_NAME + 1];
    size_t len_a = 0, len_b = 0;
    if (nc_inq_dim(a, d, name_a, &len_a) != NC_NOERR ||
        nc_inq_dim(b, d, name_b, &len_b) != NC_NOERR)
      return xio_fail(err, "%s or %s: cannot read dimension %d", first, path, d);
    if (strcmp(name_a, name_b) != 0 || (d != join && len_a != len_b))
      return xio_fail(err,
                      "%s and %s differ: dimension %s (%zu) in the first, %s (%zu) in the other",
                      first, path, name_a, len_a, name_b, len_b);
  }
  for (int v = 0; v < va; v++) {
    char name_a[NC_MAX_NAME + 1], name_b[NC_MAX_NAME + 1];
    nc_type ta, tb;
    int da = 0, db = 0, ids_a[NC_MAX_VAR_DIMS], ids_b[NC_MAX_VAR_DIMS];
    if (nc_inq_var(a, v, name_a, &ta, &da, ids_a, NULL) != NC_NOERR ||
        nc_inq_var(b, v, name_b, &tb, &db, ids_b, NULL) != NC_NOERR)
      return xio_fail(err, "%s or %s: cannot read variable %d", first, path, v);
    if (strcmp(name_a, name_b) != 0 || ta != tb || da != db ||
        memcmp(ids_a, ids_b, sizeof *ids_a * (size_t)da) != 0)
      return xio_fail(err,
                      "%s and %s differ: variable %s in the first, %s in the other (names, "
                      "types and dimensions must be the same)",
                      first, path, name_a, name_b);
  }
  return 0;
}

/* 1 with the first and last values of nc's record coordinate (the 1-D
 * variable named as the record dimension); 0 where it has none, or no
 * records. */
static int record_span(int nc, int unlimited, size_t records, double *first, double *last) {
  char name[NC_MAX_NAME + 1];
  int v = -1, nd = 0;
  if (records == 0 || nc_inq_dimname(nc, unlimited, name) != NC_NOERR ||
      nc_inq_varid(nc, name, &v) != NC_NOERR || nc_inq_varndims(nc, v, &nd) != NC_NOERR || nd != 1)
    return 0;
  size_t at = 0;
  if (nc_get_var1_double(nc, v, &at, first) != NC_NOERR) return 0;
  at = records - 1;
  return nc_get_var1_double(nc, v, &at, last) == NC_NOERR;
}

/* The datasets of the variables of nc whose first dimension is `join`,
 * into *joined: a variable of a dimension's name that is not its
 * coordinate is netCDF-4's "_nc4_non_coord_NAME". */
static int list_joined(int nc, int join, const char *path, xio_path_array *joined, xio_error *err) {
  int nvars = 0;
  if (xio_nc_failed(nc_inq_nvars(nc, &nvars), "reading its header", path, err)) return -1;
  for (int v = 0; v < nvars; v++) {
    char name[NC_MAX_NAME + 1], dataset[NC_MAX_NAME + 32];
    int nd = 0, dimids[NC_MAX_VAR_DIMS], dim = -1;
    if (xio_nc_failed(nc_inq_var(nc, v, name, NULL, &nd, dimids, NULL), "a variable", path, err))
      return -1;
    const int renamed = nc_inq_dimid(nc, name, &dim) == NC_NOERR && (nd != 1 || dimids[0] != dim);
    snprintf(dataset, sizeof dataset, "%s%s", renamed ? "_nc4_non_coord_" : "", name);
    if (nd > 0 && dimids[0] == join && xio_path_array_add(joined, dataset))
      return xio_fail(err, "out of memory listing the variables of %s", path);
  }
  return 0;
}

int xio_join_view_create(const char *const *inputs, const char *const *files, const char *concat,
                         const char *view, xio_path_array *joined, xio_error *err) {
  int first = -1, out = -1, join = -1, rc = open_input(files ? files[0] : inputs[0], &first, err);
  const int first_open = rc == 0;
  if (rc == 0) rc = joinable(first, inputs[0], concat, &join, err);
  if (rc == 0) rc = list_joined(first, join, inputs[0], joined, err);
  if (rc == 0)
    rc = xio_nc_failed(nc_create(view, NC_NETCDF4 | NC_CLOBBER, &out), "cannot make the view", view,
                       err);
  if (rc == 0) rc = xio_nc_define_all(first, out, join, inputs[0], err);
  if (out >= 0 && nc_close(out) != NC_NOERR && rc == 0)
    rc = xio_fail(err, "%s: cannot write the inputs' view %s", inputs[0], view);
  if (first_open) (void)nc_close(first); /* only read */
  return rc;
}

/* Fixed variable v of input `in` against the view's copy of the first
 * input's, both read whole (coordinates, masks, orography: small beside
 * the records): a difference fails, naming both. */
static int same_values(int in, int view, int v, const char *path, const char *first,
                       xio_error *err) {
  char name[NC_MAX_NAME + 1];
  nc_type type;
  int nd = 0, dimids[NC_MAX_VAR_DIMS];
  size_t size = 0, values = 1;
  if (xio_nc_failed(nc_inq_var(in, v, name, &type, &nd, dimids, NULL), "a variable", path, err) ||
      xio_nc_failed(nc_inq_type(in, type, NULL, &size), name, path, err))
    return -1;
  for (int d = 0; d < nd; d++) {
    size_t length = 0;
    if (xio_nc_failed(nc_inq_dimlen(in, dimids[d], &length), name, path, err)) return -1;
    values *= length;
  }
  unsigned char *a = malloc(values * size + 1), *b = malloc(values * size + 1);
  int rc = a && b ? 0 : xio_fail(err, "out of memory comparing %s of %s", name, path);
  if (rc == 0 && values > 0)
    rc = xio_nc_failed(nc_get_var(in, v, a), name, path, err) ||
                 xio_nc_failed(nc_get_var(view, v, b), name, first, err)
             ? -1
             : 0;
  if (rc == 0 && values > 0 && memcmp(a, b, values * size) != 0)
    rc = xio_fail(err,
                  "%s and %s differ: the values of %s, which does not vary along the records, "
                  "are not the same",
                  first, path, name);
  free(a);
  free(b);
  return rc;
}

/* Input i's variables into the view: its records (along `join`) at `at`;
 * fixed ones copied from the first input and compared in the others. */
static int fill_from(int in, int view, int join, int i, const char *const *inputs, size_t at,
                     const xio_path_list *skip, uint64_t piece_bytes, xio_error *err) {
  int nvars = 0, rc = 0;
  if (xio_nc_failed(nc_inq_nvars(in, &nvars), "its header", inputs[i], err)) return -1;
  for (int v = 0; rc == 0 && v < nvars; v++) {
    char name[NC_MAX_NAME + 1];
    int nd = 0, dimids[NC_MAX_VAR_DIMS];
    rc = xio_nc_failed(nc_inq_var(in, v, name, NULL, &nd, dimids, NULL), "a variable", inputs[i],
                       err);
    const int record = nd > 0 && dimids[0] == join;
    if (rc != 0 || (record && xio_path_index(skip, name) >= 0)) continue;
    if (record)
      rc = xio_nc_copy_values(in, view, v, at, piece_bytes, inputs[i], err);
    else if (i == 0)
      rc = xio_nc_copy_values(in, view, v, 0, piece_bytes, inputs[i], err);
    else
      rc = same_values(in, view, v, inputs[i], inputs[0], err);
  }
  return rc;
}

/* Input i read with netCDF-C: checked against the first (open as
 * `first`; i 0: it is the first), its variables into the view from
 * record `at` of `join_name`, the dimension joined along. */
static int fill_with_netcdf(const char *const *inputs, const char *file, int i,
                            const char *join_name, int out, int *first, size_t at,
                            const xio_path_list *skip, uint64_t piece_bytes, size_t *records,
                            xio_join_h5_found *span, xio_error *err) {
  int in = -1, join = -1;
  int rc = open_input(file, &in, err);
  const int opened = rc == 0;
  if (rc == 0 && i == 0) *first = in; /* checked joinable as the view was made */
  if (rc == 0 && nc_inq_dimid(*first, join_name, &join) != NC_NOERR)
    rc = xio_fail(err, "%s: no dimension %s", inputs[0], join_name);
  if (rc == 0 && i > 0) rc = same_structure(*first, in, join, inputs[0], inputs[i], err);
  if (rc == 0) rc = xio_nc_failed(nc_inq_dimlen(in, join, records), "its records", inputs[i], err);
  if (rc == 0) span->spanned = record_span(in, join, *records, &span->first, &span->last);
  if (rc == 0) rc = fill_from(in, out, join, i, inputs, at, skip, piece_bytes, err);
  if (opened && i > 0) (void)nc_close(in); /* only read */
  return rc;
}

int xio_join_view_fill(const char *const *inputs, const char *const *files, int count,
                       const char *view, const xio_path_list *skip, uint64_t piece_bytes,
                       int64_t *records, char *warning, size_t warning_size, xio_error *err) {
  int out = -1, first = -1;
  xio_record_order order = {0};
  warning[0] = '\0';
  int rc = xio_nc_failed(nc_open(view, NC_WRITE, &out), "cannot open the inputs' view", view, err);
  int join = -1; /* the view's record dimension: the one joined along */
  char join_name[NC_MAX_NAME + 1] = "";
  if (rc == 0)
    rc = xio_nc_failed(nc_inq_unlimdim(out, &join), "its header", view, err) ||
                 xio_nc_failed(nc_inq_dimname(out, join, join_name), "its header", view, err)
             ? -1
             : 0;
  size_t at = 0;
  for (int i = 0; rc == 0 && i < count; i++) {
    xio_join_h5_found found = {0};
    const char *file = files ? files[i] : inputs[i];
    /* netCDF-4 inputs after the first through HDF5 where they are plain */
    if (i == 0 || xio_nc3_signature(file) >= 0 ||
        !xio_join_h5_fill(file, out, at, skip, piece_bytes, &found))
      rc = fill_with_netcdf(inputs, file, i, join_name, out, &first, at, skip, piece_bytes,
                            &found.records, &found, err);
    if (rc == 0)
      xio_record_order_next(&order, inputs[i], found.spanned, found.first, found.last, warning,
                            warning_size);
    records[i] = (int64_t)found.records;
    at += found.records;
  }
  if (first >= 0) (void)nc_close(first);
  if (out >= 0 && nc_close(out) != NC_NOERR && rc == 0)
    rc = xio_fail(err, "%s: cannot write the inputs' view %s", inputs[0], view);
  if (rc == 0 && at > 0) rc = xio_nc_extend_records(view, at, inputs[0], err);
  return rc;
}
