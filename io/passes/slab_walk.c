#include "slab_walk.h"

#include "h5_matrix.h" /* XIO_MAX_TRANSFER_BYTES */
#include "passes.h"
#include "xpose.h"

int xio_slab_walk_init(MPI_Comm comm, int64_t rows, int64_t cols, size_t elem_size, uint64_t budget,
                       xio_slab_walk *walk, xio_error *err) {
  int rank, nranks;
  if (XIO_MPICHECK(MPI_Comm_rank(comm, &rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(comm, &nranks), err))
    return -1;
  *walk = (xio_slab_walk){0};
  xpose_block_range(rows, nranks, rank, &walk->first, &walk->count);
  walk->rows = rows;
  walk->cols = cols;
  if (budget > XIO_MAX_TRANSFER_BYTES) budget = XIO_MAX_TRANSFER_BYTES;
  const uint64_t row_bytes = (uint64_t)cols * elem_size;
  walk->piece_rows = 1;
  walk->piece_cols = cols;
  if (row_bytes == 0 || row_bytes <= budget) {
    walk->piece_rows = row_bytes ? (int64_t)(budget / row_bytes) : walk->count;
    if (walk->piece_rows > walk->count) walk->piece_rows = walk->count;
    if (walk->piece_rows < 1) walk->piece_rows = 1;
  } else {
    walk->piece_cols = (int64_t)(budget / elem_size);
    if (walk->piece_cols < 1) walk->piece_cols = 1;
  }
  walk->col_pieces = cols ? (cols + walk->piece_cols - 1) / walk->piece_cols : 0;
  walk->local = walk->col_pieces * ((walk->count + walk->piece_rows - 1) / walk->piece_rows);
  return XIO_MPICHECK(MPI_Allreduce(&walk->local, &walk->total, 1, MPI_INT64_T, MPI_MAX, comm),
                      err);
}

int xio_slab_walk_chunks(MPI_Comm comm, int64_t rows, int64_t cols, size_t elem_size,
                         uint64_t budget, uint64_t most, int64_t unit_rows, int64_t unit_cols,
                         xio_slab_walk *walk, xio_error *err) {
  int rank, nranks;
  if (XIO_MPICHECK(MPI_Comm_rank(comm, &rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(comm, &nranks), err))
    return -1;
  if (most > XIO_MAX_TRANSFER_BYTES) most = XIO_MAX_TRANSFER_BYTES;
  if (budget > most) budget = most;
  if (rows == 0 || cols == 0 || unit_rows < 1 || unit_cols < 1) return 1;
  int64_t br = unit_rows < rows ? unit_rows : rows, bc = unit_cols < cols ? unit_cols : cols;
  if ((uint64_t)br * (uint64_t)bc * elem_size > most) return 1;
  while (bc < cols && (uint64_t)br * (uint64_t)(bc + unit_cols) * elem_size <= budget)
    bc += unit_cols;
  if (bc > cols) bc = cols;
  while (br < rows && (uint64_t)(br + unit_rows) * (uint64_t)bc * elem_size <= budget)
    br += unit_rows;
  if (br > rows) br = rows;
  *walk = (xio_slab_walk){0};
  walk->by_chunks = 1, walk->rank = rank, walk->nranks = nranks;
  walk->rows = rows, walk->cols = cols, walk->piece_rows = br, walk->piece_cols = bc;
  walk->col_pieces = (cols + bc - 1) / bc;
  const int64_t blocks = (rows + br - 1) / br * walk->col_pieces;
  walk->local = blocks / nranks + (rank < blocks % nranks);
  walk->total = (blocks + nranks - 1) / nranks;
  return 0;
}

void xio_slab_walk_piece(const xio_slab_walk *walk, int64_t p, int64_t *r0, int64_t *nr,
                         int64_t *c0, int64_t *nc) {
  *r0 = *nr = *c0 = *nc = 0;
  if (p >= walk->local) return;
  if (walk->by_chunks) {
    const int64_t block = p * walk->nranks + walk->rank;
    *r0 = (block / walk->col_pieces) * walk->piece_rows;
    *c0 = (block % walk->col_pieces) * walk->piece_cols;
    *nr = walk->rows - *r0 < walk->piece_rows ? walk->rows - *r0 : walk->piece_rows;
    *nc = walk->cols - *c0 < walk->piece_cols ? walk->cols - *c0 : walk->piece_cols;
    return;
  }
  const int64_t end = walk->first + walk->count;
  *r0 = walk->first + (p / walk->col_pieces) * walk->piece_rows;
  *nr = end - *r0 < walk->piece_rows ? end - *r0 : walk->piece_rows;
  *c0 = (p % walk->col_pieces) * walk->piece_cols;
  *nc = walk->cols - *c0 < walk->piece_cols ? walk->cols - *c0 : walk->piece_cols;
}
