/* An array's codecs read back (zarr_meta_parts.h): numcodecs' ids of v2
 * and the codecs of v3, each field checked before it is used. */
#include <stdio.h>
#include <string.h>

#include "blosc_codec.h"
#include "codec.h"
#include "zarr_meta_parts.h"

/* An integer setting at `key` of codec `name`'s JSON `c`, in [least,
 * most], or `otherwise` where the JSON does not give it. */
static int setting(json_t *c, const char *key, json_int_t least, json_int_t most,
                   json_int_t otherwise, const char *name, const char *shown, json_int_t *v,
                   xio_error *err) {
  json_t *x = json_object_get(c, key);
  *v = otherwise;
  if (!x) return 0;
  if (json_is_integer(x) && json_integer_value(x) >= least && json_integer_value(x) <= most)
    return *v = json_integer_value(x), 0;
  char text[80];
  xio_zarr_json_shown(x, text, sizeof text);
  return xio_fail(err, "%s: its codec %s's %s is %s, not an integer from %lld to %lld", shown, name,
                  key, text, (long long)least, (long long)most);
}

/* Blosc's settings: v2's shuffle an integer (-1 automatic, 0, 1, 2),
 * v3's a name; into option, as blosc_codec.h packs them. */
static int blosc(xio_zarr_array *a, json_t *c, const char *shown, unsigned *option,
                 xio_error *err) {
  const char *cname = json_string_value(json_object_get(c, "cname"));
  const char *by = json_string_value(json_object_get(c, "shuffle"));
  json_int_t shuffle = 0;
  xio_blosc_name name;
  if (!cname || xio_blosc_name_of(cname, &name)) {
    char text[80];
    xio_zarr_json_shown(json_object_get(c, "cname"), text, sizeof text);
    return xio_fail(err,
                    "%s: its Blosc compressor (cname) is %s, not one xpose reads (lz4, lz4hc, "
                    "blosclz, zstd, zlib)",
                    shown, text);
  }
  if (by && strcmp(by, "noshuffle") && strcmp(by, "shuffle") && strcmp(by, "bitshuffle"))
    return xio_fail(err, "%s: its codec blosc's shuffle is \"%s\", not one of Blosc's", shown, by);
  if (by)
    shuffle = strcmp(by, "bitshuffle") == 0 ? 2 : strcmp(by, "shuffle") == 0;
  else if (setting(c, "shuffle", -1, 2, 1, "blosc", shown, &shuffle, err))
    return -1;
  *option = xio_blosc_option(name, shuffle > 0 ? (unsigned)shuffle : 0u, (unsigned)a->type_size);
  a->codec.compressor = name == XIO_BLOSC_ZSTD ? XIO_ZARR_BLOSC_ZSTD : XIO_ZARR_BLOSC_LZ4;
  return 0;
}

/* One bytes-to-bytes codec (numcodecs' id or v3's name, its settings in
 * `c`, an object) appended to the pipeline: the codecs' table's entry of
 * that name (codec.h), its settings as the entry says Zarr gives them. */
static int add_codec(xio_zarr_array *a, xio_filters *f, const char *name, json_t *c,
                     const char *shown, xio_error *err) {
  const xio_codec *codec = xio_codec_named(name, a->format);
  if (f->count == XIO_MAX_FILTERS) return xio_fail(err, "%s: it has too many codecs", shown);
  if (!xio_codec_runs(codec))
    return xio_fail(err,
                    "%s: its codec \"%s\" is not one xpose reads (Blosc, zlib, gzip, zstd, "
                    "shuffle, crc32c)",
                    shown, name);
  if (c && !json_is_object(c)) {
    char text[80];
    xio_zarr_json_shown(c, text, sizeof text);
    return xio_fail(err, "%s: its codec %s's configuration is %s, not an object", shown, name,
                    text);
  }
  json_int_t level = codec->default_level;
  const int i = f->count;
  const xio_codec_settings kind = codec->settings;
  const char *key = kind == XIO_SETTINGS_ELEMENT_SIZE ? "elementsize"
                    : kind == XIO_SETTINGS_BLOSC      ? "clevel"
                                                      : "level";
  if (kind != XIO_SETTINGS_NONE && setting(c, key, codec->least_level, codec->most_level,
                                           codec->default_level, name, shown, &level, err))
    return -1;
  if (kind == XIO_SETTINGS_BLOSC && blosc(a, c, shown, &f->option[i], err)) return -1;
  if (codec->role == XIO_CODEC_COMPRESSOR && kind != XIO_SETTINGS_BLOSC)
    (void)xio_zarr_compressor_of(codec->name, &a->codec.compressor); /* "gzip", "zstd" */
  f->id[i] = codec->id;
  f->value[i] = (unsigned)(level > 0 ? level : 0);
  f->count++;
  return 0;
}

