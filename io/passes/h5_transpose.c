/* The pass loop (h5_transpose.h): the grid planned where the I/O is chosen
 * (pass_io.c), then for each pass: read, transpose and exchange, sum,
 * write, checkpoint, as a pipeline of steps. */
#include "h5_transpose.h"

#include <stdlib.h>
#include <string.h>

#include "checkpoints.h"
#include "checksum.h"
#include "chunk_reader.h"
#include "chunk_writer.h"
#include "host_memory.h"
#include "pass_buffers.h"
#include "pass_io.h"

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

/* Step k works on passes k down to k - 3 (a write may still run in the
 * next step): their geometry and sums are kept in rings of this size, by
 * pass % RING. */
#define RING 4

/* The sums of one pass, kept from its read until it is written. */
typedef struct {
  uint64_t read, written;
} pass_sums;

/* The loop's state.  Its collectives run on comm, a duplicate of the
 * matrices' (which the collective I/O uses, on its thread). */
typedef struct {
  const xio_matrix *in;
  const xio_transpose_options *options;
  xpose_config config; /* options', the output rows split as the I/O wants them */
  xio_transpose_stats *stats;
  MPI_Comm comm;
  int rank, nranks;
  xio_pass_io io;
  int64_t passes, *order; /* order: the pass indices in the order they run */
  int64_t first;          /* the first pass this run does */
  xio_pass_buffers buffers;
  int sums_in_io; /* the I/O sums as it moves the bytes (raw, on the host) */
  shaped_plan sp;
  /* Rechunking (shape.h): each pass's output block transposed back into
   * the input's order, on this host, in slot pass % 2. */
  shaped_plan back;
  void *in_order[2]; /* allocated at their first use */
  size_t in_order_bytes;
  xio_pass_geometry at[RING];
  xio_pass_geometry next; /* the pass read after this step's, asked of storage ahead */
  pass_sums ring[RING];
  xio_checksums local; /* of the passes written since the last checkpoint */
  xio_checkpoints checkpoints;
} pass_loop;

/* Local.  The checksums of pass p's input block and of its output block
 * (their shapes and keys; the sums still to take). */
static void block_checksums(const pass_loop *l, const xio_pass_geometry *p,
                            xio_block_checksum *in_sum, xio_block_checksum *out_sum) {
  const size_t es = l->in->elem_size;
  const xio_block_sum in_keys = xio_pass_input_keys(p, l->in->cols, NULL),
                      out_keys = xio_pass_output_keys(p, l->in->cols, xio_item_rows(l->in), NULL);
  *in_sum = (xio_block_checksum){p->read_rows,     p->read_cols,     es, in_keys.first_key,
                                 in_keys.row_step, in_keys.col_step, 0};
  /* rechunking, the exchange leaves the block's columns as rows */
  const int64_t out_rows = p->rechunk ? p->write_cols : p->write_rows,
                out_cols = p->rechunk ? p->write_rows : p->write_cols;
  *out_sum = (xio_block_checksum){out_rows,          out_cols,          es, out_keys.first_key,
                                  out_keys.row_step, out_keys.col_step, 0};
}

/* Local.  Rechunking: pass p's output block, as the exchange left it in
 * `exchanged` (its columns as rows), into the input's order. */
static int transpose_back(pass_loop *l, const xio_pass_geometry *p, const void *exchanged, int slot,
                          xio_error *err) {
  if (p->write_rows * p->write_cols == 0) return 0;
  void **in_order = &l->in_order[slot];
  if (!*in_order && !(*in_order = xio_host_alloc(l->in_order_bytes)))
    return xio_fail(err, "cannot allocate %zu bytes to rechunk in on rank %d", l->in_order_bytes,
                    l->rank);
  xpose_config host;
  xpose_config_init(&host);
  host.backend = XPOSE_BACKEND_HOST;
  if (l->options->config.backend == XPOSE_BACKEND_HOST)
    host.host_threads = l->options->config.host_threads;
  xpose_status st =
      plan_for(&l->back, MPI_COMM_SELF, p->write_cols, p->write_rows, l->in->elem_size, &host);
  if (st == XPOSE_SUCCESS) st = xpose_execute(l->back.plan, exchanged, *in_order);
  return st == XPOSE_SUCCESS ? 0
                             : xio_fail(err, "transposing a %lld x %lld block back failed: %s",
                                        (long long)p->write_cols, (long long)p->write_rows,
                                        xpose_status_string(st));
}

/* Local.  The sum of block c in host memory. */
static uint64_t host_sum(const void *block, const xio_block_checksum *c) {
  return xio_checksum_block(block, c->rows, c->cols, c->elem_size, c->first_key, c->row_step,
                            c->col_step);
}

