#include "h5_transpose.h"

#include <stdlib.h>

#include "checksum.h"
#include "io_thread.h"
#include "pass_buffers.h"

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
  /* The GPU holds one block of each kind and the scratch (2/3 of the pass
   * bytes), the host two blocks of each kind (also 2/3). */
  const uint64_t host_share = host / 2 * 3;
  return options->gpu_memory_budget < host_share ? options->gpu_memory_budget : host_share;
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

/* One pass, as this rank sees it: the block, and its share of the block's
 * rows (read) and of its columns (written), split as the plan splits them. */
typedef struct {
  int64_t row0, nrows, col0, ncols;
  int64_t in_first, in_rows, out_first, out_rows;
} pass_geometry;

static pass_geometry geometry_of(const xio_pass_grid *grid, int64_t pass, int rank, int nranks) {
  pass_geometry g;
  xio_pass_block(grid, pass, &g.row0, &g.nrows, &g.col0, &g.ncols);
  xpose_block_range(g.nrows, nranks, rank, &g.in_first, &g.in_rows);
  xpose_block_range(g.ncols, nranks, rank, &g.out_first, &g.out_rows);
  return g;
}

/* What the I/O thread does in one step: read one pass, write an earlier
 * one.  Both are collective, in that order, on every rank. */
typedef struct {
  const xio_matrix *in, *out;
  const pass_geometry *read, *write; /* NULL: none */
  void *read_into;
  const void *write_from;
  double read_seconds, write_seconds;
  xio_error err;
} io_step;

static int run_io_step(void *arg) {
  io_step *s = arg;
  int rc = 0;
  const double t0 = MPI_Wtime();
  if (s->read)
    rc = xio_read_block(s->in, s->read->row0 + s->read->in_first, s->read->in_rows, s->read->col0,
                        s->read->ncols, s->read_into, &s->err);
  const double t1 = MPI_Wtime();
  if (s->write && rc == 0)
    rc = xio_write_block(s->out, s->write->col0 + s->write->out_first, s->write->out_rows,
                         s->write->row0, s->write->nrows, s->write_from, &s->err);
  s->read_seconds += t1 - t0;
  s->write_seconds += MPI_Wtime() - t1;
  return rc;
}

/* Collective over comm.  Transposes pass p (its block read into slot) and
 * sums what it read and what it will write. */
static int transpose_pass(MPI_Comm comm, const xio_matrix *in, const xio_pass_grid *grid,
                          const pass_geometry *p, int slot, shaped_plan *sp,
                          const xio_pass_buffers *buffers, const xpose_config *config,
                          xio_checksums *sums, xio_transpose_stats *stats, xio_error *err) {
  const size_t es = in->elem_size;
  const uint64_t key_cols = (uint64_t)grid->cols;
  xpose_status st = plan_for(sp, comm, p->nrows, p->ncols, es, config);
  if (st != XPOSE_SUCCESS) /* plan creation is collective: every rank fails here */
    return xio_fail(err, "cannot plan a %lld x %lld pass: %s", (long long)p->nrows,
                    (long long)p->ncols, xpose_status_string(st));
  stats->exchange = xpose_plan_exchange_name(sp->plan);
  const double t0 = MPI_Wtime();
  sums->read = xio_checksum_block(buffers->in_host[slot], p->in_rows, p->ncols, es,
                                  (uint64_t)(p->row0 + p->in_first) * key_cols + (uint64_t)p->col0,
                                  key_cols, 1);
  const double t1 = MPI_Wtime();
  st = xio_pass_transpose(sp->plan, buffers, slot, (size_t)(p->in_rows * p->ncols) * es,
                          (size_t)(p->out_rows * p->nrows) * es, err);
  const double t2 = MPI_Wtime();
  sums->written = xio_checksum_block(buffers->out_host[slot], p->out_rows, p->nrows, es,
                                     xio_output_first_key(p->col0 + p->out_first, p->row0, in->cols),
                                     1, key_cols);
  stats->transpose_seconds += t2 - t1;
  stats->checksum_seconds += (t1 - t0) + (MPI_Wtime() - t2);
  if (st == XPOSE_SUCCESS) return 0;
  if (st != XPOSE_ERROR_CUDA) /* a failed copy says so in err */
    xio_fail(err, "transposing a %lld x %lld pass failed: %s", (long long)p->nrows,
             (long long)p->ncols, xpose_status_string(st));
  return -1;
}

/* The passes run as a pipeline of steps.  In step k the I/O thread reads
 * pass k into buffer slot k % 2 and writes pass k - 2 from its slot, while
 * this thread transposes pass k - 1; the step ends when both are done and
 * every rank agrees that they succeeded.  After step k the first k - 1
 * passes are written: checkpoints and stops happen between steps and count
 * only those (a pass read or transposed but not written is simply done
 * again on resume).
 *
 * Communicators: the I/O thread's collectives run on the matrices' comm
 * (and HDF5's own duplicate); this thread's on a duplicate of it, so the
 * two never interleave collectives on one communicator. */
