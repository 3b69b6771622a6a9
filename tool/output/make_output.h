/* The partial output made: an earlier run's resumed, or a new one with
 * its space reserved, the rest of the input copied and an output dataset
 * for each dataset moved; the file's attributes and what parallel HDF5
 * cannot write, once the passes are done. */
#ifndef TOOL_MAKE_OUTPUT_H
#define TOOL_MAKE_OUTPUT_H

#include "h5_transpose.h"
#include "run.h"

/* Collective.  The input file's attributes onto the output's, its
 * history gaining this run's command line, dated, as NCO's tools do; what
 * a stopped run wrote already is kept. */
int tool_copy_file_attributes(transpose_run *run, xio_error *err);

/* Local.  This run's line of the output's history ("Sat Dec  5 06:01:02
 * 2026: xpose ..."), where the input keeps one (netCDF files do), else "". */
void tool_history_line(const transpose_run *run, char *line, size_t size);

/* Collective, with the output closed.  Unless --only, what parallel HDF5
 * cannot write: the datasets of variable-length data, and the copies' own
 * dimension scales (those of the rearranged datasets are attached when
 * they are made), by rank 0 alone (h5_copy.h says why). */
int tool_finish_rest(transpose_run *run, xio_error *err);

/* Collective.  Dataset k's output, in the file `path` (shown as `shown`),
 * as run->out: the file opened where it is not open yet. */
int tool_open_output_of(transpose_run *run, int k, const char *path, const char *shown,
                        xio_error *err);

/* Local.  How run->in's output is stored (--layout, --filter, --chunks,
 * else chunks chosen to fit the passes topt plans for it), and `last`,
 * what its last move reads, as planned. */
int tool_output_storage(const transpose_run *run, const xio_transpose_options *topt,
                        xio_matrix *last, xio_storage *storage, xio_error *err);

/* Collective.  The partial output: an earlier run's to continue (with
 * --resume), at the dataset its record is at, or a new one with its
 * space reserved, the rest of the input and a first record. */
int tool_start_output(transpose_run *run, const xio_transpose_options *topt, xio_error *err);

/* Collective, once dataset run->dataset_index is moved: the next one opened,
 * its output made beside it, its passes planned afresh. */
int tool_next_dataset(transpose_run *run, xio_transpose_options *topt, xio_error *err);

#endif
