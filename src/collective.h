/* Failing together, in the manner of FFTW's any-true.c: what one rank finds
 * wrong becomes every rank's status, so no rank is left waiting in a
 * collective that the others have abandoned. */
#ifndef XPOSE_COLLECTIVE_H
#define XPOSE_COLLECTIVE_H

#include "xpose.h"

/* Collective.  Every rank gets the worst status any rank passed in. */
xpose_status xpose_agree(MPI_Comm comm, xpose_status local);

/* Collective.  The worst status, and XPOSE_ERROR_INVALID_ARGUMENT (logged
 * with `what`, the values' names) unless every rank passed the same
 * values (at most XPOSE_AGREE_MAX_VALUES of them). */
enum { XPOSE_AGREE_MAX_VALUES = 9 };
xpose_status xpose_agree_on_values(MPI_Comm comm, xpose_status local, const int64_t *values,
                                   int nvalues, const char *what);

#endif
