#define _DEFAULT_SOURCE /* sysconf names */
#include "node_memory.h"

#include <stdio.h>
#include <unistd.h>

/* A number from a cgroup file; 0 when absent or "max" (no limit). */
static uint64_t read_limit(const char *path) {
  unsigned long long value = 0;
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  if (fscanf(f, "%llu", &value) != 1) value = 0;
  fclose(f);
  return value;
}

static uint64_t usable_memory(void) {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  uint64_t memory =
      pages > 0 && page_size > 0 ? (uint64_t)pages * (uint64_t)page_size : (1ull << 32);
  const char *limits[] = {"/sys/fs/cgroup/memory.max", /* cgroup v2 */
                          "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
  for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
    const uint64_t limit = read_limit(limits[i]);
    if (limit > 0 && limit < memory) memory = limit;
  }
  return memory;
}

int tool_default_memory_budget(MPI_Comm comm, uint64_t *budget, xio_error *err) {
  MPI_Comm node = MPI_COMM_NULL;
  int node_ranks = 1;
  if (XIO_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), err) ||
      XIO_MPI(MPI_Comm_size(node, &node_ranks), err) || XIO_MPI(MPI_Comm_free(&node), err))
    return -1;
  uint64_t mine = usable_memory() / 2 / (uint64_t)node_ranks;
  return XIO_MPI(MPI_Allreduce(&mine, budget, 1, MPI_UINT64_T, MPI_MIN, comm), err);
}
