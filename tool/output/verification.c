/* Reading outputs back (verification.h): after the passes, for a rerun,
 * and for `xpose verify`. */
#include "verification.h"

#include <stdio.h>

#include "h5_attributes.h"
#include "h5_copy.h"
#include "h5_types.h"
#include "h5_verify.h"
#include "input_file.h"
#include "input_view.h"
#include "make_output.h"
#include "moves.h"
#include "node_memory.h"
#include "output_file.h"
#include "report.h"
#include "size.h"
#include "stop_signals.h"
#include "summary.h"
#include "zarr_meta.h"

int tool_verify_output(transpose_run *run, double *seconds, xio_error *err) {
  const double t0 = MPI_Wtime();
  const xio_checksums expected = tool_checksums_chain(run->record.finished, tool_dataset_sums(run));
  const int against_input = run->opt->verify == TOOL_VERIFY_INPUT;
  xio_checksums found = {0, 0};
  int rc = 0;
  if (run->output_read_back) { /* one dataset, resumed complete: read back at the start */
    found.written = expected.written;
    if (against_input)
      rc = xio_checksum_matrix(&run->in, NULL, run->budget, tool_stop_requested, &found.read, err);
  } else {
    rc = tool_output_evict(run->comm, &run->output, err);
    for (int k = 0; k < run->rearranged.count && rc == 0; k++) {
      xio_checksums sums = {0, 0};
      if (run->dataset_index != k && tool_open_dataset(run, k, NULL, err) != TOOL_EXIT_OK) rc = -1;
      if (rc == 0)
        rc = run->kind->open(run, k, run->output.partial_path, run->output.final_path, 0, err);
      if (rc == 0) rc = tool_fold_output(run, err);
      const xio_shape written_from = tool_move_source_shape(run, run->moves - 1);
      if (rc == 0)
        rc = xio_checksum_matrix(&run->out, &written_from, run->budget, tool_stop_requested,
                                 &sums.written, err);
      if (rc == 0 && against_input)
        rc = xio_checksum_matrix(&run->in, NULL, run->budget, tool_stop_requested, &sums.read, err);
      found = tool_checksums_chain(found, sums);
    }
  }
  /* the copies of the rest of the input, against the input */
  char differs[1024] = "";
  uint64_t compared = 0;
  if (rc == 0 && !run->opt->only && run->out.comm == MPI_COMM_NULL) /* resumed complete */
    rc = tool_output_evict(run->comm, &run->output, err) ||
                 run->kind->open(run, 0, run->output.partial_path, run->output.final_path, 0, err)
             ? -1
             : 0;
  if (rc == 0 && !run->opt->only)
    rc = run->kind->compare_rest(run, run->output.partial_path, differs, sizeof differs, &compared,
                                 err);
  if (rc == 0 && compared) {
    char bytes[32];
    tool_format_bytes(compared, bytes, sizeof bytes);
    tool_report_verbose("the copies of the rest of %s read back and compared: %s", run->input_shown,
                        bytes);
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
                    run->out_path.file, differs, run->input_shown),
           TOOL_EXIT_VERIFY;
  if (against_input && found.read != expected.read)
    return xio_fail(err,
                    "verification failed: %s%s%s, read again, differs from what was transposed "
                    "(checksums %016llx and %016llx): the input changed during the run; nothing "
                    "was published",
                    run->input_shown, run->rearranged.count == 1 ? ":" : "",
                    run->rearranged.count == 1 ? run->in.dataset : "",
                    (unsigned long long)found.read, (unsigned long long)expected.read),
           TOOL_EXIT_VERIFY;
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
             run->input_shown, run->in.dataset);
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
    const int found = run->kind->open(run, k, file, file, 0, err) == 0;
    /* a file without the dataset is not the transpose (exit 3); one that
     * cannot be read is an error */
    if (!found &&
        (run->out.file < 0 || H5Lexists(run->out.file, output_name(run, k), H5P_DEFAULT) > 0))
      return TOOL_EXIT_ERROR;
    if (!found) { /* named in messages: the input dataset k (with --dims, planned already) */
      *match = 0;
      snprintf(detail, size, "%s", err->message);
      if (k > 0 && (opened = tool_open_dataset(run, k, NULL, err)) != TOOL_EXIT_OK) return opened;
    } else if ((opened = tool_open_dataset(run, k, &run->out, err)) != TOOL_EXIT_OK) {
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
    /* (a store's attributes are JSON: its values alone are read back) */
    if (found && *match && run->out.dset >= 0 &&
        compare_dataset_attributes(run, match, detail, size, err))
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
  if (xio_compare_rest(run->comm, run->in.file, run->out.file, run->input_shown, &rearranged,
                       budget, NULL, differs, sizeof differs, &bytes, err))
    return -1;
  if (differs[0]) {
    *match = 0;
    snprintf(detail, size, "%.300s:%.300s differs from %.300s's (--only checks the dataset alone)",
             run->out_path.file, differs, run->input_shown);
  }
  return 0;
}

