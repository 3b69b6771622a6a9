/* Built without CUDA: the GPU entry points exist and say so. */
#include "check.h"

xpose_status xpose_cuda_select_device(MPI_Comm comm, int *device) {
  (void)comm, (void)device;
  xpose_logf(XPOSE_LOG_INFO, NULL, 0, "xpose was built without CUDA");
  return XPOSE_ERROR_UNSUPPORTED;
}
