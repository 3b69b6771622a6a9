#define _POSIX_C_SOURCE 200809L /* strdup */
#include "h5_attributes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_compat.h"
#include "h5_types.h"

typedef struct {
  hid_t to;
  const char *history; /* the file's: its own history is written anew */
  /* The dataset itself, its axis i the input's source[i] (of ndims):
   * per-axis attributes are permuted; NULL for a scale. */
  const int *source;
  int ndims;
  xio_skipped_attributes *skipped;
  int failed;
  xio_error *err;
} attribute_copy;

/* Attributes naming the axes in order, swapped on the transposed dataset:
 * the labels (h5py's dims[i].label, H5DSset_label) and netCDF-4's ids of
 * the variable's dimensions (kept true by copying the dimension scales,
 * which carry the ids, along: h5_scales.c). */
static int names_axes_in_order(const char *name) {
  return strcmp(name, "DIMENSION_LABELS") == 0 || strcmp(name, "_Netcdf4Coordinates") == 0;
}

/* The links between a dataset and its dimension scales, which
 * attaching the copied scales makes anew. */
static int is_dimension_scale_link(const char *name) {
  return strcmp(name, "DIMENSION_LIST") == 0 || strcmp(name, "REFERENCE_LIST") == 0;
}

static void skip(xio_skipped_attributes *skipped, const char *name) {
  const size_t used = strlen(skipped->names);
  if (skipped->count < 6)
    snprintf(skipped->names + used, sizeof skipped->names - used, "%s%s", used ? ", " : "", name);
  else if (skipped->count == 6)
    snprintf(skipped->names + used, sizeof skipped->names - used, ", ...");
  skipped->count++;
}

