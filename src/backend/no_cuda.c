/* Built without CUDA: the GPU entry points exist and say so. */
#include "backend/backend.h"
#include "check.h"

xpose_status xpose_cuda_select_device(MPI_Comm comm, int *device) {
  (void)comm, (void)device;
  xpose_logf(XPOSE_LOG_INFO, NULL, 0, "xpose was built without CUDA");
  return XPOSE_ERROR_UNSUPPORTED;
}

xpose_status xpose_backend_cuda_create(xpose_backend **backend) {
  *backend = NULL;
  xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "the CUDA backend was not built into this xpose");
  return XPOSE_ERROR_UNSUPPORTED;
}
