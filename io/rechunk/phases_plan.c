#include "phases_plan.h"

#include <string.h>

/* The most bytes n bytes encode to, with room to spare (deflate's worst
 * case is n + n / 1000-ish + a few bytes; Fletcher32 adds 4). */
static uint64_t encoded_bound(uint64_t n) { return n + n / 32 + 1024; }

/* A thread's codec state (deflate's, inflate's) beside its buffers. */
#define THREAD_STATE_BYTES ((uint64_t)1 << 20)

/* Phase 1's slabs stop growing here: larger ones leave the cache between
 * their read and their cut, and hold more memory (a Zarr store's rechunk
 * at 256M on 2 ranks: 3.37 s and 283 MiB with slabs of at most 256 MiB,
 * 3.09 s and 95 MiB with 32 MiB; tests/bench/RESULTS.md). */
#define MOST_SLAB_BYTES ((uint64_t)32 << 20)

static uint64_t largest_piece(const xio_phases_plan *p, int64_t records) {
  uint64_t bytes = (uint64_t)records * p->type_size;
  for (int a = 1; a < p->ndims; a++)
    bytes *= (uint64_t)(p->chunk[a] < p->dims[a] ? p->chunk[a] : p->dims[a]);
  return bytes;
}

uint64_t xio_phases_batch_bytes(const xio_phases_plan *p, int64_t batch, int threads) {
  const uint64_t slab = (uint64_t)batch * p->record_bytes;
  const uint64_t piece = encoded_bound(largest_piece(p, batch));
  /* the slab, its pieces encoded, each thread's two work buffers */
  return slab + encoded_bound(slab) + (uint64_t)p->tiles * 1024 +
         (uint64_t)threads * (2 * piece + THREAD_STATE_BYTES);
}

