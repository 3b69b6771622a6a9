/* A backend owns a plan's memory and its local data movement: host memory
 * and CPU kernels (host.c), or device memory and CUDA kernels
 * (cuda/backend/cuda.c).
 *
 * Work goes to one of a few lanes (CUDA streams; on the host everything
 * runs in order at once), so that packing, the own block, transfers and
 * placing can overlap.  Events order lanes: record(lane, e) marks the work
 * queued so far; wait_event(lane, e) holds later work of another lane until
 * then; sync_event(e) blocks the host until then. */
#ifndef XPOSE_BACKEND_H
#define XPOSE_BACKEND_H

#include "backend/parts.h"
#include "xpose.h"

typedef struct xpose_backend xpose_backend;

enum { XPOSE_LANE_PACK, XPOSE_LANE_SELF, XPOSE_LANE_COMM, XPOSE_LANE_UNPACK, XPOSE_LANES };
enum { XPOSE_MAX_CHUNKS = 16, XPOSE_EVENTS = 2 * XPOSE_MAX_CHUNKS };

typedef struct {
  const char *name;
  int device_memory; /* buffers live in device memory (engines ask) */
  xpose_status (*alloc)(xpose_backend *backend, size_t bytes, void **ptr);
  void (*release)(xpose_backend *backend, void *ptr);
  /* dst (cols x rows, leading dimension ld_dst) = transpose of src (rows x cols, ld_src);
   * leading dimensions in elements. */
  xpose_status (*transpose)(xpose_backend *backend, int lane, const void *src, int64_t ld_src,
                            void *dst, int64_t ld_dst, int64_t rows, int64_t cols,
                            size_t elem_size);
  /* The same with the output rows spread over several matrices (parts.h),
   * in one pass over src where the backend can; the walk starts at part
   * `rotation`. */
  xpose_status (*transpose_parts)(xpose_backend *backend, int lane, const void *src,
                                  int64_t ld_src, int64_t rows, int64_t cols,
                                  const xpose_part *parts, int nparts, int rotation,
                                  size_t elem_size);
  /* rows runs of row_bytes bytes between pitched buffers. */
  xpose_status (*copy_2d)(xpose_backend *backend, int lane, const void *src, size_t src_pitch,
                          void *dst, size_t dst_pitch, int64_t rows, size_t row_bytes);
  /* The caller's stream that execution follows (a cudaStream_t; NULL: the
   * legacy default stream).  Backends without streams refuse. */
  xpose_status (*set_stream)(xpose_backend *backend, void *stream);
  /* Every lane follows the work already queued on the caller's stream. */
  xpose_status (*begin)(xpose_backend *backend);
  xpose_status (*record)(xpose_backend *backend, int lane, int event);
  xpose_status (*wait_event)(xpose_backend *backend, int lane, int event);
  xpose_status (*sync_event)(xpose_backend *backend, int event);
  /* Waits for all work of all lanes. */
  xpose_status (*synchronize)(xpose_backend *backend);
  /* Fails unless ptr is memory this backend can address. */
  xpose_status (*check_buffer)(xpose_backend *backend, const void *ptr, const char *what);
  /* The cudaStream_t of a lane (NULL on the host). */
  void *(*stream)(xpose_backend *backend, int lane);
  void (*destroy)(xpose_backend *backend);
} xpose_backend_ops;

struct xpose_backend {
  const xpose_backend_ops *ops;
  void *state;
};

/* Large blocks split over `threads` threads (xpose_config.host_threads). */
enum { XPOSE_MAX_HOST_THREADS = 256 };
xpose_status xpose_backend_host_create(int threads, xpose_backend **backend);

/* On the current device, with a stream per lane.  XPOSE_ERROR_UNSUPPORTED
 * where xpose was built without CUDA (no_cuda.c). */
xpose_status xpose_backend_cuda_create(xpose_backend **backend);

#endif