/* Local.  Rechunking on one rank: nothing moves between ranks, and the
 * block stays in its order.  Pass `index`'s block copied from its read slot
 * into the one it is written from, both summed, not transposed there and
 * back (through the GPU, with one on the rank). */
static int keep_in_order(pass_loop *l, const xio_pass_geometry *p, int64_t index, xio_error *err) {
  const int slot = (int)(index % 2);
  void **in_order = &l->in_order[slot];
  if (!*in_order && !(*in_order = xio_host_alloc(l->in_order_bytes)))
    return xio_fail(err, "cannot allocate %zu bytes to rechunk in", l->in_order_bytes);
  xio_block_checksum in_sum, out_sum;
  block_checksums(l, p, &in_sum, &out_sum);
  const double t0 = MPI_Wtime();
  memcpy(*in_order, l->buffers.in_host[slot], (size_t)xio_pass_read_bytes(p, l->in->elem_size));
  const double t1 = MPI_Wtime();
  pass_sums *sums = l->sums_in_io ? NULL : &l->ring[index % RING];
  if (sums) /* the same keys: the block in the input's order */
    *sums = (pass_sums){host_sum(l->buffers.in_host[slot], &in_sum), host_sum(*in_order, &in_sum)};
  l->stats->transpose_seconds += t1 - t0;
  l->stats->checksum_seconds += MPI_Wtime() - t1;
  return 0;
}

/* Collective over comm, or with io.local over this rank alone.  Transposes
 * pass `index` of the order (its block read into slot index % 2) and,
 * unless the I/O sums, sums what it read and what it will write: on the
 * GPU where the pass goes through it. */
static int transpose_pass(pass_loop *l, int64_t index, xio_error *err) {
  const xio_pass_geometry *p = &l->at[index % RING];
  const int slot = (int)(index % 2), local = l->io.local;
  const size_t es = l->in->elem_size;
  if (p->rechunk && l->nranks == 1) return keep_in_order(l, p, index, err);
  if (xio_pass_buffers_host(&l->buffers, 1, slot, err)) return -1;
  /* Transposed locally, each rank plans its own part (a rank may own none). */
  if (local && p->read_rows * p->read_cols == 0) return 0;
  const int64_t rows = local ? p->read_rows : p->nrows, cols = local ? p->read_cols : p->ncols;
  xpose_status st = plan_for(&l->sp, local ? MPI_COMM_SELF : l->comm, rows, cols, es, &l->config);
  if (st != XPOSE_SUCCESS) /* collective plans fail on every rank here */
    return xio_fail(err, "cannot plan a %lld x %lld pass: %s", (long long)rows, (long long)cols,
                    xpose_status_string(st));
  l->stats->exchange = local ? "none" : xpose_plan_exchange_name(l->sp.plan);
  pass_sums *sums = l->sums_in_io ? NULL : &l->ring[index % RING];
  const int on_gpu = l->buffers.on_gpu && sums;
  xio_block_checksum in_sum, out_sum;
  block_checksums(l, p, &in_sum, &out_sum);
  const double t0 = MPI_Wtime();
  if (sums && !on_gpu) sums->read = host_sum(l->buffers.in_host[slot], &in_sum);
  const double t1 = MPI_Wtime();
  st = xio_pass_transpose(l->sp.plan, &l->buffers, slot, xio_pass_read_bytes(p, es),
                          xio_pass_write_bytes(p, es), on_gpu ? &in_sum : NULL,
                          on_gpu ? &out_sum : NULL, err);
  const double t2 = MPI_Wtime();
  if (sums)
    *sums = on_gpu ? (pass_sums){in_sum.sum, out_sum.sum}
                   : (pass_sums){sums->read, host_sum(l->buffers.out_host[slot], &out_sum)};
  const double t3 = MPI_Wtime();
  const int back = st == XPOSE_SUCCESS && p->rechunk
                       ? transpose_back(l, p, l->buffers.out_host[slot], slot, err)
                       : 0;
  l->stats->transpose_seconds += (t2 - t1) + (MPI_Wtime() - t3);
  l->stats->checksum_seconds += (t1 - t0) + (t3 - t2);
  if (st == XPOSE_SUCCESS) return back;
  if (st != XPOSE_ERROR_CUDA) /* a failed copy says so in err */
    xio_fail(err, "transposing a %lld x %lld pass failed: %s", (long long)rows, (long long)cols,
             xpose_status_string(st));
  return -1;
}

/* This rank's part of the k-th pass of the order. */
static xio_pass_geometry pass_geometry(const pass_loop *l, int64_t k) {
  return xio_pass_geometry_of(&l->stats->done.grid, &l->in->shape, l->order[k], l->rank, l->nranks,
                              l->io.local, l->io.unit);
}

