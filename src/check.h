/* Check macros in the style of NCCL's checks.h: every MPI call goes through
 * one of these (CUDA calls through cuda_check.h, NCCL calls through
 * exchange/nccl.c's); a failure is logged with file, line and the call,
 * sets `res` and jumps to the function's single cleanup label. */
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
