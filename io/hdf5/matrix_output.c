/* Output datasets made (h5_matrix.h): the file, the dataset's creation
 * properties (storage, fill value, creation order as netCDF-C keeps it),
 * the dataset itself, or only its plan (--plan). */
#include <stdio.h>
#include <stdlib.h>

#include "h5_matrix.h"
#include "mpi_hints.h"
#include "mpi_io_name.h"

/* The fill value `from`'s creator chose, if any, into dcpl: readers of
 * the output see it as the dataset's, though every element is written. */
static int copy_fill_value(const xio_matrix *from, hid_t dcpl) {
  if (!from) return 0;
  hid_t source = H5Dget_create_plist(from->dset);
  H5D_fill_value_t status = H5D_FILL_VALUE_ERROR;
  int rc = source < 0 || H5Pfill_value_defined(source, &status) < 0 ? -1 : 0;
  if (rc == 0 && status == H5D_FILL_VALUE_USER_DEFINED) {
    void *value = calloc(1, from->elem_size);
    rc = !value || H5Pget_fill_value(source, from->type, value) < 0 ||
                 H5Pset_fill_value(dcpl, from->type, value) < 0
             ? -1
             : 0;
    free(value);
  }
  if (source >= 0 && H5Pclose(source) < 0) rc = -1;
  return rc;
}

/* The creation properties of an output dataset (xio_create_output). */
static int output_dataset_properties(xio_matrix *m, const xio_matrix *like,
                                     const xio_storage *storage, const xio_shape *shape, hid_t type,
                                     const char *shown, hid_t lcpl, hid_t dcpl, xio_error *err) {
  const unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
  if (lcpl < 0 || dcpl < 0 || H5Pset_attr_creation_order(dcpl, order) < 0 ||
      H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 || copy_fill_value(like, dcpl) < 0)
    return xio_fail_h5(err, "cannot set up the output's properties");
  m->shape = *shape;
  m->type_size = H5Tget_size(type);
  const xio_storage_like source = like ? xio_matrix_storage_like(like) : (xio_storage_like){0};
  if (xio_storage_apply(like ? &source : NULL, storage, shape, H5Tget_size(type), dcpl, shown, err))
    return -1;
  return xio_matrix_take_storage(m, dcpl, shown, err);
}

/* Collective: m's dataset, made in its open file with those properties. */
static int make_output_dataset(xio_matrix *m, const char *shown, const char *dataset, hid_t type,
                               const xio_shape *shape, hid_t lcpl, hid_t dcpl, xio_error *err) {
  int rc = 0;
  snprintf(m->dataset, sizeof m->dataset, "%s%s", dataset[0] == '/' ? "" : "/", dataset);
  hsize_t dims[XIO_MAX_DIMS], maxdims[XIO_MAX_DIMS];
  for (int i = 0; i < shape->ndims; i++) {
    dims[i] = (hsize_t)shape->dims[i];
    maxdims[i] = m->chunked && (shape->unlimited >> i & 1u) ? H5S_UNLIMITED : dims[i];
  }
  hid_t space = H5Screate_simple(shape->ndims, dims, maxdims);
  m->type = H5Tcopy(type);
  if (space >= 0 && m->type >= 0)
    m->dset = H5Dcreate2(m->file, m->dataset, m->type, space, lcpl, dcpl, H5P_DEFAULT);
  if (m->dset < 0) rc = xio_fail_h5(err, "%s: cannot create dataset %s", shown, m->dataset);
  m->type_size = H5Tget_size(type);
  if (m->type_size == 0 && rc == 0) rc = xio_fail_h5(err, "%s: cannot size its datatype", shown);
  if (rc == 0) rc = xio_matrix_fold(m, shape->lead, shape->split, shape->trail, err);
  xio_release(H5Sclose, &space, &rc, err);
  return rc;
}

int xio_create_file(MPI_Comm comm, const char *path, const char *shown, xio_matrix *m,
                    xio_error *err) {
  xio_matrix_init(m, comm);
  int rc = 0;
  hid_t fapl = xio_file_access(comm), fcpl = H5Pcreate(H5P_FILE_CREATE);
  /* The 1.8 format keeps attributes larger than 64 KiB (dense storage).
   * Objects of 1 MiB or more (the datasets) start on a 4 KiB page, so that
   * raw writes of whole pages share no page with the file's metadata
   * (2 ranks, 2 GiB on the 2-core VM: 7.5 s against 9.2 s).  Link and
   * attribute creation order are tracked, as netCDF-C does: without it
   * netCDF-C opens the file read-only ("NetCDF: Can't write file"). */
  const unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
  if (fapl < 0 || fcpl < 0 || H5Pset_link_creation_order(fcpl, order) < 0 ||
      H5Pset_attr_creation_order(fcpl, order) < 0 ||
      H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0 ||
      H5Pset_alignment(fapl, 1 << 20, 4096) < 0)
    rc = xio_fail_h5(err, "cannot set up the output file's properties");
  char name[4096];
  if (rc == 0) rc = xio_mpi_io_name(comm, path, shown, name, sizeof name, err);
  if (rc == 0) {
    m->file = H5Fcreate(name, H5F_ACC_EXCL, fcpl, fapl);
    if (m->file < 0) rc = xio_fail_h5(err, "%s: cannot create", shown);
  }
  xio_release(H5Pclose, &fapl, &rc, err);
  xio_release(H5Pclose, &fcpl, &rc, err);
  return xio_agree(comm, rc, err);
}

int xio_create_output(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                      hid_t type, const xio_matrix *like, const xio_storage *storage,
                      const xio_shape *shape, xio_matrix *m, xio_error *err) {
  return xio_create_file(comm, path, shown, m, err) ||
                 xio_create_dataset(m, shown, dataset, type, like, storage, shape, err)
             ? -1
             : 0;
}

int xio_plan_dataset(const xio_matrix *like, const xio_storage *storage, const xio_shape *shape,
                     hid_t type, const xio_matrix *from, xio_matrix *m, char *text, size_t size,
                     xio_error *err) {
  xio_matrix_init(m, MPI_COMM_NULL);
  snprintf(m->dataset, sizeof m->dataset, "%s", from->dataset);
  m->type_size = H5Tget_size(type);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  int rc = output_dataset_properties(m, like, storage, shape, type, m->dataset, lcpl, dcpl, err);
  if (rc == 0) xio_describe_dcpl(dcpl, text, size);
  if (rc == 0) rc = xio_matrix_fold_as_transpose(m, from, err);
  xio_release(H5Pclose, &lcpl, &rc, err);
  xio_release(H5Pclose, &dcpl, &rc, err);
  return rc;
}


int xio_create_dataset(xio_matrix *m, const char *shown, const char *dataset, hid_t type,
                       const xio_matrix *like, const xio_storage *storage, const xio_shape *shape,
                       xio_error *err) {
  int rc = xio_matrix_drop_dataset(m, err);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (rc == 0)
    rc = output_dataset_properties(m, like, storage, shape, type, shown, lcpl, dcpl, err);
  if (xio_agree(m->comm, rc, err) == 0)
    rc = make_output_dataset(m, shown, dataset, type, shape, lcpl, dcpl, err);
  else
    rc = -1;
  xio_release(H5Pclose, &lcpl, &rc, err);
  xio_release(H5Pclose, &dcpl, &rc, err);
  return xio_agree(m->comm, rc, err);
}
