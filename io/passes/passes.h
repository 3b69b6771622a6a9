/* Pass shapes for transposing a matrix larger than memory.
 *
 * A pass moves one block A[r0 : r0+h, c0 : c0+w] of the input into
 * B[c0 : c0+w, r0 : r0+h] of the output.  Within the pass every rank reads
 * about h/P rows of the block (runs of w elements in the file) and writes
 * about w/P rows of the output block (runs of h elements); moved raw on one
 * node, each rank writes the transpose of what it read, and takes w/P
 * columns of bands of whole rows (pass_geometry.h).  Long runs
 * make MPI-IO fast, so:
 *   - if whole input rows fit (w = cols), reads are whole rows, and the
 *     write runs are as long as the pass is tall;
 *   - else if whole columns fit (h = rows), the same holds for the writes;
 *   - else, with raw access (raw_dataset.h), whole rows as long as the
 *     output's runs stay a page or more: there reads of whole rows are
 *     worth short writes, which the page cache gathers;
 *   - else the block is square, so that reads and writes both run about
 *     sqrt(budget x ranks / 4 / element size) elements: for very wide or
 *     very tall matrices that beats full rows, whose write runs would
 *     shrink to a handful of elements.
 * Blocks are then evened out: block i of a side of n covers [i*B, min((i+1)*B,
 * n)), B being the smallest size that keeps the pass count.  For a
 * compressed output, B is a whole multiple of its chunk's side wherever the
 * budget holds one chunk's pass, so that every chunk is written whole, by
 * one pass: HDF5 1.10 cannot rewrite, in a later run, compressed chunks an
 * earlier run wrote part of (a resumed output came out wrong). */
#ifndef XIO_PASSES_H
#define XIO_PASSES_H

#include <stddef.h>
#include <stdint.h>

/* A stack of `items` matrices (h5_matrix.h's leading axes) is moved one
 * item after the other, each in the same grid of blocks. */
typedef struct {
  int64_t items;                  /* matrices, each rows x cols */
  int64_t rows, cols;             /* one item's input matrix */
  int64_t row_passes, col_passes; /* the grid of blocks */
  int64_t block_rows, block_cols; /* B of each side: every block but the last */
} xio_pass_grid;

/* Largest pass the tool plans on the host with its default budget, in
 * bytes per rank (xio_pass_bytes): 128 MiB blocks.  There larger passes
 * were slower (2-core VM, 4 GiB, one rank: 4 passes of 1 GiB blocks took
 * 1.8x as long as 36 of 128 MiB; pageable buffers, and a pipeline of few
 * passes overlaps little).  With GPUs, whose host buffers are pinned, the
 * largest passes were the fastest: see tests/bench/RESULTS.md.  Raw passes
 * in whole-row bands may be larger (pass_plan.c: one host rank, 16 GiB,
 * 16 bands of 1 GiB took 32.6 s where 144 square blocks took 39.7 s). */
#define XIO_PASS_BYTES_FOR_SPEED ((uint64_t)768 << 20)

/* Bytes one rank needs for an h x w pass over `ranks` ranks: its share of
 * the input block and of the output block (each at most the larger of a
 * share of the rows and a share of the columns, the columns shared in
 * whole units of unit where it is over 1: xpose_unit_range) twice (one
 * pass is read and another written while a third is transposed), and the
 * transpose's send and receive scratch, at most as large as one of each. */
uint64_t xio_pass_bytes(int64_t h, int64_t w, size_t elem_size, int64_t ranks, int64_t unit);

/* Plans the passes for a rows x cols matrix (one item) within budget bytes per rank,
 * blocks of whole multiples of align_rows x align_cols (1: any) where the
 * budget holds one, their columns shared among the ranks in units of
 * share_unit (xio_pass_bytes); bands of whole rows wherever they can be at
 * least whole_rows_from rows tall (0: where they are at least as tall as
 * the square pass).  Returns -1 if not even a 1 x 1 pass fits. */
int xio_pass_grid_plan(int64_t rows, int64_t cols, size_t elem_size, int64_t ranks, uint64_t budget,
                       int64_t align_rows, int64_t align_cols, int64_t share_unit,
                       int64_t whole_rows_from, xio_pass_grid *grid);

/* 1 when every block boundary of grid falls on a multiple of align_rows x
 * align_cols (or the matrix's edge). */
int xio_pass_grid_aligned(const xio_pass_grid *grid, int64_t align_rows, int64_t align_cols);

/* 1 when grid is one xio_pass_grid_plan could make for its shape (a resume
 * record's, say): blocks within the matrix, pass counts that match them. */
int xio_pass_grid_valid(const xio_pass_grid *grid);

/* 1 when grid's blocks (planned for another run, say) fit budget bytes per
 * rank on `ranks` ranks, their columns shared in units of share_unit. */
int xio_pass_grid_fits(const xio_pass_grid *grid, size_t elem_size, int64_t ranks,
                       int64_t share_unit, uint64_t budget);

/* Of every item. */
int64_t xio_pass_count(const xio_pass_grid *grid);

/* The pass indices in the order they run, equal block shapes next to each
 * other (at most four plans get made: an NCCL communicator each, on GPUs);
 * "the first k passes" are the first k of this order.  malloc'd; NULL when
 * out of memory. */
int64_t *xio_pass_order(const xio_pass_grid *grid);

/* Block of pass `index` (0 <= index < count) within its item's matrix:
 * items outermost, then column bands.  *item: which item. */
void xio_pass_block(const xio_pass_grid *grid, int64_t index, int64_t *item, int64_t *row0,
                    int64_t *nrows, int64_t *col0, int64_t *ncols);

#endif
