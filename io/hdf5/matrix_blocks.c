/* Blocks of a folded dataset read and written (h5_matrix.h): through
 * HDF5's collective MPI-IO as hyperslabs, through the chunk codec where it
 * holds the chunks, or from a netCDF-3 input's own file. */
#include <stdlib.h>
#include <string.h>

#include "chunk_reader.h"
#include "h5_matrix.h"
#include "netcdf3.h"

enum { MAX_SLABS = 2 * XIO_MAX_DIMS };

typedef struct {
  int count;
  hsize_t start[MAX_SLABS][XIO_MAX_DIMS], size[MAX_SLABS][XIO_MAX_DIMS];
} slab_list;

/* Appends to `list` the hyperslabs of axes [a, b) of dims holding their
 * row-major positions [first, end) (first < end), axes before a set as in
 * start and size: a partial run of the first axis, whole ones, a partial
 * one, each of the rest recursively; at most 2 (b - a) - 1 of them. */
static void range_slabs(const int64_t *dims, int a, int b, int64_t first, int64_t end,
                        hsize_t *start, hsize_t *size, slab_list *list) {
  if (a == b) {
    memcpy(list->start[list->count], start, sizeof list->start[0]);
    memcpy(list->size[list->count++], size, sizeof list->size[0]);
    return;
  }
  const int64_t inner = xio_dims_product(dims, a + 1, b);
  int64_t from = first / inner;
  const int64_t to = end / inner, head = first % inner, tail = end % inner;
  if (from == to) { /* within one position of axis a */
    start[a] = (hsize_t)from, size[a] = 1;
    range_slabs(dims, a + 1, b, head, tail, start, size, list);
    return;
  }
  if (head) {
    start[a] = (hsize_t)from++, size[a] = 1;
    range_slabs(dims, a + 1, b, head, inner, start, size, list);
  }
  if (to > from) {
    start[a] = (hsize_t)from, size[a] = (hsize_t)(to - from);
    for (int i = a + 1; i < b; i++) start[i] = 0, size[i] = (hsize_t)dims[i];
    range_slabs(dims, b, b, 0, 1, start, size, list);
  }
  if (tail) {
    start[a] = (hsize_t)to, size[a] = 1;
    range_slabs(dims, a + 1, b, 0, tail, start, size, list);
  }
}

/* Selects in fspace the folded block [row, row + nrows) x [col, col +
 * ncols): the union of the row groups' slabs times the column groups'
 * (one hyperslab for a 2-D dataset).  HDF5 moves a selection's elements in
 * the dataspace's row-major order, which is the block's own.  *slabs says
 * how many; `size` is the last one's shape. */
static herr_t select_block(const xio_matrix *m, hid_t fspace, int64_t row, int64_t nrows,
                           int64_t col, int64_t ncols, int *slabs, hsize_t *size) {
  const xio_shape *s = &m->shape;
  hsize_t start[XIO_MAX_DIMS] = {0};
  for (int i = 0; i < s->ndims; i++) size[i] = i < s->trail ? 0 : (hsize_t)s->dims[i];
  slab_list rows = {0}, cols = {0};
  range_slabs(s->dims, 0, s->split, row, row + nrows, start, size, &rows);
  range_slabs(s->dims, s->split, s->trail, col, col + ncols, start, size, &cols);
  herr_t status = 0;
  for (int r = 0; r < rows.count && status >= 0; r++)
    for (int c = 0; c < cols.count && status >= 0; c++) {
      memcpy(start, rows.start[r], sizeof start);
      memcpy(size, rows.size[r], sizeof rows.size[r]);
      memcpy(start + s->split, cols.start[c] + s->split,
             sizeof start[0] * (size_t)(s->trail - s->split));
      memcpy(size + s->split, cols.size[c] + s->split,
             sizeof size[0] * (size_t)(s->trail - s->split));
      status = H5Sselect_hyperslab(fspace, r + c ? H5S_SELECT_OR : H5S_SELECT_SET, start, NULL,
                                   size, NULL);
    }
  *slabs = rows.count * cols.count;
  return status;
}

