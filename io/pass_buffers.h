/* A pass's blocks in memory: two host buffers of each kind, so that one
 * pass is transposed while the next is read and the previous written, and
 * with the CUDA backend device copies for the transpose (the host ones
 * pinned, so the copies run at full speed), the output's unless the plans
 * own theirs.  io/'s only CUDA work is here; cuda_error.h checks it (and
 * tool/gpus.c's). */
#ifndef XIO_PASS_BUFFERS_H
#define XIO_PASS_BUFFERS_H

#include <stddef.h>

#include "h5_error.h"
#include "xpose.h"

typedef struct {
  int on_gpu;
  void *in_host[2], *out_host[2], *in_dev, *out_dev;
} xio_pass_buffers;

/* Local.  Room for in_bytes of input block and out_bytes of output block,
 * twice, every page touched now rather than in the first pass; device
 * copies too with on_gpu, but no output one with plans_own_output.  -1
 * with a message on failure; the buffers are freeable either way. */
int xio_pass_buffers_alloc(xio_pass_buffers *b, int on_gpu, int plans_own_output, size_t in_bytes,
                           size_t out_bytes, xio_error *err);

void xio_pass_buffers_free(xio_pass_buffers *b);

/* Collective.  Transposes the pass whose input block (in_bytes) is in
 * b->in_host[slot] into b->out_host[slot] (out_bytes), through the GPU
 * with on_gpu (and the plan's own output, where it has one).  Returns the
 * plan's status, or XPOSE_ERROR_CUDA with the failed copy in err. */
xpose_status xio_pass_transpose(xpose_plan plan, const xio_pass_buffers *b, int slot,
                                size_t in_bytes, size_t out_bytes, xio_error *err);

#endif
