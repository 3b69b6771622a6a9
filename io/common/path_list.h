/* Paths of datasets ("/tas"), as a run names those it rearranges: the
 * rest of a file is copied without them (h5_copy.h), and a netCDF-3
 * input's view is filled without them (netcdf3_view.h); as a join's view
 * names those it joins (join_view.h, join_h5_view.h). */
#ifndef XIO_PATH_LIST_H
#define XIO_PATH_LIST_H

typedef struct {
  const char (*paths)[512];
  int count;
} xio_path_list;

/* Where `path`, with its leading '/' or without (as links are visited,
 * as netCDF names variables), is in `list`, or -1. */
int xio_path_index(const xio_path_list *list, const char *path);

/* A list that owns its paths (malloc'd), each made absolute ("/tas"). */
typedef struct {
  char (*paths)[512];
  int count, capacity;
} xio_path_array;

/* Adds `path`: 0, or -1 when out of memory or the path is too long. */
int xio_path_array_add(xio_path_array *a, const char *path);

void xio_path_array_free(xio_path_array *a);

static inline xio_path_list xio_path_array_list(const xio_path_array *a) {
  return (xio_path_list){(const char(*)[512])a->paths, a->count};
}

#endif
