/* The default budget's limits: cgroup v1 and v2 paths walked up from
 * /proc/self/cgroup, Slurm's variables and MemAvailable, on fake trees. */
#define _DEFAULT_SOURCE /* mkdtemp, setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "node_memory.h"
#include "test_util.h"

static char root[256];

static void put(const char *relative, const char *content) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", root, relative);
  for (char *p = path + strlen(root) + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(path, 0755);
      *p = '/';
    }
  FILE *f = fopen(path, "w");
  fputs(content, f);
  fclose(f);
}

static void expect(const char *what, uint64_t bytes, const char *source) {
  char proc[300], cgroup[300], meminfo[300];
  snprintf(proc, sizeof proc, "%s/proc_cgroup", root);
  snprintf(cgroup, sizeof cgroup, "%s/cgroup", root);
  snprintf(meminfo, sizeof meminfo, "%s/meminfo", root);
  tool_memory_limit limit;
  tool_memory_limit_find(proc, cgroup, meminfo, &limit);
  EXPECT(limit.bytes == bytes && strstr(limit.source, source), "%s: got %llu from '%s'", what,
         (unsigned long long)limit.bytes, limit.source);
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/xpose-memory-XXXXXX");
  if (!mkdtemp(root)) return 1;
  unsetenv("SLURM_MEM_PER_NODE");
  unsetenv("SLURM_MEM_PER_CPU");
  put("meminfo", "MemTotal: 100000000 kB\nMemAvailable: 2000000 kB\n");
  put("proc_cgroup", "0::/system.slice/slurmstepd.scope/job_7/step_0\n");
  expect("no cgroup limits", 2000000ull * 1024, "MemAvailable");

  /* v2: the job's limit, two levels above the step, and "max" elsewhere. */
  put("cgroup/system.slice/slurmstepd.scope/job_7/step_0/memory.max", "max\n");
  put("cgroup/system.slice/slurmstepd.scope/job_7/memory.max", "1073741824\n");
  put("cgroup/system.slice/memory.max", "max\n");
  expect("cgroup v2, the job's level", 1073741824, "job_7/memory.max");

  /* Slurm's variables when lower. */
  setenv("SLURM_MEM_PER_CPU", "100", 1);
  setenv("SLURM_CPUS_ON_NODE", "3", 1);
  expect("SLURM_MEM_PER_CPU", 300ull << 20, "SLURM_MEM_PER_CPU");
  setenv("SLURM_MEM_PER_NODE", "200", 1);
  expect("SLURM_MEM_PER_NODE", 200ull << 20, "SLURM_MEM_PER_NODE");
  unsetenv("SLURM_MEM_PER_NODE");
  unsetenv("SLURM_MEM_PER_CPU");

  /* v1 (and hybrid): the memory controller's own hierarchy; the huge value
   * v1 uses for "no limit" is ignored. */
  put("proc_cgroup", "5:cpuset:/\n4:memory,foo:/slurm/uid_0/job_9/step_batch\n0::/\n");
  put("cgroup/memory/slurm/uid_0/job_9/step_batch/memory.limit_in_bytes", "9223372036854771712\n");
  put("cgroup/memory/slurm/uid_0/job_9/memory.limit_in_bytes", "536870912\n");
  put("cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  expect("cgroup v1", 536870912, "job_9/memory.limit_in_bytes");

  char command[300];
  snprintf(command, sizeof command, "rm -rf %s", root);
  if (system(command) != 0) return 1;
  if (test_failures) fprintf(stderr, "%d failure(s)\n", test_failures);
  return test_failures ? 1 : 0;
}
