/* One pass as a rank sees it: the block of the input it covers, the part
 * of it this rank reads, the part of the output block it writes, and the
 * checksum keys of both (checksum.h).
 *
 * Exchanged between the ranks, each reads its share of the block's rows
 * (split as the plan splits them) and writes its share of the output
 * block's rows.  Transposed locally (`local`: raw on one node, the page
 * cache joins the ranks' parts), each writes the transpose of what it read:
 *   - in bands of whole rows, its share of the band's columns, so that it
 *     writes whole output rows of the band, runs as long as the band is
 *     tall with no other rank's between them (two ranks writing 4 KiB runs
 *     into one page cache file spent most of their time on its lock: 8 s
 *     of system time for 2 GiB, against 2.6 s for 8 KiB runs in rows of
 *     their own; 2-core VM);
 *   - in other blocks, its share of the block's rows, so that its reads
 *     from the disk stay as long as the block is wide (2 GiB, 2 ranks,
 *     1639-square blocks, the input evicted: 6.9 s, against 7.7 s for
 *     shares of the columns). */
#ifndef XIO_PASS_GEOMETRY_H
#define XIO_PASS_GEOMETRY_H

#include "h5_matrix.h"
#include "passes.h"
#include "raw_dataset.h" /* xio_block_sum */

typedef struct {
  int64_t item, row0, nrows, col0, ncols; /* the block, within its item's matrix */
  /* in the whole stack of the items' matrices: */
  int64_t read_row, read_rows, read_col, read_cols;     /* of the input */
  int64_t write_row, write_rows, write_col, write_cols; /* of the output */
  /* Rechunking (shape.h): the output is shaped as the input, and this rank
   * writes its share of the block's columns, which the exchange leaves
   * in its buffer as their transpose, write_cols x write_rows. */
  int rechunk;
} xio_pass_geometry;

/* Local.  Pass `pass` of grid over the input of shape `in`, for `rank` of
 * `nranks`; exchanged (not `local`), the ranks share its columns in
 * units of `unit`, as the plan splits its output rows
 * (xpose_config.output_row_unit). */
xio_pass_geometry xio_pass_geometry_of(const xio_pass_grid *grid, const xio_shape *in, int64_t pass,
                                       int rank, int nranks, int local, int64_t unit);

/* Bytes of the input this rank reads, and of the output it writes. */
uint64_t xio_pass_read_bytes(const xio_pass_geometry *p, size_t elem_size);
uint64_t xio_pass_write_bytes(const xio_pass_geometry *p, size_t elem_size);

/* The keys of the elements this rank reads (of an input with in_cols
 * columns) and writes (in_item_rows: rows of one item of the input), as
 * the exchange leaves them (rechunking too); the sums go to *sum. */
xio_block_sum xio_pass_input_keys(const xio_pass_geometry *p, int64_t in_cols, uint64_t *sum);
xio_block_sum xio_pass_output_keys(const xio_pass_geometry *p, int64_t in_cols,
                                   int64_t in_item_rows, uint64_t *sum);

#endif
