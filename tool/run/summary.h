/* What a run says of itself: the dataset it moves now and its plan and
 * time split (--verbose), its result in one line, or --json's object. */
#ifndef TOOL_SUMMARY_H
#define TOOL_SUMMARY_H

#include "h5_transpose.h"
#include "phases_plan.h"
#include "report.h"
#include "run.h"

/* Verbose: the passes' plan, the budget and rank 0's time split. */
void tool_print_plan(const xio_matrix *in, uint64_t budget, int nranks,
                     const xio_transpose_stats *stats);

/* The JSON summary's description of the input and the output. */
void tool_describe_pair(tool_json *j, const transpose_run *run, const char *type_text,
                        const char *out_dataset);

/* The result: one line, or with --json one object. */
void tool_print_summary(const transpose_run *run, const xio_transpose_stats *stats,
                        const char *type_text, double total_seconds, double verify_seconds);

/* Verbose: what is moved now. */
void tool_say_dataset(const transpose_run *run, const char *type_text);

/* Local.  The plan of a move in two phases (rechunk_phases.h), in words,
 * for -v and --plan: "in two phases through OUT.xpose-scratch-1: ...". */
void tool_describe_phases(const transpose_run *run, const xio_phases_plan *plan, char *text,
                          size_t size);

/* Verbose: that plan, and why. */
void tool_say_phases(const transpose_run *run, const xio_phases_plan *plan);

/* The progress lines of run's move now begin: they name its dataset
 * (where the run moves several) and the move (where it takes several). */
void tool_progress_begin(const transpose_run *run, int64_t passes_before);

/* Rank 0: the dataset in run->in moved, in `seconds`, noted for the
 * summary (run->done). */
void tool_note_dataset_done(transpose_run *run, double seconds);

#endif
