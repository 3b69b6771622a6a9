/* An input read through its view (input_reader.h): a netCDF-3 input,
 * a Zarr store, or several inputs joined along their records.  The view
 * is made beside the output (output_file.h's view_path) before the
 * datasets are chosen from it, given the values of what the run copies
 * once they are, the rearranged datasets' values read from the input(s)
 * themselves, and removed when the run ends, whatever its outcome (a
 * resumed run makes it again). */
#ifndef TOOL_INPUT_VIEW_H
#define TOOL_INPUT_VIEW_H

#include "run.h"

/* Collective.  Every input checked (input_file.h), and the reader of
 * them all chosen (run->reader; NULL: an HDF5 file read as it is). */
int tool_check_inputs(transpose_run *run, xio_error *err);

/* Collective, the output prepared.  Rank 0 makes the view (joined: of
 * the first input's structure, no records yet); every rank learns which
 * of its datasets are joined (run->joined_datasets). */
int tool_view_make(transpose_run *run, xio_error *err);

/* Collective, the datasets chosen, the view open on no rank.  Rank 0
 * copies into it the values of every variable the run does not rearrange
 * (joined: checking every input as it goes), and every rank learns each
 * input's records. */
int tool_view_fill(transpose_run *run, xio_error *err);

/* Collective, run->in just opened in the view: its values read from the
 * input(s).  Nothing to do for other inputs. */
int tool_view_read_input(transpose_run *run, xio_error *err);

/* The view closed on every rank: rank 0 removes it, if made; every rank
 * forgets its datasets joined. */
void tool_view_drop(transpose_run *run);

#endif