uint64_t xio_phases_gather_bytes(const xio_phases_plan *p, int64_t chunks, int threads) {
  const uint64_t bound = encoded_bound(p->chunk_bytes);
  const uint64_t piece = encoded_bound(largest_piece(p, p->batch));
  const int64_t encoding = chunks < threads ? chunks : threads;
  /* the writer's arena: each chunk's room, or one chunk's bound for one
   * that did not fit its room; as much again on rank 0 for another
   * rank's (chunk_writer.h) */
  const uint64_t arena = (uint64_t)chunks * p->room > bound ? (uint64_t)chunks * p->room : bound;
  /* each chunk's values (gathered, and permuted where the axes move);
   * each encoding thread's work buffers; each gathering thread's piece as
   * stored and decoded */
  return (uint64_t)chunks * (1 + p->permuted) * p->chunk_bytes + arena * (p->ranks > 1 ? 2 : 1) +
         (uint64_t)encoding * p->encode_work + (uint64_t)threads * (3 * piece + THREAD_STATE_BYTES);
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Whether batches of `batch` records fit `budget` in both phases (phase
 * 2 reads their pieces, one chunk at a least). */
static int batch_fits(xio_phases_plan *p, int64_t batch, uint64_t budget, int threads) {
  p->batch = batch;
  return xio_phases_batch_bytes(p, batch, threads) <= budget &&
         xio_phases_gather_bytes(p, 1, threads) <= budget &&
         (batch == 1 || (uint64_t)batch * p->record_bytes <= MOST_SLAB_BYTES);
}

/* The most records a batch may hold within `budget` (0: not one), in
 * whole input chunks where one fits. */
static int64_t batch_for(xio_phases_plan *p, uint64_t budget, int64_t run, int64_t in_chunk0,
                         int threads) {
  int64_t lo = 0, hi = run;
  while (lo < hi) { /* the largest batch that fits */
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (batch_fits(p, mid, budget, threads))
      lo = mid;
    else
      hi = mid - 1;
  }
  if (in_chunk0 > 1 && lo >= in_chunk0) lo -= lo % in_chunk0;
  return lo;
}

/* The most chunks at once phase 2 holds within `budget`: one at least,
 * one a thread at most, and no more than a rank has. */
static int64_t chunks_at_once(const xio_phases_plan *p, uint64_t budget, int threads) {
  int64_t at_once = 1;
  const int64_t most = ceil_div(p->chunks, p->ranks);
  while (at_once < threads && at_once < most &&
         xio_phases_gather_bytes(p, at_once + 1, threads) <= budget)
    at_once++;
  return at_once;
}

int xio_phases_plan_make(const xio_phases_problem *q, xio_phases_plan *p) {
  memset(p, 0, sizeof *p);
  const int ndims = q->ndims;
  p->ndims = ndims, p->type_size = q->type_size, p->ranks = q->ranks;
  p->encode_work = q->encode_work;
  p->record_bytes = q->type_size, p->chunk_bytes = q->type_size, p->tiles = 1;
  for (int i = 0; i < ndims; i++) {
    p->order[i] = q->order ? q->order[i] : i;
    p->permuted |= p->order[i] != i;
    p->chunk[p->order[i]] = q->chunk[i];
  }
  for (int a = 0; a < ndims; a++) {
    p->dims[a] = q->dims[a];
    p->chunk_bytes *= (uint64_t)p->chunk[a];
    if (a == 0) continue;
    p->record_bytes *= (uint64_t)q->dims[a];
    p->tile_grid[a] = ceil_div(q->dims[a], p->chunk[a]);
    p->tiles *= p->tile_grid[a];
  }
  p->tile_grid[0] = 1;
  p->room = encoded_bound(p->chunk_bytes);
  const int64_t run = p->chunk[0] < q->dims[0] ? p->chunk[0] : q->dims[0];
  p->runs = q->dims[0] > 0 ? ceil_div(q->dims[0], p->chunk[0]) : 0;
  p->chunks = p->runs * p->tiles;
  p->batch = 1;
  p->least_budget = xio_phases_batch_bytes(p, 1, q->threads);
  const uint64_t one_chunk = xio_phases_gather_bytes(p, 1, q->threads);
  if (one_chunk > p->least_budget) p->least_budget = one_chunk;
  if (q->budget < p->least_budget || run < 1) return -1;
  p->batch = batch_for(p, q->budget, run, q->in_chunk0, q->threads);
  p->per_run = ceil_div(run, p->batch);
  p->batches = p->runs * p->per_run;
  p->chunks_at_once = chunks_at_once(p, q->budget, q->threads);
  p->scratch_bytes = 0;
  for (int64_t b = 0; b < p->batches; b++) {
    int64_t first, records;
    xio_phases_batch(p, b, &first, &records);
    for (int64_t t = 0; records && t < p->tiles; t++)
      p->scratch_bytes += encoded_bound(xio_phases_piece_bytes(p, t, records));
  }
  return 0;
}

void xio_phases_plan_rooms(xio_phases_plan *p, uint64_t room, uint64_t budget, int threads) {
  const uint64_t bound = encoded_bound(p->chunk_bytes);
  p->room = room < bound ? room : bound;
  p->chunks_at_once = chunks_at_once(p, budget, threads);
}

void xio_phases_batch(const xio_phases_plan *p, int64_t index, int64_t *first, int64_t *records) {
  const int64_t run = index / p->per_run, k = index % p->per_run;
  const int64_t run_end =
      (run + 1) * p->chunk[0] < p->dims[0] ? (run + 1) * p->chunk[0] : p->dims[0];
  *first = run * p->chunk[0] + k * p->batch;
  const int64_t end = *first + p->batch < run_end ? *first + p->batch : run_end;
  *records = end > *first ? end - *first : 0;
}

void xio_phases_tile(const xio_phases_plan *p, int64_t tile, int64_t *origin, int64_t *extent) {
  origin[0] = 0, extent[0] = 1;
  for (int a = p->ndims - 1; a >= 1; a--) {
    const int64_t k = tile % p->tile_grid[a];
    tile /= p->tile_grid[a];
    origin[a] = k * p->chunk[a];
    extent[a] = origin[a] + p->chunk[a] <= p->dims[a] ? p->chunk[a] : p->dims[a] - origin[a];
  }
}

uint64_t xio_phases_piece_bytes(const xio_phases_plan *p, int64_t tile, int64_t records) {
  int64_t origin[XIO_MAX_DIMS], extent[XIO_MAX_DIMS];
  xio_phases_tile(p, tile, origin, extent);
  uint64_t bytes = (uint64_t)records * p->type_size;
  for (int a = 1; a < p->ndims; a++) bytes *= (uint64_t)extent[a];
  return bytes;
}

void xio_copy_box(int ndims, const int64_t *count, size_t size, const unsigned char *src,
                  const int64_t *src_dims, const int64_t *src_lo, unsigned char *dst,
                  const int64_t *dst_dims, const int64_t *dst_lo) {
  int64_t at[XIO_MAX_DIMS] = {0}, src_step[XIO_MAX_DIMS], dst_step[XIO_MAX_DIMS];
  src_step[ndims - 1] = dst_step[ndims - 1] = (int64_t)size;
  for (int a = ndims - 2; a >= 0; a--)
    src_step[a] = src_step[a + 1] * src_dims[a + 1],
    dst_step[a] = dst_step[a + 1] * dst_dims[a + 1];
  for (int a = 0; a < ndims; a++)
    if (count[a] <= 0) return;
  const size_t run = (size_t)count[ndims - 1] * size;
  for (;;) { /* every run along the last axis */
    int64_t s = src_lo[ndims - 1] * (int64_t)size, d = dst_lo[ndims - 1] * (int64_t)size;
    for (int a = 0; a + 1 < ndims; a++)
      s += (src_lo[a] + at[a]) * src_step[a], d += (dst_lo[a] + at[a]) * dst_step[a];
    memcpy(dst + d, src + s, run);
    int a = ndims - 2;
    while (a >= 0 && ++at[a] == count[a]) at[a--] = 0;
    if (a < 0) return;
  }
}

/* One chunk's values of `size` bytes permuted (the values, or one byte
 * plane of them). */
static void permute_sized(const xio_phases_plan *p, size_t size, const unsigned char *box,
                          unsigned char *out) {
  const int n = p->ndims;
  int64_t in_step[XIO_MAX_DIMS], step[XIO_MAX_DIMS], count[XIO_MAX_DIMS], at[XIO_MAX_DIMS] = {0};
  in_step[n - 1] = (int64_t)size;
  for (int a = n - 2; a >= 0; a--) in_step[a] = in_step[a + 1] * p->chunk[a + 1];
  for (int i = 0; i < n; i++) step[i] = in_step[p->order[i]], count[i] = p->chunk[p->order[i]];
  const int64_t last = count[n - 1], last_step = step[n - 1];
  for (;;) { /* every run along the output's last axis, gathered */
    int64_t from = 0;
    for (int i = 0; i + 1 < n; i++) from += at[i] * step[i];
    for (int64_t k = 0; k < last; k++, out += size) memcpy(out, box + from + k * last_step, size);
    int i = n - 2;
    while (i >= 0 && ++at[i] == count[i]) at[i--] = 0;
    if (i < 0) return;
  }
}

void xio_phases_permute(const xio_phases_plan *p, const unsigned char *box, unsigned char *out,
                        int shuffled) {
  if (!shuffled) {
    permute_sized(p, p->type_size, box, out);
    return;
  }
  const uint64_t values = p->chunk_bytes / p->type_size;
  for (size_t j = 0; j < p->type_size; j++) permute_sized(p, 1, box + j * values, out + j * values);
}
