#define _DEFAULT_SOURCE /* sysconf names */
#include "node_memory.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "size.h"

/* A cgroup v1 limit this high, or "max" in v2, means none. */
#define NO_LIMIT ((uint64_t)1 << 60)

static void consider(tool_memory_limit *limit, uint64_t bytes, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void consider(tool_memory_limit *limit, uint64_t bytes, const char *format, ...) {
  if (bytes == 0 || bytes >= NO_LIMIT || bytes >= limit->bytes) return;
  limit->bytes = bytes;
  va_list args;
  va_start(args, format);
  vsnprintf(limit->source, sizeof limit->source, format, args);
  va_end(args);
}

/* A number from a one-line file; 0 when absent, unreadable or "max". */
static uint64_t read_number(const char *path) {
  unsigned long long value = 0;
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  if (fscanf(f, "%llu", &value) != 1) value = 0;
  fclose(f);
  return value;
}

/* Every limit from `dir` up to `root`, e.g. a Slurm step's, its job's, its
 * user's. */
static void walk_up(tool_memory_limit *limit, const char *root, const char *dir, const char *file) {
  char path[4096];
  snprintf(path, sizeof path, "%s%s", root, dir);
  for (;;) {
    char limit_file[4200];
    snprintf(limit_file, sizeof limit_file, "%s/%s", path, file);
    consider(limit, read_number(limit_file), "the cgroup limit in %s", limit_file);
    char *slash = strrchr(path, '/');
    if (!slash || (size_t)(slash - path) < strlen(root)) break;
    *slash = '\0';
  }
}

static void cgroup_limits(tool_memory_limit *limit, const char *proc_cgroup,
                          const char *cgroup_root) {
  FILE *f = fopen(proc_cgroup, "r");
  if (!f) return;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    /* "hierarchy-id:controllers:path"; v2 has id 0 and no controllers. */
    char *controllers = strchr(line, ':');
    char *path = controllers ? strchr(controllers + 1, ':') : NULL;
    if (!path) continue;
    *path++ = '\0';
    *controllers++ = '\0';
    if (strcmp(line, "0") == 0 && controllers[0] == '\0') {
      char root[4200];
      walk_up(limit, cgroup_root, path, "memory.max"); /* pure v2 */
      snprintf(root, sizeof root, "%s/unified", cgroup_root);
      walk_up(limit, root, path, "memory.max"); /* hybrid */
    } else {
      for (char *name = strtok(controllers, ","); name; name = strtok(NULL, ","))
        if (strcmp(name, "memory") == 0) {
          char root[4200];
          snprintf(root, sizeof root, "%s/memory", cgroup_root);
          walk_up(limit, root, path, "memory.limit_in_bytes");
        }
    }
  }
  fclose(f);
}

static uint64_t slurm_megabytes(const char *name) {
  const char *text = getenv(name);
  return text && *text ? strtoull(text, NULL, 10) * 1024 * 1024 : 0;
}

void tool_memory_limit_find(const char *proc_cgroup, const char *cgroup_root, const char *meminfo,
                            tool_memory_limit *limit) {
  limit->bytes = UINT64_MAX;
  snprintf(limit->source, sizeof limit->source, "no limit found");
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  consider(limit, pages > 0 && page_size > 0 ? (uint64_t)pages * (uint64_t)page_size : 0,
           "the node's memory");
  FILE *f = fopen(meminfo, "r");
  if (f) {
    char line[256];
    unsigned long long kib;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
        consider(limit, (uint64_t)kib * 1024, "the memory available now (MemAvailable)");
    fclose(f);
  }
  cgroup_limits(limit, proc_cgroup, cgroup_root);
  consider(limit, slurm_megabytes("SLURM_MEM_PER_NODE"), "the job's SLURM_MEM_PER_NODE");
  const char *cpus = getenv("SLURM_CPUS_ON_NODE");
  consider(limit, slurm_megabytes("SLURM_MEM_PER_CPU") * (cpus ? strtoull(cpus, NULL, 10) : 1),
           "the job's SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE");
  if (limit->bytes == UINT64_MAX) limit->bytes = (uint64_t)1 << 32;
}

int tool_node_ranks(MPI_Comm comm, int *node_ranks, xio_error *err) {
  MPI_Comm node = MPI_COMM_NULL;
  return XIO_MPICHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
                      err) ||
                 XIO_MPICHECK(MPI_Comm_size(node, node_ranks), err) ||
                 XIO_MPICHECK(MPI_Comm_free(&node), err)
             ? -1
             : 0;
}

int tool_default_memory_budget(MPI_Comm comm, uint64_t *budget, char *source, size_t source_size,
                               xio_error *err) {
  int rank, nranks, node_ranks = 1;
  if (XIO_MPICHECK(MPI_Comm_rank(comm, &rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(comm, &nranks), err) || tool_node_ranks(comm, &node_ranks, err))
    return -1;
  tool_memory_limit limit;
  tool_memory_limit_find("/proc/self/cgroup", "/sys/fs/cgroup", "/proc/meminfo", &limit);
  uint64_t mine = limit.bytes / 2 / (uint64_t)node_ranks;
  if (XIO_MPICHECK(MPI_Allreduce(&mine, budget, 1, MPI_UINT64_T, MPI_MIN, comm), err)) return -1;
  if (!source) return 0;
  /* The lowest rank that has the smallest budget says why. */
  int speaker = mine == *budget ? rank : nranks, first;
  if (XIO_MPICHECK(MPI_Allreduce(&speaker, &first, 1, MPI_INT, MPI_MIN, comm), err)) return -1;
  char total[32];
  tool_format_bytes(limit.bytes, total, sizeof total);
  snprintf(source, source_size, "half of %s (%s) on rank %d's node, shared by its %d rank(s)",
           limit.source, total, rank, node_ranks);
  return XIO_MPICHECK(MPI_Bcast(source, (int)source_size, MPI_CHAR, first, comm), err);
}

uint64_t tool_budget_floor(uint64_t budget, uint64_t bytes, int nranks) {
  const uint64_t share = bytes / (uint64_t)(nranks > 0 ? nranks : 1);
  const uint64_t least = (share / TOOL_MOST_PASSES + 1) * 4; /* a quarter of it per pass */
  const uint64_t kib = (uint64_t)1 << 10;
  return budget >= least ? budget : (least + kib - 1) / kib * kib;
}

uint64_t tool_resident_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  unsigned long long kib = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %llu kB", &kib) == 1) break;
  if (f) fclose(f);
  return (uint64_t)kib << 10;
}
