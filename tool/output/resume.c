/* Resuming (resume.h): a partial output's record checked, its recorded
 * passes read back, progress recorded at each checkpoint, and what a
 * stopped or failed run says it kept. */
#include "resume.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "h5_storage.h"
#include "h5_verify.h"
#include "moves.h"
#include "pass_plan.h"
#include "rechunk_phases.h"
#include "report.h"
#include "size.h"
#include "stop_signals.h"

/* Rank 0: the record's identity, of the run's first dataset (in run->in). */
static int identity_on_root(void *arg, xio_error *err) {
  transpose_run *run = arg;
  const tool_options *opt = run->opt;
  if (tool_resume_identity(run->in_path.file, &run->in, output_name(run, 0), &run->record, err) ||
      tool_joined_inputs_hash(run->input_files + 1, run->input_count - 1, &run->record.joined_hash,
                              err))
    return -1;
  run->record.only = opt->only;
  tool_resume_record_set_list(&run->record, (const char(*)[512])run->rearranged.paths,
                              run->rearranged.count,
                              opt->dims   ? opt->dims
                              : opt->axes ? opt->axes
                                          : "");
  return 0;
}

static int remove_partial_on_root(void *arg, xio_error *err) {
  return tool_output_remove_partial(arg, err);
}

/* Rank 0 reads the partial's record and checks it is this transpose's.
 * One that is not is refused, or with --force removed (partial_found
 * cleared: the run starts over).  One whose record says it was still
 * being made (a run stopped while it copied the rest of the input) holds
 * no pass: it is removed, with a warning. */
static int resumable_on_root(void *arg, xio_error *err) {
  transpose_run *run = arg;
  tool_resume_record found;
  const char *partial = run->output.partial_path;
  char why[sizeof found.input_path + sizeof found.input_dataset + 256] = "";
  const int read = tool_resume_record_read(run->output.record_path, &found);
  if (read == 0 && found.copying) {
    if (tool_output_remove_partial(&run->output, err)) return -1;
    tool_report_warning(
        "starting over: %s holds no pass yet (the run that made it stopped while it copied "
        "the rest of %s)",
        partial, run->in_path.file);
    run->output.partial_found = 0;
    return 0;
  }
  if (read != 0)
    snprintf(why, sizeof why, "%.1200s holds no intact resume record (it is not a stopped run's)",
             run->output.record_path);
  else if (tool_resume_record_mismatch(&found, &run->record))
    snprintf(why, sizeof why, "%s (%s:%s)", tool_resume_record_mismatch(&found, &run->record),
             found.input_path, found.input_dataset);
  if (!why[0]) {
    run->record.progress = found.progress;
    run->record.sequence = found.sequence;
    run->record.dataset_index = found.dataset_index;
    run->record.finished = found.finished;
    run->record.move = found.move;
    run->record.first_read = found.first_read;
    run->record.source_sum = found.source_sum;
    return 0;
  }
  if (!run->opt->force)
    return xio_fail(err, "cannot resume from %s: %s; use --force to start over", partial, why);
  if (tool_output_remove_partial(&run->output, err)) return -1;
  tool_report_note("starting over: %s could not be resumed: %s", partial, why);
  run->output.partial_found = 0;
  return 0;
}

/* Collective.  Whether the partial output holds what its record says: its
 * recorded passes are read back and their checksum compared with the
 * record's.  0 when they match; 1, with why in err, when they do not or
 * cannot be read; XIO_STOPPED on a stop; -1 when MPI fails. */
static int check_recorded_passes(transpose_run *run, xio_error *err) {
  const xio_progress *done = &run->record.progress;
  if (done->passes_done == 0) return 0;
  tool_report_verbose("reading back the %lld recorded passes of %s", (long long)done->passes_done,
                      run->dst == &run->out ? run->output.partial_path : "a scratch file");
  uint64_t sum = 0;
  const int rc =
      xio_checksum_passes(run->dst, &run->src->shape, done, tool_stop_requested, &sum, err);
  if (rc == XIO_STOPPED) return rc;
  if (rc == 0 && sum == done->sums.written) return 0;
  if (rc == 0)
    xio_fail(err, "they read back with checksum %016llx, not the recorded %016llx",
             (unsigned long long)sum, (unsigned long long)done->sums.written);
  return 1; /* unreadable (a chunk index lost, say) is as good as wrong */
}

