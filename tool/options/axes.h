/* The output's axis order (--axes, --dims) as moves: folds of the input.
 *
 * An N-D permutation that moves the run of axes [split, trail) in front of
 * the run [lead, split), the axes before and after them staying in place,
 * is the transpose of the dataset folded at lead, split, trail
 * (h5_matrix.h's xio_shape): (time, lat, lon) -> (lat, lon, time) is 0, 1,
 * 3, and (time, lat, lon) -> (time, lon, lat) is 1, 2, 3.  A move may also
 * reorder the axes in front (each item's matrix then lands at another
 * item's place: h5_matrix.h's lead order).  Every other order is a few
 * such moves, one after the other. */
#ifndef TOOL_AXES_H
#define TOOL_AXES_H

#include <stddef.h>
#include <stdint.h>

/* The most moves xpose makes one after the other for one order: two make
 * every order of up to 4 axes, three every order of 5. */
enum { TOOL_MAX_MOVES = 3, TOOL_MAX_AXES = 32 };

/* One move: the dataset folded at lead, split, trail, its transpose's
 * leading axes in lead_order (its axis i < lead is axis lead_order[i] of
 * the dataset moved; h5_matrix.h's xio_shape_set_lead_order). */
typedef struct {
  int lead, split, trail;
  int lead_order[TOOL_MAX_AXES];
  int rechunk; /* the dataset written in its own order (shape.h's xio_shape) */
} tool_move;

/* Whether an order that keeps every axis in place rechunks: never (it is
 * refused), where the output's chunks are given (--layout chunked=AxB...),
 * or also by default, with neither --axes nor --dims (--chunks). */
typedef enum { TOOL_RECHUNK_NEVER, TOOL_RECHUNK_IF_ASKED, TOOL_RECHUNK_BY_DEFAULT } tool_rechunk;

/* Local.  The order (order[i]: the input axis that becomes axis i) that
 * `axes` ("2,0,1": input axis numbers) or `dims` ("lat,lon,time", by
 * tool_axes_by_names' rule; names[i] names input axis i) ask for, with
 * neither all axes reversed (numpy's .T; for 2-D, the transpose) or as
 * `rechunk` says, and the fewest moves that make it (tool_axes_moves,
 * with the axes' lengths; an order that keeps every axis, where `rechunk`
 * allows it, is one move that rechunks: tool_rechunk_move).  How many
 * moves (1 to 3), or -1 with one line in error (the command line's fault:
 * exit 2).  `shown` names the dataset in messages. */
int tool_axes_plan(int ndims, const char *const *names, const int64_t *lengths, const char *axes,
                   const char *dims, tool_rechunk rechunk, const char *shown, int *order,
                   tool_move *moves, char *error, size_t error_size);

/* Local.  The move that rechunks a dataset of ndims axes: folded at 0, 1,
 * ndims, its first axis read in slabs and the others written in them as
 * single values, so that any chunk holds whole elements (the read-back
 * sums chunk by chunk) and a rechunk in phases (rechunk_phases.h) keys
 * its sums as the passes do.  Faster than whole rows of the trailing axes
 * as elements, too: 7300 x 90 x 180 float32 into 7300 x 16 x 16 chunks,
 * 2-core VM, 1 rank 8.1 s -> 7.6 s, 2 ranks 5.0-5.7 s -> 4.6-4.8 s
 * (tests/bench/RESULTS.md). */
tool_move tool_rechunk_move(int ndims);

/* Local.  The fewest moves that make `order` (order[i]: the input axis
 * that becomes axis i), each of the dataset as the moves before it left
 * it, into moves[k]: how many (0 for the identity), or -1 where more than
 * max_moves (at most TOOL_MAX_MOVES) are needed or the order has too many
 * axes to search.  Of as few, with the axes' lengths (NULL: the first
 * found), the one of fewest matrices (positions of the axes a move leaves
 * in front), then the one whose last move's element (the axes it leaves
 * in place after the moved ones) is smallest, then one that keeps the
 * axes in front in their order. */
int tool_axes_moves(int ndims, const int *order, const int64_t *lengths, int max_moves,
                    tool_move *moves);

/* Local.  NCO ncpdq's rule for a dataset whose axis i is named names[i]:
 * the axes that `dims` ("lat,lon,time") names take the places those axes
 * hold, in the order dims gives; the others stay where they are (a
 * dataset (time, lev, lat, lon) becomes (lat, lev, lon, time)).  Names of
 * no axis of this dataset are passed over.  order[i]: the input axis that
 * becomes axis i.  Returns how many axes dims names. */
int tool_axes_by_names(int ndims, const char *const *names, const char *dims, int *order);

/* Local.  The next name of a comma-separated list (*p, moved past it;
 * NULL after the last) into item; 0 past the end. */
int tool_axes_next_name(const char **p, char *item, size_t size);

/* Local.  The next order of p[0, n) in lexical order (from 0, 1, ...,
 * n - 1, every order once); 0 after the last. */
int tool_axes_next_order(int *p, int n);

/* Local.  0, or -1 with one line in error, for a --dims list with an
 * empty name or a name twice. */
int tool_axes_check_names(const char *dims, char *error, size_t error_size);

/* "time x lat x lon (12 x 180 x 360)", or "12 x 180 x 360" where an axis
 * has no name. */
void tool_axes_describe(int ndims, const char *const *names, const long long *dims, char *text,
                        size_t size);

#endif
