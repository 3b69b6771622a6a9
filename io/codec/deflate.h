/* HDF5's deflate filter (filter 1, "gzip") compressing with libdeflate,
 * and libdeflate for the chunk codec.
 *
 * Compressing the output is most of the time of a run on compressed
 * climate files.  libdeflate writes the same zlib streams as zlib, which
 * every reader inflates, 1.7 times as fast at level 4 on shuffled float32
 * records (one core, tests/bench/RESULTS.md), and faster again at the
 * lower level of its own whose streams are no larger than zlib's at the
 * level asked (deflate.c); it inflates at zlib's speed, so HDF5's reading
 * stays with zlib.
 *
 * HDF5 will not let a program register its own filter 1, but its filter
 * compresses each chunk with one call to zlib's compress2().  This file
 * defines compress2(): the program's symbols come before the shared
 * libraries' (the linker exports it because libhdf5 refers to it), so
 * HDF5's calls land here, and go on to zlib's own until
 * xio_deflate_install() turns libdeflate on.  Files look the same to every
 * tool; only the compressed bytes differ (sizes within about 1%). */
#ifndef XIO_DEFLATE_H
#define XIO_DEFLATE_H

#include <stdint.h>

#include "codec.h"
#include "h5_error.h"

/* Compresses HDF5's deflate chunks with libdeflate from now on, in this
 * process, unless XPOSE_DEFLATE is "zlib", xpose was built without
 * libdeflate, or HDF5's calls to compress2() do not reach this file's
 * (XPOSE_DEFLATE=libdeflate then fails). */
int xio_deflate_install(xio_error *err);

/* What compresses: "libdeflate 1.14", say, or "zlib". */
const char *xio_deflate_name(void);

/* How many chunks libdeflate has compressed in this process (for tests). */
uint64_t xio_deflate_chunks(void);

/* Inflating and deflating zlib streams with libdeflate, for the chunk
 * codec (filters.h).  NULL where xpose was built without libdeflate (or
 * out of memory); each used by one thread at a time. */
typedef struct xio_inflater xio_inflater;
xio_inflater *xio_inflater_new(void);
void xio_inflater_free(xio_inflater *inflater); /* NULL is accepted */

/* The zlib stream in[0, in_size) inflated into out (room bytes): its
 * length in *size; BAD where it is not a whole zlib stream, LONG where it
 * holds more than room bytes. */
xio_inflate_result xio_inflate(xio_inflater *inflater, const void *in, size_t in_size, void *out,
                               size_t room, size_t *size);

typedef struct xio_deflater xio_deflater;
xio_deflater *xio_deflater_new(int level);      /* level 0-9, as zlib's: NULL for others */
void xio_deflater_free(xio_deflater *deflater); /* NULL is accepted */

/* The most bytes in_size bytes deflate to (deflater NULL: at any level). */
size_t xio_deflate_bound(xio_deflater *deflater, size_t in_size);

/* in[0, in_size) as one zlib stream at the deflater's level into out
 * (room bytes, xio_deflate_bound's at least): its length. */
size_t xio_deflate(xio_deflater *deflater, const void *in, size_t in_size, void *out, size_t room);

/* The same as gzip streams (Zarr's gzip codec); a stream must be one
 * gzip member, nothing after it. */
size_t xio_gzip_bound(size_t in_size);
size_t xio_gzip(xio_deflater *deflater, const void *in, size_t in_size, void *out, size_t room);
xio_inflate_result xio_gunzip(xio_inflater *inflater, const void *in, size_t in_size, void *out,
                              size_t room, size_t *size);

#endif