/* Collective.  Step k: pass k read into buffer slot k % 2, pass k - 1
 * transposed (this thread) and pass k - 2 written from its slot, the read
 * and the write on the I/O's threads.  The step ends when the read and the
 * transpose are done, the write of pass k - 3 too (pass_io.h), and every
 * rank agrees that they succeeded. */
static int run_step(pass_loop *l, int64_t k, xio_error *err) {
  const int reading = k < l->passes, transposing = k - 1 >= l->first && k - 1 < l->passes,
            writing = k - 2 >= l->first && k - 2 < l->passes;
  if (reading) {
    l->at[k % RING] = pass_geometry(l, k);
    l->ring[k % RING] = (pass_sums){0, 0};
  }
  if (k + 1 < l->passes) l->next = pass_geometry(l, k + 1);
  const xio_pass_request read = {reading ? &l->at[k % RING] : NULL, l->buffers.in_host[k % 2],
                                 l->sums_in_io ? &l->ring[k % RING].read : NULL,
                                 k + 1 < l->passes ? &l->next : NULL},
                         write = {writing ? &l->at[(k - 2) % RING] : NULL,
                                  l->in->shape.rechunk
                                      ? l->in_order[k % 2]
                                      : l->buffers.out_host[k % 2], /* (k - 2) % 2 */
                                  l->sums_in_io ? &l->ring[(k - 2) % RING].written : NULL, NULL};
  l->io.ops->post(&l->io, read, write);
  int rc = transposing ? transpose_pass(l, k - 1, err) : 0;
  /* the next step's read buffer, beside this step's I/O */
  if (rc == 0 && k + 1 < l->passes &&
      xio_pass_buffers_host(&l->buffers, 0, (int)((k + 1) % 2), err))
    rc = -1;
  const double t0 = MPI_Wtime();
  xio_error io_err;
  const int io_rc = l->io.ops->wait(&l->io, &io_err);
  l->stats->wait_seconds += MPI_Wtime() - t0;
  if (io_rc && rc == 0) *err = io_err;
  return xio_agree(l->comm, rc || io_rc ? -1 : 0, err);
}

/* Pass `index` of the order is on file: its sums count, and progress is
 * reported (passes are evened out: bytes done are those of the passes
 * done). */
static void pass_written(pass_loop *l, int64_t index) {
  l->local.read += l->ring[index % RING].read;
  l->local.written += l->ring[index % RING].written;
  const xio_transpose_options *o = l->options;
  const uint64_t total = (uint64_t)l->in->rows * (uint64_t)l->in->cols * l->in->elem_size;
  if (o->progress)
    o->progress(index + 1, l->passes,
                (uint64_t)((double)total * (double)(index + 1) / (double)l->passes), total,
                o->progress_user_data);
}

/* Collective.  The steps, with a checkpoint due between two of them
 * (checkpoints.h): after step k the passes before k - 2 are written, and
 * only those count (a pass read, transposed or being written is simply
 * done again on resume). */
static int run_passes(pass_loop *l, xio_error *err) {
  xio_progress *done = &l->stats->done;
  for (int64_t k = l->first;; k++) {
    const int64_t written = k - 3 > l->first ? k - 3 : l->first;
    int rc = xio_checkpoints_step(&l->checkpoints, done, written, k == l->first,
                                  written == l->passes, &l->local, err);
    if (rc != 0 || written == l->passes) return rc;
    if ((rc = run_step(l, k, err)) != 0) return rc;
    if (k - 3 >= l->first) pass_written(l, k - 3);
  }
}

/* Collective.  The loop's communicator, order and buffers (the device's
 * now, the host's at their first use, the first read's now), and who sums:
 * the GPU, which holds each pass anyway; else the I/O as it moves the
 * bytes, where it can; else this thread, beside the transpose. */
