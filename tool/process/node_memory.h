/* The default memory budget per rank, from the limits that really apply
 * to this process. */
#ifndef TOOL_NODE_MEMORY_H
#define TOOL_NODE_MEMORY_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"

typedef struct {
  uint64_t bytes;
  char source[384]; /* where the figure comes from, for --verbose */
} tool_memory_limit;

/* Local.  The smallest of: physical memory; the memory available now
 * (MemAvailable); the memory limit of this process's cgroup and of every
 * cgroup above it, v1 or v2 (the path from proc_cgroup, under cgroup_root);
 * and Slurm's SLURM_MEM_PER_NODE, or SLURM_MEM_PER_CPU times
 * SLURM_CPUS_ON_NODE.  The paths are parameters for the tests:
 * "/proc/self/cgroup", "/sys/fs/cgroup", "/proc/meminfo". */
void tool_memory_limit_find(const char *proc_cgroup, const char *cgroup_root, const char *meminfo,
                            tool_memory_limit *limit);

/* Collective.  How many ranks of comm share this rank's node. */
int tool_node_ranks(MPI_Comm comm, int *node_ranks, xio_error *err);

/* Collective.  Half of the smallest limit, divided among the ranks sharing
 * the node; the minimum over all ranks, so every rank plans the same
 * passes.  `source` (may be NULL) says where it came from.  0, or -1 with
 * a message. */
int tool_default_memory_budget(MPI_Comm comm, uint64_t *budget, char *source, size_t source_size,
                               xio_error *err);

/* The most passes a budget the user gave may make: a run of more is all
 * synchronisation (--memory 1K moved 35 MB in 167,334 passes, 39.2 s
 * against 0.44 s). */
enum { TOOL_MOST_PASSES = 10000 };

/* Local.  A budget per rank that moves `bytes` on nranks ranks in about
 * TOOL_MOST_PASSES passes at most (a pass holds about a quarter of it):
 * `budget` itself where it does, else a larger one. */
uint64_t tool_budget_floor(uint64_t budget, uint64_t bytes, int nranks);

/* Local.  This process's resident memory now (0 where the system does not
 * say): before the passes, what the libraries (MPI, HDF5, netCDF-C) and
 * the open files hold beside the budget of xpose's own buffers. */
uint64_t tool_resident_bytes(void);

#endif
