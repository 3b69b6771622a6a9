/* The check macros, one family for the whole tree in the manner of NCCL's
 * checks.h: every MPI, CUDA and NCCL call goes through one, and a failure
 * is described by file, line, the call and the library's reason.
 *
 * Here, the library's (src/, and cuda/'s backend and engines): the
 * failure is logged, `res` set to an xpose_status and control goes to the
 * function's single cleanup label.  io/ and tool/ describe failures in an
 * xio_error instead, which their ranks agree on before one of them prints
 * it: XIO_MPICHECK and XIO_CUDACHECK (io/common/h5_error.h) are this family's
 * members there.
 *
 * XPOSE_CUDACHECKGOTO names CUDA's types: it expands only in cuda/, whose
 * files include CUDA's headers (nothing outside cuda/ does).  NCCL, loaded
 * at run time, has its member beside its loader (cuda/exchange/nccl.c). */
#ifndef XPOSE_CHECK_H
#define XPOSE_CHECK_H

#include "log.h"

#define XPOSE_CHECKGOTO(call, res, label) \
  do {                                    \
    xpose_status check_status_ = (call);  \
    if (check_status_ != XPOSE_SUCCESS) { \
      (res) = check_status_;              \
      goto label;                         \
    }                                     \
  } while (0)

#define XPOSE_MPICHECKGOTO(call, res, label)                      \
  do {                                                            \
    int check_mpi_ = (call);                                      \
    if (check_mpi_ != MPI_SUCCESS) {                              \
      xpose_log_mpi_error(__FILE__, __LINE__, #call, check_mpi_); \
      (res) = XPOSE_ERROR_MPI;                                    \
      goto label;                                                 \
    }                                                             \
  } while (0)

/* Like NCCL's CUDACHECKGOTO, it clears the last error, so that a failure
 * that is not sticky does not resurface in the next unrelated check. */
#define XPOSE_CUDACHECKGOTO(call, res, label)                                 \
  do {                                                                        \
    cudaError_t check_cuda_ = (call);                                         \
    if (check_cuda_ != cudaSuccess) {                                         \
      (void)cudaGetLastError();                                               \
      xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "%s failed: %s", #call, \
                 cudaGetErrorString(check_cuda_));                            \
      (res) = XPOSE_ERROR_CUDA;                                               \
      goto label;                                                             \
    }                                                                         \
  } while (0)

/* Fails with `status` and a formatted message when `cond` is false. */
#define XPOSE_REQUIREGOTO(cond, status, res, label, ...)            \
  do {                                                              \
    if (!(cond)) {                                                  \
      xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, __VA_ARGS__); \
      (res) = (status);                                             \
      goto label;                                                   \
    }                                                               \
  } while (0)

#endif
