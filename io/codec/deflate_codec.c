/* HDF5's deflate filter (zlib streams) and Zarr's gzip codec (one gzip
 * member a chunk), through libdeflate (deflate.h, codec.h): without it
 * neither runs here, and HDF5 reads deflate's chunks itself. */
#include <stdlib.h>

#include "codec.h"
#include "deflate.h"

/* A thread's inflater, and its deflater of the level last asked for. */
typedef struct {
  xio_inflater *inflater;
  xio_deflater *deflater;
  int level;
} state;

static void *state_new(void) {
  state *s = calloc(1, sizeof *s);
  if (s && !(s->inflater = xio_inflater_new())) free(s), s = NULL;
  return s;
}

static void state_free(void *p) {
  state *s = p;
  if (!s) return;
  xio_inflater_free(s->inflater);
  xio_deflater_free(s->deflater);
  free(s);
}

static size_t zlib_bound(size_t bytes) { return xio_deflate_bound(NULL, bytes); } /* any level's */

#if defined(XIO_HAVE_LIBDEFLATE)
/* The deflater of `level`, kept while the level stays. */
static xio_deflater *deflater_for(state *s, int level) {
  if (s->deflater && s->level == level) return s->deflater;
  xio_deflater_free(s->deflater);
  s->level = level;
  return s->deflater = xio_deflater_new(level);
}

static size_t zlib_encode(void *s, unsigned level, unsigned option, const unsigned char *in,
                          size_t bytes, unsigned char *out, size_t room) {
  xio_deflater *d = deflater_for(s, (int)level);
  (void)option;
  return d ? xio_deflate(d, in, bytes, out, room) : 0;
}

static xio_inflate_result zlib_decode(void *s, const unsigned char *in, size_t bytes,
                                      unsigned char *out, size_t room, size_t *size) {
  return xio_inflate(((state *)s)->inflater, in, bytes, out, room, size);
}

static size_t gzip_encode(void *s, unsigned level, unsigned option, const unsigned char *in,
                          size_t bytes, unsigned char *out, size_t room) {
  xio_deflater *d = deflater_for(s, (int)level);
  (void)option;
  return d ? xio_gzip(d, in, bytes, out, room) : 0;
}

static xio_inflate_result gzip_decode(void *s, const unsigned char *in, size_t bytes,
                                      unsigned char *out, size_t room, size_t *size) {
  return xio_gunzip(((state *)s)->inflater, in, bytes, out, room, size);
}

#define WITH_LIBDEFLATE(f) f
#else /* neither runs */
#define WITH_LIBDEFLATE(f) NULL
#endif

const xio_codec xio_codec_deflate = {.id = H5Z_FILTER_DEFLATE,
                                     .name = "gzip",
                                     .zarr_v2 = "zlib",
                                     .role = XIO_CODEC_COMPRESSOR,
                                     .settings = XIO_SETTINGS_LEVEL,
                                     .most_level = 9,
                                     .default_level = 1,
                                     .verb = "inflate",
                                     .state_new = state_new,
                                     .state_free = state_free,
                                     .bound = zlib_bound,
                                     .encode = WITH_LIBDEFLATE(zlib_encode),
                                     .decode = WITH_LIBDEFLATE(zlib_decode)};

const xio_codec xio_codec_gzip = {.id = XIO_CODEC_GZIP,
                                  .name = "gzip",
                                  .zarr_v2 = "gzip",
                                  .zarr_v3 = "gzip",
                                  .role = XIO_CODEC_COMPRESSOR,
                                  .settings = XIO_SETTINGS_LEVEL,
                                  .most_level = 9,
                                  .default_level = 1,
                                  .verb = "inflate",
                                  .state_new = state_new,
                                  .state_free = state_free,
                                  .bound = xio_gzip_bound,
                                  .encode = WITH_LIBDEFLATE(gzip_encode),
                                  .decode = WITH_LIBDEFLATE(gzip_decode)};
