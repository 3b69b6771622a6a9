/* A 2-D HDF5 dataset opened for collective MPI-IO, elements as raw bytes.
 * Every function is collective over the matrix's communicator and returns
 * 0, or -1 on every rank with one message in err. */
#ifndef XIO_MATRIX_H
#define XIO_MATRIX_H

#include <hdf5.h>
#include <stdint.h>

#include "h5_error.h"
#include "h5_storage.h"

typedef struct {
  MPI_Comm comm; /* not owned */
  hid_t file, dset;
  hid_t type; /* transient copy of the dataset's datatype: the memory type too, so no conversion */
  int64_t rows, cols;
  size_t elem_size;
  int chunked;                    /* read independently: see transfer_block */
  int filtered;                   /* chunked, with filters (compression) */
  int64_t chunk_rows, chunk_cols; /* chunked: the chunk shape */
  char dataset[512];              /* path inside the file */
} xio_matrix;

/* Marks m as not open, so that xio_close(m) does nothing. */
void xio_matrix_reset(xio_matrix *m);

/* Opens path's dataset, or with dataset == NULL the file's only 2-D one.
 * Fails on a missing or non-HDF5 file, a missing dataset, one that is not
 * 2-D, and datatypes with variable-length data or references. */
int xio_open_input(MPI_Comm comm, const char *path, const char *dataset, xio_matrix *m,
                   xio_error *err);

/* Creates a new file (failing if it exists) holding a rows x cols dataset of
 * `type`, never filled (every element gets written), with link and
 * attribute creation order tracked, as netCDF-C writes files.
 * It is stored as `storage` says (h5_storage.h): by default like `like`'s
 * dataset (the input; NULL: contiguous), a chunked input's chunk shape
 * transposed and its filters kept.  It takes like's fill value if its
 * creator set one.  Unfiltered storage is allocated at once.  Messages call
 * the file `shown`. */
int xio_create_output(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                      hid_t type, const xio_matrix *like, const xio_storage *storage, int64_t rows,
                      int64_t cols, xio_matrix *m, xio_error *err);

/* Opens path's dataset, read-only or for writing; messages call it `shown`. */
int xio_open_existing(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                      int writable, xio_matrix *m, xio_error *err);

/* This rank's block [row, row + nrows) x [col, col + ncols), row-major and
 * contiguous in buf; blocks may be empty.  Collective MPI-IO. */
int xio_read_block(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                   void *buf, xio_error *err);
int xio_write_block(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                    const void *buf, xio_error *err);

/* Attributes left out of a copy: their names, the first few. */
typedef struct {
  int count;
  char names[512];
} xio_skipped_attributes;

/* Copies every attribute of from's dataset onto to's, its transpose, with
 * its exact type; those naming the axes in order (DIMENSION_LABELS,
 * netCDF-4's _Netcdf4Coordinates) are swapped.  Dimension scales' links
 * are left to xio_copy_dimension_scales.  Left out, and named in *skipped:
 * other attributes holding references (they cannot point from one file
 * into another). */
int xio_copy_attributes(const xio_matrix *from, const xio_matrix *to,
                        xio_skipped_attributes *skipped, xio_error *err);

/* The same for a dimension scale's copy: nothing swapped. */
int xio_copy_scale_attributes(const xio_matrix *from, const xio_matrix *to,
                              xio_skipped_attributes *skipped, xio_error *err);

/* Sets dcpl's layout, chunk shape and filters for a rows x cols output as
 * `storage` says (h5_storage.h); like's dataset, if any, is the input.
 * Messages call the output `shown`.  Local. */
int xio_storage_apply(const xio_matrix *like, const xio_storage *storage, int64_t rows,
                      int64_t cols, size_t elem_size, hid_t dcpl, const char *shown,
                      xio_error *err);

/* "contiguous", "chunked 512 x 256, shuffle+gzip=4" and the like (in
 * --filter's words where it has them). */
void xio_describe_storage(const xio_matrix *m, char *text, size_t size);
/* The same of a dataset creation property list. */
void xio_describe_dcpl(hid_t dcpl, char *text, size_t size);

/* Flushes what was written through to storage (MPI_File_sync). */
int xio_flush(const xio_matrix *m, xio_error *err);

/* Where the dataset's elements end in its file (allocated; a chunked
 * dataset's file flushed), in bytes from the file's start; 0 for filtered
 * data, whose size is not known before it is written. */
int xio_data_end(const xio_matrix *m, uint64_t *bytes, xio_error *err);

/* Closes everything; a failed flush of a written file is reported.  Every
 * rank must call it for the same matrix, open or not. */
int xio_close(xio_matrix *m, xio_error *err);

/* Splits "file.h5:/group/dataset" at the first ":/", or where there is none
 * and no file has the whole name, "file.h5:group/dataset" at the last ':'
 * (the dataset made absolute).  dataset_out is "" when there is none.
 * Returns -1 when the file part is empty or a part is too long. */
int xio_split_path(const char *arg, char *file_out, size_t file_size, char *dataset_out,
                   size_t dataset_size);

#endif
