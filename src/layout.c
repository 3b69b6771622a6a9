#include "layout.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

/* The one split (block.c), as a range. */
static xpose_range split(int64_t n, int64_t parts, int64_t index) {
  xpose_range r = {0, 0};
  xpose_block_range(n, parts, index, &r.first, &r.count);
  return r;
}

/* Chunk k of a block's n rows (of the transposed block).  From three
 * chunks on, the first and the last are half the others: the pipeline
 * cannot send before the first is packed, nor finish before the last is
 * placed.  On 2 H100s (NCCL engine, tests/bench/RESULTS.md) that took
 * 65536^2 float32 in 8 chunks from 1.30x to 1.27x NCCL's exchange alone,
 * and 65537^2 2-byte elements from 1.36x to 1.30x; quarter-size ends and
 * smaller lost again. */
static xpose_range chunk_range(int64_t n, int nchunks, int k) {
  if (nchunks < 3) return split(n, nchunks, k);
  /* 2 (nchunks - 1) halves: one for each end, two for every other chunk. */
  const int64_t halves = 2 * (int64_t)(nchunks - 1);
  const int64_t first_half = k == 0 ? 0 : 2 * (int64_t)k - 1;
  const int64_t end_half = k == nchunks - 1 ? halves : 2 * (int64_t)k + 1;
  const int64_t first = split(n, halves, first_half).first;
  const int64_t end = end_half == halves ? n : split(n, halves, end_half).first;
  return (xpose_range){first, end - first};
}

/* Chunks start this far apart in the send and receive buffers: NCCL moves a
 * message that starts off 16 bytes far slower.  On 2 H100s its exchange
 * alone in the pipeline's chunks, which started at odd offsets, took 1.52x
 * the whole exchange for 65537^2 bytes (3 chunks) and 1.64x for 65537^2 2-byte
 * elements (5 chunks), against 1.01x and 1.02x for 65536^2 (aligned). */
enum { CHUNK_ALIGN = 256 };

/* Where chunk k of a block of `units` rows of unit_bytes each starts, from
 * the block's start: the chunks (chunk_range), each rounded up
 * to CHUNK_ALIGN, one after another.  k = nchunks: the block's size. */
static int64_t chunk_start(int64_t units, int nchunks, int k, int64_t unit_bytes) {
  int64_t start = 0;
  for (int i = 0; i < k; i++) {
    const int64_t bytes = chunk_range(units, nchunks, i).count * unit_bytes;
    start += (bytes + CHUNK_ALIGN - 1) / CHUNK_ALIGN * CHUNK_ALIGN;
  }
  return start;
}

static int exchange_layout_alloc(xpose_exchange_layout *l, int nranks) {
  l->nranks = nranks;
  l->send_bytes = calloc((size_t)nranks, sizeof(int64_t));
  l->send_offsets = calloc((size_t)nranks, sizeof(int64_t));
  l->recv_bytes = calloc((size_t)nranks, sizeof(int64_t));
  l->recv_offsets = calloc((size_t)nranks, sizeof(int64_t));
  return l->send_bytes && l->send_offsets && l->recv_bytes && l->recv_offsets ? 0 : -1;
}

static void exchange_layout_free(xpose_exchange_layout *l) {
  free(l->send_bytes);
  free(l->send_offsets);
  free(l->recv_bytes);
  free(l->recv_offsets);
}

