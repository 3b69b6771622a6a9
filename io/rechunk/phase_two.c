/* A rechunk's phase 2: each output chunk gathered from its tile's pieces
 * in the scratch file, compressed and written by the output's one writer
 * (phases_move.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "chunk_writer.h"
#include "file_at.h"
#include "h5_one_writer.h"
#include "host_memory.h"
#include "phases_move.h"
#include "pool.h"

typedef struct {
  xio_phases_move *ph;
  int64_t first; /* the round's first chunk on this rank */
  /* gathered byte plane by byte plane, where the output's first filter
   * shuffles: the pieces are only inflated, and no thread shuffles the
   * chunk nor holds it shuffled to encode it */
  int shuffled;
  xio_filters decode;     /* what the pieces' bytes go through to be gathered */
  unsigned char **values; /* each chunk's, in the output's axis order */
  unsigned char **boxes;  /* where the axes move: each gathered in the input's */
  int64_t *origins;       /* in the output's axes */
  unsigned char **stored; /* each thread's piece as stored */
  size_t *stored_room;
} gather_job;

/* Local.  A piece's values (or its byte planes, shuffled) of `extent`
 * copied into chunk box `box` at `at`. */
static void place_piece(const gather_job *g, const int64_t *extent, const unsigned char *piece,
                        unsigned char *box, const int64_t *at) {
  const xio_phases_plan *p = g->ph->p;
  const int64_t zero[XIO_MAX_DIMS] = {0};
  if (!g->shuffled) {
    xio_copy_box(p->ndims, extent, p->type_size, piece, extent, zero, box, p->chunk, at);
    return;
  }
  const uint64_t piece_values = (uint64_t)xio_dims_product(extent, 0, p->ndims);
  const uint64_t chunk_values = p->chunk_bytes / p->type_size;
  for (size_t j = 0; j < p->type_size; j++)
    xio_copy_box(p->ndims, extent, 1, piece + j * piece_values, extent, zero,
                 box + j * chunk_values, p->chunk, at);
}

/* Local.  Piece (b, t) read, decoded and copied into chunk box `box` of
 * run `run`. */
static int gather_piece(gather_job *g, int64_t b, int64_t t, int64_t run, unsigned char *box,
                        int worker, xio_error *err) {
  xio_phases_move *ph = g->ph;
  const xio_phases_plan *p = ph->p;
  int64_t first, records, origin[XIO_MAX_DIMS], extent[XIO_MAX_DIMS], at[XIO_MAX_DIMS] = {0};
  xio_phases_batch(p, b, &first, &records);
  if (!records) return 0;
  const int64_t offset = ph->place[2 * (b * p->tiles + t)];
  const size_t size = (size_t)ph->place[2 * (b * p->tiles + t) + 1];
  if (size > g->stored_room[worker]) {
    free(g->stored[worker]);
    g->stored_room[worker] = (g->stored[worker] = malloc(size)) ? size : 0;
    if (!g->stored[worker]) return xio_fail(err, "out of memory reading pieces");
  }
  if (xio_read_at(ph->fd, g->stored[worker], size, (uint64_t)offset, ph->path, err)) return -1;
  xio_codec_scratch *s = xio_codec_scratches_get(&ph->scratch, worker);
  const unsigned char *piece = NULL;
  char why[128];
  const size_t bytes = (size_t)xio_phases_piece_bytes(p, t, records);
  if (!s ||
      xio_chunk_decode(&g->decode, 0, g->stored[worker], size, bytes, s, &piece, why, sizeof why))
    return xio_fail(err, "a piece of the scratch file %s, read back, does not decode: %s", ph->path,
                    s ? why : "out of memory");
  xio_phases_tile(p, t, origin, extent);
  extent[0] = records;
  at[0] = first - run * p->chunk[0];
  place_piece(g, extent, piece, box, at);
  return 0;
}

