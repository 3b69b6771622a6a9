/* HDF5 attributes and axis names for a Zarr store (zarr_attributes.h). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "zarr_attributes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5_hl.h>

#include "h5_attributes.h"
#include "h5_compat.h"
#include "h5_scales.h"
#include "zarr_json.h"

/* netCDF-4's and HDF5's own: what a store says otherwise, or not at all. */
static int bookkeeping(const char *name) {
  static const char *const names[] = {"_Netcdf4Dimid",
                                      "_Netcdf4Coordinates",
                                      "DIMENSION_LIST",
                                      "REFERENCE_LIST",
                                      "CLASS",
                                      "NAME",
                                      "_NCProperties",
                                      "_nc3_strict",
                                      "_FillValue",
                                      "DIMENSION_LABELS",
                                      "_ARRAY_DIMENSIONS"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(name, names[i]) == 0) return 1;
  return 0;
}

typedef struct {
  xio_json json;
  int format, failed;
  const char *history; /* this run's line, or NULL */
  int history_written;
  const char *shown;
  xio_error *err;
} attribute_walk;

/* The history attribute: this run's line, then the input's. */
static void history(attribute_walk *w, const char *old) {
  const size_t n = strlen(w->history) + (old ? strlen(old) : 0) + 2;
  char *text = malloc(n);
  if (!text) {
    w->json.failed = 1;
    return;
  }
  snprintf(text, n, "%s%s%s", w->history, old && old[0] ? "\n" : "", old ? old : "");
  xio_json_key(&w->json, "history");
  xio_json_string(&w->json, text);
  free(text);
  w->history_written = 1;
}

/* One number of the attribute's values, as read in its native type. */
static void number(attribute_walk *w, hid_t native, const unsigned char *v) {
  if (H5Tequal(native, H5T_NATIVE_FLOAT) > 0 || H5Tequal(native, H5T_NATIVE_DOUBLE) > 0) {
    const int single = H5Tget_size(native) == 4;
    float f = 0;
    double d = 0;
    if (single) memcpy(&f, v, 4), d = f;
    if (!single) memcpy(&d, v, 8);
    if (isnan(d) && w->format == 2) return xio_json_raw(&w->json, "NaN"); /* as Python writes it */
    if (isinf(d) && w->format == 2) return xio_json_raw(&w->json, d > 0 ? "Infinity" : "-Infinity");
    return single ? xio_json_float(&w->json, f) : xio_json_double(&w->json, d);
  }
  const size_t size = H5Tget_size(native);
  int64_t i = 0;
  uint64_t u = 0;
  if (H5Tget_sign(native) == H5T_SGN_NONE) {
    memcpy(&u, v, size); /* little-endian machines: the low bytes */
    return xio_json_uint(&w->json, u);
  }
  memcpy(&u, v, size);
  const int shift = 64 - 8 * (int)size;
  i = shift ? (int64_t)(u << shift) >> shift : (int64_t)u;
  xio_json_int(&w->json, i);
}

/* A numeric attribute: a number, or a list of them. */
static int numbers(attribute_walk *w, hid_t attr, hid_t type, hssize_t points) {
  const hid_t native = H5Tget_native_type(type, H5T_DIR_ASCEND);
  const size_t size = native >= 0 ? H5Tget_size(native) : 0;
  unsigned char *values = size ? malloc(size * (size_t)(points ? points : 1)) : NULL;
  const int ok = values && H5Aread(attr, native, values) >= 0;
  if (ok && points != 1) xio_json_open(&w->json, '[');
  for (hssize_t p = 0; ok && p < points; p++) number(w, native, values + (size_t)p * size);
  if (ok && points != 1) xio_json_close(&w->json, ']');
  free(values);
  if (native >= 0) (void)H5Tclose(native);
  return ok ? 0 : -1;
}

