/* Pass planning: every pass fits the budget (its columns shared in whole
 * units too), passes tile the matrix exactly once, shapes follow the rule
 * in passes.h (whole rows, whole columns, else square), blocks are whole
 * multiples of an alignment where the budget holds one, and the order
 * runs every pass once.  The read-back's walks in blocks of whole chunks. */
#include <string.h>

#include "h5_matrix.h"
#include "passes.h"
#include "slab_walk.h"
#include "test_util.h"
#include "xpose.h"

/* The largest share of w columns over `ranks` in units of `unit`. */
static int64_t unit_share(int64_t w, int64_t ranks, int64_t unit) {
  int64_t first, count;
  xpose_unit_range(w, unit, ranks, 0, &first, &count);
  return count;
}

static void check_units(int64_t rows, int64_t cols, size_t es, int64_t ranks, uint64_t budget,
                        int64_t align_rows, int64_t align_cols, int64_t unit) {
  xio_pass_grid g;
  const int rc =
      xio_pass_grid_plan(rows, cols, es, ranks, budget, align_rows, align_cols, unit, 0, &g);
  if (rc != 0) {
    EXPECT(xio_pass_bytes(1, 1, es, ranks, unit) > budget,
           "%lldx%lld es=%zu P=%lld budget=%llu refused", (long long)rows, (long long)cols, es,
           (long long)ranks, (unsigned long long)budget);
    return;
  }
  /* the shares the plans split in units take: the largest block's */
  const int64_t share = unit_share(g.block_cols, ranks, unit);
  EXPECT(xio_pass_count(&g) == 1 ||
             6 * (uint64_t)es *
                     (uint64_t)(share * g.block_rows >
                                        (g.block_rows + ranks - 1) / ranks * g.block_cols
                                    ? share * g.block_rows
                                    : (g.block_rows + ranks - 1) / ranks * g.block_cols) <=
                 budget,
         "%lldx%lld in units of %lld: %lldx%lld blocks exceed %llu bytes", (long long)rows,
         (long long)cols, (long long)unit, (long long)g.block_rows, (long long)g.block_cols,
         (unsigned long long)budget);
  EXPECT(xio_pass_grid_fits(&g, es, ranks, unit, budget) || xio_pass_count(&g) == 1,
         "%lldx%lld in units of %lld: the grid does not fit", (long long)rows, (long long)cols,
         (long long)unit);
}

static void check_aligned(int64_t rows, int64_t cols, size_t es, int64_t ranks, uint64_t budget,
                          int64_t align_rows, int64_t align_cols) {
  xio_pass_grid g;
  const int rc =
      xio_pass_grid_plan(rows, cols, es, ranks, budget, align_rows, align_cols, 1, 0, &g);
  if (rc != 0) {
    EXPECT(xio_pass_bytes(1, 1, es, ranks, 1) > budget,
           "%lldx%lld es=%zu P=%lld budget=%llu refused", (long long)rows, (long long)cols, es,
           (long long)ranks, (unsigned long long)budget);
    return;
  }
  EXPECT(
      xio_pass_bytes(g.block_rows, g.block_cols, es, ranks, 1) <= budget || xio_pass_count(&g) == 1,
      "%lldx%lld: %lldx%lld blocks exceed %llu bytes", (long long)rows, (long long)cols,
      (long long)g.block_rows, (long long)g.block_cols, (unsigned long long)budget);
  const int whole =
      xio_pass_bytes(rows, cols, es, ranks, 1) <= budget &&
      (uint64_t)((rows + ranks - 1) / ranks) * (uint64_t)cols * es <= XIO_MAX_TRANSFER_BYTES &&
      (uint64_t)((cols + ranks - 1) / ranks) * (uint64_t)rows * es <= XIO_MAX_TRANSFER_BYTES;
  EXPECT(!whole || xio_pass_count(&g) == 1, "%lldx%lld fits but took %lld passes", (long long)rows,
         (long long)cols, (long long)xio_pass_count(&g));
  EXPECT(xio_pass_grid_valid(&g), "%lldx%lld: an invalid grid", (long long)rows, (long long)cols);
  /* Aligned wherever a block of a whole alignment fits the budget. */
  const int64_t ar = align_rows < rows ? align_rows : rows,
                ac = align_cols < cols ? align_cols : cols;
  if (rows && cols && xio_pass_bytes(ar, ac, es, ranks, 1) <= budget &&
      (uint64_t)((ar + ranks - 1) / ranks) * (uint64_t)ac * es <= XIO_MAX_TRANSFER_BYTES &&
      (uint64_t)((ac + ranks - 1) / ranks) * (uint64_t)ar * es <= XIO_MAX_TRANSFER_BYTES)
    EXPECT(xio_pass_grid_aligned(&g, align_rows, align_cols),
           "%lldx%lld aligned %lldx%lld: blocks %lldx%lld", (long long)rows, (long long)cols,
           (long long)align_rows, (long long)align_cols, (long long)g.block_rows,
           (long long)g.block_cols);
  int64_t *order = xio_pass_count(&g) <= 1000000 ? xio_pass_order(&g) : NULL;
  if (xio_pass_count(&g) <= 1000000)
    EXPECT(order != NULL, "%lldx%lld: no order", (long long)rows, (long long)cols);
  unsigned char *ran = calloc((size_t)xio_pass_count(&g) + 1, 1);
  for (int64_t k = 0; order && k < xio_pass_count(&g); k++)
    if (order[k] >= 0 && order[k] < xio_pass_count(&g)) ran[order[k]]++;
  for (int64_t p = 0; order && p < xio_pass_count(&g); p++)
    EXPECT(ran[p] == 1, "pass %lld runs %d times", (long long)p, ran[p]);
  free(ran);
  free(order);
  /* Exact tiling: areas add up, blocks stay inside, each cell covered once
   * (small cases; grids of a million passes or fewer: one-element passes
   * of 60013 x 60013 took 25 s). */
  if (xio_pass_count(&g) > 1000000) return;
  const int small = rows * cols <= 20000;
  unsigned char *seen = small ? calloc((size_t)(rows * cols) + 1, 1) : NULL;
  int64_t area = 0;
  for (int64_t p = 0; p < xio_pass_count(&g); p++) {
    int64_t item, r0, nr, c0, nc;
    xio_pass_block(&g, p, &item, &r0, &nr, &c0, &nc);
    EXPECT(item == 0 && nr >= 1 && nc >= 1 && nr <= g.block_rows && nc <= g.block_cols &&
               r0 + nr <= rows && c0 + nc <= cols,
           "pass %lld out of range", (long long)p);
    area += nr * nc;
    for (int64_t i = 0; seen && i < nr; i++)
      for (int64_t j = 0; j < nc; j++) seen[(r0 + i) * cols + c0 + j]++;
  }
  EXPECT(area == rows * cols, "passes cover %lld of %lld elements", (long long)area,
         (long long)(rows * cols));
  for (int64_t k = 0; seen && k < rows * cols; k++)
    EXPECT(seen[k] == 1, "element %lld covered %d times", (long long)k, seen[k]);
  free(seen);
}