/* Item i of a round's gathering: piece i % per_run of its chunk i / per_run. */
static int gather_item(void *arg, int64_t i, int worker) {
  gather_job *g = arg;
  xio_phases_move *ph = g->ph;
  const xio_phases_plan *p = ph->p;
  const int64_t k = i / p->per_run, c = g->first + k, run = c / p->tiles, t = c % p->tiles;
  unsigned char *box = p->permuted ? g->boxes[k] : g->values[k];
  xio_error err;
  if (gather_piece(g, run * p->per_run + i % p->per_run, t, run, box, worker, &err))
    return xio_phases_item_failed(ph, &err);
  return 0;
}

static int permute_item(void *arg, int64_t k, int worker) {
  (void)worker;
  gather_job *g = arg;
  xio_phases_permute(g->ph->p, g->boxes[k], g->values[k], g->shuffled);
  return 0;
}

/* Local.  The round's `count` chunks gathered, every piece an item of a
 * pool job: their origins, the fill value where they cross the
 * dataset's edge, their pieces, then the axes moved. */
static int gather_chunks(gather_job *g, int64_t count, xio_chunk_writer *writer, xio_error *err) {
  xio_phases_move *ph = g->ph;
  const xio_phases_plan *p = ph->p;
  for (int64_t k = 0; k < count; k++) {
    const int64_t c = g->first + k, run = c / p->tiles;
    int64_t origin[XIO_MAX_DIMS], extent[XIO_MAX_DIMS];
    xio_phases_tile(p, c % p->tiles, origin, extent);
    origin[0] = run * p->chunk[0];
    int edge = origin[0] + p->chunk[0] > p->dims[0];
    for (int a = 1; a < p->ndims; a++) edge |= extent[a] < p->chunk[a];
    if (edge) xio_chunk_writer_fill(writer, p->permuted ? g->boxes[k] : g->values[k], g->shuffled);
    for (int i = 0; i < p->ndims; i++) g->origins[k * p->ndims + i] = origin[p->order[i]];
  }
  if (xio_pool_run(count * p->per_run, gather_item, g) ||
      (p->permuted && xio_pool_run(count, permute_item, g))) {
    *err = ph->item_err;
    return -1;
  }
  return 0;
}

/* Local.  The bytes each output chunk is given to be encoded into: what
 * the most its pieces took, and a sixteenth more.  Their streams are
 * shorter and their deflate faster, so a chunk comes out smaller as a
 * rule; one that does not is encoded again alone (chunk_writer.h). */
static uint64_t chunk_room(const xio_phases_move *ph) {
  const xio_phases_plan *p = ph->p;
  uint64_t most = 0;
  for (int64_t run = 0; run < p->runs; run++)
    for (int64_t t = 0; t < p->tiles; t++) {
      uint64_t sum = 0;
      for (int64_t b = run * p->per_run; b < (run + 1) * p->per_run; b++)
        sum += (uint64_t)ph->place[2 * (b * p->tiles + t) + 1];
      if (sum > most) most = sum;
    }
  return most + most / 16 + 4096;
}

/* Local.  The job's buffers for chunks_at_once chunks: -1 where they
 * cannot be had. */
static int gather_buffers(gather_job *g, xio_error *err) {
  const xio_phases_plan *p = g->ph->p;
  const int64_t n = p->chunks_at_once, threads = xio_pool_threads();
  g->values = calloc((size_t)n, sizeof *g->values);
  g->boxes = calloc((size_t)n, sizeof *g->boxes);
  g->origins = malloc(sizeof *g->origins * (size_t)(n * p->ndims));
  g->stored = calloc((size_t)threads, sizeof *g->stored);
  g->stored_room = calloc((size_t)threads, sizeof *g->stored_room);
  int rc = g->values && g->boxes && g->origins && g->stored && g->stored_room ? 0 : -1;
  for (int64_t k = 0; rc == 0 && k < n; k++)
    if (!(g->values[k] = xio_host_alloc((size_t)p->chunk_bytes)) ||
        (p->permuted && !(g->boxes[k] = xio_host_alloc((size_t)p->chunk_bytes))))
      rc = -1;
  return rc ? xio_fail(err, "cannot allocate %lld chunks of %llu bytes on rank %d", (long long)n,
                       (unsigned long long)p->chunk_bytes, g->ph->rank)
            : 0;
}

