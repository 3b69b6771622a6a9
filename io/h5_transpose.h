/* Out-of-core distributed transpose of an HDF5 dataset into another, in
 * passes that fit a per-rank memory budget (see passes.h for the shapes). */
#ifndef XIO_TRANSPOSE_H
#define XIO_TRANSPOSE_H

#include "h5_matrix.h"
#include "passes.h"
#include "xpose.h"

/* Called on every rank after each pass. */
typedef void (*xio_progress_fn)(int64_t passes_done, int64_t passes, uint64_t bytes_done,
                                uint64_t bytes_total, void *user_data);

typedef struct {
  uint64_t memory_budget;     /* bytes per rank for xpose's own host buffers */
  uint64_t gpu_memory_budget; /* bytes per GPU (config.backend == XPOSE_BACKEND_CUDA) */
  xpose_config config;        /* backend resolved: HOST or CUDA (current device) */
  xio_progress_fn progress;
  void *progress_user_data;
} xio_transpose_options;

typedef struct {
  xio_pass_grid grid;
  uint64_t buffer_bytes; /* per rank, largest: blocks plus plan scratch */
  double read_seconds, transpose_seconds, write_seconds;
  const char *exchange; /* the engine the plans used */
} xio_transpose_stats;

/* Collective.  out must be an in->cols x in->rows dataset of in's type.
 * With the CUDA backend every pass goes host -> GPU -> host: the GPU holds
 * the blocks and the plan's scratch (within gpu_memory_budget), the host
 * the blocks (pinned, within memory_budget). */
int xio_transpose(const xio_matrix *in, const xio_matrix *out, const xio_transpose_options *options,
                  xio_transpose_stats *stats, xio_error *err);

#endif
