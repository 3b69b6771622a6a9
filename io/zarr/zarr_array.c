/* A Zarr array's metadata and chunk files (zarr_array.h). */
#define _POSIX_C_SOURCE 200809L
#include "zarr_array.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blosc_codec.h"
#include "codec.h"
#include "zarr_json.h"

static const char *const compressor_names[] = {"blosc-zstd", "blosc-lz4", "gzip", "zstd", "none"};
/* numcodecs' defaults but for Blosc-zstd's (zarr_array.h) */
static const int default_levels[] = {3, 5, 1, 1, 0};

int xio_zarr_compressor_of(const char *name, xio_zarr_compressor *compressor) {
  for (size_t i = 0; i < sizeof compressor_names / sizeof *compressor_names; i++)
    if (strcmp(name, compressor_names[i]) == 0) {
      *compressor = (xio_zarr_compressor)i;
      return 0;
    }
  return -1;
}

const char *xio_zarr_compressor_name(xio_zarr_compressor c) { return compressor_names[c]; }

/* The codecs' table's entry each compressor is (none: NULL). */
static const char *const compressor_codecs[] = {"blosc", "blosc", "gzip", "zstd", NULL};

/* The chunk codec's pipeline for the codec, values of type_size bytes. */
static void pipeline_of(const xio_zarr_codec *codec, size_t type_size, xio_filters *f) {
  memset(f, 0, sizeof *f);
  f->known = 1;
  const xio_codec *c = xio_codec_named(compressor_codecs[codec->compressor], 3);
  if (!c) return;
  f->count = 1;
  f->id[0] = c->id;
  f->value[0] = (unsigned)(codec->level >= 0 ? codec->level : default_levels[codec->compressor]);
  if (c->settings == XIO_SETTINGS_BLOSC)
    f->option[0] =
        xio_blosc_option(codec->compressor == XIO_ZARR_BLOSC_ZSTD ? XIO_BLOSC_ZSTD : XIO_BLOSC_LZ4,
                         1, (unsigned)type_size);
}

int xio_zarr_array_init(xio_zarr_array *a, const char *path, const xio_zarr_codec *codec,
                        hid_t type, const xio_shape *shape, const int64_t *chunks, const void *fill,
                        char *why, size_t why_size) {
  memset(a, 0, sizeof *a);
  const H5T_class_t cls = H5Tget_class(type);
  a->type_size = H5Tget_size(type);
  a->kind = cls == H5T_FLOAT     ? 'f'
            : cls == H5T_INTEGER ? (H5Tget_sign(type) == H5T_SGN_NONE ? 'u' : 'i')
            : cls == H5T_STRING && a->type_size == 1 && H5Tis_variable_str(type) <= 0
                ? 'S' /* netCDF's char */
                : 0;
  if (a->kind == 'S' && codec->format == 3) {
    snprintf(why, why_size, "Zarr v3 has no data type for characters: use --zarr-format 2");
    return -1;
  }
  if (!a->kind ||
      !(a->type_size == 1 || a->type_size == 2 || a->type_size == 4 || a->type_size == 8) ||
      (a->kind == 'f' && a->type_size < 4)) {
    snprintf(why, why_size,
             "Zarr stores take integers and floats of 1 to 8 bytes, and characters, not this type");
    return -1;
  }
  if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path) {
    snprintf(why, why_size, "the path is too long");
    return -1;
  }
  a->big_endian = H5Tget_order(type) == H5T_ORDER_BE;
  a->format = codec->format;
  a->separator = codec->format == 3 ? '/' : '.';
  a->key_prefix = codec->format == 3;
  a->codec = *codec;
  a->ndims = shape->ndims;
  for (int i = 0; i < a->ndims; i++) a->shape[i] = shape->dims[i], a->chunks[i] = chunks[i];
  pipeline_of(codec, a->type_size, &a->codecs);
  if (fill) memcpy(a->fill, fill, a->type_size), a->has_fill = 1;
  return 0;
}

