#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "host_threads.h"

#include <sched.h>
#include <unistd.h>

int tool_host_threads(MPI_Comm comm, int *threads, xio_error *err) {
  MPI_Comm node = MPI_COMM_NULL;
  int node_ranks = 1;
  if (XIO_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), err) ||
      XIO_MPI(MPI_Comm_size(node, &node_ranks), err) || XIO_MPI(MPI_Comm_free(&node), err))
    return -1;
  cpu_set_t mine;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  int n = sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine) : 1;
  const long share = online > 0 ? online / node_ranks : 1;
  if (n > share) n = (int)share;
  *threads = n < 1 ? 1 : n > 256 ? 256 : n; /* xpose.h's limit */
  return 0;
}
