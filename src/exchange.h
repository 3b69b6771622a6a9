/* An exchange engine moves every rank's blocks to every other rank: MPI
 * point-to-point here; NCCL, CUDA-aware MPI and host staging come with the
 * CUDA backend behind the same interface. */
#ifndef XPOSE_EXCHANGE_H
#define XPOSE_EXCHANGE_H

#include "xpose.h"

/* Per peer rank: bytes sent to / received from it and their offsets in the
 * send / receive buffers.  64-bit throughout; engines split large messages. */
typedef struct {
  int nranks;
  int64_t *send_bytes, *send_offsets;
  int64_t *recv_bytes, *recv_offsets;
} xpose_exchange_layout;

typedef struct xpose_exchange xpose_exchange;

/* Exchanges in flight at once (chunk k travels while k - 1 completes). */
enum { XPOSE_EXCHANGE_SLOTS = 2 };

typedef struct {
  /* Begins moving send -> recv as `layout` describes (one chunk), in `slot`.
   * The layout must stay valid until the slot's wait. */
  xpose_status (*start)(xpose_exchange *exchange, int slot, const xpose_exchange_layout *layout,
                        const void *send, void *recv);
  /* Stream-ordered engines: queues the completion on the COMM lane.
   * Others: returns when every byte of the slot's exchange has arrived (or
   * has been queued on the COMM lane, for the staged engine). */
  xpose_status (*wait)(xpose_exchange *exchange, int slot);
  void (*destroy)(xpose_exchange *exchange);
} xpose_exchange_ops;

struct xpose_exchange {
  const xpose_exchange_ops *ops;
  const char *name;
  int stream_ordered; /* starts on the COMM lane rather than on the host */
  void *state;
};

/* comm must outlive the engine.  It will be started with `whole` (all
 * chunks at once) or one of layouts[0..nlayouts); max_message_bytes in
 * [1, INT_MAX].  The buffers may be device memory only when MPI is
 * CUDA-aware (`name` then says so). */
xpose_status xpose_exchange_mpi_create(MPI_Comm comm, const xpose_exchange_layout *whole,
                                       const xpose_exchange_layout *layouts, int nlayouts,
                                       size_t max_message_bytes, const char *name,
                                       xpose_exchange **exchange);

#ifdef XPOSE_HAVE_CUDA
struct xpose_backend;
/* Copies through pinned host buffers around the MPI engine, on the
 * backend's COMM lane.  `whole` is the layout of all chunks together. */
xpose_status xpose_exchange_staged_create(MPI_Comm comm, const xpose_exchange_layout *whole,
                                          const xpose_exchange_layout *layouts, int nlayouts,
                                          size_t max_message_bytes, struct xpose_backend *backend,
                                          xpose_exchange **exchange);
/* Non-zero when this MPI accepts device pointers (compile and run time). */
int xpose_mpi_is_cuda_aware(void);
#endif
#ifdef XPOSE_HAVE_NCCL
/* Grouped ncclSend/ncclRecv on the backend's COMM lane; collective
 * (bootstraps an NCCL communicator over comm). */
xpose_status xpose_exchange_nccl_create(MPI_Comm comm, int nranks, struct xpose_backend *backend,
                                        xpose_exchange **exchange);
#endif

#endif