/* Whether each pass of grid writes whole chunks of the move's output. */
static int writes_whole_chunks(const transpose_run *run, const xio_pass_grid *grid) {
  int64_t along_rows, along_cols;
  xio_pass_output_units(run->src, run->dst, &along_rows, &along_cols);
  return xio_pass_grid_aligned(grid, along_rows, along_cols);
}

/* --layout or --filter given to a resumed run: the partial keeps the
 * storage it was started with; say so where that is not what they ask. */
static void note_storage_kept(const transpose_run *run) {
  const xio_storage *storage = &run->opt->storage;
  if (storage->layout == XIO_LAYOUT_AS_INPUT && storage->filter == XIO_FILTER_AS_INPUT) return;
  char kept[256], asked[256] = "";
  xio_describe_storage(&run->out, kept, sizeof kept);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  xio_error ignored;
  const xio_shape shape = xio_shape_transposed(&run->in.shape);
  const xio_storage_like like = xio_matrix_storage_like(&run->in);
  if (dcpl >= 0 && xio_storage_apply(&like, storage, &shape, run->in.type_size, dcpl,
                                     run->out_path.file, &ignored) == 0)
    xio_describe_dcpl(dcpl, asked, sizeof asked);
  if (dcpl >= 0) (void)H5Pclose(dcpl); /* only read */
  if (strcmp(kept, asked) != 0)
    tool_report_note(
        "resuming keeps the storage %s was started with (%s), not --layout and "
        "--filter's (%s); --force starts over with them",
        run->output.partial_path, kept, asked[0] ? asked : "refused");
}

/* Collective.  Whether the record's passes fit this run's budget (moved
 * in phases, its one pass of the whole matrix needs no more than the
 * phases' plan: rechunk_phases.h); where not, 0 with why. */
static int fits_budget(const transpose_run *run, const xio_transpose_options *topt,
                       const xio_matrix *source, xio_error *err) {
  const char *partial = run->output.partial_path;
  const xio_pass_grid *grid = &run->record.progress.grid;
  const uint64_t budget = xio_transpose_budget(topt);
  xio_transpose_options resumed = *topt;
  resumed.resume_from = &run->record.progress;
  xio_phases_plan plan;
  if (xio_pass_grid_fits(grid, source->elem_size, run->nranks, 1, budget) ||
      (run->moves == 1 &&
       xio_phases_planned(run->src, run->dst, &resumed, run->nranks, &plan, err) == 1))
    return 1;
  char need[32], have[32];
  tool_format_bytes(
      xio_pass_bytes(grid->block_rows, grid->block_cols, source->elem_size, run->nranks, 1), need,
      sizeof need);
  tool_format_bytes(budget, have, sizeof have);
  xio_fail(err,
           "cannot resume from %s: its passes need %s per rank on %d rank(s), and "
           "this run's budget is %s; give more memory (or ranks), or --force to "
           "start over",
           partial, need, run->nranks, have);
  return 0;
}

