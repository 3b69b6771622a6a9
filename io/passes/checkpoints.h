/* The pass loop's checkpoints: the passes written so far made durable,
 * then recorded (xio_checkpoint_fn), between the loop's steps.
 *
 * Before the first pass, after the last and on a stop, the loop waits:
 * the output is synced and the progress recorded then and there.  In
 * between, every checkpoint_seconds: where the I/O has a sync of its own
 * (raw: fdatasync), it runs on a thread of its own beside the passes, and
 * the passes it covers are recorded at the first step after every rank's
 * sync has ended; otherwise (HDF5's flush, collective) the same as at the
 * ends.  A sync that waits mid-run stops the
 * reads while the page cache writes gigabytes back (16 GiB on the H100
 * machine: 3 checkpoints took 11.8 s, the final one alone 8.7 s). */
#ifndef XIO_CHECKPOINTS_H
#define XIO_CHECKPOINTS_H

#include "io_thread.h"
#include "pass_io.h"
#include "transpose_options.h"

typedef struct {
  MPI_Comm comm;
  const xio_transpose_options *options;
  xio_pass_io *io;      /* its sync, where it has one, runs beside the passes */
  xio_io_thread syncer; /* that sync's thread */
  int in_flight;        /* a background sync posted, its passes not yet recorded */
  xio_progress pending; /* the passes it makes durable */
  xio_error sync_err;
  double last;                  /* when the last checkpoint began */
  double seconds, last_seconds; /* the loop's time in them, and the last one's */
  int count;                    /* recorded */
} xio_checkpoints;

/* Local.  io: the passes' I/O. */
void xio_checkpoints_begin(xio_checkpoints *c, MPI_Comm comm, const xio_transpose_options *options,
                           xio_pass_io *io);

/* Collective, between steps, `written` passes written (their sums added
 * to *local; this adds them to done->sums, checking that every element
 * read was written), `first` the loop's first step, `finished` every pass
 * written.  Takes the checkpoint due, if any: done->passes_done is what
 * was recorded last.  0; XIO_STOPPED when a stop was asked for (the
 * passes written recorded); -1 with a message. */
int xio_checkpoints_step(xio_checkpoints *c, xio_progress *done, int64_t written, int first,
                         int finished, xio_checksums *local, xio_error *err);

/* Local.  Waits for a background sync (its passes stay unrecorded). */
void xio_checkpoints_end(xio_checkpoints *c);

#endif
