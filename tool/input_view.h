/* A netCDF-3 input, read through its netCDF-4 view (netcdf3_view.h):
 * the view made beside the output (output_file.h's view_path) before the
 * datasets are chosen from it, given the values of what the run copies
 * once they are, the rearranged datasets' values read from the input
 * itself (netcdf3.h), and the view removed when the run ends, whatever
 * its outcome (a resumed run makes it again). */
#ifndef TOOL_NETCDF3_INPUT_H
#define TOOL_NETCDF3_INPUT_H

#include "run.h"

/* Collective, the output prepared.  Rank 0 makes the view. */
int tool_netcdf3_view_make(transpose_run *run, xio_error *err);

/* Collective, the datasets chosen, the view open on no rank.  Rank 0
 * copies into it the values of every variable the run does not rearrange. */
int tool_netcdf3_view_fill(transpose_run *run, xio_error *err);

/* Collective, run->in just opened in the view: its values read from the
 * input.  Nothing to do for other inputs. */
int tool_netcdf3_read_input(transpose_run *run, xio_error *err);

/* Rank 0, the view closed on every rank: the view removed, if made. */
void tool_netcdf3_view_drop(const transpose_run *run);

#endif
