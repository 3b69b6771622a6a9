/* A rechunk in two phases through a scratch file (rechunk_phases.h). */
#define _POSIX_C_SOURCE 200809L /* fsync */
#include "rechunk_phases.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checksum.h"
#include "file_at.h"
#include "host_memory.h"
#include "pass_io.h"
#include "phases_move.h"
#include "pool.h"

/* ---- phase 1: slabs of records cut into pieces ---- */

typedef struct {
  xio_phases_move *ph;
  const unsigned char *slab;
  int64_t batch, records;
  unsigned char *arena;
  uint64_t *sizes;
} cut_job;

static int cut_piece(void *arg, int64_t t, int worker) {
  cut_job *j = arg;
  xio_phases_move *ph = j->ph;
  const xio_phases_plan *p = ph->p;
  int64_t origin[XIO_MAX_DIMS], extent[XIO_MAX_DIMS], zero[XIO_MAX_DIMS] = {0};
  int64_t slab_dims[XIO_MAX_DIMS];
  xio_phases_tile(p, t, origin, extent);
  extent[0] = j->records;
  for (int a = 0; a < p->ndims; a++) slab_dims[a] = a ? p->dims[a] : j->records;
  const size_t bytes = (size_t)xio_phases_piece_bytes(p, t, j->records);
  xio_codec_scratch *s = xio_codec_scratches_get(&ph->scratch, worker);
  unsigned char *values = s ? xio_codec_scratch_buffer(s, bytes) : NULL;
  xio_error why;
  if (!values)
    return xio_phases_item_failed(ph, (xio_fail(&why, "out of memory cutting pieces"), &why));
  xio_copy_box(p->ndims, extent, p->type_size, j->slab, slab_dims, origin, values, extent, zero);
  const uint64_t room = ph->piece_at[t + 1] - ph->piece_at[t];
  size_t size = 0;
  if (xio_chunk_encode(&ph->codec, values, bytes, j->arena + ph->piece_at[t], (size_t)room, &size,
                       s))
    return xio_phases_item_failed(ph, (xio_fail(&why, "out of memory encoding pieces"), &why));
  j->sizes[t] = size;
  return 0;
}

/* Local.  Batch b's slab cut into pieces, packed and written at the
 * batch's place in the scratch file; their places noted. */
static int write_pieces(xio_phases_move *ph, int64_t b, int64_t records, const unsigned char *slab,
                        unsigned char *arena, uint64_t *sizes, xio_error *err) {
  const xio_phases_plan *p = ph->p;
  cut_job j = {ph, slab, b, records, arena, sizes};
  if (xio_pool_run(p->tiles, cut_piece, &j)) {
    *err = ph->item_err;
    return -1;
  }
  uint64_t packed = 0;
  for (int64_t t = 0; t < p->tiles; t++) { /* each moves down, never over one not yet moved */
    memmove(arena + packed, arena + ph->piece_at[t], sizes[t]);
    ph->place[2 * (b * p->tiles + t)] = (int64_t)(b * ph->region + packed);
    ph->place[2 * (b * p->tiles + t) + 1] = (int64_t)sizes[t];
    packed += sizes[t];
  }
  return xio_write_at(ph->fd, arena, packed, b * ph->region, ph->path, err);
}

/* Collective.  Phase 1: rank r reads batches r, r + P, ..., all of them
 * together, each a slab of whole records. */
