#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "h5_scales.h"

#include <hdf5_hl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_attributes.h"
#include "h5_compat.h"

enum { MAX_SCALES = 64 };

typedef struct {
  int count;
  char paths[MAX_SCALES][512];
  int axis[MAX_SCALES]; /* of the input */
} scale_list;

/* The first entry with entry i's path: a scale on both axes is copied once. */
static int first_with_path(const scale_list *list, int i) {
  int first = 0;
  while (strcmp(list->paths[first], list->paths[i]) != 0) first++;
  return first;
}

static herr_t list_scale(hid_t dset, unsigned axis, hid_t scale, void *data) {
  (void)dset;
  scale_list *list = data;
  if (list->count == MAX_SCALES) return 1; /* stops; reported by the caller */
  if (H5Iget_name(scale, list->paths[list->count], sizeof list->paths[0]) <= 0) return -1;
  list->axis[list->count++] = (int)axis;
  return 0;
}

/* One scale: its data read whole by every rank (scales are one value per
 * row or column), written by rank 0 in a collective call. */
static int copy_scale(const xio_matrix *from, const xio_matrix *to, const char *path, int rank,
                      hid_t *copy, xio_error *err) {
  hid_t source = H5Dopen2(from->file, path, H5P_DEFAULT);
  hid_t type = source >= 0 ? H5Dget_type(source) : H5I_INVALID_HID;
  hid_t extent = source >= 0 ? H5Dget_space(source) : H5I_INVALID_HID;
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dxpl = H5Pcreate(H5P_DATASET_XFER);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  /* An unlimited scale (netCDF's record dimension) stays unlimited, and so
   * chunked: the source's chunks, or 1024 values. */
  hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK], chunk[H5S_MAX_RANK];
  const int ndims = extent >= 0 ? H5Sget_simple_extent_dims(extent, dims, maxdims) : -1;
  int unlimited = 0;
  for (int i = 0; i < ndims; i++) unlimited |= maxdims[i] == H5S_UNLIMITED;
  hid_t space = ndims >= 0 ? H5Screate_simple(ndims, dims, maxdims) : H5I_INVALID_HID;
  if (extent >= 0) (void)H5Sclose(extent); /* only read */
  if (unlimited && dcpl >= 0) {
    hid_t source_dcpl = H5Dget_create_plist(source);
    if (source_dcpl < 0 || H5Pget_layout(source_dcpl) != H5D_CHUNKED ||
        H5Pget_chunk(source_dcpl, ndims, chunk) != ndims)
      for (int i = 0; i < ndims; i++) chunk[i] = 1024;
    if (source_dcpl >= 0) (void)H5Pclose(source_dcpl); /* only read */
    if (H5Pset_chunk(dcpl, ndims, chunk) < 0) {
      (void)H5Pclose(dcpl);
      dcpl = H5I_INVALID_HID; /* reported below */
    }
  }
  const hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  const size_t size = type >= 0 ? H5Tget_size(type) : 0;
  void *values = NULL;
  int rc = 0;
  if (source < 0 || type < 0 || space < 0 || points < 0 || size == 0 || lcpl < 0 || dxpl < 0 ||
      dcpl < 0)
    rc = xio_fail_h5(err, "cannot read the dimension scale %s", path);
  else if (H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tdetect_class(type, H5T_REFERENCE) > 0 ||
           (H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0))
    rc = xio_fail(err,
                  "the dimension scale %s holds variable-length data or references, "
                  "which xpose does not copy",
                  path);
  else if ((uint64_t)points * size > ((uint64_t)1 << 30))
    rc = xio_fail(err, "the dimension scale %s is larger than 1 GiB", path);
  if (rc == 0 && !(values = calloc((size_t)points + 1, size)))
    rc = xio_fail(err, "cannot allocate the dimension scale %s", path);
  if (rc == 0 && points > 0 && H5Dread(source, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)
    rc = xio_fail_h5(err, "cannot read the dimension scale %s", path);
  rc = xio_agree(from->comm, rc, err);
  if (rc == 0) {
    /* Metadata is collective: every rank creates; rank 0 alone writes. */
    if (H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
        H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0 ||
        (*copy = H5Dcreate2(to->file, path, type, space, lcpl, dcpl, H5P_DEFAULT)) < 0) {
      rc = xio_fail_h5(err, "%s: cannot create the dimension scale %s", to->dataset, path);
    } else if (points > 0) {
      if (rank != 0 && H5Sselect_none(space) < 0)
        rc = xio_fail_h5(err, "cannot set up writing the dimension scale %s", path);
      if (H5Dwrite(*copy, type, space, space, dxpl, values) < 0 && rc == 0)
        rc = xio_fail_h5(err, "cannot write the dimension scale %s", path);
    }
  }
  if (rc == 0) {
    hid_t scale_from = source;
    xio_matrix pair_from = *from, pair_to = *to;
    pair_from.dset = scale_from;
    pair_to.dset = *copy;
    xio_skipped_attributes ignored; /* REFERENCE_LIST: remade by attaching */
    rc = xio_copy_scale_attributes(&pair_from, &pair_to, &ignored, err);
  }
  free(values);
  xio_release(H5Pclose, &dxpl, &rc, err);
  xio_release(H5Pclose, &dcpl, &rc, err);
  xio_release(H5Pclose, &lcpl, &rc, err);
  xio_release(H5Sclose, &space, &rc, err);
  xio_release(H5Tclose, &type, &rc, err);
  xio_release(H5Dclose, &source, &rc, err);
  return xio_agree(from->comm, rc, err);
}

