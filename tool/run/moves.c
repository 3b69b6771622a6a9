/* The datasets a run moves and their moves (moves.h): folds, scratch
 * files, one xio_transpose per move. */
#define _POSIX_C_SOURCE 200809L /* unlink */
#include "moves.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "h5_one_writer.h"
#include "h5_scales.h"
#include "h5_verify.h"
#include "input_view.h"
#include "output_file.h"
#include "passes.h"
#include "rechunk_phases.h"
#include "report.h"
#include "size.h"
#include "stop_signals.h"
#include "summary.h"

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
  m->shape.rechunk = move->rechunk;
  return xio_matrix_fold(m, move->lead, move->split, move->trail, err);
}

int tool_fold_input(transpose_run *run, const xio_matrix *like, xio_error *err) {
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
    fold->rechunk = 0;
    found = folds_giving(shape, &like->shape, &fold->lead, &fold->split, &fold->trail);
    if (found > 1) {
      xio_fail(err,
               "%s could be %s moved in more than one way: name the order with --dims or "
               "--axes",
               like->dataset, shown);
      return TOOL_EXIT_USAGE;
    }
  }
  /* Checking an output in the input's own order (a rechunked one): an
   * N-D output of the input's axes that no transpose makes. */
  const int own_order_checked = opt->check && like && found == 0 && shape->ndims > 2 &&
                                xio_shape_same_dims(shape, &like->shape);
  const tool_rechunk rechunk = rechunks_in_place(run) || own_order_checked ? TOOL_RECHUNK_BY_DEFAULT
                               : tool_rechunks(opt) || opt->check          ? TOOL_RECHUNK_IF_ASKED
                                                                           : TOOL_RECHUNK_NEVER;
  if (found == 1) {
    run->moves = 1;
  } else if ((run->moves =
                  tool_axes_plan(shape->ndims, name, shape->dims, opt->axes, opt->dims, rechunk,
                                 shown, run->order, run->folds, why, sizeof why)) < 0) {
    xio_fail(err, "%s", why);
    return TOOL_EXIT_USAGE;
  }
  run->move = 0;
  run->src = &run->in, run->dst = &run->out;
  run->reversed =
      found == 0 && shape->ndims > 2 && !opt->axes && !opt->dims && !run->folds[0].rechunk;
  if (fold_for_move(&run->in, fold, err)) return TOOL_EXIT_ERROR;
  if (found == 1)
    for (int i = 0; i < shape->ndims; i++) run->order[i] = xio_shape_source_axis(shape, i);
  for (int i = 0; i < shape->ndims; i++)
    moved_name[i] = name[run->order[i]], moved_dims[i] = dims[run->order[i]];
  tool_axes_describe(shape->ndims, name, dims, run->in_shape, sizeof run->in_shape);
  tool_axes_describe(shape->ndims, moved_name, moved_dims, run->out_shape, sizeof run->out_shape);
  return TOOL_EXIT_OK;
}

int tool_open_dataset(transpose_run *run, int k, const xio_matrix *like, xio_error *err) {
  run->dataset_index = k;
  snprintf(run->in_path.dataset, sizeof run->in_path.dataset, "%s", run->rearranged.paths[k]);
  /* in the file open already: opening it costs more than a small dataset's move */
  if (run->in.comm != MPI_COMM_NULL
          ? xio_use_dataset(&run->in, run->in_path.file, run->in_path.dataset, err)
          : xio_open_input(run->comm, hdf5_input(run), run->in_path.file, run->in_path.dataset,
                           &run->in, err))
    return TOOL_EXIT_ERROR;
  if (tool_view_read_input(run, err)) return TOOL_EXIT_ERROR;
  return tool_fold_input(run, like, err);
}

xio_shape tool_move_source_shape(const transpose_run *run, int j) {
  xio_shape shape = run->in.shape;
  for (int m = 0; m <= j; m++) {
    if (m > 0) shape = xio_shape_transposed(&shape);
    const tool_move *fold = &run->folds[m];
    shape.lead = fold->lead, shape.split = fold->split, shape.trail = fold->trail;
    shape.rechunk = fold->rechunk;
    xio_shape_set_lead_order(&shape, fold->lead, fold->lead_order);
  }
  return shape;
}

int tool_planned_source(const transpose_run *run, int j, xio_matrix *m, xio_error *err) {
  if (j == 0) {
    *m = run->in;
    return 0;
  }
  xio_matrix_reset(m);
  m->shape = tool_move_source_shape(run, j);
  m->type_size = run->in.type_size;
  snprintf(m->dataset, sizeof m->dataset, "%s", run->in.dataset);
  return xio_matrix_fold(m, m->shape.lead, m->shape.split, m->shape.trail, err);
}

/* Local.  Folds m as the transpose of what move j reads: what move j
 * writes (a scratch file, or for the last move the output). */
static int fold_as_written_by(const transpose_run *run, int j, xio_matrix *m, xio_error *err) {
  xio_matrix source;
  return tool_planned_source(run, j, &source, err) || xio_matrix_fold_as_transpose(m, &source, err)
             ? -1
             : 0;
}

