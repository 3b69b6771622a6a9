/* The plan object: what one distributed transpose needs, all of it made at
 * creation (plan.c) and only used by execution (execute.c). */
#ifndef XPOSE_PLAN_H
#define XPOSE_PLAN_H

#include "backend/backend.h"
#include "exchange/exchange.h"
#include "layout.h"
#include "xpose.h"

struct xpose_plan_s {
  MPI_Comm comm; /* private duplicate, errors returned rather than fatal */
  int rank, nranks;
  int64_t rows, cols;
  size_t elem_size;
  xpose_layout layout;
  void *send_buf, *recv_buf; /* the layout's scratch, from the backend */
  void *output;              /* the output slab, where the plan owns it */
  int own_output;
  /* Engines that write peers' outputs: where each rank's block of this
   * rank's input goes, one part per rank: its owner's output, or the send
   * buffer. */
  xpose_part *peer_parts;
  xpose_backend *backend;
  xpose_exchange *exchange;
};

#endif
