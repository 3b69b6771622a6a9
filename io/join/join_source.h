/* The values of a variable of several inputs joined along their records
 * (join_view.h), read from the inputs themselves: a block of the joined
 * matrix is split where one input's records end and the next's begin,
 * and each part read from its input as that input stores it (netCDF-3 at
 * its offsets, netCDF-4's chunks through the chunk codec or HDF5, a Zarr
 * store's chunk files through the codec), on each rank alone.  At most XIO_JOIN_OPEN_INPUTS inputs are open at once,
 * the least recently read closed first, so archives of thousands of files
 * run.  Where every input is netCDF-3, has compressed chunks the codec
 * reads or is contiguous, their values are located before the passes
 * (each rank opening every input once), and the reads, with no HDF5
 * call, run beside the writes (xio_reads_alone). */
#ifndef XIO_JOIN_SOURCE_H
#define XIO_JOIN_SOURCE_H

#include <stdint.h>

#include "h5_matrix.h"

enum { XIO_JOIN_OPEN_INPUTS = 16 };

/* Local.  Makes m (the view's dataset, whose first axis is the record
 * dimension) read its values from `count` inputs holding records[i]
 * records each; the paths and counts are copied.  Its folds must keep the
 * records leading (its items' or its rows' first axis); another fails its
 * reads, saying so.  Its passes (xio_prepare_reads) first index every
 * compressed input on every rank. */
int xio_join_attach(xio_matrix *m, const char *const *inputs, const int64_t *records, int count,
                    xio_error *err);

#endif
