/* A dataset's shape, and its axes folded into the matrices that the
 * passes move: the arithmetic of transposes, items and axes.  Local. */
#ifndef XIO_SHAPE_H
#define XIO_SHAPE_H

#include <stdint.h>

enum { XIO_MAX_DIMS = 32 }; /* HDF5's H5S_MAX_RANK */

/* A dataset's axes folded into the matrices that the passes move: axes
 * [lead, split) are each matrix's rows, [split, trail) its columns, and
 * [trail, ndims) ride inside each element; the leading axes [0, lead)
 * stay in front, one matrix per position (an item) of theirs.  Each group
 * is a run of row-major axes, so the folded matrices are the dataset's
 * elements in their own order, and their transposes are the dataset with
 * the row and column groups swapped: (time, lat, lon) folded at 0, 1, 3 is
 * time x (lat * lon), whose transpose is (lat, lon, time); folded at 1, 2, 3
 * it is `time` matrices lat x lon, whose transposes make (time, lon, lat).
 * A 2-D dataset folds at 0, 1, 2. */
typedef struct {
  int ndims, lead, split, trail;
  int64_t dims[XIO_MAX_DIMS];
  unsigned unlimited; /* bit i: axis i may grow (netCDF's record dimension) */
  /* With lead_reordered, the transpose's leading axes are these ones in
   * another order: its axis i (< lead) is axis lead_order[i] here.  Each
   * item's matrix then lands at another item's place; a move that does
   * this saves a move of its own ((time, lev, lat, lon) reversed is two
   * moves, not three).  Without, they keep their order. */
  int lead_reordered;
  int lead_order[XIO_MAX_DIMS];
  /* Rechunking: the move writes this dataset in its own order, only its
   * chunks changed.  Each pass is exchanged as its transpose would be, so
   * that each rank ends up with a share of the block's columns (the
   * output's chunks along them each on one rank, read from the input's
   * along the rows), and transposed back before it is written.  Its
   * "transpose" (xio_shape_transposed) is then this shape itself. */
  int rechunk;
} xio_shape;

/* The shape of the transpose of `in`: its leading axes (in lead_order),
 * its column axes, its row axes, then the axes inside the elements; folded
 * to be that transpose's matrices, its leading axes in their own order.
 * Rechunking, `in` itself, as folded. */
xio_shape xio_shape_transposed(const xio_shape *in);

/* Reorders the first `lead` axes of `in` (its leading axes once folded
 * at lead) in its transpose: order[i] (a permutation of 0 .. lead - 1,
 * which xio_matrix_fold checks) becomes its axis i; NULL, or the same
 * order, keeps them. */
void xio_shape_set_lead_order(xio_shape *in, int lead, const int *order);

/* Which item (position of the leading axes) of in's transpose input item
 * `item` becomes, and the inverse: the input item that output item
 * `out_item` came from.  The same item where in keeps the leading axes'
 * order. */
int64_t xio_shape_moved_item(const xio_shape *in, int64_t item);
int64_t xio_shape_item_source(const xio_shape *in, int64_t out_item);

/* The product of dims[a..b), or -1 past INT64_MAX. */
int64_t xio_dims_product(const int64_t *dims, int a, int b);

/* Whether a and b have the same axes, of the same lengths (folds aside). */
int xio_shape_same_dims(const xio_shape *a, const xio_shape *b);

/* Which axis of `in` becomes axis `axis` of its transpose (rechunking:
 * `axis`). */
int xio_shape_source_axis(const xio_shape *in, int axis);

#endif
