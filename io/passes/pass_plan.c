#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "pass_plan.h"

#include <unistd.h>

#include "pass_geometry.h"

uint64_t xio_transpose_budget(const xio_transpose_options *options) {
  const uint64_t host = options->memory_budget;
  if (options->config.backend != XPOSE_BACKEND_CUDA) return host;
  /* The GPU holds one block of each kind and the scratch (2/3 of the pass
   * bytes), the host two blocks of each kind (also 2/3). */
  const uint64_t host_share = host / 2 * 3;
  return options->gpu_memory_budget < host_share ? options->gpu_memory_budget : host_share;
}

/* Raw passes come in at least RAW_MIN_PASSES whole-row bands where those
 * are at least RAW_MIN_RUN_PAGES pages tall: a pipeline of fewer passes
 * reads its first pass and writes its last with nothing beside them (16
 * host ranks, 8 GiB, the H100 machine's disk: 4 passes 17.1 s, 16 passes
 * 14.8 s), and runs of one page, which several ranks write into one file,
 * wait on its lock (2-core VM, 2 GiB, 2 ranks: 16 passes of 4 KiB runs
 * slower than 8 of 8 KiB). */
#define RAW_MIN_PASSES 16
#define RAW_MIN_RUN_PAGES 2

uint64_t xio_pass_raw_share(const xio_pass_grid *grid, const xio_matrix *in, int nranks) {
  const xio_pass_geometry g = xio_pass_geometry_of(grid, &in->shape, 0, 0, nranks, 1, 1);
  return xio_pass_read_bytes(&g, in->elem_size);
}

/* The part of the budget the pass buffers (xio_pass_bytes) may take. */
static uint64_t buffers_budget(const xio_matrix *in, const xio_transpose_options *options,
                               uint64_t budget, int compressed) {
  /* Writing a compressed output, each rank's chunks are compressed outside
   * these buffers (the codec's: a rank's share of an output block, and on
   * rank 0 the largest other rank's; or HDF5's, which gathers them), up to
   * half as much again: at 3/4 of a 512 MiB budget a rank of the 4 GiB
   * climate run peaked at 596 MiB (HDF5's), at 2/3 within the budget and
   * 64 MiB.  With GPUs the host holds two thirds of the pass bytes. */
  if (compressed)
    budget = options->config.backend != XPOSE_BACKEND_CUDA ? budget / 3 * 2
             : budget < options->memory_budget             ? budget
                                                           : options->memory_budget;
  /* Rechunking, each output block is transposed back into buffers of its
   * own (h5_transpose.c): two more of the six blocks xio_pass_bytes counts. */
  if (in->shape.rechunk) budget = budget / 4 * 3;
  return budget;
}

/* The budget the pass grid is planned for: options' limits, and with raw
 * access at least RAW_MIN_PASSES bands where they can be (and stay raw);
 * *whole_rows_from gets the height from which whole-row bands are taken
 * (passes.h). */
static uint64_t pass_budget(const xio_matrix *in, const xio_transpose_options *options,
                            uint64_t budget, int raw, int compressed, int nranks,
                            int64_t *whole_rows_from) {
  budget = buffers_budget(in, options, budget, compressed);
  uint64_t limit = options->pass_bytes_limit && options->pass_bytes_limit < budget
                       ? options->pass_bytes_limit
                       : budget;
  *whole_rows_from = 0;
  if (!raw) return limit;
  /* Whole-row bands where the runs in the output (each rank's are as long
   * as the pass is tall: pass_geometry.h) fill a page. */
  const long page_size = sysconf(_SC_PAGESIZE);
  const int64_t page = page_size > 0 ? page_size : 4096, es = (int64_t)in->elem_size;
  *whole_rows_from = (page + es - 1) / es;
  const int64_t rows = xio_item_rows(in);
  const int64_t band = (rows + RAW_MIN_PASSES - 1) / RAW_MIN_PASSES;
  if (band < RAW_MIN_RUN_PAGES * *whole_rows_from) return limit;
  const xio_pass_grid bands = {1, rows, in->cols, (rows + band - 1) / band, 1, band, in->cols};
  /* within the budget, past the host's pass limit (passes.h): that limit
   * was measured on the collective path, whose few large passes overlapped
   * little, where raw bands come in 16 at least */
  const uint64_t band_bytes = xio_pass_bytes(band, in->cols, in->elem_size, nranks, 1);
  if (xio_pass_raw_share(&bands, in, nranks) >= XIO_RAW_MIN_SHARE_BYTES && band_bytes < budget) {
    limit = band_bytes;
    *whole_rows_from = band;
  }
  return limit;
}

void xio_pass_output_units(const xio_matrix *in, const xio_matrix *out, int64_t *along_rows,
                           int64_t *along_cols) {
  const int keeps = in->shape.rechunk; /* else out's rows are in's columns */
  *along_rows = keeps ? out->chunk_rows : out->chunk_cols;
  *along_cols = keeps ? out->chunk_cols : out->chunk_rows;
}

/* The least common multiple of a and b, or `whole` where it is larger:
 * blocks that start and end on it (or the matrix's edge) cover whole
 * chunks of both. */
