/* Transpose on the wire: no exchange within a node.  Every rank's output
 * slab is allocated by its plan and mapped into the processes of the other
 * ranks on its node once, at plan creation, through CUDA IPC; execution
 * (execute.c) then runs each rank's transpose kernel with each block's
 * destination in its owner's output, so the blocks cross NVLink (or PCIe)
 * once, straight from the input to their place.  Nothing is packed, sent or
 * placed.
 *
 * Blocks for ranks on other nodes go into a send buffer in the same kernel
 * and through an inner engine (the first of the others that every rank can
 * run: NCCL, MPI, staged), which this engine's start and wait drive.
 *
 * Nodes are MPI's shared-memory split, which XPOSE_PRETEND_NODES=N cuts
 * into N pretend nodes each (by node rank), so that multi-node plans can be
 * tested on one machine.  Within a node every pair of distinct GPUs needs
 * peer access; ranks sharing a GPU map each other's memory as well.
 *
 * Opening the handles fails on every rank together; XPOSE_FAULT_P2P_OPEN=R
 * (tests) corrupts the handles that rank R receives, so that its opening
 * fails for real. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "exchange/exchange.h"

enum { BUS_ID_BYTES = 32 };

typedef struct {
  int nranks, rank;
  void **outputs;         /* per rank, mapped here; [rank] is this rank's own */
  int *opened;            /* outputs[q] came from cudaIpcOpenMemHandle */
  xpose_exchange *inner;  /* for ranks on other nodes; NULL on one node */
  xpose_backend *backend;
} p2p_state;

typedef struct {
  cudaIpcMemHandle_t handle;
  int rank, has_output, ok;
} output_record;

/* The engine's name with the inner engine's; a string that outlives plans,
 * like every engine's name. */
static const char *name_with(const xpose_exchange *inner) {
  static const char *const names[][2] = {{"nccl", "p2p+nccl"},
                                         {"mpi", "p2p+mpi"},
                                         {"cuda-aware-mpi", "p2p+cuda-aware-mpi"},
                                         {"staged", "p2p+staged"}};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(inner->name, names[i][0]) == 0) return names[i][1];
  return "p2p+another";
}

/* The ranks of comm on this rank's node, real or pretend. */
static int node_comm(MPI_Comm comm, MPI_Comm *node) {
  MPI_Comm shared = MPI_COMM_NULL;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared) != MPI_SUCCESS)
    return 0;
  const char *text = getenv("XPOSE_PRETEND_NODES");
  const int pretend = text ? atoi(text) : 1;
  if (pretend <= 1) {
    *node = shared;
    return 1;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(shared, &rank);
  MPI_Comm_size(shared, &size);
  const int ok = MPI_Comm_split(shared, (int)((int64_t)rank * pretend / size), rank, node) ==
                 MPI_SUCCESS;
  MPI_Comm_free(&shared);
  return ok;
}

static int p2p_available(xpose_backend *backend, MPI_Comm comm, char *why, size_t why_size) {
  if (!backend->ops->device_memory) return 0; /* host buffers: not for this engine */
  int node_ranks = 0, device = -1, ok = 1;
  MPI_Comm node = MPI_COMM_NULL;
  char(*bus_ids)[BUS_ID_BYTES] = NULL;
  if (!node_comm(comm, &node)) {
    snprintf(why, why_size, "cannot find the ranks of this node");
    return 0;
  }
  MPI_Comm_size(node, &node_ranks);
  /* The GPU of every rank on the node by PCI bus ID, which names it
   * whatever CUDA_VISIBLE_DEVICES each process was given. */
  char mine[BUS_ID_BYTES] = {0};
  bus_ids = calloc((size_t)node_ranks, sizeof *bus_ids);
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetPCIBusId(mine, BUS_ID_BYTES, device) != cudaSuccess) {
    (void)cudaGetLastError();
    ok = 0;
  }
  /* Every rank goes through the same collectives, whatever happened above. */
  int all_ok = 0, have_table = bus_ids != NULL;
  if (MPI_Allreduce(&have_table, &all_ok, 1, MPI_INT, MPI_LAND, node) != MPI_SUCCESS || !all_ok ||
      MPI_Allgather(mine, BUS_ID_BYTES, MPI_CHAR, bus_ids, BUS_ID_BYTES, MPI_CHAR, node) !=
          MPI_SUCCESS ||
      !ok) {
    snprintf(why, why_size, "cannot identify the GPUs");
    free(bus_ids);
    MPI_Comm_free(&node);
    return 0;
  }
  for (int q = 0; q < node_ranks && ok; q++) {
    if (strncmp(bus_ids[q], mine, BUS_ID_BYTES) == 0) continue; /* the same GPU */
    int peer_device = -1, can = 0;
    if (cudaDeviceGetByPCIBusId(&peer_device, bus_ids[q]) != cudaSuccess) {
      (void)cudaGetLastError();
      snprintf(why, why_size, "the GPU of a rank on this node (%.*s) is not visible to this process",
               BUS_ID_BYTES, bus_ids[q]);
      ok = 0;
    } else if (cudaDeviceCanAccessPeer(&can, device, peer_device) != cudaSuccess || !can) {
      (void)cudaGetLastError();
      snprintf(why, why_size, "no peer access from GPU %.*s to GPU %.*s on this node", BUS_ID_BYTES,
               mine, BUS_ID_BYTES, bus_ids[q]);
      ok = 0;
    }
  }
  free(bus_ids);
  MPI_Comm_free(&node);
  return ok;
}

