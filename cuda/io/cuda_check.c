/* XIO_CUDACHECK's function (io/common/h5_error.h): a failed CUDA call described
 * in an xio_error, as XIO_MPICHECK does for MPI. */
#include <cuda_runtime_api.h>

#include "h5_error.h"

int xio_cuda_failed(int code, const char *call, const char *file, int line, xio_error *err) {
  if (code == cudaSuccess) return 0;
  (void)cudaGetLastError();
  return xio_fail(err, "%s failed: %s (%s:%d)", call, cudaGetErrorString((cudaError_t)code), file,
                  line);
}