int xio_copy_dimension_scales(const xio_matrix *from, const xio_matrix *to, const int *source,
                              int *copied, xio_error *err) {
  int rank, rc = 0;
  *copied = 0;
  if (XIO_MPICHECK(MPI_Comm_rank(from->comm, &rank), err)) return -1;
  scale_list list = {0};
  const xio_shape *shape = &from->shape;
  int moved_to[XIO_MAX_DIMS]; /* the output's axis of each input axis */
  for (int i = 0; i < shape->ndims; i++) moved_to[source[i]] = i;
  for (unsigned axis = 0; axis < (unsigned)shape->ndims && rc == 0; axis++) {
    const int attached = H5DSget_num_scales(from->dset, axis);
    if (attached < 0)
      rc = xio_fail_h5(err, "cannot list the dimension scales of %s", from->dataset);
    if (attached > 0 && H5DSiterate_scales(from->dset, axis, NULL, list_scale, &list) < 0)
      rc = xio_fail_h5(err, "cannot list the dimension scales of %s", from->dataset);
  }
  if (rc == 0 && list.count == MAX_SCALES)
    rc = xio_fail(err, "%s has more than %d dimension scales", from->dataset, MAX_SCALES - 1);
  if (xio_agree(from->comm, rc, err)) return -1;
  hid_t copies[MAX_SCALES];
  for (int i = 0; i < list.count; i++) copies[i] = H5I_INVALID_HID;
  for (int i = 0; i < list.count && rc == 0; i++) {
    const int first = first_with_path(&list, i);
    if (first != i) {
      copies[i] = copies[first];
    } else if (H5Lexists(to->file, list.paths[i], H5P_DEFAULT) > 0) { /* another's scale too */
      copies[i] = H5Dopen2(to->file, list.paths[i], H5P_DEFAULT);
      if (copies[i] < 0) rc = xio_fail_h5(err, "cannot open the dimension scale %s", list.paths[i]);
    } else {
      rc = copy_scale(from, to, list.paths[i], rank, &copies[i], err);
    }
    if (rc == 0 && H5DSattach_scale(to->dset, copies[i], (unsigned)moved_to[list.axis[i]]) < 0)
      rc = xio_fail_h5(err, "cannot attach the dimension scale %s to %s", list.paths[i],
                       to->dataset);
    rc = xio_agree(from->comm, rc, err);
    if (rc == 0 && first == i) ++*copied;
  }
  for (int i = 0; i < list.count; i++)
    if (first_with_path(&list, i) == i) xio_release(H5Dclose, &copies[i], &rc, err);
  return xio_agree(from->comm, rc, err);
}

static herr_t first_scale_name(hid_t dset, unsigned axis, hid_t scale, void *data) {
  (void)dset, (void)axis;
  char path[512];
  if (H5Iget_name(scale, path, sizeof path) <= 0) return -1;
  const char *base = strrchr(path, '/');
  snprintf(data, 128, "%.127s", base ? base + 1 : path);
  return 1; /* the first one names the axis */
}

int xio_dataset_axis_names(hid_t dset, int ndims, char names[][128], const char *shown,
                           xio_error *err) {
  for (int axis = 0; axis < ndims; axis++) {
    names[axis][0] = '\0';
    if (H5DSget_label(dset, (unsigned)axis, names[axis], 128) < 0)
      return xio_fail_h5(err, "cannot read the axis labels of %s", shown);
    const int scales = !names[axis][0] ? H5DSget_num_scales(dset, (unsigned)axis) : 0;
    if (scales > 0 &&
        H5DSiterate_scales(dset, (unsigned)axis, NULL, first_scale_name, names[axis]) < 0)
      return xio_fail_h5(err, "cannot list the dimension scales of %s", shown);
  }
  return 0;
}

