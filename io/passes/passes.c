#include "passes.h"

#include <stdlib.h>

#include "h5_matrix.h" /* XIO_MAX_TRANSFER_BYTES */

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* The most of w columns a rank takes: its share of them, in whole
 * units of `unit` (xpose_unit_range) where unit > 1. */
static uint64_t column_share(int64_t w, int64_t ranks, int64_t unit) {
  const uint64_t u = unit > 1 ? (uint64_t)unit : 1;
  const uint64_t share = ceil_div(ceil_div((uint64_t)w, u), (uint64_t)ranks) * u;
  return share < (uint64_t)w ? share : (uint64_t)w;
}

uint64_t xio_pass_bytes(int64_t h, int64_t w, size_t elem_size, int64_t ranks, int64_t unit) {
  /* A share of the rows or of the columns, whichever is larger, bounds
   * every share either block takes (h5_transpose.c's geometry_of). */
  const uint64_t by_rows = ceil_div((uint64_t)h, (uint64_t)ranks) * (uint64_t)w;
  const uint64_t by_cols = column_share(w, ranks, unit) * (uint64_t)h;
  const uint64_t share = by_rows > by_cols ? by_rows : by_cols;
  return 3 * (uint64_t)elem_size * 2 * share;
}

static int fits(int64_t h, int64_t w, size_t es, int64_t ranks, int64_t unit, uint64_t budget) {
  const uint64_t in = ceil_div((uint64_t)h, (uint64_t)ranks) * (uint64_t)w * es;
  const uint64_t out = column_share(w, ranks, unit) * (uint64_t)h * es;
  return in <= XIO_MAX_TRANSFER_BYTES && out <= XIO_MAX_TRANSFER_BYTES &&
         xio_pass_bytes(h, w, es, ranks, unit) <= budget;
}

/* Blocks are planned in units of ur x uc elements (the alignment; 1 x 1
 * when none), a block of hu x wu units being the matrix's min(hu * ur,
 * rows) x min(wu * uc, cols). */
typedef struct {
  int64_t rows, cols, ur, uc;
  size_t es;
  int64_t ranks, share_unit;
  uint64_t budget;
} planner;

static int64_t elements(int64_t units, int64_t unit, int64_t n) {
  return units < (n + unit - 1) / unit ? units * unit : n;
}

static int fits_units(const planner *p, int64_t hu, int64_t wu) {
  return fits(elements(hu, p->ur, p->rows), elements(wu, p->uc, p->cols), p->es, p->ranks,
              p->share_unit, p->budget);
}

/* Largest x in [1, limit] with fits_units(h(x), w(x)); 0 if even 1 does not fit. */
typedef enum { GROW_ROWS, GROW_COLS, GROW_BOTH } growth;

