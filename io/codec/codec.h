/* Every codec a chunk goes through, one entry each, each codec in a file
 * of its own (shuffle.c, deflate_codec.c, fletcher32.c, zstd.c,
 * blosc_codec.c, crc32c.c), as zarrs keeps one codec a module behind one trait: its id
 * (HDF5's filter id, or xpose's past H5Z_FILTER_MAX for Zarr's own), its
 * names in HDF5, numcodecs (Zarr v2) and Zarr v3, how Zarr's metadata
 * carries its settings, and what it does to a chunk.  The chunk pipeline
 * (filters.h) runs an HDF5 dataset's filters and a Zarr array's codecs
 * through these entries alone; nothing else tells codecs apart by id. */
#ifndef XIO_CODEC_H
#define XIO_CODEC_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

/* Ids past HDF5's (H5Z_FILTER_MAX): Zarr's codecs that HDF5 has none of. */
enum {
  XIO_CODEC_GZIP = 0x10001, /* value: the level, 0-9 */
  XIO_CODEC_ZSTD,           /* value: the level, 1-22 */
  XIO_CODEC_BLOSC,          /* value: the level, 0-9; option: xio_blosc_option's */
  XIO_CODEC_CRC32C          /* 4 bytes appended, little-endian */
};

typedef enum {
  XIO_CODEC_TRANSFORM,  /* as many bytes out as in: shuffle */
  XIO_CODEC_CHECKSUM,   /* 4 bytes appended to the data, checked and dropped on the way back */
  XIO_CODEC_COMPRESSOR, /* a stream of its own */
  XIO_CODEC_FOREIGN     /* named in messages; HDF5's own pipeline runs it, where it can */
} xio_codec_role;

/* How Zarr's metadata gives a codec's settings: none (crc32c), a "level"
 * (zlib, gzip; zstd's, with v3's "checksum" beside it), Blosc's (cname,
 * clevel, shuffle), or the bytes of a value (numcodecs' shuffle:
 * "elementsize"). */
typedef enum {
  XIO_SETTINGS_NONE,
  XIO_SETTINGS_LEVEL,
  XIO_SETTINGS_ZSTD,
  XIO_SETTINGS_BLOSC,
  XIO_SETTINGS_ELEMENT_SIZE
} xio_codec_settings;

typedef enum { XIO_INFLATED = 0, XIO_INFLATE_BAD, XIO_INFLATE_LONG } xio_inflate_result;

typedef struct xio_codec {
  H5Z_filter_t id;
  const char *name;              /* HDF5's, in messages: "gzip" (deflate), "shuffle" */
  const char *zarr_v2, *zarr_v3; /* numcodecs' id, v3's name; NULL where Zarr has none */
  xio_codec_role role;
  xio_codec_settings settings;
  int least_level, most_level, default_level; /* its levels (Blosc's clevel), numcodecs' default */
  const char *verb;        /* undoing it, in messages: "inflate", "decompress (zstd)" */
  int parallel_hdf5_fails; /* its chunks, written by parallel HDF5 1.10, do not read back */
  /* A thread's state, kept from one chunk to the next (NULL: none). */
  void *(*state_new)(void);
  void (*state_free)(void *state);
  /* Compressors.  The most `bytes` encode to; in[0, bytes) encoded at
   * `value` (its level) and `option` into out (room bytes): the bytes
   * written, 0 where they do not fit or memory ran out; a stream undone
   * into out (room bytes), its length in *size: BAD where it is not one
   * whole stream of the codec, LONG where it holds more than room (which
   * *size then says, where the stream tells). */
  size_t (*bound)(size_t bytes);
  size_t (*encode)(void *state, unsigned value, unsigned option, const unsigned char *in,
                   size_t bytes, unsigned char *out, size_t room);
  xio_inflate_result (*decode)(void *state, const unsigned char *in, size_t bytes,
                               unsigned char *out, size_t room, size_t *size);
  /* Transforms: in[0, bytes) into out, values of `size` bytes (undo:
   * back). */
  void (*transform)(const unsigned char *in, unsigned char *out, size_t bytes, size_t size,
                    int undo);
  /* Checksums: the sum of data[0, bytes), and whether the 4 bytes after
   * them hold it. */
  uint32_t (*sum)(const unsigned char *data, size_t bytes);
  int (*matches)(const unsigned char *data, size_t bytes);
} xio_codec;

/* The codecs, each defined in its own file; the table (codecs.c). */
extern const xio_codec xio_codec_shuffle, xio_codec_deflate, xio_codec_gzip, xio_codec_fletcher32,
    xio_codec_zstd, xio_codec_blosc, xio_codec_crc32c;

/* Entries of the table: at most this many, each with a place of its own
 * (its state's in a thread's scratch, filters.c). */
enum { XIO_CODEC_PLACES = 16 };

/* The entry of HDF5 filter or Zarr codec `id` (NULL: one xpose does not
 * know); its place; the entry at a place (NULL past the last). */
const xio_codec *xio_codec_of(H5Z_filter_t id);
int xio_codec_place(const xio_codec *codec);
const xio_codec *xio_codec_at(int place);

/* The entry Zarr names `name` in `format` (2: numcodecs' id, 3: v3's
 * codec name); NULL for none. */
const xio_codec *xio_codec_named(const char *name, int format);

/* Whether xpose runs the codec itself (this build has what it needs). */
int xio_codec_runs(const xio_codec *codec);

#endif
