#include "input_dataset.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axes.h"
#include "chunk_spec.h"
#include "h5_scales.h"

typedef struct {
  const char *opened, *path; /* the file read; its name in messages */
  const char *dims, *chunks, *dataset;
  tool_dataset_list *list;
  int usage;
} dataset_choice;

/* Whether some dataset has an axis called `name`. */
static int names_an_axis(const xio_dataset_axes *list, int count, const char *name) {
  for (int d = 0; d < count; d++)
    for (int i = 0; i < list[d].ndims; i++)
      if (strcmp(list[d].names[i], name) == 0) return 1;
  return 0;
}

/* Whether a comma-separated list has `name` in it. */
static int listed(const char *list, const char *name) {
  const size_t length = strlen(name);
  for (const char *p = list; (p = strstr(p, name)) != NULL; p++)
    if ((p == list || p[-1] == ',') && (p[length] == ',' || !p[length])) return 1;
  return 0;
}

/* Fails, as a usage error, where a name of `names` (from --`option`
 * `given`) names no axis of any dataset. */
static int check_names_known(dataset_choice *choice, const xio_dataset_axes *list, int count,
                             const char *option, const char *given, const char *names,
                             xio_error *err) {
  const char *p = names;
  char name[256];
  while (tool_axes_next_name(&p, name, sizeof name)) {
    if (names_an_axis(list, count, name)) continue;
    char known[512] = "";
    for (int d = 0; d < count; d++)
      for (int i = 0; i < list[d].ndims; i++) {
        const char *axis = list[d].names[i];
        const size_t used = strlen(known);
        if (axis[0] && !listed(known, axis) && used + strlen(axis) + 8 < sizeof known)
          snprintf(known + used, sizeof known - used, "%s%s", used ? "," : "", axis);
      }
    choice->usage = 1;
    return xio_fail(err, "--%s %s: no dataset of %s has an axis named '%s' (its axes: %s)", option,
                    given, choice->path, name, known[0] ? known : "none named");
  }
  return 0;
}

/* Whether dataset d has an axis that `names` names. */
static int has_named_axis(const xio_dataset_axes *d, const char *names) {
  for (int i = 0; i < d->ndims; i++)
    if (d->names[i][0] && listed(names, d->names[i])) return 1;
  return 0;
}

static int choose(dataset_choice *choice, const xio_dataset_axes *list, int count, xio_error *err) {
  const char *dims = choice->dims ? choice->dims : "";
  char chunk_names[1024] = "";
  if (choice->chunks) tool_chunk_spec_names(choice->chunks, chunk_names, sizeof chunk_names);
  if (choice->dims && tool_axes_check_names(dims, err->message, sizeof err->message)) {
    choice->usage = 1;
    return -1;
  }
  if ((choice->dims && check_names_known(choice, list, count, "dims", dims, dims, err)) ||
      (choice->chunks &&
       check_names_known(choice, list, count, "chunks", choice->chunks, chunk_names, err)))
    return -1;
  if (choice->dataset[0]) return 0; /* named on the command line */
  tool_dataset_list *chosen = choice->list;
  if (!(chosen->paths = calloc((size_t)(count ? count : 1), sizeof *chosen->paths)))
    return xio_fail(err, "out of memory listing the datasets of %s", choice->path);
  for (int d = 0; d < count; d++) {
    const char *names[XIO_MAX_DIMS];
    int order[XIO_MAX_DIMS], identity = 1;
    for (int i = 0; i < list[d].ndims; i++) names[i] = list[d].names[i];
    tool_axes_by_names(list[d].ndims, names, dims, order);
    for (int i = 0; i < list[d].ndims; i++) identity = identity && order[i] == i;
    const int rechunked = choice->chunks && list[d].ndims >= 2 &&
                          (has_named_axis(&list[d], chunk_names) || has_named_axis(&list[d], dims));
    if (identity && !rechunked) continue;
    /* every one checked before any is moved: a run refused at its start */
    char shown[1100], why[sizeof err->message];
    tool_move moves[TOOL_MAX_MOVES];
    snprintf(shown, sizeof shown, "%.500s:%.500s", choice->path, list[d].path);
    if (tool_axes_plan(list[d].ndims, names, NULL, NULL, choice->dims,
                       choice->chunks ? TOOL_RECHUNK_BY_DEFAULT : TOOL_RECHUNK_NEVER, shown, order,
                       moves, why, sizeof why) < 0) {
      choice->usage = 1;
      return xio_fail(err, "%s (%s)", why, shown);
    }
    snprintf(chosen->paths[chosen->count++], sizeof *chosen->paths, "%s", list[d].path);
  }
  choice->usage = chosen->count == 0;
  if (chosen->count == 0 && choice->chunks)
    return xio_fail(err, "--chunks %s names no axis of a dataset of 2 or more axes of %s",
                    choice->chunks, choice->path);
  if (chosen->count == 0)
    return xio_fail(err, "--dims %s reorders no dataset of %s: each keeps its axes in place",
                    choice->dims, choice->path);
  return 0;
}

