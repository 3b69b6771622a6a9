#include "xpose.h"

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
