/* The output's axis order (--axes, --dims) as a fold of the input.
 *
 * An N-D permutation that moves the run of axes [split, trail) in front of
 * the run [0, split), the axes after them staying in place, is the
 * transpose of the dataset folded at split, trail (h5_matrix.h's
 * xio_shape): (time, lat, lon) -> (lat, lon, time) is 1, 3.  That is the
 * one kind of permutation xpose makes; others are refused, saying so. */
#ifndef TOOL_AXES_H
#define TOOL_AXES_H

#include <stddef.h>

/* Local.  The fold giving the order that `axes` ("2,0,1": input axis
 * numbers) or `dims` ("lat,lon,time": names[i] naming input axis i) ask
 * for, or with neither the 2-D transpose.  `shown` names the dataset in
 * messages.  0, or -1 with one line in error (the command line's fault:
 * exit 2). */
int tool_axes_fold(int ndims, const char *const *names, const char *axes, const char *dims,
                   const char *shown, int *split, int *trail, char *error, size_t error_size);

/* "time x lat x lon (12 x 180 x 360)", or "12 x 180 x 360" where an axis
 * has no name. */
void tool_axes_describe(int ndims, const char *const *names, const long long *dims, char *text,
                        size_t size);

#endif