static herr_t add_attribute(hid_t obj, const char *name, const H5A_info_t *info, void *data) {
  (void)info;
  attribute_walk *w = data;
  if (bookkeeping(name)) return 0;
  const hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
  const hid_t type = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID;
  const hid_t space = attr >= 0 ? H5Aget_space(attr) : H5I_INVALID_HID;
  const hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  const H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
  int rc = points < 0 ? -1 : 0;
  if (rc == 0 && cls == H5T_STRING && points == 1) {
    char *text = xio_read_text_attribute(obj, name);
    if (w->history && strcmp(name, "history") == 0) {
      history(w, text);
    } else {
      xio_json_key(&w->json, name);
      xio_json_string(&w->json, text ? text : "");
    }
    free(text);
  } else if (rc == 0 && (cls == H5T_INTEGER || cls == H5T_FLOAT)) {
    xio_json_key(&w->json, name);
    rc = numbers(w, attr, type, points);
  } else if (rc == 0) {
    rc = xio_fail(w->err, "%s: attribute %s is of a type a Zarr store cannot hold", w->shown, name);
    w->failed = 1;
  }
  if (rc && !w->failed) rc = xio_fail_h5(w->err, "%s: cannot read attribute %s", w->shown, name);
  if (rc) w->failed = 1;
  if (space >= 0) (void)H5Sclose(space); /* only read */
  if (type >= 0) (void)H5Tclose(type);
  if (attr >= 0) (void)H5Aclose(attr);
  return rc ? -1 : 0;
}

int xio_zarr_attributes(hid_t obj, int format, const char *history_line, const char *shown,
                        char **json, xio_error *err) {
  attribute_walk w = {.format = format, .history = history_line, .shown = shown, .err = err};
  xio_json_init(&w.json);
  xio_json_open(&w.json, '{');
  hsize_t at = 0;
  const H5_index_t order = xio_attribute_order(obj);
  const herr_t walked = H5Aiterate2(obj, order, H5_ITER_INC, &at, add_attribute, &w);
  if (w.history && !w.history_written) history(&w, NULL);
  xio_json_close(&w.json, '}');
  *json = NULL;
  if (walked < 0 || w.failed || w.json.failed) {
    xio_json_free(&w.json);
    return w.failed ? -1 : xio_fail_h5(err, "%s: cannot list its attributes", shown);
  }
  *json = w.json.text;
  return 0;
}

int xio_zarr_fill_value(hid_t dset, hid_t type, void *fill) {
  if (H5Aexists(dset, "_FillValue") <= 0) return 0;
  const hid_t attr = H5Aopen(dset, "_FillValue", H5P_DEFAULT);
  const int ok = attr >= 0 && H5Aread(attr, type, fill) >= 0;
  if (attr >= 0) (void)H5Aclose(attr);
  return ok;
}

int xio_is_netcdf_dimension_only(hid_t dset) {
  char *name = H5DSis_scale(dset) > 0 ? xio_read_text_attribute(dset, "NAME") : NULL;
  const int only =
      name && strncmp(name, "This is a netCDF dimension but not a netCDF variable", 52) == 0;
  free(name);
  return only;
}

int xio_zarr_axis_names(hid_t dset, int ndims, const int64_t *dims, int64_t *phony,
                        int *phony_count, char names[][128], xio_error *err) {
  char path[512] = "";
  (void)H5Iget_name(dset, path, sizeof path);
  if (xio_dataset_axis_names(dset, ndims, names, path, err)) return -1;
  const char *base = strrchr(path, '/');
  if (ndims == 1 && !names[0][0] && H5DSis_scale(dset) > 0) /* a coordinate variable */
    snprintf(names[0], 128, "%.127s", base ? base + 1 : path);
  for (int a = 0; a < ndims; a++) {
    if (names[a][0]) continue;
    int k = 0;
    while (k < *phony_count && phony[k] != dims[a]) k++;
    if (k == *phony_count && *phony_count < XIO_MAX_DIMS * 16) phony[(*phony_count)++] = dims[a];
    snprintf(names[a], 128, "phony_dim_%d", k);
  }
  return 0;
}
