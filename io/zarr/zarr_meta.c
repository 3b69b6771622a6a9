/* A Zarr store's metadata read back (zarr_meta.h).  jansson, as Debian
 * packages it: its integers are 64-bit and its reals are strtod's, so
 * shapes and fill values come back exactly as written. */
#define _POSIX_C_SOURCE 200809L
#include "zarr_meta.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zarr_meta_parts.h"

/* Local.  dir/name parsed as a JSON object: NULL with *missing where
 * there is no such file, or NULL with a message. */
static json_t *load(const char *dir, const char *name, const char *shown, int *missing,
                    xio_error *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  *missing = access(path, F_OK) != 0 && errno == ENOENT;
  if (*missing) return NULL;
  json_error_t e;
  json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
  if (!j) {
    for (char *c = e.text; *c; c++) /* the damaged bytes jansson quotes */
      if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f) *c = '?';
    xio_fail(err, "%s: its %s is not JSON that can be read (line %d: %s)", shown, name, e.line,
             e.text);
    return NULL;
  }
  if (!json_is_object(j)) {
    json_decref(j);
    xio_fail(err, "%s: its %s is not a JSON object", shown, name);
    return NULL;
  }
  return j;
}

int xio_zarr_node_at(const char *path, xio_zarr_node *node, int *format, xio_error *err) {
  int missing;
  *node = XIO_ZARR_NONE, *format = 0;
  json_t *v3 = load(path, "zarr.json", path, &missing, err);
  if (!v3 && !missing) return -1;
  if (v3) {
    const char *type = json_string_value(json_object_get(v3, "node_type"));
    const int ok = json_integer_value(json_object_get(v3, "zarr_format")) == 3 && type &&
                   (strcmp(type, "array") == 0 || strcmp(type, "group") == 0);
    if (ok) *node = strcmp(type, "array") == 0 ? XIO_ZARR_ARRAY : XIO_ZARR_GROUP, *format = 3;
    json_decref(v3);
    return ok ? 0 : xio_fail(err, "%s: its zarr.json is no Zarr v3 array or group", path);
  }
  char at[4200];
  snprintf(at, sizeof at, "%s/.zarray", path);
  if (access(at, F_OK) == 0) return *node = XIO_ZARR_ARRAY, *format = 2, 0;
  json_t *group = load(path, ".zgroup", path, &missing, err);
  if (!group) return missing ? 0 : -1;
  const int ok = json_integer_value(json_object_get(group, "zarr_format")) == 2;
  json_decref(group);
  if (!ok) return xio_fail(err, "%s: its .zgroup does not say a Zarr v2 group (zarr_format)", path);
  *node = XIO_ZARR_GROUP, *format = 2;
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

int xio_zarr_group_arrays(const char *path, const char *shown, xio_path_array *names,
                          xio_error *err) {
  DIR *d = opendir(path);
  if (!d) return xio_fail(err, "%s: %s", shown, strerror(errno));
  int rc = 0;
  for (struct dirent *e; rc == 0 && (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char child[4200];
    struct stat st;
    snprintf(child, sizeof child, "%s/%s", path, e->d_name);
    if (stat(child, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    xio_zarr_node node;
    int format;
    if (xio_zarr_node_at(child, &node, &format, err))
      rc = -1;
    else if (node == XIO_ZARR_GROUP)
      rc = xio_fail(err, "%s/%s is a group inside the store: xpose reads stores of one group",
                    shown, e->d_name);
    else if (node == XIO_ZARR_ARRAY && xio_path_array_add(names, e->d_name))
      rc = xio_fail(err, "%s: out of memory listing its arrays", shown);
  }
  closedir(d);
  if (rc == 0 && names->count > 1)
    qsort(names->paths, (size_t)names->count, sizeof *names->paths, by_name);
  return rc;
}

/* The attributes object's text, less `without` (NULL: none). */
static int attributes_text(json_t *attrs, const char *without, const char *shown, char **text,
                           xio_error *err) {
  json_t *copy = attrs ? json_copy(attrs) : json_object();
  if (copy && without) json_object_del(copy, without);
  *text = copy ? json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
  json_decref(copy);
  return *text ? 0 : xio_fail(err, "%s: out of memory reading its attributes", shown);
}

int xio_zarr_group_attributes(const char *path, const char *shown, char **attributes,
                              xio_error *err) {
  int missing;
  json_t *j = load(path, "zarr.json", shown, &missing, err);
  if (!j && !missing) return -1;
  json_t *v2 = j ? NULL : load(path, ".zattrs", shown, &missing, err);
  if (!j && !v2 && !missing) return -1;
  const int rc =
      attributes_text(j ? json_object_get(j, "attributes") : v2, NULL, shown, attributes, err);
  json_decref(j), json_decref(v2);
  return rc;
}

/* ---- an array ---- */

/* v2's dtype ("<f4", "|u1", "|S1") or v3's data_type ("float32"). */
static int data_type(xio_zarr_array *a, json_t *type, const char *shown, xio_error *err) {
  static const struct {
    const char *v3;
    char kind;
    size_t size;
  } v3[] = {{"int8", 'i', 1},    {"int16", 'i', 2},  {"int32", 'i', 4},  {"int64", 'i', 8},
            {"uint8", 'u', 1},   {"uint16", 'u', 2}, {"uint32", 'u', 4}, {"uint64", 'u', 8},
            {"float32", 'f', 4}, {"float64", 'f', 8}};
  const char *text = json_string_value(type);
  if (text && a->format == 3) {
    for (size_t i = 0; i < sizeof v3 / sizeof *v3; i++)
      if (strcmp(text, v3[i].v3) == 0) return a->kind = v3[i].kind, a->type_size = v3[i].size, 0;
  } else if (text && strlen(text) == 3 && strchr("<>|", text[0]) && strchr("iufS", text[1]) &&
             strchr("1248", text[2])) {
    a->kind = text[1], a->type_size = (size_t)(text[2] - '0');
    a->big_endian = text[0] == '>' && a->type_size > 1;
    if ((a->kind != 'f' || a->type_size >= 4) && (a->kind != 'S' || a->type_size == 1) &&
        (text[0] != '|' || a->type_size == 1))
      return 0;
  }
  char shown_type[80];
  xio_zarr_json_shown(type, shown_type, sizeof shown_type);
  return xio_fail(err,
                  "%s: its %s is %s, not one xpose reads (integers, float32, float64, and v2's "
                  "|S1 characters)",
                  shown, a->format == 3 ? "data_type" : "dtype", shown_type);
}

/* Whether integer v is a value of a's integer type. */
static int in_range(const xio_zarr_array *a, json_int_t v) {
  const int bits = (int)a->type_size * 8;
  if (a->kind == 'u') return v >= 0 && (bits == 64 || v < (json_int_t)1 << bits);
  return bits == 64 || (v >= -((json_int_t)1 << (bits - 1)) && v < (json_int_t)1 << (bits - 1));
}

/* v3's raw bits of a float ("0x7fc00000"): exactly two digits a byte. */
static int float_bits(const xio_zarr_array *a, const char *text, unsigned char *le) {
  if (strncmp(text, "0x", 2) != 0 || strlen(text) != 2 + 2 * a->type_size ||
      strspn(text + 2, "0123456789abcdefABCDEF") != 2 * a->type_size)
    return -1;
  const uint64_t bits = strtoull(text + 2, NULL, 16);
  for (size_t b = 0; b < a->type_size; b++) le[b] = (unsigned char)(bits >> 8 * b);
  return 0;
}

/* A float's fill value: a number, NaN, +-Infinity, or v3's raw bits. */
static int float_fill(const xio_zarr_array *a, json_t *v, unsigned char *le) {
  const char *text = json_string_value(v);
  double x = json_number_value(v);
  if (text && strncmp(text, "0x", 2) == 0) return float_bits(a, text, le);
  if (text && strcmp(text, "NaN") == 0)
    x = NAN;
  else if (text && (strcmp(text, "Infinity") == 0 || strcmp(text, "-Infinity") == 0))
    x = text[0] == '-' ? -INFINITY : INFINITY;
  else if (!json_is_number(v))
    return -1;
  const float f = (float)x;
  if (a->type_size == 4)
    memcpy(le, &f, 4);
  else
    memcpy(le, &x, 8);
  return 0;
}

/* A fill value's bytes, in the array's byte order: v2's may be null (a
 * missing chunk then reads as zeros), v3's must be a value. */
static int fill_value(xio_zarr_array *a, json_t *v, const char *shown, xio_error *err) {
  unsigned char le[8] = {0};
  if (a->kind == 'S' || (a->format == 2 && (!v || json_is_null(v)))) return 0;
  int ok = v && (a->kind == 'f' ? float_fill(a, v, le) == 0
                                : json_is_integer(v) && in_range(a, json_integer_value(v)));
  if (ok && a->kind != 'f') {
    const json_int_t i = json_integer_value(v);
    for (size_t b = 0; b < a->type_size; b++) le[b] = (unsigned char)((uint64_t)i >> 8 * b);
  }
  if (!ok) {
    char text[80];
    xio_zarr_json_shown(v, text, sizeof text);
    return xio_fail(err, "%s: its fill_value %s is not a value of its data type", shown, text);
  }
  for (size_t b = 0; b < a->type_size; b++)
    a->fill[b] = le[a->big_endian ? a->type_size - 1 - b : b];
  a->has_fill = 1;
  return 0;
}

/* v3's chunk key encoding: "default" ("c/0/1") or "v2" ("0.1"). */
static int key_encoding(xio_zarr_array *a, json_t *keys, const char *shown, xio_error *err) {
  json_t *config = json_object_get(keys, "configuration");
  json_t *separator = json_object_get(config, "separator");
  const char *name = json_string_value(json_object_get(keys, "name"));
  const char *sep = json_string_value(separator);
  if (!name || (strcmp(name, "default") && strcmp(name, "v2")) ||
      (config && !json_is_object(config)) ||
      (separator && (!sep || (strcmp(sep, "/") && strcmp(sep, "."))))) {
    char text[80];
    xio_zarr_json_shown(keys, text, sizeof text);
    return xio_fail(err,
                    "%s: its chunk_key_encoding is %s, not \"default\" or \"v2\" with a "
                    "separator of \"/\" or \".\"",
                    shown, text);
  }
  a->key_prefix = name[0] == 'd';
  a->separator = sep ? sep[0] : a->key_prefix ? '/' : '.';
  return 0;
}

/* v3's chunk grid, key encoding and codecs. */
static int layout_v3(xio_zarr_array *a, json_t *meta, const char *shown, xio_error *err) {
  json_t *grid = json_object_get(meta, "chunk_grid");
  const char *grid_name = json_string_value(json_object_get(grid, "name"));
  if (!grid_name || strcmp(grid_name, "regular") != 0) {
    char text[80];
    xio_zarr_json_shown(grid, text, sizeof text);
    return xio_fail(err, "%s: its chunk_grid is %s, not \"regular\"", shown, text);
  }
  return xio_zarr_integers(json_object_get(json_object_get(grid, "configuration"), "chunk_shape"),
                           a->ndims, 1, a->chunks, "chunk_shape", shown, err) ||
                 key_encoding(a, json_object_get(meta, "chunk_key_encoding"), shown, err) ||
                 xio_zarr_codecs_v3(a, json_object_get(meta, "codecs"), shown, err)
             ? -1
             : 0;
}

/* n values of type_size bytes along each of ndims axes, in *bytes: -1
 * where that passes 2^63. */
static int checked_bytes(const int64_t *n, int ndims, size_t type_size, uint64_t *bytes) {
  uint64_t b = type_size;
  for (int i = 0; i < ndims; i++)
    if (__builtin_mul_overflow(b, (uint64_t)n[i], &b) || b > (uint64_t)INT64_MAX) return -1;
  *bytes = b;
  return 0;
}

/* The sizes every later count is made of, checked before any is: the
 * array's bytes; a chunk's (sharded: an inner chunk's), which a thread
 * holds whole; a shard's inner chunks, whose index is read whole. */
static int check_sizes(const xio_zarr_array *a, json_t *meta, const char *shown, xio_error *err) {
  const int64_t *chunk = a->sharded ? a->shards.inner : a->chunks;
  uint64_t bytes = 0, inner = 1;
  char text[80];
  if (checked_bytes(a->shape, a->ndims, a->type_size, &bytes)) {
    xio_zarr_json_shown(json_object_get(meta, "shape"), text, sizeof text);
    return xio_fail(err, "%s: its shape %s holds more than 2^63 bytes: it is damaged", shown, text);
  }
  if (checked_bytes(chunk, a->ndims, a->type_size, &bytes) || bytes > XIO_ZARR_MOST_CHUNK_BYTES) {
    int n = snprintf(text, sizeof text, "[");
    for (int i = 0; i < a->ndims && n < (int)sizeof text - 24; i++)
      n +=
          snprintf(text + n, sizeof text - (size_t)n, "%s%lld", i ? ", " : "", (long long)chunk[i]);
    snprintf(text + n, sizeof text - (size_t)n, "]");
    return xio_fail(err,
                    "%s: its chunks of %s values of %zu bytes are larger than the 1 GiB a chunk "
                    "xpose reads",
                    shown, text, a->type_size);
  }
  for (int i = 0; a->sharded && i < a->ndims; i++)
    if (__builtin_mul_overflow(inner, (uint64_t)(a->shards.shard[i] / a->shards.inner[i]),
                               &inner) ||
        inner > XIO_ZARR_MOST_INNER_CHUNKS)
      return xio_fail(err, "%s: its shards hold more than 2^20 inner chunks each: it is damaged",
                      shown);
  return 0;
}

/* The axes' names: v3's dimension_names, v2's _ARRAY_DIMENSIONS. */
static int axis_names(const xio_zarr_array *a, json_t *list, char names[][128], int *named,
                      const char *shown, xio_error *err) {
  *named = 0;
  for (int i = 0; i < a->ndims; i++) names[i][0] = '\0';
  if (!list || json_is_null(list)) return 0;
  char text[80];
  xio_zarr_json_shown(list, text, sizeof text);
  if (!json_is_array(list) || (int)json_array_size(list) != a->ndims)
    return xio_fail(err, "%s: its dimension names %s are not a list of %d names", shown, text,
                    a->ndims);
  for (int i = 0; i < a->ndims; i++) {
    const char *name = json_string_value(json_array_get(list, (size_t)i));
    if (!name || !name[0] || strlen(name) >= sizeof names[i] || strchr(name, '/'))
      return xio_fail(err, "%s: the name of its axis %d in %s is not one xpose can give", shown, i,
                      text);
    snprintf(names[i], sizeof names[i], "%s", name);
  }
  *named = a->ndims > 0;
  return 0;
}

/* Shape, data type, fill value and layout, either version, and the sizes
 * they make. */
static int describe(xio_zarr_array *a, json_t *meta, const char *shown, xio_error *err) {
  json_t *shape = json_object_get(meta, "shape");
  a->ndims = json_is_array(shape) ? (int)json_array_size(shape) : -1;
  if (a->ndims < 0 || a->ndims > XIO_MAX_DIMS) {
    char text[80];
    xio_zarr_json_shown(shape, text, sizeof text);
    return xio_fail(err, "%s: its shape is %s, not a list of at most %d integers", shown, text,
                    XIO_MAX_DIMS);
  }
  if (xio_zarr_integers(shape, a->ndims, 0, a->shape, "shape", shown, err) ||
      data_type(a, json_object_get(meta, a->format == 3 ? "data_type" : "dtype"), shown, err))
    return -1;
  a->codec.format = a->format;
  if (a->format == 3) /* the byte order first: the fill value's bytes follow it */
    return layout_v3(a, meta, shown, err) ||
                   fill_value(a, json_object_get(meta, "fill_value"), shown, err) ||
                   check_sizes(a, meta, shown, err)
               ? -1
               : 0;
  json_t *order = json_object_get(meta, "order"),
         *sep = json_object_get(meta, "dimension_separator");
  const char *order_text = json_string_value(order), *sep_text = json_string_value(sep);
  if ((order && (!order_text || strcmp(order_text, "C"))) ||
      (sep && (!sep_text || (strcmp(sep_text, ".") && strcmp(sep_text, "/"))))) {
    char text[80];
    xio_zarr_json_shown(order && (!order_text || strcmp(order_text, "C")) ? order : sep, text,
                        sizeof text);
    return xio_fail(
        err,
        "%s: its %s is %s: xpose reads C order, and \".\" or \"/\" between a chunk "
        "key's numbers",
        shown, order && (!order_text || strcmp(order_text, "C")) ? "order" : "dimension_separator",
        text);
  }
  a->separator = sep_text ? sep_text[0] : '.', a->key_prefix = 0;
  return xio_zarr_integers(json_object_get(meta, "chunks"), a->ndims, 1, a->chunks, "chunks", shown,
                           err) ||
                 xio_zarr_codecs_v2(a, meta, shown, err) ||
                 fill_value(a, json_object_get(meta, "fill_value"), shown, err) ||
                 check_sizes(a, meta, shown, err)
             ? -1
             : 0;
}

/* Whether `meta` says the Zarr format it is read as: v3's zarr.json an
 * array, v2's .zarray of format 2. */
static int format_said(const xio_zarr_array *a, json_t *meta, const char *shown, xio_error *err) {
  const char *node = json_string_value(json_object_get(meta, "node_type"));
  json_t *format = json_object_get(meta, "zarr_format");
  if (json_is_integer(format) && json_integer_value(format) == a->format &&
      (a->format == 2 || (node && strcmp(node, "array") == 0)))
    return 0;
  return xio_fail(err, "%s: its %s does not say a Zarr v%d array (zarr_format, node_type)", shown,
                  a->format == 3 ? "zarr.json" : ".zarray", a->format);
}

void xio_zarr_array_path(const char *store, const char *name, char *path, size_t size) {
  snprintf(path, size, "%s/%s", store, name[0] == '/' ? name + 1 : name);
}

int xio_zarr_array_read(const char *path, const char *shown, xio_zarr_array *a, char names[][128],
                        int *named, char **attributes, xio_error *err) {
  char unused[XIO_MAX_DIMS][128]; /* the names are checked even where not asked for */
  int unused_named;
  memset(a, 0, sizeof *a);
  if (attributes) *attributes = NULL;
  if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path)
    return xio_fail(err, "%s: its path is too long", shown);
  int missing;
  json_t *meta = load(path, "zarr.json", shown, &missing, err), *attrs = NULL;
  if (!meta && !missing) return -1;
  a->format = meta ? 3 : 2;
  if (!meta && !(meta = load(path, ".zarray", shown, &missing, err)))
    return missing ? xio_fail(err, "%s is no Zarr array", shown) : -1;
  if (a->format == 2 && !(attrs = load(path, ".zattrs", shown, &missing, err)) && !missing) {
    json_decref(meta);
    return -1;
  }
  json_t *all = a->format == 3 ? json_object_get(meta, "attributes") : attrs;
  int rc = format_said(a, meta, shown, err) || describe(a, meta, shown, err) ? -1 : 0;
  if (rc == 0)
    rc = axis_names(a,
                    a->format == 3 ? json_object_get(meta, "dimension_names")
                                   : json_object_get(attrs, "_ARRAY_DIMENSIONS"),
                    names ? names : unused, named ? named : &unused_named, shown, err);
  if (rc == 0 && attributes)
    rc = attributes_text(all, a->format == 2 ? "_ARRAY_DIMENSIONS" : NULL, shown, attributes, err);
  json_decref(meta), json_decref(attrs);
  return rc;
}
