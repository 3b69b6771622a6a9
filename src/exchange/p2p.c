/* Transpose on the wire: no exchange at all.  Every rank's output slab is
 * allocated by its plan and mapped into every other rank's process once,
 * at plan creation, through CUDA IPC; execution (execute.c) then runs each
 * rank's transpose kernel with the destination in the owner's output, so
 * the blocks cross NVLink (or PCIe) once, straight from the input to their
 * place.  Nothing is packed, sent or placed.
 *
 * It runs where every rank is on one node and every pair of distinct GPUs
 * has peer access; ranks sharing a GPU map each other's memory as well.
 * Opening a handle is collective in effect: one rank's failure fails the
 * plan on every rank (plan.c agrees on the status). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "exchange/exchange.h"

enum { BUS_ID_BYTES = 32 };

typedef struct {
  int nranks, rank;
  void **outputs; /* per rank, mapped here; [rank] is this rank's own */
  int *opened;    /* outputs[q] came from cudaIpcOpenMemHandle */
} p2p_state;

typedef struct {
  cudaIpcMemHandle_t handle;
  int has_output;
} output_record;

static int p2p_available(xpose_backend *backend, MPI_Comm comm, char *why, size_t why_size) {
  if (!backend->ops->device_memory) return 0; /* host buffers: not for this engine */
  int nranks = 0, node_ranks = 0, device = -1, ok = 1;
  MPI_Comm node = MPI_COMM_NULL;
  char(*bus_ids)[BUS_ID_BYTES] = NULL;
  if (MPI_Comm_size(comm, &nranks) != MPI_SUCCESS ||
      MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
    snprintf(why, why_size, "cannot find the ranks of this node");
    return 0;
  }
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  if (node_ranks != nranks) {
    snprintf(why, why_size, "the ranks are on more than one node");
    return 0;
  }
  /* Every rank's GPU by PCI bus ID, which names it whatever
   * CUDA_VISIBLE_DEVICES each process was given. */
  char mine[BUS_ID_BYTES] = {0};
  bus_ids = calloc((size_t)nranks, sizeof *bus_ids);
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetPCIBusId(mine, BUS_ID_BYTES, device) != cudaSuccess) {
    (void)cudaGetLastError();
    ok = 0;
  }
  /* Every rank goes through the same collectives, whatever happened above. */
  int all_ok = 0, have_table = bus_ids != NULL;
  if (MPI_Allreduce(&have_table, &all_ok, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS || !all_ok ||
      MPI_Allgather(mine, BUS_ID_BYTES, MPI_CHAR, bus_ids, BUS_ID_BYTES, MPI_CHAR, comm) !=
          MPI_SUCCESS ||
      !ok) {
    snprintf(why, why_size, "cannot identify the GPUs");
    free(bus_ids);
    return 0;
  }
  for (int q = 0; q < nranks && ok; q++) {
    if (strncmp(bus_ids[q], mine, BUS_ID_BYTES) == 0) continue; /* the same GPU */
    int peer_device = -1, can = 0;
    if (cudaDeviceGetByPCIBusId(&peer_device, bus_ids[q]) != cudaSuccess) {
      (void)cudaGetLastError();
      snprintf(why, why_size, "rank %d's GPU (%.*s) is not visible to this process", q,
               BUS_ID_BYTES, bus_ids[q]);
      ok = 0;
    } else if (cudaDeviceCanAccessPeer(&can, device, peer_device) != cudaSuccess || !can) {
      (void)cudaGetLastError();
      snprintf(why, why_size, "no peer access from GPU %.*s to rank %d's GPU %.*s", BUS_ID_BYTES,
               mine, q, BUS_ID_BYTES, bus_ids[q]);
      ok = 0;
    }
  }
  free(bus_ids);
  return ok;
}

static xpose_status p2p_start(xpose_exchange *exchange, int slot,
                              const xpose_exchange_layout *layout, const void *send, void *recv) {
  (void)exchange, (void)slot, (void)layout, (void)send, (void)recv;
  return XPOSE_ERROR_INTERNAL; /* execute.c never starts this engine */
}

static xpose_status p2p_wait(xpose_exchange *exchange, int slot) {
  (void)exchange, (void)slot;
  return XPOSE_ERROR_INTERNAL;
}

static void *p2p_peer_output(xpose_exchange *exchange, int peer) {
  const p2p_state *st = exchange->state;
  return st->outputs[peer];
}

static void p2p_destroy(xpose_exchange *exchange) {
  if (!exchange) return;
  p2p_state *st = exchange->state;
  if (st) {
    for (int q = 0; q < st->nranks; q++)
      if (st->opened && st->opened[q]) (void)cudaIpcCloseMemHandle(st->outputs[q]);
    free(st->outputs);
    free(st->opened);
    free(st);
  }
  free(exchange);
}

static const xpose_exchange_ops p2p_ops = {
    .start = p2p_start,
    .wait = p2p_wait,
    .destroy = p2p_destroy,
    .peer_output = p2p_peer_output,
};

static xpose_status p2p_create(const xpose_exchange_setup *setup, xpose_exchange **exchange_out) {
  xpose_status res = XPOSE_SUCCESS;
  output_record mine, *all = NULL;
  p2p_state *st = calloc(1, sizeof *st);
  xpose_exchange *exchange = calloc(1, sizeof *exchange);
  memset(&mine, 0, sizeof mine);
  *exchange_out = NULL;
  XPOSE_REQUIREGOTO(st && exchange, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the p2p engine");
  exchange->ops = &p2p_ops;
  exchange->name = "p2p";
  exchange->stream_ordered = 1;
  exchange->state = st;
  XPOSE_MPICHECKGOTO(MPI_Comm_size(setup->comm, &st->nranks), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_rank(setup->comm, &st->rank), res, fail);
  st->outputs = calloc((size_t)st->nranks, sizeof *st->outputs);
  st->opened = calloc((size_t)st->nranks, sizeof *st->opened);
  all = calloc((size_t)st->nranks, sizeof *all);
  XPOSE_REQUIREGOTO(st->outputs && st->opened && all, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the p2p engine's tables");
  mine.has_output = setup->output != NULL;
  if (mine.has_output)
    XPOSE_CUDACHECKGOTO(cudaIpcGetMemHandle(&mine.handle, setup->output), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine,
                                   MPI_BYTE, setup->comm),
                     res, fail);
  st->outputs[st->rank] = setup->output;
  for (int q = 0; q < st->nranks; q++) {
    if (q == st->rank || !all[q].has_output) continue;
    XPOSE_CUDACHECKGOTO(cudaIpcOpenMemHandle(&st->outputs[q], all[q].handle,
                                             cudaIpcMemLazyEnablePeerAccess),
                        res, fail);
    st->opened[q] = 1;
  }
  free(all);
  *exchange_out = exchange;
  return XPOSE_SUCCESS;
fail:
  free(all);
  p2p_destroy(exchange);
  if (!exchange) free(st);
  return res;
}

const xpose_exchange_engine xpose_exchange_p2p = {
    .kind = XPOSE_EXCHANGE_P2P,
    .name = "p2p",
    .writes_peer_outputs = 1,
    .available = p2p_available,
    .create = p2p_create,
};
