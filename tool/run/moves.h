/* The datasets a run moves and their moves: which datasets (--dims, or
 * IN's), each one's order planned and folded, the shapes each of its
 * moves reads and writes, the scratch files between moves, and the moves
 * run one after the other (a move is one xio_transpose). */
#ifndef TOOL_MOVES_H
#define TOOL_MOVES_H

#include "h5_transpose.h"
#include "rechunk_phases.h"
#include "run.h"

/* Collective.  Plans the order --axes or --dims give (else all axes
 * reversed; for `xpose verify`, `like` its OUT, with neither, the one fold
 * whose transpose is shaped as OUT, where one is) and folds run->in for
 * its first move.  Describes both shapes.  An exit status:
 * TOOL_EXIT_USAGE for an order that cannot be made. */
int tool_fold_input(transpose_run *run, const xio_matrix *like, xio_error *err);

/* Collective.  Dataset k of the run opened as run->in (in the input file
 * open already, if any) and folded (tool_fold_input; `like` as there).  An
 * exit status. */
int tool_open_dataset(transpose_run *run, int k, const xio_matrix *like, xio_error *err);

/* The shape of what move j of run->in's order reads (run->in's, for the
 * first), folded for it. */
xio_shape tool_move_source_shape(const transpose_run *run, int j);

/* Local.  The matrix move j reads, as planned: shaped and folded, not open
 * (the last move's, to plan the output's chunks and fold it). */
int tool_planned_source(const transpose_run *run, int j, xio_matrix *m, xio_error *err);

/* Local.  Folds run->out as the transpose of what the last move reads. */
int tool_fold_output(transpose_run *run, xio_error *err);

/* The checksums a dataset's move leaves for tool_verify_output: of what was
 * read, the first move's (the input's), and of what was written, the
 * last's (the output's). */
xio_checksums tool_dataset_sums(const transpose_run *run);

/* Whether the output will be compressed (h5_storage.c's rule). */
int tool_output_compressed(const transpose_run *run);

/* The largest pass planned with the default budget (0: as large as the
 * budgets allow, as for a budget the user gave; on GPUs, where the output
 * is not compressed): on the host passes.h's fastest size, and for a
 * compressed output at most an eighth of the data, on GPUs too, so that a
 * rank's I/O thread compresses one pass while the next is read and
 * transposed (the climate benchmark's 323 MB ran in 5.4 s in 2 passes,
 * 4.6 s in 8: tests/bench/RESULTS.md; an hourly year on one GPU, 2.28 GB,
 * verified in 6.7 s in 3 passes of the GPU's budget, 6.1 s in 97 passes of
 * a sixteenth of it), but not under 16 MiB: a small dataset cut in eight
 * gets output chunks as short along its time axis (they reach as far as a
 * pass), for no gain (200 variables of 192 KiB: 1200 passes and 200 took
 * the same 2.3-2.4 s).  Rechunking, a quarter of the columns: each pass
 * reads all of its rows, every input chunk again, and one pass of
 * everything writes slower (the 323 MB file rechunked to
 * time/1461,lat/16,lon/16, 2 ranks: 1 pass 4.62 s, 3 passes 3.70 s, 6
 * 3.68 s; 1 rank: 7.70, 6.75, 6.67 s, and 12 passes 7.51 s). */
uint64_t tool_default_pass_limit(const transpose_run *run);

/* Passes limited for run->src's move as the default budget limits them. */
void tool_limit_passes(const transpose_run *run, xio_transpose_options *topt);

/* Local.  Where `budget` is under what a rechunk's two phases need (plan,
 * as xio_phases_planned left it): fails, naming the least, for chunks of
 * 1 MiB or more that the user asked for; else says it in a note (the
 * passes write the chunks in parts).  0 where the budget is enough, or
 * the move does not need the phases. */
int tool_refuse_small_budget(const transpose_run *run, const xio_phases_plan *plan, uint64_t budget,
                             xio_error *err);

/* Collective where a scratch file is open.  Closes the scratch files of
 * the dataset moved and, with remove_files, rank 0 removes those its
 * order makes (errors go unreported: the run's outcome is decided, and a
 * stale scratch file is made anew).  A run of one move has none: nothing
 * happens, so a failed run's cleanup makes no call more than before. */
void tool_drop_scratch(transpose_run *run, int remove_files);

/* Collective.  Sets up move run->move of the dataset in run->in: its
 * source (run->in, or the scratch file the move before wrote, opened
 * where it is not open) and its destination (run->out, or a scratch file:
 * made, or with `resuming` the one a stopped run left), folded for it;
 * the record's fields that describe it. */
int tool_begin_move(transpose_run *run, int resuming, xio_error *err);

/* Collective.  The moves of the dataset in run->in, from run->move on,
 * as xio_transpose returns: each scratch file read back and checked
 * against what its move wrote before the next move reads it (unless
 * --verify none), and removed once the last move is done. */
int tool_move_dataset(transpose_run *run, xio_transpose_options *topt, xio_transpose_stats *stats,
                      xio_error *err);

/* Collective.  The datasets the run rearranges: with --dims every one
 * whose axes it reorders (its names checked against the input's), as
 * ncpdq does, or the one IN names; without, IN's, or where IN names none
 * the file's one dataset of 2 or more axes that is not a coordinate,
 * bounds or dimension scale (input_dataset.h).  An exit status. */
int tool_choose_datasets(transpose_run *run, xio_error *err);

/* Collective, after tool_choose_datasets: the first dataset as run->in. */
int tool_open_first_input(transpose_run *run, xio_error *err);

/* Collective, after tool_choose_datasets: the same, a netCDF-3 input's or
 * joined inputs' view filled first (tool_view_fill), once the datasets are
 * known: none found by name may be one. */
int tool_open_filled_input(transpose_run *run, xio_error *err);

#endif
