/* Zarr's codecs beside HDF5's filters, for the chunk codec (filters.h):
 * zstd and Blosc (gzip's streams are deflate.h's), each writing what numcodecs (zarr-python) writes
 * and reading what it reads, and Zarr v3's crc32c.  Each context is used
 * by one thread at a time. */
#ifndef XIO_ZARR_CODECS_H
#define XIO_ZARR_CODECS_H

#include <stddef.h>
#include <stdint.h>

/* Filter ids of xio_filters (filters.h) past HDF5's (H5Z_FILTER_MAX). */
enum {
  XIO_CODEC_GZIP = 0x10001, /* value: the level, 0-9 */
  XIO_CODEC_ZSTD,           /* value: the level, 1-22 */
  XIO_CODEC_BLOSC,          /* value: the level, 0-9; option: xio_blosc_option's */
  XIO_CODEC_CRC32C          /* 4 bytes appended, little-endian */
};

/* Blosc's inner compressors, as numcodecs names them. */
typedef enum {
  XIO_BLOSC_LZ4,
  XIO_BLOSC_ZSTD,
  XIO_BLOSC_BLOSCLZ,
  XIO_BLOSC_LZ4HC,
  XIO_BLOSC_ZLIB
} xio_blosc_name;

/* Blosc's settings in one option: compressor, shuffle (0 none, 1 bytes,
 * 2 bits) and the bytes of a value it shuffles. */
static inline unsigned xio_blosc_option(xio_blosc_name name, unsigned shuffle, unsigned type_size) {
  return (unsigned)name | shuffle << 8 | type_size << 16;
}

/* "lz4" and so on; NULL for no such compressor. */
const char *xio_blosc_cname(xio_blosc_name name);

/* Local.  -1 where the name is not one of them. */
int xio_blosc_name_of(const char *cname, xio_blosc_name *name);

/* Each: the most bytes `bytes` encode to; the bytes written into out
 * (room), 0 where they do not fit (or out of memory); decoding: 0 with
 * the length in *size, -1 where the input is not a whole stream of the
 * codec or holds more than room bytes (which *size then says, where the
 * stream's header tells). */
size_t xio_zstd_bound(size_t bytes);
size_t xio_blosc_bound(size_t bytes);

/* zstd's contexts, kept by a thread from one chunk to the next. */
typedef struct xio_zstd xio_zstd;
xio_zstd *xio_zstd_new(void);
void xio_zstd_free(xio_zstd *zstd); /* NULL is accepted */
size_t xio_zstd_compress(xio_zstd *zstd, int level, const void *in, size_t bytes, void *out,
                         size_t room);
int xio_zstd_decompress(xio_zstd *zstd, const void *in, size_t bytes, void *out, size_t room,
                        size_t *size);

size_t xio_blosc_compress(int level, unsigned option, const void *in, size_t bytes, void *out,
                          size_t room);
int xio_blosc_decompress(const void *in, size_t bytes, void *out, size_t room, size_t *size);

/* CRC-32C (Castagnoli), as Zarr v3's crc32c codec appends it. */
uint32_t xio_crc32c(const void *data, size_t bytes);

/* Whether data[0, bytes) is followed by its crc32c, little-endian. */
int xio_crc32c_matches(const void *data, size_t bytes);

#endif
