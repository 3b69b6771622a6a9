/* NCCL exchange: one grouped ncclSend/ncclRecv per peer on the backend's
 * stream.  NCCL counts are size_t, so no message needs splitting. */
#include <stdlib.h>

#include "backend.h"
#include "cuda_check.h"
#include "exchange.h"

typedef struct {
  ncclComm_t comm;
  xpose_backend *backend;
  int rank;
} nccl_state;

static xpose_status nccl_start(xpose_exchange *exchange, int slot, const xpose_exchange_layout *l,
                               const void *send, void *recv) {
  (void)slot; /* stream-ordered: nothing to keep per slot */
  nccl_state *st = exchange->state;
  cudaStream_t stream = (cudaStream_t)st->backend->ops->stream(st->backend, XPOSE_LANE_COMM);
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_NCCLCHECKGOTO(ncclGroupStart(), res, fail);
  for (int k = 1; k < l->nranks; k++) {
    const int to = (st->rank + k) % l->nranks, from = (st->rank - k + l->nranks) % l->nranks;
    if (l->send_bytes[to] > 0)
      XPOSE_NCCLCHECKGOTO(ncclSend((const char *)send + l->send_offsets[to],
                                   (size_t)l->send_bytes[to], ncclUint8, to, st->comm, stream),
                          res, group);
    if (l->recv_bytes[from] > 0)
      XPOSE_NCCLCHECKGOTO(ncclRecv((char *)recv + l->recv_offsets[from],
                                   (size_t)l->recv_bytes[from], ncclUint8, from, st->comm, stream),
                          res, group);
  }
group:
  if (ncclGroupEnd() != ncclSuccess && res == XPOSE_SUCCESS) res = XPOSE_ERROR_NCCL;
fail:
  return res;
}

static xpose_status nccl_wait(xpose_exchange *exchange, int slot) {
  (void)exchange, (void)slot; /* what follows on the COMM lane sees the data */
  return XPOSE_SUCCESS;
}

static void nccl_destroy(xpose_exchange *exchange) {
  nccl_state *st = exchange->state;
  if (st->comm) ncclCommDestroy(st->comm);
  free(st);
  free(exchange);
}

static const xpose_exchange_ops nccl_ops = {nccl_start, nccl_wait, nccl_destroy};

xpose_status xpose_exchange_nccl_create(MPI_Comm comm, int nranks, xpose_backend *backend,
                                        xpose_exchange **exchange) {
  xpose_status res = XPOSE_SUCCESS;
  nccl_state *st = calloc(1, sizeof *st);
  *exchange = calloc(1, sizeof **exchange);
  ncclUniqueId id;
  XPOSE_REQUIREGOTO(st && *exchange, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the NCCL exchange");
  st->backend = backend;
  XPOSE_MPICHECKGOTO(MPI_Comm_rank(comm, &st->rank), res, fail);
  if (st->rank == 0) XPOSE_NCCLCHECKGOTO(ncclGetUniqueId(&id), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm), res, fail);
  XPOSE_NCCLCHECKGOTO(ncclCommInitRank(&st->comm, nranks, id, st->rank), res, fail);
  (*exchange)->ops = &nccl_ops;
  (*exchange)->name = "nccl";
  (*exchange)->stream_ordered = 1;
  (*exchange)->state = st;
  return XPOSE_SUCCESS;
fail:
  free(st);
  free(*exchange);
  *exchange = NULL;
  return res;
}
