/* Where the chunks of a dataset meet a block of its folded matrix
 * (h5_matrix.h): the box of chunks around the block, whether a chunk lies
 * wholly in it, and the copies of a chunk's values between the two. */
#ifndef XIO_CHUNK_BOX_H
#define XIO_CHUNK_BOX_H

#include <stddef.h>
#include <stdint.h>

#include "shape.h"

/* The block [row, row + nrows) x [col, col + ncols) of the dataset folded
 * as `shape`, row-major and contiguous, in the dataset's axes: the box
 * [lo, hi] (inclusive) around it, and how its rows and columns flatten. */
typedef struct {
  const xio_shape *shape;
  const int64_t *chunk; /* the chunk's shape */
  size_t type_size;
  int64_t lo[XIO_MAX_DIMS], hi[XIO_MAX_DIMS];
  int64_t step[XIO_MAX_DIMS];                      /* of an axis in its group's flattened index */
  int64_t row, nrows, col, ncols, values;          /* values: of one element */
  int64_t first[XIO_MAX_DIMS], grid[XIO_MAX_DIMS]; /* chunks: the box's first, along each axis */
  int64_t count[XIO_MAX_DIMS];                     /* and how many of them */
  int64_t chunks;                                  /* in the box */
} xio_chunk_box;

/* Local.  The box of a non-empty block, elements of elem_size bytes, in
 * chunks of `chunk` values of type_size bytes (which must outlive it). */
void xio_chunk_box_of(xio_chunk_box *box, const xio_shape *shape, const int64_t *chunk,
                      size_t type_size, size_t elem_size, int64_t row, int64_t nrows, int64_t col,
                      int64_t ncols);

/* Local.  Chunk k of the box (0 <= k < box->chunks, row-major over its
 * chunks): its first value's position (origin) and its index among the
 * dataset's chunks (row-major). */
int64_t xio_chunk_box_chunk(const xio_chunk_box *box, int64_t k, int64_t *origin);

/* Local.  The first value's position (origin) of chunk `index` of a
 * dataset's `grid` of chunks of `chunk` values along each of ndims axes
 * (row-major over its chunks). */
void xio_chunk_origin(int ndims, const int64_t *chunk, const int64_t *grid, int64_t index,
                      int64_t *origin);

/* Local.  Whether every value of the chunk at origin that lies in the
 * dataset lies in the block. */
int xio_chunk_box_holds(const xio_chunk_box *box, const int64_t *origin);

/* Local.  Whether the chunk at origin reaches past the dataset's edge. */
int xio_chunk_box_at_edge(const xio_chunk_box *box, const int64_t *origin);

/* Local.  The chunk's values (a full chunk, row-major) that the block
 * holds, copied from the chunk into the block (to_block) or back. */
void xio_chunk_box_copy(const xio_chunk_box *box, const int64_t *origin, unsigned char *chunk,
                        unsigned char *block, int to_block);

/* Local.  `chunk` (`bytes`) filled with `value` (`size` bytes), over and
 * over. */
void xio_chunk_fill(unsigned char *chunk, size_t bytes, const unsigned char *value, size_t size);

#endif
