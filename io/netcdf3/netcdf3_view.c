#include "netcdf3_view.h"

#include <netcdf.h>
#include <stdlib.h>
#include <string.h>

#include "nc_copy.h"
#include "netcdf3.h"

int xio_nc3_view_create(const char *input, const char *view, xio_error *err) {
  int in = -1, out = -1, unlimited = -1;
  size_t records = 0;
  int rc = xio_nc3_header_check(input, err);
  if (rc == 0) rc = xio_nc_failed(nc_open(input, NC_NOWRITE, &in), "cannot open", input, err);
  if (rc == 0)
    rc = xio_nc_failed(nc_create(view, NC_NETCDF4 | NC_CLOBBER, &out),
                       "cannot make its netCDF-4 view", view, err);
  if (rc == 0) rc = xio_nc_define_all(in, out, -1, input, err);
  if (rc == 0 && nc_inq_unlimdim(in, &unlimited) == NC_NOERR && unlimited >= 0)
    rc = xio_nc_failed(nc_inq_dimlen(in, unlimited, &records), "reading its records", input, err);
  if (out >= 0 && nc_close(out) != NC_NOERR && rc == 0)
    rc = xio_fail(err, "%s: cannot write its netCDF-4 view %s", input, view);
  if (in >= 0) (void)nc_close(in); /* only read */
  if (rc == 0 && records > 0) rc = xio_nc_extend_records(view, records, input, err);
  return rc;
}

int xio_nc3_view_fill(const char *input, const char *view, const xio_path_list *skip,
                      uint64_t piece_bytes, xio_error *err) {
  int in = -1, out = -1, nvars = 0;
  int rc = xio_nc3_header_check(input, err);
  if (rc == 0) rc = xio_nc_failed(nc_open(input, NC_NOWRITE, &in), "cannot open", input, err);
  if (rc == 0) rc = xio_nc_failed(nc_open(view, NC_WRITE, &out), "cannot open its view", view, err);
  if (rc == 0) rc = xio_nc_failed(nc_inq_nvars(in, &nvars), "reading its header", input, err);
  for (int v = 0; rc == 0 && v < nvars; v++) {
    char name[NC_MAX_NAME + 1];
    rc = xio_nc_failed(nc_inq_varname(in, v, name), "reading a variable", input, err);
    if (rc == 0 && xio_path_index(skip, name) < 0)
      rc = xio_nc_copy_values(in, out, v, 0, piece_bytes, input, err);
  }
  if (out >= 0 && nc_close(out) != NC_NOERR && rc == 0)
    rc = xio_fail(err, "%s: cannot write its netCDF-4 view %s", input, view);
  if (in >= 0) (void)nc_close(in); /* only read */
  return rc;
}