/* Collective over the node: whether every rank of it has its tables, so
 * that all go on to the node's gathers or none does. */
static xpose_status all_of_node(MPI_Comm node, int allocated) {
  xpose_status res = XPOSE_SUCCESS;
  int all = 0;
  XPOSE_MPICHECKGOTO(MPI_Allreduce(&allocated, &all, 1, MPI_INT, MPI_LAND, node), res, fail);
  XPOSE_REQUIREGOTO(all, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "a rank of this node cannot allocate the p2p engine's tables");
fail:
  return res;
}

static xpose_status p2p_direct_peers(MPI_Comm comm, unsigned char *direct) {
  xpose_status res = XPOSE_SUCCESS;
  MPI_Comm node = MPI_COMM_NULL;
  int nranks = 0, rank = 0, node_ranks = 0, *ranks = NULL;
  XPOSE_REQUIREGOTO(node_comm(comm, &node), XPOSE_ERROR_MPI, res, fail,
                    "cannot find the ranks of this node");
  XPOSE_MPICHECKGOTO(MPI_Comm_size(comm, &nranks), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_rank(comm, &rank), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_size(node, &node_ranks), res, fail);
  ranks = calloc((size_t)node_ranks, sizeof *ranks);
  XPOSE_CHECKGOTO(all_of_node(node, ranks != NULL), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Allgather(&rank, 1, MPI_INT, ranks, 1, MPI_INT, node), res, fail);
  XPOSE_REQUIREGOTO(direct, XPOSE_ERROR_OUT_OF_MEMORY, res, fail, "no table of direct peers");
  memset(direct, 0, (size_t)nranks);
  for (int i = 0; i < node_ranks; i++) direct[ranks[i]] = 1;
fail:
  free(ranks);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  return res;
}

/* Blocks for other nodes: the inner engine's, in its slot. */
static xpose_status p2p_start(xpose_exchange *exchange, int slot,
                              const xpose_exchange_layout *layout, const void *send, void *recv) {
  xpose_exchange *inner = ((p2p_state *)exchange->state)->inner;
  return inner ? inner->ops->start(inner, slot, layout, send, recv) : XPOSE_SUCCESS;
}

static xpose_status p2p_wait(xpose_exchange *exchange, int slot) {
  xpose_exchange *inner = ((p2p_state *)exchange->state)->inner;
  return inner ? inner->ops->wait(inner, slot) : XPOSE_SUCCESS;
}

static void *p2p_peer_output(xpose_exchange *exchange, int peer) {
  const p2p_state *st = exchange->state;
  return st->outputs[peer];
}

/* The buffers for other nodes: the inner engine's memory where it has its
 * own. */
static xpose_status p2p_alloc(xpose_exchange *exchange, size_t bytes, void **ptr) {
  p2p_state *st = exchange->state;
  return xpose_exchange_alloc(st->inner, st->backend, bytes, ptr);
}

static void p2p_release(xpose_exchange *exchange, void *ptr) {
  p2p_state *st = exchange->state;
  xpose_exchange_release(st->inner, st->backend, ptr);
}

static void p2p_destroy(xpose_exchange *exchange) {
  if (!exchange) return;
  p2p_state *st = exchange->state;
  if (st) {
    if (st->inner) st->inner->ops->destroy(st->inner);
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
    .alloc = p2p_alloc,
    .release = p2p_release,
};

/* Maps the outputs of the other ranks on the node.  Every rank goes through
 * the node's gather whatever failed before it. */
static xpose_status map_node_outputs(const xpose_exchange_setup *setup, p2p_state *st,
                                     MPI_Comm node) {
  xpose_status res = XPOSE_SUCCESS;
  int node_ranks = 0;
  output_record mine, *all = NULL;
  memset(&mine, 0, sizeof mine);
  XPOSE_MPICHECKGOTO(MPI_Comm_size(node, &node_ranks), res, fail);
  all = calloc((size_t)node_ranks, sizeof *all);
  XPOSE_CHECKGOTO(all_of_node(node, all != NULL), res, fail);
  mine.rank = st->rank;
  mine.has_output = setup->output != NULL;
  mine.ok = 1;
  if (mine.has_output && cudaIpcGetMemHandle(&mine.handle, setup->output) != cudaSuccess) {
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "cudaIpcGetMemHandle: %s",
               cudaGetErrorString(cudaGetLastError()));
    mine.ok = 0;
  }
  XPOSE_MPICHECKGOTO(MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine,
                                   MPI_BYTE, node),
                     res, fail);
  for (int i = 0; i < node_ranks; i++)
    XPOSE_REQUIREGOTO(all[i].ok, XPOSE_ERROR_CUDA, res, fail,
                      "rank %d cannot share its output with its node", all[i].rank);
  const char *fault = getenv("XPOSE_FAULT_P2P_OPEN");
  const int corrupt = fault && atoi(fault) == st->rank;
  st->outputs[st->rank] = setup->output;
  for (int i = 0; i < node_ranks; i++) {
    const int q = all[i].rank;
    if (q == st->rank || !all[i].has_output) continue;
    if (corrupt) memset(&all[i].handle, 0x5a, sizeof all[i].handle);
    XPOSE_CUDACHECKGOTO(cudaIpcOpenMemHandle(&st->outputs[q], all[i].handle,
                                             cudaIpcMemLazyEnablePeerAccess),
                        res, fail);
    st->opened[q] = 1;
  }