xpose_status xpose_layout_build(int rank, int nranks, int64_t rows, int64_t cols, size_t elem_size,
                                int64_t out_unit, int nchunks, const unsigned char *direct,
                                xpose_layout *layout) {
  xpose_status res = XPOSE_SUCCESS;
  const int p = nranks;
  const int64_t es = (int64_t)elem_size;
  memset(layout, 0, sizeof *layout);
  /* Every rank's input rows R_q and output rows C_q (= input columns). */
  xpose_range *rows_of = calloc((size_t)p, sizeof *rows_of);
  xpose_range *cols_of = calloc((size_t)p, sizeof *cols_of);
  layout->chunks = calloc((size_t)nchunks, sizeof *layout->chunks);
  XPOSE_REQUIREGOTO(rows_of && cols_of && layout->chunks, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the layout of %d ranks", p);
  layout->nchunks = nchunks;
  XPOSE_REQUIREGOTO(exchange_layout_alloc(&layout->whole, p) == 0, XPOSE_ERROR_OUT_OF_MEMORY, res,
                    fail, "cannot allocate the exchange layout");
  for (int q = 0; q < p; q++) {
    rows_of[q] = split(rows, p, q);
    xpose_unit_range(cols, out_unit, p, q, &cols_of[q].first, &cols_of[q].count);
  }
  const xpose_range in = rows_of[rank], out = cols_of[rank];
  layout->in = in;
  layout->out = out;

  /* All chunks at once: to q my rows x its columns, from q its rows x my
   * columns, each peer's block after the previous one's, its chunks aligned
   * (the gaps travel too).  The own block is transposed in place and never
   * travels. */
  xpose_exchange_layout *whole = &layout->whole;
  for (int q = 0; q < p; q++) {
    if (q == rank || (direct && direct[q])) continue;
    whole->send_offsets[q] = layout->send_bytes;
    whole->send_bytes[q] = chunk_start(cols_of[q].count, nchunks, nchunks, in.count * es);
    whole->recv_offsets[q] = layout->recv_bytes;
    whole->recv_bytes[q] = chunk_start(out.count, nchunks, nchunks, rows_of[q].count * es);
    layout->send_bytes += whole->send_bytes[q];
    layout->recv_bytes += whole->recv_bytes[q];
  }

  for (int k = 0; k < nchunks; k++) {
    xpose_chunk_layout *c = &layout->chunks[k];
    c->pack = calloc((size_t)p, sizeof *c->pack);
    c->place = calloc((size_t)p, sizeof *c->place);
    XPOSE_REQUIREGOTO(exchange_layout_alloc(&c->exchange, p) == 0 && c->pack && c->place,
                      XPOSE_ERROR_OUT_OF_MEMORY, res, fail, "cannot allocate the chunk layouts");
    const xpose_range mine = chunk_range(out.count, nchunks, k); /* of my output rows */
    c->own = (xpose_transpose_piece){.src_offset = (out.first + mine.first) * es,
                                     .ld_src = cols,
                                     .dst_offset = (mine.first * rows + in.first) * es,
                                     .ld_dst = rows,
                                     .rows = in.count,
                                     .cols = mine.count};
    for (int step = 1; step < p; step++) { /* peers in a ring: no rank is everyone's first */
      const int q = (rank + step) % p;
      if (direct && direct[q]) continue;
      const xpose_range theirs = chunk_range(cols_of[q].count, nchunks, k); /* of q's output rows */
      xpose_exchange_layout *x = &c->exchange;
      x->send_bytes[q] = in.count * theirs.count * es;
      x->send_offsets[q] =
          whole->send_offsets[q] + chunk_start(cols_of[q].count, nchunks, k, in.count * es);
      x->recv_bytes[q] = mine.count * rows_of[q].count * es;
      x->recv_offsets[q] =
          whole->recv_offsets[q] + chunk_start(out.count, nchunks, k, rows_of[q].count * es);
      c->pack[c->npeers] =
          (xpose_transpose_piece){.src_offset = (cols_of[q].first + theirs.first) * es,
                                  .ld_src = cols,
                                  .dst_offset = x->send_offsets[q],
                                  .ld_dst = in.count,
                                  .rows = in.count,
                                  .cols = theirs.count};
      c->place[c->npeers++] =
          (xpose_copy_piece){.src_offset = x->recv_offsets[q],
                             .src_pitch = rows_of[q].count * es,
                             .dst_offset = (mine.first * rows + rows_of[q].first) * es,
                             .dst_pitch = rows * es,
                             .rows = mine.count,
                             .row_bytes = rows_of[q].count * es};
    }
  }
fail:
  free(rows_of);
  free(cols_of);
  return res;
}

void xpose_layout_free(xpose_layout *layout) {
  exchange_layout_free(&layout->whole);
  for (int k = 0; layout->chunks && k < layout->nchunks; k++) {
    exchange_layout_free(&layout->chunks[k].exchange);
    free(layout->chunks[k].pack);
    free(layout->chunks[k].place);
  }
  free(layout->chunks);
  memset(layout, 0, sizeof *layout);
}
