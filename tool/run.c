/* One run's state begun (run.h). */
#include "run.h"

#include <stdio.h>

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
  return 0;
}

int tool_run_begin(transpose_run *run, const tool_options *opt, MPI_Comm comm, xio_error *err) {
  *run = (transpose_run){.opt = opt, .comm = comm};
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
  if (parse_paths(opt, &run->in_path, &run->out_path, err) == 0 &&
      xio_mpi_hints_set(opt->mpi_hints, opt->mpi_hint_count, err) == 0)
    return TOOL_EXIT_OK;
  tool_report_error("%s", err->message);
  return TOOL_EXIT_USAGE;
}
