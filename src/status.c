#include "check.h"

#include <mpi.h>

const char *xpose_status_string(xpose_status status) {
  switch (status) {
    case XPOSE_SUCCESS: return "success";
    case XPOSE_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case XPOSE_ERROR_OUT_OF_MEMORY: return "out of memory";
    case XPOSE_ERROR_MPI: return "MPI error";
    case XPOSE_ERROR_UNSUPPORTED: return "unsupported backend or exchange engine";
    case XPOSE_ERROR_CUDA: return "CUDA error";
    case XPOSE_ERROR_NCCL: return "NCCL error";
    case XPOSE_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

void xpose_log_mpi_error(const char *file, int line, const char *call, int mpi_error) {
  if (!xpose_log_enabled()) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(mpi_error, text, &length) != MPI_SUCCESS) length = 0;
  text[length] = '\0';
  xpose_logf(XPOSE_LOG_ERROR, file, line, "%s failed: %s", call,
             length ? text : "unknown MPI error");
}
