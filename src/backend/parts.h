/* A transpose whose output rows land in several matrices: the input's
 * columns [first, the next part's first) (the last part: to the end) become
 * rows 0.. of `dst`, whose leading dimension is ld_dst elements.  Parts are
 * in increasing `first`, from 0; a part may be empty (its dst unused).  The
 * p2p engine uses one part per rank: each rank's block goes straight into
 * that rank's output. */
#ifndef XPOSE_PARTS_H
#define XPOSE_PARTS_H

#include <stdint.h>

typedef struct {
  int64_t first;
  void *dst;
  int64_t ld_dst;
} xpose_part;

#endif