int tool_fold_output(transpose_run *run, xio_error *err) {
  return fold_as_written_by(run, run->moves - 1, &run->out, err);
}

xio_checksums tool_dataset_sums(const transpose_run *run) {
  return (xio_checksums){run->moves > 1 ? run->record.first_read : run->record.progress.sums.read,
                         run->record.progress.sums.written};
}

int tool_output_compressed(const transpose_run *run) {
  const xio_storage *storage = &run->opt->storage;
  return run->kind->store || storage->filter == XIO_FILTER_GZIP ||
         storage->filter == XIO_FILTER_SHUFFLE_GZIP ||
         (storage->filter == XIO_FILTER_AS_INPUT && run->in.filtered &&
          storage->layout != XIO_LAYOUT_CONTIGUOUS);
}

uint64_t tool_default_pass_limit(const transpose_run *run) {
  const uint64_t least = (uint64_t)16 << 20;
  const xio_matrix *source = run->src;
  const int compressed = tool_output_compressed(run), on_gpu = run->backend == XPOSE_BACKEND_CUDA;
  if (run->opt->memory_bytes || run->opt->gpu_memory_bytes || (on_gpu && !compressed)) return 0;
  if (source->shape.rechunk) /* see moves.h */
    return xio_pass_bytes(source->rows, (source->cols + 3) / 4, source->elem_size, run->nranks, 1);
  uint64_t eighth =
      xio_pass_bytes((source->rows + 7) / 8, source->cols, source->elem_size, run->nranks, 1);
  if (eighth < least) eighth = least;
  return compressed && (on_gpu || eighth < XIO_PASS_BYTES_FOR_SPEED) ? eighth
                                                                     : XIO_PASS_BYTES_FOR_SPEED;
}

void tool_limit_passes(const transpose_run *run, xio_transpose_options *topt) {
  topt->pass_bytes_limit = tool_default_pass_limit(run);
}

static int unlink_on_root(void *path, xio_error *err) {
  if (unlink(path) != 0 && errno != ENOENT)
    return xio_fail(err, "cannot remove the scratch file %s: %s", (char *)path, strerror(errno));
  return 0;
}

void tool_drop_scratch(transpose_run *run, int remove_files) {
  xio_error ignored;
  for (int i = 0; i < 2; i++) xio_close(&run->scratch[i], &ignored);
  for (int j = 0; remove_files && run->rank == 0 && j + 1 < run->moves; j++)
    (void)unlink(scratch_path(run, j));
}

