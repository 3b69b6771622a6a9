/* The default memory budget per rank. */
#ifndef XPOSE_NODE_MEMORY_H
#define XPOSE_NODE_MEMORY_H

#include <mpi.h>
#include <stdint.h>

/* Collective.  Half of the memory this process may use (physical memory,
 * or the cgroup limit a batch system such as Slurm sets, if lower), divided
 * among the ranks sharing the node; the minimum over all ranks, so every
 * rank plans the same passes. */
uint64_t xpose_default_memory_budget(MPI_Comm comm);

#endif
