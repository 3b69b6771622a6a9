#include "gpus.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

void tool_why_no_gpu(char *why, size_t why_size) {
  int devices = 0, driver = 0, runtime = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  (void)cudaGetLastError();
  why[0] = '\0';
  if (err == cudaSuccess && devices > 0) return;
  /* Without a driver CUDA says "driver version is insufficient": say which. */
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  if (err == cudaErrorInsufficientDriver && driver == 0)
    snprintf(why, why_size, "no CUDA driver is installed");
  else if (err == cudaErrorInsufficientDriver)
    snprintf(why, why_size, "the CUDA driver supports CUDA %d.%d, this xpose needs %d.%d",
             driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
  else if (err == cudaSuccess || err == cudaErrorNoDevice)
    snprintf(why, why_size, "no CUDA device is visible");
  else
    snprintf(why, why_size, "%s", cudaGetErrorString(err));
}

int tool_default_gpu_budget(MPI_Comm comm, uint64_t *budget, xio_error *err) {
  size_t free_bytes = 0, total = 0;
  int rc = XIO_CUDACHECK(cudaMemGetInfo(&free_bytes, &total), err);
  uint64_t mine = free_bytes / 2;
  if (xio_agree(comm, rc, err) ||
      XIO_MPICHECK(MPI_Allreduce(&mine, budget, 1, MPI_UINT64_T, MPI_MIN, comm), err))
    return -1;
  return 0;
}

void tool_describe_gpu(int device, char *text, size_t size) {
  char bus[32] = "?";
  struct cudaDeviceProp prop;
  xio_error ignored; /* only a description: what cannot be read shows as "?" */
  if (XIO_CUDACHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device), &ignored))
    snprintf(bus, sizeof bus, "?");
  if (XIO_CUDACHECK(cudaGetDeviceProperties(&prop, device), &ignored))
    snprintf(prop.name, sizeof prop.name, "?");
  snprintf(text, size, "GPU %d, %s (PCI %s)", device, prop.name, bus);
}