int tool_resume_partial(transpose_run *run, const xio_transpose_options *topt, xio_error *err) {
  const char *partial = run->output.partial_path, *shown = run->output.final_path;
  const xio_pass_grid *grid = &run->record.progress.grid;
  xio_matrix source; /* what the move the record is at reads */
  if (run->record.move >= run->moves || tool_planned_source(run, run->record.move, &source, err))
    return xio_fail(err, "cannot resume from %s: its record is at move %d of an order of %d",
                    partial, run->record.move + 1, run->moves);
  int checked = 1;
  run->move = run->record.move;
  if (run->kind->open(run, run->dataset_index, partial, shown, 1, err))
    ; /* unreadable (killed while HDF5 flushed it: its superblock past the
       * file's end, or its root group lost) is as good as wrong */
  else if (tool_fold_output(run, err) || H5Tequal(run->out.type, run->in.type) <= 0)
    return xio_fail(err, "cannot resume from %s: its dataset is not shaped for this transpose",
                    partial);
  else if (tool_begin_move(run, 1, err))
    ; /* a scratch file lost: started over */
  else if (!fits_budget(run, topt, &source, err)) {
    xio_error ignored;
    xio_close(&run->out, &ignored);
    return -1;
  } else if (run->dst->filtered && !writes_whole_chunks(run, grid))
    xio_fail(err, "they cut its compressed chunks (%lld x %lld), which a new run cannot rewrite",
             (long long)run->dst->chunk_rows, (long long)run->dst->chunk_cols);
  else
    checked = check_recorded_passes(run, err);
  if (checked == XIO_STOPPED) run->stopped = 1;
  if (checked == 0) {
    note_storage_kept(run);
    run->resumed = 1;
    run->output_read_back =
        run->rearranged.count == 1 && run->move + 1 == run->moves &&
        run->record.progress.passes_done == xio_pass_count(&run->record.progress.grid);
    return 1;
  }
  if (checked != 1) return -1;
  char why[sizeof err->message];
  snprintf(why, sizeof why, "%s", err->message);
  xio_error ignored;
  tool_drop_scratch(run, 1);
  if (xio_close(&run->out, &ignored) ||
      xio_on_root(run->comm, remove_partial_on_root, &run->output, err))
    return -1;
  tool_report_warning("starting over: the %lld passes recorded in %s are redone: %s",
                      (long long)run->record.progress.passes_done, partial, why);
  run->move = run->record.move = 0;
  run->record.first_read = run->record.source_sum = 0;
  run->src = &run->in, run->dst = &run->out;
  run->record.progress = (xio_progress){0};
  run->output.partial_found = 0;
  return 0;
}

/* Rank 0, before the partial is made: a record that says the partial
 * holds no pass yet, so that a run stopped before its first checkpoint
 * (while it copies the rest of the input) leaves a partial that --resume
 * knows to start over; the first checkpoint replaces it. */
static int record_copying_on_root(void *arg, xio_error *err) {
  transpose_run *run = arg;
  tool_resume_record copying = run->record;
  copying.copying = 1;
  return tool_resume_record_write(run->output.record_path, &copying, err);
}

/* Rank 0.  Fails when the input is no longer the file that was read: what
 * was read since it changed (a truncated file reads as zeros) is not its
 * transpose, nor that of the file before. */
static int check_input_unchanged(transpose_run *run, xio_error *err) {
  tool_input_identity now;
  uint64_t joined = 0;
  const char *change = tool_input_identity_of(run->in_path.file, &now, err) != 0
                           ? "it was removed or renamed"
                           : tool_input_identity_change(&run->record.input, &now);
  if (!change &&
      (tool_joined_inputs_hash(run->input_files + 1, run->input_count - 1, &joined, err) != 0 ||
       joined != run->record.joined_hash))
    change = "one of the inputs joined after it changed, moved or was removed";
  if (!change) return 0;
  run->input_changed = 1;
  return xio_fail(err, "%s changed while it was being transposed: %s; nothing was published",
                  run->in_path.file, change);
}

int tool_record_progress(const xio_progress *done, int synced, void *user_data, xio_error *err) {
  transpose_run *run = user_data;
  if (!synced && xio_flush(run->dst, err)) return -1;
  if (run->rank != 0) return 0;
  if (done->passes_done == 0 && run->dst->filtered && !run->noted_unaligned &&
      !writes_whole_chunks(run, &done->grid)) {
    run->noted_unaligned = 1; /* records of no pass come before and after the first pass */
    tool_report_note(
        "the passes (blocks of %lld x %lld) do not hold whole %lld x %lld chunks of %s, so a "
        "stopped run of it starts over when resumed (compressed chunks written in part cannot "
        "be continued); a larger --memory, or --layout chunked=... with chunks that divide "
        "the blocks, keeps it resumable",
        (long long)done->grid.block_cols, (long long)done->grid.block_rows,
        (long long)run->out.chunk_rows, (long long)run->out.chunk_cols, run->out_path.file);
  }
  if (check_input_unchanged(run, err)) return -1;
  run->record.progress = *done;
  return tool_resume_record_write(run->output.record_path, &run->record, err);
}

static int input_unchanged_on_root(void *arg, xio_error *err) {
  return check_input_unchanged(arg, err);
}

int tool_work_recorded(const transpose_run *run) {
  return run->record.dataset_index > 0 || run->record.move > 0 ||
         run->record.progress.passes_done > 0;
}

