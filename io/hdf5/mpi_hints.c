#include "mpi_hints.h"

#include <stdio.h>
#include <string.h>

static MPI_Info hints = MPI_INFO_NULL;

int xio_mpi_hints_set(const char *const *pairs, int count, xio_error *err) {
  if (count == 0) return 0;
  if (hints == MPI_INFO_NULL && XIO_MPICHECK(MPI_Info_create(&hints), err)) return -1;
  for (int i = 0; i < count; i++) {
    const char *equals = strchr(pairs[i], '=');
    char key[MPI_MAX_INFO_KEY + 1];
    const size_t length = equals ? (size_t)(equals - pairs[i]) : 0;
    if (length == 0 || length > MPI_MAX_INFO_KEY || strlen(equals + 1) > MPI_MAX_INFO_VAL)
      return xio_fail(err, "invalid MPI-IO hint '%s': expected KEY=VALUE", pairs[i]);
    memcpy(key, pairs[i], length);
    key[length] = '\0';
    if (XIO_MPICHECK(MPI_Info_set(hints, key, equals + 1), err)) return -1;
  }
  return 0;
}

MPI_Info xio_mpi_hints(void) { return hints; }

void xio_mpi_hints_in_force(hid_t file, char *text, size_t size) {
  snprintf(text, size, "none reported");
  MPI_File *handle = NULL;
  MPI_Info info = MPI_INFO_NULL;
  int keys = 0;
  /* The MPI-IO layer's own view, defaults included: not just what was asked. */
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, (void **)&handle) < 0 || !handle ||
      MPI_File_get_info(*handle, &info) != MPI_SUCCESS || info == MPI_INFO_NULL ||
      MPI_Info_get_nkeys(info, &keys) != MPI_SUCCESS)
    keys = 0;
  size_t used = 0;
  for (int i = 0; i < keys && used < size; i++) {
    char key[MPI_MAX_INFO_KEY + 1], value[256];
    int flag = 0;
    if (MPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS ||
        MPI_Info_get(info, key, (int)sizeof value - 1, value, &flag) != MPI_SUCCESS || !flag)
      continue;
    const int n = snprintf(text + used, size - used, "%s%s=%s", used ? ", " : "", key, value);
    used += n > 0 ? (size_t)n : 0;
  }
  if (info != MPI_INFO_NULL) (void)MPI_Info_free(&info); /* a copy; nothing to report */
}
