/* Dimension scales (HDF5's H5DS, netCDF-4's dimensions and coordinate
 * variables) of a transposed dataset: copied into the output's file at
 * their own paths and attached with the axes swapped. */
#ifndef XIO_SCALES_H
#define XIO_SCALES_H

#include "h5_matrix.h"

/* Collective.  Copies every dimension scale attached to from's dataset
 * (data and attributes; the back references are made anew by attaching)
 * into to's file, and attaches the scale of from's axis 0 to to's axis 1
 * and the other way round.  *copied counts the scales.  A scale that
 * cannot be copied fails the call with its name. */
int xio_copy_dimension_scales(const xio_matrix *from, const xio_matrix *to, int *copied,
                              xio_error *err);

#endif
