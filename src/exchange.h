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

typedef struct {
  /* Begins moving send -> recv as described by the engine's layout. */
  xpose_status (*start)(xpose_exchange *exchange, const void *send, void *recv);
  /* Returns when every byte has arrived and every send buffer may be reused. */
  xpose_status (*wait)(xpose_exchange *exchange);
  void (*destroy)(xpose_exchange *exchange);
} xpose_exchange_ops;

struct xpose_exchange {
  const xpose_exchange_ops *ops;
  const char *name;
  void *state;
};

/* comm and layout must outlive the engine; max_message_bytes in [1, INT_MAX].
 * The buffers may be device memory only when MPI is CUDA-aware (`name`
 * then says so). */
xpose_status xpose_exchange_mpi_create(MPI_Comm comm, const xpose_exchange_layout *layout,
                                       size_t max_message_bytes, const char *name,
                                       xpose_exchange **exchange);

#ifdef XPOSE_HAVE_CUDA
struct xpose_backend;
/* Copies through pinned host buffers around the MPI engine, on the
 * backend's stream. */
xpose_status xpose_exchange_staged_create(MPI_Comm comm, const xpose_exchange_layout *layout,
                                          size_t max_message_bytes, struct xpose_backend *backend,
                                          xpose_exchange **exchange);
/* Non-zero when this MPI accepts device pointers (compile and run time). */
int xpose_mpi_is_cuda_aware(void);
#endif
#ifdef XPOSE_HAVE_NCCL
/* Grouped ncclSend/ncclRecv on the backend's stream; collective (bootstraps
 * an NCCL communicator over comm). */
xpose_status xpose_exchange_nccl_create(MPI_Comm comm, const xpose_exchange_layout *layout,
                                        struct xpose_backend *backend, xpose_exchange **exchange);
#endif

#endif