int xio_axis_names(const xio_matrix *m, char names[][128], xio_error *err) {
  const int rc = xio_dataset_axis_names(m->dset, m->shape.ndims, names, m->dataset, err);
  return xio_agree(m->comm, rc, err);
}

typedef struct {
  xio_dataset_axes *list;
  int count, capacity, failed;
  char *named; /* " a b c ": the variables CF attributes name, auxiliary */
  xio_error *err;
} axes_listing;

/* The variables that dset's CF attributes make auxiliary (its bounds,
 * climatology bounds, auxiliary coordinates and cell measures: "area:
 * cell_area" names cell_area), added to listing->named. */
static void add_named_variables(axes_listing *listing, hid_t dset) {
  static const char *const naming[] = {"bounds", "climatology", "coordinates", "cell_measures"};
  for (size_t i = 0; i < sizeof naming / sizeof *naming; i++) {
    char *text = xio_read_text_attribute(dset, naming[i]);
    for (char *save = NULL, *word = text ? strtok_r(text, " \t\n", &save) : NULL; word;
         word = strtok_r(NULL, " \t\n", &save)) {
      if (word[strlen(word) - 1] == ':') continue; /* a cell measure's kind */
      const size_t used = listing->named ? strlen(listing->named) : 0;
      char *longer = realloc(listing->named, used + strlen(word) + 3);
      if (!longer) break; /* a name left out: that dataset may be offered */
      snprintf(longer + used, strlen(word) + 3, "%s%s ", used ? "" : " ", word);
      listing->named = longer;
    }
    free(text);
  }
}

/* A dataset is auxiliary where it is a dimension scale or CF attributes
 * name it (by its name in its group). */
static void mark_auxiliary(axes_listing *listing) {
  for (int i = 0; i < listing->count; i++) {
    xio_dataset_axes *entry = &listing->list[i];
    const char *base = strrchr(entry->path, '/') + 1;
    char word[520];
    snprintf(word, sizeof word, " %s ", base);
    if (listing->named && strstr(listing->named, word)) entry->auxiliary = 1;
  }
}

static herr_t list_axes(hid_t group, const char *name, const xio_link_info *info, void *data) {
  axes_listing *listing = data;
  if (info->type != H5L_TYPE_HARD) return 0;
  hid_t dset = H5Oopen(group, name, H5P_DEFAULT);
  if (dset < 0) return 0; /* not ours to judge: the chosen one is opened, and reported, later */
  hid_t space = H5Iget_type(dset) == H5I_DATASET ? H5Dget_space(dset) : H5I_INVALID_HID;
  const int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  if (space >= 0) add_named_variables(listing, dset);
  herr_t status = 0;
  if (ndims >= 2 && ndims <= XIO_MAX_DIMS) {
    if (listing->count == listing->capacity) {
      const int larger = listing->capacity ? 2 * listing->capacity : 16;
      xio_dataset_axes *bigger = realloc(listing->list, (size_t)larger * sizeof *bigger);
      if (bigger) listing->list = bigger, listing->capacity = larger;
    }
    xio_dataset_axes *entry =
        listing->count < listing->capacity ? &listing->list[listing->count] : NULL;
    if (!entry) {
      xio_fail(listing->err, "cannot list the datasets");
      status = -1;
    } else {
      snprintf(entry->path, sizeof entry->path, "/%s", name);
      entry->ndims = ndims;
      entry->auxiliary = H5DSis_scale(dset) > 0;
      status = xio_dataset_axis_names(dset, ndims, entry->names, entry->path, listing->err);
      if (status == 0) listing->count++;
    }
    if (status < 0) listing->failed = 1;
  }
  if (space >= 0) (void)H5Sclose(space); /* only read */
  (void)H5Oclose(dset);
  return status;
}

int xio_list_dataset_axes(hid_t file, const char *shown, xio_dataset_axes **list, int *count,
                          xio_error *err) {
  axes_listing listing = {.err = err};
  int rc = 0;
  if (XIO_LINK_VISIT(file, H5_INDEX_NAME, H5_ITER_INC, list_axes, &listing) < 0) {
    if (!listing.failed) xio_fail_h5(err, "%s: cannot list its datasets", shown);
    rc = -1;
  }
  if (rc) {
    free(listing.list);
    listing.list = NULL, listing.count = 0;
  }
  mark_auxiliary(&listing);
  free(listing.named);
  *list = listing.list;
  *count = listing.count;
  return rc;
}
