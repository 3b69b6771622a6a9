/* How many threads a rank takes for its host work: the chunk codec's pool
 * (pool.h) and the host transposes (xpose_config.host_threads). */
#ifndef TOOL_HOST_THREADS_H
#define TOOL_HOST_THREADS_H

#include <mpi.h>
#include <stddef.h>

#include "h5_error.h"

/* Collective.  `given` (--threads) where nonzero, else the CPUs this rank
 * may run on (its affinity: mpirun's binding, Slurm's --cpus-per-task),
 * at most its share of those its node's ranks may run on (all of the
 * node's, or its job's under Slurm's cgroups), and at least 1.
 * `why` says how the count came about (with rank 0's CPUs, and what gives
 * a rank bound to fewer CPUs than its share more). */
int tool_host_threads(MPI_Comm comm, int given, int *threads, char *why, size_t why_size,
                      xio_error *err);

#endif
