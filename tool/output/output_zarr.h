/* A Zarr store as the output (output_kind.h's tool_zarr_output): the
 * description of an array, shared with --plan. */
#ifndef TOOL_OUTPUT_ZARR_H
#define TOOL_OUTPUT_ZARR_H

#include "run.h"

/* Local.  The array run->in's output is, shaped `shape` (its axes named
 * `names`), stored as `storage` says an HDF5 output's chunks would be,
 * in run->opt's format and codec, in shards where --shards asks; at
 * `path`.  -1 with a message naming the dataset where a store cannot
 * hold it. */
int tool_zarr_array_of(const transpose_run *run, const xio_storage *storage, const xio_shape *shape,
                       const char *path, char names[][128], xio_zarr_array *a, xio_error *err);

#endif