/* Local, but for the collective transfers HDF5 makes (every rank calls
 * as often).  The block as one hyperslab through HDF5, agreed by the
 * caller. */
static int transfer_hyperslab(const xio_matrix *m, int writing, int64_t row, int64_t nrows,
                              int64_t col, int64_t ncols, void *buf, xio_error *err) {
  int rc = 0;
  hid_t fspace = H5Dget_space(m->dset), mspace = H5I_INVALID_HID,
        dxpl = H5Pcreate(H5P_DATASET_XFER);
  char dummy = 0; /* HDF5 wants a buffer even for an empty selection */
  /* Chunks never written read as the fill value; HDF5 1.10's collective
   * read fails (MPI_ERR_TYPE) or deadlocks when a rank's selection holds
   * only such chunks, so chunked datasets are read independently, as is a
   * file one rank reads alone (through HDF5's POSIX driver, which has no
   * collective transfers: h5_matrix.c).  Every rank still makes the call,
   * and the result is agreed below. */
  const H5FD_mpio_xfer_t mode = !writing && (m->chunked || m->comm == MPI_COMM_SELF)
                                    ? H5FD_MPIO_INDEPENDENT
                                    : H5FD_MPIO_COLLECTIVE;
  if (fspace < 0 || dxpl < 0 || H5Pset_dxpl_mpio(dxpl, mode) < 0) {
    rc = xio_fail_h5(err, "cannot set up a collective transfer");
  } else if (nrows > 0 && ncols > 0) {
    /* One hyperslab is given a memory space of its own shape: where the
     * shapes differ, HDF5 maps a chunked selection element by element (a
     * 308 MiB read-back took 13 s against 2). */
    const hsize_t elements =
        (hsize_t)nrows * (hsize_t)ncols * (hsize_t)(m->elem_size / m->type_size);
    hsize_t size[XIO_MAX_DIMS];
    int slabs = 0;
    if (select_block(m, fspace, row, nrows, col, ncols, &slabs, size) < 0) slabs = -1;
    mspace = slabs == 1 ? H5Screate_simple(m->shape.ndims, size, NULL)
                        : H5Screate_simple(1, &elements, NULL);
    if (mspace < 0 || slabs < 0)
      rc = xio_fail_h5(err, "cannot select rows %lld-%lld, columns %lld-%lld of %s", (long long)row,
                       (long long)(row + nrows - 1), (long long)col, (long long)(col + ncols - 1),
                       m->dataset);
  } else {
    const hsize_t one = 1;
    mspace = H5Screate_simple(1, &one, NULL);
    buf = &dummy;
    if (mspace < 0 || H5Sselect_none(mspace) < 0 || H5Sselect_none(fspace) < 0)
      rc = xio_fail_h5(err, "cannot set up an empty selection");
  }
  /* Every rank enters the collective call, even after a local failure
   * (with nothing selected), so no rank waits inside MPI-IO forever.  Only
   * where even that cannot be set up does this rank stay out. */
  if (rc != 0 && fspace >= 0 && mspace >= 0) {
    buf = &dummy;
    if (H5Sselect_none(fspace) < 0 || H5Sselect_none(mspace) < 0) {
      xio_release(H5Sclose, &fspace, &rc, err);
      xio_release(H5Sclose, &mspace, &rc, err);
    }
  }
  if (fspace >= 0 && mspace >= 0 && dxpl >= 0) {
    herr_t status = writing ? H5Dwrite(m->dset, m->type, mspace, fspace, dxpl, buf)
                            : H5Dread(m->dset, m->type, mspace, fspace, dxpl, buf);
    if (status < 0 && rc == 0)
      rc = xio_fail_h5(err, "%s %s failed", writing ? "writing" : "reading", m->dataset);
  }
  xio_release(H5Sclose, &mspace, &rc, err);
  xio_release(H5Sclose, &fspace, &rc, err);
  xio_release(H5Pclose, &dxpl, &rc, err);
  return rc;
}

