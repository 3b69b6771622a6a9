/* The view of a netCDF-3 input or of inputs joined, made, filled and
 * removed (input_view.h). */
#include "input_view.h"

#include <stdio.h>
#include <unistd.h>

#include "input_file.h"
#include "join_source.h"
#include "report.h"

#ifdef XIO_HAVE_NETCDF
#include "join_view.h"
#include "netcdf3_view.h"

static int make_on_root(void *arg, xio_error *err) {
  transpose_run *run = arg;
  char record_dim[257]; /* NC_MAX_NAME + 1 */
  if (!run->joined) return xio_nc3_view_create(run->in_path.file, run->output.view_path, err);
  if (xio_join_view_create(run->input_files, run->opt->concat, run->output.view_path, record_dim,
                           sizeof record_dim, err))
    return -1;
  snprintf(run->record_spec, sizeof run->record_spec, "%s/", record_dim);
  return 0;
}

static int fill_on_root(void *arg, xio_error *err) {
  transpose_run *run = arg;
  const xio_path_list skip = rearranged_list(run);
  if (!run->joined)
    return xio_nc3_view_fill(run->in_path.file, run->output.view_path, &skip, piece_budget(run),
                             err);
  char warning[2048];
  if (xio_join_view_fill(run->input_files, run->input_count, run->output.view_path, &skip,
                         piece_budget(run), run->records, warning, sizeof warning, err))
    return -1;
  if (warning[0]) tool_report_warning("%s", warning);
  return 0;
}
#else /* tool_check_inputs refuses netCDF-3 inputs and joins */
static int make_on_root(void *arg, xio_error *err) {
  (void)arg;
  return xio_fail(err, "this xpose reads no netCDF-3 files and joins no inputs");
}

static int fill_on_root(void *arg, xio_error *err) { return make_on_root(arg, err); }
#endif

int tool_check_inputs(transpose_run *run, xio_error *err) {
  int netcdf3 = 0;
  for (int i = 0; i < run->input_count; i++)
    if (tool_check_input(run->comm, run->input_files[i], &netcdf3, err)) return -1;
  run->netcdf3 = !run->joined && netcdf3; /* inputs joined: all read through the join's view */
#ifndef XIO_HAVE_NETCDF
  if (run->joined)
    return xio_fail(err, "this xpose, built without netCDF-C (libnetcdf-mpi-dev), joins no inputs");
#endif
  return 0;
}

int tool_view_make(transpose_run *run, xio_error *err) {
  run->view_made = run->rank == 0; /* a half-made one goes too */
  if (xio_on_root(run->comm, make_on_root, run, err)) return -1;
  return XIO_MPICHECK(MPI_Bcast(run->record_spec, sizeof run->record_spec, MPI_CHAR, 0, run->comm),
                      err);
}

int tool_view_fill(transpose_run *run, xio_error *err) {
  if (xio_on_root(run->comm, fill_on_root, run, err)) return -1;
  return run->joined
             ? XIO_MPICHECK(MPI_Bcast(run->records, run->input_count, MPI_INT64_T, 0, run->comm),
                            err)
             : 0;
}

int tool_view_read_input(transpose_run *run, xio_error *err) {
  if (run->netcdf3)
    return xio_agree(run->comm,
                     xio_matrix_read_netcdf3(&run->in, run->in_path.file, run->in_path.file, err),
                     err);
  /* a record variable's values from the inputs; fixed ones are the view's */
  if (run->joined && run->in.shape.ndims > 0 && (run->in.shape.unlimited & 1u))
    return xio_agree(
        run->comm, xio_join_attach(&run->in, run->input_files, run->records, run->input_count, err),
        err);
  return 0;
}

void tool_view_drop(const transpose_run *run) {
  if (run->view_made) (void)unlink(run->output.view_path);
}
