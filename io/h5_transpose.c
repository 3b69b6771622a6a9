#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "h5_transpose.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoints.h"
#include "checksum.h"
#include "io_thread.h"
#include "pass_buffers.h"
#include "raw_dataset.h"

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

/* One pass, as this rank sees it: the block of the input, the part of it
 * this rank reads, and the part of the output block it writes.  Exchanged
 * between the ranks, each reads its share of the block's rows (split as
 * the plan splits them) and writes its share of the output block's rows.
 * Transposed locally (`local`), each writes the transpose of what it read:
 *   - in bands of whole rows, its share of the band's columns, so that it
 *     writes whole output rows of the band, runs as long as the band is
 *     tall with no other rank's between them (two ranks writing 4 KiB runs
 *     into one page cache file spent most of their time on its lock: 8 s
 *     of system time for 2 GiB, against 2.6 s for 8 KiB runs in rows of
 *     their own; 2-core VM);
 *   - in other blocks, its share of the block's rows, so that its reads
 *     from the disk stay as long as the block is wide (2 GiB, 2 ranks,
 *     1639-square blocks, the input evicted: 6.9 s, against 7.7 s for
 *     shares of the columns). */
typedef struct {
  int64_t item, row0, nrows, col0, ncols; /* the block, within its item's matrix */
  /* in the whole stack of the items' matrices: */
  int64_t read_row, read_rows, read_col, read_cols;     /* of the input */
  int64_t write_row, write_rows, write_col, write_cols; /* of the output */
} pass_geometry;

static pass_geometry geometry_of(const xio_pass_grid *grid, const xio_shape *in, int64_t pass,
                                 int rank, int nranks, int local) {
  pass_geometry g;
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
  if (local) {
    g.write_row = g.read_col;
    g.write_rows = g.read_cols;
    g.write_col = g.read_row;
    g.write_cols = g.read_rows;
  } else {
    xpose_block_range(g.ncols, nranks, rank, &first, &count);
    g.write_row = g.col0 + first;
    g.write_rows = count;
    g.write_col = g.row0;
    g.write_cols = g.nrows;
  }
  g.read_row += g.item * grid->rows;
  g.write_row += xio_shape_moved_item(in, g.item) * grid->cols;
  return g;
}

/* Raw access to both datasets, when every rank has it (raw_dataset.h). */
typedef struct {
  int on;
  xio_raw_dataset in, out;
} raw_access;

/* Step k works on passes k down to k - 2: their geometry and sums are kept
 * in rings of this size, by pass % RING. */
#define RING 3

/* The sums of one pass, kept from its read until it is written. */
typedef struct {
  uint64_t read, written;
} pass_sums;

/* One transfer of a step: read a pass, or write one.  With raw access
 * each runs on its own thread, both at once; otherwise they run one after
 * the other on the one I/O thread, both collective, in that order, on
 * every rank. */
typedef struct {
  const xio_matrix *in, *out;
  const raw_access *raw;
  const pass_geometry *pass; /* NULL: none this step */
  void *buf;
  uint64_t *sum; /* raw: where the transfer's sum goes (NULL: none) */
  double seconds, began, ended;
  xio_error err;
} io_job;

static xio_block_sum input_keys(const pass_geometry *p, int64_t in_cols, uint64_t *sum) {
  return (xio_block_sum){(uint64_t)p->read_row * (uint64_t)in_cols + (uint64_t)p->read_col,
                         (uint64_t)in_cols, 1, sum};
}

static xio_block_sum output_keys(const pass_geometry *p, int64_t in_cols, int64_t in_item_rows,
                                 uint64_t *sum) {
  return (xio_block_sum){
      xio_output_first_key(p->item, p->write_row, p->write_col, in_cols, in_item_rows), 1,
      (uint64_t)in_cols, sum};
}

static int run_read(void *arg) {
  io_job *j = arg;
  j->began = MPI_Wtime();
  const pass_geometry *p = j->pass;
  int rc = 0;
  if (j->raw->on) {
    const xio_block_sum keys = input_keys(p, j->in->cols, j->sum);
    rc = xio_raw_read(&j->raw->in, p->read_row, p->read_rows, p->read_col, p->read_cols, j->buf,
                      j->sum ? &keys : NULL, &j->err);
  } else {
    rc = xio_read_block(j->in, p->read_row, p->read_rows, p->read_col, p->read_cols, j->buf,
                        &j->err);
  }
  j->ended = MPI_Wtime();
  j->seconds += j->ended - j->began;
  return rc;
}