int xio_zarr_array_shard(xio_zarr_array *a, const int64_t *shard, char *why, size_t why_size) {
  if (a->format != 3) {
    snprintf(why, why_size, "shards are Zarr v3's: --zarr-format 3");
    return -1;
  }
  xio_shard_layout l = {.ndims = a->ndims, .type_size = a->type_size, .codecs = a->codecs};
  int grouped = 0;
  for (int i = 0; i < a->ndims; i++) {
    const int64_t inner = a->chunks[i], whole = (a->shape[i] + inner - 1) / inner * inner;
    int64_t n = (shard[i] + inner - 1) / inner * inner;
    if (n > whole) n = whole > inner ? whole : inner;
    l.inner[i] = inner, l.shard[i] = n;
    grouped |= n > inner;
  }
  if (!grouped) return 0; /* a shard of one chunk: its index only costs */
  a->shards = l;
  for (int i = 0; i < a->ndims; i++) a->chunks[i] = l.shard[i];
  a->sharded = 1;
  return 0;
}

/* Chunks of `chunk` values along each axis of a's shape, in groups of
 * `group` chunks: how many groups. */
static int64_t groups(const xio_zarr_array *a, const int64_t *chunk, const int64_t *group) {
  int64_t n = 1;
  for (int i = 0; i < a->ndims; i++) {
    const int64_t along = (a->shape[i] + chunk[i] - 1) / chunk[i];
    n *= (along + group[i] - 1) / group[i];
  }
  return n;
}

int xio_zarr_default_shards(const xio_zarr_array *a, uint64_t most_bytes, int64_t *shard) {
  int64_t group[XIO_MAX_DIMS];
  for (int i = 0; i < a->ndims; i++) group[i] = 1;
  uint64_t bytes = xio_zarr_chunk_bytes(a);
  int grouped = 0;
  while (a->format == 3 && !a->sharded && groups(a, a->chunks, group) > XIO_ZARR_MANY_FILES &&
         bytes * 2 <= most_bytes) {
    int widest = -1;
    int64_t most = 1;
    for (int i = 0; i < a->ndims; i++) {
      const int64_t along = (a->shape[i] + a->chunks[i] - 1) / a->chunks[i];
      const int64_t left = (along + group[i] - 1) / group[i];
      if (left > 1 && left >= most) most = left, widest = i;
    }
    if (widest < 0) break;
    group[widest] *= 2, bytes *= 2, grouped = 1;
  }
  for (int i = 0; i < a->ndims; i++) shard[i] = a->chunks[i] * group[i];
  return grouped;
}

int64_t xio_zarr_files(const xio_zarr_array *a) {
  int64_t one[XIO_MAX_DIMS];
  for (int i = 0; i < a->ndims; i++) one[i] = 1;
  return groups(a, a->chunks, one);
}

size_t xio_zarr_chunk_bytes(const xio_zarr_array *a) {
  size_t bytes = a->type_size;
  for (int i = 0; i < a->ndims; i++) bytes *= (size_t)a->chunks[i];
  return bytes;
}

/* Every directory of `path` made, as mkdir -p does. */
static int make_dirs(const char *path, xio_error *err) {
  char at[4096];
  snprintf(at, sizeof at, "%s", path);
  for (char *slash = strchr(at + 1, '/');; slash = strchr(slash + 1, '/')) {
    if (slash) *slash = '\0';
    if (mkdir(at, 0777) != 0 && errno != EEXIST)
      return xio_fail(err, "cannot make the directory %s: %s", at, strerror(errno));
    if (!slash) return 0;
    *slash = '/';
  }
}

/* `text` written as the file `dir`/`name`. */
static int write_text(const char *dir, const char *name, const char *text, xio_error *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) return xio_fail(err, "cannot write %s: %s", path, strerror(errno));
  const size_t n = strlen(text);
  const int wrote = fwrite(text, 1, n, f) == n && fputc('\n', f) != EOF;
  const int saved = errno;
  if (fclose(f) != 0 || !wrote)
    return xio_fail(err, "cannot write %s: %s", path, strerror(wrote ? errno : saved));
  return 0;
}

/* The fill value as a JSON number (or Zarr's "NaN", or v2's null). */
static void fill_json(const xio_zarr_array *a, xio_json *j) {
  if ((!a->has_fill && a->format == 2) || a->kind == 'S') return xio_json_null(j);
  unsigned char v[16] = {0};
  if (a->has_fill)
    for (size_t b = 0; b < a->type_size; b++) /* to this machine's order (little-endian) */
      v[b] = a->fill[a->big_endian ? a->type_size - 1 - b : b];
  if (a->kind == 'f' && a->type_size == 4) {
    float x;
    memcpy(&x, v, 4);
    return xio_json_float(j, x);
  }
  if (a->kind == 'f') {
    double x;
    memcpy(&x, v, 8);
    return xio_json_double(j, x);
  }
  uint64_t u = 0;
  memcpy(&u, v, a->type_size);
  if (a->kind == 'u') return xio_json_uint(j, u);
  const int shift = 64 - 8 * (int)a->type_size; /* sign-extended */
  xio_json_int(j, shift ? (int64_t)(u << shift) >> shift : (int64_t)u);
}

