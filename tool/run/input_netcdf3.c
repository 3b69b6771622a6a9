/* A netCDF-3 file read through its netCDF-4 view (input_reader.h). */
#include "input_reader.h"

#ifdef XIO_HAVE_NETCDF
#include "netcdf3_view.h"
#include "run.h"

static int make(transpose_run *run, char *warning, size_t size, xio_error *err) {
  (void)warning, (void)size;
  return xio_nc3_view_create(run->in_path.file, run->output.view_path, err);
}

static int fill(transpose_run *run, const xio_path_list *skip, char *warning, size_t size,
                xio_error *err) {
  (void)warning, (void)size;
  return xio_nc3_view_fill(run->in_path.file, run->output.view_path, skip, piece_budget(run), err);
}

/* The rearranged variable's values at their offsets in the file. */
static int attach(transpose_run *run, xio_error *err) {
  return xio_matrix_read_netcdf3(&run->in, run->in_path.file, run->in_path.file, err);
}

const tool_input_reader tool_netcdf3_reader = {make, fill, attach, NULL};
#endif