static int64_t largest_fit(const planner *p, growth g, int64_t fixed, int64_t limit) {
  int64_t lo = 0, hi = limit;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    const int64_t h = g == GROW_COLS ? fixed : mid, w = g == GROW_ROWS ? fixed : mid;
    if (fits_units(p, h, w))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* B for a side of n units cut into blocks of at most `most` units: as few
 * blocks as that allows, as even as they can be; in elements. */
static int64_t block_side(int64_t n_units, int64_t most, int64_t unit, int64_t n) {
  if (most >= n_units) return n;
  const uint64_t blocks = ceil_div((uint64_t)n_units, (uint64_t)most);
  return (int64_t)ceil_div((uint64_t)n_units, blocks) * unit;
}

int xio_pass_grid_plan(int64_t rows, int64_t cols, size_t elem_size, int64_t ranks, uint64_t budget,
                       int64_t align_rows, int64_t align_cols, int64_t share_unit,
                       int64_t whole_rows_from, xio_pass_grid *grid) {
  grid->items = 1;
  grid->rows = rows;
  grid->cols = cols;
  grid->row_passes = grid->col_passes = 1;
  grid->block_rows = rows;
  grid->block_cols = cols;
  if (rows == 0 || cols == 0 || fits(rows, cols, elem_size, ranks, share_unit, budget)) return 0;
  if (!fits(1, 1, elem_size, ranks, share_unit, budget)) return -1;

  /* In whole alignments where one fits, else in elements. */
  planner p = {.rows = rows,
               .cols = cols,
               .ur = align_rows > 1 ? align_rows : 1,
               .uc = align_cols > 1 ? align_cols : 1,
               .es = elem_size,
               .ranks = ranks,
               .share_unit = share_unit,
               .budget = budget};
  if (!fits_units(&p, 1, 1)) p.ur = p.uc = 1;
  const int64_t nr = (int64_t)ceil_div((uint64_t)rows, (uint64_t)p.ur),
                nc = (int64_t)ceil_div((uint64_t)cols, (uint64_t)p.uc);
  /* Side of the square pass the budget allows. */
  const int64_t side = largest_fit(&p, GROW_BOTH, 0, nr < nc ? nr : nc);
  int64_t h, w;
  const int64_t band = largest_fit(&p, GROW_ROWS, nc, nr);
  if (band >= side || (whole_rows_from > 0 && band * p.ur >= whole_rows_from)) {
    w = nc; /* whole rows, at least as tall as the square (or as asked) */
    h = band;
  } else if (largest_fit(&p, GROW_COLS, nr, nc) >= side) {
    h = nr; /* whole columns */
    w = largest_fit(&p, GROW_COLS, nr, nc);
  } else {
    h = w = side;
  }
  grid->block_rows = block_side(nr, h, p.ur, rows);
  grid->block_cols = block_side(nc, w, p.uc, cols);
  grid->row_passes = (int64_t)ceil_div((uint64_t)rows, (uint64_t)grid->block_rows);
  grid->col_passes = (int64_t)ceil_div((uint64_t)cols, (uint64_t)grid->block_cols);
  return 0;
}

int xio_pass_grid_aligned(const xio_pass_grid *grid, int64_t align_rows, int64_t align_cols) {
  return (grid->block_rows >= grid->rows || align_rows <= 1 ||
          grid->block_rows % align_rows == 0) &&
         (grid->block_cols >= grid->cols || align_cols <= 1 || grid->block_cols % align_cols == 0);
}

/* A side of n in blocks of b: one empty block when n is 0. */
static int side_valid(int64_t n, int64_t b, int64_t passes) {
  if (n == 0) return b == 0 && passes == 1;
  return n > 0 && b >= 1 && b <= n && passes == (int64_t)ceil_div((uint64_t)n, (uint64_t)b);
}

int xio_pass_grid_valid(const xio_pass_grid *g) {
  return g->items >= 1 && side_valid(g->rows, g->block_rows, g->row_passes) &&
         side_valid(g->cols, g->block_cols, g->col_passes);
}

int xio_pass_grid_fits(const xio_pass_grid *grid, size_t elem_size, int64_t ranks,
                       int64_t share_unit, uint64_t budget) {
  return grid->rows == 0 || grid->cols == 0 ||
         fits(grid->block_rows, grid->block_cols, elem_size, ranks, share_unit, budget);
}

int64_t xio_pass_count(const xio_pass_grid *grid) {
  return grid->items * grid->row_passes * grid->col_passes;
}

/* Block i of a side of n cut into blocks of b. */
static void block_of(int64_t n, int64_t b, int64_t i, int64_t *first, int64_t *count) {
  *first = i * b;
  *count = n - *first < b ? n - *first : b;
}

void xio_pass_block(const xio_pass_grid *grid, int64_t index, int64_t *item, int64_t *row0,
                    int64_t *nrows, int64_t *col0, int64_t *ncols) {
  *item = 0;
  if (grid->items > 1) {
    const int64_t per_item = grid->row_passes * grid->col_passes;
    *item = index / per_item;
    index %= per_item;
  }
  block_of(grid->cols, grid->block_cols, index / grid->row_passes, col0, ncols);
  block_of(grid->rows, grid->block_rows, index % grid->row_passes, row0, nrows);
}

int64_t *xio_pass_order(const xio_pass_grid *g) {
  int64_t *order = malloc(sizeof *order * (size_t)(xio_pass_count(g) + 1)), n = 0;
  if (!order) return NULL;
  /* the last block of a side is short unless the side is a multiple of B */
  const int64_t short_row = g->block_rows && g->rows % g->block_rows ? g->row_passes - 1 : -1,
                short_col = g->block_cols && g->cols % g->block_cols ? g->col_passes - 1 : -1;
  const int64_t per_item = g->row_passes * g->col_passes;
  for (int width_class = 0; width_class < 2; width_class++)
    for (int height_class = 0; height_class < 2; height_class++)
      for (int64_t cp = 0; cp < g->col_passes; cp++)
        for (int64_t rp = 0; rp < g->row_passes; rp++)
          if ((cp == short_col) == width_class && (rp == short_row) == height_class)
            order[n++] = cp * g->row_passes + rp;
  for (int64_t item = 1; item < g->items; item++) /* each item as the first */
    for (int64_t k = 0; k < per_item; k++) order[n++] = item * per_item + order[k];
  return order;
}
