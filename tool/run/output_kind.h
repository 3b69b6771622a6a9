/* The kind of output a run writes, chosen once from OUT's name and the
 * options (tool_run_begin): an HDF5 file (netCDF-4 among them), or a Zarr
 * store (a directory: output_zarr.c).  The passes write either through
 * run->out; what differs is how the output is made, opened, finished and
 * its copies read back, each a function of the kind's table. */
#ifndef TOOL_OUTPUT_KIND_H
#define TOOL_OUTPUT_KIND_H

#include "h5_transpose.h"

struct transpose_run;

typedef struct tool_output_kind {
  const char *name; /* "HDF5 file", "Zarr store" */
  /* A store: a directory, every chunk (or shard) a file of its own,
   * written by the rank that holds it, always chunked and compressed;
   * else one file, rank 0 writing every rank's compressed chunks. */
  int store;
  /* Collective, before the output is made or resumed: what the kind must
   * know of it (NULL: nothing). */
  int (*ready)(struct transpose_run *run, const xio_transpose_options *topt, xio_error *err);
  /* Collective.  The new partial output made (its space reserved where it
   * can be), the rest of the input copied into it unless --only, and an
   * output for each dataset the run moves. */
  int (*make)(struct transpose_run *run, const xio_transpose_options *topt, xio_error *err);
  /* Collective.  Dataset k's output, made already, as run->out, in the
   * output at `path` (the partial, or OUT), named `shown` in messages,
   * for writing or only for reading. */
  int (*open)(struct transpose_run *run, int k, const char *path, const char *shown, int writable,
              xio_error *err);
  /* Collective, every dataset moved: what the kind writes last (the
   * file's attributes, the metadata of the whole), run->out closed. */
  int (*finish)(struct transpose_run *run, xio_error *err);
  /* Collective.  The copies of the rest of the input read back from the
   * output at `path` (open as run->out: the partial, or OUT) and compared
   * with it: `differs` names the first that is not the same ("" where all
   * are), *compared counts the bytes compared. */
  int (*compare_rest)(struct transpose_run *run, const char *path, char *differs, size_t size,
                      uint64_t *compared, xio_error *err);
} tool_output_kind;

extern const tool_output_kind tool_hdf5_output, tool_zarr_output;

#endif
