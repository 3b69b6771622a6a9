/* Errors of the io layer and the tools: a message per failure, and
 * collective agreement so every rank fails together with one message. */
#ifndef XIO_ERROR_H
#define XIO_ERROR_H

#include <hdf5.h>
#include <mpi.h>

#if defined(__GNUC__)
#define XIO_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define XIO_PRINTF(fmt, args)
#endif

typedef struct {
  char message[1024];
} xio_error;

/* What a collective loop returns when a rank asked it to stop (no error). */
enum { XIO_STOPPED = 1 };

/* The program named in the message of an aborted job. */
void xio_set_program_name(const char *name);

/* Called with the message on the rank that aborts the job (xio_agree),
 * before the abort: the tool's last word (its --json object, say). */
void xio_set_abort_hook(void (*hook)(const char *message));

/* Formats err->message and returns -1, for `return xio_fail(err, ...)`. */
int xio_fail(xio_error *err, const char *format, ...) XIO_PRINTF(2, 3);

/* Like xio_fail, appending HDF5's innermost error description. */
int xio_fail_h5(xio_error *err, const char *format, ...) XIO_PRINTF(2, 3);

/* The check macros of io/ and tool/, members of the tree's one family
 * (src/check.h): 0 when the call succeeded; otherwise -1 with the call,
 * the library's reason, file and line in err.
 * For `if (XIO_MPICHECK(MPI_Bcast(...), err)) ...`.  XIO_CUDACHECK expands
 * only in cuda/ (its function is cuda/io/cuda_check.c's), which clears
 * CUDA's last error so that it does not resurface in the next check. */
#define XIO_MPICHECK(call, err) xio_mpi_failed((call), #call, __FILE__, __LINE__, (err))
#define XIO_CUDACHECK(call, err) xio_cuda_failed((call), #call, __FILE__, __LINE__, (err))
int xio_mpi_failed(int code, const char *call, const char *file, int line, xio_error *err);
int xio_cuda_failed(int code, const char *call, const char *file, int line, xio_error *err);

/* Closes *id with `close` (H5Pclose, H5Sclose, H5Tclose, ...) unless it is
 * invalid, and marks it invalid.  A failure sets *rc to -1 with a message in
 * err, unless *rc already records one. */
void xio_release(herr_t (*close)(hid_t), hid_t *id, int *rc, xio_error *err);

/* Collective.  Returns 0 when every rank passed rc == 0; otherwise -1 on
 * every rank, with err->message set to the lowest failing rank's message.
 * A rank passing rc != 0 waits at most XPOSE_ABORT_TIMEOUT seconds (default
 * 120) for the others: past that they are stuck in a collective call it
 * left (HDF5 and MPI-IO do not fail collectively), so it prints its message
 * and aborts the job rather than hang. */
int xio_agree(MPI_Comm comm, int rc, xio_error *err);

/* Collective.  Rank 0 runs check(); every rank gets its result and message.
 * For checks that touch the file system once (existence, permissions). */
int xio_on_root(MPI_Comm comm, int (*check)(void *arg, xio_error *err), void *arg, xio_error *err);

#endif
