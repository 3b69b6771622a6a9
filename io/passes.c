#include "passes.h"

#include "xpose.h"

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

uint64_t xio_pass_bytes(int64_t h, int64_t w, size_t elem_size, int64_t ranks) {
  const uint64_t in = ceil_div((uint64_t)h, (uint64_t)ranks) * (uint64_t)w;
  const uint64_t out = ceil_div((uint64_t)w, (uint64_t)ranks) * (uint64_t)h;
  return 3 * (uint64_t)elem_size * (in + out);
}

static int fits(int64_t h, int64_t w, size_t es, int64_t ranks, uint64_t budget) {
  const uint64_t in = ceil_div((uint64_t)h, (uint64_t)ranks) * (uint64_t)w * es;
  const uint64_t out = ceil_div((uint64_t)w, (uint64_t)ranks) * (uint64_t)h * es;
  return in <= XIO_MAX_TRANSFER_BYTES && out <= XIO_MAX_TRANSFER_BYTES &&
         xio_pass_bytes(h, w, es, ranks) <= budget;
}

/* Largest x in [1, limit] with fits(h(x), w(x)); 0 if even 1 does not fit. */
typedef enum { GROW_ROWS, GROW_COLS, GROW_BOTH } growth;

static int64_t largest_fit(growth g, int64_t fixed, int64_t limit, size_t es, int64_t ranks,
                           uint64_t budget) {
  int64_t lo = 0, hi = limit;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    const int64_t h = g == GROW_COLS ? fixed : mid, w = g == GROW_ROWS ? fixed : mid;
    if (fits(h, w, es, ranks, budget))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

int xio_pass_grid_plan(int64_t rows, int64_t cols, size_t elem_size, int64_t ranks, uint64_t budget,
                       xio_pass_grid *grid) {
  grid->rows = rows;
  grid->cols = cols;
  grid->row_passes = grid->col_passes = 1;
  grid->block_rows = rows;
  grid->block_cols = cols;
  if (rows == 0 || cols == 0 || fits(rows, cols, elem_size, ranks, budget)) return 0;
  if (!fits(1, 1, elem_size, ranks, budget)) return -1;

  /* Side of the square pass the budget allows. */
  const int64_t side =
      largest_fit(GROW_BOTH, 0, rows < cols ? rows : cols, elem_size, ranks, budget);
  int64_t h, w;
  if (largest_fit(GROW_ROWS, cols, rows, elem_size, ranks, budget) >= side) {
    w = cols; /* whole rows, at least as tall as the square */
    h = largest_fit(GROW_ROWS, cols, rows, elem_size, ranks, budget);
  } else if (largest_fit(GROW_COLS, rows, cols, elem_size, ranks, budget) >= side) {
    h = rows; /* whole columns */
    w = largest_fit(GROW_COLS, rows, cols, elem_size, ranks, budget);
  } else {
    h = w = side;
  }
  grid->row_passes = (int64_t)ceil_div((uint64_t)rows, (uint64_t)h);
  grid->col_passes = (int64_t)ceil_div((uint64_t)cols, (uint64_t)w);
  grid->block_rows = (int64_t)ceil_div((uint64_t)rows, (uint64_t)grid->row_passes);
  grid->block_cols = (int64_t)ceil_div((uint64_t)cols, (uint64_t)grid->col_passes);
  return 0;
}

int xio_pass_grid_fits(const xio_pass_grid *grid, size_t elem_size, int64_t ranks,
                       uint64_t budget) {
  return grid->rows == 0 || grid->cols == 0 ||
         fits(grid->block_rows, grid->block_cols, elem_size, ranks, budget);
}

int64_t xio_pass_count(const xio_pass_grid *grid) { return grid->row_passes * grid->col_passes; }

void xio_pass_block(const xio_pass_grid *grid, int64_t index, int64_t *row0, int64_t *nrows,
                    int64_t *col0, int64_t *ncols) {
  xpose_block_range(grid->cols, grid->col_passes, index / grid->row_passes, col0, ncols);
  xpose_block_range(grid->rows, grid->row_passes, index % grid->row_passes, row0, nrows);
}
