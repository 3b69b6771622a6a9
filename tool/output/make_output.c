/* The partial output made (make_output.h): reserved, the rest of the
 * input copied, an output dataset for each dataset moved. */
#define _POSIX_C_SOURCE 200809L /* localtime_r */
#include "make_output.h"

#include <stdio.h>
#include <time.h>

#include "chunk_spec.h"
#include "h5_attributes.h"
#include "h5_copy.h"
#include "h5_scales.h"
#include "h5_types.h"
#include "moves.h"
#include "report.h"
#include "resume.h"
#include "size.h"
#include "stop_signals.h"
#include "summary.h"

/* Attributes holding references are left out: copied, they would point
 * from the output into the input. */
static void warn_skipped(const transpose_run *run, const char *where,
                         const xio_skipped_attributes *skipped) {
  if (skipped->count)
    tool_report_warning(
        "%d attribute(s) %s were not copied (%s): references cannot point from %s into %s",
        skipped->count, where, skipped->names, run->out_path.file, run->in_path.file);
}

/* Rank 0.  Whether the input keeps a history line per command, as netCDF
 * files do (NCO's convention): written by netCDF-C, following a convention
 * (CF's), or with a history already.  A plain HDF5 file gets none. */
static int keeps_history(hid_t file) {
  static const char *const marks[] = {"_NCProperties", "Conventions", "history"};
  for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
    if (H5Aexists(file, marks[i]) > 0) return 1;
  return 0;
}

void tool_history_line(const transpose_run *run, char *line, size_t size) {
  line[0] = '\0';
  if (!keeps_history(run->in.file)) return;
  const time_t now = time(NULL);
  char when[64] = "";
  struct tm local;
  if (localtime_r(&now, &local)) strftime(when, sizeof when, "%a %b %e %H:%M:%S %Y", &local);
  snprintf(line, size, "%s: %s", when, run->opt->command_line);
}

int tool_copy_file_attributes(transpose_run *run, xio_error *err) {
  char line[sizeof run->opt->command_line + 64] = "";
  if (run->rank == 0) tool_history_line(run, line, sizeof line);
  xio_skipped_attributes skipped;
  if (XIO_MPICHECK(MPI_Bcast(line, (int)sizeof line, MPI_CHAR, 0, run->comm), err) ||
      xio_copy_file_attributes(&run->in, &run->out, line[0] ? line : NULL, &skipped, err))
    return -1;
  char where[4200];
  snprintf(where, sizeof where, "of %s", run->in_path.file);
  warn_skipped(run, where, &skipped);
  return 0;
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
  char where[4200];
  snprintf(where, sizeof where, "in %s", run->in_path.file);
  warn_skipped(run, where, &copied.skipped);
  return 0;
}

int tool_finish_rest(transpose_run *run, xio_error *err) {
  return run->opt->only ? 0 : xio_on_root(run->comm, finish_on_root, run, err);
}

int tool_open_output_of(transpose_run *run, int k, const char *path, const char *shown,
                        xio_error *err) {
  return run->out.comm != MPI_COMM_NULL
             ? xio_use_dataset(&run->out, shown, output_name(run, k), err)
             : xio_open_existing(run->comm, path, shown, output_name(run, k), 0, &run->out, err);
}

/* Collective.  Dataset k of the run, opened to be moved next: the
 * record's fields that describe it (rank 0 writes the records). */
static int begin_dataset(transpose_run *run, int k, xio_error *err) {
  if (tool_open_dataset(run, k, NULL, err) != TOOL_EXIT_OK) return -1;
  run->record.dataset_index = k;
  const int rc = run->rank == 0 ? tool_resume_identity_dataset(&run->in, output_name(run, k),
                                                               &run->record, err)
                                : 0;
  return xio_agree(run->comm, rc, err);
}

/* Local.  --chunks for run->in's output, shaped `shape`: its axis i is
 * the input's axis run->order[i], and takes that axis's name. */
static int chunks_by_name(const transpose_run *run, const xio_shape *shape, xio_storage *storage,
                          xio_error *err) {
  char names[XIO_MAX_DIMS][128];
  const char *moved[XIO_MAX_DIMS];
  if (xio_axis_names(&run->in, names, err)) return -1;
  for (int i = 0; i < shape->ndims; i++) moved[i] = names[run->order[i]];
  storage->chunk_ndims = shape->ndims;
  tool_chunk_spec_apply(run->opt->chunks, shape->ndims, moved, shape->dims, storage->chunk_dims);
  return 0;
}

