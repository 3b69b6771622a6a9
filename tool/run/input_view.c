/* The input's reader chosen, and its view made, filled and removed
 * through it (input_view.h). */
#include "input_view.h"

#include <unistd.h>

#include "input_file.h"
#include "input_reader.h"
#include "join_h5_view.h"
#include "report.h"

/* Rank 0: whether files joined are joined as HDF5 files (join_h5_view.h),
 * else by netCDF-C. */
typedef struct {
  const transpose_run *run;
  int hdf5;
} join_choice;

static int choose_join(void *arg, xio_error *err) {
  join_choice *c = arg;
  c->hdf5 = xio_join_h5_wanted(c->run->in_path.file, c->run->opt->concat, err);
  if (c->hdf5 < 0) return -1;
#ifndef XIO_HAVE_NETCDF
  if (!c->hdf5)
    return xio_fail(err,
                    "%s: joining these files takes netCDF-C, which this xpose was built without "
                    "(libnetcdf-mpi-dev)",
                    c->run->in_path.file);
#endif
  return 0;
}

/* Collective.  The reader of inputs of `kind` (all of them, where joined). */
static int choose_reader(transpose_run *run, tool_input_kind kind, xio_error *err) {
  run->reader = NULL; /* an HDF5 or netCDF-4 file, read as it is */
#ifdef XIO_HAVE_NETCDF
  if (kind == TOOL_INPUT_ZARR)
    run->reader = run->joined ? &tool_joined_stores_reader : &tool_store_reader;
  else if (kind == TOOL_INPUT_NETCDF3 && !run->joined)
    run->reader = &tool_netcdf3_reader;
#else /* tool_check_input refuses netCDF-3 files and stores */
  (void)kind;
#endif
  if (run->reader || !run->joined) return 0;
  join_choice c = {run, 0};
  if (xio_on_root(run->comm, choose_join, &c, err) ||
      XIO_MPICHECK(MPI_Bcast(&c.hdf5, 1, MPI_INT, 0, run->comm), err))
    return -1;
#ifdef XIO_HAVE_NETCDF
  run->reader = c.hdf5 ? &tool_joined_hdf5_reader : &tool_joined_netcdf_reader;
#else
  run->reader = &tool_joined_hdf5_reader;
#endif
  return 0;
}

int tool_check_inputs(transpose_run *run, xio_error *err) {
  tool_input_kind kind = TOOL_INPUT_HDF5, first = TOOL_INPUT_HDF5;
  for (int i = 0; i < run->input_count; i++) {
    if (tool_check_input(run->comm, run->input_files[i], &kind, err)) return -1;
    if (i == 0) first = kind;
    if ((kind == TOOL_INPUT_ZARR) != (first == TOOL_INPUT_ZARR))
      return xio_fail(err, "%s is a %s and %s a %s: xpose joins stores with stores, files with files",
                      run->input_files[0], first == TOOL_INPUT_ZARR ? "Zarr store" : "file",
                      run->input_files[i], kind == TOOL_INPUT_ZARR ? "Zarr store" : "file");
  }
  return choose_reader(run, kind, err);
}

static int make_on_root(void *arg, xio_error *err) {
  transpose_run *run = arg;
  char warning[2300] = "";
  if (run->reader->make(run, warning, sizeof warning, err)) return -1;
  if (warning[0]) tool_report_warning("%s", warning);
  return 0;
}

static int fill_on_root(void *arg, xio_error *err) {
  transpose_run *run = arg;
  const xio_path_list skip = rearranged_list(run);
  char warning[2300] = "";
  if (run->reader->fill(run, &skip, warning, sizeof warning, err)) return -1;
  if (warning[0]) tool_report_warning("%s", warning);
  return 0;
}

int tool_view_make(transpose_run *run, xio_error *err) {
  run->view_made = run->rank == 0; /* a half-made one goes too */
  xio_path_array *joined = &run->joined_datasets;
  if (xio_on_root(run->comm, make_on_root, run, err) ||
      XIO_MPICHECK(MPI_Bcast(&joined->count, 1, MPI_INT, 0, run->comm), err) ||
      XIO_MPICHECK(MPI_Bcast(run->records, run->input_count, MPI_INT64_T, 0, run->comm), err))
    return -1;
  if (run->rank != 0) joined->capacity = joined->count;
  return tool_share_paths(run->comm, &joined->paths, joined->count, err);
}

int tool_view_fill(transpose_run *run, xio_error *err) {
  if (xio_on_root(run->comm, fill_on_root, run, err)) return -1;
  return run->joined
             ? XIO_MPICHECK(MPI_Bcast(run->records, run->input_count, MPI_INT64_T, 0, run->comm),
                            err)
             : 0;
}

int tool_view_read_input(transpose_run *run, xio_error *err) {
  if (!run->reader || !run->reader->attach) return 0; /* the values are where HDF5 reads */
  return xio_agree(run->comm, run->reader->attach(run, err), err);
}

void tool_view_drop(transpose_run *run) {
  if (run->view_made) (void)unlink(run->output.view_path);
  if (run->reader && run->reader->drop) run->reader->drop(run);
  xio_path_array_free(&run->joined_datasets);
}
