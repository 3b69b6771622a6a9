#include "checkpoints.h"

#include <string.h>

/* Collective.  Adds this rank's sums since the last checkpoint into the
 * global ones, which must agree: every element read was written, in place. */
static int gather_sums(MPI_Comm comm, xio_checksums *local, xio_checksums *global, xio_error *err) {
  uint64_t mine[2] = {local->read, local->written}, all[2];
  if (XIO_MPICHECK(MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, comm), err)) return -1;
  global->read += all[0];
  global->written += all[1];
  *local = (xio_checksums){0, 0};
  if (global->read != global->written)
    return xio_fail(err,
                    "the transpose in memory lost or changed elements: checksums %016llx (read) "
                    "and %016llx (written) differ",
                    (unsigned long long)global->read, (unsigned long long)global->written);
  return 0;
}

static int sync_job(void *arg) {
  xio_checkpoints *c = arg;
  return c->io->ops->sync(c->io, &c->sync_err);
}

void xio_checkpoints_begin(xio_checkpoints *c, MPI_Comm comm, const xio_transpose_options *options,
                           xio_pass_io *io) {
  memset(c, 0, sizeof *c);
  c->comm = comm;
  c->options = options;
  c->io = io->ops->sync ? io : NULL;
  xio_io_thread_inline(&c->syncer);
  if (c->io && !options->inline_io) xio_io_thread_start(&c->syncer, 0);
  c->last = MPI_Wtime();
}

void xio_checkpoints_end(xio_checkpoints *c) {
  if (c->in_flight) (void)xio_io_thread_wait(&c->syncer); /* the run's outcome is decided */
  c->in_flight = 0;
  xio_io_thread_stop(&c->syncer);
}

/* Collective.  Records `progress` through the caller's checkpoint; with
 * `synced`, the output's data is on storage already. */
static int record(xio_checkpoints *c, const xio_progress *progress, int synced, xio_error *err) {
  const xio_transpose_options *o = c->options;
  if (o->checkpoint &&
      xio_agree(c->comm, o->checkpoint(progress, synced, o->checkpoint_user_data, err), err))
    return -1;
  c->count++;
  return 0;
}

/* Collective.  Waits for this rank's background sync: 0 when every
 * rank's succeeded. */
static int join_background(xio_checkpoints *c, xio_error *err) {
  c->in_flight = 0;
  const int rc = xio_io_thread_wait(&c->syncer);
  if (rc) *err = c->sync_err;
  return xio_agree(c->comm, rc, err);
}

/* Collective.  The passes written synced and recorded, here and now (a
 * background sync in flight ended first: this one covers its passes). */
static int checkpoint_now(xio_checkpoints *c, xio_progress *done, int64_t written,
                          xio_checksums *local, xio_error *err) {
  if ((c->in_flight && join_background(c, err)) || gather_sums(c->comm, local, &done->sums, err))
    return -1;
  /* writes around HDF5 synced here, as the record requires */
  if (c->io && xio_agree(c->comm, c->io->ops->sync(c->io, err), err)) return -1;
  done->passes_done = written;
  return record(c, done, 0, err);
}

/* Collective.  The passes written so far, made durable by a sync beside
 * the next passes; recorded once it has ended. */
static int post_background(xio_checkpoints *c, xio_progress *done, int64_t written,
                           xio_checksums *local, xio_error *err) {
  if (gather_sums(c->comm, local, &done->sums, err)) return -1;
  c->pending = *done;
  c->pending.passes_done = written;
  c->in_flight = 1;
  xio_io_thread_post(&c->syncer, sync_job, c);
  return 0;
}

/* Collective.  Records the passes an ended background sync made durable. */
static int record_background(xio_checkpoints *c, xio_progress *done, xio_error *err) {
  if (join_background(c, err) || record(c, &c->pending, 1, err)) return -1;
  done->passes_done = c->pending.passes_done; /* its sums are done's: none gathered since */
  return 0;
}

int xio_checkpoints_step(xio_checkpoints *c, xio_progress *done, int64_t written, int first,
                         int finished, xio_checksums *local, xio_error *err) {
  const xio_transpose_options *o = c->options;
  /* Every rank learns whether any was asked to stop, whether a checkpoint
   * is due by any rank's clock, and whether any rank's sync still runs. */
  int flags[4] = {o->stop_requested && o->stop_requested(), first || finished,
                  MPI_Wtime() - c->last >= o->checkpoint_seconds,
                  c->in_flight && xio_io_thread_busy(&c->syncer)},
      agreed[4];
  if (XIO_MPICHECK(MPI_Allreduce(flags, agreed, 4, MPI_INT, MPI_MAX, c->comm), err)) return -1;
  const int stop = agreed[0], now = stop || agreed[1] || (agreed[2] && !c->io);
  const double began = MPI_Wtime();
  int rc;
  if (now)
    rc = checkpoint_now(c, done, written, local, err);
  else if (c->in_flight && !agreed[3])
    rc = record_background(c, done, err);
  else if (agreed[2] && !c->in_flight)
    rc = post_background(c, done, written, local, err);
  else
    return 0;
  if (now || c->in_flight) c->last = MPI_Wtime();
  c->last_seconds = MPI_Wtime() - began;
  c->seconds += c->last_seconds;
  return rc == 0 && stop && !finished ? XIO_STOPPED : rc;
}