static herr_t copy_attribute(hid_t from, const char *name, const H5A_info_t *info, void *data) {
  (void)info;
  attribute_copy *copy = data;
  hid_t attr = H5Aopen(from, name, H5P_DEFAULT);
  hid_t type = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID; /* a memory type, vlen too */
  hid_t space = attr >= 0 ? H5Aget_space(attr) : H5I_INVALID_HID;
  hid_t out = H5I_INVALID_HID;
  void *buf = NULL;
  int rc = 0;
  const hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  const H5S_class_t kind = space >= 0 ? H5Sget_simple_extent_type(space) : H5S_NO_CLASS;
  const size_t size = type >= 0 ? H5Tget_size(type) : 0;
  if (type < 0 || space < 0 || points < 0 || kind == H5S_NO_CLASS || size == 0) {
    rc = xio_fail_h5(copy->err, "cannot read attribute %s", name);
  } else if (is_dimension_scale_link(name) || (copy->history && strcmp(name, "history") == 0) ||
             H5Aexists(copy->to, name) > 0) {
    /* made anew, or already: by the run this one resumes, stopped before publishing */
  } else if (copy->source && strcmp(name, "_Netcdf4Dimid") == 0) {
    /* netCDF-C's hidden numbering of the input's dimensions, which a
     * rearranged dataset no longer follows: left out, as ncdump never shows it */
  } else if (xio_type_has_reference(type)) {
    skip(copy->skipped, name); /* references cannot point into another file */
  } else {
    const int has_data = points > 0 && kind != H5S_NULL;
    buf = calloc(has_data ? (size_t)points : 1, size);
    if (!buf || (has_data && H5Aread(attr, type, buf) < 0)) {
      rc = xio_fail_h5(copy->err, "cannot read attribute %s", name);
    } else {
      unsigned char *in_order = NULL;
      if (copy->source && names_axes_in_order(name) && points == copy->ndims &&
          kind == H5S_SIMPLE && (in_order = malloc((size_t)points * size)) != NULL) {
        memcpy(in_order, buf, (size_t)points * size);
        for (int i = 0; i < copy->ndims; i++)
          memcpy((unsigned char *)buf + (size_t)i * size, in_order + (size_t)copy->source[i] * size,
                 size);
      }
      free(in_order);
      out = H5Acreate2(copy->to, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
      if (out < 0 || (has_data && H5Awrite(out, type, buf) < 0))
        rc = xio_fail_h5(copy->err, "cannot copy attribute %s", name);
      /* frees variable-length parts */
      if (has_data && XIO_RECLAIM(type, space, buf) < 0 && rc == 0)
        rc = xio_fail_h5(copy->err, "cannot release attribute %s", name);
    }
  }
  free(buf);
  xio_release(H5Aclose, &out, &rc, copy->err);
  xio_release(H5Sclose, &space, &rc, copy->err);
  xio_release(H5Tclose, &type, &rc, copy->err);
  xio_release(H5Aclose, &attr, &rc, copy->err);
  if (rc) copy->failed = 1;
  return rc ? -1 : 0;
}

/* Every attribute of `from` through copy_attribute, in the order they
 * were made where the object kept it (netCDF-C does), else by name.
 * Local: 0, or -1 with the message. */
H5_index_t xio_attribute_order(hid_t obj) {
  unsigned order = 0;
  const H5I_type_t kind = H5Iget_type(obj);
  hid_t plist = kind == H5I_DATASET    ? H5Dget_create_plist(obj)
                : kind == H5I_GROUP    ? H5Gget_create_plist(obj)
                : kind == H5I_DATATYPE ? H5Tget_create_plist(obj)
                                       : H5I_INVALID_HID;
  if (plist < 0 || H5Pget_attr_creation_order(plist, &order) < 0) order = 0;
  if (plist >= 0) (void)H5Pclose(plist); /* only read */
  return order & H5P_CRT_ORDER_INDEXED ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
}

static int iterate_attributes(hid_t from, attribute_copy *copy, const char *shown) {
  const H5_index_t by = xio_attribute_order(from);
  hsize_t index = 0;
  if (H5Aiterate2(from, by, H5_ITER_INC, &index, copy_attribute, copy) >= 0) return 0;
  if (!copy->failed) xio_fail_h5(copy->err, "cannot list the attributes of %s", shown);
  return -1;
}

static int copy_attributes(const xio_matrix *from, const xio_matrix *to, const int *source,
                           xio_skipped_attributes *skipped, xio_error *err) {
  memset(skipped, 0, sizeof *skipped);
  attribute_copy copy = {to->dset, NULL, source, from->shape.ndims, skipped, 0, err};
  const int rc = iterate_attributes(from->dset, &copy, from->dataset);
  return xio_agree(from->comm, rc, err);
}

int xio_copy_object_attributes(hid_t from, hid_t to, const char *shown,
                               xio_skipped_attributes *skipped, xio_error *err) {
  attribute_copy copy = {to, NULL, NULL, 0, skipped, 0, err};
  return iterate_attributes(from, &copy, shown);
}

char *xio_read_text_attribute(hid_t obj, const char *name) {
  char *text = NULL;
  hid_t attr = H5Aexists(obj, name) > 0 ? H5Aopen(obj, name, H5P_DEFAULT) : H5I_INVALID_HID;
  hid_t type = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID;
  hid_t space = attr >= 0 ? H5Aget_space(attr) : H5I_INVALID_HID;
  if (type >= 0 && space >= 0 && H5Tget_class(type) == H5T_STRING &&
      H5Sget_simple_extent_npoints(space) == 1) {
    if (H5Tis_variable_str(type) > 0) {
      char *value = NULL;
      if (H5Aread(attr, type, &value) >= 0 && value) text = strdup(value);
      if (value) (void)XIO_RECLAIM(type, space, &value);
    } else {
      const size_t length = H5Tget_size(type);
      text = calloc(length + 1, 1);
      if (text && H5Aread(attr, type, text) < 0) text[0] = '\0';
    }
  }
  if (space >= 0) (void)H5Sclose(space); /* only read: nothing to report */
  if (type >= 0) (void)H5Tclose(type);
  if (attr >= 0) (void)H5Aclose(attr);
  return text;
}

/* The input's history attribute as text, of any length; "" where it has
 * none.  NULL when out of memory. */
static char *read_history(hid_t file) {
  char *text = xio_read_text_attribute(file, "history");
  return text ? text : strdup("");
}

int xio_copy_file_attributes(const xio_matrix *from, const xio_matrix *to, const char *history,
                             xio_skipped_attributes *skipped, xio_error *err) {
  memset(skipped, 0, sizeof *skipped);
  attribute_copy copy = {to->file, history, NULL, 0, skipped, 0, err};
  hid_t root = H5Gopen2(from->file, "/", H5P_DEFAULT);
  int rc = root < 0 ? xio_fail_h5(err, "cannot open the root group of %s's file", from->dataset)
                    : iterate_attributes(root, &copy, "the input file");
  /* history: this run's line first, then the input's, as NCO writes it */
  char *text = NULL, *old = NULL;
  if (rc == 0 && history && H5Aexists(to->file, "history") <= 0) {
    old = read_history(from->file);
    const size_t length = strlen(history) + 1 + (old ? strlen(old) : 0);
    text = old ? malloc(length + 1) : NULL;
    if (!text)
      rc = xio_fail(err, "cannot allocate the history attribute");
    else
      snprintf(text, length + 1, "%s%s%s", history, old[0] ? "\n" : "", old);
  }
  if (rc == 0 && text) {
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR), attr = H5I_INVALID_HID;
    if (type < 0 || space < 0 || H5Tset_size(type, strlen(text) ? strlen(text) : 1) < 0 ||
        (attr = H5Acreate2(to->file, "history", type, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Awrite(attr, type, text) < 0)
      rc = xio_fail_h5(err, "cannot write the history attribute");
    xio_release(H5Aclose, &attr, &rc, err);
    xio_release(H5Sclose, &space, &rc, err);
    xio_release(H5Tclose, &type, &rc, err);
  }
  free(text);
  free(old);
  xio_release(H5Gclose, &root, &rc, err);
  return xio_agree(from->comm, rc, err);
}

int xio_copy_attributes(const xio_matrix *from, const xio_matrix *to, const int *source,
                        xio_skipped_attributes *skipped, xio_error *err) {
  return copy_attributes(from, to, source, skipped, err);
}

int xio_copy_scale_attributes(const xio_matrix *from, const xio_matrix *to,
                              xio_skipped_attributes *skipped, xio_error *err) {
  return copy_attributes(from, to, NULL, skipped, err);
}

/* ---- comparing ---- */

typedef struct {
  hid_t other;       /* the copy, or walking the copy, the source */
  const int *source; /* as attribute_copy's */
  int ndims;
  int root;     /* the files' root groups: history as xio_copy_file_attributes writes it */
  int reversed; /* walking the copy's attributes: does the source have each? */
  char *differs;
  size_t size;
} attribute_compare;

/* Whether the copy functions leave `name` (of type `type`) out of a copy,
 * or make it anew by attaching dimension scales. */
static int not_copied(const attribute_compare *compare, const char *name, hid_t type) {
  return is_dimension_scale_link(name) || xio_type_has_reference(type) ||
         (compare->source && strcmp(name, "_Netcdf4Dimid") == 0);
}

/* The whole of attribute `name` of `object`, read: its type, shape and
 * values (buf, malloc'd; variable-length parts to reclaim). */
typedef struct {
  hid_t attr, type, space;
  hssize_t points;
  void *buf;
} attribute_read;

static int read_attribute(hid_t object, const char *name, attribute_read *a) {
  a->buf = NULL;
  a->attr = H5Aopen(object, name, H5P_DEFAULT);
  a->type = a->attr >= 0 ? H5Aget_type(a->attr) : H5I_INVALID_HID;
  a->space = a->attr >= 0 ? H5Aget_space(a->attr) : H5I_INVALID_HID;
  a->points = a->space >= 0 ? H5Sget_simple_extent_npoints(a->space) : -1;
  const size_t size = a->type >= 0 ? H5Tget_size(a->type) : 0;
  if (a->points < 0 || size == 0) return -1;
  a->buf = calloc(a->points ? (size_t)a->points : 1, size);
  return a->buf && (a->points == 0 || H5Aread(a->attr, a->type, a->buf) >= 0) ? 0 : -1;
}

static void release_attribute(attribute_read *a) {
  if (a->buf && a->points > 0 && a->type >= 0 && a->space >= 0)
    (void)XIO_RECLAIM(a->type, a->space, a->buf); /* only read */
  free(a->buf);
  if (a->space >= 0) (void)H5Sclose(a->space);
  if (a->type >= 0) (void)H5Tclose(a->type);
  if (a->attr >= 0) (void)H5Aclose(a->attr);
}

/* Whether the copy's history is a line of its own, then the source's. */
static int history_follows(const attribute_read *from, const attribute_read *to) {
  const int text = H5Tget_class(from->type) == H5T_STRING && from->points == 1 &&
                   H5Tget_class(to->type) == H5T_STRING && to->points == 1;
  if (!text) return 0;
  const char *old = H5Tis_variable_str(from->type) > 0 ? *(char **)from->buf : from->buf;
  const char *now = H5Tis_variable_str(to->type) > 0 ? *(char **)to->buf : to->buf;
  if (!old || !now) return old == now;
  const size_t old_length =
      H5Tis_variable_str(from->type) > 0 ? strlen(old) : strnlen(old, H5Tget_size(from->type));
  const size_t now_length =
      H5Tis_variable_str(to->type) > 0 ? strlen(now) : strnlen(now, H5Tget_size(to->type));
  return old_length == 0 || (now_length > old_length && now[now_length - old_length - 1] == '\n' &&
                             memcmp(now + now_length - old_length, old, old_length) == 0);
}

/* Whether attribute `name` of the source has its copy: the same type,
 * shape and values (per-axis ones permuted; the history as written). */
static int same_attribute(const attribute_compare *compare, hid_t from, const char *name) {
  if (H5Aexists(compare->other, name) <= 0) return 0;
  attribute_read a, b;
  const int read_a = read_attribute(from, name, &a) == 0;
  const int read_b = read_attribute(compare->other, name, &b) == 0;
  int same = read_a && read_b;
  if (same && compare->root && strcmp(name, "history") == 0) {
    same = history_follows(&a, &b);
  } else if (same) {
    same = H5Tequal(a.type, b.type) > 0 && H5Sextent_equal(a.space, b.space) > 0;
    const size_t size = H5Tget_size(a.type);
    const int permuted = compare->source && names_axes_in_order(name) && a.points == compare->ndims;
    for (hssize_t i = 0; same && i < a.points; i++) {
      const hssize_t j = permuted ? compare->source[i] : i;
      same = xio_type_same_values(a.type, (const char *)a.buf + (size_t)j * size,
                                  (const char *)b.buf + (size_t)i * size);
    }
  }
  release_attribute(&a);
  release_attribute(&b);
  return same;
}

static herr_t compare_attribute(hid_t object, const char *name, const H5A_info_t *info,
                                void *data) {
  (void)info;
  attribute_compare *compare = data;
  hid_t attr = H5Aopen(object, name, H5P_DEFAULT);
  hid_t type = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID;
  const int history = compare->root && strcmp(name, "history") == 0;
  /* unreadable: not shown to be the same */
  int differs = 1;
  if (type >= 0 && compare->reversed) /* the copy's own: the source's, or a new history */
    differs = !not_copied(compare, name, type) && !history && H5Aexists(compare->other, name) <= 0;
  else if (type >= 0)
    differs = !not_copied(compare, name, type) && !same_attribute(compare, object, name);
  if (type >= 0) (void)H5Tclose(type); /* only read */
  if (attr >= 0) (void)H5Aclose(attr);
  if (differs) snprintf(compare->differs, compare->size, "%s", name);
  return differs ? 1 : 0; /* 1 ends the walk at the first */
}

int xio_compare_attributes(hid_t from, hid_t to, const int *source, int ndims, int root,
                           char *differs, size_t size, xio_error *err) {
  differs[0] = '\0';
  attribute_compare compare = {to, source, ndims, root, 0, differs, size};
  hsize_t index = 0;
  herr_t walked =
      H5Aiterate2(from, H5_INDEX_NAME, H5_ITER_INC, &index, compare_attribute, &compare);
  if (walked == 0) { /* and none the copy has beyond them */
    compare.other = from, compare.reversed = 1, index = 0;
    walked = H5Aiterate2(to, H5_INDEX_NAME, H5_ITER_INC, &index, compare_attribute, &compare);
  }
  if (walked < 0) return xio_fail_h5(err, "cannot list the attributes to compare them");
  return 0;
}
