#define _POSIX_C_SOURCE 200809L
#include "input_file.h"

#include <errno.h>
#include <hdf5.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output_file.h"

static int check_input_on_root(void *arg, xio_error *err) {
  const char *path = arg;
  struct stat st;
  if (stat(path, &st) != 0) return xio_fail(err, "%s: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode)) return xio_fail(err, "%s is a directory, not an HDF5 file", path);
  if (!S_ISREG(st.st_mode))
    return xio_fail(err, "%s is %s, not an HDF5 file", path, tool_file_kind(st.st_mode));
  if (access(path, R_OK) != 0) return xio_fail(err, "%s: %s", path, strerror(errno));
#if H5_VERSION_GE(1, 12, 0)
  const htri_t is_hdf5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
  const htri_t is_hdf5 = H5Fis_hdf5(path);
#endif
  if (is_hdf5 <= 0) return xio_fail(err, "%s is not an HDF5 file", path);
  return 0;
}

int tool_check_input(MPI_Comm comm, const char *path, xio_error *err) {
  return xio_on_root(comm, check_input_on_root, (void *)path, err);
}
