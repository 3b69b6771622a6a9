/* MPI point-to-point exchange engine.
 *
 * Every non-empty block travels as one or more messages of at most
 * max_message_bytes, so no MPI count exceeds INT_MAX however large a rank's
 * share is.  Pieces of one block share a tag: MPI's non-overtaking rule
 * matches them in order.  Peers are visited in a ring (rank + k, rank - k)
 * so that no rank is everybody's first destination. */
#include <limits.h>
#include <stdlib.h>

#include "check.h"
#include "exchange.h"

enum { EXCHANGE_TAG = 0x7870 };

typedef struct {
  int peer;
  int bytes;
  int64_t offset;
} message_piece;

typedef struct {
  MPI_Comm comm;
  message_piece *sends, *recvs;
  int64_t nsends, nrecvs;
  MPI_Request *requests; /* receives first, then sends */
  int64_t nactive;
} mpi_exchange_state;

/* Appends the pieces of `bytes` at `offset` for `peer`; returns the new count. */
static int64_t add_pieces(message_piece *pieces, int64_t n, int peer, int64_t offset, int64_t bytes,
                          int64_t max_bytes) {
  for (int64_t done = 0; done < bytes; done += max_bytes, n++) {
    const int64_t left = bytes - done;
    if (pieces) {
      pieces[n].peer = peer;
      pieces[n].offset = offset + done;
      pieces[n].bytes = (int)(left < max_bytes ? left : max_bytes);
    }
  }
  return n;
}

static int64_t build_pieces(const xpose_exchange_layout *layout, int rank, int sending,
                            int64_t max_bytes, message_piece *pieces) {
  int64_t n = 0;
  for (int k = 1; k < layout->nranks; k++) {
    const int peer =
        sending ? (rank + k) % layout->nranks : (rank - k + layout->nranks) % layout->nranks;
    const int64_t *bytes = sending ? layout->send_bytes : layout->recv_bytes;
    const int64_t *offsets = sending ? layout->send_offsets : layout->recv_offsets;
    n = add_pieces(pieces, n, peer, offsets[peer], bytes[peer], max_bytes);
  }
  return n;
}

static xpose_status mpi_start(xpose_exchange *exchange, const void *send, void *recv) {
  mpi_exchange_state *st = exchange->state;
  xpose_status res = XPOSE_SUCCESS;
  st->nactive = 0;
  for (int64_t i = 0; i < st->nrecvs; i++, st->nactive++) {
    const message_piece *p = &st->recvs[i];
    XPOSE_MPICHECKGOTO(MPI_Irecv((char *)recv + p->offset, p->bytes, MPI_BYTE, p->peer,
                                 EXCHANGE_TAG, st->comm, &st->requests[st->nactive]),
                       res, fail);
  }
  for (int64_t i = 0; i < st->nsends; i++, st->nactive++) {
    const message_piece *p = &st->sends[i];
    XPOSE_MPICHECKGOTO(MPI_Isend((const char *)send + p->offset, p->bytes, MPI_BYTE, p->peer,
                                 EXCHANGE_TAG, st->comm, &st->requests[st->nactive]),
                       res, fail);
  }
fail:
  return res;
}

static xpose_status mpi_wait(xpose_exchange *exchange) {
  mpi_exchange_state *st = exchange->state;
  xpose_status res = XPOSE_SUCCESS;
  /* Waitall takes an int count: wait in slices for huge piece counts. */
  for (int64_t done = 0; done < st->nactive; done += INT_MAX) {
    const int64_t left = st->nactive - done;
    XPOSE_MPICHECKGOTO(MPI_Waitall((int)(left < INT_MAX ? left : INT_MAX), st->requests + done,
                                   MPI_STATUSES_IGNORE),
                       res, fail);
  }
fail:
  st->nactive = 0;
  return res;
}

static void free_state(mpi_exchange_state *st) {
  if (!st) return;
  free(st->sends);
  free(st->recvs);
  free(st->requests);
  free(st);
}

static void mpi_destroy(xpose_exchange *exchange) {
  free_state(exchange->state);
  free(exchange);
}

static const xpose_exchange_ops mpi_ops = {mpi_start, mpi_wait, mpi_destroy};

xpose_status xpose_exchange_mpi_create(MPI_Comm comm, const xpose_exchange_layout *layout,
                                       size_t max_message_bytes, const char *name,
                                       xpose_exchange **exchange) {
  xpose_status res = XPOSE_SUCCESS;
  int rank = 0;
  mpi_exchange_state *st = NULL;
  *exchange = NULL;
  XPOSE_REQUIREGOTO(max_message_bytes >= 1 && max_message_bytes <= INT_MAX,
                    XPOSE_ERROR_INVALID_ARGUMENT, res, fail,
                    "max_message_bytes %zu is outside [1, INT_MAX]", max_message_bytes);
  XPOSE_MPICHECKGOTO(MPI_Comm_rank(comm, &rank), res, fail);
  *exchange = calloc(1, sizeof **exchange);
  st = calloc(1, sizeof *st);
  XPOSE_REQUIREGOTO(*exchange && st, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the MPI exchange engine");
  (*exchange)->ops = &mpi_ops;
  (*exchange)->name = name;
  (*exchange)->state = st;
  st->comm = comm;
  const int64_t max_bytes = (int64_t)max_message_bytes;
  st->nsends = build_pieces(layout, rank, 1, max_bytes, NULL);
  st->nrecvs = build_pieces(layout, rank, 0, max_bytes, NULL);
  st->sends = malloc(sizeof *st->sends * (size_t)(st->nsends + 1));
  st->recvs = malloc(sizeof *st->recvs * (size_t)(st->nrecvs + 1));
  st->requests = malloc(sizeof *st->requests * (size_t)(st->nsends + st->nrecvs + 1));
  XPOSE_REQUIREGOTO(st->sends && st->recvs && st->requests, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate %lld message descriptors",
                    (long long)(st->nsends + st->nrecvs));
  build_pieces(layout, rank, 1, max_bytes, st->sends);
  build_pieces(layout, rank, 0, max_bytes, st->recvs);
  return XPOSE_SUCCESS;
fail:
  free_state(st);
  free(*exchange);
  *exchange = NULL;
  return res;
}
