/* The distributed transpose algorithm.
 *
 * Rank p owns input rows R_p and output rows C_p (= input columns C_p).  The
 * block in[R_p, C_q] becomes out[C_q, R_p] on rank q.  Each rank transposes
 * its blocks for the others into a send buffer ("packing"), exchanges them,
 * and copies the received, already transposed blocks into their column
 * ranges of out ("placing"); its own block goes straight from in to out.
 *
 * Where each piece goes was worked out with the plan (layout.c); this file
 * only runs the pieces in order.  The exchange runs in chunks (ranges of
 * each block's columns) through a pipeline, so that with the CUDA backend
 * chunk k is packed while chunk k - 1 travels and chunk k - 2 is placed,
 * and the own block is transposed chunk by chunk in the gaps, each on a
 * lane of its own:
 *
 *   PACK    pack 0 | pack 1 | pack 2 | ...
 *   COMM             send 0 | send 1 | send 2 | ...
 *   UNPACK                    place 0 | place 1 | ...
 *   SELF    own 0  | own 1  | own 2  | ...
 *
 * The CUDA backend gives COMM the highest stream priority and SELF the
 * lowest, so the transfers never wait for multiprocessors that local work
 * holds and the own block fills what is left.  Events order the lanes;
 * engines that are not stream-ordered (MPI) start a chunk from the host once
 * its packing is done.  On the host every step runs in order as it is issued
 * and chunking only splits the messages. */
#include <stdlib.h>

#include "check.h"
#include "collective.h"
#include "plan.h"

enum { EVENT_PACKED = 0, EVENT_RECEIVED = XPOSE_MAX_CHUNKS };

static int overlap(const void *a, int64_t a_bytes, const void *b, int64_t b_bytes) {
  const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return a_bytes > 0 && b_bytes > 0 && x < y + (uintptr_t)b_bytes && y < x + (uintptr_t)a_bytes;
}

static xpose_status transpose(xpose_plan plan, int lane, const xpose_transpose_piece *t,
                              const void *src, void *dst) {
  return plan->backend->ops->transpose(plan->backend, lane, (const char *)src + t->src_offset,
                                       t->ld_src, (char *)dst + t->dst_offset, t->ld_dst, t->rows,
                                       t->cols, plan->elem_size);
}

xpose_status xpose_pack_chunk(xpose_plan plan, const xpose_chunk_layout *c, const void *in) {
  xpose_status res = XPOSE_SUCCESS;
  for (int i = 0; i < c->npeers; i++)
    XPOSE_CHECKGOTO(transpose(plan, XPOSE_LANE_PACK, &c->pack[i], in, plan->send_buf), res, fail);
fail:
  return res;
}

xpose_status xpose_own_chunk(xpose_plan plan, const xpose_chunk_layout *c, const void *in,
                             void *out) {
  return transpose(plan, XPOSE_LANE_SELF, &c->own, in, out);
}

xpose_status xpose_place_chunk(xpose_plan plan, const xpose_chunk_layout *c, void *out) {
  xpose_status res = XPOSE_SUCCESS;
  for (int i = 0; i < c->npeers; i++) {
    const xpose_copy_piece *p = &c->place[i];
    XPOSE_CHECKGOTO(
        plan->backend->ops->copy_2d(plan->backend, XPOSE_LANE_UNPACK,
                                    (const char *)plan->recv_buf + p->src_offset,
                                    (size_t)p->src_pitch, (char *)out + p->dst_offset,
                                    (size_t)p->dst_pitch, p->rows, (size_t)p->row_bytes),
        res, fail);
  }
fail:
  return res;
}

/* Engines that write peers' outputs: one kernel reads this rank's input
 * once and writes every block of its node straight into its owner's
 * output, mapped here (plan->peer_parts), its own included, and the blocks
 * for other nodes into the send buffer; those then go through the engine's
 * exchange and are placed like the pipeline's, in one chunk.  The host
 * waits for the caller's earlier work before any rank may write into its
 * output, and for every lane before the closing agreement, after which
 * every output is complete. */
