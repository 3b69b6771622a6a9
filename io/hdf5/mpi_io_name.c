#define _POSIX_C_SOURCE 200809L /* getcwd */
#include "mpi_io_name.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether Open MPI's MCA parameter `io` in the environment leaves OMPIO
 * out ("romio321", "^ompio"): its selection, a list of components, or of
 * those left out after '^'. */
static int ompio_left_out(void) {
  const char *io = getenv("OMPI_MCA_io");
  if (!io || !io[0]) return 0;
  const int excluding = io[0] == '^';
  int listed = 0;
  for (const char *p = io + excluding; *p; p += *p == ',') {
    const size_t length = strcspn(p, ",");
    listed |= length == 5 && strncmp(p, "ompio", 5) == 0;
    p += length;
  }
  return excluding ? listed : !listed;
}

/* The longest name MPI-IO takes on `ranks` ranks (no limit: SIZE_MAX). */
static size_t longest_name(int ranks) {
#ifdef OPEN_MPI
  if (ompio_left_out()) return (size_t)-1;
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