static int begin_loop(pass_loop *l, xio_error *err) {
  const xio_pass_grid *grid = &l->stats->done.grid;
  const size_t es = l->in->elem_size;
  const int on_gpu = l->options->config.backend == XPOSE_BACKEND_CUDA;
  l->passes = xio_pass_count(grid);
  l->first = l->stats->done.passes_done;
  l->stats->buffer_bytes =
      xio_pass_bytes(grid->block_rows, grid->block_cols, es, l->nranks, l->io.unit);
  l->config = l->options->config;
  l->config.output_row_unit = l->io.unit;
  l->sums_in_io = l->io.sums && !on_gpu;
  l->stats->summed_by = on_gpu ? "the GPU" : l->sums_in_io ? "the I/O threads" : "the main thread";
  if (XIO_MPICHECK(MPI_Comm_dup(l->in->comm, &l->comm), err)) return -1;
  const xio_pass_geometry largest = /* rank 0 has most */
      xio_pass_geometry_of(grid, &l->in->shape, 0, 0, l->nranks, l->io.local, l->io.unit);
  const double allocating = MPI_Wtime();
  xio_error detail;
  int rc = 0;
  l->order = xio_pass_order(grid);
  if (xio_pass_buffers_alloc(&l->buffers, on_gpu, l->options->config.own_output,
                             xio_pass_read_bytes(&largest, es), xio_pass_write_bytes(&largest, es),
                             &detail) ||
      (l->first < l->passes && xio_pass_buffers_host(&l->buffers, 0, (int)(l->first % 2), &detail)))
    rc = xio_fail(err, "cannot allocate %llu bytes of pass buffers%s on rank %d: %s",
                  (unsigned long long)l->stats->buffer_bytes / 3 * 2,
                  on_gpu ? " (host and GPU)" : "", l->rank, detail.message);
  if (l->in->shape.rechunk) { /* one buffer for each slot the passes use */
    l->in_order_bytes = (size_t)xio_pass_write_bytes(&largest, es) + 1;
    l->stats->buffer_bytes += (l->passes > 1 ? 2 : 1) * l->in_order_bytes;
  }
  l->stats->buffers_seconds = MPI_Wtime() - allocating;
  if (!l->order && rc == 0) rc = xio_fail(err, "cannot allocate the pass order");
  if (xio_agree(l->comm, rc, err)) return -1;
  xio_checkpoints_begin(&l->checkpoints, l->comm, l->options, &l->io);
  return 0;
}

/* Collective.  0, or -1 where the I/O could not close (its message in
 * err, unless rc says the run failed already). */
static int end_loop(pass_loop *l, int rc, xio_error *err) {
  xio_transpose_stats *stats = l->stats;
  xio_checkpoints_end(&l->checkpoints); /* its sync may still use the output */
  stats->codec_wrote = l->io.writer != NULL;
  stats->codec_declined = l->io.codec_declined;
  if (l->io.writer)
    xio_chunk_writer_times(l->io.writer, &stats->encode_seconds, &stats->store_seconds,
                           &stats->stored_bytes, &stats->stored_chunks);
  xio_chunk_index_times(l->in->chunk_index, &stats->codec_reads);
  xio_error close_err;
  const int closed = l->io.ops ? l->io.ops->close(&l->io, &close_err) : 0;
  if (closed && rc == 0) *err = close_err;
  stats->checkpoints = l->checkpoints.count;
  stats->checkpoint_seconds = l->checkpoints.seconds;
  stats->last_checkpoint_seconds = l->checkpoints.last_seconds;
  stats->io = l->io.name;
  stats->overlapped = l->io.overlapped;
  stats->read_seconds = l->io.read.seconds;
  stats->write_seconds = l->io.write.seconds;
  stats->both_seconds = l->io.both_seconds;
  xpose_plan_destroy(l->sp.plan);
  xpose_plan_destroy(l->back.plan);
  free(l->in_order[0]);
  free(l->in_order[1]);
  xio_pass_buffers_free(&l->buffers);
  free(l->order);
  if (l->comm != MPI_COMM_NULL) (void)MPI_Comm_free(&l->comm); /* the result is decided */
  return rc ? rc : closed;
}

int xio_transpose(const xio_matrix *in, xio_matrix *out, const xio_transpose_options *options,
                  xio_transpose_stats *stats, xio_error *err) {
  const double entered = MPI_Wtime();
  *stats = (xio_transpose_stats){0};
  stats->exchange = "none";
  pass_loop l = {.in = in, .options = options, .stats = stats, .comm = MPI_COMM_NULL};
  if (XIO_MPICHECK(MPI_Comm_rank(in->comm, &l.rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(in->comm, &l.nranks), err))
    return -1;
  if (!xio_matrix_transposes(out, in))
    return xio_fail(err, "internal: output %lld x %lld does not match the input's transpose",
                    (long long)out->rows, (long long)out->cols);
  if (options->resume_from) stats->done = *options->resume_from;
  if (xio_prepare_reads(in, err) ||
      xio_pass_io_open(in, out, options, &stats->done.grid, &l.io, err))
    return -1;
  int rc = begin_loop(&l, err);
  stats->setup_seconds = MPI_Wtime() - entered;
  if (rc == 0) rc = run_passes(&l, err);
  rc = end_loop(&l, rc, err);
  xio_host_give_back();
  return rc;
}
