/* A contiguous dataset's elements read and written as bytes at their
 * offsets in its file (pread, pwrite), bypassing HDF5 and MPI-IO.
 *
 * Why: xpose's passes read and write at once, and collective MPI-IO
 * through HDF5 (never thread-safe) lets only one call run at a time, so a
 * read and a write are never in flight together; the disk then runs at
 * either rate, never at both.  Raw access lets a reader and a writer
 * thread work at once, and sums each piece of a block as it arrives (or
 * just before it leaves), while it is still in the cache.  It is used only
 * where it is exact: a contiguous dataset with its storage allocated in
 * the file itself (no external files), its datatype the one in memory (the
 * xio_matrix's is the stored one), and every rank on one node, whose page
 * cache keeps the ranks' writes coherent (pass_io.c decides).
 * Everything else goes through HDF5's collective path.  HDF5 never caches
 * raw data of a contiguous dataset opened with the MPI-IO driver, so the
 * two views of the file cannot disagree.
 *
 * Every function is local, and returns 0 or -1 with a message in err
 * naming the file. */
#ifndef XIO_RAW_DATASET_H
#define XIO_RAW_DATASET_H

#include <stdint.h>

#include "h5_matrix.h"

typedef struct {
  int fd;                    /* -1: not open */
  uint64_t base;             /* file offset of element (0, 0) */
  int64_t rows, cols, items; /* the matrix's (h5_matrix.h) */
  size_t elem_size;
  char shown[512]; /* FILE:DATASET, as messages name it */
} xio_raw_dataset;

/* Sums of the elements a transfer moves: element (i, j) of the block has
 * key first_key + i * row_step + j * col_step (checksum.h).  The sum is
 * added to *sum. */
typedef struct {
  uint64_t first_key, row_step, col_step;
  uint64_t *sum;
} xio_block_sum;

/* 1 when m's elements lie at fixed offsets of its file, as one contiguous
 * array of the stored type; *base is the first one's.  Local. */
int xio_raw_usable(const xio_matrix *m, uint64_t *base);

/* Opens m's file (read-only, or for writing) for raw access to the dataset
 * at base; messages name it FILE:DATASET. */
int xio_raw_open(const xio_matrix *m, uint64_t base, int writable, xio_raw_dataset *raw,
                 xio_error *err);

/* Asks the kernel ahead for the runs of a block of partial rows, all at
 * once, so that the disk gets them together rather than one by one. */
void xio_raw_will_read(const xio_raw_dataset *raw, int64_t row, int64_t nrows, int64_t col,
                       int64_t ncols);

/* Elements [row, row + nrows) x [col, col + ncols) to or from buf
 * (row-major, contiguous), in pieces, each summed into sum (if not NULL)
 * while in the cache: after it is read, before it is written. */
int xio_raw_read(const xio_raw_dataset *raw, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                 void *buf, const xio_block_sum *sum, xio_error *err);
int xio_raw_write(const xio_raw_dataset *raw, int64_t row, int64_t nrows, int64_t col,
                  int64_t ncols, const void *buf, const xio_block_sum *sum, xio_error *err);

/* Waits until everything written is on storage (fdatasync). */
int xio_raw_sync(const xio_raw_dataset *raw, xio_error *err);

/* `count` elements from element `first` (row-major) of the dataset into
 * buf. */
int xio_raw_read_elements(const xio_raw_dataset *raw, uint64_t first, uint64_t count, void *buf,
                          xio_error *err);

/* The checksum (checksum.h) of those elements, in buf; with
 * transposed_from (NULL: keys of their own positions) the dataset is an
 * output B = A^T (each item's matrix transposed), A shaped and folded so,
 * its elements keyed by their place in A. */
uint64_t xio_raw_elements_sum(const xio_raw_dataset *raw, const xio_shape *transposed_from,
                              uint64_t first, uint64_t count, const void *buf);

void xio_raw_close(xio_raw_dataset *raw);

#endif
