/* xpose: transpose a 2-D HDF5 dataset with MPI ranks, out of core. */
#define _POSIX_C_SOURCE 200809L /* localtime_r */
#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "axes.h"
#include "cleanup_watchdog.h"
#include "deflate.h"
#include "gpus.h"
#include "h5_attributes.h"
#include "h5_copy.h"
#include "h5_matrix.h"
#include "h5_scales.h"
#include "h5_transpose.h"
#include "h5_types.h"
#include "h5_verify.h"
#include "host_threads.h"
#include "input_dataset.h"
#include "input_file.h"
#include "mpi_hints.h"
#include "node_memory.h"
#include "options.h"
#include "output_file.h"
#include "report.h"
#include "resume_record.h"
#include "session.h"
#include "size.h"
#include "stop_signals.h"
#include "xpose.h"

typedef struct {
  char file[4096], dataset[512];
} dataset_path;

static int parse_paths(const tool_options *opt, dataset_path *in, dataset_path *out,
                       xio_error *err) {
  if (xio_split_path(opt->input, in->file, sizeof in->file, in->dataset, sizeof in->dataset))
    return xio_fail(err, "invalid input '%s': expected FILE.h5 or FILE.h5:/dataset", opt->input);
  if (xio_split_path(opt->output, out->file, sizeof out->file, out->dataset, sizeof out->dataset))
    return xio_fail(err, "invalid output '%s': expected FILE.h5 or FILE.h5:/dataset", opt->output);
  return 0;
}

static uint64_t matrix_bytes(const xio_matrix *m) {
  return (uint64_t)m->rows * (uint64_t)m->cols * m->elem_size;
}

static void print_plan(const xio_matrix *in, uint64_t budget, int nranks,
                       const xio_transpose_stats *stats) {
  char budget_text[32], buffers[32];
  const xio_pass_grid *grid = &stats->done.grid;
  tool_format_bytes(budget, budget_text, sizeof budget_text);
  tool_format_bytes(stats->buffer_bytes, buffers, sizeof buffers);
  tool_report_verbose("%d rank(s), memory budget %s per rank, buffers %s per rank", nranks,
                      budget_text, buffers);
  tool_report_verbose("rank 0 before the first pass: %.3f s (allocating the buffers %.3f s); %d "
                      "checkpoint(s) (syncs, records) %.3f s, the last %.3f s",
                      stats->setup_seconds, stats->buffers_seconds, stats->checkpoints,
                      stats->checkpoint_seconds, stats->last_checkpoint_seconds);
  char items[64] = "";
  if (in->items > 1) snprintf(items, sizeof items, " each of %lld matrices", (long long)in->items);
  tool_report_verbose(
      "%lld pass(es): %lld x %lld grid of blocks up to %lld x %lld (of%s %lld x %lld)",
      (long long)xio_pass_count(grid), (long long)grid->row_passes, (long long)grid->col_passes,
      (long long)grid->block_rows, (long long)grid->block_cols, items, (long long)grid->rows,
      (long long)grid->cols);
  if (stats->overlapped)
    tool_report_verbose("time on rank 0: %s: read %.3f s, write %.3f s, both in flight %.3f s; "
                        "main thread: transpose and exchange %.3f s, checksums %.3f s (by %s), "
                        "waiting for I/O %.3f s",
                        stats->io, stats->read_seconds, stats->write_seconds, stats->both_seconds,
                        stats->transpose_seconds, stats->checksum_seconds, stats->summed_by,
                        stats->wait_seconds);
  else
    tool_report_verbose("time on rank 0, one after the other: %s: read %.3f s, write %.3f s; "
                        "transpose and exchange %.3f s, checksums %.3f s (by %s)",
                        stats->io, stats->read_seconds, stats->write_seconds,
                        stats->transpose_seconds, stats->checksum_seconds, stats->summed_by);
}

/* Collective.  Host or CUDA for this run; with CUDA, each rank's GPU is
 * current afterwards.  --backend auto takes GPUs when every rank has one,
 * and says why not where an xpose built with CUDA runs on the host.
 * Returns an exit status: --backend cuda, --exchange p2p, nccl or staged
 * without GPUs are usage errors. */
static int choose_backend(const tool_options *opt, MPI_Comm comm, xpose_backend_kind *backend,
                          xio_error *err) {
  *backend = XPOSE_BACKEND_HOST;
  if (opt->backend == XPOSE_BACKEND_HOST) return TOOL_EXIT_OK;
  const int needs_gpu = opt->exchange == XPOSE_EXCHANGE_NCCL ||
                        opt->exchange == XPOSE_EXCHANGE_STAGED ||
                        opt->exchange == XPOSE_EXCHANGE_P2P;
  int device = -1;
  if (xpose_cuda_select_device(comm, &device) == XPOSE_SUCCESS) {
    *backend = XPOSE_BACKEND_CUDA;
#ifdef XPOSE_HAVE_CUDA
    /* every rank has the same argv */
    if (opt->verbose && tool_report_gpu_map(comm, device, err)) return TOOL_EXIT_ERROR;
#endif
    return TOOL_EXIT_OK;
  }
#ifdef XPOSE_HAVE_CUDA
  int rank;
  char why[160];
  if (XIO_MPI(MPI_Comm_rank(comm, &rank), err)) return TOOL_EXIT_ERROR;
  tool_why_no_gpu(why, sizeof why);
  /* The lowest rank without a GPU speaks for all. */
  if (why[0]) xio_fail(err, "rank %d can use no GPU: %s", rank, why);
  if (xio_agree(comm, why[0] ? -1 : 0, err) == 0) /* devices seen, but not selected */
    xio_fail(err, "a rank could not select its GPU (--verbose says why)");
  if (opt->backend == XPOSE_BACKEND_AUTO && !needs_gpu) {
    tool_report_note("transposing on the host: %s", err->message);
    return TOOL_EXIT_OK;
  }
  const char *reason = err->message;
#else
  const char *reason = "this xpose was built without CUDA";
  if (opt->backend == XPOSE_BACKEND_AUTO && !needs_gpu) return TOOL_EXIT_OK;
#endif
  char message[sizeof err->message];
  snprintf(message, sizeof message, "%s", reason);
  if (opt->backend == XPOSE_BACKEND_CUDA)
    xio_fail(err, "--backend cuda: %s", message);
  else
    xio_fail(err, "--exchange %s moves GPU buffers: %s",
             opt->exchange == XPOSE_EXCHANGE_NCCL     ? "nccl"
             : opt->exchange == XPOSE_EXCHANGE_STAGED ? "staged"
                                                      : "p2p",
             message);
  return TOOL_EXIT_USAGE;
}

/* One run of xpose: what its steps share. */
typedef struct {
  const tool_options *opt;
  MPI_Comm comm;
  int rank, nranks;
  dataset_path in_path, out_path;
  tool_dataset_list rearranged; /* the input's datasets the run moves, one after the other */
  int variable;                 /* which of them is in `in` (and in `out`, while moving) */
  uint64_t moved_bytes;         /* of the datasets moved before it */
  int64_t moved_passes;
  xio_matrix in, out;
  char in_shape[512], out_shape[512]; /* "time x lat x lon (12 x 180 x 360)" */
  /* The order of the dataset in `in` (order[i]: its axis that becomes the
   * output's axis i), and the moves that make it (tool_axes_plan): where
   * there are several, each but the last writes a scratch file beside the
   * output, "OUT.xpose-scratch-J", which the next reads; the record says
   * which move it is at. */
  int order[XIO_MAX_DIMS];
  int reversed;     /* N-D with no order given: numpy's .T */
  int scratch_lost; /* a scratch file read back wrong: nothing to keep */
  int moves, move;
  tool_move folds[TOOL_MAX_MOVES];
  xio_matrix scratch[2]; /* move j writes scratch[j % 2]; move j + 1 reads it */
  xio_matrix *src, *dst; /* the move's: `in` or a scratch; a scratch or `out` */
  tool_output_file output;
  tool_resume_record record; /* identity and progress of the partial output */
  int resumed;
  int output_read_back; /* every pass was resumed and read back: no second read-back */
  int stopped;          /* by a signal, outside the passes */
  int input_changed;    /* rank 0: the input is not the file that was read */
  int compressed;       /* the output's space could not be reserved ahead */
  int noted_unaligned;  /* rank 0 said that a stopped run of it would start over */
  xpose_backend_kind backend;
  uint64_t budget, gpu_budget;
} transpose_run;

static int fold_output(transpose_run *run, xio_error *err);
static xio_shape move_source_shape(const transpose_run *run, int j);
static int planned_source(const transpose_run *run, int j, xio_matrix *m, xio_error *err);
static int begin_move(transpose_run *run, int resuming, xio_error *err);
static void drop_scratch(transpose_run *run, int remove_files);
static xio_checksums variable_sums(const transpose_run *run);

/* The output dataset of the run's dataset k: OUT's where the command line
 * names one (a run of one dataset), else the input's path. */
static const char *output_name(const transpose_run *run, int k) {
  return run->out_path.dataset[0] ? run->out_path.dataset : run->rearranged.paths[k];
}

/* Rank 0: the record's identity, of the run's first dataset (in run->in). */
static int identity_on_root(void *arg, xio_error *err) {
  transpose_run *run = arg;
  const tool_options *opt = run->opt;
  if (tool_resume_identity(run->in_path.file, &run->in, output_name(run, 0), &run->record, err))
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
    run->record.variable = found.variable;
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
  if (dcpl >= 0 && xio_storage_apply(&run->in, storage, &shape, run->in.type_size, dcpl,
                                     run->out_path.file, &ignored) == 0)
    xio_describe_dcpl(dcpl, asked, sizeof asked);
  if (dcpl >= 0) (void)H5Pclose(dcpl); /* only read */
  if (strcmp(kept, asked) != 0)
    tool_report_note(
        "resuming keeps the storage %s was started with (%s), not --layout and "
        "--filter's (%s); --force starts over with them",
        run->output.partial_path, kept, asked[0] ? asked : "refused");
}