static void ints_json(xio_json *j, const int64_t *v, int n) {
  xio_json_open(j, '[');
  for (int i = 0; i < n; i++) xio_json_int(j, v[i]);
  xio_json_close(j, ']');
}

static void names_json(xio_json *j, char names[][128], int n) {
  xio_json_open(j, '[');
  for (int i = 0; i < n; i++) xio_json_string(j, names[i]);
  xio_json_close(j, ']');
}

/* A compressor's settings as Zarr's metadata carries them (codec.h's
 * settings), the codec's name and its JSON object's opening being the
 * caller's. */
static void compressor_settings(const xio_zarr_array *a, const xio_codec *c, xio_json *j) {
  const xio_filters *f = &a->codecs;
  if (c->settings == XIO_SETTINGS_BLOSC) {
    xio_json_key(j, "cname"), xio_json_string(j, xio_blosc_cname(f->option[0] & 0xff));
    xio_json_key(j, "clevel"), xio_json_int(j, f->value[0]);
    if (a->format == 2) {
      xio_json_key(j, "shuffle"), xio_json_int(j, f->option[0] >> 8 & 0xff);
    } else {
      xio_json_key(j, "shuffle"), xio_json_string(j, "shuffle");
      xio_json_key(j, "typesize"), xio_json_int(j, (int64_t)a->type_size);
    }
    xio_json_key(j, "blocksize"), xio_json_int(j, 0);
    return;
  }
  xio_json_key(j, "level"), xio_json_int(j, f->value[0]);
  if (c->settings == XIO_SETTINGS_ZSTD && a->format == 3)
    xio_json_key(j, "checksum"), xio_json_bool(j, 0);
}

/* v2's compressor object, as numcodecs writes it. */
static void compressor_v2(const xio_zarr_array *a, xio_json *j) {
  const xio_filters *f = &a->codecs;
  if (!f->count) return xio_json_null(j);
  const xio_codec *c = xio_codec_of(f->id[0]);
  xio_json_open(j, '{');
  xio_json_key(j, "id"), xio_json_string(j, c->zarr_v2);
  compressor_settings(a, c, j);
  xio_json_close(j, '}');
}

static void metadata_v2(const xio_zarr_array *a, xio_json *j) {
  static const char *const endian = "<>";
  char dtype[8];
  snprintf(dtype, sizeof dtype, "%c%c%zu", a->type_size == 1 ? '|' : endian[a->big_endian], a->kind,
           a->type_size);
  xio_json_open(j, '{');
  xio_json_key(j, "zarr_format"), xio_json_int(j, 2);
  xio_json_key(j, "shape"), ints_json(j, a->shape, a->ndims);
  xio_json_key(j, "chunks"), ints_json(j, a->chunks, a->ndims);
  xio_json_key(j, "dtype"), xio_json_string(j, dtype);
  xio_json_key(j, "compressor"), compressor_v2(a, j);
  xio_json_key(j, "fill_value"), fill_json(a, j);
  xio_json_key(j, "order"), xio_json_string(j, "C");
  xio_json_key(j, "filters"), xio_json_null(j);
  xio_json_key(j, "dimension_separator"), xio_json_string(j, ".");
  xio_json_close(j, '}');
}

/* v3's codecs: bytes, then the compressor. */
static void codecs_v3(const xio_zarr_array *a, xio_json *j) {
  const xio_filters *f = &a->codecs;
  xio_json_open(j, '[');
  xio_json_open(j, '{');
  xio_json_key(j, "name"), xio_json_string(j, "bytes");
  if (a->type_size > 1) {
    xio_json_key(j, "configuration"), xio_json_open(j, '{');
    xio_json_key(j, "endian"), xio_json_string(j, a->big_endian ? "big" : "little");
    xio_json_close(j, '}');
  }
  xio_json_close(j, '}');
  if (f->count) {
    const xio_codec *c = xio_codec_of(f->id[0]);
    xio_json_open(j, '{');
    xio_json_key(j, "name"), xio_json_string(j, c->zarr_v3);
    xio_json_key(j, "configuration"), xio_json_open(j, '{');
    compressor_settings(a, c, j);
    xio_json_close(j, '}');
    xio_json_close(j, '}');
  }
  xio_json_close(j, ']');
}

