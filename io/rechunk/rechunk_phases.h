/* A rechunk moved in two phases through a scratch file (phases_plan.h),
 * where the pass engine (h5_transpose.h) could write the output's chunks
 * only in parts: every chunk of the intermediate and of the output is
 * encoded once, on every thread of every rank, and written once.
 *
 * The scratch file is xpose's own, beside the output: each batch's pieces
 * at the batch's place, each piece encoded with a byte shuffle and Blosc's
 * lz4 (phases_move.h), their places and sizes exchanged between the
 * phases.  The output's chunks are written as stored by rank 0, their one
 * writer, or each by its rank where they are files (chunk_writer.h).
 *
 * The checksums are those of the pass engine: of every value read, keyed
 * by its position, which in a rechunk is its position in the output too,
 * so that reading the output back proves it holds them. */
#ifndef XIO_RECHUNK_PHASES_H
#define XIO_RECHUNK_PHASES_H

#include "h5_transpose.h"
#include "phases_plan.h"

/* Local (every rank plans the same).  1 where in -> out (a rechunk, or a
 * transpose, of in folded with axis 0's records as its rows) goes in
 * phases on `nranks` ranks: its chunks
 * written by the codec, no pass of options' budget giving every rank
 * whole output chunks (pass_io.h), or on the host's ranks none that gives
 * them evenly (plan->bands), and the phases' plan (*plan) fitting the
 * budget.  Else 0, plan->least_budget set (over the budget) where
 * the phases were planned and do not fit.  A resumed grid the pass engine
 * planned keeps to it.  -1 with a message. */
int xio_phases_planned(const xio_matrix *in, const xio_matrix *out,
                       const xio_transpose_options *options, int nranks, xio_phases_plan *plan,
                       xio_error *err);

/* Collective, out open for writing on every rank with no other object of
 * its file open (its one writer takes it: h5_one_writer.h).  in -> out as
 * planned, through the file scratch_path (made anew, removed however the
 * move ends).  Returns as xio_transpose does:
 * stats->done is one pass of the whole matrix, done or not (a stopped or
 * killed move starts over when resumed). */
int xio_rechunk_in_phases(const xio_matrix *in, xio_matrix *out, const char *scratch_path,
                          const xio_phases_plan *plan, const xio_transpose_options *options,
                          xio_transpose_stats *stats, xio_error *err);

#endif
