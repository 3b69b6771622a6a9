/* What a rechunk's two phases share while they run (rechunk_phases.c
 * sets it up and runs phase 1; phase_two.c gathers and writes the output
 * chunks; phases_move.c keeps a failure and counts the rounds of both).
 * Internal to io/rechunk. */
#ifndef XIO_PHASES_MOVE_H
#define XIO_PHASES_MOVE_H

#include <stdatomic.h>

#include "filters.h"
#include "h5_transpose.h"
#include "phases_plan.h"
#include "blosc_codec.h"
#include "codec.h"

/* The intermediate's codec: a byte shuffle, then Blosc's lz4 at this
 * level (its own shuffle off), several times faster than deflate's
 * fastest level on both sides, for pieces read back once. */
#define SCRATCH_LEVEL 1

/* The pieces' codec, for values of type_size bytes; with `planes`, only
 * its second step: what turns a piece into its byte planes (phase 2
 * gathers them so where the output shuffles first). */
static inline xio_filters xio_phases_scratch_codec(size_t type_size, int planes) {
  const unsigned blosc = xio_blosc_option(XIO_BLOSC_LZ4, 0, (unsigned)type_size);
  if (planes)
    return (xio_filters){.count = 1,
                         .id = {XIO_CODEC_BLOSC},
                         .value = {SCRATCH_LEVEL},
                         .option = {blosc},
                         .known = 1};
  return (xio_filters){.count = 2,
                       .id = {H5Z_FILTER_SHUFFLE, XIO_CODEC_BLOSC},
                       .value = {(unsigned)type_size, SCRATCH_LEVEL},
                       .option = {0, blosc},
                       .known = 1};
}

typedef struct {
  const xio_matrix *in;
  xio_matrix *out;
  xio_phases_plan plan;     /* the caller's, phase 2's chunks at once set again */
  const xio_phases_plan *p; /* &plan */
  const xio_transpose_options *options;
  xio_transpose_stats *stats;
  MPI_Comm comm;
  int rank, nranks, one_node;
  const char *path;
  int fd;
  xio_filters codec;           /* the pieces' */
  xio_codec_scratches scratch; /* a thread's, for the pieces */
  uint64_t region;             /* bytes a batch's pieces may take: batch b's at b * region */
  uint64_t *piece_at;          /* where piece t of a full batch may start in its region */
  int64_t *place;              /* piece (b, t): offset, then size, at 2 * (b * tiles + t) */
  uint64_t sum;                /* this rank's, of the values read */
  int64_t rounds, rounds_done; /* both phases' */
  atomic_int failed;
  xio_error item_err;
} xio_phases_move;

static inline int64_t xio_phases_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* On any thread.  An item's failure kept (the first one's why): -1. */
int xio_phases_item_failed(xio_phases_move *ph, const xio_error *why);

/* Collective.  A round of either phase done: progress said, a stop asked
 * for agreed (XIO_STOPPED). */
int xio_phases_round_done(xio_phases_move *ph);

/* Collective.  Phase 2, the output held by its one writer: each output
 * chunk gathered from its pieces, compressed and written. */
int xio_phases_write_output(xio_phases_move *ph, xio_error *err);

#endif