/* Chunks one read through HDF5 touches at most: HDF5 1.10 keeps a few
 * KiB per chunk a read touches until it ends (7300 chunks of a station
 * series took 50 MiB beside a 28 MiB budget). */
#define MOST_CHUNKS_A_READ 512

/* Local (chunked datasets are read independently).  The block read in
 * groups of whole rows of chunks, MOST_CHUNKS_A_READ at most in each
 * where a row of chunks holds fewer. */
static int read_chunked(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                        void *buf, xio_error *err) {
  const int64_t unit = m->chunk_rows > 0 ? m->chunk_rows : 1;
  const int64_t wide = m->chunk_cols > 0 ? m->chunk_cols : ncols;
  const int64_t across = (ncols + wide - 1) / wide + 1; /* chunks a row touches, at most */
  const int64_t group = unit * (across < MOST_CHUNKS_A_READ ? MOST_CHUNKS_A_READ / across : 1);
  const size_t row_bytes = (size_t)ncols * m->elem_size;
  for (int64_t at = row; at < row + nrows;) {
    const int64_t end =
        (at / group + 1) * group < row + nrows ? (at / group + 1) * group : row + nrows;
    if (transfer_hyperslab(m, 0, at, end - at, col, ncols,
                           (unsigned char *)buf + (size_t)(at - row) * row_bytes, err))
      return -1;
    at = end;
  }
  return 0;
}

static int transfer_block(const xio_matrix *m, int writing, int64_t row, int64_t nrows, int64_t col,
                          int64_t ncols, void *buf, xio_error *err) {
  /* A dataset without elements has no storage that MPI-IO could address;
   * the shape is the same on every rank, so all of them return here. */
  if (m->rows == 0 || m->cols == 0) return 0;
  if (m->one_writer) return xio_fail(err, "internal: %s is held by one writer", m->dataset);
  if (!writing && m->source)
    return xio_agree(m->comm,
                     m->source->read(m->source->state, m, row, nrows, col, ncols, buf, err), err);
  if (!writing && m->netcdf3)
    return xio_agree(
        m->comm,
        xio_nc3_source_read(m->netcdf3, m->cols, m->elem_size, row, nrows, col, ncols, buf, err),
        err);
  const int raw = !writing && m->chunk_index
                      ? xio_chunk_index_build(m->chunk_index, m->comm, m->file, m->dset, &m->shape,
                                              m->type_size, m->dataset, err)
                      : 0;
  if (raw < 0) return -1;
  if (raw)
    return xio_agree(m->comm,
                     xio_chunk_index_read(m->chunk_index, &m->shape, m->elem_size, row, nrows, col,
                                          ncols, buf, err),
                     err);
  const int rc = !writing && m->chunked && nrows > 0 && ncols > 0
                     ? read_chunked(m, row, nrows, col, ncols, buf, err)
                     : transfer_hyperslab(m, writing, row, nrows, col, ncols, buf, err);
  return xio_agree(m->comm, rc, err);
}

int xio_read_block(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                   void *buf, xio_error *err) {
  return transfer_block(m, 0, row, nrows, col, ncols, buf, err);
}

int xio_reads_alone(const xio_matrix *m) {
  if (m->source) return m->source->alone;
  return m->chunk_index && !m->netcdf3 && xio_chunk_index_ready(m->chunk_index);
}

int xio_prepare_reads(const xio_matrix *m, xio_error *err) {
  return m->source && m->source->prepare ? m->source->prepare(m->source, m, err) : 0;
}

void xio_read_ahead(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols) {
  if (m->chunk_index)
    xio_chunk_index_ask_ahead(m->chunk_index, &m->shape, m->elem_size, row, nrows, col, ncols);
}

int xio_write_block(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                    const void *buf, xio_error *err) {
  return transfer_block(m, 1, row, nrows, col, ncols, (void *)buf, err);
}