/* Local.  A join's records in the first input's chunks: the view's
 * (each axis in place). */
static int first_input_chunks(const transpose_run *run, xio_storage *storage) {
  storage->chunk_ndims = run->in.shape.ndims;
  for (int i = 0; i < run->in.shape.ndims; i++)
    storage->chunk_dims[i] = run->in.chunked ? run->in.chunk_dims[i] : run->in.shape.dims[i];
  return 0;
}

int tool_output_storage(const transpose_run *run, const xio_transpose_options *topt,
                        xio_matrix *last, xio_storage *storage, xio_error *err) {
  if (tool_planned_source(run, run->moves - 1, last, err)) return -1;
  *storage = run->opt->storage;          /* chunks chosen fit the passes */
  xio_transpose_options planned = *topt; /* tool_next_dataset's, when its turn comes */
  tool_limit_passes(run, &planned);
  xio_transpose_block(last, &planned, run->nranks, tool_output_compressed(run), &storage->pass_rows,
                      &storage->pass_cols);
  storage->pass_ranks = run->nranks;
  const xio_shape out_shape = xio_shape_transposed(&last->shape);
  if (run->join_only) return first_input_chunks(run, storage);
  return run->opt->chunks ? chunks_by_name(run, &out_shape, storage, err) : 0;
}

/* Collective.  The transpose of run->in made in the partial output
 * (run->out's file), with its attributes and dimension scales.  Its
 * chunks fit the passes planned for it. */
static int make_output_dataset(transpose_run *run, const xio_transpose_options *topt,
                               xio_error *err) {
  const char *shown = run->output.final_path;
  const char *name = output_name(run, run->dataset_index);
  xio_skipped_attributes skipped;
  int scales = 0;
  xio_matrix last;
  xio_storage storage;
  if (tool_output_storage(run, topt, &last, &storage, err)) return -1;
  const xio_shape out_shape = xio_shape_transposed(&last.shape);
  if (xio_create_dataset(&run->out, shown, name, run->in.type, &run->in, &storage, &out_shape,
                         err) ||
      xio_copy_attributes(&run->in, &run->out, run->order, &skipped, err) ||
      xio_copy_dimension_scales(&run->in, &run->out, run->order, &scales, err))
    return -1;
  run->compressed |= run->out.filtered;
  char where[4800];
  snprintf(where, sizeof where, "of %s:%s", run->in_path.file, run->in.dataset);
  warn_skipped(run, where, &skipped);
  if (scales && run->opt->verbose)
    tool_report_verbose("%s: %d dimension scale(s) attached with the axes moved", run->in.dataset,
                        scales);
  return 0;
}

/* Collective.  The output dataset of run->in, made already, as run->out. */
static int use_output_dataset(transpose_run *run, xio_error *err) {
  return run->kind->open(run, run->dataset_index, run->output.partial_path, run->output.final_path,
                         1, err) ||
                 tool_fold_output(run, err)
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
  return tool_open_dataset(make->run, k, NULL, err) != TOOL_EXIT_OK ||
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
    if (tool_open_dataset(run, k, NULL, err) != TOOL_EXIT_OK) return -1;
    if (!tool_output_compressed(run)) data += matrix_bytes(&run->in);
    /* a dataset's scratch files, two at most at once, go once it is moved */
    const uint64_t files = (uint64_t)(run->moves - 1 < 2 ? run->moves - 1 : 2);
    if (files * matrix_bytes(&run->in) > scratch) scratch = files * matrix_bytes(&run->in);
  }
  if ((!run->opt->only && xio_rest_bytes(run->comm, run->in.file, run->out.file, run->in_path.file,
                                         &rearranged, NULL, NULL, &rest, err)) ||
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
  char where[4200];
  snprintf(where, sizeof where, "in %s", run->in_path.file);
  warn_skipped(run, where, &copied.skipped);
  char bytes[32];
  tool_format_bytes(copied.bytes, bytes, sizeof bytes);
  tool_report_verbose("copied the rest of %s: %d dataset(s) (%s of data), %d group(s), %d link(s)",
                      run->in_path.file, copied.datasets, bytes, copied.groups, copied.links);
  return 0;
}

