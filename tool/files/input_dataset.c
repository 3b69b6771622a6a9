#include "input_dataset.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axes.h"
#include "chunk_spec.h"
#include "h5_scales.h"
#include "h5_types.h"

typedef struct {
  const char *opened, *path; /* the file read; its name in messages */
  const char *dims, *chunks;
  const xio_path_list *joined; /* inputs joined alone: the datasets joined */
  const char *dataset;
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

/* Whether every axis of d has a name. */
static int axes_named(const xio_dataset_axes *d) {
  for (int i = 0; i < d->ndims; i++)
    if (!d->names[i][0]) return 0;
  return 1;
}

/* "/tas (time, lat, lon)", or "/m (2 axes)" where they have no names. */
static void describe_entry(const xio_dataset_axes *d, char *text, size_t size) {
  const int named = axes_named(d);
  size_t used = (size_t)snprintf(text, size, "%s (", d->path);
  for (int i = 0; named && i < d->ndims && used < size; i++)
    used += (size_t)snprintf(text + used, size - used, "%s%s", i ? ", " : "", d->names[i]);
  if (used < size) snprintf(text + used, size - used, named ? ")" : "%d axes)", d->ndims);
}

/* The entries of `list` into text, "a, b": the auxiliary ones (1), the
 * others (0), or all (-1). */
static void list_entries(const xio_dataset_axes *list, int count, int auxiliary, char *text,
                         size_t size) {
  for (int d = 0, n = 0; d < count; d++) {
    if (auxiliary >= 0 && list[d].auxiliary != auxiliary) continue;
    char one[700];
    describe_entry(&list[d], one, sizeof one);
    const size_t used = strlen(text);
    if (used + strlen(one) + 8 >= size) {
      snprintf(text + used, size - used, ", ...");
      return;
    }
    snprintf(text + used, size - used, "%s%s", n++ ? ", " : "", one);
  }
}

/* Nothing named: the file's one dataset of 2 or more axes that is not
 * auxiliary (bounds, coordinates, dimension scales: a CF file's
 * time_bnds is never chosen for its tas).  Several stop the run with
 * their list and what to type. */
static int choose_the_only_one(dataset_choice *choice, const xio_dataset_axes *list, int count,
                               xio_error *err) {
  int candidates = 0, first = -1; /* the one of most axes, as suggested */
  for (int d = 0; d < count; d++)
    if (!list[d].auxiliary && (candidates++ == 0 || list[d].ndims > list[first].ndims)) first = d;
  char text[700] = "";
  if (candidates == 1) return tool_dataset_list_of_one(list[first].path, choice->list);
  if (count == 0) return xio_fail(err, "%s holds no dataset of 2 or more axes", choice->path);
  choice->usage = 1; /* the command line must name one */
  if (candidates == 0) {
    list_entries(list, count, 1, text, sizeof text);
    return xio_fail(err,
                    "%s holds no dataset of 2 or more axes but coordinates, bounds and "
                    "dimension scales (%s), which xpose does not choose by itself: name one as "
                    "%s:/DATASET",
                    choice->path, text, choice->path);
  }
  list_entries(list, count, 0, text, sizeof text);
  const xio_dataset_axes *d = &list[first];
  char dims[600] = "with the axes' names in the order wanted";
  if (axes_named(d)) /* the order of time series: the first axis last */
    for (int i = 1, used = 0; i <= d->ndims && used < (int)sizeof dims; i++)
      used += snprintf(dims + used, sizeof dims - (size_t)used, "%s%s", i > 1 ? "," : "",
                       d->names[i % d->ndims]);
  return xio_fail(err,
                  "%s holds %d datasets of 2 or more axes (%s): name one as %s:%s, or give "
                  "--dims %s to rearrange every one that order changes",
                  choice->path, candidates, text, choice->path, d->path, dims);
}

/* Whether dataset `path` of `file` holds elements of a fixed size, which
 * the passes move (those of variable length are copied as they are). */
static int fixed_size(hid_t file, const char *path) {
  const hid_t d = H5Dopen2(file, path, H5P_DEFAULT), type = d >= 0 ? H5Dget_type(d) : -1;
  char why[128];
  const int fixed = type >= 0 && xio_type_check_fixed(type, why, sizeof why) == 0;
  if (type >= 0) (void)H5Tclose(type); /* only read */
  if (d >= 0) (void)H5Dclose(d);
  return fixed;
}

/* Inputs joined alone: every dataset joined of 2 or more axes and
 * fixed-size elements, its records moved into the first input's chunks. */
static int choose_joined(dataset_choice *choice, hid_t file, const xio_dataset_axes *list,
                         int count, xio_error *err) {
  tool_dataset_list *chosen = choice->list;
  if (!(chosen->paths = calloc((size_t)(count ? count : 1), sizeof *chosen->paths)))
    return xio_fail(err, "out of memory listing the datasets of %s", choice->path);
  for (int d = 0; d < count; d++)
    if (xio_path_index(choice->joined, list[d].path) >= 0 && fixed_size(file, list[d].path))
      snprintf(chosen->paths[chosen->count++], sizeof *chosen->paths, "%s", list[d].path);
  if (chosen->count > 0) return 0;
  choice->usage = 1;
  return xio_fail(err,
                  "the inputs hold no dataset of 2 or more axes joined along their records: "
                  "xpose joins matrices and N-D datasets (ncrcat joins the rest)");
}

static int choose(dataset_choice *choice, hid_t file, const xio_dataset_axes *list, int count,
                  xio_error *err) {
  if (choice->joined && !choice->dataset[0]) return choose_joined(choice, file, list, count, err);
  if (!choice->dims && !choice->chunks && !choice->dataset[0])
    return choose_the_only_one(choice, list, count, err);
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

/* Whether `path` names an object of `file` (each step checked in turn:
 * H5Lexists fails past a missing group). */
static int path_exists(hid_t file, const char *path) {
  char prefix[1024];
  for (const char *end = strchr(path + 1, '/');; end = strchr(end + 1, '/')) {
    snprintf(prefix, sizeof prefix, "%.*s", (int)(end ? end - path : (int)strlen(path)), path);
    if (H5Lexists(file, prefix, H5P_DEFAULT) <= 0) return 0;
    if (!end) return 1;
  }
}

/* A dataset named that is not there: the message lists those that are. */
static int check_named_exists(const dataset_choice *choice, hid_t file,
                              const xio_dataset_axes *list, int count, xio_error *err) {
  char path[600];
  snprintf(path, sizeof path, "%s%s", choice->dataset[0] == '/' ? "" : "/", choice->dataset);
  if (path_exists(file, path)) return 0;
  char text[700] = "";
  list_entries(list, count, -1, text, sizeof text);
  return xio_fail(
      err, "%s has no dataset %s (%s%s)", choice->path, path,
      count ? "its datasets of 2 or more axes: " : "it has no dataset of 2 or more axes", text);
}

static int choose_on_root(void *arg, xio_error *err) {
  dataset_choice *choice = arg;
  hid_t file = H5Fopen(choice->opened, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return xio_fail_h5(err, "%s: cannot open as an HDF5 file", choice->path);
  xio_dataset_axes *list = NULL;
  int count = 0;
  int rc = xio_list_dataset_axes(file, choice->path, &list, &count, err);
  if (rc == 0 && choice->dataset[0]) rc = check_named_exists(choice, file, list, count, err);
  if (rc == 0) rc = choose(choice, file, list, count, err);
  free(list);
  if (H5Fclose(file) < 0 && rc == 0) rc = xio_fail_h5(err, "%s: cannot close it", choice->path);
  return rc;
}

int tool_dataset_list_of_one(const char *dataset, tool_dataset_list *list) {
  tool_dataset_list_free(list);
  if (!(list->paths = calloc(1, sizeof *list->paths))) return -1;
  list->paths[0][0] = '/';
  snprintf(list->paths[0] + 1, sizeof *list->paths - 1, "%s", dataset + (dataset[0] == '/'));
  list->count = 1;
  return 0;
}

void tool_dataset_list_free(tool_dataset_list *list) {
  free(list->paths);
  *list = (tool_dataset_list){0, NULL};
}

int tool_share_paths(MPI_Comm comm, char (**paths)[512], int count, xio_error *err) {
  int rank = 0;
  if (XIO_MPICHECK(MPI_Comm_rank(comm, &rank), err)) return -1;
  int missing = rank != 0 && !(*paths = calloc((size_t)(count ? count : 1), sizeof **paths));
  if (xio_agree(comm, missing ? xio_fail(err, "out of memory listing datasets") : 0, err))
    return -1;
  MPI_Datatype name; /* a path each: the count stays an int whatever the file holds */
  if (XIO_MPICHECK(MPI_Type_contiguous((int)sizeof **paths, MPI_CHAR, &name), err)) return -1;
  const int rc = XIO_MPICHECK(MPI_Type_commit(&name), err) ||
                 XIO_MPICHECK(MPI_Bcast(*paths, count, name, 0, comm), err);
  MPI_Type_free(&name);
  return rc ? -1 : 0;
}

int tool_choose_input_datasets(MPI_Comm comm, const char *path, const char *shown, const char *dims,
                               const char *chunks, const xio_path_list *joined, const char *dataset,
                               tool_dataset_list *list, int *usage, xio_error *err) {
  tool_dataset_list_free(list);
  dataset_choice choice = {path, shown, dims, chunks, joined, dataset, list, 0};
  int rc = xio_on_root(comm, choose_on_root, &choice, err);
  if (XIO_MPICHECK(MPI_Bcast(&list->count, 1, MPI_INT, 0, comm), err) ||
      XIO_MPICHECK(MPI_Bcast(&choice.usage, 1, MPI_INT, 0, comm), err))
    return -1;
  *usage = choice.usage;
  if (rc == 0 && dataset[0]) return tool_dataset_list_of_one(dataset, list) ? -1 : 0;
  if (rc != 0) return rc;
  return tool_share_paths(comm, &list->paths, list->count, err);
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
