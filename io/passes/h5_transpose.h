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
#include "pass_plan.h" /* xio_transpose_block, xio_transpose_budget */
#include "transpose_options.h"

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
  uint64_t stored_bytes, stored_chunks; /* this rank's (each rank's own chunk files) */
  xio_chunk_read_times codec_reads;     /* rank 0's, where the chunk codec read */
} xio_transpose_stats;

/* Collective.  out must be an in->cols x in->rows dataset of in's type.
 * With the CUDA backend every pass goes host -> GPU -> host: the GPU holds
 * the blocks and the plan's scratch (within gpu_memory_budget), the host
 * the blocks (pinned, within memory_budget).  Returns 0 when every pass is
 * done and checkpointed, XIO_STOPPED when stop_requested() asked for a
 * stop and the passes done are checkpointed, or -1 with a message. */
int xio_transpose(const xio_matrix *in, xio_matrix *out, const xio_transpose_options *options,
                  xio_transpose_stats *stats, xio_error *err);

#endif
