/* MPI point-to-point exchange engine.
 *
 * Every non-empty block travels as one or more messages of at most
 * max_message_bytes, so no MPI count exceeds INT_MAX however large a rank's
 * share is.  Pieces of one block share a tag: MPI's non-overtaking rule
 * matches them in order.  Peers are visited in a ring (rank + k, rank - k)
 * so that no rank is everybody's first destination.  Two slots let one
 * chunk travel while the previous one completes.
 *
 * With the CUDA backend the buffers are device memory, which only a
 * CUDA-aware MPI accepts: the engine is then available only where MPI says
 * it is, at compile time and at run time. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif
#endif

#include "check.h"
#include "exchange/exchange.h"

enum { EXCHANGE_TAG = 0x7870 };

typedef struct {
  MPI_Request *requests;
  int64_t active;
} request_slot;

typedef struct {
  MPI_Comm comm;
  int rank;
  int64_t max_bytes;
  request_slot slots[XPOSE_EXCHANGE_SLOTS];
} mpi_exchange_state;

static int64_t pieces_of(int64_t bytes, int64_t max_bytes) {
  return bytes / max_bytes + (bytes % max_bytes != 0);
}

static int64_t pieces_in(const xpose_exchange_layout *l, int64_t max_bytes) {
  int64_t n = 0;
  for (int peer = 0; peer < l->nranks; peer++)
    n += pieces_of(l->send_bytes[peer], max_bytes) + pieces_of(l->recv_bytes[peer], max_bytes);
  return n;
}

/* Posts the pieces of `bytes` at buf to or from `peer`. */
static xpose_status post(mpi_exchange_state *st, request_slot *slot, int sending, char *buf,
                         int64_t bytes, int peer) {
  xpose_status res = XPOSE_SUCCESS;
  for (int64_t done = 0; done < bytes; done += st->max_bytes) {
    const int count = (int)(bytes - done < st->max_bytes ? bytes - done : st->max_bytes);
    MPI_Request *request = &slot->requests[slot->active++];
    if (sending)
      XPOSE_MPICHECKGOTO(
          MPI_Isend(buf + done, count, MPI_BYTE, peer, EXCHANGE_TAG, st->comm, request), res, fail);
    else
      XPOSE_MPICHECKGOTO(
          MPI_Irecv(buf + done, count, MPI_BYTE, peer, EXCHANGE_TAG, st->comm, request), res, fail);
  }
fail:
  return res;
}

static xpose_status mpi_start(xpose_exchange *exchange, int slot_index,
                              const xpose_exchange_layout *l, const void *send, void *recv) {
  mpi_exchange_state *st = exchange->state;
  request_slot *slot = &st->slots[slot_index];
  xpose_status res = XPOSE_SUCCESS;
  slot->active = 0;
  for (int k = 1; k < l->nranks; k++) { /* receives first */
    const int from = (st->rank - k + l->nranks) % l->nranks;
    XPOSE_CHECKGOTO(
        post(st, slot, 0, (char *)recv + l->recv_offsets[from], l->recv_bytes[from], from), res,
        fail);
  }
  for (int k = 1; k < l->nranks; k++) {
    const int to = (st->rank + k) % l->nranks;
    XPOSE_CHECKGOTO(post(st, slot, 1, (char *)send + l->send_offsets[to], l->send_bytes[to], to),
                    res, fail);
  }
fail:
  return res;
}

static xpose_status mpi_wait(xpose_exchange *exchange, int slot_index) {
  mpi_exchange_state *st = exchange->state;
  request_slot *slot = &st->slots[slot_index];
  xpose_status res = XPOSE_SUCCESS;
  /* Waitall takes an int count: wait in slices for huge piece counts. */
  for (int64_t done = 0; done < slot->active; done += INT_MAX) {
    const int64_t left = slot->active - done;
    XPOSE_MPICHECKGOTO(MPI_Waitall((int)(left < INT_MAX ? left : INT_MAX), slot->requests + done,
                                   MPI_STATUSES_IGNORE),
                       res, fail);
  }
fail:
  slot->active = 0;
  return res;
}

static void free_state(mpi_exchange_state *st) {
  if (!st) return;
  for (int s = 0; s < XPOSE_EXCHANGE_SLOTS; s++) free(st->slots[s].requests);
  free(st);
}

static void mpi_destroy(xpose_exchange *exchange) {
  free_state(exchange->state);
  free(exchange);
}

static const xpose_exchange_ops mpi_ops = {
    .start = mpi_start, .wait = mpi_wait, .destroy = mpi_destroy};

xpose_status xpose_exchange_mpi_create_named(const xpose_exchange_setup *setup, const char *name,
                                             xpose_exchange **exchange) {
  xpose_status res = XPOSE_SUCCESS;
  mpi_exchange_state *st = calloc(1, sizeof *st);
  *exchange = calloc(1, sizeof **exchange);
  XPOSE_REQUIREGOTO(st && *exchange, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the MPI exchange engine");
  XPOSE_REQUIREGOTO(setup->max_message_bytes >= 1 && setup->max_message_bytes <= INT_MAX,
                    XPOSE_ERROR_INVALID_ARGUMENT, res, fail,
                    "max_message_bytes %zu is outside [1, INT_MAX]", setup->max_message_bytes);
  st->comm = setup->comm;
  st->max_bytes = (int64_t)setup->max_message_bytes;
  XPOSE_MPICHECKGOTO(MPI_Comm_rank(setup->comm, &st->rank), res, fail);
  /* No chunk carries more to a peer than the whole does, so needs no more pieces. */
  const int64_t capacity = pieces_in(setup->whole, st->max_bytes);
  for (int s = 0; s < XPOSE_EXCHANGE_SLOTS; s++) {
    st->slots[s].requests = malloc(sizeof(MPI_Request) * (size_t)(capacity + 1));
    XPOSE_REQUIREGOTO(st->slots[s].requests, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                      "cannot allocate %lld MPI requests", (long long)capacity);
  }
  (*exchange)->ops = &mpi_ops;
  (*exchange)->name = name;
  (*exchange)->state = st;
  return XPOSE_SUCCESS;
fail:
  free_state(st);
  free(*exchange);
  *exchange = NULL;
  return res;
}

/* Non-zero when this MPI accepts device pointers (compile and run time). */
static int mpi_is_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1; /* built with CUDA and enabled at run time */
#else
  return 0;
#endif
}

static int mpi_available(xpose_backend *backend, MPI_Comm comm, char *why, size_t why_size) {
  (void)comm;
  if (!backend->ops->device_memory || mpi_is_cuda_aware()) return 1;
  snprintf(why, why_size,
           "MPI is not CUDA-aware: device buffers cannot go to MPI (use the nccl or staged "
           "exchange)");
  return 0;
}

static xpose_status mpi_create(const xpose_exchange_setup *setup, xpose_exchange **exchange) {
  return xpose_exchange_mpi_create_named(
      setup, setup->backend->ops->device_memory ? "cuda-aware-mpi" : "mpi", exchange);
}

const xpose_exchange_engine xpose_exchange_mpi = {
    .kind = XPOSE_EXCHANGE_MPI,
    .name = "mpi",
    .available = mpi_available,
    .create = mpi_create,
};
