/* Zarr's zstd codec through libzstd (codec.h): numcodecs' streams, one
 * frame each. */
#include <stdlib.h>
#include <zstd.h>

#include "codec.h"

/* A thread's contexts, kept from one chunk to the next. */
typedef struct {
  ZSTD_CCtx *compress;
  ZSTD_DCtx *decompress;
} contexts;

static void *state_new(void) { return calloc(1, sizeof(contexts)); }

static void state_free(void *state) {
  contexts *z = state;
  if (!z) return;
  ZSTD_freeCCtx(z->compress);
  ZSTD_freeDCtx(z->decompress);
  free(z);
}

static size_t bound(size_t bytes) { return ZSTD_compressBound(bytes); }

static size_t encode(void *state, unsigned level, unsigned option, const unsigned char *in,
                     size_t bytes, unsigned char *out, size_t room) {
  contexts *z = state;
  (void)option;
  if (!z->compress && !(z->compress = ZSTD_createCCtx())) return 0;
  const size_t packed = ZSTD_compressCCtx(z->compress, out, room, in, bytes, (int)level);
  return ZSTD_isError(packed) ? 0 : packed;
}

static xio_inflate_result decode(void *state, const unsigned char *in, size_t bytes,
                                 unsigned char *out, size_t room, size_t *size) {
  contexts *z = state;
  const unsigned long long content = ZSTD_getFrameContentSize(in, bytes);
  *size = content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN ? 0 : content;
  if (*size > room) return XIO_INFLATE_LONG;
  if (!z->decompress && !(z->decompress = ZSTD_createDCtx())) return XIO_INFLATE_BAD;
  const size_t got = ZSTD_decompressDCtx(z->decompress, out, room, in, bytes);
  if (ZSTD_isError(got)) return XIO_INFLATE_BAD;
  *size = got;
  return XIO_INFLATED;
}

const xio_codec xio_codec_zstd = {.id = XIO_CODEC_ZSTD,
                                  .name = "zstd",
                                  .zarr_v2 = "zstd",
                                  .zarr_v3 = "zstd",
                                  .role = XIO_CODEC_COMPRESSOR,
                                  .settings = XIO_SETTINGS_ZSTD,
                                  .least_level = -131072,
                                  .most_level = 22,
                                  .default_level = 1,
                                  .verb = "decompress (zstd)",
                                  .state_new = state_new,
                                  .state_free = state_free,
                                  .bound = bound,
                                  .encode = encode,
                                  .decode = decode};
