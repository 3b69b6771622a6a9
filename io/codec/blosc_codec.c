/* Zarr's Blosc codec through c-blosc (blosc_codec.h, codec.h): what numcodecs
 * writes and reads. */
#include "blosc_codec.h"

#include <blosc.h>
#include <string.h>

#include "codec.h"

static const char *const blosc_names[] = {"lz4", "zstd", "blosclz", "lz4hc", "zlib"};

const char *xio_blosc_cname(xio_blosc_name name) {
  return (unsigned)name < sizeof blosc_names / sizeof *blosc_names ? blosc_names[name] : NULL;
}

int xio_blosc_name_of(const char *cname, xio_blosc_name *name) {
  for (size_t i = 0; i < sizeof blosc_names / sizeof *blosc_names; i++)
    if (strcmp(cname, blosc_names[i]) == 0) {
      *name = (xio_blosc_name)i;
      return 0;
    }
  return -1;
}

static size_t bound(size_t bytes) { return bytes + BLOSC_MAX_OVERHEAD; }

static size_t encode(void *state, unsigned level, unsigned option, const unsigned char *in,
                     size_t bytes, unsigned char *out, size_t room) {
  (void)state;
  const char *cname = xio_blosc_cname((xio_blosc_name)(option & 0xff));
  const size_t type_size = option >> 16 ? option >> 16 : 1;
  if (!cname || bytes > BLOSC_MAX_BUFFERSIZE) return 0;
  /* blocksize 0: Blosc's own choice; one thread: the pool runs a chunk per thread */
  const int packed = blosc_compress_ctx((int)level, (int)(option >> 8 & 0xff), type_size, bytes, in,
                                        out, room, cname, 0, 1);
  return packed > 0 ? (size_t)packed : 0;
}

static xio_inflate_result decode(void *state, const unsigned char *in, size_t bytes,
                                 unsigned char *out, size_t room, size_t *size) {
  size_t content = 0, stored = 0, block = 0;
  (void)state;
  *size = 0;
  if (bytes < BLOSC_MIN_HEADER_LENGTH) return XIO_INFLATE_BAD;
  blosc_cbuffer_sizes(in, &content, &stored, &block);
  *size = content;
  if (content > room) return XIO_INFLATE_LONG;
  if (stored != bytes || block > content) return XIO_INFLATE_BAD;
  /* into exactly its content, as numcodecs decodes: given more room, Blosc
   * accepts a header whose block is larger than its content (damage) */
  const int got = blosc_decompress_ctx(in, out, content, 1);
  return got >= 0 && (size_t)got == content ? XIO_INFLATED : XIO_INFLATE_BAD;
}

const xio_codec xio_codec_blosc = {.id = XIO_CODEC_BLOSC,
                                   .name = "blosc",
                                   .zarr_v2 = "blosc",
                                   .zarr_v3 = "blosc",
                                   .role = XIO_CODEC_COMPRESSOR,
                                   .settings = XIO_SETTINGS_BLOSC,
                                   .most_level = 9,
                                   .default_level = 5,
                                   .verb = "decompress (Blosc)",
                                   .bound = bound,
                                   .encode = encode,
                                   .decode = decode};
