/* The view of a netCDF-3 input or of inputs joined, made, filled and
 * removed (input_view.h). */
#include "input_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input_file.h"
#include "join_h5_view.h"
#include "join_source.h"
#include "report.h"

#ifdef XIO_HAVE_NETCDF
#include "join_view.h"
#include "netcdf3_view.h"
#include "zarr_source.h"
#include "zarr_view.h"
#endif

#ifdef XIO_HAVE_NETCDF
/* Rank 0: each Zarr store joined, its own view made (zarr_view.h), in
 * the folder of them; netCDF-C joins those (join_view.h). */
static int make_store_views(transpose_run *run, xio_error *err) {
  const char *folder = run->output.store_views;
  if (mkdir(folder, 0777) != 0 && errno != EEXIST)
    return xio_fail(err, "cannot make the folder %s: %s", folder, strerror(errno));
  if (!(run->store_views = calloc((size_t)run->input_count, sizeof *run->store_views)))
    return xio_fail(err, "out of memory joining the stores");
  for (int i = 0; i < run->input_count; i++, run->store_view_count++) {
    char *path = malloc(strlen(folder) + 16), warning[2300];
    if (!(run->store_views[i] = path)) return xio_fail(err, "out of memory joining the stores");
    sprintf(path, "%s/%d.nc", folder, i);
    if (xio_zarr_view_create(run->input_files[i], path, warning, sizeof warning, err)) return -1;
    if (i == 0 && warning[0]) tool_report_warning("%s", warning);
  }
  return 0;
}

/* Rank 0: each store's view filled but for the datasets in `skip`. */
static int fill_store_views(transpose_run *run, const xio_path_list *skip, xio_error *err) {
  for (int i = 0; i < run->input_count; i++)
    if (xio_zarr_view_fill(run->input_files[i], run->store_views[i], skip, piece_budget(run), err))
      return -1;
  return 0;
}
#endif

/* The files netCDF-C reads for the inputs joined: the stores' views, or
 * (NULL) the inputs themselves. */
static const char *const *join_files(const transpose_run *run) {
  return run->zarr_input ? (const char *const *)run->store_views : NULL;
}

/* Rank 0: the view made, of the one netCDF-3 input or store, or of the
 * inputs joined (as HDF5 files, or by netCDF-C), their datasets joined
 * listed. */
static int make_on_root(void *arg, xio_error *err) {
  transpose_run *run = arg;
  xio_path_array *joined = &run->joined_datasets;
  if (run->joined && !run->zarr_input &&
      (run->join_hdf5 = xio_join_h5_wanted(run->in_path.file, run->opt->concat, err)) < 0)
    return -1;
  if (run->join_hdf5) {
    char warning[1024];
    if (xio_join_h5_view_create(run->input_files, run->input_count, run->opt->concat,
                                run->output.view_path, piece_budget(run), joined, run->records,
                                warning, sizeof warning, err))
      return -1;
    if (warning[0]) tool_report_warning("%s", warning);
    return 0;
  }
#ifdef XIO_HAVE_NETCDF
  if (run->zarr_input && run->joined && make_store_views(run, err)) return -1;
  if (run->zarr_input && !run->joined) {
    char warning[2300];
    if (xio_zarr_view_create(run->in_path.file, run->output.view_path, warning, sizeof warning,
                             err))
      return -1;
    if (warning[0]) tool_report_warning("%s", warning);
    return 0;
  }
  if (!run->joined) return xio_nc3_view_create(run->in_path.file, run->output.view_path, err);
  return xio_join_view_create(run->input_files, join_files(run), run->opt->concat,
                              run->output.view_path, joined, err);
#else /* tool_check_inputs refuses netCDF-3 inputs, and every join is HDF5's */
  return xio_fail(err, "this xpose reads no netCDF-3 files");
#endif
}

static int fill_on_root(void *arg, xio_error *err) {
  transpose_run *run = arg;
  const xio_path_list skip = rearranged_list(run);
  const xio_path_list joined = xio_path_array_list(&run->joined_datasets);
  char warning[2048] = "";
  int rc = 0;
  if (run->join_hdf5)
    rc =
        xio_join_h5_view_fill(run->input_files, run->input_count, run->output.view_path, &joined,
                              &skip, piece_budget(run), run->records, warning, sizeof warning, err);
#ifdef XIO_HAVE_NETCDF
  else if (run->zarr_input && !run->joined)
    rc =
        xio_zarr_view_fill(run->in_path.file, run->output.view_path, &skip, piece_budget(run), err);
  else if (!run->joined)
    rc = xio_nc3_view_fill(run->in_path.file, run->output.view_path, &skip, piece_budget(run), err);
  else if ((rc = run->zarr_input ? fill_store_views(run, &skip, err) : 0) == 0)
    rc = xio_join_view_fill(run->input_files, join_files(run), run->input_count,
                            run->output.view_path, &skip, piece_budget(run), run->records, warning,
                            sizeof warning, err);
#endif
  if (rc == 0 && warning[0]) tool_report_warning("%s", warning);
  return rc;
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
  /* inputs joined: all read through the join's view */
  run->netcdf3 = !run->joined && kind == TOOL_INPUT_NETCDF3;
  run->zarr_input = kind == TOOL_INPUT_ZARR;
  return 0;
}

int tool_view_make(transpose_run *run, xio_error *err) {
  run->view_made = run->rank == 0; /* a half-made one goes too */
  xio_path_array *joined = &run->joined_datasets;
  if (xio_on_root(run->comm, make_on_root, run, err) ||
      XIO_MPICHECK(MPI_Bcast(&run->join_hdf5, 1, MPI_INT, 0, run->comm), err) ||
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
#ifdef XIO_HAVE_NETCDF
  if (run->zarr_input && !run->joined)
    return xio_agree(run->comm, xio_zarr_attach(&run->in, run->in_path.file, err), err);
#endif
  if (run->netcdf3)
    return xio_agree(run->comm,
                     xio_matrix_read_netcdf3(&run->in, run->in_path.file, run->in_path.file, err),
                     err);
  /* a joined dataset's values from the inputs; the others' are the view's */
  const xio_path_list joined = xio_path_array_list(&run->joined_datasets);
  if (run->joined && xio_path_index(&joined, run->in.dataset) >= 0)
    return xio_agree(
        run->comm, xio_join_attach(&run->in, run->input_files, run->records, run->input_count, err),
        err);
  return 0;
}

void tool_view_drop(transpose_run *run) {
  if (run->view_made) (void)unlink(run->output.view_path);
  for (int i = 0; i < run->store_view_count; i++) {
    (void)unlink(run->store_views[i]);
    free(run->store_views[i]);
  }
  if (run->store_views) (void)rmdir(run->output.store_views);
  free(run->store_views);
  run->store_views = NULL, run->store_view_count = 0;
  xio_path_array_free(&run->joined_datasets);
}
