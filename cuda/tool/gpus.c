#define _POSIX_C_SOURCE 200809L /* gethostname */
#include "gpus.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "report.h"

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

enum { LINE = 400 }; /* a host name, a device name (up to 256) and a bus id */

int tool_report_gpu_map(MPI_Comm comm, int device, xio_error *err) {
  int rank, nranks;
  if (XIO_MPICHECK(MPI_Comm_rank(comm, &rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(comm, &nranks), err))
    return -1;
  char host[64] = "?", bus[32] = "?", line[LINE];
  struct cudaDeviceProp prop;
  if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "?");
  xio_error ignored; /* only a description: what cannot be read shows as "?" */
  if (XIO_CUDACHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device), &ignored))
    snprintf(bus, sizeof bus, "?");
  if (XIO_CUDACHECK(cudaGetDeviceProperties(&prop, device), &ignored))
    snprintf(prop.name, sizeof prop.name, "?");
  snprintf(line, sizeof line, "rank %d on %s: GPU %d, %s (PCI %s)", rank, host, device, prop.name,
           bus);
  char *all = rank == 0 ? malloc((size_t)nranks * LINE) : NULL;
  if (XIO_MPICHECK(MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, comm), err)) {
    free(all);
    return -1;
  }
  for (int r = 0; all && r < nranks; r++) tool_report_verbose("%s", all + (size_t)r * LINE);
  free(all);
  return 0;
}
