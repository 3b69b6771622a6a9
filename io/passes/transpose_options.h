/* What a transpose of files in passes is asked to do (h5_transpose.h),
 * and how far it got: the types the pass engine's parts share. */
#ifndef XIO_TRANSPOSE_OPTIONS_H
#define XIO_TRANSPOSE_OPTIONS_H

#include <stdint.h>

#include "h5_error.h"
#include "passes.h"
#include "xpose.h"

/* Position-keyed checksums (checksum.h) over every rank, of the elements
 * the passes done so far read from the input and wrote to the output. */
typedef struct {
  uint64_t read, written;
} xio_checksums;

/* How far a run got: the first `passes_done` passes of the grid's order. */
typedef struct {
  xio_pass_grid grid;
  int64_t passes_done;
  xio_checksums sums;
} xio_progress;

/* Called on every rank after each pass. */
typedef void (*xio_progress_fn)(int64_t passes_done, int64_t passes, uint64_t bytes_done,
                                uint64_t bytes_total, void *user_data);

/* Collective.  Called when the output holds `done`: with `synced`, its
 * data is on storage already (raw passes, synced beside the next ones:
 * checkpoints.h) and the checkpoint only records it; otherwise written but
 * maybe not yet on storage, and the checkpoint syncs it (HDF5's flush),
 * then records it.  Returns 0 or -1 with a message (on any rank: the loop
 * agrees). */
typedef int (*xio_checkpoint_fn)(const xio_progress *done, int synced, void *user_data,
                                 xio_error *err);

typedef struct {
  uint64_t memory_budget;     /* bytes per rank for xpose's own host buffers */
  uint64_t gpu_memory_budget; /* bytes per GPU (config.backend == XPOSE_BACKEND_CUDA) */
  /* Nonzero: plan passes of at most this many bytes per rank (xio_pass_bytes)
   * even where the budgets allow more. */
  uint64_t pass_bytes_limit;
  xpose_config config; /* backend resolved: HOST or CUDA (current device) */
  xio_progress_fn progress;
  void *progress_user_data;
  /* Resuming: where an earlier run stopped (its grid, which must fit the
   * budget); NULL starts afresh with a grid planned for the budget and
   * pass_bytes_limit. */
  const xio_progress *resume_from;
  /* Checkpoints (checkpoints.h): before the first pass, after the last,
   * on a stop, and between passes every checkpoint_seconds. */
  xio_checkpoint_fn checkpoint;
  double checkpoint_seconds;
  void *checkpoint_user_data;
  /* Local; nonzero asks every rank to stop after the current pass. */
  int (*stop_requested)(void);
  /* Nonzero: every transfer through HDF5's collective MPI-IO, even where
   * raw access (raw_dataset.h) would do. */
  int collective_only;
  /* Nonzero: reads and writes run on the calling thread, one after the
   * other (no I/O thread). */
  int inline_io;
} xio_transpose_options;

#endif
