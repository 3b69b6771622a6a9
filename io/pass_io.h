/* The pass loop's reads and writes: one interface, two implementations,
 * chosen once, where the datasets are opened (xio_pass_io_open):
 *   - raw (pass_io_raw.c): bytes at the datasets' file offsets
 *     (raw_dataset.h), a read and a write in flight at once on threads of
 *     their own, summed as they move.  For contiguous datasets with every
 *     rank on one node, whose page cache joins the ranks' writes: each
 *     rank writes the transpose of what it read (`local`);
 *   - collective (pass_io_collective.c): HDF5's collective MPI-IO, the
 *     read and then the write on one I/O thread (or inline).  For chunked
 *     or compressed datasets, several nodes, --io mpi-io, and passes too
 *     small for raw requests to pay.
 * Each step of the loop posts at most one read and one write, then waits
 * for the read and the write posted the step before (raw: the write posted
 * now may still run, so that a write that takes longer than its read does
 * not hold the next read back; collective: both are done). */
#ifndef XIO_PASS_IO_H
#define XIO_PASS_IO_H

#include "h5_transpose.h"
#include "io_thread.h"
#include "pass_geometry.h"
#include "raw_dataset.h"

/* One transfer of a step. */
typedef struct {
  const xio_pass_geometry *pass; /* NULL: none this step */
  void *buf;
  uint64_t *sum; /* where the sum of the bytes moved goes (NULL: none; raw only) */
} xio_pass_request;

typedef struct xio_pass_io xio_pass_io;

typedef struct {
  /* Local.  Starts both transfers (collective ones on every rank); the
   * write posted the step before has ended when it returns. */
  void (*post)(xio_pass_io *io, xio_pass_request read, xio_pass_request write);
  /* Local.  Waits for the read: 0 when it and the write before the one
   * posted now succeeded, or -1 with the first failure's message. */
  int (*wait)(xio_pass_io *io, xio_error *err);
  /* Called on every rank once every rank's writes have ended: makes the
   * output's data written so far durable, beside the passes (raw: rank 0
   * syncs for all); NULL where only HDF5's flush may (the checkpoint's). */
  int (*sync)(xio_pass_io *io, xio_error *err);
  /* Local.  Waits for a write still running, and closes. */
  void (*close)(xio_pass_io *io);
} xio_pass_io_ops;

/* Where each transfer's time goes: began when posted, ended on its thread. */
typedef struct {
  xio_pass_request request;
  double began, ended, seconds; /* the last one's, and all of them */
  int rc;                       /* the last one's */
  xio_error err;
} xio_pass_transfer;

struct xio_pass_io {
  const xio_pass_io_ops *ops;
  const char *name; /* as -v says it: "raw I/O at the datasets' file offsets, a thread each" */
  const xio_matrix *in, *out;
  int local;      /* each rank writes the transpose of what it read: nothing exchanged */
  int sums;       /* transfers can sum the bytes they move */
  int overlapped; /* transfers run on threads, beside the transposes */
  xio_pass_transfer read, write;
  double both_seconds; /* a read and a write in flight together */
  int writing;         /* raw: a write posted and not yet waited for */
  int syncs;           /* raw: this rank syncs the output for every rank */
  /* the implementations' own */
  xio_io_thread threads[2];
  xio_raw_dataset raw_in, raw_out;
};

/* Collective.  Opens the passes' I/O between in and out: raw wherever it
 * is exact and its passes are large enough, else collective; plans the
 * grid for it (passes planned for options' budget) or takes the resumed
 * one (options->resume_from).  0, or -1 with a message on every rank. */
int xio_pass_io_open(const xio_matrix *in, const xio_matrix *out,
                     const xio_transpose_options *options, xio_pass_grid *grid, xio_pass_io *io,
                     xio_error *err);

/* The implementations.  raw_open: local; 0 where this rank can move
 * io->in and io->out raw, their files open in io (-1: it cannot, no
 * message).  start: the ops and threads, once the grid is planned. */
int xio_pass_io_raw_open(xio_pass_io *io);
void xio_pass_io_raw_start(xio_pass_io *io, const xio_transpose_options *options);
void xio_pass_io_collective_start(xio_pass_io *io, const xio_transpose_options *options,
                                  uint64_t largest_read);

#endif
