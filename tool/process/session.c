#define _GNU_SOURCE /* setenv, prctl */
#include "session.h"

#include <hdf5.h>
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "deflate.h"
#include "h5_error.h"
#include "options.h"
#include "xpose.h"

int tool_io_threads_off(void) {
  const char *io_thread = getenv("XPOSE_IO_THREAD");
  return io_thread && strcmp(io_thread, "0") == 0;
}

/* HDF5 allocates and frees a buffer or two per chunk it filters, of 1 MiB
 * or so: past glibc's default threshold each is mapped, faulted in page by
 * page and unmapped (a TLB flush) again.  Kept in the heap instead, a run
 * on a compressed climate file took 10-18% less time (95 MB of float32 on
 * 2 cores: 3.05 -> 2.73 s with 2 ranks, 3.57 -> 2.94 s with 1;
 * tests/bench/RESULTS.md).  Buffers the
 * size of a pass (over 32 MiB) are still mapped, and freed memory goes
 * back to the system past 64 MiB of it (the largest rank's resident
 * memory: 84 -> 124 MB there). */
static void keep_chunk_buffers_in_heap(void) {
  (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

/* HDF5's buffers, MPI-IO's and the arenas of the I/O thread come from
 * malloc, which puts them on transparent huge pages only when told so as
 * the process starts (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, glibc 2.35
 * and later; xpose's own buffers ask for them: host_memory.h).  Page faults
 * of 4 KiB are dear in VMs: with the tunable, the 95 MB climate file took
 * 1.85 s, not 2.12 s (2 ranks on 2 cores).  So the tool starts itself again
 * with it, once (XPOSE_HUGE_PAGES marks the second start), before MPI or
 * anything else runs; XPOSE_HUGE_PAGES=0 keeps it as started, and so does
 * a failed exec. */
static void restart_with_huge_page_heap(char **argv) {
  const char *tunables = getenv("GLIBC_TUNABLES");
  if (getenv("XPOSE_HUGE_PAGES") || (tunables && strstr(tunables, "glibc.malloc.hugetlb"))) return;
  /* by its own path, not /proc/self/exe: the kernel names the process
   * after the file, and ps would show "exe" until name_process runs */
  char self[4096], value[2048];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0 || (size_t)length >= sizeof self - 1) return;
  self[length] = '\0';
  const int n = snprintf(value, sizeof value, "%s%sglibc.malloc.hugetlb=1",
                         tunables ? tunables : "", tunables && *tunables ? ":" : "");
  if (n < 0 || (size_t)n >= sizeof value || setenv("XPOSE_HUGE_PAGES", "1", 1) != 0 ||
      setenv("GLIBC_TUNABLES", value, 1) != 0)
    return;
  (void)execv(self, argv);
}

/* A rank waiting in MPI (an exchange, a collective) spins on a core its
 * own pool's threads want, compressing and inflating chunks beside it.
 * Open MPI yields that core between polls when told so (it does by itself
 * only where it sees more ranks than cores); a job's own setting stays.
 * Compressed climate files, 2 ranks on the 2-core VM: 5.72 -> 5.17 s and
 * 3.31 -> 3.12 s (tests/bench/RESULTS.md). */
static void yield_while_waiting_in_mpi(void) {
  (void)setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
}

/* The kernel names a process after the file it executes, which may be a
 * link of another name.  Users and scripts find, watch and signal ranks
 * by name (ps, top, pgrep -x, pkill, killall); threads started later take
 * the name too. */
static void name_process(const char *program) { (void)prctl(PR_SET_NAME, program, 0, 0, 0); }

int tool_session_start(const char *program, int *argc, char ***argv, int *rank) {
  xio_error err = {""};
  *rank = 0;
  restart_with_huge_page_heap(*argv);
  name_process(program);
  keep_chunk_buffers_in_heap();
  yield_while_waiting_in_mpi();
  /* Threads: the pass loop's I/O thread does MPI-IO while the main one
   * exchanges (io_thread.h). */
  const int wanted = tool_io_threads_off() ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE;
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(argc, argv, wanted, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "%s: error: MPI_Init_thread failed\n", program);
    return TOOL_EXIT_ERROR;
  }
  if (XIO_MPICHECK(MPI_Comm_rank(MPI_COMM_WORLD, rank), &err) ||
      (H5Eset_auto2(H5E_DEFAULT, NULL, NULL) < 0 &&
       xio_fail(&err, "cannot take over HDF5's error reporting")) ||
      xio_deflate_install(&err)) {
    if (*rank == 0) fprintf(stderr, "%s: error: %s\n", program, err.message); /* all ranks' */
    (void)MPI_Finalize();                                                     /* failing already */
    return TOOL_EXIT_ERROR;
  }
  return TOOL_EXIT_OK;
}

int tool_session_end(const char *program, int rank, int exit_code) {
  if (MPI_Finalize() != MPI_SUCCESS && exit_code == TOOL_EXIT_OK) {
    fprintf(stderr, "%s: error: MPI_Finalize failed on rank %d\n", program, rank);
    exit_code = TOOL_EXIT_ERROR;
  }
  return exit_code;
}

/* The version line is all there is to say: what cannot be read is left out. */
void tool_print_version(void) {
  unsigned major = 0, minor = 0, release = 0;
  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING] = "MPI";
  int length = 3;
  if (H5get_libversion(&major, &minor, &release) < 0) major = minor = release = 0;
  if (MPI_Get_library_version(mpi_version, &length) != MPI_SUCCESS) snprintf(mpi_version, 4, "MPI");
#if defined(XPOSE_HAVE_NCCL)
  const char *built = "CUDA backend, NCCL exchange";
#elif defined(XPOSE_HAVE_CUDA)
  const char *built = "CUDA backend";
#else
  const char *built = "host backend only";
#endif
  printf("xpose %s (HDF5 %u.%u.%u, %.*s; %s; compresses with %s)\n", XPOSE_VERSION_STRING, major,
         minor, release, (int)strcspn(mpi_version, ",\n"), mpi_version, built, xio_deflate_name());
}
