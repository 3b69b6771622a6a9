/* A compressed dataset's chunks read straight from its file (pread) and
 * decoded by xpose on every thread of the pool (pool.h), not by HDF5's
 * filter pipeline, one chunk after another.
 *
 * Why: HDF5 inflates each chunk with zlib, on the calling thread, into a
 * buffer it starts at the compressed size and doubles with realloc until
 * the chunk fits, copying it each time, then copies the chunk into the
 * selection.  Here each chunk is read once into a buffer of its size,
 * decoded (filters.h: libdeflate, shuffle, Fletcher32) and copied into
 * place, the chunks of a block on all of the pool's threads at once.  It
 * serves the reads of compressed inputs and the read-back of compressed
 * outputs.
 *
 * It is used only where it is exact: a file open read-only (nothing
 * written since its chunks were indexed), every chunk allocated (none
 * left to the fill value), and filters the codec runs (filters.h).
 * Anything else reads through HDF5, as before, and so does every read
 * with XPOSE_CODEC=hdf5 in the environment. */
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

struct xio_chunk_files;

/* Local.  An index of chunks that are files of their own (a Zarr
 * array's, chunk_writer.h), each read whole; building it (HDF5's file
 * and dataset then unused) says 1 at once.  A chunk whose file is
 * missing fails its read (an output's read-back), or with fill_missing
 * holds the fill value (Zarr's rule for inputs).  `files` must outlive
 * it. */
xio_chunk_index *xio_chunk_index_of_files(const struct xio_chunk_files *files, int fill_missing);

/* Collective over comm, every rank with the same dataset (HDF5's metadata
 * reads are collective; MPI_COMM_NULL: local, without MPI, as the tests
 * read a file).  Builds ix on its first call: where each chunk of
 * dset (of `shape`'s axes, values of type_size bytes) lies in `file`.
 * Messages name the file and the dataset, `shown`.  1 where its chunks
 * can be read raw, else 0 (no message: HDF5 reads them); -1 with a
 * message where building failed. */
int xio_chunk_index_build(xio_chunk_index *ix, MPI_Comm comm, hid_t file, hid_t dset,
                          const xio_shape *shape, size_t type_size, const char *shown,
                          xio_error *err);

/* Local, after xio_chunk_index_build said 1.  The block [row, row + nrows)
 * x [col, col + ncols) of the dataset folded as `shape` is (h5_matrix.h's
 * matrix: elements of elem_size bytes), row-major and contiguous in buf.
 * A chunk that cannot be read or decoded fails it, the chunk and the
 * dataset named. */
int xio_chunk_index_read(xio_chunk_index *ix, const xio_shape *shape, size_t elem_size, int64_t row,
                         int64_t nrows, int64_t col, int64_t ncols, void *buf, xio_error *err);

/* Local.  Whether ix was built and its chunks are read raw. */
int xio_chunk_index_ready(const xio_chunk_index *ix);

/* Local, ix ready.  Its file closed and its buffers freed, both made
 * again by the next read: the indexes of more files than may be open at
 * once (join_source.h). */
void xio_chunk_index_close_file(xio_chunk_index *ix);

/* Local.  The chunks of that block asked of the disk now (where the
 * index is built and usable; else nothing). */
void xio_chunk_index_ask_ahead(const xio_chunk_index *ix, const xio_shape *shape, size_t elem_size,
                               int64_t row, int64_t nrows, int64_t col, int64_t ncols);

/* Local, after xio_chunk_index_build said 1.  How many chunks the
 * dataset has, and whether each holds whole elements of it folded as
 * `shape` (its axes inside the elements whole). */
int64_t xio_chunk_index_chunks(const xio_chunk_index *ix);
int xio_chunk_index_whole_elements(const xio_chunk_index *ix, const xio_shape *shape);

/* Local.  Where this rank's reads of ix's chunks spent their time: HDF5
 * locating them, and the pool's threads, all of them together, reading
 * their stored bytes and decoding them.  `used` 0: none read so. */
typedef struct {
  int used;
  double locate_seconds, fetch_seconds, decode_seconds;
} xio_chunk_read_times;
void xio_chunk_index_times(const xio_chunk_index *ix, xio_chunk_read_times *times);

/* The sum of a run of n elements of the folded matrix from (row, col)
 * along its columns, their bytes at `elements`. */
typedef uint64_t (*xio_chunk_run_fn)(void *arg, const unsigned char *elements, int64_t row,
                                     int64_t col, int64_t n);

/* Local, where chunks hold whole elements.  Chunks [first, first + count)
 * of the dataset (row-major over its chunks) read and decoded on the pool's
 * threads, each once, and the runs of whole elements of each handed to fn
 * there: into *sum the sum of what fn returns; the `ahead` chunks after
 * them asked of the disk meanwhile, for the next call.  A chunk that
 * cannot be read or decoded fails it, as xio_chunk_index_read does. */
int xio_chunk_index_sum(xio_chunk_index *ix, const xio_shape *shape, int64_t first, int64_t count,
                        int64_t ahead, xio_chunk_run_fn fn, void *arg, uint64_t *sum,
                        xio_error *err);

/* Local.  NULL is accepted. */
void xio_chunk_index_free(xio_chunk_index *ix);

/* Whether XPOSE_CODEC=hdf5 leaves every chunk to HDF5's pipeline: for
 * comparisons, and to test that path. */
int xio_codec_off(void);

#endif
