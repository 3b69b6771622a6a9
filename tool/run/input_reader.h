/* How the input is read, chosen once from the inputs (tool_check_inputs,
 * input_view.h): an HDF5 or netCDF-4 file as it is (no reader), or
 * through a netCDF-4 view of it made beside the output, a reader for each
 * kind: a netCDF-3 file (input_netcdf3.c), files joined as HDF5 files or
 * by netCDF-C (input_joined.c), a Zarr store or stores joined
 * (input_store.c).  A new kind of input is a new table. */
#ifndef TOOL_INPUT_READER_H
#define TOOL_INPUT_READER_H

#include <stddef.h>

#include "h5_error.h"
#include "path_list.h"

struct transpose_run;

typedef struct tool_input_reader {
  /* Rank 0: the view made at run->output.view_path, no values yet; the
   * datasets joined along the records listed (run->joined_datasets) and,
   * where it can say yet, each input's records (run->records); `warning`
   * what the run should say ("" for nothing). */
  int (*make)(struct transpose_run *run, char *warning, size_t size, xio_error *err);
  /* Rank 0: the view given every value but those of the datasets in
   * `skip` (what the run rearranges); joined, each input's records. */
  int (*fill)(struct transpose_run *run, const xio_path_list *skip, char *warning, size_t size,
              xio_error *err);
  /* Collective, run->in open in the view: its values read from where
   * they are (the view has none of them); NULL: the view holds them. */
  int (*attach)(struct transpose_run *run, xio_error *err);
  /* The run ending, on every rank: what rank 0 made beside the view
   * removed (NULL: nothing). */
  void (*drop)(struct transpose_run *run);
} tool_input_reader;

extern const tool_input_reader tool_joined_hdf5_reader;
#ifdef XIO_HAVE_NETCDF
extern const tool_input_reader tool_netcdf3_reader, tool_joined_netcdf_reader, tool_store_reader,
    tool_joined_stores_reader;
#endif

/* Collective: a dataset joined along the records read from every input
 * (join_source.h); the view holds the others'. */
int tool_read_joined(struct transpose_run *run, xio_error *err);

#endif