static xpose_status execute_into_peers(xpose_plan plan, const void *in, void *out) {
  xpose_status res = XPOSE_SUCCESS, local = XPOSE_SUCCESS;
  const xpose_backend_ops *ops = plan->backend->ops;
  xpose_backend *backend = plan->backend;
  xpose_exchange *exchange = plan->exchange;
  const xpose_layout *layout = &plan->layout;
  local = ops->begin(backend);
  if (local == XPOSE_SUCCESS) local = ops->record(backend, XPOSE_LANE_COMM, EVENT_PACKED);
  if (local == XPOSE_SUCCESS) local = ops->sync_event(backend, EVENT_PACKED);
  XPOSE_CHECKGOTO(xpose_agree(plan->comm, local), res, fail);
  /* The walk starts at this rank's own part, so ranks start on different
   * destinations. */
  local = ops->transpose_parts(backend, XPOSE_LANE_COMM, in, plan->cols, layout->in.count,
                               plan->cols, plan->peer_parts, plan->nranks, plan->rank,
                               plan->elem_size);
  if (local == XPOSE_SUCCESS && !exchange->stream_ordered) {
    local = ops->record(backend, XPOSE_LANE_COMM, EVENT_PACKED);
    if (local == XPOSE_SUCCESS) local = ops->sync_event(backend, EVENT_PACKED);
  }
  /* No rank may enter the exchange that another has left. */
  const xpose_status launched = xpose_agree(plan->comm, local);
  if (launched == XPOSE_SUCCESS) {
    local = exchange->ops->start(exchange, 0, &layout->whole, plan->send_buf, plan->recv_buf);
    if (local == XPOSE_SUCCESS) local = exchange->ops->wait(exchange, 0);
    if (local == XPOSE_SUCCESS) local = ops->record(backend, XPOSE_LANE_COMM, EVENT_RECEIVED);
    if (local == XPOSE_SUCCESS) local = ops->wait_event(backend, XPOSE_LANE_UNPACK, EVENT_RECEIVED);
    if (local == XPOSE_SUCCESS) local = xpose_place_chunk(plan, &layout->chunks[0], out);
  }
  /* Even after a failure: no write into a peer may still be in flight. */
  const xpose_status synchronized = ops->synchronize(backend);
  if (local == XPOSE_SUCCESS) local = synchronized;
  if (launched != XPOSE_SUCCESS) local = launched;
  XPOSE_CHECKGOTO(xpose_agree(plan->comm, local), res, fail);
fail:
  return res;
}

/* Tests fail one rank where a GPU launch could fail: XPOSE_FAULT_EXECUTE=R
 * fails rank R's packing of the last chunk, with earlier chunks in flight. */
static xpose_status packing_fault(xpose_plan plan, int k) {
  const char *fault = getenv("XPOSE_FAULT_EXECUTE");
  if (!fault || atoi(fault) != plan->rank || k != plan->layout.nchunks - 1) return XPOSE_SUCCESS;
  xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "XPOSE_FAULT_EXECUTE: rank %d fails chunk %d",
             plan->rank, k);
  return XPOSE_ERROR_INTERNAL;
}

/* The chunked pipeline.  A rank that fails must not leave the others in
 * an exchange: every chunk's start is agreed first; after a failure no
 * chunk starts, the one in flight is still waited for, every lane drains,
 * and the closing agreement fails every rank together. */
