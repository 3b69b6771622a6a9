/* The run's resume side, beside its record (resume_record.h): the
 * partial output's record checked as this transpose's, the partial
 * reopened for its recorded passes (read back first), progress recorded
 * at each checkpoint, and what the record says done. */
#ifndef TOOL_RESUME_H
#define TOOL_RESUME_H

#include "h5_transpose.h"
#include "run.h"

/* Collective.  Opens the partial an earlier run left, for its recorded
 * passes to be continued: 1 when it holds them, 0 when it was found wrong
 * and removed (the passes are redone in a new partial), -1 on error or
 * when stopped by a signal (run->stopped). */
int tool_resume_partial(transpose_run *run, const xio_transpose_options *topt, xio_error *err);

/* The run's checkpoint (xio_checkpoint_fn; user_data: the run): the data and HDF5's own structures
 * that reach it (a compressed output's chunk index) on storage first (H5Fflush ends in
 * MPI_File_sync, an fsync on every rank; raw passes synced already, beside
 * the next ones, leave HDF5 nothing to flush); only then, if the input is
 * still what was read, rank 0's record.  Every rank agreed that the step
 * before succeeded, so none is left behind in that collective call. */
int tool_record_progress(const xio_progress *done, int synced, void *user_data, xio_error *err);

/* Whether the partial holds recorded work: passes, or datasets done; and
 * whether it holds all of it.  These and tool_describe_progress read the
 * record's dataset, not the one a read-back may be at. */
int tool_work_recorded(const transpose_run *run);
int tool_all_passes_done(const transpose_run *run);

/* "3 of 8 passes", or of several datasets "2 of 5 datasets and 3 of 8
 * passes of /pr". */
void tool_describe_progress(const transpose_run *run, char *text, size_t size);

/* Collective.  The record's identity (of the run's first dataset, in
 * run->in) on every rank; where a partial output was found, its record
 * read and checked as this transpose's on rank 0: one that is not is
 * refused, or with --force removed (partial_found cleared: the run starts
 * over), and one whose run stopped while it copied the rest of the input
 * holds no pass and is removed, with a warning. */
int tool_resume_begin(transpose_run *run, xio_error *err);

/* Collective, before the partial is made: rank 0 records that it holds
 * no pass yet, so that a run stopped before its first checkpoint (while
 * it copies the rest of the input) leaves a partial that --resume knows
 * to start over; the first checkpoint replaces it. */
int tool_record_copying(transpose_run *run, xio_error *err);

/* Collective.  Fails when the input is no longer the file that was read
 * (rank 0 looks): what was read since it changed (a truncated file reads
 * as zeros) is not its transpose, nor that of the file before. */
int tool_check_input_unchanged(transpose_run *run, xio_error *err);

/* Collective.  The message of a run stopped by a signal: what it kept,
 * if anything. */
void tool_say_stopped(const transpose_run *run);

/* The message of a failed run: the error, and what was kept (the
 * partial is not kept where the input changed). */
void tool_say_failed(transpose_run *run, int exit_code, xio_error *err);

#endif
