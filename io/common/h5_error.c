#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "h5_error.h"

#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *program_name = "xpose";

static void (*abort_hook)(const char *message);

void xio_set_program_name(const char *name) { program_name = name; }

void xio_set_abort_hook(void (*hook)(const char *message)) { abort_hook = hook; }

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

int xio_mpi_failed(int code, const char *call, const char *file, int line, xio_error *err) {
  if (code == MPI_SUCCESS) return 0;
  char reason[MPI_MAX_ERROR_STRING] = "unknown MPI error";
  int length = 0;
  if (MPI_Error_string(code, reason, &length) != MPI_SUCCESS)
    snprintf(reason, sizeof reason, "MPI error %d", code);
  return xio_fail(err, "%s failed: %s (%s:%d)", call, reason, file, line);
}

/* A rank that failed waits this long for the others to agree, then aborts
 * the job: after a failed write, HDF5 and MPI-IO may leave other ranks
 * inside a collective call this rank will never enter.  Later ranks wait
 * a little longer, so the lowest failing rank speaks. */
static double abort_after_seconds(int rank) {
  const char *text = getenv("XPOSE_ABORT_TIMEOUT");
  const double base = text && *text ? atof(text) : 120.0;
  return (base > 0 ? base : 120.0) + 0.5 * (rank < 64 ? rank : 64);
}

/* Nonblocking on every rank (a blocking and a nonblocking collective do
 * not match); only a rank that failed gives up waiting. */
static int agree_or_abort(const int *mine, int *first_failed, MPI_Comm comm, int rank, int failed,
                          const xio_error *err) {
  MPI_Request request;
  int code = MPI_Iallreduce(mine, first_failed, 1, MPI_INT, MPI_MIN, comm, &request);
  if (code != MPI_SUCCESS || !failed) return code ? code : MPI_Wait(&request, MPI_STATUS_IGNORE);
  const double deadline = MPI_Wtime() + abort_after_seconds(rank);
  for (int done = 0;;) {
    if ((code = MPI_Test(&request, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS || done) return code;
    if (MPI_Wtime() > deadline) break;
    const struct timespec pause = {0, 1000000}; /* 1 ms */
    nanosleep(&pause, NULL);
  }
  char message[sizeof err->message + 128];
  snprintf(message, sizeof message,
           "%s (rank %d; the other ranks are stuck in a collective call after this failure, so "
           "the job is aborted)",
           err->message, rank);
  fprintf(stderr, "%s: error: %s\n", program_name, message);
  fflush(stderr);
  if (abort_hook) abort_hook(message);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return MPI_ERR_OTHER; /* not reached */
}

int xio_agree(MPI_Comm comm, int rc, xio_error *err) {
  int rank, size, first_failed;
  if (XIO_MPICHECK(MPI_Comm_rank(comm, &rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(comm, &size), err))
    return -1;
  int mine = rc != 0 ? rank : size;
  const int code = agree_or_abort(&mine, &first_failed, comm, rank, rc != 0, err);
  if (xio_mpi_failed(code, "MPI_Iallreduce (agreeing on a result)", __FILE__, __LINE__, err))
    return -1;
  if (first_failed == size) return 0;
  if (XIO_MPICHECK(MPI_Bcast(err->message, (int)sizeof err->message, MPI_CHAR, first_failed, comm),
                   err))
    return -1;
  return -1;
}

int xio_on_root(MPI_Comm comm, int (*check)(void *arg, xio_error *err), void *arg, xio_error *err) {
  int rank, rc = 0;
  if (XIO_MPICHECK(MPI_Comm_rank(comm, &rank), err)) return -1;
  if (rank == 0) rc = check(arg, err);
  return xio_agree(comm, rc, err);
}