static int64_t common_unit(int64_t a, int64_t b, int64_t whole) {
  int64_t x = a, y = b;
  while (y) {
    const int64_t r = x % y;
    x = y, y = r;
  }
  const int64_t multiple = a / x;
  return multiple > whole / b ? whole : multiple * b;
}

void xio_transpose_block(const xio_matrix *in, const xio_transpose_options *options, int ranks,
                         int compressed, int64_t *out_rows, int64_t *out_cols) {
  int64_t whole_rows_from = 0;
  const uint64_t budget = pass_budget(in, options, xio_transpose_budget(options), 0, compressed,
                                      ranks, &whole_rows_from);
  xio_pass_grid grid;
  *out_rows = *out_cols = 0;
  if (xio_pass_grid_plan(xio_item_rows(in), in->cols, in->elem_size, ranks, budget,
                         in->filtered ? in->chunk_rows : 1, in->filtered ? in->chunk_cols : 1, 1,
                         whole_rows_from, &grid) == 0)
    *out_rows = grid.block_cols, *out_cols = grid.block_rows;
}

/* Plans grid in blocks of whole units_rows x units_cols, where one fits
 * `budget` (over `limit`, options' pass limit, if need be), columns
 * shared in units of share_unit: 1 where the grid is so aligned. */
static int plan_in_units(const xio_matrix *in, int nranks, uint64_t limit, uint64_t budget,
                         int64_t unit_rows, int64_t unit_cols, int64_t share_unit,
                         int64_t whole_rows_from, xio_pass_grid *grid) {
  const int64_t rows = xio_item_rows(in);
  const uint64_t least = xio_pass_bytes(unit_rows < rows ? unit_rows : rows,
                                        unit_cols < in->cols ? unit_cols : in->cols, in->elem_size,
                                        nranks, share_unit);
  if (limit < least && least <= budget) limit = least;
  return xio_pass_grid_plan(rows, in->cols, in->elem_size, nranks, limit, unit_rows, unit_cols,
                            share_unit, whole_rows_from, grid) == 0 &&
         xio_pass_grid_aligned(grid, unit_rows, unit_cols);
}

int xio_pass_plan(const xio_matrix *in, const xio_matrix *out, const xio_transpose_options *options,
                  int nranks, int raw, int64_t share_unit, xio_pass_grid *grid, xio_error *err) {
  const int64_t rows = xio_item_rows(in); /* of each item */
  const uint64_t budget = xio_transpose_budget(options);
  if (options->resume_from) {
    *grid = options->resume_from->grid;
    if (grid->items != in->items || grid->rows != rows || grid->cols != in->cols ||
        !xio_pass_grid_fits(grid, in->elem_size, nranks, share_unit, budget))
      return xio_fail(err, "internal: the resumed passes do not fit this run");
    return 0;
  }
  int64_t whole_rows_from = 0;
  const uint64_t plan_budget =
      pass_budget(in, options, budget, raw, out->filtered, nranks, &whole_rows_from);
  if (xio_pass_grid_plan(rows, in->cols, in->elem_size, nranks, plan_budget, 1, 1, share_unit,
                         whole_rows_from, grid))
    return xio_fail(err, "a memory budget of %llu bytes per rank cannot hold even one element",
                    (unsigned long long)budget);
  int64_t out_rows = 1, out_cols = 1;
  if (out->filtered) xio_pass_output_units(in, out, &out_rows, &out_cols);
  /* Rechunking, each rank writes its share of a pass's columns: the
   * chunks asked for fit it where the pass holds whole chunks for each
   * rank (the chunks chosen for a transpose are shaped to fit it). */
  const int64_t shared_cols =
      in->shape.rechunk && out_cols * nranks <= in->cols ? out_cols * nranks : out_cols;
  /* Passes of whole chunks of both where they fit the pass limit, else of
   * the output's, where they fit the budget: an input chunk read in parts
   * is inflated again for each, an output chunk written in parts is
   * inflated, changed and deflated again for each (and cannot be
   * resumed); else of any shape. */
  const int64_t units[3][2] = {
      {common_unit(out_rows, in->filtered ? in->chunk_rows : 1, rows),
       common_unit(shared_cols, in->filtered ? in->chunk_cols : 1, in->cols)},
      {out_rows, shared_cols},
      {out_rows, out_cols}};
  const uint64_t most = buffers_budget(in, options, budget, out->filtered);
  for (int k = 0; k < 3; k++)
    if (plan_in_units(in, nranks, plan_budget, k ? most : plan_budget, units[k][0], units[k][1],
                      share_unit, whole_rows_from, grid))
      break;
  grid->items = in->items; /* each item's matrix in the same grid */
  return 0;
}

int xio_pass_plan_for_io(const xio_matrix *in, const xio_matrix *out,
                         const xio_transpose_options *options, int nranks, int *raw,
                         int64_t share_unit, xio_pass_grid *grid, xio_error *err) {
  const int rc = xio_pass_plan(in, out, options, nranks, *raw, share_unit, grid, err);
  /* every rank computes the same, so no rank needs to ask; rank 0's share is the largest */
  if (rc != 0 || !*raw || xio_pass_raw_share(grid, in, nranks) >= XIO_RAW_MIN_SHARE_BYTES)
    return rc;
  *raw = 0;
  return xio_pass_plan(in, out, options, nranks, 0, share_unit, grid, err);
}