/* Collective.  Without --only: whether OUT holds the rest of IN as it is
 * (the output kind's compare_rest); where not, *match = 0 and why. */
static int compare_kept_rest(transpose_run *run, int *match, char *detail, size_t size,
                             xio_error *err) {
  char differs[1024];
  uint64_t bytes;
  if (run->kind->compare_rest(run, run->out_path.file, differs, sizeof differs, &bytes, err))
    return -1;
  if (differs[0]) {
    *match = 0;
    snprintf(detail, size, "%.300s:%.300s differs from %.300s's (--only checks the dataset alone)",
             run->out_path.file, differs, run->input_shown);
  }
  return 0;
}

int tool_check_already_done(transpose_run *run, const xio_transpose_options *topt,
                            const char *type_text, xio_error *err) {
  const double start = MPI_Wtime();
  int match = 0;
  char detail[sizeof err->message] = "";
  xio_error why = {""};
  if ((run->kind->ready && run->kind->ready(run, topt, &why)) ||
      verify_each(run, run->out_path.file, run->budget, &match, detail, sizeof detail, &why) !=
          TOOL_EXIT_OK ||
      (match && !run->opt->only && compare_kept_rest(run, &match, detail, sizeof detail, &why)))
    snprintf(detail, sizeof detail, "%s", why.message), match = 0;
  char found_dataset[sizeof run->out.dataset];
  snprintf(found_dataset, sizeof found_dataset, "%s", run->out.dataset);
  if (xio_close(&run->out, &why) && match) {
    match = 0;
    snprintf(detail, sizeof detail, "%s", why.message);
  }
  if (!match)
    return xio_fail(err, "output %s exists and is not the transpose of %s:%s (%.400s); %s",
                    run->out_path.file, run->input_shown, run->in.dataset, detail,
                    run->output.store ? "remove it to write it again (a store is never replaced)"
                                      : "use --force to replace it"),
           TOOL_EXIT_ERROR;
  if (run->opt->json) {
    tool_json j;
    tool_json_begin(&j);
    tool_json_string(&j, "status", "ok");
    tool_json_int(&j, "exit_code", TOOL_EXIT_OK);
    tool_json_bool(&j, "already_done", 1);
    tool_describe_pair(&j, run, type_text, found_dataset);
    tool_json_string(&j, "detail", detail);
    tool_json_number(&j, "seconds", MPI_Wtime() - start);
    tool_json_print(&j);
  } else if (run->rearranged.count > 1) {
    tool_report_result(
        "%s already holds the %d datasets of %s rearranged (%s): nothing to do, "
        "%.3f s",
        run->out_path.file, run->rearranged.count, run->input_shown, detail, MPI_Wtime() - start);
  } else {
    tool_report_result(
        "%s:%s is already the transpose of %s:%s (%s -> %s, %s; %s): nothing to do, %.3f s",
        run->out_path.file, found_dataset, run->input_shown, run->in.dataset, run->in_shape,
        run->out_shape, type_text, detail, MPI_Wtime() - start);
  }
  return TOOL_EXIT_OK;
}

/* Collective.  `xpose verify`'s inputs checked, and the output; a
 * netCDF-3 input or inputs joined read through their view, made beside
 * the output under its lock (as a run makes it, input_view.h), the output
 * and any partial of it left as they are.  An exit status. */