static int run_write(void *arg) {
  io_job *j = arg;
  j->began = MPI_Wtime();
  const pass_geometry *p = j->pass;
  int rc = 0;
  if (j->raw->on) {
    const xio_block_sum keys = output_keys(p, j->in->cols, xio_item_rows(j->in), j->sum);
    rc = xio_raw_write(&j->raw->out, p->write_row, p->write_rows, p->write_col, p->write_cols,
                       j->buf, j->sum ? &keys : NULL, &j->err);
  } else {
    rc = xio_write_block(j->out, p->write_row, p->write_rows, p->write_col, p->write_cols, j->buf,
                         &j->err);
  }
  j->ended = MPI_Wtime();
  j->seconds += j->ended - j->began;
  return rc;
}

/* The collective path's step on its one I/O thread. */
typedef struct {
  io_job read, write;
} collective_step;

static int run_collective_step(void *arg) {
  collective_step *s = arg;
  int rc = s->read.pass ? run_read(&s->read) : 0;
  if (rc == 0 && s->write.pass) {
    rc = run_write(&s->write);
    if (rc) s->read.err = s->write.err;
  }
  return rc;
}

static void close_raw(raw_access *raw) {
  xio_raw_close(&raw->in);
  xio_raw_close(&raw->out);
}

/* Collective.  Raw access to both datasets where every rank has it: both
 * contiguous in their files, every rank on one node (one page cache), and
 * not refused by options. */
static int open_raw(const xio_matrix *in, const xio_matrix *out,
                    const xio_transpose_options *options, raw_access *raw, xio_error *err) {
  memset(raw, 0, sizeof *raw);
  raw->in.fd = raw->out.fd = -1;
  int nranks, node_ranks = 0;
  MPI_Comm node = MPI_COMM_NULL;
  if (XIO_MPI(MPI_Comm_size(in->comm, &nranks), err) ||
      XIO_MPI(MPI_Comm_split_type(in->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), err) ||
      XIO_MPI(MPI_Comm_size(node, &node_ranks), err) || XIO_MPI(MPI_Comm_free(&node), err))
    return -1;
  uint64_t in_base = 0, out_base = 0;
  int usable = !options->collective_only && node_ranks == nranks && xio_raw_usable(in, &in_base) &&
               xio_raw_usable(out, &out_base);
  xio_error local;
  if (usable && (xio_raw_open(in, in_base, 0, &raw->in, &local) ||
                 xio_raw_open(out, out_base, 1, &raw->out, &local)))
    usable = 0; /* the collective path reports what is wrong, if anything */
  int all = 0;
  if (XIO_MPI(MPI_Allreduce(&usable, &all, 1, MPI_INT, MPI_MIN, in->comm), err)) all = 0;
  raw->on = all;
  if (!all) close_raw(raw);
  return 0;
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
/* Passes under this many bytes per rank move in runs too short for raw
 * requests to pay: MPI-IO's collective buffering gathers them. */
#define RAW_MIN_SHARE_BYTES ((uint64_t)1 << 20)

/* Bytes of the largest part of a pass any rank moves raw (rank 0's of the
 * first). */
static uint64_t raw_share(const xio_pass_grid *grid, const xio_matrix *in, int nranks) {
  const pass_geometry g = geometry_of(grid, &in->shape, 0, 0, nranks, 1);
  return (uint64_t)(g.read_rows * g.read_cols) * in->elem_size;
}

/* The budget the pass grid is planned for: options' limits, and with raw
 * access at least RAW_MIN_PASSES bands where they can be (and stay raw);
 * *whole_rows_from gets the height from which whole-row bands are taken
 * (passes.h). */
static uint64_t pass_budget(const xio_matrix *in, const xio_transpose_options *options,
                            uint64_t budget, int raw, int compressed, int nranks,
                            int64_t *whole_rows_from) {
  /* Writing a compressed output, HDF5 gathers each rank's chunks and
   * compresses them outside these buffers, up to half as much again (a
   * rank's share of the output block, and its chunks compressed): at 3/4
   * of a 512 MiB budget a rank of the 4 GiB climate run peaked at 596 MiB,
   * at 2/3 within the budget and 64 MiB. */
  if (compressed && options->config.backend != XPOSE_BACKEND_CUDA) budget = budget / 3 * 2;
  uint64_t limit = options->pass_bytes_limit && options->pass_bytes_limit < budget
                       ? options->pass_bytes_limit
                       : budget;
  *whole_rows_from = 0;
  if (!raw) return limit;
  /* Whole-row bands where the runs in the output (each rank's are as long
   * as the pass is tall: geometry_of) fill a page. */
  const long page_size = sysconf(_SC_PAGESIZE);
  const int64_t page = page_size > 0 ? page_size : 4096, es = (int64_t)in->elem_size;
  *whole_rows_from = (page + es - 1) / es;
  const int64_t rows = xio_item_rows(in);
  const int64_t band = (rows + RAW_MIN_PASSES - 1) / RAW_MIN_PASSES;
  if (band < RAW_MIN_RUN_PAGES * *whole_rows_from) return limit;
  const xio_pass_grid bands = {1, rows, in->cols, (rows + band - 1) / band, 1, band, in->cols};
  const uint64_t band_bytes = xio_pass_bytes(band, in->cols, in->elem_size, nranks);
  if (raw_share(&bands, in, nranks) >= RAW_MIN_SHARE_BYTES && band_bytes < limit) {
    limit = band_bytes;
    *whole_rows_from = band;
  }
  return limit;
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
                         in->filtered ? in->chunk_rows : 1, in->filtered ? in->chunk_cols : 1,
                         whole_rows_from, &grid) == 0)
    *out_rows = grid.block_cols, *out_cols = grid.block_rows;
}