/* A codec's name: v2's "id", v3's "name", a string. */
static const char *codec_name(json_t *c, const char *key, const char *shown, xio_error *err) {
  const char *name = json_string_value(json_object_get(c, key));
  if (name) return name;
  char text[80];
  xio_zarr_json_shown(c, text, sizeof text);
  xio_fail(err, "%s: its codec %s has no %s", shown, text, key);
  return NULL;
}

int xio_zarr_codecs_v2(xio_zarr_array *a, json_t *meta, const char *shown, xio_error *err) {
  xio_filters *f = &a->codecs;
  json_t *filters = json_object_get(meta, "filters"),
         *compressor = json_object_get(meta, "compressor");
  size_t i;
  json_t *c;
  char text[80];
  if (filters && !json_is_null(filters) && !json_is_array(filters)) {
    xio_zarr_json_shown(filters, text, sizeof text);
    return xio_fail(err, "%s: its filters are %s, not a list", shown, text);
  }
  json_array_foreach(filters, i, c) {
    const char *id = codec_name(c, "id", shown, err);
    if (!id || add_codec(a, f, id, c, shown, err)) return -1;
  }
  if (compressor && !json_is_null(compressor)) {
    const char *id = codec_name(compressor, "id", shown, err);
    if (!id || add_codec(a, f, id, compressor, shown, err)) return -1;
  } else if (!f->count) {
    a->codec.compressor = XIO_ZARR_UNCOMPRESSED;
  }
  return 0;
}

/* v3's "bytes": its endian, which values of more than one byte must say. */
static int bytes_codec(xio_zarr_array *a, json_t *c, const char *shown, xio_error *err) {
  json_t *config = json_object_get(c, "configuration");
  json_t *endian = json_object_get(config, "endian");
  const char *e = json_string_value(endian);
  if ((config && !json_is_object(config)) || (endian && !e) ||
      (e && strcmp(e, "little") && strcmp(e, "big")) || (!e && a->type_size > 1)) {
    char text[80];
    xio_zarr_json_shown(config, text, sizeof text);
    return xio_fail(err,
                    "%s: its codec bytes's configuration is %s: values of %zu bytes take an "
                    "\"endian\" of \"little\" or \"big\"",
                    shown, text, a->type_size);
  }
  a->big_endian = e && strcmp(e, "big") == 0 && a->type_size > 1;
  return 0;
}

/* A chain of v3's codecs (an array's, or a shard's inner chunks'):
 * "bytes" first, then bytes-to-bytes codecs into f. */
static int chain_v3(xio_zarr_array *a, json_t *list, xio_filters *f, const char *shown,
                    xio_error *err) {
  size_t i;
  json_t *c;
  char text[80];
  if (!json_is_array(list) || json_array_size(list) == 0) {
    xio_zarr_json_shown(list, text, sizeof text);
    return xio_fail(err, "%s: its codecs are %s, not a list of codecs", shown, text);
  }
  json_array_foreach(list, i, c) {
    const char *name = codec_name(c, "name", shown, err);
    if (!name) return -1;
    if (i == 0 && strcmp(name, "bytes") != 0)
      return xio_fail(err,
                      "%s: its codec \"%s\" before \"bytes\" is not one xpose reads (it reads "
                      "arrays in C order: no transpose)",
                      shown, name);
    if (i == 0 ? bytes_codec(a, c, shown, err)
               : add_codec(a, f, name, json_object_get(c, "configuration"), shown, err))
      return -1;
  }
  if (!f->count) a->codec.compressor = XIO_ZARR_UNCOMPRESSED;
  return 0;
}