static int open_check(transpose_run *run, xio_error *err) {
  tool_input_kind out_kind = TOOL_INPUT_HDF5;
  if (XIO_MPICHECK(MPI_Comm_rank(run->comm, &run->rank), err) || tool_check_inputs(run, err) ||
      tool_check_input(run->comm, run->out_path.file, run->kind->store ? &out_kind : NULL, err))
    return TOOL_EXIT_ERROR;
  xio_zarr_node node = XIO_ZARR_NONE;
  if (run->kind->store && (out_kind != TOOL_INPUT_ZARR ||
                           xio_zarr_node_at(run->out_path.file, &node, &run->store_format, err) ||
                           node != XIO_ZARR_GROUP))
    return xio_fail(err, "%s is no Zarr store of xpose's (a group of arrays)", run->out_path.file),
           TOOL_EXIT_ERROR;
  if (viewed(run) &&
      tool_output_prepare(run->comm, run->out_path.file, run->input_files, run->input_count, 0,
                          TOOL_PARTIAL_KEEP, run->kind->store, &run->output, err)) {
    xio_error why = *err;
    xio_fail(err, "%s (the inputs are read through a view made beside %s)", why.message,
             run->out_path.file);
    return run->output.usage_error ? TOOL_EXIT_USAGE : TOOL_EXIT_ERROR;
  }
  if (viewed(run) && tool_view_make(run, err)) return TOOL_EXIT_ERROR;
  const int chosen = tool_choose_datasets(run, err);
  if (chosen != TOOL_EXIT_OK) return chosen;
  return tool_open_filled_input(run, err) ? TOOL_EXIT_ERROR : TOOL_EXIT_OK;
}

int tool_run_check(const tool_options *opt, MPI_Comm comm) {
  transpose_run run_state, *run = &run_state;
  xio_error err = {""};
  const int begun = tool_run_begin(run, opt, comm, &err);
  if (begun != TOOL_EXIT_OK) return begun;
  int exit_code = TOOL_EXIT_ERROR, match = 0;
  char detail[1024] = "", type_text[256] = "";
  const double start = MPI_Wtime();
  uint64_t budget = opt->memory_bytes;
  if ((exit_code = open_check(run, &err)) != TOOL_EXIT_OK ||
      (!budget && tool_default_memory_budget(comm, &budget, NULL, 0, &err)) ||
      (exit_code = verify_each(run, run->out_path.file, budget, &match, detail, sizeof detail,
                               &err)) != TOOL_EXIT_OK ||
      (match && !opt->only &&
       (run->kind->store ? compare_kept_rest(run, &match, detail, sizeof detail, &err)
                         : compare_rest(run, budget, &match, detail, sizeof detail, &err)))) {
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
      tool_describe_pair(&j, run, type_text, run->out.dataset);
      tool_json_string(&j, "detail", detail);
      tool_json_number(&j, "seconds", MPI_Wtime() - start);
      tool_json_print(&j);
    } else if (match && run->rearranged.count > 1) {
      tool_report_result(
          "%s holds the %d datasets of %s rearranged (%s) and the rest as it is, "
          "%.3f s",
          run->out_path.file, run->rearranged.count, run->input_shown, detail, MPI_Wtime() - start);
    } else if (match) {
      tool_report_result("%s:%s is %s of %s:%s (%s -> %s, %s; %s), %.3f s", run->out_path.file,
                         run->out.dataset, run->folds[0].rechunk ? "a copy" : "the transpose",
                         run->input_shown, run->in.dataset, run->in_shape, run->out_shape,
                         type_text, detail, MPI_Wtime() - start);
    } else {
      tool_report_error("%s:%s is not the transpose of %s:%s: %s", run->out_path.file,
                        run->out.dataset, run->input_shown, run->in.dataset, detail);
    }
  }
  xio_close(&run->out, &err);
  xio_close(&run->in, &err);
  tool_view_drop(run);
  tool_output_release(comm, &run->output, 1);
  tool_dataset_list_free(&run->rearranged);
  return exit_code;
}
