/* The codecs' table (codec.h). */
#include <string.h>

#include "codec.h"

/* Named in messages and never written by parallel HDF5: 1.10.8's parallel
 * writes of szip chunks (libaec) read back as "szip_filter: decompression
 * failed" even on one rank, where h5repack's serial ones read fine. */
static const xio_codec szip = {
    .id = H5Z_FILTER_SZIP, .name = "szip", .role = XIO_CODEC_FOREIGN, .parallel_hdf5_fails = 1};

static const xio_codec *const table[] = {
    &xio_codec_shuffle, &xio_codec_deflate, &xio_codec_fletcher32, &szip,
    &xio_codec_gzip,    &xio_codec_zstd,    &xio_codec_blosc,      &xio_codec_crc32c};
enum { CODECS = sizeof table / sizeof *table };
_Static_assert((int)CODECS <= (int)XIO_CODEC_PLACES, "more codecs than places for their states");

const xio_codec *xio_codec_of(H5Z_filter_t id) {
  for (int i = 0; i < CODECS; i++)
    if (table[i]->id == id) return table[i];
  return NULL;
}

const xio_codec *xio_codec_at(int place) {
  return place >= 0 && place < CODECS ? table[place] : NULL;
}

int xio_codec_place(const xio_codec *codec) {
  for (int i = 0; i < CODECS; i++)
    if (table[i] == codec) return i;
  return -1;
}

const xio_codec *xio_codec_named(const char *name, int format) {
  for (int i = 0; name && i < CODECS; i++) {
    const char *named = format == 2 ? table[i]->zarr_v2 : table[i]->zarr_v3;
    if (named && strcmp(named, name) == 0) return table[i];
  }
  return NULL;
}

int xio_codec_runs(const xio_codec *c) {
  return c && (c->role == XIO_CODEC_TRANSFORM    ? c->transform != NULL
               : c->role == XIO_CODEC_CHECKSUM   ? c->sum != NULL && c->matches != NULL
               : c->role == XIO_CODEC_COMPRESSOR ? c->encode != NULL && c->decode != NULL
                                                 : 0);
}