/* Whether a shard's index codecs are what xpose reads: "bytes"
 * (little-endian) then "crc32c". */
static int index_codecs(json_t *index) {
  json_t *bytes = json_array_get(index, 0), *crc = json_array_get(index, 1);
  const char *endian =
      json_string_value(json_object_get(json_object_get(bytes, "configuration"), "endian"));
  const char *first = json_string_value(json_object_get(bytes, "name"));
  const char *second = json_string_value(json_object_get(crc, "name"));
  json_t *config = json_object_get(bytes, "configuration");
  return json_array_size(index) == 2 && first && strcmp(first, "bytes") == 0 &&
         (!config || json_is_object(config)) &&
         (!json_object_get(config, "endian") || (endian && strcmp(endian, "little") == 0)) &&
         second && strcmp(second, "crc32c") == 0;
}

/* v3's sharding_indexed: the grid's chunks are shards of inner chunks. */
static int sharding_v3(xio_zarr_array *a, json_t *config, const char *shown, xio_error *err) {
  xio_shard_layout *l = &a->shards;
  *l = (xio_shard_layout){.ndims = a->ndims, .type_size = a->type_size};
  json_t *where = json_object_get(config, "index_location");
  char text[80];
  if (!json_is_object(config)) {
    xio_zarr_json_shown(config, text, sizeof text);
    return xio_fail(err, "%s: its sharding_indexed's configuration is %s, not an object", shown,
                    text);
  }
  if (where && (!json_is_string(where) || strcmp(json_string_value(where), "end") != 0)) {
    xio_zarr_json_shown(where, text, sizeof text);
    return xio_fail(err, "%s: its shards' index_location is %s: xpose reads it at the end", shown,
                    text);
  }
  if (!index_codecs(json_object_get(config, "index_codecs"))) {
    xio_zarr_json_shown(json_object_get(config, "index_codecs"), text, sizeof text);
    return xio_fail(err,
                    "%s: its shards' index_codecs are %s, not \"bytes\" (little-endian) then "
                    "\"crc32c\"",
                    shown, text);
  }
  if (xio_zarr_integers(json_object_get(config, "chunk_shape"), a->ndims, 1, l->inner,
                        "shards' inner chunk_shape", shown, err) ||
      chain_v3(a, json_object_get(config, "codecs"), &l->codecs, shown, err))
    return -1;
  for (int i = 0; i < a->ndims; i++) {
    if (a->chunks[i] % l->inner[i])
      return xio_fail(err,
                      "%s: its shards (chunk_shape) of %lld along axis %d are not whole inner "
                      "chunks of %lld",
                      shown, (long long)a->chunks[i], i, (long long)l->inner[i]);
    l->shard[i] = a->chunks[i];
  }
  a->codecs = l->codecs;
  a->sharded = 1;
  return 0;
}

int xio_zarr_codecs_v3(xio_zarr_array *a, json_t *codecs, const char *shown, xio_error *err) {
  json_t *first = json_array_get(codecs, 0);
  const char *name = json_string_value(json_object_get(first, "name"));
  if (!name || strcmp(name, "sharding_indexed") != 0)
    return chain_v3(a, codecs, &a->codecs, shown, err);
  if (json_array_size(codecs) != 1)
    return xio_fail(err, "%s: codecs after sharding_indexed are not read by xpose", shown);
  return sharding_v3(a, json_object_get(first, "configuration"), shown, err);
}