static int phase_one(xio_phases_move *ph, xio_error *err) {
  const xio_phases_plan *p = ph->p;
  const double began = MPI_Wtime();
  unsigned char *slab = xio_host_alloc((size_t)(p->batch * p->record_bytes));
  unsigned char *arena = xio_host_alloc((size_t)ph->region);
  uint64_t *sizes = malloc(sizeof *sizes * (size_t)p->tiles);
  int rc = slab && arena && sizes
               ? 0
               : xio_fail(err, "cannot allocate a slab of %llu bytes on rank %d",
                          (unsigned long long)(p->batch * p->record_bytes), ph->rank);
  rc = xio_agree(ph->comm, rc, err);
  for (int64_t round = 0; rc == 0 && round < xio_phases_ceil_div(p->batches, ph->nranks); round++) {
    const int64_t b = round * ph->nranks + ph->rank;
    int64_t first = 0, records = 0;
    if (b < p->batches) xio_phases_batch(p, b, &first, &records);
    rc = xio_read_block(ph->in, first, records, 0, ph->in->cols, slab, err);
    if (rc == 0 && records) {
      ph->sum +=
          xio_checksum_block(slab, records, ph->in->cols, ph->in->elem_size,
                             (uint64_t)first * (uint64_t)ph->in->cols, (uint64_t)ph->in->cols, 1);
      rc = write_pieces(ph, b, records, slab, arena, sizes, err);
    }
    if ((rc = xio_agree(ph->comm, rc, err)) == 0) rc = xio_phases_round_done(ph);
  }
  if (rc == 0 && !ph->one_node && fsync(ph->fd) != 0)
    rc = xio_fail(err, "cannot sync the scratch file %s: %s", ph->path, strerror(errno));
  free(slab);
  free(arena);
  free(sizes);
  xio_host_give_back();
  ph->stats->read_seconds = MPI_Wtime() - began;
  return rc == XIO_STOPPED ? rc : xio_agree(ph->comm, rc, err);
}

/* Collective.  Every rank's pieces' places, known to every rank. */
static int share_places(xio_phases_move *ph, xio_error *err) {
  const int64_t n = 2 * ph->p->batches * ph->p->tiles, most = (int64_t)1 << 26;
  for (int64_t at = 0; at < n; at += most) {
    const int count = (int)(n - at < most ? n - at : most);
    if (XIO_MPICHECK(
            MPI_Allreduce(MPI_IN_PLACE, ph->place + at, count, MPI_INT64_T, MPI_SUM, ph->comm),
            err))
      return -1;
  }
  return 0;
}

/* ---- the move ---- */

/* Whether `n` things go to `nranks` evenly enough: the rank with the most
 * holds at most 1.25 times the mean.  Where the passes' bands of output
 * chunks (each a unit of their output rows) do not, and the chunks
 * themselves do, the host's ranks move them in phases, which deal the
 * chunks out one by one: 6 bands on 4 ranks wrote 24, 24, 12 and 12 chunk
 * files in 5.8 s, the phases 18 each in 3.9 s (the daily file into time
 * series, 2 pretend nodes of 2, the 2-core VM); on 16 host ranks of the
 * GPU machine the phases took 0.95x the passes' time (issue 65).  GPUs
 * keep the passes, which transpose on them. */
static int even(int64_t n, int nranks) {
  const int64_t most = xio_phases_ceil_div(n, nranks);
  return most * nranks * 4 <= n * 5;
}

