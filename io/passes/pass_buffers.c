#include "pass_buffers.h"

#include <stdlib.h>
#include <string.h>

#include "host_memory.h"

/* One byte more than asked, so that empty blocks still get a buffer. */
int xio_pass_buffers_alloc(xio_pass_buffers *b, int on_gpu, int plans_own_output, size_t in_bytes,
                           size_t out_bytes, xio_error *err) {
  memset(b, 0, sizeof *b);
  b->on_gpu = on_gpu;
  b->bytes[0] = in_bytes + 1;
  b->bytes[1] = out_bytes + 1;
#ifdef XPOSE_HAVE_CUDA
  if (on_gpu) return xio_gpu_buffers_alloc(b, plans_own_output, err);
#else
  (void)plans_own_output, (void)err;
#endif
  return 0;
}

int xio_pass_buffers_host(xio_pass_buffers *b, int out, int slot, xio_error *err) {
  void **host = out ? &b->out_host[slot] : &b->in_host[slot];
  const size_t bytes = b->bytes[out];
  if (*host) return 0;
#ifdef XPOSE_HAVE_CUDA
  if (b->on_gpu) return xio_gpu_pinned_alloc(host, bytes, err);
#endif
  *host = xio_host_alloc(bytes);
  if (!*host) return xio_fail(err, "cannot allocate %zu bytes of pass buffers", bytes);
  memset(*host, 0, bytes); /* page faults now, beside the I/O, rather than in a transpose */
  return 0;
}

void xio_pass_buffers_free(xio_pass_buffers *b) {
#ifdef XPOSE_HAVE_CUDA
  if (b->on_gpu) {
    xio_gpu_buffers_free(b);
    return;
  }
#endif
  for (int slot = 0; slot < 2; slot++) {
    free(b->in_host[slot]);
    free(b->out_host[slot]);
  }
  memset(b, 0, sizeof *b);
}

xpose_status xio_pass_transpose(xpose_plan plan, const xio_pass_buffers *b, int slot,
                                size_t in_bytes, size_t out_bytes, xio_block_checksum *in_sum,
                                xio_block_checksum *out_sum, xio_error *err) {
#ifdef XPOSE_HAVE_CUDA
  if (b->on_gpu)
    return xio_gpu_pass_transpose(plan, b, slot, in_bytes, out_bytes, in_sum, out_sum, err);
#endif
  (void)in_bytes, (void)out_bytes, (void)in_sum, (void)out_sum, (void)err;
  return xpose_execute(plan, b->in_host[slot], b->out_host[slot]);
}
