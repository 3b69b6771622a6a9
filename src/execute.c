/* The distributed transpose algorithm.
 *
 * Rank p owns input rows R_p and output rows C_p (= input columns C_p).  The
 * block in[R_p, C_q] becomes out[C_q, R_p] on rank q.  So each rank
 *   1. transposes in[R_p, C_q] for every other q into the send buffer,
 *   2. starts the exchange,
 *   3. transposes its own block in[R_p, C_p] straight into out while the
 *      messages travel,
 *   4. waits, then copies each received block (already transposed) into its
 *      column range R_q of out.
 * Every element is read and written once by a transpose, plus one copy for
 * elements that change rank. */
#include "check.h"
#include "plan.h"

static int overlap(const void *a, int64_t a_bytes, const void *b, int64_t b_bytes) {
  const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return a_bytes > 0 && b_bytes > 0 && x < y + (uintptr_t)b_bytes && y < x + (uintptr_t)a_bytes;
}

xpose_status xpose_execute(xpose_plan plan, const void *in, void *out) {
  if (!plan) return XPOSE_ERROR_INVALID_ARGUMENT;
  xpose_status res = XPOSE_SUCCESS, local = XPOSE_SUCCESS;
  const size_t es = plan->elem_size;
  const int64_t p = plan->nranks;
  const xpose_backend_ops *ops = plan->backend->ops;
  xpose_backend *backend = plan->backend;
  const xpose_exchange_layout *layout = &plan->layout;

  /* A bad pointer on one rank must not leave the others in the exchange. */
  const int64_t in_bytes = plan->in_count * plan->cols * (int64_t)es;
  const int64_t out_bytes = plan->out_count * plan->rows * (int64_t)es;
  if ((!in && in_bytes > 0) || (!out && out_bytes > 0)) {
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "xpose_execute: NULL buffer on rank %d",
               plan->rank);
    local = XPOSE_ERROR_INVALID_ARGUMENT;
  } else if (overlap(in, in_bytes, out, out_bytes)) {
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__,
               "xpose_execute: input and output overlap on rank %d", plan->rank);
    local = XPOSE_ERROR_INVALID_ARGUMENT;
  }
  if (local == XPOSE_SUCCESS) local = ops->check_buffer(backend, in, "the input");
  if (local == XPOSE_SUCCESS) local = ops->check_buffer(backend, out, "the output");
  XPOSE_CHECKGOTO(xpose_agree(plan->comm, local), res, fail);

  for (int64_t k = 1; k < p; k++) {
    const int64_t q = (plan->rank + k) % p;
    int64_t first, count;
    xpose_block_range(plan->cols, p, q, &first, &count);
    XPOSE_CHECKGOTO(ops->transpose(backend, (const char *)in + first * (int64_t)es, plan->cols,
                                   (char *)plan->send_buf + layout->send_offsets[q], plan->in_count,
                                   plan->in_count, count, es),
                    res, fail);
  }
  XPOSE_CHECKGOTO(ops->synchronize(backend), res, fail);
  XPOSE_CHECKGOTO(plan->exchange->ops->start(plan->exchange, plan->send_buf, plan->recv_buf), res,
                  fail);
  XPOSE_CHECKGOTO(ops->transpose(backend, (const char *)in + plan->out_first * (int64_t)es,
                                 plan->cols, (char *)out + plan->in_first * (int64_t)es, plan->rows,
                                 plan->in_count, plan->out_count, es),
                  res, fail);
  XPOSE_CHECKGOTO(plan->exchange->ops->wait(plan->exchange), res, fail);
  for (int64_t q = 0; q < p; q++) {
    if (q == plan->rank) continue;
    int64_t first, count;
    xpose_block_range(plan->rows, p, q, &first, &count);
    XPOSE_CHECKGOTO(ops->copy_2d(backend, (const char *)plan->recv_buf + layout->recv_offsets[q],
                                 (size_t)count * es, (char *)out + first * (int64_t)es,
                                 (size_t)plan->rows * es, plan->out_count, (size_t)count * es),
                    res, fail);
  }
  XPOSE_CHECKGOTO(ops->synchronize(backend), res, fail);
fail:
  return res;
}
