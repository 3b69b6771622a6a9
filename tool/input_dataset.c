#include "input_dataset.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axes.h"
#include "h5_scales.h"

typedef struct {
  const char *path, *dims;
  char *dataset;
  size_t size;
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

static int choose(dataset_choice *choice, const xio_dataset_axes *list, int count, xio_error *err) {
  if (tool_axes_check_names(choice->dims, err->message, sizeof err->message)) {
    choice->usage = 1;
    return -1;
  }
  const char *p = choice->dims;
  char name[256];
  while (tool_axes_next_name(&p, name, sizeof name)) {
    if (!names_an_axis(list, count, name)) {
      char known[512] = "";
      for (int d = 0; d < count; d++)
        for (int i = 0; i < list[d].ndims; i++) {
          const char *axis = list[d].names[i];
          const size_t used = strlen(known);
          if (axis[0] && !listed(known, axis) && used + strlen(axis) + 8 < sizeof known)
            snprintf(known + used, sizeof known - used, "%s%s", used ? "," : "", axis);
        }
      choice->usage = 1;
      return xio_fail(err, "--dims %s: no dataset of %s has an axis named '%s' (its axes: %s)",
                      choice->dims, choice->path, name, known[0] ? known : "none named");
    }
  }
  if (choice->dataset[0]) return 0; /* named on the command line */
  int moved = 0, first = -1;
  char listing[512] = "";
  for (int d = 0; d < count; d++) {
    const char *names[XIO_MAX_DIMS];
    int order[XIO_MAX_DIMS], identity = 1;
    for (int i = 0; i < list[d].ndims; i++) names[i] = list[d].names[i];
    tool_axes_by_names(list[d].ndims, names, choice->dims, order);
    for (int i = 0; i < list[d].ndims; i++) identity = identity && order[i] == i;
    if (identity) continue;
    const size_t used = strlen(listing);
    snprintf(listing + used, sizeof listing - used, "%s%s", moved ? ", " : "", list[d].path);
    if (first < 0) first = d;
    moved++;
  }
  choice->usage = moved != 1;
  if (moved == 0)
    return xio_fail(err, "--dims %s reorders no dataset of %s: each keeps its axes in place",
                    choice->dims, choice->path);
  if (moved > 1)
    return xio_fail(err,
                    "--dims %s reorders %d datasets of %s (%s); xpose rearranges one per run: "
                    "name it as %s:/DATASET (the others are copied as they are)",
                    choice->dims, moved, choice->path, listing, choice->path);
  snprintf(choice->dataset, choice->size, "%s", list[first].path);
  return 0;
}

static int choose_on_root(void *arg, xio_error *err) {
  dataset_choice *choice = arg;
  hid_t file = H5Fopen(choice->path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return xio_fail_h5(err, "%s: cannot open as an HDF5 file", choice->path);
  xio_dataset_axes *list = NULL;
  int count = 0;
  int rc = xio_list_dataset_axes(file, choice->path, &list, &count, err);
  if (rc == 0) rc = choose(choice, list, count, err);
  free(list);
  if (H5Fclose(file) < 0 && rc == 0) rc = xio_fail_h5(err, "%s: cannot close it", choice->path);
  return rc;
}

int tool_choose_input_dataset(MPI_Comm comm, const char *path, const char *dims, char *dataset,
                              size_t size, int *usage, xio_error *err) {
  dataset_choice choice = {path, dims, dataset, size, 0};
  const int rc = xio_on_root(comm, choose_on_root, &choice, err);
  if (XIO_MPI(MPI_Bcast(dataset, (int)size, MPI_CHAR, 0, comm), err) ||
      XIO_MPI(MPI_Bcast(&choice.usage, 1, MPI_INT, 0, comm), err))
    return -1;
  *usage = choice.usage;
  return rc;
}