static void free_gather_buffers(gather_job *g) {
  const xio_phases_plan *p = g->ph->p;
  for (int64_t k = 0; g->values && g->boxes && k < p->chunks_at_once; k++)
    free(g->values[k]), free(g->boxes[k]);
  for (int64_t k = 0; g->stored && k < xio_pool_threads(); k++) free(g->stored[k]);
  free(g->values), free(g->boxes), free(g->origins), free(g->stored), free(g->stored_room);
}

/* Collective.  Phase 2: rank r gathers chunks_at_once chunks a round,
 * the r-th group of each round's, and the writer writes them. */
static int phase_two(xio_phases_move *ph, xio_chunk_writer *writer, xio_error *err) {
  xio_phases_plan *p = &ph->plan;
  const double began = MPI_Wtime();
  xio_phases_plan_rooms(p, chunk_room(ph), ph->options->memory_budget, xio_pool_threads());
  const char *room = getenv("XPOSE_CHUNK_ROOM"); /* the tests': rooms too small */
  if (room && atoll(room) > 0) p->room = (uint64_t)atoll(room);
  const int64_t g_n = p->chunks_at_once, per_round = g_n * ph->nranks;
  ph->rounds = ph->rounds_done + xio_phases_ceil_div(p->chunks, per_round);
  const uint64_t held = xio_phases_gather_bytes(p, g_n, xio_pool_threads());
  if (held > ph->stats->buffer_bytes) ph->stats->buffer_bytes = held;
  gather_job g = {.ph = ph, .shuffled = xio_chunk_writer_shuffles_first(writer)};
  g.decode = g.shuffled ? xio_phases_scratch_codec(p->type_size, 1) : ph->codec;
  int rc = gather_buffers(&g, err);
  for (int64_t round = 0; round < xio_phases_ceil_div(p->chunks, per_round); round++) {
    g.first = round * per_round + ph->rank * g_n;
    const int64_t left = p->chunks - g.first;
    const int64_t count = rc || left <= 0 ? 0 : left < g_n ? left : g_n;
    if (count && gather_chunks(&g, count, writer, err)) rc = -1;
    const xio_whole_chunks given = {rc ? 0 : count, g.origins, g.values, g.shuffled,
                                    (size_t)p->room};
    if (xio_chunk_writer_write_chunks(writer, ph->out->dset, &given, err)) rc = -1;
    if (xio_agree(ph->comm, rc, err)) {
      rc = -1;
      break;
    }
    if ((rc = xio_phases_round_done(ph)) != 0) break;
  }
  free_gather_buffers(&g);
  ph->stats->write_seconds = MPI_Wtime() - began;
  return rc;
}

int xio_phases_write_output(xio_phases_move *ph, xio_error *err) {
  const xio_chunked_dataset d = {ph->in->comm,    ph->out->dset,      ph->out->type,
                                 &ph->out->shape, ph->out->elem_size, ph->out->dataset,
                                 ph->out->files};
  xio_chunk_writer *writer = NULL;
  char held[4096];
  if (xio_chunk_writer_open(&d, &writer, err)) return -1;
  if (xio_one_writer_begin(ph->out, held, err)) {
    xio_chunk_writer_close(writer);
    return -1;
  }
  int rc = phase_two(ph, writer, err);
  xio_transpose_stats *stats = ph->stats;
  stats->codec_wrote = 1;
  xio_chunk_writer_times(writer, &stats->encode_seconds, &stats->store_seconds,
                         &stats->stored_bytes, &stats->stored_chunks);
  xio_chunk_writer_close(writer);
  xio_error end_err;
  if (xio_one_writer_end(ph->out, held, &end_err) && rc == 0) *err = end_err, rc = -1;
  return rc;
}