/* v3's sharding_indexed codec around the inner codecs. */
static void sharding_v3(const xio_zarr_array *a, xio_json *j) {
  xio_json_open(j, '[');
  xio_json_open(j, '{');
  xio_json_key(j, "name"), xio_json_string(j, "sharding_indexed");
  xio_json_key(j, "configuration"), xio_json_open(j, '{');
  xio_json_key(j, "chunk_shape"), ints_json(j, a->shards.inner, a->ndims);
  xio_json_key(j, "codecs"), codecs_v3(a, j);
  xio_json_key(j, "index_codecs");
  xio_json_raw(j,
               "[{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}}, "
               "{\"name\": \"crc32c\"}]");
  xio_json_key(j, "index_location"), xio_json_string(j, "end");
  xio_json_close(j, '}');
  xio_json_close(j, '}');
  xio_json_close(j, ']');
}

static void metadata_v3(const xio_zarr_array *a, char names[][128], const char *attributes,
                        xio_json *j) {
  static const char *const float_names[] = {"float32", "float64"};
  char data_type[16];
  if (a->kind == 'f')
    snprintf(data_type, sizeof data_type, "%s", float_names[a->type_size == 8]);
  else
    snprintf(data_type, sizeof data_type, "%sint%zu", a->kind == 'u' ? "u" : "", 8 * a->type_size);
  xio_json_open(j, '{');
  xio_json_key(j, "zarr_format"), xio_json_int(j, 3);
  xio_json_key(j, "node_type"), xio_json_string(j, "array");
  xio_json_key(j, "shape"), ints_json(j, a->shape, a->ndims);
  xio_json_key(j, "data_type"), xio_json_string(j, data_type);
  xio_json_key(j, "chunk_grid"), xio_json_open(j, '{');
  xio_json_key(j, "name"), xio_json_string(j, "regular");
  xio_json_key(j, "configuration"), xio_json_open(j, '{');
  xio_json_key(j, "chunk_shape"), ints_json(j, a->chunks, a->ndims);
  xio_json_close(j, '}'), xio_json_close(j, '}');
  xio_json_key(j, "chunk_key_encoding"), xio_json_open(j, '{');
  xio_json_key(j, "name"), xio_json_string(j, "default");
  xio_json_key(j, "configuration"), xio_json_open(j, '{');
  xio_json_key(j, "separator"), xio_json_string(j, "/");
  xio_json_close(j, '}'), xio_json_close(j, '}');
  xio_json_key(j, "fill_value"), fill_json(a, j);
  xio_json_key(j, "codecs");
  if (a->sharded)
    sharding_v3(a, j);
  else
    codecs_v3(a, j);
  xio_json_key(j, "attributes"), xio_json_raw(j, attributes ? attributes : "{}");
  if (a->ndims) xio_json_key(j, "dimension_names"), names_json(j, names, a->ndims);
  xio_json_close(j, '}');
}

/* v2's .zattrs: the attributes, with xarray's _ARRAY_DIMENSIONS first. */
static void attributes_v2(const xio_zarr_array *a, char names[][128], const char *attributes,
                          xio_json *j) {
  xio_json_open(j, '{');
  xio_json_key(j, "_ARRAY_DIMENSIONS"), names_json(j, names, a->ndims);
  xio_json_close(j, '}');
  const char *inner = attributes ? strchr(attributes, '{') : NULL;
  if (j->failed || !inner) return;
  while (*++inner == ' ' || *inner == '\n') {
  }
  if (*inner == '}') return;
  j->length--; /* the closing brace: the others follow, then theirs */
  xio_json_raw(j, inner);
}

