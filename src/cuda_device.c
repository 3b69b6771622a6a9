/* Which GPU a rank drives, and whether MPI can take device pointers. */
#include <mpi.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif
#endif

#include "cuda_check.h"
#include "exchange.h"
#include "plan.h"

int xpose_mpi_is_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1; /* built with CUDA and enabled at run time */
#else
  return 0;
#endif
}

xpose_status xpose_cuda_select_device(MPI_Comm comm, int *device) {
  xpose_status res = XPOSE_SUCCESS;
  MPI_Comm node = MPI_COMM_NULL;
  int local_rank = 0, devices = 0;
  XPOSE_MPICHECKGOTO(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), res,
                     fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_rank(node, &local_rank), res, fail);
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    /* Not an error in itself: callers often just fall back to the host. */
    xpose_logf(XPOSE_LOG_INFO, NULL, 0, "no CUDA device is visible to this rank");
    res = XPOSE_ERROR_UNSUPPORTED;
    goto fail;
  }
  *device = local_rank % devices; /* indices count only CUDA_VISIBLE_DEVICES */
  XPOSE_CUDACHECKGOTO(cudaSetDevice(*device), res, fail);
fail:
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  return xpose_agree(comm, res);
}
