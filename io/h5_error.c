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
  if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, detail) < 0) detail[0] = '\0';
  va_list args;
  va_start(args, format);
  int used = vsnprintf(err->message, sizeof err->message, format, args);
  va_end(args);
  if (detail[0] && used >= 0 && (size_t)used < sizeof err->message)
    snprintf(err->message + used, sizeof err->message - (size_t)used, " (HDF5: %s)", detail);
  return -1;
}

void xio_release(herr_t (*close)(hid_t), hid_t *id, int *rc, xio_error *err) {
  if (*id < 0) return;
  if (close(*id) < 0 && *rc == 0) *rc = xio_fail_h5(err, "cannot release an HDF5 object");
  *id = H5I_INVALID_HID;
}

int xio_mpi_failed(int code, const char *call, xio_error *err) {
  if (code == MPI_SUCCESS) return 0;
  char reason[MPI_MAX_ERROR_STRING] = "unknown MPI error";
  int length = 0;
  if (MPI_Error_string(code, reason, &length) != MPI_SUCCESS)
    snprintf(reason, sizeof reason, "MPI error %d", code);
  return xio_fail(err, "%s failed: %s", call, reason);
}

int xio_agree(MPI_Comm comm, int rc, xio_error *err) {
  int rank, size, first_failed;
  if (XIO_MPI(MPI_Comm_rank(comm, &rank), err) || XIO_MPI(MPI_Comm_size(comm, &size), err))
    return -1;
  int mine = rc != 0 ? rank : size;
  if (XIO_MPI(MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm), err)) return -1;
  if (first_failed == size) return 0;
  if (XIO_MPI(MPI_Bcast(err->message, (int)sizeof err->message, MPI_CHAR, first_failed, comm), err))
    return -1;
  return -1;
}

int xio_on_root(MPI_Comm comm, int (*check)(void *arg, xio_error *err), void *arg, xio_error *err) {
  int rank, rc = 0;
  if (XIO_MPI(MPI_Comm_rank(comm, &rank), err)) return -1;
  if (rank == 0) rc = check(arg, err);
  return xio_agree(comm, rc, err);
}
