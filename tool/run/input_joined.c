/* Files joined along their records, read through their view
 * (input_reader.h): as HDF5 files (join_h5_view.h) or by netCDF-C
 * (join_view.h); the datasets joined read from the files themselves. */
#include "input_reader.h"

#include "join_h5_view.h"
#include "join_source.h"
#include "run.h"

#ifdef XIO_HAVE_NETCDF
#include "join_view.h"
#endif

int tool_read_joined(transpose_run *run, xio_error *err) {
  const xio_path_list joined = xio_path_array_list(&run->joined_datasets);
  if (xio_path_index(&joined, run->in.dataset) < 0) return 0; /* the view's */
  return xio_join_attach(&run->in, run->input_files, run->records, run->input_count, err);
}

static int make_hdf5(transpose_run *run, char *warning, size_t size, xio_error *err) {
  return xio_join_h5_view_create(run->input_files, run->input_count, run->opt->concat,
                                 run->output.view_path, piece_budget(run), &run->joined_datasets,
                                 run->records, warning, size, err);
}

static int fill_hdf5(transpose_run *run, const xio_path_list *skip, char *warning, size_t size,
                     xio_error *err) {
  const xio_path_list joined = xio_path_array_list(&run->joined_datasets);
  return xio_join_h5_view_fill(run->input_files, run->input_count, run->output.view_path, &joined,
                               skip, piece_budget(run), run->records, warning, size, err);
}

const tool_input_reader tool_joined_hdf5_reader = {make_hdf5, fill_hdf5, tool_read_joined, NULL};

#ifdef XIO_HAVE_NETCDF
static int make_netcdf(transpose_run *run, char *warning, size_t size, xio_error *err) {
  (void)warning, (void)size;
  return xio_join_view_create(run->input_files, NULL, run->opt->concat, run->output.view_path,
                              &run->joined_datasets, err);
}

static int fill_netcdf(transpose_run *run, const xio_path_list *skip, char *warning, size_t size,
                       xio_error *err) {
  return xio_join_view_fill(run->input_files, NULL, run->input_count, run->output.view_path, skip,
                            piece_budget(run), run->records, warning, size, err);
}

const tool_input_reader tool_joined_netcdf_reader = {make_netcdf, fill_netcdf, tool_read_joined,
                                                     NULL};
#endif
