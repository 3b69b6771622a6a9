/* Dimension scales (HDF5's H5DS, netCDF-4's dimensions and coordinate
 * variables) of a transposed dataset: copied into the output's file at
 * their own paths and attached to the axes as the data moved them. */
#ifndef XIO_SCALES_H
#define XIO_SCALES_H

#include "h5_matrix.h"

/* Collective.  Copies every dimension scale attached to from's dataset
 * (data and attributes; the back references are made anew by attaching)
 * into to's file where it has none at the scale's path (another dataset's
 * copy made one), and attaches the scale of each of from's axes to the
 * axis of `to` it became (axis i of `to` is from's source[i]).  *copied
 * counts the scales.  A scale that cannot be copied fails the call with
 * its name. */
int xio_copy_dimension_scales(const xio_matrix *from, const xio_matrix *to, const int *source,
                              int *copied, xio_error *err);

/* Collective.  The name of each of m's axes: its label (H5DSset_label,
 * h5py's dims[i].label), else the name of the first dimension scale
 * attached to it (netCDF-4's dimension), else "". */
int xio_axis_names(const xio_matrix *m, char names[][128], xio_error *err);

/* Local.  The same for a dataset open by itself, of ndims axes. */
int xio_dataset_axis_names(hid_t dset, int ndims, char names[][128], const char *shown,
                           xio_error *err);

/* A dataset and the names of its axes (xio_axis_names'). */
typedef struct {
  char path[512];
  int ndims;
  char names[XIO_MAX_DIMS][128];
  /* A dimension scale, or a variable another's CF attributes name as
   * auxiliary (bounds, climatology, coordinates, cell_measures): data
   * about other data, never the one to choose when none is named. */
  int auxiliary;
} xio_dataset_axes;

/* Local.  Every dataset of 2 to XIO_MAX_DIMS axes in `file`, by path,
 * with the names of its axes; *list is malloc'd (free it), NULL when
 * there is none.  `shown` names the file in messages. */
int xio_list_dataset_axes(hid_t file, const char *shown, xio_dataset_axes **list, int *count,
                          xio_error *err);

#endif