fail:
  free(all);
  return res;
}

static xpose_status p2p_create(const xpose_exchange_setup *setup, xpose_exchange **exchange_out) {
  xpose_status res = XPOSE_SUCCESS;
  MPI_Comm node = MPI_COMM_NULL;
  p2p_state *st = calloc(1, sizeof *st);
  xpose_exchange *exchange = calloc(1, sizeof *exchange);
  int nranks = 0, rank = 0;
  *exchange_out = NULL;
  XPOSE_MPICHECKGOTO(MPI_Comm_size(setup->comm, &nranks), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_rank(setup->comm, &rank), res, fail);
  if (st) {
    st->outputs = calloc((size_t)nranks, sizeof *st->outputs);
    st->opened = calloc((size_t)nranks, sizeof *st->opened);
  }
  /* Every rank learns whether all have their tables before the first
   * collective that not every rank would otherwise reach (node_comm). */
  const int allocated = st && exchange && st->outputs && st->opened;
  int all_allocated = 0;
  XPOSE_MPICHECKGOTO(MPI_Allreduce(&allocated, &all_allocated, 1, MPI_INT, MPI_LAND, setup->comm),
                     res, fail);
  XPOSE_REQUIREGOTO(all_allocated, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "a rank cannot allocate the p2p engine");
  exchange->ops = &p2p_ops;
  exchange->state = st;
  st->backend = setup->backend;
  st->nranks = nranks;
  st->rank = rank;
  XPOSE_REQUIREGOTO(node_comm(setup->comm, &node), XPOSE_ERROR_MPI, res, fail,
                    "cannot find the ranks of this node");
  /* Every rank learns whether all mapped their node's outputs, and whether
   * any node is not the whole job, before the collectives that follow. */
  int node_ranks = 0;
  XPOSE_MPICHECKGOTO(MPI_Comm_size(node, &node_ranks), res, fail);
  const xpose_status mapped = map_node_outputs(setup, st, node);
  int mine[2] = {mapped != XPOSE_SUCCESS, node_ranks < st->nranks}, any[2] = {0, 0};
  XPOSE_MPICHECKGOTO(MPI_Allreduce(mine, any, 2, MPI_INT, MPI_MAX, setup->comm), res, fail);
  XPOSE_REQUIREGOTO(!any[0], mapped != XPOSE_SUCCESS ? mapped : XPOSE_ERROR_CUDA, res, fail,
                    "the p2p engine cannot map the outputs of every node's ranks");
  exchange->name = "p2p";
  exchange->stream_ordered = 1;
  if (any[1]) {
    const xpose_exchange_engine *engine = NULL;
    xpose_exchange_setup across = *setup;
    across.output = NULL;
    XPOSE_CHECKGOTO(xpose_exchange_choose(setup->comm, setup->backend, XPOSE_EXCHANGE_AUTO, 0,
                                          NULL, &engine),
                    res, fail);
    XPOSE_CHECKGOTO(engine->create(&across, &st->inner), res, fail);
    exchange->name = name_with(st->inner);
    exchange->stream_ordered = st->inner->stream_ordered;
  }
  MPI_Comm_free(&node);
  *exchange_out = exchange;
  return XPOSE_SUCCESS;
fail:
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  if (exchange && exchange->state) {
    p2p_destroy(exchange);
  } else { /* before the state was the engine's */
    if (st) {
      free(st->outputs);
      free(st->opened);
    }
    free(st);
    free(exchange);
  }
  return res;
}

const xpose_exchange_engine xpose_exchange_p2p = {
    .kind = XPOSE_EXCHANGE_P2P,
    .name = "p2p",
    .writes_peer_outputs = 1,
    .direct_peers = p2p_direct_peers,
    .available = p2p_available,
    .create = p2p_create,
};
