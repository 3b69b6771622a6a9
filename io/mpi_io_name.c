#define _POSIX_C_SOURCE 200809L /* getcwd */
#include "mpi_io_name.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The longest name MPI-IO takes on `ranks` ranks (no limit: SIZE_MAX). */
static size_t longest_name(int ranks) {
#ifdef OPEN_MPI
  int digits = 1;
  for (int highest = ranks - 1; highest >= 10; highest /= 10) digits++;
  return 256 - 1 - strlen(".locktest.") - (size_t)digits;
#else
  (void)ranks;
  return (size_t)-1;
#endif
}

int xio_mpi_io_name(MPI_Comm comm, const char *path, const char *shown, char *name, size_t size,
                    xio_error *err) {
  const char *shortest = path;
  char cwd[PATH_MAX];
  const size_t cwd_length = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
  if (path[0] == '/' && cwd_length > 1 && strncmp(path, cwd, cwd_length) == 0 &&
      path[cwd_length] == '/' && path[cwd_length + 1])
    shortest = path + cwd_length + 1;
  int ranks = 1;
  if (MPI_Comm_size(comm, &ranks) != MPI_SUCCESS) ranks = 1 << 20; /* the strictest */
  const size_t longest = longest_name(ranks), length = strlen(shortest);
  if (length > longest)
    return xio_fail(err,
                    "%s: the name MPI-IO would open, %.64s..., is %zu bytes long, and Open MPI's "
                    "MPI-IO (OMPIO) fails on names of more than %zu bytes on %d rank(s): give a "
                    "shorter path, or run from the file's directory",
                    shown, shortest, length, longest, ranks);
  if (length >= size) return xio_fail(err, "%s: its name is too long", shown);
  snprintf(name, size, "%s", shortest);
  return 0;
}
