/* How the output dataset is stored: its layout (contiguous or chunked, and
 * the chunk shape) and its filters (compression), by default as the
 * input's, transposed; h5repack-style choices override either. */
#ifndef XIO_STORAGE_H
#define XIO_STORAGE_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"
#include "shape.h"

typedef enum { XIO_LAYOUT_AS_INPUT = 0, XIO_LAYOUT_CONTIGUOUS, XIO_LAYOUT_CHUNKED } xio_layout;
typedef enum {
  XIO_FILTER_AS_INPUT = 0,
  XIO_FILTER_NONE,
  XIO_FILTER_GZIP,
  XIO_FILTER_SHUFFLE_GZIP,
  XIO_FILTER_SZIP
} xio_filter;

typedef struct {
  xio_layout layout;
  int chunk_ndims; /* the output's chunk shape, given; 0: chosen */
  int64_t chunk_dims[XIO_MAX_DIMS];
  /* Chunks chosen for a chunked input: 0 x 0, the input's transposed;
   * else the block of the output's matrix one pass covers
   * (xio_transpose_block), which the chunks are shaped to fit, on
   * pass_ranks ranks, whose shares of it they fit too where they can. */
  int64_t pass_rows, pass_cols;
  int pass_ranks;
  xio_filter filter;
  int gzip_level; /* 1-9 */
} xio_storage;

/* "contiguous", "chunked" or "chunked=AxBx...", a chunk length for each
 * axis.  -1 on anything else. */
int xio_storage_parse_layout(const char *text, xio_storage *storage);

/* "none", "gzip[=N]", "shuffle+gzip[=N]" or "szip".  -1 on anything else. */
int xio_storage_parse_filter(const char *text, xio_storage *storage);

/* What the output's storage takes from the input it is the transpose of:
 * its chunks and filters (xio_matrix_storage_like gives them). */
typedef struct {
  const char *dataset; /* its name, for messages */
  hid_t dset;          /* its filters are read from here */
  int chunked;
  size_t type_size;
  xio_shape shape; /* as folded for the move that writes the output */
  int64_t chunk_dims[XIO_MAX_DIMS];
} xio_storage_like;

/* Sets dcpl's layout, chunk shape and filters for an output shaped
 * `shape` with values of type_size bytes, as `storage` says; `like`, if
 * not NULL, is the input, whose transpose `shape` is.  Messages call the
 * output `shown`.  Local. */
int xio_storage_apply(const xio_storage_like *like, const xio_storage *storage,
                      const xio_shape *shape, size_t type_size, hid_t dcpl, const char *shown,
                      xio_error *err);

/* "contiguous", "chunked 512 x 256, shuffle+gzip=4" and the like (in
 * --filter's words where it has them), of a dataset creation property
 * list. */
void xio_describe_dcpl(hid_t dcpl, char *text, size_t size);

#endif