static int choose_on_root(void *arg, xio_error *err) {
  dataset_choice *choice = arg;
  hid_t file = H5Fopen(choice->opened, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return xio_fail_h5(err, "%s: cannot open as an HDF5 file", choice->path);
  xio_dataset_axes *list = NULL;
  int count = 0;
  int rc = xio_list_dataset_axes(file, choice->path, &list, &count, err);
  if (rc == 0) rc = choose(choice, list, count, err);
  free(list);
  if (H5Fclose(file) < 0 && rc == 0) rc = xio_fail_h5(err, "%s: cannot close it", choice->path);
  return rc;
}

int tool_dataset_list_of_one(const char *dataset, tool_dataset_list *list) {
  tool_dataset_list_free(list);
  if (!(list->paths = calloc(1, sizeof *list->paths))) return -1;
  snprintf(list->paths[0], sizeof *list->paths, "%s%s", dataset[0] == '/' ? "" : "/", dataset);
  list->count = 1;
  return 0;
}

void tool_dataset_list_free(tool_dataset_list *list) {
  free(list->paths);
  *list = (tool_dataset_list){0, NULL};
}

int tool_choose_input_datasets(MPI_Comm comm, const char *path, const char *shown, const char *dims,
                               const char *chunks, const char *dataset, tool_dataset_list *list,
                               int *usage, xio_error *err) {
  tool_dataset_list_free(list);
  dataset_choice choice = {path, shown, dims, chunks, dataset, list, 0};
  int rc = xio_on_root(comm, choose_on_root, &choice, err), rank = 0;
  if (XIO_MPICHECK(MPI_Comm_rank(comm, &rank), err) ||
      XIO_MPICHECK(MPI_Bcast(&list->count, 1, MPI_INT, 0, comm), err) ||
      XIO_MPICHECK(MPI_Bcast(&choice.usage, 1, MPI_INT, 0, comm), err))
    return -1;
  *usage = choice.usage;
  if (rc == 0 && dataset[0]) return tool_dataset_list_of_one(dataset, list) ? -1 : 0;
  if (rc != 0) return rc;
  int missing = rank != 0 && !(list->paths = calloc((size_t)list->count, sizeof *list->paths));
  if (xio_agree(comm, missing ? xio_fail(err, "out of memory listing datasets") : 0, err))
    return -1;
  MPI_Datatype name; /* a path each: the count stays an int whatever the file holds */
  if (XIO_MPICHECK(MPI_Type_contiguous((int)sizeof *list->paths, MPI_CHAR, &name), err)) return -1;
  rc = XIO_MPICHECK(MPI_Type_commit(&name), err) ||
       XIO_MPICHECK(MPI_Bcast(list->paths, list->count, name, 0, comm), err);
  MPI_Type_free(&name);
  return rc ? -1 : 0;
}

/* "/a/b" for "a/b" and "/a/b". */
static void absolute_path(const char *path, char *to, size_t size) {
  snprintf(to, size, "%s%s", path[0] == '/' ? "" : "/", path);
}

/* Whether `path` in `file` is a group. */
static int is_group(hid_t file, const char *path) {
  const hid_t object = H5Oopen(file, path, H5P_DEFAULT);
  const int group = object >= 0 && H5Iget_type(object) == H5I_GROUP;
  if (object >= 0) (void)H5Oclose(object); /* only looked at */
  return group;
}

/* Local.  The clash tool_check_output_path_free looks for; 0 where none. */
static int output_path_clash(hid_t file, const char *shown, const char *dataset, const char *output,
                             xio_error *err) {
  char wanted[1024], ours[1024], prefix[1024];
  absolute_path(output, wanted, sizeof wanted);
  absolute_path(dataset, ours, sizeof ours);
  if (strcmp(wanted, ours) == 0) return 0;
  /* each step checked in turn: H5Lexists fails past a missing group */
  for (const char *end = strchr(wanted + 1, '/');; end = strchr(end + 1, '/')) {
    snprintf(prefix, sizeof prefix, "%.*s", (int)(end ? end - wanted : (int)strlen(wanted)),
             wanted);
    if (H5Lexists(file, prefix, H5P_DEFAULT) <= 0) return 0;
    if (!end || !is_group(file, prefix))
      return xio_fail(err,
                      "output dataset %s would take the place of %s:%s, which the output keeps "
                      "as a copy: name another output dataset, or give --only to write the "
                      "transpose of %s alone",
                      wanted, shown, prefix, ours);
  }
}

int tool_check_output_path_free(MPI_Comm comm, hid_t file, const char *shown, const char *dataset,
                                const char *output, xio_error *err) {
  return xio_agree(comm, output_path_clash(file, shown, dataset, output, err), err);
}
