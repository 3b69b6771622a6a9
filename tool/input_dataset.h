/* Which dataset of the input --dims rearranges, and whether the names it
 * gives are the file's. */
#ifndef TOOL_INPUT_DATASET_H
#define TOOL_INPUT_DATASET_H

#include <mpi.h>
#include <stddef.h>

#include "h5_error.h"

/* Collective; rank 0 reads the file.  Checks that every name of `dims`
 * names an axis of some dataset of `path` (a misspelt name is an error,
 * as ncpdq's), and where `dataset` is "" sets it to the one dataset whose
 * axes `dims` reorders (tool_axes_by_names).  0; or -1 with one message,
 * *usage set where the command line is at fault (none, or several, to
 * rearrange; an unknown name). */
int tool_choose_input_dataset(MPI_Comm comm, const char *path, const char *dims, char *dataset,
                              size_t size, int *usage, xio_error *err);

#endif
