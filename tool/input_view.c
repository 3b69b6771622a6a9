/* A netCDF-3 input's view, made, filled and removed (netcdf3_input.h). */
#include "netcdf3_input.h"

#include <unistd.h>

#ifdef XIO_HAVE_NETCDF
#include "netcdf3_view.h"

static int make_on_root(void *arg, xio_error *err) {
  const transpose_run *run = arg;
  return xio_nc3_view_create(run->in_path.file, run->output.view_path, err);
}

static int fill_on_root(void *arg, xio_error *err) {
  const transpose_run *run = arg;
  const xio_path_list skip = rearranged_list(run);
  return xio_nc3_view_fill(run->in_path.file, run->output.view_path, &skip, piece_budget(run), err);
}
#else /* tool_check_input refuses netCDF-3 inputs */
static int make_on_root(void *arg, xio_error *err) {
  (void)arg;
  return xio_fail(err, "this xpose reads no netCDF-3 files");
}

static int fill_on_root(void *arg, xio_error *err) { return make_on_root(arg, err); }
#endif

int tool_netcdf3_view_make(transpose_run *run, xio_error *err) {
  run->view_made = run->rank == 0; /* a half-made one goes too */
  return xio_on_root(run->comm, make_on_root, run, err);
}

int tool_netcdf3_view_fill(transpose_run *run, xio_error *err) {
  return xio_on_root(run->comm, fill_on_root, run, err);
}

int tool_netcdf3_read_input(transpose_run *run, xio_error *err) {
  if (!run->netcdf3) return 0;
  return xio_agree(
      run->comm, xio_matrix_read_netcdf3(&run->in, run->in_path.file, run->in_path.file, err), err);
}

void tool_netcdf3_view_drop(const transpose_run *run) {
  if (run->view_made) (void)unlink(run->output.view_path);
}
