/* A rechunk in two phases through an intermediate on scratch storage,
 * planned: for outputs whose chunks no pass of the budget holds whole
 * (time-series chunks of a dataset larger than memory: every pass of
 * records would touch every output chunk, inflating, changing and
 * deflating each again).
 *
 *   phase 1  slabs of `batch` records (positions of axis 0, every other
 *            axis whole) read from the input, each input chunk once, and
 *            cut into pieces, one per tile (an output chunk's extent
 *            across axes 1..n-1), each encoded once into the scratch file;
 *   phase 2  each output chunk gathered from its tile's pieces of the
 *            batches of its run along axis 0, encoded once and written.
 *
 * Batches never cross an output chunk's boundary along axis 0, so each
 * piece is read once.  Local arithmetic: every rank plans the same. */
#ifndef XIO_PHASES_PLAN_H
#define XIO_PHASES_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "shape.h"

typedef struct {
  int ndims;
  /* The input's axes, and the output's chunk along each of them: output
   * axis i is input axis order[i] (a rechunk: i), so that phase 2 gathers
   * each chunk in the input's order, then permutes it. */
  int64_t dims[XIO_MAX_DIMS], chunk[XIO_MAX_DIMS];
  int order[XIO_MAX_DIMS], permuted;
  size_t type_size;
  uint64_t record_bytes, chunk_bytes; /* one position of axis 0; one output chunk */
  /* phase 1: batches of at most `batch` records, `per_run` of them in each
   * output chunk's run along axis 0 (the last of a run shorter) */
  int64_t batch, per_run, runs, batches;
  int64_t tile_grid[XIO_MAX_DIMS], tiles; /* output chunks along axes 1..n-1 */
  int64_t chunks;                         /* of the output: runs x tiles */
  int64_t chunks_at_once;                 /* per rank, in phase 2 */
  int ranks;
  /* phase 2: the bytes kept for each chunk encoded (the bound, until
   * phase 1 tells how small they come: xio_phases_plan_rooms), and the
   * work buffers each encoding thread needs */
  uint64_t room, encode_work;
  uint64_t scratch_bytes; /* the intermediate, at most */
  uint64_t least_budget;  /* per rank, for any plan of these chunks */
  /* Planned where the passes would hold whole chunks but hand the ranks
   * their `bands` of them (each a unit of output rows) unevenly: 0 else. */
  int64_t bands;
} xio_phases_plan;

/* The memory one rank needs for phase 1's batches of `batch` records and
 * for phase 2's `chunks` output chunks at once, on `threads` threads. */
uint64_t xio_phases_batch_bytes(const xio_phases_plan *p, int64_t batch, int threads);
uint64_t xio_phases_gather_bytes(const xio_phases_plan *p, int64_t chunks, int threads);

/* What a plan is made for: a dataset of `ndims` axes `dims`, values of
 * type_size bytes, into output chunks `chunk` of the input's axes moved in
 * `order` (order[i]: the input axis that becomes output axis i; NULL: in
 * place; chunk[i] is output axis i's), read from input chunks of
 * in_chunk0 records (1: any), each output chunk encoded with encode_work
 * bytes of work buffers (filters.h), within `budget` bytes per rank on
 * `ranks` ranks of `threads` threads each. */
typedef struct {
  int ndims;
  const int64_t *dims, *chunk;
  const int *order;
  size_t type_size;
  int64_t in_chunk0;
  uint64_t encode_work, budget;
  int ranks, threads;
} xio_phases_problem;

/* Local.  The plan: 0, or -1 where the budget is under p->least_budget
 * (which is set either way). */
int xio_phases_plan_make(const xio_phases_problem *problem, xio_phases_plan *p);

/* Local.  Phase 2's chunks at once again, each encoded into `room` bytes
 * (at most the bound; one that needs more is encoded again alone in the
 * room of them all: chunk_writer.h), within `budget` on `threads`. */
void xio_phases_plan_rooms(xio_phases_plan *p, uint64_t room, uint64_t budget, int threads);

/* Local.  Batch `index` (0 .. p->batches - 1): its first record and how
 * many (0: past the end of a short last run). */
void xio_phases_batch(const xio_phases_plan *p, int64_t index, int64_t *first, int64_t *records);

/* Local.  Tile `tile`'s first position and extent along each axis from 1
 * (origin[0] and extent[0] set to 0 and 1). */
void xio_phases_tile(const xio_phases_plan *p, int64_t tile, int64_t *origin, int64_t *extent);

/* Local.  The bytes a piece of `records` records of tile `tile` holds. */
uint64_t xio_phases_piece_bytes(const xio_phases_plan *p, int64_t tile, int64_t records);

/* Local.  A chunk gathered in the input's axis order (p->chunk's box,
 * row-major) into `out` in the output's: output axis i is input axis
 * p->order[i].  Shuffled: each byte plane of the values by itself. */
void xio_phases_permute(const xio_phases_plan *p, const unsigned char *box, unsigned char *out,
                        int shuffled);

/* Local.  The count[] box of values at src_lo in a row-major array of
 * src_dims copied to dst_lo in one of dst_dims (values of `size` bytes). */
void xio_copy_box(int ndims, const int64_t *count, size_t size, const unsigned char *src,
                  const int64_t *src_dims, const int64_t *src_lo, unsigned char *dst,
                  const int64_t *dst_dims, const int64_t *dst_lo);

#endif
