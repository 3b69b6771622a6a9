/* A Zarr array (zarr_array.h) as a matrix the passes write: its chunks
 * encoded and written by the chunk writer, each rank its own chunk files
 * (no one writer, no HDF5), and read back by the chunk reader. */
#ifndef XIO_MATRIX_ZARR_H
#define XIO_MATRIX_ZARR_H

#include "h5_matrix.h"
#include "h5_storage.h"
#include "zarr_array.h"

struct xio_zarr_matrix {
  xio_zarr_array array;
  xio_chunk_files files;
};

/* Local.  m made of the array (copied) on comm, its values of the HDF5
 * type the array's data type is, named `dataset` in messages, folded at
 * 0, 1, 2 when 2-D, else at 0, 1, ndims, as xio_open_input folds (a
 * 1-D array as one column: 2-D, n x 1).  A
 * chunk file missing fails its read (an output read back), or with
 * missing_as_fill reads as the fill value (an input: Zarr's rule). */
int xio_open_zarr(MPI_Comm comm, const xio_zarr_array *array, const char *dataset,
                  int missing_as_fill, xio_matrix *m, xio_error *err);

/* A copy of the HDF5 type the array's values are; negative where HDF5
 * cannot make one. */
hid_t xio_zarr_type(const xio_zarr_array *array);

/* "Zarr v3, chunks 9 x 36 x 40, blosc-zstd:3" and the like. */
void xio_describe_zarr(const xio_matrix *m, char *text, size_t size);

/* Local.  The chunks of a Zarr array shaped `shape` that is the transpose
 * of `like` (NULL: of nothing), as an HDF5 output's would be chunked by
 * `storage` (h5_storage.h), its layout chunked whatever it says. */
int xio_zarr_chunks_like(const xio_matrix *like, const xio_storage *storage, const xio_shape *shape,
                         size_t type_size, const char *shown, int64_t *chunks, xio_error *err);

#endif