int xio_phases_planned(const xio_matrix *in, const xio_matrix *out,
                       const xio_transpose_options *options, int nranks, xio_phases_plan *plan,
                       xio_error *err) {
  memset(plan, 0, sizeof *plan);
  const xio_progress *resumed = options->resume_from;
  if (in->shape.lead != 0 || in->shape.split != 1 || in->items != 1 || !out->codec ||
      out->shape.ndims != in->shape.ndims ||
      (resumed && (resumed->grid.row_passes != 1 || resumed->grid.col_passes != 1)))
    return 0;
  int raw = 0;
  int64_t unit = 1;
  xio_pass_grid grid;
  xio_transpose_options fresh = *options;
  fresh.resume_from = NULL;
  if (xio_pass_plan_with_codec(in, out, &fresh, nranks, 1, &raw, &grid, &unit, err)) return -1;
  const int64_t bands = unit > 1 ? xio_phases_ceil_div(in->cols, unit) : 0;
  if (unit > 1 && (options->config.backend == XPOSE_BACKEND_CUDA || even(bands, nranks)))
    return 0; /* the passes give every rank whole chunks, evenly enough */
  int order[XIO_MAX_DIMS];
  for (int i = 0; i < in->shape.ndims; i++) order[i] = xio_shape_source_axis(&in->shape, i);
  const xio_phases_problem problem = {.ndims = in->shape.ndims,
                                      .dims = in->shape.dims,
                                      .chunk = out->chunk_dims,
                                      .order = order,
                                      .type_size = in->type_size,
                                      .in_chunk0 = in->chunked ? in->chunk_dims[0] : 1,
                                      .encode_work = out->codec_work,
                                      .budget = options->memory_budget,
                                      .ranks = nranks,
                                      .threads = xio_pool_threads()};
  const int made = xio_phases_plan_make(&problem, plan) == 0;
  if (bands && (!made || !even(plan->chunks, nranks))) { /* the passes do as well */
    memset(plan, 0, sizeof *plan);
    return 0;
  }
  plan->bands = bands;
  return made;
}

static int remove_scratch(void *path, xio_error *err) {
  if (unlink(path) != 0 && errno != ENOENT)
    return xio_fail(err, "cannot remove the scratch file %s: %s", (char *)path, strerror(errno));
  return 0;
}