int tool_start_output(transpose_run *run, const xio_transpose_options *topt, xio_error *err) {
  if (run->kind->ready && run->kind->ready(run, topt, err)) return -1;
  if (tool_resume_begin(run, err)) return -1;
  if (run->output.partial_found) {
    if (run->record.dataset_index != 0 && begin_dataset(run, run->record.dataset_index, err))
      return -1;
    const int held = tool_resume_partial(run, topt, err);
    if (held != 0) return held > 0 ? 0 : -1;
    /* started over: from the first dataset */
    run->record.finished = (xio_checksums){0, 0};
    if (run->dataset_index != 0 && begin_dataset(run, 0, err)) return -1;
  }
  return tool_record_copying(run, err) || run->kind->make(run, topt, err) ||
                 begin_dataset(run, 0, err) || use_output_dataset(run, err) ||
                 tool_begin_move(run, 0, err) || xio_flush(&run->out, err)
             ? -1
             : 0;
}

/* Collective (tool_output_kind's make): the file made, its space
 * reserved, the rest of the input copied and the rearranged datasets made
 * where the copies reach them. */
static int make_hdf5(transpose_run *run, const xio_transpose_options *topt, xio_error *err) {
  const char *partial = run->output.partial_path, *shown = run->output.final_path;
  return xio_create_file(run->comm, partial, shown, &run->out, err) || reserve_output(run, err) ||
                 copy_rest_of_input(run, topt, err) || make_missing_outputs(run, topt, err)
             ? -1
             : 0;
}

static int open_hdf5(transpose_run *run, int k, const char *path, const char *shown, int writable,
                     xio_error *err) {
  return run->out.comm != MPI_COMM_NULL
             ? xio_use_dataset(&run->out, shown, output_name(run, k), err)
             : xio_open_existing(run->comm, path, shown, output_name(run, k), writable, &run->out,
                                 err);
}

/* Collective: the file's attributes, the file closed, and what parallel
 * HDF5 cannot write.  The attributes last: written at the start, they
 * left HDF5 1.10.8 metadata to flush at a failed run's close, which
 * failed and crashed the rank in MPI_Finalize (a full disk during the
 * passes). */
static int finish_hdf5(transpose_run *run, xio_error *err) {
  return tool_copy_file_attributes(run, err) || xio_close(&run->out, err) ||
                 tool_finish_rest(run, err)
             ? -1
             : 0;
}

static int compare_hdf5_rest(transpose_run *run, const char *path, char *differs, size_t size,
                             uint64_t *compared, xio_error *err) {
  (void)path; /* run->out's file */
  const xio_path_list rearranged = rearranged_list(run);
  return xio_compare_rest(run->comm, run->in.file, run->out.file, run->input_shown, &rearranged,
                          run->budget, tool_stop_requested, differs, size, compared, err);
}

const tool_output_kind tool_hdf5_output = {.name = "HDF5 file",
                                           .store = 0,
                                           .make = make_hdf5,
                                           .open = open_hdf5,
                                           .finish = finish_hdf5,
                                           .compare_rest = compare_hdf5_rest};

int tool_next_dataset(transpose_run *run, xio_transpose_options *topt, xio_error *err) {
  run->moved_bytes += matrix_bytes(&run->in);
  run->moved_passes += xio_pass_count(&run->record.progress.grid);
  run->record.finished = tool_checksums_chain(run->record.finished, tool_dataset_sums(run));
  run->record.progress = (xio_progress){0};
  run->record.move = 0;
  run->record.first_read = run->record.source_sum = 0;
  topt->resume_from = NULL;
  if (begin_dataset(run, run->dataset_index + 1, err)) return -1;
  tool_limit_passes(run, topt);
  if (run->opt->verbose) {
    char type_text[256];
    xio_type_describe(run->in.type, type_text, sizeof type_text);
    tool_say_dataset(run, type_text);
  }
  return use_output_dataset(run, err) || tool_begin_move(run, 0, err) ? -1 : 0;
}
