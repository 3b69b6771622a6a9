/* Zarr's codecs: zstd and Blosc through their libraries, crc32c here
 * (zarr_codecs.h); gzip's streams are libdeflate's (deflate.h). */
#include "zarr_codecs.h"

#include <blosc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

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

size_t xio_zstd_bound(size_t bytes) { return ZSTD_compressBound(bytes); }

size_t xio_blosc_bound(size_t bytes) { return bytes + BLOSC_MAX_OVERHEAD; }

struct xio_zstd {
  ZSTD_CCtx *compress;
  ZSTD_DCtx *decompress;
};

xio_zstd *xio_zstd_new(void) { return calloc(1, sizeof(xio_zstd)); }

void xio_zstd_free(xio_zstd *z) {
  if (!z) return;
  ZSTD_freeCCtx(z->compress);
  ZSTD_freeDCtx(z->decompress);
  free(z);
}

size_t xio_zstd_compress(xio_zstd *z, int level, const void *in, size_t bytes, void *out,
                         size_t room) {
  if (!z->compress && !(z->compress = ZSTD_createCCtx())) return 0;
  const size_t packed = ZSTD_compressCCtx(z->compress, out, room, in, bytes, level);
  return ZSTD_isError(packed) ? 0 : packed;
}

int xio_zstd_decompress(xio_zstd *z, const void *in, size_t bytes, void *out, size_t room,
                        size_t *size) {
  const unsigned long long content = ZSTD_getFrameContentSize(in, bytes);
  *size = content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN ? 0 : content;
  if (*size > room || (!z->decompress && !(z->decompress = ZSTD_createDCtx()))) return -1;
  const size_t got = ZSTD_decompressDCtx(z->decompress, out, room, in, bytes);
  if (ZSTD_isError(got)) return -1;
  *size = got;
  return 0;
}

size_t xio_blosc_compress(int level, unsigned option, const void *in, size_t bytes, void *out,
                          size_t room) {
  const char *cname = xio_blosc_cname((xio_blosc_name)(option & 0xff));
  const size_t type_size = option >> 16 ? option >> 16 : 1;
  if (!cname || bytes > BLOSC_MAX_BUFFERSIZE) return 0;
  /* blocksize 0: Blosc's own choice; one thread: the pool runs a chunk per thread */
  const int packed = blosc_compress_ctx(level, (int)(option >> 8 & 0xff), type_size, bytes, in, out,
                                        room, cname, 0, 1);
  return packed > 0 ? (size_t)packed : 0;
}

int xio_blosc_decompress(const void *in, size_t bytes, void *out, size_t room, size_t *size) {
  size_t content = 0, stored = 0, block = 0;
  *size = 0;
  if (bytes < BLOSC_MIN_HEADER_LENGTH) return -1;
  blosc_cbuffer_sizes(in, &content, &stored, &block);
  *size = content;
  if (stored != bytes || content > room || block > content) return -1;
  /* into exactly its content, as numcodecs decodes: given more room, Blosc
   * accepts a header whose block is larger than its content (damage) */
  const int got = blosc_decompress_ctx(in, out, content, 1);
  return got >= 0 && (size_t)got == content ? 0 : -1;
}

/* Slicing by 8: eight tables, eight bytes a step (about 1.5 GB/s a core,
 * against the codecs' hundreds of MB/s). */
static uint32_t crc_table[8][256];

static void make_crc_table(void) {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = c & 1 ? c >> 1 ^ 0x82f63b78u : c >> 1;
    crc_table[0][n] = c;
  }
  for (uint32_t n = 0; n < 256; n++)
    for (int t = 1; t < 8; t++)
      crc_table[t][n] = crc_table[t - 1][n] >> 8 ^ crc_table[0][crc_table[t - 1][n] & 0xff];
}

uint32_t xio_crc32c(const void *data, size_t bytes) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  (void)pthread_once(&once, make_crc_table);
  const unsigned char *p = data;
  uint32_t c = 0xffffffffu;
  for (; bytes >= 8; bytes -= 8, p += 8) {
    const uint32_t lo =
        c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    c = crc_table[7][lo & 0xff] ^ crc_table[6][lo >> 8 & 0xff] ^ crc_table[5][lo >> 16 & 0xff] ^
        crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^
        crc_table[0][p[7]];
  }
  while (bytes--) c = crc_table[0][(c ^ *p++) & 0xff] ^ c >> 8;
  return c ^ 0xffffffffu;
}

int xio_crc32c_matches(const void *data, size_t bytes) {
  const unsigned char *c = (const unsigned char *)data + bytes;
  return xio_crc32c(data, bytes) ==
         ((uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24);
}
