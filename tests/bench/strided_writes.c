/* What the page cache and the disk do with a transpose's writes, without
 * xpose: an n x n float32 output written as raw passes write it (16 bands;
 * P processes, each its own output rows, each row's piece per band), then
 * one fsync.  Modes: 0 a plain file, 1 posix_fallocate first (as xpose
 * reserves its output), 3 a plain file with sync_file_range(WRITE) of each
 * process's rows after each band (writeback started early).
 *   cc -O2 tests/bench/strided_writes.c -o /tmp/strided_writes
 *   /tmp/strided_writes FILE MODE N PROCS    (drop the page cache first) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Process p's rows of every band. */
static int write_rows(int fd, int mode, long n, int p, int procs) {
  const long pitch = n * 4, bands = 16, width = n / bands * 4;
  const long first = n * p / procs, end = n * (p + 1) / procs;
  char *piece = malloc((size_t)width);
  if (!piece) return 1;
  memset(piece, 7, (size_t)width);
  for (long b = 0; b < bands; b++) {
    for (long r = first; r < end; r++)
      if (pwrite(fd, piece, (size_t)width, r * pitch + b * width) != width) return 1;
    if (mode == 3)
      (void)sync_file_range(fd, first * pitch, (end - first) * pitch, SYNC_FILE_RANGE_WRITE);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: strided_writes FILE MODE N PROCS\n");
    return 2;
  }
  const int mode = atoi(argv[2]), procs = atoi(argv[4]);
  const long n = atol(argv[3]);
  const int fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0 || (mode == 1 && posix_fallocate(fd, 0, n * n * 4) != 0)) return 1;
  const double began = now();
  for (int p = 0; p < procs; p++)
    if (fork() == 0) _exit(write_rows(fd, mode, n, p, procs));
  int status = 0, failed = 0;
  while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  const double written = now();
  failed |= fsync(fd) != 0;
  const double synced = now();
  printf("mode %d, %d process(es): writes %.2f s, fsync %.2f s, total %.2f s%s\n", mode, procs,
         written - began, synced - written, synced - began, failed ? " (FAILED)" : "");
  close(fd);
  return failed;
}
