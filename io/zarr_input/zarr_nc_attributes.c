/* A Zarr node's attributes (a JSON object) as netCDF attributes, as
 * xarray's to_netcdf writes Python's values: a string as text, an integer
 * as int (int64 past its range), a real as double, a list of numbers as a
 * numeric attribute, a list of strings as strings; true and false as 1
 * and 0.  What netCDF has no form for (null, objects, mixed lists) is
 * named in `skipped`. */
#include "zarr_nc_attributes.h"

#include <jansson.h>
#include <limits.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nc_copy.h"

/* Keys the view writes otherwise (the fill value, the axes) or that are
 * NCZarr's own bookkeeping. */
static int kept_out(const char *key) {
  return strcmp(key, "_FillValue") == 0 || strcmp(key, "_ARRAY_DIMENSIONS") == 0 ||
         strncmp(key, "_nczarr", 7) == 0 || strncmp(key, "_NCZARR", 7) == 0;
}

static int fits_int(json_int_t i) { return i >= INT_MIN && i <= INT_MAX; }

/* A list's kind: 'i' all integers, 'd' numbers, 's' strings, 0 other. */
static char list_kind(json_t *list, int *narrow) {
  size_t i;
  json_t *v;
  char kind = json_array_size(list) ? 'i' : 0;
  *narrow = 1;
  json_array_foreach(list, i, v) {
    if (json_is_string(v) != (i == 0 ? json_is_string(v) : kind == 's')) return 0; /* mixed */
    if (json_is_string(v))
      kind = 's';
    else if (json_is_integer(v))
      *narrow &= fits_int(json_integer_value(v));
    else if (json_is_real(v))
      kind = 'd';
    else
      return 0;
  }
  return kind;
}

static int put_list(int nc, int varid, const char *key, json_t *list) {
  int narrow;
  const char kind = list_kind(list, &narrow);
  const size_t n = json_array_size(list);
  if (!kind) return NC_EINVAL;
  void *values = calloc(n, 8);
  if (!values) return NC_ENOMEM;
  int status;
  if (kind == 's') {
    const char **text = values;
    for (size_t i = 0; i < n; i++) text[i] = json_string_value(json_array_get(list, i));
    status = nc_put_att_string(nc, varid, key, n, text);
  } else if (kind == 'd') {
    double *d = values;
    for (size_t i = 0; i < n; i++) d[i] = json_number_value(json_array_get(list, i));
    status = nc_put_att_double(nc, varid, key, NC_DOUBLE, n, d);
  } else {
    long long *l = values;
    for (size_t i = 0; i < n; i++) l[i] = json_integer_value(json_array_get(list, i));
    status = nc_put_att_longlong(nc, varid, key, narrow ? NC_INT : NC_INT64, n, l);
  }
  free(values);
  return status;
}

/* One attribute written: NC_NOERR, NC_EINVAL where netCDF has no form
 * for it, else netCDF's error. */
static int put_one(int nc, int varid, const char *key, json_t *v) {
  if (json_is_string(v))
    return nc_put_att_text(nc, varid, key, strlen(json_string_value(v)), json_string_value(v));
  if (json_is_integer(v) || json_is_boolean(v)) {
    const long long i = json_is_boolean(v) ? json_is_true(v) : json_integer_value(v);
    return nc_put_att_longlong(nc, varid, key, fits_int(i) ? NC_INT : NC_INT64, 1, &i);
  }
  if (json_is_real(v)) {
    const double d = json_real_value(v);
    return nc_put_att_double(nc, varid, key, NC_DOUBLE, 1, &d);
  }
  return json_is_array(v) ? put_list(nc, varid, key, v) : NC_EINVAL;
}

int xio_zarr_nc_attributes(int nc, int varid, const char *json, const char *shown, char *skipped,
                           size_t skipped_size, xio_error *err) {
  json_error_t e;
  json_t *attrs = json_loads(json, 0, &e);
  if (!json_is_object(attrs)) {
    json_decref(attrs);
    return xio_fail(err, "%s: its attributes cannot be read", shown);
  }
  const char *key;
  json_t *v;
  int rc = 0;
  json_object_foreach(attrs, key, v) {
    if (kept_out(key)) continue;
    const int status = put_one(nc, varid, key, v);
    if (status == NC_EINVAL && skipped) {
      const size_t used = strlen(skipped);
      snprintf(skipped + used, skipped_size - used, "%s%s:%s", used ? ", " : "", shown, key);
    } else if (status != NC_NOERR) {
      char what[600];
      snprintf(what, sizeof what, "writing its attribute %.500s into its view", key);
      rc = xio_nc_failed(status, what, shown, err);
      break;
    }
  }
  json_decref(attrs);
  return rc;
}