/* Collective over comm, or with `local` over this rank alone.  Transposes
 * pass p (its block read into slot) and, unless sums is NULL (raw access
 * on the host sums as it moves the bytes), sums what it read and what it
 * will write: on the GPU where the pass goes through it. */
static int transpose_pass(MPI_Comm comm, int local, const xio_matrix *in, const pass_geometry *p,
                          int slot, shaped_plan *sp, const xio_pass_buffers *buffers,
                          const xpose_config *config, pass_sums *sums, xio_transpose_stats *stats,
                          xio_error *err) {
  const size_t es = in->elem_size;
  /* Transposed locally, each rank plans its own part (a rank may own none). */
  if (local && p->read_rows * p->read_cols == 0) return 0;
  const int64_t rows = local ? p->read_rows : p->nrows, cols = local ? p->read_cols : p->ncols;
  xpose_status st = plan_for(sp, local ? MPI_COMM_SELF : comm, rows, cols, es, config);
  if (st != XPOSE_SUCCESS) /* collective plans fail on every rank here */
    return xio_fail(err, "cannot plan a %lld x %lld pass: %s", (long long)rows, (long long)cols,
                    xpose_status_string(st));
  stats->exchange = local ? "none" : xpose_plan_exchange_name(sp->plan);
  const double t0 = MPI_Wtime();
  const int on_gpu = buffers->on_gpu && sums;
  const xio_block_sum in_keys = input_keys(p, in->cols, NULL),
                      out_keys = output_keys(p, in->cols, xio_item_rows(in), NULL);
  xio_block_checksum in_sum = {p->read_rows,     p->read_cols,     es, in_keys.first_key,
                               in_keys.row_step, in_keys.col_step, 0},
                     out_sum = {p->write_rows,     p->write_cols,     es, out_keys.first_key,
                                out_keys.row_step, out_keys.col_step, 0};
  if (sums && !on_gpu)
    sums->read = xio_checksum_block(buffers->in_host[slot], p->read_rows, p->read_cols, es,
                                    in_keys.first_key, in_keys.row_step, in_keys.col_step);
  const double t1 = MPI_Wtime();
  st = xio_pass_transpose(sp->plan, buffers, slot, (size_t)(p->read_rows * p->read_cols) * es,
                          (size_t)(p->write_rows * p->write_cols) * es, on_gpu ? &in_sum : NULL,
                          on_gpu ? &out_sum : NULL, err);
  const double t2 = MPI_Wtime();
  if (on_gpu) {
    sums->read = in_sum.sum;
    sums->written = out_sum.sum;
  } else if (sums) {
    sums->written = xio_checksum_block(buffers->out_host[slot], p->write_rows, p->write_cols, es,
                                       out_keys.first_key, out_keys.row_step, out_keys.col_step);
  }
  stats->transpose_seconds += t2 - t1;
  stats->checksum_seconds += (t1 - t0) + (MPI_Wtime() - t2);
  if (st == XPOSE_SUCCESS) return 0;
  if (st != XPOSE_ERROR_CUDA) /* a failed copy says so in err */
    xio_fail(err, "transposing a %lld x %lld pass failed: %s", (long long)rows, (long long)cols,
             xpose_status_string(st));
  return -1;
}

