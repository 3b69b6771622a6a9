#include "h5_transpose.h"

#include <stdlib.h>

#include "checksum.h"
#include "pass_buffers.h"

/* Pass indices with equal block shapes next to each other: at most four
 * plans get made (an NCCL communicator each, on GPUs). */
static int64_t *passes_by_shape(const xio_pass_grid *g) {
  int64_t *order = malloc(sizeof *order * (size_t)(xio_pass_count(g) + 1)), n = 0;
  if (!order) return NULL;
  const int64_t tall = g->rows % g->row_passes, wide = g->cols % g->col_passes;
  for (int width_class = 0; width_class < 2; width_class++)
    for (int height_class = 0; height_class < 2; height_class++)
      for (int64_t cp = 0; cp < g->col_passes; cp++)
        for (int64_t rp = 0; rp < g->row_passes; rp++)
          if ((cp < wide || wide == 0 ? 0 : 1) == width_class &&
              (rp < tall || tall == 0 ? 0 : 1) == height_class)
            order[n++] = cp * g->row_passes + rp;
  return order;
}

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

uint64_t xio_transpose_budget(const xio_transpose_options *options) {
  const uint64_t host = options->memory_budget;
  if (options->config.backend != XPOSE_BACKEND_CUDA) return host;
  return options->gpu_memory_budget < 2 * host ? options->gpu_memory_budget : 2 * host;
}

/* Collective.  Adds this rank's sums since the last checkpoint into the
 * global ones, which must agree: every element read was written, in place. */
static int gather_sums(MPI_Comm comm, xio_checksums *local, xio_checksums *global, xio_error *err) {
  uint64_t mine[2] = {local->read, local->written}, all[2];
  if (XIO_MPI(MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, comm), err)) return -1;
  global->read += all[0];
  global->written += all[1];
  *local = (xio_checksums){0, 0};
  if (global->read != global->written)
    return xio_fail(err,
                    "the transpose in memory lost or changed elements: checksums %016llx (read) "
                    "and %016llx (written) differ",
                    (unsigned long long)global->read, (unsigned long long)global->written);
  return 0;
}

