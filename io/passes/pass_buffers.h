/* A pass's blocks in memory: two host buffers of each kind, so that one
 * pass is transposed while the next is read and the previous written, and
 * with the CUDA backend device copies for the transpose (the host ones
 * pinned, so the copies run at full speed), the output's unless the plans
 * own theirs.  The GPU's half is in cuda/io/pass_buffers_cuda.c (with the
 * GPU's checksums beside it), built with CUDA only. */
#ifndef XIO_PASS_BUFFERS_H
#define XIO_PASS_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"
#include "xpose.h"

typedef struct {
  int on_gpu;
  size_t bytes[2]; /* of each input and output host buffer */
  void *in_host[2], *out_host[2], *in_dev, *out_dev;
  void *sum_dev; /* the GPU's checksum total */
} xio_pass_buffers;

/* The checksums of a pass (checksum.h), taken on the GPU where the pass
 * goes through it: of its input block once copied in, and of its output
 * block before it is copied out.  Each block is row-major, rows x cols,
 * element (i, j) keyed first_key + i * row_step + j * col_step. */
typedef struct {
  int64_t rows, cols;
  size_t elem_size;
  uint64_t first_key, row_step, col_step;
  uint64_t sum; /* the result */
} xio_block_checksum;

/* Local.  Room for in_bytes of input block and out_bytes of output block,
 * twice on the host (allocated at their first use: xio_pass_buffers_host),
 * once on the GPU with on_gpu, but no output block there with
 * plans_own_output.  -1 with a message on failure; the buffers are
 * freeable either way. */
int xio_pass_buffers_alloc(xio_pass_buffers *b, int on_gpu, int plans_own_output, size_t in_bytes,
                           size_t out_bytes, xio_error *err);

/* Local.  Allocates, unless done before, host buffer `slot` of the input
 * blocks (out 0) or the output blocks (out 1), every page touched: the
 * pass loop allocates each just before its first use, beside the I/O
 * (pinning 4 GiB took 2 s before the first pass on the H100 machine). */
int xio_pass_buffers_host(xio_pass_buffers *b, int out, int slot, xio_error *err);

void xio_pass_buffers_free(xio_pass_buffers *b);

/* Collective.  Transposes the pass whose input block (in_bytes) is in
 * b->in_host[slot] into b->out_host[slot] (out_bytes), through the GPU
 * with on_gpu (and the plan's own output, where it has one).  Returns the
 * plan's status, or XPOSE_ERROR_CUDA with the failed copy in err.  On the
 * GPU, with in_sum and out_sum not NULL, it sums both blocks there. */
xpose_status xio_pass_transpose(xpose_plan plan, const xio_pass_buffers *b, int slot,
                                size_t in_bytes, size_t out_bytes, xio_block_checksum *in_sum,
                                xio_block_checksum *out_sum, xio_error *err);

/* The GPU's half of the functions above, for their on_gpu case
 * (cuda/io/pass_buffers_cuda.c; CUDA builds only). */
int xio_gpu_buffers_alloc(xio_pass_buffers *b, int plans_own_output, xio_error *err);
int xio_gpu_pinned_alloc(void **host, size_t bytes, xio_error *err);
void xio_gpu_buffers_free(xio_pass_buffers *b);
xpose_status xio_gpu_pass_transpose(xpose_plan plan, const xio_pass_buffers *b, int slot,
                                    size_t in_bytes, size_t out_bytes, xio_block_checksum *in_sum,
                                    xio_block_checksum *out_sum, xio_error *err);

#endif
