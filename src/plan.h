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
  int64_t output_row_unit; /* output rows go to ranks in whole units of it */
  xpose_layout layout;
  void *send_buf, *recv_buf; /* the layout's scratch, the engine's or the backend's */
  void *output;              /* the output slab, where the plan owns it */
  int own_output;
  /* Engines that write peers' outputs: where each rank's block of this
   * rank's input goes, one part per rank: its owner's output, or the send
   * buffer. */
  xpose_part *peer_parts;
  xpose_backend *backend;
  xpose_exchange *exchange;
};

/* The local steps of one chunk of the pipeline (execute.c), each queued on
 * its lane: every peer's block into the send buffer, the own block into
 * out, and what arrived into its place in out.  xpose-bench also runs them
 * beside the exchange alone. */
xpose_status xpose_pack_chunk(xpose_plan plan, const xpose_chunk_layout *c, const void *in);
xpose_status xpose_own_chunk(xpose_plan plan, const xpose_chunk_layout *c, const void *in,
                             void *out);
xpose_status xpose_place_chunk(xpose_plan plan, const xpose_chunk_layout *c, void *out);

#endif
