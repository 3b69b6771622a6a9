#define _POSIX_C_SOURCE 200809L /* pread, posix_fadvise, fdatasync */
#include "raw_dataset.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "checksum.h"
#include "file_at.h"

/* Whole rows move in pieces of about this many bytes, each summed right
 * after it is read or before it is written: requests as large as dd's
 * (16 GiB on the H100 machine, one GPU rank: 1 MiB pieces read in 12.4 s,
 * 16 MiB ones in 10.3 s, the run 30.5 s -> 26.1 s). */
#define PIECE_BYTES ((size_t)16 << 20)

int xio_raw_usable(const xio_matrix *m, uint64_t *base) {
  *base = 0;
  if (m->chunked || m->netcdf3 || m->source || m->rows == 0 || m->cols == 0) return 0;
  hid_t dcpl = H5Dget_create_plist(m->dset);
  if (dcpl < 0) return 0;
  const int external = H5Pget_external_count(dcpl);
  (void)H5Pclose(dcpl); /* only read */
  if (external != 0) return 0;
  const haddr_t offset = H5Dget_offset(m->dset);
  const hsize_t stored = H5Dget_storage_size(m->dset);
  if (offset == HADDR_UNDEF ||
      stored != (hsize_t)m->rows * (hsize_t)m->cols * (hsize_t)m->elem_size)
    return 0;
  *base = (uint64_t)offset;
  return 1;
}

int xio_raw_open(const xio_matrix *m, uint64_t base, int writable, xio_raw_dataset *raw,
                 xio_error *err) {
  memset(raw, 0, sizeof *raw);
  raw->fd = -1;
  raw->base = base;
  raw->rows = m->rows;
  raw->cols = m->cols;
  raw->items = m->items;
  raw->elem_size = m->elem_size;
  char path[4096];
  const ssize_t n = H5Fget_name(m->file, path, sizeof path);
  if (n <= 0 || (size_t)n >= sizeof path)
    return xio_fail_h5(err, "%s: cannot find its file's name", m->dataset);
  snprintf(raw->shown, sizeof raw->shown, "%.400s:%.100s", path, m->dataset);
  raw->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (raw->fd < 0) return xio_fail(err, "%s: cannot open: %s", raw->shown, strerror(errno));
  if (!writable) /* read once, in order: read ahead */
    (void)posix_fadvise(raw->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return 0;
}

void xio_raw_close(xio_raw_dataset *raw) {
  if (raw->fd >= 0) (void)close(raw->fd); /* synced before, where it matters */
  raw->fd = -1;
}

static void add_sum(const xio_raw_dataset *raw, const xio_block_sum *sum, const void *rows,
                    int64_t first_row, int64_t nrows, int64_t ncols) {
  if (!sum) return;
  *sum->sum += xio_checksum_block(rows, nrows, ncols, raw->elem_size,
                                  sum->first_key + (uint64_t)first_row * sum->row_step,
                                  sum->row_step, sum->col_step);
}

/* Whole rows are one range of the file, moved in pieces of several rows;
 * otherwise each row's run is a piece. */
static int transfer_block(const xio_raw_dataset *raw, int writing, int64_t row, int64_t nrows,
                          int64_t col, int64_t ncols, unsigned char *buf, const xio_block_sum *sum,
                          xio_error *err) {
  const size_t es = raw->elem_size, run = (size_t)ncols * es;
  if (nrows <= 0 || ncols <= 0) return 0;
  const int64_t rows_per_piece =
      ncols == raw->cols && run < PIECE_BYTES ? (int64_t)(PIECE_BYTES / run) : 1;
  for (int64_t i = 0; i < nrows; i += rows_per_piece) {
    const int64_t n = nrows - i < rows_per_piece ? nrows - i : rows_per_piece;
    unsigned char *piece = buf + (size_t)i * run;
    const uint64_t offset =
        raw->base + ((uint64_t)(row + i) * (uint64_t)raw->cols + (uint64_t)col) * es;
    if (writing) add_sum(raw, sum, piece, i, n, ncols);
    if ((writing ? xio_write_at(raw->fd, piece, (size_t)n * run, offset, raw->shown, err)
                 : xio_read_at(raw->fd, piece, (size_t)n * run, offset, raw->shown, err)))
      return -1;
    if (!writing) add_sum(raw, sum, piece, i, n, ncols);
  }
  return 0;
}

void xio_raw_will_read(const xio_raw_dataset *raw, int64_t row, int64_t nrows, int64_t col,
                       int64_t ncols) {
  const size_t es = raw->elem_size;
  if (ncols <= 0 || ncols == raw->cols) return; /* whole rows: read-ahead's */
  for (int64_t i = 0; i < nrows; i++)
    (void)posix_fadvise(
        raw->fd,
        (off_t)(raw->base + ((uint64_t)(row + i) * (uint64_t)raw->cols + (uint64_t)col) * es),
        (off_t)((size_t)ncols * es), POSIX_FADV_WILLNEED);
}

int xio_raw_read(const xio_raw_dataset *raw, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                 void *buf, const xio_block_sum *sum, xio_error *err) {
  return transfer_block(raw, 0, row, nrows, col, ncols, buf, sum, err);
}

int xio_raw_write(const xio_raw_dataset *raw, int64_t row, int64_t nrows, int64_t col,
                  int64_t ncols, const void *buf, const xio_block_sum *sum, xio_error *err) {
  return transfer_block(raw, 1, row, nrows, col, ncols, (unsigned char *)buf, sum, err);
}

int xio_raw_sync(const xio_raw_dataset *raw, xio_error *err) {
  if (fdatasync(raw->fd) != 0)
    return xio_fail(err, "syncing %s to storage failed: %s", raw->shown, strerror(errno));
  return 0;
}

int xio_raw_read_elements(const xio_raw_dataset *raw, uint64_t first, uint64_t count, void *buf,
                          xio_error *err) {
  const size_t es = raw->elem_size;
  return xio_read_at(raw->fd, buf, (size_t)(count * es), raw->base + first * es, raw->shown, err);
}

uint64_t xio_raw_elements_sum(const xio_raw_dataset *raw, const xio_shape *transposed_from,
                              uint64_t first, uint64_t count, const void *buf) {
  const size_t es = raw->elem_size;
  const uint64_t cols = (uint64_t)raw->cols, rows = (uint64_t)raw->rows;
  const uint64_t in_cols = rows / (uint64_t)raw->items; /* transposed: of A's items */
  const unsigned char *bytes = buf;
  uint64_t sum = 0;
  for (uint64_t k = 0; k < count;) { /* the runs within rows */
    const uint64_t r = (first + k) / cols, c = (first + k) % cols;
    const uint64_t len = cols - c < count - k ? cols - c : count - k;
    sum +=
        transposed_from
            ? xio_checksum_block(bytes + k * es, 1, (int64_t)len, es,
                                 xio_output_first_key(
                                     xio_shape_item_source(transposed_from, (int64_t)(r / in_cols)),
                                     (int64_t)r, (int64_t)c, (int64_t)in_cols, (int64_t)cols),
                                 1, in_cols)
            : xio_checksum_block(bytes + k * es, 1, (int64_t)len, es, r * cols + c, cols, 1);
    k += len;
  }
  return sum;
}