/* Collective.  Adds the sums of pass `index`, now written, to local. */
static void count_written(const pass_sums ring[RING], int64_t index, xio_checksums *local) {
  local->read += ring[index % RING].read;
  local->written += ring[index % RING].written;
}

/* The passes run as a pipeline of steps.  In step k pass k is read into
 * buffer slot k % 2, pass k - 1 transposed (this thread) and pass k - 2
 * written from its slot.  The step ends when all are done and every rank
 * agrees that they succeeded.  After step k the first k - 1 passes are
 * written: checkpoints and stops happen between steps and count only those
 * (a pass read or transposed but not written is simply done again on
 * resume).
 *
 * Threads: with raw access the read and the write each run on a thread of
 * their own, at once, and call neither MPI nor HDF5.  Otherwise one I/O
 * thread reads and then writes, collectively: its collectives run on the
 * matrices' comm (and HDF5's own duplicate), this thread's on a duplicate
 * of it, so the two never interleave collectives on one communicator. */
int xio_transpose(const xio_matrix *in, const xio_matrix *out, const xio_transpose_options *options,
                  xio_transpose_stats *stats, xio_error *err) {
  int rank, nranks, rc = 0;
  const double entered = MPI_Wtime();
  if (XIO_MPI(MPI_Comm_rank(in->comm, &rank), err) ||
      XIO_MPI(MPI_Comm_size(in->comm, &nranks), err))
    return -1;
  const size_t es = in->elem_size;
  *stats = (xio_transpose_stats){0};
  stats->exchange = "none";
  const int64_t rows = xio_item_rows(in); /* of each item */
  if (!xio_matrix_transposes(out, in))
    return xio_fail(err, "internal: output %lld x %lld does not match the input's transpose",
                    (long long)out->rows, (long long)out->cols);
  const uint64_t budget = xio_transpose_budget(options);
  raw_access raw;
  if (open_raw(in, out, options, &raw, err)) return -1;
  xio_progress *done = &stats->done;
  for (int planned = 0; rc == 0 && !planned;) {
    int64_t whole_rows_from = 0;
    const uint64_t plan_budget =
        pass_budget(in, options, budget, raw.on, out->filtered, nranks, &whole_rows_from);
    if (options->resume_from) {
      *done = *options->resume_from;
      if (done->grid.items != in->items || done->grid.rows != rows || done->grid.cols != in->cols ||
          !xio_pass_grid_fits(&done->grid, es, nranks, budget))
        rc = xio_fail(err, "internal: the resumed passes do not fit this run");
    } else if (xio_pass_grid_plan(rows, in->cols, es, nranks, plan_budget,
                                  common_unit(out->filtered ? out->chunk_cols : 1,
                                              in->filtered ? in->chunk_rows : 1, rows),
                                  common_unit(out->filtered ? out->chunk_rows : 1,
                                              in->filtered ? in->chunk_cols : 1, in->cols),
                                  whole_rows_from, &done->grid)) {
      rc = xio_fail(err, "a memory budget of %llu bytes per rank cannot hold even one element",
                    (unsigned long long)budget);
    } else {
      done->grid.items = in->items; /* each item's matrix in the same grid */
    }
    /* Small passes go the collective way (every rank computes the same,
     * so no rank needs to ask; rank 0's share is the largest). */
    planned = !(raw.on && raw_share(&done->grid, in, nranks) < RAW_MIN_SHARE_BYTES);
    if (!planned) close_raw(&raw), raw.on = 0;
  }
  if (xio_agree(in->comm, rc, err)) {
    close_raw(&raw);
    return -1;
  }
  stats->raw = raw.on;
  /* With raw access on one node the page cache joins the ranks' parts of
   * the output: each rank transposes what it read, and exchanges nothing. */
  const int local_passes = raw.on;
  stats->local = local_passes;

  const xio_pass_grid *grid = &done->grid;
  const int64_t passes = xio_pass_count(grid);
  stats->buffer_bytes = xio_pass_bytes(grid->block_rows, grid->block_cols, es, nranks);
  xio_pass_buffers buffers;
  const int on_gpu = options->config.backend == XPOSE_BACKEND_CUDA;
  xio_error detail;
  MPI_Comm comm = MPI_COMM_NULL;
  const pass_geometry largest =
      geometry_of(grid, &in->shape, 0, 0, nranks, local_passes); /* rank 0 has most */
  /* Who sums: the GPU, which holds each pass anyway; else raw transfers as
   * they move the bytes; else this thread, beside the transpose. */
  const int sums_in_io = raw.on && !on_gpu;
  stats->summed_by = on_gpu ? "the GPU" : sums_in_io ? "the I/O threads" : "the main thread";
  int64_t *order = xio_pass_order(grid);
  if (XIO_MPI(MPI_Comm_dup(in->comm, &comm), err)) {
    close_raw(&raw);
    free(order);
    return -1;
  }
  const double allocating = MPI_Wtime();
  if (xio_pass_buffers_alloc(&buffers, on_gpu, options->config.own_output,
                             (size_t)(largest.read_rows * largest.read_cols) * es,
                             (size_t)(largest.write_rows * largest.write_cols) * es, &detail))
    rc = xio_fail(err, "cannot allocate %llu bytes of pass buffers%s on rank %d: %s",
                  (unsigned long long)stats->buffer_bytes / 3 * 2, on_gpu ? " (host and GPU)" : "",
                  rank, detail.message);
  if (rc == 0 && done->passes_done < passes &&
      xio_pass_buffers_host(&buffers, 0, (int)(done->passes_done % 2), &detail))
    rc = xio_fail(err, "rank %d: %s", rank, detail.message);
  stats->buffers_seconds = MPI_Wtime() - allocating;
  if (!order && rc == 0) rc = xio_fail(err, "cannot allocate the pass order");
  rc = xio_agree(comm, rc, err);

  /* Raw transfers get a thread each, collective ones share one; except
   * for passes of tiny blocks (under 1 MiB per rank), which are all
   * synchronisation: there an I/O thread only competes with the exchange
   * for the cores and for MPI's progress engine (3 ranks on 2 cores,
   * 27 x 27 blocks: 10.3 s with it, 5.5 s without). */
  xio_io_thread reader, writer;
  xio_io_thread_inline(&reader);
  xio_io_thread_inline(&writer);
  if (!options->inline_io && raw.on) {
    xio_io_thread_start(&reader, 0);
    xio_io_thread_start(&writer, 0);
  } else if (!options->inline_io &&
             (uint64_t)(largest.read_rows * largest.read_cols) * es >= ((uint64_t)1 << 20)) {
    xio_io_thread_start(&reader, 1);
  }
  stats->overlapped = reader.threaded;
  shaped_plan sp = {NULL, -1, -1};
  const uint64_t total_bytes = (uint64_t)in->rows * (uint64_t)in->cols * es;
  xio_checksums local = {0, 0};
  pass_sums ring[RING];
  pass_geometry at[RING];
  collective_step cstep = {{in, out, &raw, NULL, NULL, NULL, 0, 0, 0, {""}},
                           {in, out, &raw, NULL, NULL, NULL, 0, 0, 0, {""}}};
  io_job *rjob = &cstep.read, *wjob = &cstep.write;
  xio_checkpoints checkpoints;
  xio_checkpoints_begin(&checkpoints, comm, options, raw.on ? &raw.out : NULL);
  stats->setup_seconds = MPI_Wtime() - entered;
  const int64_t first = done->passes_done;
  for (int64_t k = first; rc == 0; k++) {
    /* Between steps: the first checkpoint records the grid */
    const int64_t written = k - 2 > first ? k - 2 : first;
    rc = xio_checkpoints_step(&checkpoints, done, written, k == first, written == passes, &local,
                              err);
    if (rc != 0 || written == passes) break;

    const int reading = k < passes, transposing = k - 1 >= first && k - 1 < passes,
              writing = k - 2 >= first;
    if (reading) {
      at[k % RING] = geometry_of(grid, &in->shape, order[k], rank, nranks, local_passes);
      ring[k % RING] = (pass_sums){0, 0};
    }
    rjob->pass = reading ? &at[k % RING] : NULL;
    rjob->buf = buffers.in_host[k % 2];
    rjob->sum = sums_in_io ? &ring[k % RING].read : NULL;
    wjob->pass = writing ? &at[(k - 2) % RING] : NULL;
    wjob->buf = buffers.out_host[k % 2]; /* (k - 2) % 2 */
    wjob->sum = sums_in_io ? &ring[(k - 2) % RING].written : NULL;
    if (raw.on) {
      if (reading) xio_io_thread_post(&reader, run_read, rjob);
      if (writing) xio_io_thread_post(&writer, run_write, wjob);
    } else {
      xio_io_thread_post(&reader, run_collective_step, &cstep);
    }
    int transposed = 0;
    if (transposing && xio_pass_buffers_host(&buffers, 1, (int)((k - 1) % 2), err)) transposed = -1;
    if (transposing && transposed == 0)
      transposed = transpose_pass(comm, local_passes, in, &at[(k - 1) % RING], (int)((k - 1) % 2),
                                  &sp, &buffers, &options->config,
                                  sums_in_io ? NULL : &ring[(k - 1) % RING], stats, err);
    /* the next step's read buffer, beside this step's I/O */
    if (transposed == 0 && k + 1 < passes &&
        xio_pass_buffers_host(&buffers, 0, (int)((k + 1) % 2), err))
      transposed = -1;
    const double t0 = MPI_Wtime();
    int io_rc = 0;
    xio_error *io_err = &rjob->err;
    if (raw.on) {
      if (reading && xio_io_thread_wait(&reader)) io_rc = -1;
      if (writing && xio_io_thread_wait(&writer) && !io_rc) io_rc = -1, io_err = &wjob->err;
      if (reading && writing) {
        const double both = (rjob->ended < wjob->ended ? rjob->ended : wjob->ended) -
                            (rjob->began > wjob->began ? rjob->began : wjob->began);
        if (both > 0) stats->both_seconds += both;
      }
    } else {
      io_rc = xio_io_thread_wait(&reader);
    }
    stats->wait_seconds += MPI_Wtime() - t0;
    if (io_rc != 0 && transposed == 0) *err = *io_err;
    rc = xio_agree(comm, transposed || io_rc ? -1 : 0, err);
    if (rc != 0) break;
    if (writing) /* the pass's sums now count: it is on file */
      count_written(ring, k - 2, &local);
    if (writing && options->progress) {
      /* passes are evened out: bytes done are those of the passes done */
      const uint64_t bytes_done =
          (uint64_t)((double)total_bytes * (double)(k - 1) / (double)passes);
      options->progress(k - 1, passes, bytes_done, total_bytes, options->progress_user_data);
    }
  }
  xio_io_thread_stop(&reader);
  xio_io_thread_stop(&writer);
  xio_checkpoints_end(&checkpoints);
  stats->checkpoints = checkpoints.count;
  stats->checkpoint_seconds = checkpoints.seconds;
  stats->last_checkpoint_seconds = checkpoints.last_seconds;
  stats->read_seconds = rjob->seconds;
  stats->write_seconds = wjob->seconds;
  xpose_plan_destroy(sp.plan);
  xio_pass_buffers_free(&buffers);
  close_raw(&raw);
  free(order);
  (void)MPI_Comm_free(&comm); /* the result is decided */
  return rc;
}
