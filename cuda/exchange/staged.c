/* Host-staged exchange for any MPI: device send buffer -> pinned host ->
 * MPI engine -> pinned host -> device receive buffer. */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "check.h"
#include "exchange/exchange.h"

typedef struct {
  xpose_exchange *inner;
  xpose_backend *backend;
  void *host_send, *host_recv;
  struct {
    const xpose_exchange_layout *layout;
    void *device_recv;
  } slots[XPOSE_EXCHANGE_SLOTS];
} staged_state;

static cudaStream_t comm_stream(staged_state *st) {
  return (cudaStream_t)st->backend->ops->stream(st->backend, XPOSE_LANE_COMM);
}

/* Copies each peer's region of `layout` between device and pinned host
 * buffers, which share offsets. */
static xpose_status copy_regions(staged_state *st, const xpose_exchange_layout *l, int sending,
                                 const void *from, void *to) {
  xpose_status res = XPOSE_SUCCESS;
  const int64_t *bytes = sending ? l->send_bytes : l->recv_bytes;
  const int64_t *offsets = sending ? l->send_offsets : l->recv_offsets;
  for (int peer = 0; peer < l->nranks; peer++)
    if (bytes[peer] > 0)
      XPOSE_CUDACHECKGOTO(cudaMemcpyAsync((char *)to + offsets[peer],
                                          (const char *)from + offsets[peer], (size_t)bytes[peer],
                                          sending ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice,
                                          comm_stream(st)),
                          res, fail);
fail:
  return res;
}

static xpose_status staged_start(xpose_exchange *exchange, int slot,
                                 const xpose_exchange_layout *layout, const void *send,
                                 void *recv) {
  staged_state *st = exchange->state;
  xpose_status res = XPOSE_SUCCESS;
  st->slots[slot].layout = layout;
  st->slots[slot].device_recv = recv;
  XPOSE_CHECKGOTO(copy_regions(st, layout, 1, send, st->host_send), res, fail);
  XPOSE_CUDACHECKGOTO(cudaStreamSynchronize(comm_stream(st)), res, fail);
  XPOSE_CHECKGOTO(st->inner->ops->start(st->inner, slot, layout, st->host_send, st->host_recv), res,
                  fail);
fail:
  return res;
}

static xpose_status staged_wait(xpose_exchange *exchange, int slot) {
  staged_state *st = exchange->state;
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_CHECKGOTO(st->inner->ops->wait(st->inner, slot), res, fail);
  /* On the COMM lane: the placing copies wait for it through an event. */
  XPOSE_CHECKGOTO(
      copy_regions(st, st->slots[slot].layout, 0, st->host_recv, st->slots[slot].device_recv), res,
      fail);
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

static const xpose_exchange_ops staged_ops = {
    .start = staged_start, .wait = staged_wait, .destroy = staged_destroy};

static size_t extent(const int64_t *bytes, const int64_t *offsets, int n) {
  int64_t end = 0;
  for (int i = 0; i < n; i++)
    if (offsets[i] + bytes[i] > end) end = offsets[i] + bytes[i];
  return (size_t)end;
}

static xpose_status staged_create(const xpose_exchange_setup *setup, xpose_exchange **exchange) {
  xpose_status res = XPOSE_SUCCESS;
  staged_state *st = calloc(1, sizeof *st);
  *exchange = calloc(1, sizeof **exchange);
  XPOSE_REQUIREGOTO(st && *exchange, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the staged exchange");
  st->backend = setup->backend;
  const xpose_exchange_layout *whole = setup->whole;
  const size_t send_total = extent(whole->send_bytes, whole->send_offsets, whole->nranks);
  const size_t recv_total = extent(whole->recv_bytes, whole->recv_offsets, whole->nranks);
  if (send_total) XPOSE_CUDACHECKGOTO(cudaMallocHost(&st->host_send, send_total), res, fail);
  if (recv_total) XPOSE_CUDACHECKGOTO(cudaMallocHost(&st->host_recv, recv_total), res, fail);
  XPOSE_CHECKGOTO(xpose_exchange_mpi_create_named(setup, "mpi", &st->inner), res, fail);
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

static int staged_available(xpose_backend *backend, MPI_Comm comm, char *why, size_t why_size) {
  (void)comm, (void)why, (void)why_size;
  return backend->ops->device_memory; /* stages device buffers; nothing to explain otherwise */
}

const xpose_exchange_engine xpose_exchange_staged = {
    .kind = XPOSE_EXCHANGE_STAGED,
    .name = "staged",
    .available = staged_available,
    .create = staged_create,
};
