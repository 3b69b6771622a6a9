/* One run's state begun (run.h). */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_threads.h"
#include "mpi_hints.h"
#include "pool.h"
#include "report.h"

static int parse_paths(const tool_options *opt, dataset_path *in, dataset_path *out,
                       xio_error *err) {
  if (xio_split_path(opt->input, in->file, sizeof in->file, in->dataset, sizeof in->dataset))
    return xio_fail(err, "invalid input '%s': expected FILE.h5 or FILE.h5:/dataset", opt->input);
  if (xio_split_path(opt->output, out->file, sizeof out->file, out->dataset, sizeof out->dataset))
    return xio_fail(err, "invalid output '%s': expected FILE.h5 or FILE.h5:/dataset", opt->output);
  const size_t length = strlen(out->file); /* a store named as a directory: OUT.zarr/ */
  if (opt->zarr && length > 1 && out->file[length - 1] == '/') out->file[length - 1] = '\0';
  return 0;
}

/* The input files: the first's file part, then the others as given. */
static int list_inputs(transpose_run *run, xio_error *err) {
  const tool_options *opt = run->opt;
  run->input_count = opt->input_count > 0 ? opt->input_count : 1;
  run->joined = run->input_count > 1;
  run->join_only = run->joined && !opt->dims && !opt->axes && !tool_rechunks(opt);
  run->input_files = calloc((size_t)run->input_count, sizeof *run->input_files);
  run->records = calloc((size_t)run->input_count, sizeof *run->records);
  if (!run->input_files || !run->records) return xio_fail(err, "out of memory");
  run->input_files[0] = run->in_path.file;
  for (int i = 1; i < run->input_count; i++) run->input_files[i] = opt->inputs[i];
  if (run->joined)
    snprintf(run->input_shown, sizeof run->input_shown, "%.400s ... %.400s (%d inputs joined)",
             run->input_files[0], run->input_files[run->input_count - 1], run->input_count);
  else
    snprintf(run->input_shown, sizeof run->input_shown, "%.1000s", run->in_path.file);
  return 0;
}

int tool_run_begin(transpose_run *run, const tool_options *opt, MPI_Comm comm, xio_error *err) {
  *run = (transpose_run){
      .opt = opt, .comm = comm, .kind = opt->zarr ? &tool_zarr_output : &tool_hdf5_output};
  xio_matrix_reset(&run->in);
  xio_matrix_reset(&run->out);
  xio_matrix_reset(&run->scratch[0]);
  xio_matrix_reset(&run->scratch[1]);
  run->src = &run->in, run->dst = &run->out;
  if (tool_host_threads(comm, opt->threads, &run->threads, run->threads_why,
                        sizeof run->threads_why, err)) {
    tool_report_error("%s", err->message);
    return TOOL_EXIT_ERROR;
  }
  xio_pool_set_threads(run->threads);
  tool_report_verbose("chunks inflated and deflated, and host transposes, on %s", run->threads_why);
  if (parse_paths(opt, &run->in_path, &run->out_path, err) == 0 && list_inputs(run, err) == 0 &&
      xio_mpi_hints_set(opt->mpi_hints, opt->mpi_hint_count, err) == 0)
    return TOOL_EXIT_OK;
  tool_report_error("%s", err->message);
  return TOOL_EXIT_USAGE;
}
