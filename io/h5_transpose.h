/* Out-of-core distributed transpose of an HDF5 dataset into another, in
 * passes that fit a per-rank memory budget (see passes.h for the shapes,
 * pass_plan.h for the grid), pipelined (one pass is read and another
 * written while a third is transposed: h5_transpose.c) through raw or
 * collective I/O (pass_io.h), checksummed as it goes, and resumable:
 * between passes the loop can flush the output and report how far it got,
 * and it can start from a later pass of the same grid. */
#ifndef XIO_TRANSPOSE_H
#define XIO_TRANSPOSE_H

#include "chunk_reader.h"
#include "h5_matrix.h"
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

typedef struct {
  xio_progress done;     /* as far as the loop got (all passes when it returns 0) */
  uint64_t buffer_bytes; /* per rank, largest: blocks plus plan scratch */
  const char *io;        /* the passes' I/O, as -v says it (pass_io.h) */
  int overlapped;        /* reads and writes ran on I/O threads, beside the transposes */
  /* Rank 0's time: reads and writes (with their sums, when raw on the
   * host) on their threads when overlapped; the rest, and waiting for
   * them, on the calling one.  both_seconds: a read and a write in flight
   * together. */
  double read_seconds, write_seconds, both_seconds;
  double transpose_seconds, checksum_seconds, wait_seconds;
  /* Rank 0's: planning and allocating before the first pass, and the
   * checkpoints (syncing the output, then the record): how many, all of
   * them, and the last, after the last pass. */
  double setup_seconds, buffers_seconds, checkpoint_seconds, last_checkpoint_seconds;
  int checkpoints;
  const char *exchange;  /* the engine the plans used */
  const char *summed_by; /* who took the checksums: "the GPU", "the I/O threads", "this thread" */
  /* Written by the chunk codec (chunk_writer.h): rank 0's time compressing
   * its chunks and storing every rank's, and the bytes stored. */
  int codec_wrote;
  const char *codec_declined; /* why HDF5 compressed chunks the codec could have */
  double encode_seconds, store_seconds;
  uint64_t stored_bytes;
  xio_chunk_read_times codec_reads; /* rank 0's, where the chunk codec read */
} xio_transpose_stats;

/* The budget the passes must fit per rank: the host's, or with the CUDA
 * backend the GPU's (which holds the plan's scratch too). */
uint64_t xio_transpose_budget(const xio_transpose_options *options);

/* Local.  The block of the output's matrix (its rows are in's columns)
 * that each pass of xio_transpose covers on `ranks` ranks, the passes
 * aligned with in's compressed chunks, so that each of them is read once:
 * where the output's chunks are chosen to fit in it, each of them is
 * written whole, by one pass, and xio_transpose's plan keeps that block.
 * `compressed`: the output will be (its passes are smaller).  0 x 0 when
 * no pass fits. */
void xio_transpose_block(const xio_matrix *in, const xio_transpose_options *options, int ranks,
                         int compressed, int64_t *out_rows, int64_t *out_cols);

/* Collective.  out must be an in->cols x in->rows dataset of in's type.
 * With the CUDA backend every pass goes host -> GPU -> host: the GPU holds
 * the blocks and the plan's scratch (within gpu_memory_budget), the host
 * the blocks (pinned, within memory_budget).  Returns 0 when every pass is
 * done and checkpointed, XIO_STOPPED when stop_requested() asked for a
 * stop and the passes done are checkpointed, or -1 with a message. */
int xio_transpose(const xio_matrix *in, xio_matrix *out, const xio_transpose_options *options,
                  xio_transpose_stats *stats, xio_error *err);

#endif
