/* The plan object: distribution, scratch, backend and exchange engine. */
#ifndef XPOSE_PLAN_H
#define XPOSE_PLAN_H

#include "backend.h"
#include "exchange.h"
#include "xpose.h"

struct xpose_plan_s {
  MPI_Comm comm; /* private duplicate, errors returned rather than fatal */
  int rank, nranks;
  int64_t rows, cols;
  size_t elem_size;
  int64_t in_first, in_count;   /* input rows owned here */
  int64_t out_first, out_count; /* output rows (= input columns) owned here */
  xpose_exchange_layout layout; /* all chunks: where each peer's block sits */
  int chunks;                   /* the exchange goes in this many chunks */
  xpose_exchange_layout *chunk_layouts;
  void *send_buf, *recv_buf;
  size_t scratch_bytes;
  xpose_backend *backend;
  xpose_exchange *exchange;
};

/* Every rank gets the worst status any rank passed in (MPI_MAX), so a
 * failure on one rank fails all of them together. */
xpose_status xpose_agree(MPI_Comm comm, xpose_status local);

#endif
