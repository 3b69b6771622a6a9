/* A compressed dataset's chunks read straight from its file (pread) and
 * inflated by xpose, not by HDF5's filter pipeline.
 *
 * Why: HDF5 inflates each chunk with zlib into a buffer it starts at the
 * compressed size and doubles with realloc until the chunk fits, copying
 * it each time, then copies the chunk into the selection.  Here each chunk
 * is read once into a buffer of its size, inflated by libdeflate (about
 * twice zlib's speed) and unshuffled, then copied into place.  It serves
 * the reads of compressed inputs and the read-back of compressed outputs.
 *
 * It is used only where it is exact: a file open read-only (nothing
 * written since its chunks were indexed), every chunk allocated (none
 * left to the fill value), and filters it knows: shuffle and deflate, any
 * of them skipped for a chunk where its filter mask says so.  Anything
 * else reads through HDF5, as before; so does a build without libdeflate. */
#ifndef XIO_CHUNK_READER_H
#define XIO_CHUNK_READER_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"
#include "shape.h"

typedef struct xio_chunk_index xio_chunk_index;

/* Local.  An index not built yet (NULL when out of memory). */
xio_chunk_index *xio_chunk_index_new(void);

/* Collective over comm, every rank with the same dataset (HDF5's metadata
 * reads are collective).  Builds ix on its first call: where each chunk of
 * dset (of `shape`'s axes, values of type_size bytes) lies in `file`, the
 * file's path.  1 where its chunks can be read raw, else 0 (no message:
 * HDF5 reads them); -1 with a message where building failed. */
int xio_chunk_index_build(xio_chunk_index *ix, MPI_Comm comm, hid_t file, hid_t dset,
                          const xio_shape *shape, size_t type_size, const char *shown,
                          xio_error *err);

/* Local, after xio_chunk_index_build said 1.  The block [row, row + nrows)
 * x [col, col + ncols) of the dataset folded as `shape` is (h5_matrix.h's
 * matrix: elements of elem_size bytes), row-major and contiguous in buf. */
int xio_chunk_index_read(const xio_chunk_index *ix, const xio_shape *shape, size_t elem_size,
                         int64_t row, int64_t nrows, int64_t col, int64_t ncols, void *buf,
                         xio_error *err);

/* Local.  NULL is accepted. */
void xio_chunk_index_free(xio_chunk_index *ix);

#endif
