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

#include "zarr_codecs.h"

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
  snprintf(at, sizeof at, "%s/.zgroup", path);
  if (access(at, F_OK) == 0) return *node = XIO_ZARR_GROUP, *format = 2, 0;
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
static int data_type(xio_zarr_array *a, const char *text, const char *shown, xio_error *err) {
  static const struct {
    const char *v3;
    char kind;
    size_t size;
  } v3[] = {{"int8", 'i', 1},    {"int16", 'i', 2},  {"int32", 'i', 4},  {"int64", 'i', 8},
            {"uint8", 'u', 1},   {"uint16", 'u', 2}, {"uint32", 'u', 4}, {"uint64", 'u', 8},
            {"float32", 'f', 4}, {"float64", 'f', 8}};
  if (!text) return xio_fail(err, "%s: its metadata names no data type", shown);
  if (a->format == 3) {
    for (size_t i = 0; i < sizeof v3 / sizeof *v3; i++)
      if (strcmp(text, v3[i].v3) == 0) return a->kind = v3[i].kind, a->type_size = v3[i].size, 0;
  } else if (strlen(text) == 3 && strchr("<>|", text[0]) && strchr("iufS", text[1]) &&
             strchr("1248", text[2])) {
    a->kind = text[1], a->type_size = (size_t)(text[2] - '0');
    a->big_endian = text[0] == '>' && a->type_size > 1;
    if ((a->kind != 'f' || a->type_size >= 4) && (a->kind != 'S' || a->type_size == 1)) return 0;
  }
  return xio_fail(err,
                  "%s: its data type \"%s\" is not one xpose reads (integers, float32, float64, "
                  "and v2's |S1 characters)",
                  shown, text);
}

/* A fill value's bytes, in the array's byte order. */
static int fill_value(xio_zarr_array *a, json_t *v, const char *shown, xio_error *err) {
  unsigned char le[8] = {0};
  const char *text = json_string_value(v);
  if (json_is_null(v) || a->kind == 'S') return 0; /* none: missing chunks read as zeros */
  if (a->kind == 'f' && (json_is_number(v) || text)) {
    double x = json_is_number(v) ? json_number_value(v) : 0;
    uint64_t bits = 0;
    if (text && strncmp(text, "0x", 2) == 0) { /* v3's raw bits */
      bits = strtoull(text + 2, NULL, 16);
      memcpy(le, &bits, a->type_size);
    } else if (text && strcmp(text, "NaN") && strcmp(text, "Infinity") &&
               strcmp(text, "-Infinity")) {
      return xio_fail(err, "%s: its fill value \"%s\" is not a number", shown, text);
    } else {
      if (text) x = text[0] == 'N' ? NAN : text[0] == '-' ? -INFINITY : INFINITY;
      const float f = (float)x;
      if (a->type_size == 4)
        memcpy(le, &f, 4);
      else
        memcpy(le, &x, 8);
    }
  } else if (a->kind != 'f' && json_is_integer(v)) {
    const json_int_t i = json_integer_value(v);
    memcpy(le, &i, a->type_size); /* little-endian: the low bytes first */
  } else {
    return xio_fail(err, "%s: its fill value is not a number of its data type", shown);
  }
  for (size_t b = 0; b < a->type_size; b++)
    a->fill[b] = le[a->big_endian ? a->type_size - 1 - b : b];
  a->has_fill = 1;
  return 0;
}

/* Local.  The integers of `list` (ndims of them) into v, each at least
 * `least`. */
static int integers(json_t *list, int ndims, int64_t least, int64_t *v, const char *what,
                    const char *shown, xio_error *err) {
  if (!json_is_array(list) || (int)json_array_size(list) != ndims)
    return xio_fail(err, "%s: its %s is not a list of %d integers", shown, what, ndims);
  for (int i = 0; i < ndims; i++) {
    json_t *x = json_array_get(list, (size_t)i);
    if (!json_is_integer(x) || json_integer_value(x) < least)
      return xio_fail(err, "%s: its %s is not a list of %d integers of %lld or more", shown, what,
                      ndims, (long long)least);
    v[i] = json_integer_value(x);
  }
  return 0;
}

