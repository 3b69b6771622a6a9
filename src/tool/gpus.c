#define _POSIX_C_SOURCE 200809L /* gethostname */
#include "gpus.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "report.h"

uint64_t xpose_default_gpu_budget(MPI_Comm comm) {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) free_bytes = 0;
  uint64_t mine = free_bytes / 2, budget = mine;
  MPI_Allreduce(&mine, &budget, 1, MPI_UINT64_T, MPI_MIN, comm);
  return budget;
}

enum { LINE = 160 };

void xpose_report_gpu_map(MPI_Comm comm, int device) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  char host[64] = "?", bus[32] = "?", line[LINE];
  struct cudaDeviceProp prop;
  gethostname(host, sizeof host - 1);
  cudaDeviceGetPCIBusId(bus, sizeof bus, device);
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) prop.name[0] = '\0';
  snprintf(line, sizeof line, "rank %d on %s: GPU %d, %s (PCI %s)", rank, host, device, prop.name,
           bus);
  char *all = rank == 0 ? malloc((size_t)nranks * LINE) : NULL;
  MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, comm);
  for (int r = 0; all && r < nranks; r++) xpose_report_verbose("%s", all + (size_t)r * LINE);
  free(all);
}
