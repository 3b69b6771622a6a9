/* LD_PRELOAD shim for the tests of store views (zarr_view_check.h):
 * nc_put_vara, the one call xpose writes a view's values with, given a
 * fault by NC_PUT_FAULT:
 *   "swap": every value of more than one byte written with its bytes
 *   reversed, as netCDF-C before 4.10.1 writes into a big-endian variable
 *   of a file it opened again (netcdf-c#1802), and here into every one;
 *   "flip": one bit of the first value of every write of more than one
 *   value changed, a fault nothing can undo.
 * With NC_PUT_FAULT_FILE, only in files whose path holds it; with
 * NC_PUT_FAULT_VAR, only into the variable of that name.  Everything else
 * passes through. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netcdf.h>
#include <stdlib.h>
#include <string.h>

typedef int (*put_fn)(int, int, const size_t *, const size_t *, const void *);

int nc_put_vara(int ncid, int varid, const size_t *start, const size_t *count, const void *op) {
  static put_fn real;
  if (!real) real = (put_fn)dlsym(RTLD_NEXT, "nc_put_vara");
  const char *fault = getenv("NC_PUT_FAULT"), *file = getenv("NC_PUT_FAULT_FILE");
  const char *var = getenv("NC_PUT_FAULT_VAR");
  char path[4096] = "", name[NC_MAX_NAME + 1] = "";
  size_t length = 0;
  int ndims = 0;
  nc_type type;
  size_t size = 0, n = 1;
  if (file && (nc_inq_path(ncid, &length, NULL) != NC_NOERR || length >= sizeof path ||
               nc_inq_path(ncid, NULL, path) != NC_NOERR || !strstr(path, file)))
    fault = NULL;
  if (var && (nc_inq_varname(ncid, varid, name) != NC_NOERR || strcmp(name, var) != 0))
    fault = NULL;
  if (!fault || nc_inq_var(ncid, varid, NULL, &type, &ndims, NULL, NULL) != NC_NOERR ||
      nc_inq_type(ncid, type, NULL, &size) != NC_NOERR)
    return real(ncid, varid, start, count, op);
  for (int d = 0; d < ndims; d++) n *= count[d];
  unsigned char *v = malloc(n * size + 1);
  if (!v) return NC_ENOMEM;
  memcpy(v, op, n * size);
  if (strcmp(fault, "swap") == 0 && size > 1)
    for (size_t i = 0; i < n; i++)
      for (size_t b = 0; b < size / 2; b++) {
        const unsigned char t = v[i * size + b];
        v[i * size + b] = v[i * size + size - 1 - b], v[i * size + size - 1 - b] = t;
      }
  if (strcmp(fault, "flip") == 0 && n > 1) v[0] ^= 0x10;
  const int rc = real(ncid, varid, start, count, v);
  free(v);
  return rc;
}