int xio_zarr_array_create(const xio_zarr_array *a, char names[][128], const char *attributes,
                          xio_error *err) {
  if (make_dirs(a->path, err)) return -1;
  xio_json meta, attrs;
  xio_json_init(&meta), xio_json_init(&attrs);
  if (a->format == 2)
    metadata_v2(a, &meta), attributes_v2(a, names, attributes, &attrs);
  else
    metadata_v3(a, names, attributes, &meta);
  int rc = meta.failed || attrs.failed
               ? xio_fail(err, "out of memory writing %s's metadata", a->path)
           : a->format == 2 ? (write_text(a->path, ".zarray", meta.text, err) ||
                               write_text(a->path, ".zattrs", attrs.text, err))
                                  ? -1
                                  : 0
                            : write_text(a->path, "zarr.json", meta.text, err);
  xio_json_free(&meta), xio_json_free(&attrs);
  return rc;
}

int xio_zarr_group_create(const char *path, int format, const char *attributes, xio_error *err) {
  if (make_dirs(path, err)) return -1;
  if (format == 2)
    return write_text(path, ".zgroup", "{\"zarr_format\": 2}", err) ||
                   write_text(path, ".zattrs", attributes ? attributes : "{}", err)
               ? -1
               : 0;
  xio_json j;
  xio_json_init(&j);
  xio_json_open(&j, '{');
  xio_json_key(&j, "zarr_format"), xio_json_int(&j, 3);
  xio_json_key(&j, "node_type"), xio_json_string(&j, "group");
  xio_json_key(&j, "attributes"), xio_json_raw(&j, attributes ? attributes : "{}");
  xio_json_close(&j, '}');
  const int rc = j.failed ? xio_fail(err, "out of memory writing %s's metadata", path)
                          : write_text(path, "zarr.json", j.text, err);
  xio_json_free(&j);
  return rc;
}

int xio_zarr_chunk_path(const xio_zarr_array *a, const int64_t *origin, char *path, size_t size) {
  int n = snprintf(path, size, "%s/%s", a->path, a->key_prefix ? "c" : "");
  if (a->ndims == 0 && !a->key_prefix && n > 0 && (size_t)n < size)
    n += snprintf(path + n, size - (size_t)n, "0");
  for (int i = 0; i < a->ndims && n > 0 && (size_t)n < size; i++) {
    const char separator[2] = {a->separator, '\0'};
    n += snprintf(path + n, size - (size_t)n, "%s%lld", i || a->key_prefix ? separator : "",
                  (long long)(origin[i] / a->chunks[i]));
  }
  return n > 0 && (size_t)n < size ? 0 : -1;
}

int xio_zarr_put_chunk(const xio_zarr_array *a, const int64_t *origin, const void *bytes,
                       size_t size, xio_error *err) {
  char path[4400];
  if (xio_zarr_chunk_path(a, origin, path, sizeof path))
    return xio_fail(err, "a chunk's path in %s is too long", a->path);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0 && errno == ENOENT && a->separator == '/') { /* its directories first */
    char *slash = strrchr(path, '/');
    *slash = '\0';
    if (make_dirs(path, err)) return -1;
    *slash = '/';
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  }
  if (fd < 0) return xio_fail(err, "cannot write %s: %s", path, strerror(errno));
  const unsigned char *at = bytes;
  for (size_t left = size; left;) {
    const ssize_t n = write(fd, at, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = n < 0 ? errno : ENOSPC;
      (void)close(fd);
      return xio_fail(err, "writing %s failed: %s", path, strerror(saved));
    }
    at += n, left -= (size_t)n;
  }
  if (close(fd) != 0) return xio_fail(err, "writing %s failed: %s", path, strerror(errno));
  return 0;
}

static int put(void *target, const int64_t *origin, const void *bytes, size_t size,
               xio_error *err) {
  return xio_zarr_put_chunk(target, origin, bytes, size, err);
}

static int path_of(const void *target, const int64_t *origin, char *path, size_t size) {
  return xio_zarr_chunk_path(target, origin, path, size);
}

static int list_of(const void *target, int64_t **numbers, int64_t *count) {
  return xio_zarr_list_chunks(target, numbers, count);
}

void xio_zarr_chunk_files(const xio_zarr_array *a, xio_chunk_files *files) {
  memset(files, 0, sizeof *files);
  files->filters = a->codecs;
  for (int i = 0; i < a->ndims; i++) files->chunk[i] = a->chunks[i];
  files->fill = a->has_fill ? a->fill : NULL;
  files->shards = a->sharded ? &a->shards : NULL;
  files->put = put;
  files->path = path_of;
  files->list = list_of;
  files->target = (void *)a;
}
