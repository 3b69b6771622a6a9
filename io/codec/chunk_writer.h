/* A compressed output's chunks encoded on every thread of every rank's
 * pool (pool.h, filters.h) and written as stored, H5Dwrite_chunk, by one
 * writer: rank 0, which alone holds the file while the passes run
 * (h5_one_writer.h); or, where each chunk is a file of its own (a Zarr
 * store), by the rank that encoded it.
 *
 * Why: parallel HDF5 1.10 compresses each rank's chunks inside its
 * collective H5Dwrite, one after another on the rank's one thread (and
 * shuffles them at about 0.5 GB/s there, 2-core VM), which made a rank per
 * GPU no faster than a serial tool on compressed climate files.  Here
 * every rank encodes the chunks of its block on all its threads, sends
 * them to rank 0, and rank 0 writes each as stored: the bytes HDF5 would
 * have written (filters.h), indexed by HDF5 itself.
 *
 * Each block written must hold every chunk it touches whole (but for the
 * parts of edge chunks past the dataset's end, which get its fill value,
 * as HDF5 fills them), so that no chunk is encoded by two ranks: the
 * passes give each rank whole chunks (xpose_config.output_row_unit). */
#ifndef XIO_CHUNK_WRITER_H
#define XIO_CHUNK_WRITER_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "chunk_file.h"
#include "filters.h"
#include "h5_error.h"
#include "shape.h"

typedef struct xio_chunk_writer xio_chunk_writer;

/* Local.  Whether a dataset created with dcpl, of values of type_size
 * bytes, can have its chunks written so: filters the codec runs
 * (filters.h), chunks of at most 1 GiB.  Where not, `why` (when not NULL)
 * says what HDF5's pipeline runs instead. */
int xio_chunk_writer_usable(hid_t dcpl, size_t type_size, char *why, size_t why_size);

/* What the writer writes: a dataset (of `type`, shaped and folded as
 * `shape`, elements of elem_size bytes, named `name` in messages) open
 * for writing on every rank of comm, or with `files` chunks each rank
 * stores (dset then unused); all of it must outlive the writer. */
typedef struct {
  MPI_Comm comm;
  hid_t dset, type;
  const xio_shape *shape;
  size_t elem_size;
  const char *name;
  const xio_chunk_files *files;
} xio_chunked_dataset;

/* Collective over d's communicator, while every rank holds the dataset
 * (before it goes to its one writer): a writer of its chunks.  Its own
 * collectives run on a duplicate of the communicator (so any thread may
 * write, one at a time). */
int xio_chunk_writer_open(const xio_chunked_dataset *d, xio_chunk_writer **writer, xio_error *err);

/* Collective.  This rank's block [row, row + nrows) x [col, col + ncols)
 * of the folded matrix (empty on ranks that own none), row-major in buf,
 * encoded and written into dset, rank 0's handle of the dataset (held by
 * its one writer; ignored elsewhere).  Every rank takes part to the end
 * even after a failure, which each reports (-1 with a message) for the
 * caller to agree on. */
int xio_chunk_writer_write(xio_chunk_writer *writer, hid_t dset, int64_t row, int64_t nrows,
                           int64_t col, int64_t ncols, const void *buf, xio_error *err);

/* This rank's chunks given whole: chunk k's values, a full chunk
 * row-major (what lies past the dataset's edge holding its fill value),
 * at values[k], its first value's position at origins[k * ndims]. */
typedef struct {
  int64_t count; /* none on ranks that have none now */
  const int64_t *origins;
  unsigned char *const *values;
  /* shuffled already, byte plane by byte plane, where the first filter
   * shuffles (xio_chunk_writer_shuffles_first) */
  int shuffled;
  /* the bytes kept for each one encoded (0: the most it can take); one
   * that needs more is encoded again alone once the others are written,
   * in the room of them all or of one chunk at most, whichever is more */
  size_t room;
} xio_whole_chunks;

/* Collective.  This rank's whole chunks encoded on the pool and written
 * as xio_chunk_writer_write writes. */
int xio_chunk_writer_write_chunks(xio_chunk_writer *writer, hid_t dset,
                                  const xio_whole_chunks *chunks, xio_error *err);

/* Whether the first filter shuffles the chunks' values (filters.h), so
 * that they may be given shuffled. */
int xio_chunk_writer_shuffles_first(const xio_chunk_writer *writer);

/* Local.  `chunk` (a whole chunk's bytes) filled with the dataset's fill
 * value, shuffled where asked. */
void xio_chunk_writer_fill(const xio_chunk_writer *writer, unsigned char *chunk, int shuffled);

/* This rank's time encoding, and (rank 0, or each rank of files)
 * storing, and the bytes and chunks stored. */
void xio_chunk_writer_times(const xio_chunk_writer *writer, double *encode_seconds,
                            double *store_seconds, uint64_t *stored_bytes, uint64_t *stored_chunks);

/* Local.  NULL is accepted. */
void xio_chunk_writer_close(xio_chunk_writer *writer);

#endif
