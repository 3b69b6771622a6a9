#include "h5_error.h"

#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int xio_fail(xio_error *err, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(err->message, sizeof err->message, format, args);
  va_end(args);
  return -1;
}

static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data) {
  if (n == 0 && e->desc) snprintf((char *)data, 256, "%s", e->desc);
  return 0;
}

int xio_fail_h5(xio_error *err, const char *format, ...) {
  char detail[256] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, detail);
  va_list args;
  va_start(args, format);
  int used = vsnprintf(err->message, sizeof err->message, format, args);
  va_end(args);
  if (detail[0] && used >= 0 && (size_t)used < sizeof err->message)
    snprintf(err->message + used, sizeof err->message - (size_t)used, " (HDF5: %s)", detail);
  return -1;
}

int xio_agree(MPI_Comm comm, int rc, xio_error *err) {
  int rank, size, first_failed;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = rc != 0 ? rank : size;
  MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm);
  if (first_failed == size) return 0;
  MPI_Bcast(err->message, (int)sizeof err->message, MPI_CHAR, first_failed, comm);
  return -1;
}

int xio_on_root(MPI_Comm comm, int (*check)(void *arg, xio_error *err), void *arg, xio_error *err) {
  int rank, rc = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) rc = check(arg, err);
  return xio_agree(comm, rc, err);
}