int tool_all_passes_done(const transpose_run *run) {
  return run->record.dataset_index + 1 == run->rearranged.count &&
         run->record.move + 1 == run->moves &&
         run->record.progress.passes_done == xio_pass_count(&run->record.progress.grid);
}

void tool_describe_progress(const transpose_run *run, char *text, size_t size) {
  const long long done = (long long)run->record.progress.passes_done,
                  passes = (long long)xio_pass_count(&run->record.progress.grid);
  char move[64] = "";
  if (run->moves > 1)
    snprintf(move, sizeof move, " of move %d of %d", run->record.move + 1, run->moves);
  if (run->rearranged.count == 1)
    snprintf(text, size, "%lld of %lld passes%s", done, passes, move);
  else
    snprintf(text, size, "%d of %d datasets and %lld of %lld passes%s of %.100s",
             run->record.dataset_index, run->rearranged.count, done, passes, move,
             run->rearranged.paths[run->record.dataset_index]);
}

int tool_resume_begin(transpose_run *run, xio_error *err) {
  if (xio_on_root(run->comm, identity_on_root, run, err) ||
      XIO_MPICHECK(MPI_Bcast(&run->record, (int)sizeof run->record, MPI_BYTE, 0, run->comm), err))
    return -1;
  if (!run->output.partial_found) return 0;
  return xio_on_root(run->comm, resumable_on_root, run, err) ||
                 XIO_MPICHECK(
                     MPI_Bcast(&run->record, (int)sizeof run->record, MPI_BYTE, 0, run->comm),
                     err) ||
                 XIO_MPICHECK(MPI_Bcast(&run->output.partial_found, 1, MPI_INT, 0, run->comm), err)
             ? -1
             : 0;
}

int tool_record_copying(transpose_run *run, xio_error *err) {
  return xio_on_root(run->comm, record_copying_on_root, run, err);
}

int tool_check_input_unchanged(transpose_run *run, xio_error *err) {
  return xio_on_root(run->comm, input_unchanged_on_root, run, err);
}

/* The message of a run stopped by a signal: what it kept, if anything. */
void tool_say_stopped(const transpose_run *run) {
  const int signal_number = tool_stop_signal_agreed(run->comm);
  char done[256];
  tool_describe_progress(run, done, sizeof done);
  if (run->keep_partial && tool_all_passes_done(run))
    tool_report_error(
        "stopped by %s before publishing: all %s are done and kept in %s: "
        "run the same command with --resume to check and publish them",
        tool_signal_name(signal_number), done, run->output.partial_path);
  else if (run->keep_partial)
    tool_report_error(
        "stopped by %s after %s; %s keeps them: run the same "
        "command with --resume to continue",
        tool_signal_name(signal_number), done, run->output.partial_path);
  else
    tool_report_error("stopped by %s before any pass was done; nothing was kept",
                      tool_signal_name(signal_number));
}

/* The message of a failed run: the error, and what was kept. */
void tool_say_failed(transpose_run *run, int exit_code, xio_error *err) {
  if (run->input_changed) run->keep_partial = 0; /* rank 0's say: it removes the partial */
  /* A compressed output's space is not reserved ahead: a full disk is the likely cause. */
  if (run->compressed && run->output.owned && exit_code == TOOL_EXIT_ERROR && !run->input_changed) {
    const xio_pass_grid *grid = &run->record.progress.grid;
    tool_output_explain_full(
        &run->output, (uint64_t)grid->block_rows * (uint64_t)grid->block_cols * run->in.elem_size,
        run->record.progress.passes_done, xio_pass_count(grid), err);
  }
  if (run->keep_partial && run->output.owned && tool_work_recorded(run)) {
    const size_t used = strlen(err->message);
    char done[256];
    tool_describe_progress(run, done, sizeof done);
    const int n =
        access(run->output.partial_path, F_OK) == 0
            ? snprintf(err->message + used, sizeof err->message - used,
                       "; the %s done are kept in %s: once the cause is fixed, "
                       "the same command with --resume continues",
                       done, run->output.partial_path)
            : snprintf(err->message + used, sizeof err->message - used,
                       "; %s was removed while xpose was writing it: the %s done are lost",
                       run->output.partial_path, done);
    if (n < 0) err->message[used] = '\0'; /* the error alone, then */
  }
  tool_report_error("%s", err->message);
}
