#include "collective.h"

#include "check.h"

xpose_status xpose_agree(MPI_Comm comm, xpose_status local) {
  int worst = 0, mine = (int)local;
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_MPICHECKGOTO(MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm), res, fail);
  return (xpose_status)worst;
fail:
  return res;
}

/* One MPI_MAX reduction over (status, v, ~v, ...) gives every rank the
 * worst status and, for each value, its largest and (as ~max ~v) its
 * smallest.  ~v, unlike -v, cannot overflow. */
xpose_status xpose_agree_on_values(MPI_Comm comm, xpose_status local, const int64_t *values,
                                   int nvalues, const char *what) {
  int64_t both[1 + 2 * XPOSE_AGREE_MAX_VALUES], worst[1 + 2 * XPOSE_AGREE_MAX_VALUES];
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_REQUIREGOTO(nvalues <= XPOSE_AGREE_MAX_VALUES, XPOSE_ERROR_INTERNAL, res, fail,
                    "%d values to agree on, at most %d", nvalues, XPOSE_AGREE_MAX_VALUES);
  both[0] = (int64_t)local;
  for (int i = 0; i < nvalues; i++) {
    both[1 + 2 * i] = values[i];
    both[2 + 2 * i] = ~values[i];
  }
  XPOSE_MPICHECKGOTO(MPI_Allreduce(both, worst, 1 + 2 * nvalues, MPI_INT64_T, MPI_MAX, comm), res,
                     fail);
  if (worst[0] != XPOSE_SUCCESS) return (xpose_status)worst[0];
  for (int i = 0; i < nvalues; i++)
    XPOSE_REQUIREGOTO(worst[1 + 2 * i] == ~worst[2 + 2 * i], XPOSE_ERROR_INVALID_ARGUMENT, res,
                      fail, "ranks passed different arguments (%s): argument %d differs", what, i);
fail:
  return res;
}