static int make_scratch(void *arg, xio_error *err) {
  xio_phases_move *ph = arg;
  if (remove_scratch((void *)ph->path, err)) return -1; /* a killed run's */
  ph->fd = open(ph->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  return ph->fd < 0
             ? xio_fail(err, "cannot make the scratch file %s: %s", ph->path, strerror(errno))
             : 0;
}

/* Collective.  The scratch file made by rank 0, opened by the others. */
static int open_scratch(xio_phases_move *ph, xio_error *err) {
  if (xio_on_root(ph->comm, make_scratch, ph, err)) return -1;
  if (ph->rank != 0 && (ph->fd = open(ph->path, O_RDWR | O_CLOEXEC)) < 0)
    xio_fail(err, "cannot open the scratch file %s: %s", ph->path, strerror(errno));
  return xio_agree(ph->comm, ph->fd < 0 ? -1 : 0, err);
}

/* Local.  The pieces' codec and where each piece of a batch may lie. */
static int plan_pieces(xio_phases_move *ph, xio_error *err) {
  const xio_phases_plan *p = ph->p;
  ph->codec = xio_phases_scratch_codec(p->type_size, 0);
  ph->piece_at = malloc(sizeof *ph->piece_at * (size_t)(p->tiles + 1));
  ph->place = calloc((size_t)(2 * p->batches * p->tiles), sizeof *ph->place);
  if (!ph->piece_at || !ph->place || xio_codec_scratches_reserve(&ph->scratch, xio_pool_threads()))
    return xio_fail(err, "cannot allocate the places of %lld pieces on rank %d",
                    (long long)(p->batches * p->tiles), ph->rank);
  ph->piece_at[0] = 0;
  for (int64_t t = 0; t < p->tiles; t++)
    ph->piece_at[t + 1] =
        ph->piece_at[t] +
        xio_chunk_encode_bound(&ph->codec, (size_t)xio_phases_piece_bytes(p, t, p->batch));
  ph->region = ph->piece_at[p->tiles];
  return 0;
}

/* Collective.  A checkpoint of stats->done, agreed. */
static int checkpoint(xio_phases_move *ph, xio_error *err) {
  const xio_transpose_options *o = ph->options;
  const int rc =
      o->checkpoint ? o->checkpoint(&ph->stats->done, 0, o->checkpoint_user_data, err) : 0;
  return xio_agree(ph->comm, rc, err);
}

/* Collective.  Both phases, then the sums of every rank. */
static int run_phases(xio_phases_move *ph, xio_error *err) {
  const xio_phases_plan *p = ph->p;
  ph->rounds = xio_phases_ceil_div(p->batches, ph->nranks) +
               xio_phases_ceil_div(p->chunks, p->chunks_at_once * ph->nranks);
  int rc = xio_agree(ph->comm, plan_pieces(ph, err), err);
  if (rc == 0) rc = open_scratch(ph, err);
  if (rc == 0) rc = checkpoint(ph, err);
  if (rc == 0) rc = xio_prepare_reads(ph->in, err);
  if (rc == 0) rc = phase_one(ph, err);
  if (rc == 0) rc = share_places(ph, err);
  if (rc == 0) rc = xio_phases_write_output(ph, err);
  if (rc) return rc;
  uint64_t sum = 0;
  if (XIO_MPICHECK(MPI_Allreduce(&ph->sum, &sum, 1, MPI_UINT64_T, MPI_SUM, ph->comm), err))
    return -1;
  ph->stats->done.sums = (xio_checksums){sum, sum};
  ph->stats->done.passes_done = 1;
  return checkpoint(ph, err);
}

int xio_rechunk_in_phases(const xio_matrix *in, xio_matrix *out, const char *scratch_path,
                          const xio_phases_plan *plan, const xio_transpose_options *options,
                          xio_transpose_stats *stats, xio_error *err) {
  const double entered = MPI_Wtime();
  *stats = (xio_transpose_stats){0};
  stats->exchange = "none", stats->io = "two phases through a scratch file";
  stats->summed_by = "the main thread";
  const int64_t rows = xio_item_rows(in);
  stats->done.grid = (xio_pass_grid){in->items, rows, in->cols, 1, 1, rows, in->cols};
  const uint64_t slabs = xio_phases_batch_bytes(plan, plan->batch, xio_pool_threads()),
                 chunks = xio_phases_gather_bytes(plan, plan->chunks_at_once, xio_pool_threads());
  stats->buffer_bytes = slabs > chunks ? slabs : chunks;
  if (options->resume_from && options->resume_from->passes_done == 1) {
    stats->done = *options->resume_from; /* done before the stop */
    return 0;
  }
  xio_phases_move ph = {.in = in,
                        .out = out,
                        .plan = *plan,
                        .options = options,
                        .stats = stats,
                        .comm = MPI_COMM_NULL,
                        .path = scratch_path,
                        .fd = -1};
  ph.p = &ph.plan;
  atomic_init(&ph.failed, 0);
  int node_ranks = 0;
  MPI_Comm node = MPI_COMM_NULL;
  if (XIO_MPICHECK(MPI_Comm_dup(in->comm, &ph.comm), err) ||
      XIO_MPICHECK(MPI_Comm_rank(ph.comm, &ph.rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(ph.comm, &ph.nranks), err) ||
      XIO_MPICHECK(MPI_Comm_split_type(ph.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
                   err) ||
      XIO_MPICHECK(MPI_Comm_size(node, &node_ranks), err) ||
      XIO_MPICHECK(MPI_Comm_free(&node), err))
    return -1;
  /* several nodes (or pretend ones, as the p2p engine's tests make them)
   * read what the others wrote only once it is synced */
  const char *pretend = getenv("XPOSE_PRETEND_NODES");
  ph.one_node = node_ranks == ph.nranks && !(pretend && atoi(pretend) > 1);
  stats->setup_seconds = MPI_Wtime() - entered;
  const int rc = run_phases(&ph, err);
  if (ph.fd >= 0) (void)close(ph.fd);
  xio_error ignored; /* the outcome is decided; a stale scratch file is made anew */
  (void)xio_on_root(ph.comm, remove_scratch, (void *)scratch_path, &ignored);
  xio_codec_scratches_free(&ph.scratch);
  free(ph.piece_at);
  free(ph.place);
  (void)MPI_Comm_free(&ph.comm);
  xio_host_give_back();
  return rc;
}