int tool_begin_move(transpose_run *run, int resuming, xio_error *err) {
  const int j = run->move;
  const char *shown = run->output.final_path;
  xio_matrix *src = j == 0 ? &run->in : &run->scratch[(j - 1) % 2], *dst = &run->out;
  if (j > 0 && src->comm == MPI_COMM_NULL) { /* resumed: read back as it was written */
    const char *path = scratch_path(run, j - 1);
    uint64_t sum = 0;
    const xio_shape written_from = tool_move_source_shape(run, j - 1);
    if (xio_open_existing(run->comm, path, shown, "/xpose-scratch", 0, src, err) ||
        fold_as_written_by(run, j - 1, src, err) ||
        xio_checksum_matrix(src, &written_from, run->budget, NULL, &sum, err))
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

int tool_refuse_small_budget(const transpose_run *run, const xio_phases_plan *plan, uint64_t budget,
                             xio_error *err) {
  if (plan->least_budget <= budget) return 0;
  char given[32], least[32];
  tool_format_bytes(budget, given, sizeof given);
  tool_format_bytes(plan->least_budget, least, sizeof least);
  /* chunks of 1 MiB or more, HDF5's chunk cache: each written in parts is
   * read, inflated, deflated and written again on every pass (a 7.5 MiB
   * chunk's series at 64M: 479 s against 5 s in phases) */
  const int large = plan->chunk_bytes >= ((uint64_t)1 << 20);
  if (large && (run->opt->chunks || run->opt->storage.chunk_ndims > 0))
    return xio_fail(err,
                    "%s:%s: --memory %s is too small for the chunks asked for: no pass of "
                    "it holds whole output chunks, and the two phases that write each "
                    "chunk once need --memory %s per rank at least",
                    run->input_shown, run->in.dataset, given, least);
  tool_report_note(
      "%s: no pass of --memory %s holds whole output chunks, and the two phases "
      "that would write each once need %s per rank: its chunks are written in "
      "parts, each again for every pass (slow); --memory %s or more avoids that",
      run->in.dataset, given, least, least);
  return 0;
}

/* Collective.  Whether run->src -> run->dst goes in two phases (plan):
 * planned so, and its one writer can take the output.  A budget under
 * what the phases need is refused for chunks the user asked for (the
 * passes would write each chunk in parts, again on every pass, through
 * HDF5's pipeline on one core), and said for chunks xpose chose. */
static int moves_in_phases(transpose_run *run, const xio_transpose_options *topt,
                           xio_phases_plan *plan, xio_error *err) {
  if (run->moves != 1) return 0; /* the scratch file's name is a move's */
  const int planned = xio_phases_planned(run->src, run->dst, topt, run->nranks, plan, err);
  if (planned < 0) return -1;
  if (!planned && tool_refuse_small_budget(run, plan, topt->memory_budget, err)) return -1;
  const int alone = planned ? xio_one_writer_possible(run->dst, err) : 0;
  return alone < 0 ? -1 : planned && alone;
}

/* Collective.  Move run->move of the dataset: by the pass engine, or,
 * where no pass holds whole output chunks, in two phases through a
 * scratch file (the one move has no other), its space checked unless the
 * move is done already. */
static int move_once(transpose_run *run, const xio_transpose_options *topt,
                     xio_transpose_stats *stats, xio_error *err) {
  xio_phases_plan plan;
  const int phased = moves_in_phases(run, topt, &plan, err);
  if (phased < 0) return -1;
  if (!phased) return xio_transpose(run->src, run->dst, topt, stats, err);
  tool_say_phases(run, &plan);
  const int done = topt->resume_from && topt->resume_from->passes_done > 0;
  if (!done &&
      tool_output_check_room(run->comm, &run->output, plan.scratch_bytes, "its scratch file", err)) {
    if (!plan.bands) return -1;
    /* the phases were only to share the chunks out evenly: the passes need no scratch */
    tool_report_note("%s: %s; the passes move it instead, unevenly", run->in.dataset, err->message);
    return xio_transpose(run->src, run->dst, topt, stats, err);
  }
  return xio_rechunk_in_phases(run->src, run->dst, scratch_path(run, 0), &plan, topt, stats, err);
}

int tool_move_dataset(transpose_run *run, xio_transpose_options *topt, xio_transpose_stats *stats,
                      xio_error *err) {
  for (;;) {
    int rc = move_once(run, topt, stats, err);
    run->record.progress = stats->done;
    if (rc == 0 && run->move + 1 == run->moves) {
      tool_drop_scratch(run, 1);
      run->wrote_bytes += stats->stored_bytes, run->wrote_files += stats->stored_chunks;
    }
    if (rc != 0 || run->move + 1 == run->moves) return rc;
    if (run->move == 0) run->record.first_read = stats->done.sums.read;
    run->record.source_sum = stats->done.sums.written; /* for the next move to check */
    uint64_t sum = 0;
    if (run->opt->verify != TOOL_VERIFY_NONE) {
      /* from storage: its pages are clean (synced at the checkpoint), and
       * each rank drops its node's */
      (void)tool_drop_cached_pages(scratch_path(run, run->move));
      rc = xio_checksum_matrix(run->dst, &run->src->shape, run->budget, tool_stop_requested, &sum,
                               err);
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
    if (tool_begin_move(run, 0, err)) return -1;
    tool_limit_passes(run, topt);
    tool_progress_begin(run, 0);
  }
}

int tool_choose_datasets(transpose_run *run, xio_error *err) {
  int usage = 0;
  const xio_path_list joined = xio_path_array_list(&run->joined_datasets);
  if (tool_choose_input_datasets(run->comm, hdf5_input(run), run->in_path.file, run->opt->dims,
                                 run->opt->chunks, run->join_only ? &joined : NULL,
                                 run->in_path.dataset, &run->rearranged, &usage, err))
    return usage ? TOOL_EXIT_USAGE : TOOL_EXIT_ERROR;
  if (run->rearranged.count > 1 && run->out_path.dataset[0]) {
    const tool_options *opt = run->opt;
    char asked[600];
    snprintf(asked, sizeof asked, "%s%s",
             opt->dims     ? "--dims "
             : opt->chunks ? "--chunks "
                           : "",
             opt->dims     ? opt->dims
             : opt->chunks ? opt->chunks
                           : "joining the inputs");
    xio_fail(err,
             "%s rearranges %d datasets of %s (%s, %s, ...), and %s names one output "
             "dataset: give the output file alone (each keeps its path), or name one input "
             "dataset as %s:/DATASET",
             asked, run->rearranged.count, run->in_path.file, run->rearranged.paths[0],
             run->rearranged.paths[1], run->opt->output, run->in_path.file);
    return TOOL_EXIT_USAGE;
  }
  if (run->rearranged.count)
    snprintf(run->in_path.dataset, sizeof run->in_path.dataset, "%s", run->rearranged.paths[0]);
  return TOOL_EXIT_OK;
}

int tool_open_filled_input(transpose_run *run, xio_error *err) {
  if (tool_open_first_input(run, err)) return -1;
  return viewed(run) && (xio_close(&run->in, err) || tool_view_fill(run, err) ||
                         tool_open_first_input(run, err))
             ? -1
             : 0;
}

int tool_open_first_input(transpose_run *run, xio_error *err) {
  if (xio_open_input(run->comm, hdf5_input(run), run->in_path.file, run->in_path.dataset, &run->in,
                     err) ||
      tool_view_read_input(run, err))
    return -1;
  return 0;
}
