/* How many threads a rank's host transposes take (xpose_config.host_threads). */
#ifndef TOOL_HOST_THREADS_H
#define TOOL_HOST_THREADS_H

#include <mpi.h>

#include "h5_error.h"

/* Collective.  The CPUs this rank may run on (its affinity: mpirun's
 * binding, Slurm's --cpus-per-task), at most the node's CPUs shared out
 * among its ranks, and at least 1.  `mpirun -n 1` binds its rank to one
 * core: `--bind-to none` gives it the node. */
int tool_host_threads(MPI_Comm comm, int *threads, xio_error *err);

#endif