/* One bytes-to-bytes codec (numcodecs' id or v3's name, its settings in
 * `c`) appended to the pipeline. */
static int add_codec(xio_zarr_array *a, xio_filters *f, const char *name, json_t *c,
                     const char *shown, xio_error *err) {
  if (f->count == XIO_MAX_FILTERS) return xio_fail(err, "%s: it has too many codecs", shown);
  const int i = f->count;
  const json_int_t level = json_integer_value(json_object_get(c, "level"));
  if (strcmp(name, "blosc") == 0) {
    json_t *shuffle = json_object_get(c, "shuffle");
    const char *by = json_string_value(shuffle);
    const json_int_t n = json_integer_value(shuffle); /* v2: -1 (auto), 0, 1 or 2 */
    const unsigned how = by ? (strcmp(by, "bitshuffle") == 0 ? 2u : strcmp(by, "shuffle") == 0)
                            : (unsigned)(n > 0 ? n : 0);
    xio_blosc_name cname;
    if (xio_blosc_name_of(json_string_value(json_object_get(c, "cname")), &cname))
      return xio_fail(err, "%s: its Blosc compressor is not one xpose reads", shown);
    f->id[i] = XIO_CODEC_BLOSC;
    f->value[i] = (unsigned)json_integer_value(json_object_get(c, "clevel"));
    f->option[i] = xio_blosc_option(cname, how, (unsigned)a->type_size);
    a->codec.compressor = cname == XIO_BLOSC_ZSTD ? XIO_ZARR_BLOSC_ZSTD : XIO_ZARR_BLOSC_LZ4;
  } else if (strcmp(name, "zlib") == 0 || strcmp(name, "gzip") == 0 || strcmp(name, "zstd") == 0) {
    f->id[i] = name[1] == 'l'   ? H5Z_FILTER_DEFLATE
               : name[0] == 'g' ? XIO_CODEC_GZIP
                                : XIO_CODEC_ZSTD;
    f->value[i] = (unsigned)(level > 0 ? level : 0);
    a->codec.compressor = name[0] == 'z' && name[1] == 's' ? XIO_ZARR_ZSTD : XIO_ZARR_GZIP;
  } else if (strcmp(name, "shuffle") == 0 && a->format == 2) {
    const json_int_t size = json_integer_value(json_object_get(c, "elementsize"));
    f->id[i] = H5Z_FILTER_SHUFFLE;
    f->value[i] = (unsigned)(size > 0 ? size : 4);
  } else if (strcmp(name, "crc32c") == 0 && a->format == 3) {
    f->id[i] = XIO_CODEC_CRC32C;
  } else {
    return xio_fail(err,
                    "%s: its codec \"%s\" is not one xpose reads (Blosc, zlib, gzip, zstd, "
                    "shuffle, crc32c)",
                    shown, name);
  }
  f->count++;
  return 0;
}

/* v2's filters then compressor, in the order they encode. */
static int codecs_v2(xio_zarr_array *a, json_t *meta, const char *shown, xio_error *err) {
  xio_filters *f = &a->codecs;
  json_t *filters = json_object_get(meta, "filters"),
         *compressor = json_object_get(meta, "compressor");
  size_t i;
  json_t *c;
  if (!json_is_null(filters) && filters && !json_is_array(filters))
    return xio_fail(err, "%s: its filters are not a list", shown);
  json_array_foreach(filters, i, c) {
    const char *id = json_string_value(json_object_get(c, "id"));
    if (add_codec(a, f, id ? id : "?", c, shown, err)) return -1;
  }
  if (compressor && !json_is_null(compressor)) {
    const char *id = json_string_value(json_object_get(compressor, "id"));
    if (add_codec(a, f, id ? id : "?", compressor, shown, err)) return -1;
  } else if (!f->count) {
    a->codec.compressor = XIO_ZARR_UNCOMPRESSED;
  }
  return 0;
}

