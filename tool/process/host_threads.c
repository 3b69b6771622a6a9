#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "host_threads.h"

#include <sched.h>
#include <stdio.h>

/* Collective.  The CPUs this rank may run on (*mine), those any rank of
 * its node may run on (*node: the node's, or its job's share of it, under
 * Slurm's cgroups), and how many ranks the node has. */
static int node_cpus(MPI_Comm comm, int *mine, int *node, int *node_ranks, xio_error *err) {
  cpu_set_t set, all;
  CPU_ZERO(&set);
  *mine = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  MPI_Comm ranks = MPI_COMM_NULL;
  if (XIO_MPICHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &ranks),
                   err) ||
      XIO_MPICHECK(MPI_Comm_size(ranks, node_ranks), err) ||
      XIO_MPICHECK(MPI_Allreduce(&set, &all, (int)sizeof set, MPI_BYTE, MPI_BOR, ranks), err) ||
      XIO_MPICHECK(MPI_Comm_free(&ranks), err))
    return -1;
  *node = CPU_COUNT(&all);
  return 0;
}

int tool_host_threads(MPI_Comm comm, int given, int *threads, char *why, size_t why_size,
                      xio_error *err) {
  int mine = 1, node = 1, node_ranks = 1;
  if (node_cpus(comm, &mine, &node, &node_ranks, err)) return -1;
  const int share = node > node_ranks ? node / node_ranks : 1;
  const int n = given ? given : mine < share ? mine : share;
  *threads = n < 1 ? 1 : n > 256 ? 256 : n; /* xpose_config.host_threads' limit */
  int range[2] = {-*threads, *threads}, bound = !given && mine < share;
  if (XIO_MPICHECK(MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_INT, MPI_MAX, comm), err) ||
      XIO_MPICHECK(MPI_Allreduce(MPI_IN_PLACE, &bound, 1, MPI_INT, MPI_MAX, comm), err))
    return -1;
  char count[64];
  if (-range[0] == range[1])
    snprintf(count, sizeof count, "%d thread(s) per rank", range[1]);
  else
    snprintf(count, sizeof count, "%d to %d threads per rank", -range[0], range[1]);
  if (given)
    snprintf(why, why_size, "%s (--threads)", count);
  else if (bound)
    snprintf(why, why_size,
             "%s: rank 0 may run on %d of the %d CPUs its node has for %d rank(s) (mpirun "
             "binds each rank to one core unless given --bind-to none or --map-by ...:PE=N, "
             "Slurm to its --cpus-per-task)",
             count, mine, node, node_ranks);
  else
    snprintf(why, why_size, "%s: the %d CPU(s) its node has shared by %d rank(s)", count, node,
             node_ranks);
  return 0;
}
