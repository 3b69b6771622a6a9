/* Walking this rank's row slab of a matrix in pieces that fit a budget,
 * with the same number of pieces on every rank (collective I/O needs each
 * rank in each call; ranks with fewer pieces get empty ones). */
#ifndef XIO_SLAB_WALK_H
#define XIO_SLAB_WALK_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"

typedef struct {
  int64_t first, count, rows, cols; /* this rank's rows [first, first + count) */
  int64_t piece_rows, piece_cols;   /* whole rows when one fits, else parts of a row */
  int64_t col_pieces, local;        /* pieces per row band; pieces on this rank */
  int64_t total;                    /* pieces on the busiest rank: the loop count */
  /* xio_slab_walk_chunks: blocks of whole chunks, dealt to the ranks in turn */
  int by_chunks, rank, nranks;
} xio_slab_walk;

/* Collective.  budget: bytes for one piece (capped at XIO_MAX_TRANSFER_BYTES).
 * 0, or -1 with a message when MPI fails. */
int xio_slab_walk_init(MPI_Comm comm, int64_t rows, int64_t cols, size_t elem_size, uint64_t budget,
                       xio_slab_walk *walk, xio_error *err);

/* Collective.  The same in blocks of whole chunks (the rows and columns
 * a block starts and ends on being multiples of unit_rows and unit_cols),
 * the ranks taking blocks in turn, so that each chunk is read once, by one
 * rank (a compressed one is decompressed once): blocks grown up to budget
 * bytes, one chunk's block allowed up to most bytes.  1, and nothing set,
 * where one chunk's block does not fit most. */
int xio_slab_walk_chunks(MPI_Comm comm, int64_t rows, int64_t cols, size_t elem_size,
                         uint64_t budget, uint64_t most, int64_t unit_rows, int64_t unit_cols,
                         xio_slab_walk *walk, xio_error *err);

/* Piece p of walk->total; empty (nr = nc = 0) beyond this rank's pieces. */
void xio_slab_walk_piece(const xio_slab_walk *walk, int64_t p, int64_t *r0, int64_t *nr,
                         int64_t *c0, int64_t *nc);

#endif
