/* Host-staged exchange for any MPI: device send buffer -> pinned host ->
 * MPI engine -> pinned host -> device receive buffer. */
#include <stdlib.h>

#include "backend.h"
#include "cuda_check.h"
#include "exchange.h"

typedef struct {
  xpose_exchange *inner;
  xpose_backend *backend;
  void *host_send, *host_recv, *device_recv;
  size_t send_total, recv_total;
} staged_state;

static cudaStream_t stream_of(staged_state *st) {
  return (cudaStream_t)st->backend->ops->stream(st->backend);
}

static xpose_status staged_start(xpose_exchange *exchange, const void *send, void *recv) {
  staged_state *st = exchange->state;
  xpose_status res = XPOSE_SUCCESS;
  st->device_recv = recv;
  if (st->send_total)
    XPOSE_CUDACHECKGOTO(
        cudaMemcpyAsync(st->host_send, send, st->send_total, cudaMemcpyDeviceToHost, stream_of(st)),
        res, fail);
  XPOSE_CUDACHECKGOTO(cudaStreamSynchronize(stream_of(st)), res, fail);
  XPOSE_CHECKGOTO(st->inner->ops->start(st->inner, st->host_send, st->host_recv), res, fail);
fail:
  return res;
}

static xpose_status staged_wait(xpose_exchange *exchange) {
  staged_state *st = exchange->state;
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_CHECKGOTO(st->inner->ops->wait(st->inner), res, fail);
  if (st->recv_total) /* ordered before the unpacking copies on the same stream */
    XPOSE_CUDACHECKGOTO(cudaMemcpyAsync(st->device_recv, st->host_recv, st->recv_total,
                                        cudaMemcpyHostToDevice, stream_of(st)),
                        res, fail);
fail:
  return res;
}

static void free_state(staged_state *st) {
  if (!st) return;
  if (st->inner) st->inner->ops->destroy(st->inner);
  if (st->host_send) cudaFreeHost(st->host_send);
  if (st->host_recv) cudaFreeHost(st->host_recv);
  free(st);
}

static void staged_destroy(xpose_exchange *exchange) {
  free_state(exchange->state);
  free(exchange);
}

static const xpose_exchange_ops staged_ops = {staged_start, staged_wait, staged_destroy};

xpose_status xpose_exchange_staged_create(MPI_Comm comm, const xpose_exchange_layout *layout,
                                          size_t max_message_bytes, xpose_backend *backend,
                                          xpose_exchange **exchange) {
  xpose_status res = XPOSE_SUCCESS;
  staged_state *st = calloc(1, sizeof *st);
  *exchange = calloc(1, sizeof **exchange);
  XPOSE_REQUIREGOTO(st && *exchange, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the staged exchange");
  st->backend = backend;
  for (int peer = 0; peer < layout->nranks; peer++) {
    st->send_total += (size_t)layout->send_bytes[peer];
    st->recv_total += (size_t)layout->recv_bytes[peer];
  }
  if (st->send_total)
    XPOSE_CUDACHECKGOTO(cudaMallocHost(&st->host_send, st->send_total), res, fail);
  if (st->recv_total)
    XPOSE_CUDACHECKGOTO(cudaMallocHost(&st->host_recv, st->recv_total), res, fail);
  XPOSE_CHECKGOTO(xpose_exchange_mpi_create(comm, layout, max_message_bytes, "mpi", &st->inner),
                  res, fail);
  (*exchange)->ops = &staged_ops;
  (*exchange)->name = "staged";
  (*exchange)->state = st;
  return XPOSE_SUCCESS;
fail:
  free_state(st);
  free(*exchange);
  *exchange = NULL;
  return res;
}