/* Collective.  Opens the partial an earlier run left, for its recorded
 * passes to be continued: 1 when it holds them, 0 when it was found wrong
 * and removed (the passes are redone in a new partial), -1 on error or
 * when stopped by a signal (run->stopped). */
static int resume_partial(transpose_run *run, const xio_transpose_options *topt,
                          const char *out_dataset, xio_error *err) {
  const char *partial = run->output.partial_path, *shown = run->output.final_path;
  const xio_pass_grid *grid = &run->record.progress.grid;
  const uint64_t budget = xio_transpose_budget(topt);
  xio_matrix source; /* what the move the record is at reads */
  if (run->record.move >= run->moves || planned_source(run, run->record.move, &source, err))
    return xio_fail(err, "cannot resume from %s: its record is at move %d of an order of %d",
                    partial, run->record.move + 1, run->moves);
  if (!xio_pass_grid_fits(grid, source.elem_size, run->nranks, budget)) {
    char need[32], have[32];
    tool_format_bytes(
        xio_pass_bytes(grid->block_rows, grid->block_cols, source.elem_size, run->nranks), need,
        sizeof need);
    tool_format_bytes(budget, have, sizeof have);
    return xio_fail(err,
                    "cannot resume from %s: its passes need %s per rank on %d rank(s), and "
                    "this run's budget is %s; give more memory (or ranks), or --force to "
                    "start over",
                    partial, need, run->nranks, have);
  }
  int checked = 1;
  run->move = run->record.move;
  if (xio_open_existing(run->comm, partial, shown, out_dataset, 1, &run->out, err))
    ; /* unreadable (killed while HDF5 flushed it: its superblock past the
       * file's end, or its root group lost) is as good as wrong */
  else if (fold_output(run, err) || H5Tequal(run->out.type, run->in.type) <= 0)
    return xio_fail(err, "cannot resume from %s: its dataset is not shaped for this transpose",
                    partial);
  else if (begin_move(run, 1, err))
    ; /* a scratch file lost: started over */
  else if (run->dst->filtered &&
           !xio_pass_grid_aligned(grid, run->dst->chunk_cols, run->dst->chunk_rows))
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
  drop_scratch(run, 1);
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

/* Collective.  The input file's attributes onto the output's, its
 * history gaining this run's command line, dated, as NCO's tools do; what
 * a stopped run wrote already is kept. */
static int copy_file_attributes(transpose_run *run, xio_error *err) {
  char line[sizeof run->opt->command_line + 64] = "";
  if (run->rank == 0) {
    const time_t now = time(NULL);
    char when[64] = "";
    struct tm local;
    if (localtime_r(&now, &local)) strftime(when, sizeof when, "%a %b %e %H:%M:%S %Y", &local);
    snprintf(line, sizeof line, "%s: %s", when, run->opt->command_line);
  }
  xio_skipped_attributes skipped;
  if (XIO_MPI(MPI_Bcast(line, (int)sizeof line, MPI_CHAR, 0, run->comm), err) ||
      xio_copy_file_attributes(&run->in, &run->out, line, &skipped, err))
    return -1;
  if (skipped.count)
    tool_report_warning(
        "%d attribute(s) of %s were not copied (%s): references cannot point "
        "from %s into %s",
        skipped.count, run->in_path.file, skipped.names, run->in_path.file, run->out_path.file);
  return 0;
}

/* Bytes per rank for one piece of what is read or copied outside the
 * passes (the read-back, the rest of the input): the budget, up to 64 MiB;
 * larger pieces are no faster, and overlap nothing. */
static uint64_t piece_budget(const transpose_run *run) {
  const uint64_t most = (uint64_t)64 << 20;
  return run->budget < most ? run->budget : most;
}

/* The run's datasets, as h5_copy.h lists them. */
static xio_path_list rearranged_list(const transpose_run *run) {
  return (xio_path_list){(const char(*)[512])run->rearranged.paths, run->rearranged.count};
}

static int finish_on_root(void *arg, xio_error *err) {
  transpose_run *run = arg;
  const xio_path_list rearranged = rearranged_list(run);
  xio_copy_stats copied;
  if (xio_finish_rest(run->in.file, run->output.partial_path, run->in_path.file, &rearranged,
                      piece_budget(run), &copied, err))
    return -1;
  if (copied.datasets) {
    char bytes[32];
    tool_format_bytes(copied.bytes, bytes, sizeof bytes);
    tool_report_verbose("copied %d dataset(s) of variable-length data (%s) on rank 0 alone",
                        copied.datasets, bytes);
  }
  if (copied.skipped.count)
    tool_report_warning(
        "%d attribute(s) in %s were not copied (%s): references cannot point from %s into %s",
        copied.skipped.count, run->in_path.file, copied.skipped.names, run->out_path.file,
        run->in_path.file);
  return 0;
}

/* Collective, with the output closed.  Unless --only, what parallel HDF5
 * cannot write: the datasets of variable-length data, and the copies' own
 * dimension scales (those of the rearranged datasets are attached when
 * they are made), by rank 0 alone (h5_copy.h says why). */
static int finish_rest(transpose_run *run, xio_error *err) {
  return run->opt->only ? 0 : xio_on_root(run->comm, finish_on_root, run, err);
}

/* Whether the output will be compressed (h5_storage.c's rule). */
static int output_compressed(const transpose_run *run) {
  const xio_storage *storage = &run->opt->storage;
  return storage->filter == XIO_FILTER_GZIP || storage->filter == XIO_FILTER_SHUFFLE_GZIP ||
         (storage->filter == XIO_FILTER_AS_INPUT && run->in.filtered &&
          storage->layout != XIO_LAYOUT_CONTIGUOUS);
}

static int open_variable(transpose_run *run, int k, const xio_matrix *like, xio_error *err);

/* Collective.  Dataset k's output, in the file `path` (shown as `shown`),
 * as run->out: the file opened where it is not open yet. */
static int open_output_of(transpose_run *run, int k, const char *path, const char *shown,
                          xio_error *err) {
  return run->out.comm != MPI_COMM_NULL
             ? xio_use_dataset(&run->out, shown, output_name(run, k), err)
             : xio_open_existing(run->comm, path, shown, output_name(run, k), 0, &run->out, err);
}

/* Collective.  Dataset k of the run, opened to be moved next: the
 * record's fields that describe it (rank 0 writes the records). */
static int begin_variable(transpose_run *run, int k, xio_error *err) {
  if (open_variable(run, k, NULL, err) != TOOL_EXIT_OK) return -1;
  run->record.variable = k;
  const int rc = run->rank == 0 ? tool_resume_identity_dataset(&run->in, output_name(run, k),
                                                               &run->record, err)
                                : 0;
  return xio_agree(run->comm, rc, err);
}

static uint64_t default_pass_limit(const transpose_run *run);

/* Passes limited for run->in where the default budget limits them. */
static void limit_passes_for(const transpose_run *run, xio_transpose_options *topt) {
  if (topt->pass_bytes_limit) topt->pass_bytes_limit = default_pass_limit(run);
}

/* Collective.  The transpose of run->in made in the partial output
 * (run->out's file), with its attributes and dimension scales.  Its
 * chunks fit the passes planned for it. */
static int make_output_dataset(transpose_run *run, const xio_transpose_options *topt,
                               xio_error *err) {
  const char *shown = run->output.final_path;
  const char *name = output_name(run, run->variable);
  xio_skipped_attributes skipped;
  int scales = 0;
  xio_matrix last; /* what the last move reads: its passes write the output */
  if (planned_source(run, run->moves - 1, &last, err)) return -1;
  const xio_shape out_shape = xio_shape_transposed(&last.shape);
  xio_storage storage = run->opt->storage; /* chunks chosen fit the passes */
  xio_transpose_options planned = *topt;   /* next_variable's, when its turn comes */
  limit_passes_for(run, &planned);
  xio_transpose_block(&last, &planned, run->nranks, output_compressed(run), &storage.pass_rows,
                      &storage.pass_cols);
  storage.pass_ranks = run->nranks;
  if (xio_create_dataset(&run->out, shown, name, run->in.type, &run->in, &storage, &out_shape,
                         err) ||
      xio_copy_attributes(&run->in, &run->out, run->order, &skipped, err) ||
      xio_copy_dimension_scales(&run->in, &run->out, run->order, &scales, err))
    return -1;
  run->compressed |= run->out.filtered;
  if (skipped.count)
    tool_report_warning(
        "%d attribute(s) of %s:%s were not copied (%s): references cannot point from %s into "
        "%s",
        skipped.count, run->in_path.file, run->in.dataset, skipped.names, run->out_path.file,
        run->in_path.file);
  if (scales && run->opt->verbose)
    tool_report_verbose("%s: %d dimension scale(s) attached with the axes moved", run->in.dataset,
                        scales);
  return 0;
}

/* Collective.  The output dataset of run->in, made already, as run->out. */
static int use_output_dataset(transpose_run *run, xio_error *err) {
  return xio_use_dataset(&run->out, run->output.final_path, output_name(run, run->variable), err) ||
                 fold_output(run, err)
             ? -1
             : 0;
}

typedef struct {
  transpose_run *run;
  const xio_transpose_options *topt;
} make_request;

/* Collective (xio_make_rearranged_fn): dataset k's output, made where
 * the copies of the rest have reached in the input's creation order. */
static int make_in_place(void *user, int k, xio_error *err) {
  make_request *make = user;
  return open_variable(make->run, k, NULL, err) != TOOL_EXIT_OK ||
                 make_output_dataset(make->run, make->topt, err)
             ? -1
             : 0;
}

/* Collective.  The outputs the copies did not make (all of them with
 * --only), in the run's order. */
static int make_missing_outputs(transpose_run *run, const xio_transpose_options *topt,
                                xio_error *err) {
  make_request make = {run, topt};
  for (int k = 0; k < run->rearranged.count; k++)
    if (H5Lexists(run->out.file, output_name(run, k), H5P_DEFAULT) <= 0 &&
        make_in_place(&make, k, err))
      return -1;
  return 0;
}

/* Collective, on the output file just made: its space, before anything
 * is written in it, so that a full disk fails the run with one message at
 * its start: the rearranged datasets' where known (uncompressed), and
 * unless --only the storage the rest takes in the input (compressed as
 * compressed) with 1% more for its structures. */
static int reserve_output(transpose_run *run, xio_error *err) {
  uint64_t data = 0, rest = 0, size = 0, scratch = 0;
  const xio_path_list rearranged = rearranged_list(run);
  for (int k = 0; k < run->rearranged.count; k++) {
    if (open_variable(run, k, NULL, err) != TOOL_EXIT_OK) return -1;
    if (!output_compressed(run)) data += matrix_bytes(&run->in);
    /* a dataset's scratch files, two at most at once, go once it is moved */
    const uint64_t files = (uint64_t)(run->moves - 1 < 2 ? run->moves - 1 : 2);
    if (files * matrix_bytes(&run->in) > scratch) scratch = files * matrix_bytes(&run->in);
  }
  if ((!run->opt->only && xio_rest_bytes(run->comm, run->in.file, run->out.file, run->in_path.file,
                                         &rearranged, &rest, err)) ||
      xio_file_size(&run->out, &size, err))
    return -1;
  const uint64_t headers = (uint64_t)16 << 10; /* the superblock, the datasets' headers */
  return tool_output_reserve(run->comm, &run->output, size + headers + data + rest + rest / 100,
                             err) ||
                 tool_output_check_room(run->comm, &run->output, scratch ? scratch + headers : 0,
                                        "its scratch files", err)
             ? -1
             : 0;
}

/* Collective.  Unless --only, the rest of the input file beside the
 * rearranged datasets (h5_copy.h), before any pass: a partial output
 * whose first record is written holds it all.  A stop signal ends it
 * (run->stopped), the partial then of no use. */
static int copy_rest_of_input(transpose_run *run, const xio_transpose_options *topt,
                              xio_error *err) {
  if (run->opt->only) return 0;
  xio_copy_stats copied;
  const xio_path_list rearranged = rearranged_list(run);
  make_request make = {run, topt}; /* it opens datasets in run->in's file, which stays open */
  const int rc =
      xio_copy_rest(run->comm, run->in.file, run->out.file, run->in_path.file, &rearranged,
                    make_in_place, &make, piece_budget(run), tool_stop_requested, &copied, err);
  run->stopped = rc == XIO_STOPPED;
  if (rc) return -1;
  if (copied.skipped.count)
    tool_report_warning(
        "%d attribute(s) in %s were not copied (%s): references cannot point "
        "from %s into %s",
        copied.skipped.count, run->in_path.file, copied.skipped.names, run->out_path.file,
        run->in_path.file);
  char bytes[32];
  tool_format_bytes(copied.bytes, bytes, sizeof bytes);
  tool_report_verbose("copied the rest of %s: %d dataset(s) (%s of data), %d group(s), %d link(s)",
                      run->in_path.file, copied.datasets, bytes, copied.groups, copied.links);
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

/* Collective.  The partial output: an earlier run's to continue (with
 * --resume), at the dataset its record is at, or a new one with its
 * space reserved, the rest of the input and a first record. */
static int start_output(transpose_run *run, const xio_transpose_options *topt, xio_error *err) {
  if (xio_on_root(run->comm, identity_on_root, run, err) ||
      XIO_MPI(MPI_Bcast(&run->record, (int)sizeof run->record, MPI_BYTE, 0, run->comm), err))
    return -1;
  if (run->output.partial_found) {
    if (xio_on_root(run->comm, resumable_on_root, run, err) ||
        XIO_MPI(MPI_Bcast(&run->record, (int)sizeof run->record, MPI_BYTE, 0, run->comm), err) ||
        XIO_MPI(MPI_Bcast(&run->output.partial_found, 1, MPI_INT, 0, run->comm), err))
      return -1;
  }
  if (run->output.partial_found) {
    if (run->record.variable != 0 && begin_variable(run, run->record.variable, err)) return -1;
    const int held = resume_partial(run, topt, output_name(run, run->variable), err);
    if (held != 0) return held > 0 ? 0 : -1;
    /* started over: from the first dataset */
    run->record.finished = (xio_checksums){0, 0};
    if (run->variable != 0 && begin_variable(run, 0, err)) return -1;
  }
  const char *partial = run->output.partial_path, *shown = run->output.final_path;
  return xio_on_root(run->comm, record_copying_on_root, run, err) ||
                 xio_create_file(run->comm, partial, shown, &run->out, err) ||
                 reserve_output(run, err) || copy_rest_of_input(run, topt, err) ||
                 make_missing_outputs(run, topt, err) || begin_variable(run, 0, err) ||
                 use_output_dataset(run, err) || begin_move(run, 0, err) ||
                 xio_flush(&run->out, err)
             ? -1
             : 0;
}

/* Rank 0.  Fails when the input is no longer the file that was read: what
 * was read since it changed (a truncated file reads as zeros) is not its
 * transpose, nor that of the file before. */
static int check_input_unchanged(transpose_run *run, xio_error *err) {
  tool_input_identity now;
  const char *change = tool_input_identity_of(run->in_path.file, &now, err) != 0
                           ? "it was removed or renamed"
                           : tool_input_identity_change(&run->record.input, &now);
  if (!change) return 0;
  run->input_changed = 1;
  return xio_fail(err, "%s changed while it was being transposed: %s; nothing was published",
                  run->in_path.file, change);
}

/* The checkpoint: the data and HDF5's own structures that reach it (a
 * compressed output's chunk index) on storage first (H5Fflush ends in
 * MPI_File_sync, an fsync on every rank; raw passes synced already, beside
 * the next ones, leave HDF5 nothing to flush); only then, if the input is
 * still what was read, rank 0's record.  Every rank agreed that the step
 * before succeeded, so none is left behind in that collective call. */
static int record_progress(const xio_progress *done, int synced, void *user_data, xio_error *err) {
  transpose_run *run = user_data;
  if (!synced && xio_flush(run->dst, err)) return -1;
  if (run->rank != 0) return 0;
  if (done->passes_done == 0 && run->dst->filtered && !run->noted_unaligned &&
      !xio_pass_grid_aligned(&done->grid, run->dst->chunk_cols, run->dst->chunk_rows)) {
    run->noted_unaligned = 1; /* records of no pass come before and after the first pass */
    tool_report_note(
        "the memory budget holds no pass of whole %lld x %lld chunks of %s, so a "
        "stopped run of it starts over when resumed (compressed chunks written in "
        "part cannot be continued)",
        (long long)run->out.chunk_rows, (long long)run->out.chunk_cols, run->out_path.file);
  }
  if (check_input_unchanged(run, err)) return -1;
  run->record.progress = *done;
  return tool_resume_record_write(run->output.record_path, &run->record, err);
}

/* Collective.  Reads the closed output back from storage and compares it
 * with what was written (and with --verify, with the input re-read).
 * 0 when it matches, XIO_STOPPED when stopped by a signal, -1 on error,
 * or TOOL_EXIT_VERIFY when it does not match. */
static int verify_output(transpose_run *run, double *seconds, xio_error *err) {
  const double t0 = MPI_Wtime();
  const xio_checksums expected = tool_checksums_chain(run->record.finished, variable_sums(run));
  const int against_input = run->opt->verify == TOOL_VERIFY_INPUT;
  xio_checksums found = {0, 0};
  int rc = 0;
  if (run->output_read_back) { /* one dataset, resumed complete: read back at the start */
    found.written = expected.written;
    if (against_input)
      rc = xio_checksum_matrix(&run->in, NULL, piece_budget(run), tool_stop_requested, &found.read,
                               err);
  } else {
    rc = tool_output_evict(run->comm, &run->output, err);
    for (int k = 0; k < run->rearranged.count && rc == 0; k++) {
      xio_checksums sums = {0, 0};
      if (run->variable != k && open_variable(run, k, NULL, err) != TOOL_EXIT_OK) rc = -1;
      if (rc == 0)
        rc = open_output_of(run, k, run->output.partial_path, run->output.final_path, err);
      if (rc == 0) rc = fold_output(run, err);
      const xio_shape written_from = move_source_shape(run, run->moves - 1);
      if (rc == 0)
        rc = xio_checksum_matrix(&run->out, &written_from, piece_budget(run), tool_stop_requested,
                                 &sums.written, err);
      if (rc == 0 && against_input)
        rc = xio_checksum_matrix(&run->in, NULL, piece_budget(run), tool_stop_requested, &sums.read,
                                 err);
      found = tool_checksums_chain(found, sums);
    }
  }
  /* the copies of the rest of the input, against the input */
  char differs[1024] = "";
  uint64_t compared = 0;
  if (rc == 0 && !run->opt->only && run->out.file < 0) /* resumed complete: not yet open */
    rc = tool_output_evict(run->comm, &run->output, err) ||
                 open_output_of(run, 0, run->output.partial_path, run->output.final_path, err)
             ? -1
             : 0;
  const xio_path_list rearranged = rearranged_list(run);
  if (rc == 0 && !run->opt->only)
    rc = xio_compare_rest(run->comm, run->in.file, run->out.file, run->in_path.file, &rearranged,
                          piece_budget(run), tool_stop_requested, differs, sizeof differs,
                          &compared, err);
  if (rc == 0 && compared) {
    char bytes[32];
    tool_format_bytes(compared, bytes, sizeof bytes);
    tool_report_verbose("the copies of the rest of %s read back and compared: %s",
                        run->in_path.file, bytes);
  }
  xio_error close_err;
  if (xio_close(&run->out, &close_err) && rc == 0) {
    *err = close_err;
    rc = -1;
  }
  *seconds = MPI_Wtime() - t0;
  if (rc) return rc;
  if (found.written != expected.written)
    return xio_fail(err,
                    "verification failed: %s, read back from storage, differs from what was "
                    "written (checksums %016llx and %016llx): the file system lost or changed "
                    "data; nothing was published",
                    run->out_path.file, (unsigned long long)found.written,
                    (unsigned long long)expected.written),
           TOOL_EXIT_VERIFY;
  if (differs[0])
    return xio_fail(err,
                    "verification failed: %s:%s, read back from storage, differs from its "
                    "source in %s: the file system lost or changed data, or the input changed; "
                    "nothing was published",
                    run->out_path.file, differs, run->in_path.file),
           TOOL_EXIT_VERIFY;
  if (against_input && found.read != expected.read)
    return xio_fail(err,
                    "verification failed: %s%s%s, read again, differs from what was transposed "
                    "(checksums %016llx and %016llx): the input changed during the run; nothing "
                    "was published",
                    run->in_path.file, run->rearranged.count == 1 ? ":" : "",
                    run->rearranged.count == 1 ? run->in.dataset : "",
                    (unsigned long long)found.read, (unsigned long long)expected.read),
           TOOL_EXIT_VERIFY;
  return 0;
}

static int input_unchanged_on_root(void *arg, xio_error *err) {
  return check_input_unchanged(arg, err);
}

/* The JSON summary's description of the input and the output. */
static void describe_pair(tool_json *j, const transpose_run *run, const char *type_text,
                          const char *out_dataset) {
  tool_json_int(j, "datasets", run->rearranged.count); /* the rest: of the last one */
  tool_json_string(j, "input", run->in_path.file);
  tool_json_string(j, "input_dataset", run->in.dataset);
  tool_json_string(j, "output", run->out_path.file);
  tool_json_string(j, "output_dataset", out_dataset);
  tool_json_int(j, "rows", (long long)run->in.rows); /* of the matrix the axes fold into */
  tool_json_int(j, "cols", (long long)run->in.cols);
  tool_json_string(j, "input_shape", run->in_shape);
  tool_json_string(j, "output_shape", run->out_shape);
  tool_json_string(j, "type", type_text);
}

/* The folds of in's shape whose transpose is shaped as `like`: how many,
 * the last in *lead, *split, *trail. */
static int folds_giving(const xio_shape *in, const xio_shape *like, int *lead, int *split,
                        int *trail) {
  int found = 0;
  for (int l = 0; l < in->ndims; l++)
    for (int s = l + 1; s < in->ndims; s++)
      for (int t = s + 1; t <= in->ndims; t++) {
        xio_shape fold = *in;
        fold.lead = l, fold.split = s, fold.trail = t;
        const xio_shape moved = xio_shape_transposed(&fold);
        if (xio_shape_same_dims(&moved, like)) found++, *lead = l, *split = s, *trail = t;
      }
  return found;
}

/* Local.  Folds m for `move`, its transpose's leading axes in the move's
 * order. */
static int fold_for_move(xio_matrix *m, const tool_move *move, xio_error *err) {
  xio_shape_set_lead_order(&m->shape, move->lead, move->lead_order);
  return xio_matrix_fold(m, move->lead, move->split, move->trail, err);
}

/* Collective.  Plans the order --axes or --dims give (else all axes
 * reversed; for `xpose verify`, `like` its OUT, with neither, the one fold
 * whose transpose is shaped as OUT, where one is) and folds run->in for
 * its first move.  Describes both shapes.  An exit status:
 * TOOL_EXIT_USAGE for an order that cannot be made. */
static int fold_input(transpose_run *run, const xio_matrix *like, xio_error *err) {
  char names[XIO_MAX_DIMS][128];
  const char *name[XIO_MAX_DIMS], *moved_name[XIO_MAX_DIMS];
  long long dims[XIO_MAX_DIMS], moved_dims[XIO_MAX_DIMS];
  if (xio_axis_names(&run->in, names, err)) return TOOL_EXIT_ERROR;
  const xio_shape *shape = &run->in.shape;
  for (int i = 0; i < shape->ndims; i++) name[i] = names[i], dims[i] = (long long)shape->dims[i];
  char shown[1100], why[sizeof err->message];
  snprintf(shown, sizeof shown, "%.500s:%.500s", run->in_path.file, run->in.dataset);
  const tool_options *opt = run->opt;
  int found = 0;
  tool_move *fold = &run->folds[0];
  if (like && shape->ndims > 2 && !opt->axes && !opt->dims) {
    for (int i = 0; i < TOOL_MAX_AXES; i++) fold->lead_order[i] = i < shape->ndims ? i : 0;
    found = folds_giving(shape, &like->shape, &fold->lead, &fold->split, &fold->trail);
    if (found > 1) {
      xio_fail(err,
               "%s could be %s moved in more than one way: name the order with --dims or "
               "--axes",
               like->dataset, shown);
      return TOOL_EXIT_USAGE;
    }
  }
  if (found == 1) {
    run->moves = 1;
  } else if ((run->moves = tool_axes_plan(shape->ndims, name, shape->dims, opt->axes, opt->dims,
                                          shown, run->order, run->folds, why, sizeof why)) < 0) {
    xio_fail(err, "%s", why);
    return TOOL_EXIT_USAGE;
  }
  run->move = 0;
  run->src = &run->in, run->dst = &run->out;
  run->reversed = found == 0 && shape->ndims > 2 && !opt->axes && !opt->dims;
  if (fold_for_move(&run->in, fold, err)) return TOOL_EXIT_ERROR;
  if (found == 1)
    for (int i = 0; i < shape->ndims; i++) run->order[i] = xio_shape_source_axis(shape, i);
  for (int i = 0; i < shape->ndims; i++)
    moved_name[i] = name[run->order[i]], moved_dims[i] = dims[run->order[i]];
  tool_axes_describe(shape->ndims, name, dims, run->in_shape, sizeof run->in_shape);
  tool_axes_describe(shape->ndims, moved_name, moved_dims, run->out_shape, sizeof run->out_shape);
  return TOOL_EXIT_OK;
}

/* The shape of what move j of run->in's order reads (run->in's, for the
 * first), folded for it. */
static xio_shape move_source_shape(const transpose_run *run, int j) {
  xio_shape shape = run->in.shape;
  for (int m = 0; m <= j; m++) {
    if (m > 0) shape = xio_shape_transposed(&shape);
    const tool_move *fold = &run->folds[m];
    shape.lead = fold->lead, shape.split = fold->split, shape.trail = fold->trail;
    xio_shape_set_lead_order(&shape, fold->lead, fold->lead_order);
  }
  return shape;
}

/* Local.  The matrix move j reads, as planned: shaped and folded, not open
 * (the last move's, to plan the output's chunks and fold it). */
static int planned_source(const transpose_run *run, int j, xio_matrix *m, xio_error *err) {
  if (j == 0) {
    *m = run->in;
    return 0;
  }
  xio_matrix_reset(m);
  m->shape = move_source_shape(run, j);
  m->type_size = run->in.type_size;
  snprintf(m->dataset, sizeof m->dataset, "%s", run->in.dataset);
  return xio_matrix_fold(m, m->shape.lead, m->shape.split, m->shape.trail, err);
}

/* Local.  Folds m as the transpose of what move j reads: what move j
 * writes (a scratch file, or for the last move the output). */
static int fold_as_written_by(const transpose_run *run, int j, xio_matrix *m, xio_error *err) {
  xio_matrix source;
  return planned_source(run, j, &source, err) || xio_matrix_fold_as_transpose(m, &source, err) ? -1
                                                                                               : 0;
}

/* Local.  Folds run->out as the transpose of what the last move reads. */
static int fold_output(transpose_run *run, xio_error *err) {
  return fold_as_written_by(run, run->moves - 1, &run->out, err);
}

/* The checksums a dataset's move leaves for verify_output: of what was
 * read, the first move's (the input's), and of what was written, the
 * last's (the output's). */
static xio_checksums variable_sums(const transpose_run *run) {
  return (xio_checksums){run->moves > 1 ? run->record.first_read : run->record.progress.sums.read,
                         run->record.progress.sums.written};
}

_Static_assert(TOOL_MAX_MOVES - 1 == TOOL_SCRATCH_FILES,
               "a scratch file for each move but the last");

/* The scratch file move j writes (of an order of several moves). */
static const char *scratch_path(const transpose_run *run, int j) {
  return run->output.scratch_paths[j];
}

static int unlink_on_root(void *path, xio_error *err) {
  if (unlink(path) != 0 && errno != ENOENT)
    return xio_fail(err, "cannot remove the scratch file %s: %s", (char *)path, strerror(errno));
  return 0;
}

/* Collective where a scratch file is open.  Closes the scratch files of
 * the dataset moved and, with remove_files, rank 0 removes those its
 * order makes (errors go unreported: the run's outcome is decided, and a
 * stale scratch file is made anew).  A run of one move has none: nothing
 * happens, so a failed run's cleanup makes no call more than before. */
static void drop_scratch(transpose_run *run, int remove_files) {
  xio_error ignored;
  for (int i = 0; i < 2; i++) xio_close(&run->scratch[i], &ignored);
  for (int j = 0; remove_files && run->rank == 0 && j + 1 < run->moves; j++)
    (void)unlink(scratch_path(run, j));
}

/* Collective.  Sets up move run->move of the dataset in run->in: its
 * source (run->in, or the scratch file the move before wrote, opened
 * where it is not open) and its destination (run->out, or a scratch file:
 * made, or with `resuming` the one a stopped run left), folded for it;
 * the record's fields that describe it. */
static int begin_move(transpose_run *run, int resuming, xio_error *err) {
  const int j = run->move;
  const char *shown = run->output.final_path;
  xio_matrix *src = j == 0 ? &run->in : &run->scratch[(j - 1) % 2], *dst = &run->out;
  if (j > 0 && src->comm == MPI_COMM_NULL) { /* resumed: read back as it was written */
    const char *path = scratch_path(run, j - 1);
    uint64_t sum = 0;
    const xio_shape written_from = move_source_shape(run, j - 1);
    if (xio_open_existing(run->comm, path, shown, "/xpose-scratch", 0, src, err) ||
        fold_as_written_by(run, j - 1, src, err) ||
        xio_checksum_matrix(src, &written_from, piece_budget(run), NULL, &sum, err))
      return -1;
    if (sum != run->record.source_sum)
      return xio_fail(err,
                      "the scratch file %s reads back with checksum %016llx, not the "
                      "recorded %016llx",
                      path, (unsigned long long)sum, (unsigned long long)run->record.source_sum);
  }
  if (j > 0 && fold_for_move(src, &run->folds[j], err)) return -1;
  if (j + 1 < run->moves) { /* into a scratch file, contiguous and uncompressed */
    dst = &run->scratch[j % 2];
    xio_error ignored;
    xio_close(dst, &ignored); /* the file move j - 2 wrote, read by now */
    const char *path = scratch_path(run, j);
    const xio_shape shape = xio_shape_transposed(&src->shape);
    const xio_storage contiguous = {.layout = XIO_LAYOUT_CONTIGUOUS};
    if (resuming ? xio_open_existing(run->comm, path, shown, "/xpose-scratch", 1, dst, err) ||
                       xio_matrix_fold_as_transpose(dst, src, err)
                 : xio_on_root(run->comm, unlink_on_root, (void *)path, err) ||
                       xio_create_output(run->comm, path, shown, "/xpose-scratch", run->in.type,
                                         NULL, &contiguous, &shape, dst, err))
      return -1;
  }
  run->src = src, run->dst = dst;
  run->record.move = j;
  run->record.rows = src->rows, run->record.cols = src->cols, run->record.shape = src->shape;
  return 0;
}

/* Collective.  The moves of the dataset in run->in, from run->move on,
 * as xio_transpose returns: each scratch file read back and checked
 * against what its move wrote before the next move reads it (unless
 * --verify none), and removed once the last move is done. */
static int move_variable(transpose_run *run, xio_transpose_options *topt,
                         xio_transpose_stats *stats, xio_error *err) {
  for (;;) {
    int rc = xio_transpose(run->src, run->dst, topt, stats, err);
    run->record.progress = stats->done;
    if (rc == 0 && run->move + 1 == run->moves) drop_scratch(run, 1);
    if (rc != 0 || run->move + 1 == run->moves) return rc;
    if (run->move == 0) run->record.first_read = stats->done.sums.read;
    run->record.source_sum = stats->done.sums.written; /* for the next move to check */
    uint64_t sum = 0;
    if (run->opt->verify != TOOL_VERIFY_NONE) {
      /* from storage: its pages are clean (synced at the checkpoint), and
       * each rank drops its node's */
      (void)tool_drop_cached_pages(scratch_path(run, run->move));
      rc = xio_checksum_matrix(run->dst, &run->src->shape, piece_budget(run), tool_stop_requested,
                               &sum, err);
      if (rc) return rc;
      run->scratch_lost = sum != stats->done.sums.written;
      if (run->scratch_lost)
        return xio_fail(err,
                        "the scratch file of %s's move %d of %d, read back from storage, differs "
                        "from what was written (checksums %016llx and %016llx): the file system "
                        "lost or changed data; nothing was published",
                        run->in.dataset, run->move + 1, run->moves, (unsigned long long)sum,
                        (unsigned long long)stats->done.sums.written);
    }
    run->moved_passes += xio_pass_count(&stats->done.grid);
    run->move++;
    run->record.progress = (xio_progress){0};
    topt->resume_from = NULL;
    if (begin_move(run, 0, err)) return -1;
    limit_passes_for(run, topt);
    tool_report_progress_begin(0);
  }
}

/* Collective.  Dataset k of the run opened as run->in (in the input file
 * open already, if any) and folded (fold_input; `like` as there).  An
 * exit status. */
static int open_variable(transpose_run *run, int k, const xio_matrix *like, xio_error *err) {
  run->variable = k;
  snprintf(run->in_path.dataset, sizeof run->in_path.dataset, "%s", run->rearranged.paths[k]);
  /* in the file open already: opening it costs more than a small dataset's move */
  if (run->in.comm != MPI_COMM_NULL
          ? xio_use_dataset(&run->in, run->in_path.file, run->in_path.dataset, err)
          : xio_open_input(run->comm, run->in_path.file, run->in_path.dataset, &run->in, err))
    return TOOL_EXIT_ERROR;
  return fold_input(run, like, err);
}

/* Collective.  The datasets the run rearranges: with --dims every one
 * whose axes it reorders (its names checked against the input's), as
 * ncpdq does, or the one IN names; without, IN's (listed once opened
 * where IN names none: xio_open_input finds it).  An exit status. */
static int choose_datasets(transpose_run *run, xio_error *err) {
  int usage = 0;
  const char *named = run->in_path.dataset;
  if (run->opt->dims && tool_choose_input_datasets(run->comm, run->in_path.file, run->opt->dims,
                                                   named, &run->rearranged, &usage, err))
    return usage ? TOOL_EXIT_USAGE : TOOL_EXIT_ERROR;
  if (!run->opt->dims && named[0] && tool_dataset_list_of_one(named, &run->rearranged)) {
    xio_fail(err, "out of memory");
    return TOOL_EXIT_ERROR;
  }
  if (run->rearranged.count > 1 && run->out_path.dataset[0]) {
    xio_fail(err,
             "--dims %s rearranges %d datasets of %s (%s, %s, ...), and %s names one output "
             "dataset: give the output file alone (each keeps its path), or name one input "
             "dataset as %s:/DATASET",
             run->opt->dims, run->rearranged.count, run->in_path.file, run->rearranged.paths[0],
             run->rearranged.paths[1], run->opt->output, run->in_path.file);
    return TOOL_EXIT_USAGE;
  }
  if (run->rearranged.count)
    snprintf(run->in_path.dataset, sizeof run->in_path.dataset, "%s", run->rearranged.paths[0]);
  return TOOL_EXIT_OK;
}

/* Collective, after choose_datasets: IN's first dataset as run->in, and
 * where IN named none, the one found listed as the run's. */
static int open_first_input(transpose_run *run, xio_error *err) {
  if (xio_open_input(run->comm, run->in_path.file,
                     run->in_path.dataset[0] ? run->in_path.dataset : NULL, &run->in, err))
    return -1;
  if (run->rearranged.count == 0 && tool_dataset_list_of_one(run->in.dataset, &run->rearranged))
    return xio_fail(err, "out of memory");
  return 0;
}

/* Collective.  Whether run->out has the attributes of run->in, those per
 * axis permuted as the axes are; where not, *match = 0 and why in detail. */
static int compare_dataset_attributes(transpose_run *run, int *match, char *detail, size_t size,
                                      xio_error *err) {
  char name[256];
  const int rc = xio_compare_attributes(run->in.dset, run->out.dset, run->order,
                                        run->in.shape.ndims, 0, name, sizeof name, err);
  if (xio_agree(run->comm, rc, err)) return -1;
  if (name[0]) {
    *match = 0;
    snprintf(detail, size, "its attribute %.200s differs from %.300s:%.300s's", name,
             run->in_path.file, run->in.dataset);
  }
  return 0;
}

/* Collective.  Whether OUT's `file` holds the transpose of every dataset
 * the run rearranges, reading both (xio_verify_transpose; OUT's axes are
 * what folds the input's where no order was given); the first that does
 * not sets *match = 0 and says why in detail.  An exit status; run->in
 * and run->out are left open on the last read. */
static int verify_each(transpose_run *run, const char *file, uint64_t budget, int *match,
                       char *detail, size_t size, xio_error *err) {
  *match = 1;
  const int count = run->rearranged.count;
  for (int k = 0; k < count && *match; k++) {
    xio_error why = {""};
    int opened = TOOL_EXIT_OK;
    const int found = open_output_of(run, k, file, file, err) == 0;
    /* a file without the dataset is not the transpose (exit 3); one that
     * cannot be read is an error */
    if (!found &&
        (run->out.file < 0 || H5Lexists(run->out.file, output_name(run, k), H5P_DEFAULT) > 0))
      return TOOL_EXIT_ERROR;
    if (!found) { /* named in messages: the input dataset k (with --dims, planned already) */
      *match = 0;
      snprintf(detail, size, "%s", err->message);
      if (k > 0 && (opened = open_variable(run, k, NULL, err)) != TOOL_EXIT_OK) return opened;
    } else if ((opened = open_variable(run, k, &run->out, err)) != TOOL_EXIT_OK) {
      return opened;
    } else if (run->moves > 1) { /* read value by value: no one fold moves them */
      if (xio_verify_permutation(&run->in, &run->out, run->order, budget, match, detail, size, err))
        return TOOL_EXIT_ERROR;
    } else if (xio_matrix_fold_as_transpose(&run->out, &run->in, &why)) {
      *match = 0;
      snprintf(detail, size, "%s", why.message);
    } else if (xio_verify_transpose(&run->in, &run->out, budget, match, detail, size, err)) {
      return TOOL_EXIT_ERROR;
    }
    if (found && *match && compare_dataset_attributes(run, match, detail, size, err))
      return TOOL_EXIT_ERROR;
    if (!*match && count > 1) {
      char said[1024];
      snprintf(said, sizeof said, "%s", detail);
      snprintf(detail, size, "%.200s: %.800s", run->rearranged.paths[k], said);
    }
  }
  return TOOL_EXIT_OK;
}

/* Collective.  Without --only: whether OUT holds the rest of IN as it is
 * (xio_compare_rest); where not, *match = 0 and why in detail. */
static int compare_rest(transpose_run *run, uint64_t budget, int *match, char *detail, size_t size,
                        xio_error *err) {
  char differs[1024];
  uint64_t bytes;
  const xio_path_list rearranged = rearranged_list(run);
  if (xio_compare_rest(run->comm, run->in.file, run->out.file, run->in_path.file, &rearranged,
                       budget, NULL, differs, sizeof differs, &bytes, err))
    return -1;
  if (differs[0]) {
    *match = 0;
    snprintf(detail, size, "%.300s:%.300s differs from %.300s's (--only checks the dataset alone)",
             run->out_path.file, differs, run->in_path.file);
  }
  return 0;
}

/* Collective.  --resume where OUT exists and no partial does: a run that
 * published already, when OUT is the transpose of IN, read as `xpose
 * verify` reads them.  TOOL_EXIT_OK, having said so, or TOOL_EXIT_ERROR
 * with the refusal in err. */
static int check_already_done(transpose_run *run, const char *type_text, xio_error *err) {
  const double start = MPI_Wtime();
  int match = 0;
  char detail[sizeof err->message] = "";
  xio_error why = {""};
  if (verify_each(run, run->out_path.file, piece_budget(run), &match, detail, sizeof detail,
                  &why) != TOOL_EXIT_OK ||
      (match && !run->opt->only &&
       compare_rest(run, piece_budget(run), &match, detail, sizeof detail, &why)))
    snprintf(detail, sizeof detail, "%s", why.message), match = 0;
  char found_dataset[sizeof run->out.dataset];
  snprintf(found_dataset, sizeof found_dataset, "%s", run->out.dataset);
  if (xio_close(&run->out, &why) && match) {
    match = 0;
    snprintf(detail, sizeof detail, "%s", why.message);
  }
  if (!match)
    return xio_fail(err,
                    "output %s exists and is not the transpose of %s:%s (%.400s); use --force "
                    "to replace it",
                    run->out_path.file, run->in_path.file, run->in.dataset, detail),
           TOOL_EXIT_ERROR;
  if (run->opt->json) {
    tool_json j;
    tool_json_begin(&j);
    tool_json_string(&j, "status", "ok");
    tool_json_int(&j, "exit_code", TOOL_EXIT_OK);
    tool_json_bool(&j, "already_done", 1);
    describe_pair(&j, run, type_text, found_dataset);
    tool_json_string(&j, "detail", detail);
    tool_json_number(&j, "seconds", MPI_Wtime() - start);
    tool_json_print(&j);
  } else if (run->rearranged.count > 1) {
    tool_report_result(
        "%s already holds the %d datasets of %s rearranged (%s): nothing to do, "
        "%.3f s",
        run->out_path.file, run->rearranged.count, run->in_path.file, detail, MPI_Wtime() - start);
  } else {
    tool_report_result(
        "%s:%s is already the transpose of %s:%s (%s -> %s, %s; %s): nothing to do, %.3f s",
        run->out_path.file, found_dataset, run->in_path.file, run->in.dataset, run->in_shape,
        run->out_shape, type_text, detail, MPI_Wtime() - start);
  }
  return TOOL_EXIT_OK;
}

/* The start of either run: nothing open yet, the paths split, the MPI-IO
 * hints set.  An exit status: a malformed path or hint is a usage error. */
static int run_begin(transpose_run *run, const tool_options *opt, MPI_Comm comm, xio_error *err) {
  *run = (transpose_run){.opt = opt, .comm = comm};
  xio_matrix_reset(&run->in);
  xio_matrix_reset(&run->out);
  xio_matrix_reset(&run->scratch[0]);
  xio_matrix_reset(&run->scratch[1]);
  run->src = &run->in, run->dst = &run->out;
  if (parse_paths(opt, &run->in_path, &run->out_path, err) == 0 &&
      xio_mpi_hints_set(opt->mpi_hints, opt->mpi_hint_count, err) == 0)
    return TOOL_EXIT_OK;
  tool_report_error("%s", err->message);
  return TOOL_EXIT_USAGE;
}

/* `xpose verify IN OUT`: whether OUT is the transpose of IN, reading both. */
static int run_check(const tool_options *opt, MPI_Comm comm) {
  transpose_run run_state, *run = &run_state;
  xio_error err = {""};
  const int begun = run_begin(run, opt, comm, &err);
  if (begun != TOOL_EXIT_OK) return begun;
  int exit_code = TOOL_EXIT_ERROR, match = 0;
  char detail[1024] = "", type_text[256] = "";
  const double start = MPI_Wtime();
  uint64_t budget = opt->memory_bytes;
  if (tool_check_input(comm, run->in_path.file, &err) ||
      tool_check_input(comm, run->out_path.file, &err) ||
      (exit_code = choose_datasets(run, &err)) != TOOL_EXIT_OK || open_first_input(run, &err) ||
      (!budget && tool_default_memory_budget(comm, &budget, NULL, 0, &err)) ||
      (exit_code = verify_each(run, run->out_path.file, budget, &match, detail, sizeof detail,
                               &err)) != TOOL_EXIT_OK ||
      (match && !opt->only && compare_rest(run, budget, &match, detail, sizeof detail, &err))) {
    if (exit_code == TOOL_EXIT_OK) exit_code = TOOL_EXIT_ERROR;
    tool_report_error("%s", err.message);
  } else {
    xio_type_describe(run->in.type, type_text, sizeof type_text);
    exit_code = match ? TOOL_EXIT_OK : TOOL_EXIT_VERIFY;
    if (opt->json) {
      tool_json j;
      tool_json_begin(&j);
      tool_json_string(&j, "status", match ? "transpose" : "not the transpose");
      tool_json_int(&j, "exit_code", exit_code);
      describe_pair(&j, run, type_text, run->out.dataset);
      tool_json_string(&j, "detail", detail);
      tool_json_number(&j, "seconds", MPI_Wtime() - start);
      tool_json_print(&j);
    } else if (match && run->rearranged.count > 1) {
      tool_report_result(
          "%s holds the %d datasets of %s rearranged (%s) and the rest as it is, "
          "%.3f s",
          run->out_path.file, run->rearranged.count, run->in_path.file, detail,
          MPI_Wtime() - start);
    } else if (match) {
      tool_report_result("%s:%s is the transpose of %s:%s (%s -> %s, %s; %s), %.3f s",
                         run->out_path.file, run->out.dataset, run->in_path.file, run->in.dataset,
                         run->in_shape, run->out_shape, type_text, detail, MPI_Wtime() - start);
    } else {
      tool_report_error("%s:%s is not the transpose of %s:%s: %s", run->out_path.file,
                        run->out.dataset, run->in_path.file, run->in.dataset, detail);
    }
  }
  xio_close(&run->out, &err);
  xio_close(&run->in, &err);
  tool_dataset_list_free(&run->rearranged);
  return exit_code;
}

/* Collective: the signal that stopped the run, as any rank got it. */
static int agreed_stop_signal(MPI_Comm comm) {
  int mine = tool_stop_requested(), any = 0;
  return MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm) == MPI_SUCCESS ? any : 0;
}

/* The result: one line, or with --json one object. */
static void print_summary(const transpose_run *run, const xio_transpose_stats *stats,
                          const char *type_text, double total_seconds, double verify_seconds) {
  const tool_options *opt = run->opt;
  const uint64_t bytes = run->moved_bytes + matrix_bytes(&run->in); /* run->in: the last */
  const long long passes = (long long)(run->moved_passes + xio_pass_count(&stats->done.grid));
  char size_text[32];
  tool_format_bytes(bytes, size_text, sizeof size_text);
  const double rate = total_seconds > 0 ? 2.0 * (double)bytes / total_seconds / 1e9 : 0.0;
  const char *verification = opt->verify == TOOL_VERIFY_NONE    ? "not read back"
                             : opt->verify == TOOL_VERIFY_INPUT ? "verified against the input"
                                                                : "verified";
  const char *backend_name = run->backend == XPOSE_BACKEND_CUDA ? "cuda" : "host";
  const char *out_name = output_name(run, run->variable);
  if (opt->json) {
    tool_json j;
    tool_json_begin(&j);
    tool_json_string(&j, "status", "ok");
    tool_json_int(&j, "exit_code", TOOL_EXIT_OK);
    describe_pair(&j, run, type_text, out_name);
    tool_json_int(&j, "bytes", (long long)bytes);
    tool_json_int(&j, "ranks", run->nranks);
    tool_json_string(&j, "backend", backend_name);
    tool_json_string(&j, "exchange", stats->exchange);
    tool_json_int(&j, "passes", passes);
    tool_json_bool(&j, "resumed", run->resumed);
    tool_json_number(&j, "seconds", total_seconds);
    tool_json_number(&j, "verify_seconds", verify_seconds);
    tool_json_number(&j, "gb_per_s", rate);
    tool_json_string(&j, "verification", verification);
    tool_json_print(&j);
  } else if (run->rearranged.count > 1) {
    tool_report_result(
        "%s -> %s: %d datasets rearranged (%s ... %s, each %s), the rest copied: %s, %d "
        "rank(s) (%s, %s), %lld pass(es)%s, %.3f s, %.2f GB/s, %s",
        run->in_path.file, run->out_path.file, run->rearranged.count, run->rearranged.paths[0],
        run->rearranged.paths[run->rearranged.count - 1], opt->dims, size_text, run->nranks,
        backend_name, stats->exchange, passes, run->resumed ? " (resumed)" : "", total_seconds,
        rate, verification);
  } else {
    tool_report_result(
        "%s:%s (%s, %s) -> %s:%s (%s%s): %s, %d rank(s) (%s, %s), %lld "
        "pass(es)%s, %.3f s, %.2f GB/s, %s",
        run->in_path.file, run->in.dataset, run->in_shape, type_text, run->out_path.file, out_name,
        run->out_shape, run->reversed ? "; all axes reversed, as numpy's .T" : "", size_text,
        run->nranks, backend_name, stats->exchange, passes, run->resumed ? " (resumed)" : "",
        total_seconds, rate, verification);
  }
}

/* Whether the partial holds recorded work: passes, or datasets done.
 * These three read the record's dataset, not the one a read-back may be
 * at. */
static int work_recorded(const transpose_run *run) {
  return run->record.variable > 0 || run->record.move > 0 || run->record.progress.passes_done > 0;
}

static int all_passes_done(const transpose_run *run) {
  return run->record.variable + 1 == run->rearranged.count && run->record.move + 1 == run->moves &&
         run->record.progress.passes_done == xio_pass_count(&run->record.progress.grid);
}

/* "3 of 8 passes", or of several datasets "2 of 5 datasets and 3 of 8
 * passes of /pr". */
static void describe_progress(const transpose_run *run, char *text, size_t size) {
  const long long done = (long long)run->record.progress.passes_done,
                  passes = (long long)xio_pass_count(&run->record.progress.grid);
  char move[64] = "";
  if (run->moves > 1)
    snprintf(move, sizeof move, " of move %d of %d", run->record.move + 1, run->moves);
  if (run->rearranged.count == 1)
    snprintf(text, size, "%lld of %lld passes%s", done, passes, move);
  else
    snprintf(text, size, "%d of %d datasets and %lld of %lld passes%s of %.100s",
             run->record.variable, run->rearranged.count, done, passes, move,
             run->rearranged.paths[run->record.variable]);
}

/* Verbose: what is moved now. */
static void say_variable(const transpose_run *run, const char *type_text) {
  char which[64] = "";
  if (run->rearranged.count > 1)
    snprintf(which, sizeof which, " (dataset %d of %d)", run->variable + 1, run->rearranged.count);
  char moves[64] = "";
  if (run->moves > 1)
    snprintf(moves, sizeof moves, " first of %d moves, through scratch files,", run->moves);
  tool_report_verbose(
      "input %s:%s%s, %s -> %s, %s; moved%s as a %lld x %lld matrix of %zu-byte "
      "elements",
      run->in_path.file, run->in.dataset, which, run->in_shape, run->out_shape, type_text, moves,
      (long long)run->in.rows, (long long)run->in.cols, run->in.elem_size);
}

/* Collective, once dataset run->variable is moved: the next one opened,
 * its output made beside it, its passes planned afresh. */
static int next_variable(transpose_run *run, xio_transpose_options *topt, xio_error *err) {
  run->moved_bytes += matrix_bytes(&run->in);
  run->moved_passes += xio_pass_count(&run->record.progress.grid);
  run->record.finished = tool_checksums_chain(run->record.finished, variable_sums(run));
  run->record.progress = (xio_progress){0};
  run->record.move = 0;
  run->record.first_read = run->record.source_sum = 0;
  topt->resume_from = NULL;
  if (begin_variable(run, run->variable + 1, err)) return -1;
  limit_passes_for(run, topt);
  if (run->opt->verbose) {
    char type_text[256];
    xio_type_describe(run->in.type, type_text, sizeof type_text);
    say_variable(run, type_text);
  }
  return use_output_dataset(run, err) || begin_move(run, 0, err) ? -1 : 0;
}

/* The largest pass planned on the host with the default budget: passes.h's
 * fastest size, and for a compressed output at most an eighth of the data,
 * so that a rank's I/O thread compresses one pass while the next is read
 * and transposed (the climate benchmark's 323 MB ran in 5.4 s in 2 passes,
 * 4.6 s in 8: tests/bench/RESULTS.md), but not under 16 MiB: a small
 * dataset cut in eight gets output chunks as short along its time axis
 * (they reach as far as a pass), for no gain (200 variables of 192 KiB:
 * 1200 passes and 200 took the same 2.3-2.4 s). */
static uint64_t default_pass_limit(const transpose_run *run) {
  const uint64_t least = (uint64_t)16 << 20;
  const xio_matrix *source = run->src;
  uint64_t eighth =
      xio_pass_bytes((source->rows + 7) / 8, source->cols, source->elem_size, run->nranks);
  if (eighth < least) eighth = least;
  return output_compressed(run) && eighth < XIO_PASS_BYTES_FOR_SPEED ? eighth
                                                                    : XIO_PASS_BYTES_FOR_SPEED;
}

static int run_transpose(const tool_options *opt, MPI_Comm comm) {
  const double run_began = MPI_Wtime();
  transpose_run run_state, *run = &run_state;
  int exit_code = TOOL_EXIT_ERROR, keep_partial = 0, chosen = TOOL_EXIT_OK;
  xio_error err = {""};
  const int begun = run_begin(run, opt, comm, &err);
  if (begun != TOOL_EXIT_OK) return begun;
  const int backend_status = choose_backend(opt, comm, &run->backend, &err);
  if (backend_status != TOOL_EXIT_OK) {
    tool_report_error("%s", err.message);
    return backend_status;
  }
  if (XIO_MPI(MPI_Comm_rank(comm, &run->rank), &err) ||
      XIO_MPI(MPI_Comm_size(comm, &run->nranks), &err) ||
      tool_check_input(comm, run->in_path.file, &err) ||
      (chosen = choose_datasets(run, &err)) != TOOL_EXIT_OK ||
      tool_output_prepare(comm, run->out_path.file, run->in_path.file, opt->force,
                          opt->resume  ? TOOL_PARTIAL_KEEP
                          : opt->force ? TOOL_PARTIAL_REPLACE
                                       : TOOL_PARTIAL_REFUSE,
                          &run->output, &err)) {
    if (run->output.usage_error || chosen == TOOL_EXIT_USAGE) exit_code = TOOL_EXIT_USAGE;
    goto fail;
  }
  keep_partial = run->output.partial_found; /* another run's work: not this one's to remove */
  if (run->output.lock_note[0]) tool_report_warning("%s", run->output.lock_note);
  if (open_first_input(run, &err)) goto fail;
  if (!opt->only && run->out_path.dataset[0] &&
      tool_check_output_path_free(comm, run->in.file, run->in_path.file, run->in.dataset,
                                  run->out_path.dataset, &err)) {
    exit_code = TOOL_EXIT_USAGE;
    goto fail;
  }
  const int folded = fold_input(run, NULL, &err);
  if (folded != TOOL_EXIT_OK) {
    exit_code = folded;
    goto fail;
  }
  char type_text[256];
  xio_type_describe(run->in.type, type_text, sizeof type_text);
  say_variable(run, type_text);

  run->budget = opt->memory_bytes;
  if (!run->budget) {
    char source[512];
    if (tool_default_memory_budget(comm, &run->budget, source, sizeof source, &err)) goto fail;
    char budget_text[32];
    tool_format_bytes(run->budget, budget_text, sizeof budget_text);
    tool_report_verbose("memory budget %s per rank: %s", budget_text, source);
  }
#ifdef XPOSE_HAVE_CUDA
  run->gpu_budget = opt->gpu_memory_bytes;
  if (run->backend == XPOSE_BACKEND_CUDA && !run->gpu_budget &&
      tool_default_gpu_budget(comm, &run->gpu_budget, &err))
    goto fail;
#endif
  if (run->output.final_exists) { /* --resume after a run that published */
    exit_code = check_already_done(run, type_text, &err);
    if (exit_code != TOOL_EXIT_OK) goto fail;
    goto release;
  }
  const double start = MPI_Wtime();
  tool_report_verbose("the run's set-up (MPI, GPU, input, budget): %.3f s", start - run_began);
  /* A budget the user gave is filled; on the host the default one (half
   * the node) only up to passes of the size that ran fastest (passes.h). */
  const int default_budget = !opt->memory_bytes && !opt->gpu_memory_bytes;
  xio_transpose_options topt = {
      .memory_budget = run->budget,
      .gpu_memory_budget = run->gpu_budget,
      .pass_bytes_limit =
          default_budget && run->backend != XPOSE_BACKEND_CUDA ? default_pass_limit(run) : 0,
      .progress = tool_report_progress};
  xpose_config_init(&topt.config);
  topt.config.backend = run->backend;
  topt.config.exchange = (xpose_exchange_kind)opt->exchange;
  topt.config.max_message_bytes = (size_t)opt->max_message_bytes;
  /* Plans that own their outputs can write straight into other GPUs (p2p). */
  topt.config.own_output = run->backend == XPOSE_BACKEND_CUDA;
  if (run->backend != XPOSE_BACKEND_CUDA) {
    if (tool_host_threads(comm, &topt.config.host_threads, &err)) goto fail;
    tool_report_verbose("host transposes on %d thread(s) per rank", topt.config.host_threads);
  }
  topt.checkpoint = record_progress;
  topt.checkpoint_seconds = opt->checkpoint_seconds;
  topt.checkpoint_user_data = run;
  topt.stop_requested = tool_stop_requested;
  topt.collective_only = opt->io_mpi_only;
  const char *io_thread = getenv("XPOSE_IO_THREAD"); /* 0: no I/O threads (session.c) */
  topt.inline_io = io_thread && strcmp(io_thread, "0") == 0;
  if (start_output(run, &topt, &err)) {
    if (!run->stopped) goto fail;
    exit_code = TOOL_EXIT_STOPPED;
    goto stopped;
  }
  tool_report_verbose("the partial output made (space reserved, the rest copied): %.3f s",
                      MPI_Wtime() - start);
  keep_partial = run->resumed; /* a new partial goes on failure, unless passes get recorded */
  run->compressed |= run->out.filtered; /* a resumed one's */
  if (opt->verbose) {
    char hints[1024];
    xio_mpi_hints_in_force(&run->out, hints, sizeof hints);
    tool_report_verbose("MPI-IO hints in force on %s: %s", run->out_path.file, hints);
    char in_storage[256], out_storage[256];
    xio_describe_storage(&run->in, in_storage, sizeof in_storage);
    xio_describe_storage(&run->out, out_storage, sizeof out_storage);
    tool_report_verbose("storage: input %s; output %s", in_storage, out_storage);
  }
  if (run->resumed) {
    topt.resume_from = &run->record.progress;
    char done[256];
    describe_progress(run, done, sizeof done);
    tool_report_note("resuming from %s: %s done", run->output.partial_path, done);
  }
  xio_transpose_stats stats;
  int transposed;
  const double passes_began = MPI_Wtime();
  for (;;) { /* each dataset in turn */
    tool_report_progress_begin(topt.resume_from ? topt.resume_from->passes_done : 0);
    transposed = move_variable(run, &topt, &stats, &err);
    if (transposed != 0 || run->variable + 1 == run->rearranged.count) break;
    if ((transposed = next_variable(run, &topt, &err)) != 0) break;
  }
  const double passes_ended = MPI_Wtime();
  keep_partial = work_recorded(run);
  /* A failed read may be the input changing under the run (a truncated
   * file ends early): then that is the error, and nothing is kept. */
  xio_error changed;
  if (transposed < 0 && xio_on_root(comm, input_unchanged_on_root, run, &changed)) err = changed;
  /* The file's attributes last: written at the start, they left HDF5
   * 1.10.8 metadata to flush at a failed run's close, which failed and
   * crashed the rank in MPI_Finalize (a full disk during the passes). */
  if (transposed != 0 || copy_file_attributes(run, &err) || xio_close(&run->out, &err) ||
      finish_rest(run, &err)) {
    if (transposed == XIO_STOPPED) {
      exit_code = TOOL_EXIT_STOPPED;
      goto stopped;
    }
    if (run->scratch_lost) { /* wrong: never to be resumed */
      exit_code = TOOL_EXIT_VERIFY;
      keep_partial = 0;
    }
    goto fail;
  }
  const double seconds = MPI_Wtime() - start;
  tool_report_verbose("the passes: %.3f s; the output closed: %.3f s", passes_ended - passes_began,
                      MPI_Wtime() - passes_ended);
  print_plan(&run->in, run->backend == XPOSE_BACKEND_CUDA ? run->gpu_budget : run->budget,
             run->nranks, &stats);

  double verify_seconds = 0;
  if (opt->verify != TOOL_VERIFY_NONE) {
    const int verified = verify_output(run, &verify_seconds, &err);
    if (verified == XIO_STOPPED) {
      exit_code = TOOL_EXIT_STOPPED;
      goto stopped;
    }
    if (verified) {
      if (verified == TOOL_EXIT_VERIFY) {
        exit_code = TOOL_EXIT_VERIFY;
        keep_partial = 0; /* wrong: never to be resumed */
      }
      goto fail;
    }
    tool_report_verbose("read back and verified in %.3f s", verify_seconds);
  }
  /* A stop asked for before this point keeps the verified partial for
   * --resume (which publishes it); one after it comes too late to change
   * the outcome, and the run ends as it would have. */
  if (agreed_stop_signal(comm)) {
    exit_code = TOOL_EXIT_STOPPED;
    goto stopped;
  }
  if (xio_on_root(comm, input_unchanged_on_root, run, &err)) goto fail; /* removes the partial */
  if (tool_output_publish(comm, &run->output, &err)) {
    tool_report_error("%s", err.message);
    xio_close(&run->in, &err);
    tool_dataset_list_free(&run->rearranged);
    return TOOL_EXIT_ERROR;
  }

  print_summary(run, &stats, type_text, seconds + verify_seconds, verify_seconds);
  xio_close(&run->in, &err);
  tool_dataset_list_free(&run->rearranged);
  return TOOL_EXIT_OK;

stopped : {
  const int signal_number = agreed_stop_signal(comm);
  char done[256];
  describe_progress(run, done, sizeof done);
  if (keep_partial && all_passes_done(run))
    tool_report_error(
        "stopped by %s before publishing: all %s are done and kept in %s: "
        "run the same command with --resume to check and publish them",
        tool_signal_name(signal_number), done, run->output.partial_path);
  else if (keep_partial)
    tool_report_error(
        "stopped by %s after %s; %s keeps them: run the same "
        "command with --resume to continue",
        tool_signal_name(signal_number), done, run->output.partial_path);
  else
    tool_report_error("stopped by %s before any pass was done; nothing was kept",
                      tool_signal_name(signal_number));
  goto release;
}

fail:
  if (run->input_changed) keep_partial = 0; /* rank 0's say: it removes the partial */
  /* A compressed output's space is not reserved ahead: a full disk is the likely cause. */
  if (run->compressed && run->output.owned && exit_code == TOOL_EXIT_ERROR &&
      !run->input_changed) {
    const xio_pass_grid *grid = &run->record.progress.grid;
    tool_output_explain_full(
        &run->output, (uint64_t)grid->block_rows * (uint64_t)grid->block_cols * run->in.elem_size,
        run->record.progress.passes_done, xio_pass_count(grid), &err);
  }
  if (keep_partial && run->output.owned && work_recorded(run)) {
    const size_t used = strlen(err.message);
    char done[256];
    describe_progress(run, done, sizeof done);
    const int n =
        access(run->output.partial_path, F_OK) == 0
            ? snprintf(err.message + used, sizeof err.message - used,
                       "; the %s done are kept in %s: once the cause is fixed, "
                       "the same command with --resume continues",
                       done, run->output.partial_path)
            : snprintf(err.message + used, sizeof err.message - used,
                       "; %s was removed while xpose was writing it: the %s done are lost",
                       run->output.partial_path, done);
    if (n < 0) err.message[used] = '\0'; /* the error alone, then */
  }
  tool_report_error("%s", err.message);
release : {
  const tool_output_file *out = &run->output;
  const int drop = out->owned && !keep_partial;
  const char *const leftovers[] = {drop ? out->partial_path : NULL, drop ? out->record_path : NULL,
                                   out->owned && run->rank == 0 ? out->lock_path : NULL};
  const char *all[3 + TOOL_SCRATCH_FILES] = {leftovers[0], leftovers[1], leftovers[2]};
  for (int j = 0; j + 1 < run->moves; j++)
    all[3 + j] = drop && run->rank == 0 ? scratch_path(run, j) : NULL;
  tool_watchdog_arm(all, 3 + TOOL_SCRATCH_FILES);
  xio_error ignored;
  xio_close(&run->out, &ignored);
  xio_close(&run->in, &ignored);
  drop_scratch(run, drop);
}
  tool_output_release(comm, &run->output, keep_partial);
  tool_watchdog_disarm();
  tool_dataset_list_free(&run->rearranged);
  return exit_code;
}

/* --json's object for a run that did not succeed: rank 0's, or with
 * `here` the calling rank's. */
static void print_error_json(int exit_code, const char *message, int here) {
  static const char *const status[] = {"ok", "error", "usage error", "verification failed",
                                       "stopped"};
  tool_json j;
  tool_json_begin(&j);
  tool_json_string(&j, "status", status[exit_code]);
  tool_json_int(&j, "exit_code", exit_code);
  tool_json_string(&j, "message", message);
  if (here)
    tool_json_print_here(&j);
  else
    tool_json_print(&j);
}

/* The job is aborted (h5_error.h): this rank's object is the one printed. */
static void print_abort_json(const char *message) { print_error_json(TOOL_EXIT_ERROR, message, 1); }

/* --json among the options, for a command line that does not parse. */
static int asks_for_json(int argc, char **argv) {
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--json") == 0) return 1;
  return 0;
}

int main(int argc, char **argv) {
  int rank;
  int exit_code = tool_session_start("xpose", &argc, &argv, &rank);
  if (exit_code != TOOL_EXIT_OK) {
    if (asks_for_json(argc, argv)) print_error_json(exit_code, "MPI could not start", 1);
    return exit_code;
  }
  tool_options opt;
  char error[256];
  if (tool_parse_options(argc, argv, &opt, error, sizeof error) != 0) {
    if (rank == 0) fprintf(stderr, "xpose: %s\nTry 'xpose --help' for more information.\n", error);
    exit_code = TOOL_EXIT_USAGE;
    if (rank == 0 && asks_for_json(argc, argv)) print_error_json(exit_code, error, 1);
  } else if (opt.help) {
    if (rank == 0) fputs(tool_usage(), stdout);
  } else if (opt.version) {
    unsigned major = 0, minor = 0, release = 0;
    char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING] = "MPI";
    int length = 3;
    /* The version line is all there is to say: what cannot be read is left out. */
    if (H5get_libversion(&major, &minor, &release) < 0) major = minor = release = 0;
    if (MPI_Get_library_version(mpi_version, &length) != MPI_SUCCESS)
      snprintf(mpi_version, 4, "MPI");
#if defined(XPOSE_HAVE_NCCL)
    const char *built = "CUDA backend, NCCL exchange";
#elif defined(XPOSE_HAVE_CUDA)
    const char *built = "CUDA backend";
#else
    const char *built = "host backend only";
#endif
    if (rank == 0)
      printf("xpose %s (HDF5 %u.%u.%u, %.*s; %s; compresses with %s)\n", XPOSE_VERSION_STRING,
             major, minor, release, (int)strcspn(mpi_version, ",\n"), mpi_version, built,
             xio_deflate_name());
  } else {
    tool_report_setup("xpose", rank, opt.quiet, opt.verbose);
    if (opt.json) xio_set_abort_hook(print_abort_json);
    if (tool_stop_signals_install() != 0) {
      tool_report_error("cannot handle stop signals");
      exit_code = TOOL_EXIT_ERROR;
    } else {
      exit_code = opt.check ? run_check(&opt, MPI_COMM_WORLD) : run_transpose(&opt, MPI_COMM_WORLD);
    }
    if (opt.json && exit_code != TOOL_EXIT_OK && !(opt.check && exit_code == TOOL_EXIT_VERIFY))
      print_error_json(exit_code, tool_report_last_error(), 0);
  }
  return tool_session_end("xpose", rank, exit_code);
}
