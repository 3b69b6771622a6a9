#include "h5_transpose.h"

#include <stdlib.h>

typedef struct {
  xpose_plan plan;
  int64_t rows, cols;
} shaped_plan;

/* Passes come in at most four shapes; keep one plan alive at a time so
 * only one plan's scratch counts against the budget. */
static xpose_status plan_for(shaped_plan *sp, MPI_Comm comm, int64_t rows, int64_t cols,
                             size_t elem_size, const xpose_config *config) {
  if (sp->plan && sp->rows == rows && sp->cols == cols) return XPOSE_SUCCESS;
  xpose_plan_destroy(sp->plan);
  sp->plan = NULL;
  sp->rows = rows;
  sp->cols = cols;
  return xpose_plan_create(comm, rows, cols, elem_size, config, &sp->plan);
}

int xio_transpose(const xio_matrix *in, const xio_matrix *out, const xio_transpose_options *options,
                  xio_transpose_stats *stats, xio_error *err) {
  MPI_Comm comm = in->comm;
  int rank, nranks, rc = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const size_t es = in->elem_size;
  *stats = (xio_transpose_stats){0};
  if (out->rows != in->cols || out->cols != in->rows || out->elem_size != es)
    return xio_fail(err, "internal: output %lld x %lld does not match the input's transpose",
                    (long long)out->rows, (long long)out->cols);
  if (xio_pass_grid_plan(in->rows, in->cols, es, nranks, options->memory_budget, &stats->grid))
    rc = xio_fail(err, "a memory budget of %llu bytes per rank cannot hold even one element",
                  (unsigned long long)options->memory_budget);
  if (xio_agree(comm, rc, err)) return -1;

  const xio_pass_grid *grid = &stats->grid;
  const int64_t passes = xio_pass_count(grid);
  stats->buffer_bytes = xio_pass_bytes(grid->block_rows, grid->block_cols, es, nranks);
  int64_t in_first, in_rows, out_first, out_rows;
  xpose_block_range(grid->block_rows, nranks, 0, &in_first, &in_rows); /* rank 0 has the most */
  xpose_block_range(grid->block_cols, nranks, 0, &out_first, &out_rows);
  void *in_buf = malloc((size_t)(in_rows * grid->block_cols) * es + 1);
  void *out_buf = malloc((size_t)(out_rows * grid->block_rows) * es + 1);
  if (!in_buf || !out_buf)
    rc = xio_fail(err, "cannot allocate %llu bytes of pass buffers on rank %d",
                  (unsigned long long)stats->buffer_bytes / 2, rank);
  rc = xio_agree(comm, rc, err);

  shaped_plan sp = {NULL, -1, -1};
  const uint64_t total_bytes = (uint64_t)in->rows * (uint64_t)in->cols * es;
  uint64_t bytes_done = 0;
  for (int64_t pass = 0; rc == 0 && pass < passes; pass++) {
    int64_t row0, nrows, col0, ncols;
    xio_pass_block(grid, pass, &row0, &nrows, &col0, &ncols);
    xpose_status st = plan_for(&sp, comm, nrows, ncols, es, &options->config);
    if (st != XPOSE_SUCCESS) {
      rc = xio_fail(err, "cannot plan a %lld x %lld pass: %s", (long long)nrows, (long long)ncols,
                    xpose_status_string(st));
      break; /* plan creation is collective: every rank is here */
    }
    xpose_plan_input_rows(sp.plan, &in_first, &in_rows);
    xpose_plan_output_rows(sp.plan, &out_first, &out_rows);

    double t0 = MPI_Wtime();
    rc = xio_read_block(in, row0 + in_first, in_rows, col0, ncols, in_buf, err);
    double t1 = MPI_Wtime();
    if (rc == 0) {
      st = xpose_execute(sp.plan, in_buf, out_buf);
      if (st != XPOSE_SUCCESS)
        rc = xio_fail(err, "transposing pass %lld failed: %s", (long long)pass,
                      xpose_status_string(st));
    }
    double t2 = MPI_Wtime();
    if (rc == 0) rc = xio_write_block(out, col0 + out_first, out_rows, row0, nrows, out_buf, err);
    double t3 = MPI_Wtime();
    stats->read_seconds += t1 - t0;
    stats->transpose_seconds += t2 - t1;
    stats->write_seconds += t3 - t2;
    bytes_done += (uint64_t)nrows * (uint64_t)ncols * es;
    if (rc == 0 && options->progress)
      options->progress(pass + 1, passes, bytes_done, total_bytes, options->progress_user_data);
  }
  xpose_plan_destroy(sp.plan);
  free(in_buf);
  free(out_buf);
  return rc;
}
