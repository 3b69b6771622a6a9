/* Blosc's settings as the chunk codec carries them (codec.h: the codec's
 * entry, in blosc_codec.c): its inner compressor, shuffle and the bytes of a
 * value, in one option. */
#ifndef XIO_BLOSC_CODEC_H
#define XIO_BLOSC_CODEC_H

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

#endif
