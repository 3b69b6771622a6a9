/* A Zarr store, or stores joined, read through a netCDF-4 view
 * (input_reader.h, zarr_view.h): the rearranged arrays read from their
 * chunk files (zarr_source.h, join_source.h). */
#include "input_reader.h"

#ifdef XIO_HAVE_NETCDF
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "join_view.h"
#include "run.h"
#include "zarr_source.h"
#include "zarr_view.h"
#include "zarr_view_check.h"

static int make(transpose_run *run, char *warning, size_t size, xio_error *err) {
  return xio_zarr_view_create(run->in_path.file, run->output.view_path, warning, size, err);
}

static int fill(transpose_run *run, const xio_path_list *skip, char *warning, size_t size,
                xio_error *err) {
  (void)warning, (void)size;
  return xio_zarr_view_fill(run->in_path.file, run->output.view_path, skip, piece_budget(run), err);
}

static int attach(transpose_run *run, xio_error *err) {
  return xio_zarr_attach(&run->in, run->in_path.file, err);
}

const tool_input_reader tool_store_reader = {make, fill, attach, NULL};

/* Stores joined: each store's own view made (the first's warning said),
 * in the folder of them, and netCDF-C joins those as it joins files. */
static int make_joined(transpose_run *run, char *warning, size_t size, xio_error *err) {
  const char *folder = run->output.store_views;
  if (mkdir(folder, 0777) != 0 && errno != EEXIST)
    return xio_fail(err, "cannot make the folder %s: %s", folder, strerror(errno));
  if (!(run->store_views = calloc((size_t)run->input_count, sizeof *run->store_views)))
    return xio_fail(err, "out of memory joining the stores");
  for (int i = 0; i < run->input_count; i++, run->store_view_count++) {
    char *path = malloc(strlen(folder) + 16), ignored[2300];
    if (!(run->store_views[i] = path)) return xio_fail(err, "out of memory joining the stores");
    sprintf(path, "%s/%d.nc", folder, i);
    if (xio_zarr_view_create(run->input_files[i], path, i ? ignored : warning,
                             i ? sizeof ignored : size, err))
      return -1;
  }
  return xio_join_view_create(run->input_files, (const char *const *)run->store_views,
                              run->opt->concat, run->output.view_path, &run->joined_datasets, err);
}

/* Each store's view filled, then joined into the run's, which is read
 * back against each store in turn, its records from where they begin. */
static int fill_joined(transpose_run *run, const xio_path_list *skip, char *warning, size_t size,
                       xio_error *err) {
  for (int i = 0; i < run->input_count; i++)
    if (xio_zarr_view_fill(run->input_files[i], run->store_views[i], skip, piece_budget(run), err))
      return -1;
  if (xio_join_view_fill(run->input_files, (const char *const *)run->store_views, run->input_count,
                         run->output.view_path, skip, piece_budget(run), run->records, warning,
                         size, err))
    return -1;
  int64_t at = 0;
  for (int i = 0; i < run->input_count; at += run->records[i++])
    if (xio_zarr_view_check(run->input_files[i], run->output.view_path, skip, run->opt->concat, at,
                            piece_budget(run), err))
      return -1;
  return 0;
}

static void drop_joined(transpose_run *run) {
  for (int i = 0; i < run->store_view_count; i++) {
    (void)unlink(run->store_views[i]);
    free(run->store_views[i]);
  }
  if (run->store_views) (void)rmdir(run->output.store_views);
  free(run->store_views);
  run->store_views = NULL, run->store_view_count = 0;
}

const tool_input_reader tool_joined_stores_reader = {make_joined, fill_joined, tool_read_joined,
                                                     drop_joined};
#endif
