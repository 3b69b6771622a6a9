/* One chunk through a dataset's filters, as HDF5's pipeline runs them,
 * on any thread: shuffle, deflate (libdeflate) and Fletcher32, in the
 * order the dataset lists them, each skipped where the chunk's filter
 * mask says so; or through a Zarr array's codecs, which take ids past
 * HDF5's; each through its entry of the codecs' table (codec.h).  The
 * bytes written are the ones HDF5 would write but for the deflate
 * streams, which are zlib streams of the same level (any reader inflates
 * them; sizes within about 1% of zlib's).  A pipeline with any other
 * filter (szip, nbit, scale-offset, a plugin) is not `known`: HDF5's own
 * pipeline runs it. */
#ifndef XIO_FILTERS_H
#define XIO_FILTERS_H

#include <hdf5.h>
#include <stddef.h>

enum { XIO_MAX_FILTERS = 8 };

typedef struct {
  int count; /* in the order HDF5 applies them when writing */
  H5Z_filter_t id[XIO_MAX_FILTERS];
  unsigned value[XIO_MAX_FILTERS];  /* shuffle: bytes of a value; deflate: its level */
  int known;                        /* every one of them runs here */
  char unknown[64];                 /* else the first that does not, by name */
  unsigned option[XIO_MAX_FILTERS]; /* Blosc's settings (blosc_codec.h) */
} xio_filters;

/* Local.  dcpl's filters (none for a dataset that is not chunked); -1
 * where HDF5 cannot say (its message for xio_fail_h5). */
int xio_filters_of(hid_t dcpl, xio_filters *filters);

/* What one thread needs to run chunks through the filters: the deflate
 * state and work buffers, kept from one chunk to the next. */
typedef struct xio_codec_scratch xio_codec_scratch;

/* NULL when out of memory. */
xio_codec_scratch *xio_codec_scratch_new(void);
void xio_codec_scratch_free(xio_codec_scratch *scratch); /* NULL is accepted */

/* A buffer of at least `bytes` beside the work buffers (for a chunk as
 * stored), kept with the scratch; NULL when out of memory. */
unsigned char *xio_codec_scratch_buffer(xio_codec_scratch *scratch, size_t bytes);

/* A scratch for each of the pool's threads (pool.h), made at first use:
 * a job's item on thread `worker` takes scratch `worker`. */
typedef struct {
  int count;
  xio_codec_scratch **each;
} xio_codec_scratches;

/* Local, before a job: room for `threads` of them.  -1 when out of memory. */
int xio_codec_scratches_reserve(xio_codec_scratches *set, int threads);

/* On thread `worker` of a job: its scratch (NULL when out of memory). */
xio_codec_scratch *xio_codec_scratches_get(xio_codec_scratches *set, int worker);

void xio_codec_scratches_free(xio_codec_scratches *set);

/* Local.  The stored bytes of a chunk, stored[0, size), with filter mask
 * `mask` (bit i: filter i skipped), decoded into chunk_bytes bytes of
 * values: *values points at them (in scratch, or stored itself).  -1 with
 * why the stored bytes cannot be the chunk ("do not inflate", "inflate to
 * 100 bytes, not 400", "fail their Fletcher32 checksum", ...), or "out of
 * memory". */
int xio_chunk_decode(const xio_filters *filters, unsigned mask, const unsigned char *stored,
                     size_t size, size_t chunk_bytes, xio_codec_scratch *scratch,
                     const unsigned char **values, char *why, size_t why_size);

/* The most bytes a chunk of chunk_bytes encodes to. */
size_t xio_chunk_encode_bound(const xio_filters *filters, size_t chunk_bytes);

/* Local.  chunk_bytes bytes of values encoded through every filter into
 * out (room: xio_chunk_encode_bound's): their length in *size.  -1 only
 * when out of memory. */
int xio_chunk_encode(const xio_filters *filters, const unsigned char *values, size_t chunk_bytes,
                     unsigned char *out, size_t room, size_t *size, xio_codec_scratch *scratch);

/* Local.  As xio_chunk_encode, for values that went through filters
 * before `first` already, into `room` bytes of out, which may be fewer
 * than the bound: 1 where the chunk does not fit them (out then holds
 * nothing of use). */
int xio_chunk_encode_from(const xio_filters *filters, int first, const unsigned char *values,
                          size_t chunk_bytes, unsigned char *out, size_t room, size_t *size,
                          xio_codec_scratch *scratch);

/* The bytes of work buffers a thread needs to encode a chunk of
 * chunk_bytes from filter `first` on, beside out: none where every filter
 * but the checksums after it is one, writing into out. */
size_t xio_chunk_encode_work(const xio_filters *filters, int first, size_t chunk_bytes);

/* Whether the first filter shuffles values of type_size bytes: a chunk's
 * values can then be gathered shuffled, byte plane by byte plane (HDF5's
 * shuffle puts byte j of value i at j * values + i), and encoded from
 * filter 1. */
int xio_filters_shuffle_first(const xio_filters *filters, size_t type_size);

#endif
