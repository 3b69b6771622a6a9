/* The default memory budget per rank. */
#ifndef TOOL_NODE_MEMORY_H
#define TOOL_NODE_MEMORY_H

#include <mpi.h>
#include <stdint.h>

#include "h5_error.h"

/* Collective.  Half of the memory this process may use (physical memory,
 * or the cgroup limit a batch system such as Slurm sets, if lower), divided
 * among the ranks sharing the node; the minimum over all ranks, so every
 * rank plans the same passes.  0, or -1 with a message. */
int tool_default_memory_budget(MPI_Comm comm, uint64_t *budget, xio_error *err);

#endif