static xpose_status execute_pipeline(xpose_plan plan, const void *in, void *out) {
  xpose_status res = XPOSE_SUCCESS, local = XPOSE_SUCCESS;
  const xpose_backend_ops *ops = plan->backend->ops;
  xpose_backend *backend = plan->backend;
  xpose_exchange *exchange = plan->exchange;
  const xpose_layout *layout = &plan->layout;
  int started = 0; /* chunks whose exchange every rank has started */
  local = ops->begin(backend);
  for (int k = 0; k <= layout->nchunks; k++) {
    if (k < layout->nchunks && started == k) {
      const xpose_chunk_layout *c = &layout->chunks[k];
      if (local == XPOSE_SUCCESS) local = packing_fault(plan, k);
      if (local == XPOSE_SUCCESS) local = xpose_pack_chunk(plan, c, in);
      if (local == XPOSE_SUCCESS) local = ops->record(backend, XPOSE_LANE_PACK, EVENT_PACKED + k);
      if (local == XPOSE_SUCCESS) local = xpose_own_chunk(plan, c, in, out);
      if (local == XPOSE_SUCCESS)
        local = ops->wait_event(backend, XPOSE_LANE_COMM, EVENT_PACKED + k);
      if (local == XPOSE_SUCCESS && !exchange->stream_ordered)
        local = ops->sync_event(backend, EVENT_PACKED + k);
      const xpose_status agreed = xpose_agree(plan->comm, local);
      if (agreed == XPOSE_SUCCESS) {
        local = exchange->ops->start(exchange, k % XPOSE_EXCHANGE_SLOTS, &c->exchange,
                                     plan->send_buf, plan->recv_buf);
        if (local == XPOSE_SUCCESS) started = k + 1;
      } else if (local == XPOSE_SUCCESS) {
        local = agreed;
      }
    }
    if (k > 0 && k <= started) {
      const xpose_status received = exchange->ops->wait(exchange, (k - 1) % XPOSE_EXCHANGE_SLOTS);
      if (local == XPOSE_SUCCESS) local = received;
      if (local == XPOSE_SUCCESS)
        local = ops->record(backend, XPOSE_LANE_COMM, EVENT_RECEIVED + k - 1);
      if (local == XPOSE_SUCCESS)
        local = ops->wait_event(backend, XPOSE_LANE_UNPACK, EVENT_RECEIVED + k - 1);
      if (local == XPOSE_SUCCESS) local = xpose_place_chunk(plan, &layout->chunks[k - 1], out);
    }
  }
  const xpose_status synchronized = ops->synchronize(backend);
  if (local == XPOSE_SUCCESS) local = synchronized;
  XPOSE_CHECKGOTO(xpose_agree(plan->comm, local), res, fail);
fail:
  return res;
}

xpose_status xpose_execute(xpose_plan plan, const void *in, void *out) {
  if (!plan) return XPOSE_ERROR_INVALID_ARGUMENT;
  xpose_status res = XPOSE_SUCCESS, local = XPOSE_SUCCESS;
  const xpose_backend_ops *ops = plan->backend->ops;
  xpose_backend *backend = plan->backend;
  xpose_exchange *exchange = plan->exchange;
  const xpose_layout *layout = &plan->layout;

  /* A bad pointer on one rank must not leave the others in the exchange. */
  const int64_t in_bytes = layout->in.count * plan->cols * (int64_t)plan->elem_size;
  const int64_t out_bytes = layout->out.count * plan->rows * (int64_t)plan->elem_size;
  if ((!in && in_bytes > 0) || (!out && out_bytes > 0)) {
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "xpose_execute: NULL buffer on rank %d",
               plan->rank);
    local = XPOSE_ERROR_INVALID_ARGUMENT;
  } else if (overlap(in, in_bytes, out, out_bytes)) {
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__,
               "xpose_execute: input and output overlap on rank %d", plan->rank);
    local = XPOSE_ERROR_INVALID_ARGUMENT;
  }
  if (local == XPOSE_SUCCESS && plan->own_output && out != plan->output) {
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__,
               "xpose_execute: rank %d's output is not the plan's (xpose_plan_output_buffer)",
               plan->rank);
    local = XPOSE_ERROR_INVALID_ARGUMENT;
  }
  if (local == XPOSE_SUCCESS) local = ops->check_buffer(backend, in, "the input");
  if (local == XPOSE_SUCCESS) local = ops->check_buffer(backend, out, "the output");
  XPOSE_CHECKGOTO(xpose_agree(plan->comm, local), res, fail);
  if (exchange->ops->peer_output) return execute_into_peers(plan, in, out);
  return execute_pipeline(plan, in, out);
fail:
  return res;
}