static void check(int64_t rows, int64_t cols, size_t es, int64_t ranks, uint64_t budget) {
  check_aligned(rows, cols, es, ranks, budget, 1, 1);
}

/* Walks in blocks of whole chunks: grown up to the piece size, one
 * chunk's block allowed past it up to the most (a rechunked year's column
 * of chunks), refused beyond. */
static void check_chunk_walks(void) {
  xio_slab_walk w;
  xio_error err;
  EXPECT(xio_slab_walk_chunks(MPI_COMM_SELF, 100, 50, 8, 4000, 1 << 20, 10, 5, &w, &err) == 0 &&
             w.piece_rows == 10 && w.piece_cols == 50 && w.local == 10,
         "small chunks: %lld x %lld blocks", (long long)w.piece_rows, (long long)w.piece_cols);
  EXPECT(xio_slab_walk_chunks(MPI_COMM_SELF, 100, 50, 8, 4000, 1 << 20, 100, 10, &w, &err) == 0 &&
             w.piece_rows == 100 && w.piece_cols == 10 && w.local == 5,
         "a chunk's block past the piece: %lld x %lld blocks", (long long)w.piece_rows,
         (long long)w.piece_cols);
  EXPECT(xio_slab_walk_chunks(MPI_COMM_SELF, 100, 50, 8, 4000, 7999, 100, 10, &w, &err) == 1,
         "a chunk's block past the most accepted");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const int64_t dims[] = {1, 2, 7, 24, 97, 1009, 60013};
  const size_t sizes[] = {1, 8, 12};
  const int64_t ranks[] = {1, 3, 4};
  const uint64_t budgets[] = {16, 4096, 65536, 1 << 20};
  for (size_t a = 0; a < 7; a++)
    for (size_t b = 0; b < 7; b++)
      for (size_t s = 0; s < 3; s++)
        for (size_t r = 0; r < 3; r++)
          for (size_t m = 0; m < 4; m++) {
            check(dims[a], dims[b], sizes[s], ranks[r], budgets[m]);
            if (budgets[m] < 4096) continue; /* one-element passes: nothing to align */
            check_aligned(dims[a], dims[b], sizes[s], ranks[r], budgets[m], 7, 64);
            check_aligned(dims[a], dims[b], sizes[s], ranks[r], budgets[m], 293, 5);
            check_units(dims[a], dims[b], sizes[s], ranks[r], budgets[m], 7, 64, 64);
            check_units(dims[a], dims[b], sizes[s], ranks[r], budgets[m], 1, 5, 5);
          }

  xio_pass_grid g;
  /* Shapes: tall -> whole rows, wide -> whole columns, both large -> square. */
  EXPECT(xio_pass_grid_plan(60013, 7, 8, 4, 32768, 1, 1, 1, 0, &g) == 0 && g.block_cols == 7,
         "tall");
  EXPECT(xio_pass_grid_plan(7, 60013, 8, 4, 32768, 1, 1, 1, 0, &g) == 0 && g.block_rows == 7,
         "wide");
  EXPECT(xio_pass_grid_plan(1009, 997, 8, 2, 65536, 1, 1, 1, 0, &g) == 0 && g.block_rows < 1009 &&
             g.block_cols < 997 &&
             (g.block_rows - g.block_cols) * (g.block_rows - g.block_cols) <= 4,
         "square: %lld x %lld", (long long)g.block_rows, (long long)g.block_cols);
  EXPECT(xio_pass_grid_plan(5, 5, 8, 1, 31, 1, 1, 1, 0, &g) == -1,
         "budget below one element accepted");
  /* Raw access asks for whole rows wherever they can be that tall (a page
   * of each rank's output runs); the square is the default. */
  EXPECT(xio_pass_grid_plan(65536, 65536, 4, 1, 6ull << 30, 1, 1, 1, 0, &g) == 0 &&
             g.block_cols < 65536 && g.block_rows < 65536,
         "square blocks by default: %lld x %lld", (long long)g.block_rows, (long long)g.block_cols);
  EXPECT(xio_pass_grid_plan(65536, 65536, 4, 1, 6ull << 30, 1, 1, 1, 1024, &g) == 0 &&
             g.block_cols == 65536 && g.block_rows >= 1024 && g.block_rows == 4096,
         "whole rows asked for: %lld x %lld", (long long)g.block_rows, (long long)g.block_cols);
  EXPECT(xio_pass_grid_plan(65536, 65536, 4, 1, 6ull << 30, 1, 1, 1, 8192, &g) == 0 &&
             g.block_cols < 65536,
         "rows too short for what was asked: %lld x %lld", (long long)g.block_rows,
         (long long)g.block_cols);
  /* Large: 2^40 elements with 64 GiB budgets stay within the transfer cap. */
  EXPECT(xio_pass_grid_plan((int64_t)1 << 20, (int64_t)1 << 20, 8, 16, 64ull << 30, 1, 1, 1, 0,
                            &g) == 0,
         "large plan");
  int64_t per_rank = (g.block_rows + 15) / 16 * g.block_cols * 8;
  EXPECT(per_rank <= (int64_t)XIO_MAX_TRANSFER_BYTES, "transfer cap exceeded: %lld",
         (long long)per_rank);
  EXPECT(xio_pass_count(&g) > 1, "2^40 elements in one pass");
  check((int64_t)1 << 20, (int64_t)1 << 20, 8, 16, 64ull << 30);
  /* Compressed outputs: blocks of whole chunks, still as few passes as the budget allows. */
  EXPECT(xio_pass_grid_plan(4096, 4096, 8, 2, 4 << 20, 293, 293, 1, 0, &g) == 0 &&
             g.block_rows == 293 && g.block_cols == 293,
         "aligned: %lld x %lld", (long long)g.block_rows, (long long)g.block_cols);
  check_aligned((int64_t)1 << 20, (int64_t)1 << 20, 8, 16, 64ull << 30, 1000, 3000);
  /* A stack of items: each in the same grid, one item after the other, in
   * the one item's order. */
  EXPECT(xio_pass_grid_plan(101, 53, 4, 2, 4096, 1, 1, 1, 0, &g) == 0 && xio_pass_count(&g) > 1,
         "one item in several passes");
  const int64_t per_item = xio_pass_count(&g);
  g.items = 5;
  EXPECT(xio_pass_grid_valid(&g) && xio_pass_count(&g) == 5 * per_item, "a grid of 5 items");
  int64_t *order = xio_pass_order(&g);
  for (int64_t k = 0; order && k < xio_pass_count(&g); k++) {
    int64_t item, r0, nr, c0, nc, first_item, fr0, fnr, fc0, fnc;
    xio_pass_block(&g, order[k], &item, &r0, &nr, &c0, &nc);
    xio_pass_block(&g, order[k % per_item], &first_item, &fr0, &fnr, &fc0, &fnc);
    EXPECT(
        item == k / per_item && first_item == 0 && r0 == fr0 && nr == fnr && c0 == fc0 && nc == fnc,
        "pass %lld of 5 items: item %lld", (long long)k, (long long)item);
  }
  free(order);
  check_chunk_walks();
  MPI_Finalize();
  if (test_failures) return 1;
  printf("pass grid: all checks passed\n");
  return 0;
}
