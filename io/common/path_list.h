/* Paths of datasets ("/tas"), as a run names those it rearranges: the
 * rest of a file is copied without them (h5_copy.h), and a netCDF-3
 * input's view is filled without them (netcdf3_view.h). */
#ifndef XIO_PATH_LIST_H
#define XIO_PATH_LIST_H

typedef struct {
  const char (*paths)[512];
  int count;
} xio_path_list;

/* Where `path`, with its leading '/' or without (as links are visited,
 * as netCDF names variables), is in `list`, or -1. */
int xio_path_index(const xio_path_list *list, const char *path);

#endif
