/* The pass loop's reads and writes: one interface, two implementations,
 * chosen once, where the datasets are opened (xio_pass_io_open):
 *   - raw (pass_io_raw.c): bytes at the datasets' file offsets
 *     (raw_dataset.h), a read and a write in flight at once on threads of
 *     their own, summed as they move.  For contiguous datasets with every
 *     rank on one node, whose page cache joins the ranks' writes: each
 *     rank writes the transpose of what it read (`local`).  An input read
 *     from elsewhere with no HDF5 call (inputs joined: join_source.h) is
 *     read from there on the same thread;
 *   - collective (pass_io_collective.c): HDF5's collective MPI-IO, the
 *     read and then the write on one I/O thread (or inline).  For chunked
 *     or compressed datasets, several nodes, --io mpi-io, and passes too
 *     small for raw requests to pay.  A compressed output whose passes
 *     hold whole chunks, in filters the chunk codec runs, is written by
 *     the codec instead (chunk_writer.h): its chunks compressed on every
 *     rank's threads and written as stored by rank 0, which holds the
 *     output alone meanwhile (h5_one_writer.h), each rank given whole
 *     chunks of every pass (`unit`).
 * Each step of the loop posts at most one read and one write, then waits
 * for the read and the write posted the step before (raw: the write posted
 * now may still run, so that a write that takes longer than its read does
 * not hold the next read back; collective: both are done). */
#ifndef XIO_PASS_IO_H
#define XIO_PASS_IO_H

#include "io_thread.h"
#include "pass_geometry.h"
#include "raw_dataset.h"
#include "transpose_options.h"

/* One transfer of a step. */
typedef struct {
  const xio_pass_geometry *pass; /* NULL: none this step */
  void *buf;
  uint64_t *sum; /* where the sum of the bytes moved goes (NULL: none; raw only) */
  /* a read's: the read of the next step, asked of storage once this one
   * is done (collective, where the codec reads: xio_read_ahead) */
  const xio_pass_geometry *next;
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
  /* Waits for a write still running, and closes: collective where the
   * output goes back to every rank.  0, or -1 with a message. */
  int (*close)(xio_pass_io *io, xio_error *err);
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
  const xio_matrix *in;
  xio_matrix *out;
  int local;      /* each rank writes the transpose of what it read: nothing exchanged */
  int64_t unit;   /* exchanged, ranks take each pass's columns in whole units of it */
  int sums;       /* transfers can sum the bytes they move */
  int overlapped; /* transfers run on threads, beside the transposes */
  xio_pass_transfer read, write;
  double both_seconds; /* a read and a write in flight together */
  int writing;         /* raw: a write posted and not yet waited for */
  int apart;           /* collective: this step's read and write on threads of their own */
  int syncs;           /* raw: this rank syncs the output for every rank */
  /* the implementations' own */
  xio_io_thread threads[2];
  xio_raw_dataset raw_in, raw_out;
  struct xio_chunk_writer *writer; /* collective: the codec writes out's chunks */
  int behind_fd;                   /* its one writer's: out's file, for xio_pass_io_collective */
  const char *codec_declined;      /* why not, where its filters would let it */
  char held_name[4096];            /* out's file, held by one writer meanwhile */
};

/* Collective.  Opens the passes' I/O between in and out: raw wherever it
 * is exact and its passes are large enough, else collective; plans the
 * grid for it (passes planned for options' budget) or takes the resumed
 * one (options->resume_from).  0, or -1 with a message on every rank. */
int xio_pass_io_open(const xio_matrix *in, xio_matrix *out, const xio_transpose_options *options,
                     xio_pass_grid *grid, xio_pass_io *io, xio_error *err);

/* Local.  Whether the chunk codec can write out's chunks when the passes
 * move in -> out on nranks ranks: its filters (out->codec), and a resumed
 * run's passes fitting the budget with their columns shared in whole
 * chunks. */
int xio_pass_codec_writes(const xio_matrix *in, const xio_matrix *out,
                          const xio_transpose_options *options, int nranks);

/* Local.  The grid the passes move in -> out in (xio_pass_plan_for_io):
 * where `codec` (the codec can write out's chunks), one aligned with
 * out's chunks, each rank given whole chunks of each pass's columns
 * (*unit, its units of columns: out's chunk unit along them), if one fits
 * the budget so; else (*unit 1) as HDF5's pipeline writes them. */
int xio_pass_plan_with_codec(const xio_matrix *in, const xio_matrix *out,
                             const xio_transpose_options *options, int nranks, int codec, int *raw,
                             xio_pass_grid *grid, int64_t *unit, xio_error *err);

/* The implementations.  raw_open: local; 0 where this rank can move
 * io->in and io->out raw, their files open in io (-1: it cannot, no
 * message).  chunks_open: collective; the codec's writer of io->out,
 * which goes to its one writer, each rank given whole units of `unit`
 * columns.  start: the ops and threads, once the grid is planned. */
int xio_pass_io_raw_open(xio_pass_io *io);
int xio_pass_io_chunks_open(xio_pass_io *io, int64_t unit, xio_error *err);
void xio_pass_io_raw_start(xio_pass_io *io, const xio_transpose_options *options);
void xio_pass_io_collective_start(xio_pass_io *io, const xio_transpose_options *options,
                                  uint64_t largest_read);

#endif