/* v3's codecs (an array's, or a shard's inner chunks'): "bytes" (its
 * byte order), then bytes-to-bytes codecs. */
static int codecs_v3(xio_zarr_array *a, json_t *list, xio_filters *f, const char *shown,
                     xio_error *err) {
  size_t i;
  json_t *c;
  int bytes = 0;
  if (!json_is_array(list)) return xio_fail(err, "%s: its codecs are not a list", shown);
  json_array_foreach(list, i, c) {
    const char *name = json_string_value(json_object_get(c, "name"));
    json_t *config = json_object_get(c, "configuration");
    if (!name || (!bytes && strcmp(name, "bytes") != 0))
      return xio_fail(err,
                      "%s: its codec \"%s\" before \"bytes\" is not one xpose reads (it reads "
                      "arrays in C order: no transpose)",
                      shown, name ? name : "?");
    if (bytes) {
      if (add_codec(a, f, name, config, shown, err)) return -1;
      continue;
    }
    const char *endian = json_string_value(json_object_get(config, "endian"));
    a->big_endian = endian && strcmp(endian, "big") == 0 && a->type_size > 1;
    bytes = 1;
  }
  if (!f->count) a->codec.compressor = XIO_ZARR_UNCOMPRESSED;
  return bytes ? 0 : xio_fail(err, "%s: its codecs have no \"bytes\"", shown);
}

/* v3's sharding_indexed: the grid's chunks are shards of inner chunks. */
static int sharding_v3(xio_zarr_array *a, json_t *config, const char *shown, xio_error *err) {
  xio_shard_layout *l = &a->shards;
  *l = (xio_shard_layout){.ndims = a->ndims, .type_size = a->type_size};
  const char *where = json_string_value(json_object_get(config, "index_location"));
  json_t *index = json_object_get(config, "index_codecs");
  const char *last =
      json_string_value(json_object_get(json_array_get(index, json_array_size(index) - 1), "name"));
  if (where && strcmp(where, "end") != 0)
    return xio_fail(err, "%s: its shards' index is at their start: xpose reads it at the end",
                    shown);
  if (!last || strcmp(last, "crc32c") != 0 || json_array_size(index) != 2)
    return xio_fail(err, "%s: its shards' index is not \"bytes\" then \"crc32c\"", shown);
  if (integers(json_object_get(config, "chunk_shape"), a->ndims, 1, l->inner, "inner chunk shape",
               shown, err) ||
      codecs_v3(a, json_object_get(config, "codecs"), &l->codecs, shown, err))
    return -1;
  for (int i = 0; i < a->ndims; i++) {
    if (a->chunks[i] % l->inner[i])
      return xio_fail(err, "%s: its shards are not whole inner chunks", shown);
    l->shard[i] = a->chunks[i];
  }
  a->codecs = l->codecs;
  a->sharded = 1;
  return 0;
}

