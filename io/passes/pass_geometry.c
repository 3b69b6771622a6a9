#include "pass_geometry.h"

#include "checksum.h"
#include "xpose.h"

xio_pass_geometry xio_pass_geometry_of(const xio_pass_grid *grid, const xio_shape *in, int64_t pass,
                                       int rank, int nranks, int local, int64_t unit) {
  xio_pass_geometry g = {0};
  int64_t first, count;
  xio_pass_block(grid, pass, &g.item, &g.row0, &g.nrows, &g.col0, &g.ncols);
  if (local && g.ncols == grid->cols) { /* its columns of a band */
    xpose_block_range(g.ncols, nranks, rank, &first, &count);
    g.read_row = g.row0;
    g.read_rows = g.nrows;
    g.read_col = g.col0 + first;
    g.read_cols = count;
  } else { /* its rows */
    xpose_block_range(g.nrows, nranks, rank, &first, &count);
    g.read_row = g.row0 + first;
    g.read_rows = count;
    g.read_col = g.col0;
    g.read_cols = g.ncols;
  }
  g.rechunk = in->rechunk;
  if (g.rechunk) { /* its share of the block's columns, each a run of the block's rows */
    xpose_unit_range(g.ncols, unit, nranks, rank, &first, &count);
    g.write_row = g.row0 + g.item * grid->rows;
    g.write_rows = g.nrows;
    g.write_col = g.col0 + first;
    g.write_cols = count;
    g.read_row += g.item * grid->rows;
    return g;
  }
  if (local) {
    g.write_row = g.read_col;
    g.write_rows = g.read_cols;
    g.write_col = g.read_row;
    g.write_cols = g.read_rows;
  } else {
    xpose_unit_range(g.ncols, unit, nranks, rank, &first, &count);
    g.write_row = g.col0 + first;
    g.write_rows = count;
    g.write_col = g.row0;
    g.write_cols = g.nrows;
  }
  g.read_row += g.item * grid->rows;
  g.write_row += xio_shape_moved_item(in, g.item) * grid->cols;
  return g;
}

uint64_t xio_pass_read_bytes(const xio_pass_geometry *p, size_t elem_size) {
  return (uint64_t)(p->read_rows * p->read_cols) * elem_size;
}

uint64_t xio_pass_write_bytes(const xio_pass_geometry *p, size_t elem_size) {
  return (uint64_t)(p->write_rows * p->write_cols) * elem_size;
}

xio_block_sum xio_pass_input_keys(const xio_pass_geometry *p, int64_t in_cols, uint64_t *sum) {
  return (xio_block_sum){(uint64_t)p->read_row * (uint64_t)in_cols + (uint64_t)p->read_col,
                         (uint64_t)in_cols, 1, sum};
}

xio_block_sum xio_pass_output_keys(const xio_pass_geometry *p, int64_t in_cols,
                                   int64_t in_item_rows, uint64_t *sum) {
  if (p->rechunk) /* in the exchange's order: the block's columns one by one */
    return (xio_block_sum){(uint64_t)p->write_row * (uint64_t)in_cols + (uint64_t)p->write_col, 1,
                           (uint64_t)in_cols, sum};
  return (xio_block_sum){
      xio_output_first_key(p->item, p->write_row, p->write_col, in_cols, in_item_rows), 1,
      (uint64_t)in_cols, sum};
}
