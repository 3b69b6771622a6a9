/* Which GPU a rank drives. */
#include <cuda_runtime_api.h>
#include <mpi.h>

#include "check.h"
#include "collective.h"

xpose_status xpose_cuda_select_device(MPI_Comm comm, int *device) {
  xpose_status res = XPOSE_SUCCESS;
  MPI_Comm node = MPI_COMM_NULL;
  int local_rank = 0, devices = 0;
  XPOSE_MPICHECKGOTO(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), res,
                     fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_rank(node, &local_rank), res, fail);
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    /* Not an error in itself: callers often just fall back to the host. */
    /* without a driver CUDA says "driver version is insufficient" */
    int driver = 0;
    const int no_driver = err == cudaErrorInsufficientDriver &&
                          cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0;
    xpose_logf(XPOSE_LOG_INFO, NULL, 0, "no CUDA device is usable by this rank: %s",
               no_driver            ? "no CUDA driver is installed"
               : err != cudaSuccess ? cudaGetErrorString(err)
                                    : "none is visible");
    res = XPOSE_ERROR_UNSUPPORTED;
    goto fail;
  }
  *device = local_rank % devices; /* indices count only CUDA_VISIBLE_DEVICES */
  XPOSE_CUDACHECKGOTO(cudaSetDevice(*device), res, fail);
fail:
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  return xpose_agree(comm, res);
}