/* v3's chunk grid, key encoding and codecs. */
static int layout_v3(xio_zarr_array *a, json_t *meta, const char *shown, xio_error *err) {
  json_t *grid = json_object_get(meta, "chunk_grid"),
         *keys = json_object_get(meta, "chunk_key_encoding");
  const char *grid_name = json_string_value(json_object_get(grid, "name"));
  if (!grid_name || strcmp(grid_name, "regular") != 0)
    return xio_fail(err, "%s: its chunk grid is not \"regular\"", shown);
  if (integers(json_object_get(json_object_get(grid, "configuration"), "chunk_shape"), a->ndims, 1,
               a->chunks, "chunk shape", shown, err))
    return -1;
  const char *key_name = json_string_value(json_object_get(keys, "name"));
  const char *sep =
      json_string_value(json_object_get(json_object_get(keys, "configuration"), "separator"));
  if (!key_name || (strcmp(key_name, "default") && strcmp(key_name, "v2")) ||
      (sep && strcmp(sep, "/") && strcmp(sep, ".")))
    return xio_fail(err, "%s: its chunk key encoding is not \"default\" or \"v2\"", shown);
  a->key_prefix = key_name[0] == 'd';
  a->separator = sep ? sep[0] : a->key_prefix ? '/' : '.';
  json_t *codecs = json_object_get(meta, "codecs");
  const char *first = json_string_value(json_object_get(json_array_get(codecs, 0), "name"));
  if (first && strcmp(first, "sharding_indexed") == 0) {
    if (json_array_size(codecs) != 1)
      return xio_fail(err, "%s: codecs after sharding_indexed are not read by xpose", shown);
    return sharding_v3(a, json_object_get(json_array_get(codecs, 0), "configuration"), shown, err);
  }
  return codecs_v3(a, codecs, &a->codecs, shown, err);
}

/* The axes' names: v3's dimension_names, v2's _ARRAY_DIMENSIONS. */
static int axis_names(const xio_zarr_array *a, json_t *list, char names[][128], int *named,
                      const char *shown, xio_error *err) {
  *named = 0;
  for (int i = 0; i < a->ndims; i++) names[i][0] = '\0';
  if (!list || json_is_null(list)) return 0;
  if (!json_is_array(list) || (int)json_array_size(list) != a->ndims)
    return xio_fail(err, "%s: its dimension names are not a list of %d names", shown, a->ndims);
  for (int i = 0; i < a->ndims; i++) {
    const char *name = json_string_value(json_array_get(list, (size_t)i));
    if (!name || !name[0] || strlen(name) >= sizeof names[i] || strchr(name, '/'))
      return xio_fail(err, "%s: the name of its axis %d is not one xpose can give", shown, i);
    snprintf(names[i], sizeof names[i], "%s", name);
  }
  *named = a->ndims > 0;
  return 0;
}

/* Shape, data type, fill value and layout, either version. */
static int describe(xio_zarr_array *a, json_t *meta, const char *shown, xio_error *err) {
  json_t *shape = json_object_get(meta, "shape");
  a->ndims = json_is_array(shape) ? (int)json_array_size(shape) : -1;
  if (a->ndims < 0 || a->ndims > XIO_MAX_DIMS)
    return xio_fail(err, "%s: its shape is not a list of at most %d integers", shown, XIO_MAX_DIMS);
  if (integers(shape, a->ndims, 0, a->shape, "shape", shown, err) ||
      data_type(a, json_string_value(json_object_get(meta, a->format == 3 ? "data_type" : "dtype")),
                shown, err))
    return -1;
  a->codec.format = a->format;
  if (a->format == 3) /* the byte order first: the fill value's bytes follow it */
    return layout_v3(a, meta, shown, err) ||
                   fill_value(a, json_object_get(meta, "fill_value"), shown, err)
               ? -1
               : 0;
  const char *order = json_string_value(json_object_get(meta, "order"));
  const char *sep = json_string_value(json_object_get(meta, "dimension_separator"));
  if (order && strcmp(order, "C") != 0)
    return xio_fail(err, "%s: its order is \"%s\": xpose reads C order", shown, order);
  if (sep && strcmp(sep, ".") && strcmp(sep, "/"))
    return xio_fail(err, "%s: its dimension separator \"%s\" is not \".\" or \"/\"", shown, sep);
  a->separator = sep ? sep[0] : '.', a->key_prefix = 0;
  return integers(json_object_get(meta, "chunks"), a->ndims, 1, a->chunks, "chunks", shown, err) ||
                 codecs_v2(a, meta, shown, err) ||
                 fill_value(a, json_object_get(meta, "fill_value"), shown, err)
             ? -1
             : 0;
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
  int rc = describe(a, meta, shown, err);
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
