#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "host_threads.h"

#include <sched.h>
#include <unistd.h>

#include "node_memory.h"

int tool_host_threads(MPI_Comm comm, int *threads, xio_error *err) {
  int node_ranks = 1;
  if (tool_node_ranks(comm, &node_ranks, err)) return -1;
  cpu_set_t mine;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  int n = sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine) : 1;
  const long share = online > 0 ? online / node_ranks : 1;
  if (n > share) n = (int)share;
  *threads = n < 1 ? 1 : n > 256 ? 256 : n; /* xpose_config.host_threads' limit */
  return 0;
}