int xio_transpose(const xio_matrix *in, const xio_matrix *out, const xio_transpose_options *options,
                  xio_transpose_stats *stats, xio_error *err) {
  int rank, nranks, rc = 0;
  if (XIO_MPI(MPI_Comm_rank(in->comm, &rank), err) || XIO_MPI(MPI_Comm_size(in->comm, &nranks), err))
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
  } else if (xio_pass_grid_plan(in->rows, in->cols, es, nranks,
                                options->pass_bytes_limit && options->pass_bytes_limit < budget
                                    ? options->pass_bytes_limit
                                    : budget,
                                out->filtered ? out->chunk_cols : 1,
                                out->filtered ? out->chunk_rows : 1, &done->grid)) {
    rc = xio_fail(err, "a memory budget of %llu bytes per rank cannot hold even one element",
                  (unsigned long long)budget);
  }
  if (xio_agree(in->comm, rc, err)) return -1;

  const xio_pass_grid *grid = &done->grid;
  const int64_t passes = xio_pass_count(grid);
  stats->buffer_bytes = xio_pass_bytes(grid->block_rows, grid->block_cols, es, nranks);
  const pass_geometry largest = geometry_of(grid, 0, 0, nranks); /* rank 0 has the most */
  xio_pass_buffers buffers;
  const int on_gpu = options->config.backend == XPOSE_BACKEND_CUDA;
  xio_error detail;
  MPI_Comm comm = MPI_COMM_NULL;
  if (XIO_MPI(MPI_Comm_dup(in->comm, &comm), err)) return -1;
  if (xio_pass_buffers_alloc(&buffers, on_gpu, options->config.own_output,
                             (size_t)(largest.in_rows * grid->block_cols) * es,
                             (size_t)(largest.out_rows * grid->block_rows) * es, &detail))
    rc = xio_fail(err, "cannot allocate %llu bytes of pass buffers%s on rank %d: %s",
                  (unsigned long long)stats->buffer_bytes / 3 * 2,
                  on_gpu ? " (host and GPU)" : "", rank, detail.message);
  int64_t *order = xio_pass_order(grid);
  if (!order && rc == 0) rc = xio_fail(err, "cannot allocate the pass order");
  rc = xio_agree(comm, rc, err);

  /* Passes of tiny blocks (under 1 MiB per rank) are all synchronisation:
   * there an I/O thread only competes with the exchange for the cores and
   * for MPI's progress engine (3 ranks on 2 cores, 27 x 27 blocks: 10.3 s
   * with it, 5.5 s without). */
  xio_io_thread io;
  if ((uint64_t)(largest.in_rows * grid->block_cols) * es >= ((uint64_t)1 << 20))
    xio_io_thread_start(&io);
  else
    xio_io_thread_inline(&io);
  stats->overlapped = io.threaded;
  shaped_plan sp = {NULL, -1, -1};
  const uint64_t total_bytes = (uint64_t)in->rows * (uint64_t)in->cols * es;
  xio_checksums local = {0, 0}, slot_sums[2] = {{0, 0}, {0, 0}};
  pass_geometry at[3]; /* passes k, k - 1 and k - 2 of step k, by pass % 3 */
  io_step step = {in, out, NULL, NULL, NULL, NULL, 0, 0, {""}};
  double last_checkpoint = MPI_Wtime();
  const int64_t first = done->passes_done;
  for (int64_t k = first; rc == 0; k++) {
    /* Between steps: every rank learns whether any was asked to stop, or
     * whether a checkpoint is due by any rank's clock.  The first one
     * records the grid. */
    const int64_t written = k - 2 > first ? k - 2 : first;
    int flags[2] = {options->stop_requested && options->stop_requested(),
                    k == first || written == passes ||
                        MPI_Wtime() - last_checkpoint >= options->checkpoint_seconds},
        agreed[2];
    if (XIO_MPI(MPI_Allreduce(flags, agreed, 2, MPI_INT, MPI_MAX, comm), err)) {
      rc = -1;
      break;
    }
    if (agreed[0] || agreed[1]) {
      rc = gather_sums(comm, &local, &done->sums, err);
      if (rc == 0) {
        done->passes_done = written;
        if (options->checkpoint)
          rc = xio_agree(comm, options->checkpoint(done, options->checkpoint_user_data, err), err);
      }
      last_checkpoint = MPI_Wtime();
      if (rc == 0 && agreed[0] && written < passes) rc = XIO_STOPPED;
    }
    if (rc != 0 || written == passes) break;

    const int reading = k < passes, transposing = k - 1 >= first && k - 1 < passes,
              writing = k - 2 >= first;
    if (reading) at[k % 3] = geometry_of(grid, order[k], rank, nranks);
    step.read = reading ? &at[k % 3] : NULL;
    step.read_into = buffers.in_host[k % 2];
    step.write = writing ? &at[(k - 2) % 3] : NULL;
    step.write_from = buffers.out_host[k % 2]; /* (k - 2) % 2 */
    xio_io_thread_post(&io, run_io_step, &step);
    int transposed = 0;
    xio_checksums sums = {0, 0};
    if (transposing)
      transposed = transpose_pass(comm, in, grid, &at[(k - 1) % 3], (int)((k - 1) % 2), &sp,
                                  &buffers, &options->config, &sums, stats, err);
    const double t0 = MPI_Wtime();
    const int io_rc = xio_io_thread_wait(&io);
    stats->wait_seconds += MPI_Wtime() - t0;
    if (io_rc != 0 && transposed == 0) *err = step.err;
    rc = xio_agree(comm, transposed || io_rc ? -1 : 0, err);
    if (rc != 0) break;
    if (writing) { /* the slot's sums now count: its pass is on file */
      local.read += slot_sums[k % 2].read;
      local.written += slot_sums[k % 2].written;
    }
    if (transposing) slot_sums[(k - 1) % 2] = sums;
    if (writing && options->progress) {
      /* passes are evened out: bytes done are those of the passes done */
      const uint64_t bytes_done =
          (uint64_t)((double)total_bytes * (double)(k - 1) / (double)passes);
      options->progress(k - 1, passes, bytes_done, total_bytes, options->progress_user_data);
    }
  }
  xio_io_thread_stop(&io);
  stats->read_seconds = step.read_seconds;
  stats->write_seconds = step.write_seconds;
  xpose_plan_destroy(sp.plan);
  xio_pass_buffers_free(&buffers);
  free(order);
  (void)MPI_Comm_free(&comm); /* the result is decided */
  return rc;
}
