/* Exchange engines move every rank's blocks to every other rank.  Each
 * engine is an entry of the registry in select.c, in the order `auto`
 * prefers them (those that need CUDA in cuda/exchange/):
 *   nccl.c    grouped ncclSend/ncclRecv on device buffers it registers
 *             with NCCL (NCCL loaded at run time)
 *   mpi.c     MPI point-to-point on host buffers, or on device buffers where
 *             MPI is CUDA-aware
 *   staged.c  device -> pinned host -> MPI -> pinned host -> device
 *   p2p.c     no exchange within a node: the transpose kernel writes every
 *             block straight into its owner's output (CUDA IPC); blocks for
 *             other nodes go through the best of the others */
#ifndef XPOSE_EXCHANGE_H
#define XPOSE_EXCHANGE_H

#include "backend/backend.h"
#include "xpose.h"

/* Per peer rank: bytes sent to / received from it and their offsets in the
 * send / receive buffers.  64-bit throughout; engines split large messages. */
typedef struct {
  int nranks;
  int64_t *send_bytes, *send_offsets;
  int64_t *recv_bytes, *recv_offsets;
} xpose_exchange_layout;

/* Exchanges in flight at once (chunk k travels while k - 1 completes). */
enum { XPOSE_EXCHANGE_SLOTS = 2 };

typedef struct xpose_exchange xpose_exchange;

typedef struct {
  /* Begins moving send -> recv as `layout` describes (one chunk, or all of
   * them), in `slot`.  The layout must stay valid until the slot's wait. */
  xpose_status (*start)(xpose_exchange *exchange, int slot, const xpose_exchange_layout *layout,
                        const void *send, void *recv);
  /* Stream-ordered engines: queues the completion on the COMM lane.
   * Others: returns when every byte of the slot's exchange has arrived (or
   * has been queued on the COMM lane, for the staged engine). */
  xpose_status (*wait)(xpose_exchange *exchange, int slot);
  void (*destroy)(xpose_exchange *exchange);
  /* Engines that write peers' outputs: where the output slab of rank `peer`,
   * one that direct_peers marked, is mapped in this process (this rank's own for
   * itself; NULL for an empty slab).  start and wait then move the blocks
   * of the other ranks, in one slot. */
  void *(*peer_output)(xpose_exchange *exchange, int peer);
  /* Optional: the send and receive buffers, where the engine moves data
   * faster from memory of its own (NCCL: registered memory, which it sends
   * and receives without copies through its own buffers); without them the
   * backend's.  release frees what alloc gave, before destroy. */
  xpose_status (*alloc)(xpose_exchange *exchange, size_t bytes, void **ptr);
  void (*release)(xpose_exchange *exchange, void *ptr);
} xpose_exchange_ops;

struct xpose_exchange {
  const xpose_exchange_ops *ops;
  const char *name;   /* what xpose_plan_exchange_name reports */
  int stream_ordered; /* starts on the COMM lane rather than on the host */
  void *state;
};

/* Memory for an engine's send and receive buffers: its own where it has
 * some (ops->alloc), else the backend's; `exchange` may be NULL (none). */
static inline xpose_status xpose_exchange_alloc(xpose_exchange *exchange, xpose_backend *backend,
                                                size_t bytes, void **ptr) {
  if (exchange && exchange->ops->alloc) return exchange->ops->alloc(exchange, bytes, ptr);
  return backend->ops->alloc(backend, bytes, ptr);
}

static inline void xpose_exchange_release(xpose_exchange *exchange, xpose_backend *backend,
                                          void *ptr) {
  if (exchange && exchange->ops->release)
    exchange->ops->release(exchange, ptr);
  else
    backend->ops->release(backend, ptr);
}

/* What an engine is created for.  Every layout it will be started with
 * (the chunks' and `whole`) fits within `whole`, peer by peer. */
typedef struct {
  MPI_Comm comm; /* the plan's; outlives the engine */
  xpose_backend *backend;
  const xpose_exchange_layout *whole; /* all chunks at once */
  size_t max_message_bytes;           /* in [1, INT_MAX] */
  void *output;                       /* the plan-owned output slab, if any */
} xpose_exchange_setup;

typedef struct {
  xpose_exchange_kind kind;
  const char *name;
  /* Writes blocks into the peers' outputs (peer_output): needs plan-owned
   * outputs.  Collective: marks in direct[q] (nranks entries) the ranks
   * whose outputs this rank will write, itself included; the symmetric
   * relation the layout leaves out of the exchange. */
  int writes_peer_outputs;
  xpose_status (*direct_peers)(MPI_Comm comm, unsigned char *direct);
  /* Collective over comm: whether this rank can run the engine with this
   * backend.  If it could apply but cannot run (a library missing), a reason
   * in why; an engine for other buffers declines without one.  select.c asks
   * every engine, in registry order, on every rank. */
  int (*available)(xpose_backend *backend, MPI_Comm comm, char *why, size_t why_size);
  /* Collective where the engine needs it (NCCL bootstraps a communicator). */
  xpose_status (*create)(const xpose_exchange_setup *setup, xpose_exchange **exchange);
} xpose_exchange_engine;

/* Collective.  The engine every rank will use: `wanted`, or for
 * XPOSE_EXCHANGE_AUTO the first in the registry that every rank can run
 * (engines that write peers' outputs only for plans that own theirs, and
 * not when auto_avoids_peer_writes gives a reason, the same on every rank).
 * XPOSE_ERROR_UNSUPPORTED, on every rank, when there is none. */
xpose_status xpose_exchange_choose(MPI_Comm comm, xpose_backend *backend,
                                   xpose_exchange_kind wanted, int own_output,
                                   const char *auto_avoids_peer_writes,
                                   const xpose_exchange_engine **engine);

extern const xpose_exchange_engine xpose_exchange_mpi;
#ifdef XPOSE_HAVE_CUDA
extern const xpose_exchange_engine xpose_exchange_staged;
extern const xpose_exchange_engine xpose_exchange_p2p;
#endif
#ifdef XPOSE_HAVE_NCCL
extern const xpose_exchange_engine xpose_exchange_nccl;
#endif

/* The MPI engine on buffers its caller chooses (staged.c: pinned host
 * buffers whatever the backend), named `name`. */
xpose_status xpose_exchange_mpi_create_named(const xpose_exchange_setup *setup, const char *name,
                                             xpose_exchange **exchange);

#endif
