/* The layout (src/layout.c) on its own, no MPI: for 1 to 6 ranks grouped
 * into nodes of every size, with the blocks within a node left out of the
 * exchange (the p2p engine writes those itself), every rank's layout is
 * built, the two sides of every message are checked to agree and to start
 * aligned, and a transpose is carried out on the host through the layouts'
 * pieces alone (pack, exchange by memcpy, place; the own block and the
 * node's blocks written directly), then compared with the definition.
 * Shapes include empty ranks and uneven splits, and output rows split in
 * whole units (xpose_unit_range). */
#include <string.h>

#include "backend/host_kernels.h"
#include "layout.h"
#include "test_util.h"

static long long cases;

static unsigned char element(int64_t i, int64_t j, size_t k) { return pattern_byte(i, j, k); }

/* Ranks [g * group, (g + 1) * group) form node g; group 0: no p2p, the
 * pipeline's layout in nchunks chunks with the own block in pieces. */
static void check(int nranks, int group, int64_t rows, int64_t cols, size_t es, int nchunks,
                  int64_t unit) {
  xpose_layout *layouts = calloc((size_t)nranks, sizeof *layouts);
  unsigned char **in = calloc((size_t)nranks, sizeof *in), **out = calloc((size_t)nranks, sizeof *out);
  unsigned char **send = calloc((size_t)nranks, sizeof *send),
                **recv = calloc((size_t)nranks, sizeof *recv);
  unsigned char *direct = calloc((size_t)nranks * (size_t)nranks, 1);
  for (int p = 0; p < nranks; p++)
    for (int q = 0; q < nranks; q++) direct[p * nranks + q] = group && p / group == q / group;
  for (int p = 0; p < nranks; p++) {
    const int chunks = group ? 1 : nchunks; /* as plans cut them for p2p */
    EXPECT(xpose_layout_build(p, nranks, rows, cols, es, unit, chunks,
                              group ? direct + p * nranks : NULL, &layouts[p]) == XPOSE_SUCCESS,
           "layout of rank %d", p);
    int64_t first = -1, count = -1;
    xpose_unit_range(cols, unit, nranks, p, &first, &count);
    EXPECT(layouts[p].out.first == first && layouts[p].out.count == count &&
               (count == 0 || first % (unit > 1 ? unit : 1) == 0),
           "rank %d of %d: output rows %lld+%lld in units of %lld", p, nranks,
           (long long)layouts[p].out.first, (long long)layouts[p].out.count, (long long)unit);
  }
  /* The two sides of every message agree; nothing within a node travels. */
  for (int p = 0; p < nranks; p++) {
    const xpose_layout *l = &layouts[p];
    int64_t sent = 0, received = 0;
    for (int q = 0; q < nranks; q++) {
      const int local = direct[p * nranks + q];
      EXPECT(l->whole.send_bytes[q] == layouts[q].whole.recv_bytes[p],
             "%d ranks, nodes of %d, %lldx%lld: %d sends %lld bytes to %d, which expects %lld",
             nranks, group, (long long)rows, (long long)cols, p, (long long)l->whole.send_bytes[q],
             q, (long long)layouts[q].whole.recv_bytes[p]);
      if (local || q == p)
        EXPECT(l->whole.send_bytes[q] == 0 && l->whole.recv_bytes[q] == 0,
               "rank %d exchanges with %d on its node", p, q);
      sent += l->whole.send_bytes[q];
      received += l->whole.recv_bytes[q];
    }
    EXPECT(sent == l->send_bytes && received == l->recv_bytes, "rank %d's scratch", p);
  }
  /* Carry it out. */
  for (int p = 0; p < nranks; p++) {
    const xpose_layout *l = &layouts[p];
    in[p] = malloc((size_t)(l->in.count * cols) * es + 1);
    out[p] = malloc((size_t)(l->out.count * rows) * es + 1);
    send[p] = malloc((size_t)l->send_bytes + 1);
    recv[p] = malloc((size_t)l->recv_bytes + 1);
    for (int64_t i = 0; i < l->in.count; i++)
      for (int64_t j = 0; j < cols; j++)
        for (size_t k = 0; k < es; k++) in[p][((size_t)(i * cols + j)) * es + k] = element(l->in.first + i, j, k);
    memset(out[p], 0xA5, (size_t)(l->out.count * rows) * es);
  }
  for (int p = 0; p < nranks; p++) { /* p2p: the node's blocks, written directly */
    const xpose_layout *l = &layouts[p];
    for (int q = 0; q < nranks; q++) {
      if (!direct[p * nranks + q]) continue;
      const xpose_layout *lq = &layouts[q];
      xpose_host_transpose(in[p] + (size_t)lq->out.first * es, cols,
                           out[q] + (size_t)l->in.first * es, rows, l->in.count, lq->out.count, es);
    }
    for (int k = 0; k < l->nchunks; k++) {
      const xpose_chunk_layout *c = &l->chunks[k];
      if (!group)
        xpose_host_transpose(in[p] + c->own.src_offset, c->own.ld_src, out[p] + c->own.dst_offset,
                             c->own.ld_dst, c->own.rows, c->own.cols, es);
      for (int i = 0; i < c->npeers; i++) {
        const xpose_transpose_piece *t = &c->pack[i];
        xpose_host_transpose(in[p] + t->src_offset, t->ld_src, send[p] + t->dst_offset, t->ld_dst,
                             t->rows, t->cols, es);
      }
    }
  }
  for (int p = 0; p < nranks; p++)
    for (int k = 0; k < layouts[p].nchunks; k++)
      for (int q = 0; q < nranks; q++) {
        const xpose_exchange_layout *x = &layouts[p].chunks[k].exchange, *y = &layouts[q].chunks[k].exchange;
        EXPECT(x->send_bytes[q] == y->recv_bytes[p], "chunk %d: %d -> %d", k, p, q);
        /* Every chunk starts aligned (NCCL is slow on messages that do not). */
        EXPECT(x->send_offsets[q] % 256 == 0 && y->recv_offsets[p] % 256 == 0,
               "chunk %d: %d -> %d at offsets %lld and %lld", k, p, q,
               (long long)x->send_offsets[q], (long long)y->recv_offsets[p]);
        if (x->send_bytes[q] > 0 && x->send_bytes[q] == y->recv_bytes[p])
          memcpy(recv[q] + y->recv_offsets[p], send[p] + x->send_offsets[q], (size_t)x->send_bytes[q]);
      }
  for (int p = 0; p < nranks; p++)
    for (int k = 0; k < layouts[p].nchunks; k++) {
      const xpose_chunk_layout *c = &layouts[p].chunks[k];
      for (int i = 0; i < c->npeers; i++) {
        const xpose_copy_piece *piece = &c->place[i];
        for (int64_t r = 0; r < piece->rows; r++)
          memcpy(out[p] + piece->dst_offset + r * piece->dst_pitch,
                 recv[p] + piece->src_offset + r * piece->src_pitch, (size_t)piece->row_bytes);
      }
    }
  long long wrong = 0;
  for (int p = 0; p < nranks; p++) {
    const xpose_layout *l = &layouts[p];
    for (int64_t j = 0; j < l->out.count; j++)
      for (int64_t i = 0; i < rows; i++)
        for (size_t k = 0; k < es; k++)
          wrong += out[p][((size_t)(j * rows + i)) * es + k] != element(i, l->out.first + j, k);
  }
  EXPECT(wrong == 0, "%d ranks in nodes of %d, %lldx%lld es=%zu, %d chunks, units of %lld: %lld bytes wrong",
         nranks, group, (long long)rows, (long long)cols, es, nchunks, (long long)unit, wrong);
  for (int p = 0; p < nranks; p++) {
    xpose_layout_free(&layouts[p]);
    free(in[p]);
    free(out[p]);
    free(send[p]);
    free(recv[p]);
  }
  free(layouts);
  free(in);
  free(out);
  free(send);
  free(recv);
  free(direct);
  cases++;
}

int main(void) {
  const int64_t shapes[][2] = {{1, 1}, {2, 3}, {7, 5}, {24, 24}, {97, 89}, {1, 40}, {40, 1}};
  const size_t sizes[] = {1, 4, 12};
  /* Even chunks (2); from 3 on, half-size first and last ones. */
  const int chunk_counts[] = {2, 3, 5};
  /* Output rows in units: none, units that leave ranks empty, a short last one. */
  const int64_t units[] = {0, 4, 30};
  for (int nranks = 1; nranks <= 6; nranks++)
    for (int group = 0; group <= nranks; group++)
      for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
          for (size_t c = 0; c < sizeof chunk_counts / sizeof *chunk_counts; c++)
            for (size_t u = 0; u < sizeof units / sizeof *units; u++)
              check(nranks, group, shapes[s][0], shapes[s][1], sizes[z], chunk_counts[c], units[u]);
  if (test_failures) return 1;
  printf("layouts: %lld cases passed\n", cases);
  return 0;
}
