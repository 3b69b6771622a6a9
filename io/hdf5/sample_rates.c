/* Sampled rates (sample_rates.h). */
#include "sample_rates.h"

#include <mpi.h>
#include <stdlib.h>

enum { SAMPLE_BYTES = 8 << 20 };

/* Rows and columns of in's first item, whole chunk units, about
 * SAMPLE_BYTES where it has them. */
static void sample_block(const xio_matrix *in, int64_t *rows, int64_t *cols) {
  const int64_t unit_rows = in->chunked ? in->chunk_rows : 1,
                unit_cols = in->chunked ? in->chunk_cols : 1;
  const int64_t item_rows = xio_item_rows(in), es = (int64_t)in->elem_size;
  *cols = in->cols;
  if (*cols * es * unit_rows > SAMPLE_BYTES) { /* long rows: part of them */
    *cols = (SAMPLE_BYTES / (es * unit_rows) + unit_cols - 1) / unit_cols * unit_cols;
    if (*cols > in->cols) *cols = in->cols;
  }
  *rows = *cols > 0 ? (SAMPLE_BYTES / (*cols * es) + unit_rows - 1) / unit_rows * unit_rows : 0;
  if (*rows > item_rows) *rows = item_rows;
}

/* The sample (`bytes` of it in buf) written through the filters the
 * output's dcpl has, in chunks of its size, into a file in memory:
 * seconds, or -1. */
static double filter_sample(const xio_matrix *in, hid_t dcpl, const void *buf, uint64_t bytes) {
  hsize_t chunk[XIO_MAX_DIMS], elements = 1;
  const int ndims = H5Pget_chunk(dcpl, XIO_MAX_DIMS, chunk);
  for (int i = 0; i < ndims; i++) elements *= chunk[i];
  const hsize_t count = bytes / in->type_size;
  if (elements > count) elements = count;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file = H5I_INVALID_HID, space = H5I_INVALID_HID,
        dset = H5I_INVALID_HID;
  double seconds = -1;
  if (fapl >= 0 && H5Pset_fapl_core(fapl, (size_t)16 << 20, 0) >= 0 &&
      H5Pset_chunk(dcpl, 1, &elements) >= 0 && /* the same filters, one axis */
      (file = H5Fcreate("xpose-sample", H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0 &&
      (space = H5Screate_simple(1, &count, NULL)) >= 0 &&
      (dset = H5Dcreate2(file, "sample", in->type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0) {
    const double began = MPI_Wtime();
    if (H5Dwrite(dset, in->type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0 && H5Dclose(dset) >= 0)
      seconds = MPI_Wtime() - began;
    else
      (void)H5Dclose(dset);
  }
  if (space >= 0) H5Sclose(space);
  if (file >= 0) H5Fclose(file);
  if (fapl >= 0) H5Pclose(fapl);
  return seconds;
}

int xio_sample_rates_measure(const xio_matrix *in, const xio_storage *storage,
                             const xio_shape *out_shape, xio_sample_rates *rates, xio_error *err) {
  *rates = (xio_sample_rates){0};
  int64_t rows = 0, cols = 0;
  sample_block(in, &rows, &cols);
  const uint64_t bytes = (uint64_t)rows * (uint64_t)cols * in->elem_size;
  void *buf = bytes ? malloc(bytes) : NULL;
  const xio_storage_like like = xio_matrix_storage_like(in);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  int rc = dcpl < 0 ? xio_fail_h5(err, "cannot measure a sample of %s", in->dataset) : 0;
  if (rc == 0 && bytes && !buf) rc = xio_fail(err, "out of memory for a sample of %s", in->dataset);
  if (rc == 0)
    rc = xio_storage_apply(&like, storage, out_shape, in->type_size, dcpl, in->dataset, err);
  /* every rank reads the same block: the read is collective */
  const double began = MPI_Wtime();
  if (xio_agree(in->comm, rc, err) ||
      xio_read_block(in, 0, buf ? rows : 0, 0, buf ? cols : 0, buf, err)) {
    free(buf);
    if (dcpl >= 0) H5Pclose(dcpl);
    return -1;
  }
  const double read = MPI_Wtime() - began;
  const int filters = buf && H5Pget_layout(dcpl) == H5D_CHUNKED ? H5Pget_nfilters(dcpl) : 0;
  const double filtered = filters > 0 ? filter_sample(in, dcpl, buf, bytes) : 0;
  if (filtered < 0) rc = xio_fail_h5(err, "cannot compress a sample of %s", in->dataset);
  if (rc == 0 && buf) {
    rates->bytes = bytes;
    rates->read_rate = read > 0 ? (double)bytes / read : 0;
    rates->filter_rate = filtered > 0 ? (double)bytes / filtered : 0;
  }
  free(buf);
  if (dcpl >= 0) H5Pclose(dcpl);
  return xio_agree(in->comm, rc, err);
}