int xio_transpose(const xio_matrix *in, const xio_matrix *out, const xio_transpose_options *options,
                  xio_transpose_stats *stats, xio_error *err) {
  MPI_Comm comm = in->comm;
  int rank, nranks, rc = 0;
  if (XIO_MPI(MPI_Comm_rank(comm, &rank), err) || XIO_MPI(MPI_Comm_size(comm, &nranks), err))
    return -1;
  const size_t es = in->elem_size;
  *stats = (xio_transpose_stats){0};
  stats->exchange = "none";
  if (out->rows != in->cols || out->cols != in->rows || out->elem_size != es)
    return xio_fail(err, "internal: output %lld x %lld does not match the input's transpose",
                    (long long)out->rows, (long long)out->cols);
  const uint64_t budget = xio_transpose_budget(options);
  xio_progress *done = &stats->done;
  if (options->resume_from) {
    *done = *options->resume_from;
    if (done->grid.rows != in->rows || done->grid.cols != in->cols ||
        !xio_pass_grid_fits(&done->grid, es, nranks, budget))
      rc = xio_fail(err, "internal: the resumed passes do not fit this run");
  } else if (xio_pass_grid_plan(in->rows, in->cols, es, nranks, budget, &done->grid)) {
    rc = xio_fail(err, "a memory budget of %llu bytes per rank cannot hold even one element",
                  (unsigned long long)budget);
  }
  if (xio_agree(comm, rc, err)) return -1;

  const xio_pass_grid *grid = &done->grid;
  const int64_t passes = xio_pass_count(grid);
  stats->buffer_bytes = xio_pass_bytes(grid->block_rows, grid->block_cols, es, nranks);
  int64_t in_first, in_rows, out_first, out_rows;
  xpose_block_range(grid->block_rows, nranks, 0, &in_first, &in_rows); /* rank 0 has the most */
  xpose_block_range(grid->block_cols, nranks, 0, &out_first, &out_rows);
  xio_pass_buffers buffers;
  const int on_gpu = options->config.backend == XPOSE_BACKEND_CUDA;
  xio_error detail;
  if (xio_pass_buffers_alloc(&buffers, on_gpu, (size_t)(in_rows * grid->block_cols) * es,
                             (size_t)(out_rows * grid->block_rows) * es, &detail))
    rc = xio_fail(err, "cannot allocate %llu bytes of pass buffers%s on rank %d: %s",
                  (unsigned long long)stats->buffer_bytes / 2, on_gpu ? " (host and GPU)" : "",
                  rank, detail.message);
  int64_t *order = passes_by_shape(grid);
  if (!order && rc == 0) rc = xio_fail(err, "cannot allocate the pass order");
  rc = xio_agree(comm, rc, err);

  shaped_plan sp = {NULL, -1, -1};
  const uint64_t total_bytes = (uint64_t)in->rows * (uint64_t)in->cols * es;
  const uint64_t key_cols = (uint64_t)in->cols;
  xio_checksums local = {0, 0};
  double last_checkpoint = MPI_Wtime();
  const int64_t first_pass = done->passes_done;
  for (int64_t pass_done = first_pass; rc == 0; pass_done++) {
    /* Between passes: every rank learns whether any was asked to stop, or
     * whether a checkpoint is due by any rank's clock.  The first one
     * records the grid. */
    int flags[2] = {options->stop_requested && options->stop_requested(),
                    pass_done == first_pass || pass_done == passes ||
                        MPI_Wtime() - last_checkpoint >= options->checkpoint_seconds},
        agreed[2];
    if (XIO_MPI(MPI_Allreduce(flags, agreed, 2, MPI_INT, MPI_MAX, comm), err)) {
      rc = -1;
      break;
    }
    if (agreed[0] || agreed[1]) {
      rc = gather_sums(comm, &local, &done->sums, err);
      if (rc == 0) {
        done->passes_done = pass_done;
        if (options->checkpoint)
          rc = xio_agree(comm, options->checkpoint(done, options->checkpoint_user_data, err), err);
      }
      last_checkpoint = MPI_Wtime();
      if (rc == 0 && agreed[0] && pass_done < passes) rc = XIO_STOPPED;
    }
    if (rc != 0 || pass_done == passes) break;

    const int64_t pass = order[pass_done];
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
    stats->exchange = xpose_plan_exchange_name(sp.plan);

    double t[6];
    t[0] = MPI_Wtime();
    rc = xio_read_block(in, row0 + in_first, in_rows, col0, ncols, buffers.in_host, err);
    t[1] = MPI_Wtime();
    if (rc == 0)
      local.read +=
          xio_checksum_block(buffers.in_host, in_rows, ncols, es,
                             (uint64_t)(row0 + in_first) * key_cols + (uint64_t)col0, key_cols, 1);
    t[2] = MPI_Wtime();
    if (rc == 0) {
      st = xio_pass_transpose(sp.plan, &buffers, (size_t)(in_rows * ncols) * es,
                              (size_t)(out_rows * nrows) * es, err);
      if (st != XPOSE_SUCCESS && st != XPOSE_ERROR_CUDA) /* a failed copy says so in err */
        xio_fail(err, "transposing pass %lld failed: %s", (long long)pass, xpose_status_string(st));
      rc = xio_agree(comm, st == XPOSE_SUCCESS ? 0 : -1, err); /* the write is collective */
    }
    t[3] = MPI_Wtime();
    if (rc == 0)
      local.written +=
          xio_checksum_block(buffers.out_host, out_rows, nrows, es,
                             xio_output_first_key(col0 + out_first, row0, in->cols), 1, key_cols);
    t[4] = MPI_Wtime();
    if (rc == 0)
      rc = xio_write_block(out, col0 + out_first, out_rows, row0, nrows, buffers.out_host, err);
    t[5] = MPI_Wtime();
    stats->read_seconds += t[1] - t[0];
    stats->checksum_seconds += (t[2] - t[1]) + (t[4] - t[3]);
    stats->transpose_seconds += t[3] - t[2];
    stats->write_seconds += t[5] - t[4];
    if (rc == 0 && options->progress) {
      /* passes are evened out: bytes done are those of the passes done */
      const uint64_t bytes_done =
          (uint64_t)((double)total_bytes * (double)(pass_done + 1) / (double)passes);
      options->progress(pass_done + 1, passes, bytes_done, total_bytes,
                        options->progress_user_data);
    }
  }
  xpose_plan_destroy(sp.plan);
  xio_pass_buffers_free(&buffers);
  free(order);
  return rc;
}
