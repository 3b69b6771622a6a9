#include "h5_verify.h"

#include <stdio.h>
#include <stdlib.h>

#include "checksum.h"
#include "chunk_reader.h"
#include "host_memory.h"
#include "io_thread.h"
#include "pass_geometry.h"
#include "raw_dataset.h"
#include "slab_walk.h"

/* Collective: 1 (XIO_STOPPED) when any rank was asked to stop. */
static int stop_agreed(MPI_Comm comm, int (*stop_requested)(void), xio_error *err) {
  if (!stop_requested) return 0;
  int stop = stop_requested(), any = 0;
  if (XIO_MPICHECK(MPI_Allreduce(&stop, &any, 1, MPI_INT, MPI_MAX, comm), err)) return -1;
  return any ? XIO_STOPPED : 0;
}

/* A rank reads its share of a dataset back raw as one sequential stream
 * of requests this large, as dd reads, each on a helper thread while this
 * one sums the piece before: the fewer streams, the faster (16 GiB on the
 * H100 machine, one rank: four threads on four quarters 12.6 s, on
 * interleaved pieces 13.0 s, one thread reading and summing in turn
 * 11.5 s, dd 8.85 s; 16 ranks: 64 streams 12.9 s, 16 streams 12.2 s). */
#define RAW_PIECE_BYTES ((size_t)16 << 20)

typedef struct {
  const xio_raw_dataset *raw;
  uint64_t first, count;
  void *buf;
  xio_error err;
} piece_read;

static int read_piece(void *arg) {
  piece_read *r = arg;
  return xio_raw_read_elements(r->raw, r->first, r->count, r->buf, &r->err);
}

/* The piece from element `at` on, up to `end`, into buf. */
static piece_read piece_at(const xio_raw_dataset *raw, uint64_t at, uint64_t end, void *buf) {
  const uint64_t per = RAW_PIECE_BYTES / raw->elem_size; /* at least 1: checksum_raw */
  return (piece_read){raw, at, end - at < per ? end - at : per, buf, {""}};
}

/* Local.  Elements [first, first + count) of raw summed into *sum, read
 * into two buffers in turn: 0, XIO_STOPPED or -1. */
static int sum_stream(const xio_raw_dataset *raw, const xio_shape *transposed_from, uint64_t first,
                      uint64_t count, unsigned char *bufs[2], int (*stop_requested)(void),
                      uint64_t *sum, xio_error *err) {
  const uint64_t end = first + count;
  xio_io_thread reader;
  xio_io_thread_start(&reader, 0);
  piece_read pieces[2] = {piece_at(raw, first, end, bufs[0])};
  xio_io_thread_post(&reader, read_piece, &pieces[0]);
  int rc = 0;
  for (int i = 0;; i ^= 1) {
    const piece_read *now = &pieces[i];
    if (xio_io_thread_wait(&reader)) {
      *err = now->err;
      rc = -1;
      break;
    }
    const uint64_t next = now->first + now->count;
    if (next < end) {
      pieces[i ^ 1] = piece_at(raw, next, end, bufs[i ^ 1]);
      xio_io_thread_post(&reader, read_piece, &pieces[i ^ 1]);
    }
    *sum += xio_raw_elements_sum(raw, transposed_from, now->first, now->count, now->buf);
    if (next >= end) break;
    if (stop_requested && stop_requested()) {
      (void)xio_io_thread_wait(&reader);
      rc = XIO_STOPPED;
      break;
    }
  }
  xio_io_thread_stop(&reader);
  return rc;
}

/* Collective.  Where every rank can read m raw (raw_dataset.h), its share
 * of the elements as one stream: 1 with the sum in *sum (0, or
 * XIO_STOPPED, in *rc); 0 where the slab walk must do it. */
static int checksum_raw(const xio_matrix *m, const xio_shape *transposed_from,
                        uint64_t memory_budget, int (*stop_requested)(void), uint64_t *sum, int *rc,
                        xio_error *err) {
  int rank, nranks, usable, all = 0;
  uint64_t base = 0;
  xio_raw_dataset raw;
  xio_error local;
  usable = xio_raw_usable(m, &base) && memory_budget >= 2 * RAW_PIECE_BYTES &&
           m->elem_size <= RAW_PIECE_BYTES && xio_raw_open(m, base, 0, &raw, &local) == 0;
  if (XIO_MPICHECK(MPI_Comm_rank(m->comm, &rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(m->comm, &nranks), err) ||
      XIO_MPICHECK(MPI_Allreduce(&usable, &all, 1, MPI_INT, MPI_MIN, m->comm), err))
    all = 0;
  if (!all) {
    if (usable) xio_raw_close(&raw);
    return 0;
  }
  int64_t first, count;
  xpose_block_range(m->rows * m->cols, nranks, rank, &first, &count);
  unsigned char *bufs[2] = {malloc(RAW_PIECE_BYTES), malloc(RAW_PIECE_BYTES)};
  uint64_t mine = 0;
  int local_rc = bufs[0] && bufs[1] ? 0 : xio_fail(err, "cannot allocate the read-back buffers");
  if (local_rc == 0 && count > 0)
    local_rc = sum_stream(&raw, transposed_from, (uint64_t)first, (uint64_t)count, bufs,
                          stop_requested, &mine, err);
  free(bufs[0]);
  free(bufs[1]);
  xio_raw_close(&raw);
  int stopped = local_rc == XIO_STOPPED, any_stop = 0;
  *rc = xio_agree(m->comm, local_rc < 0 ? -1 : 0, err);
  if (*rc == 0 &&
      XIO_MPICHECK(MPI_Allreduce(&stopped, &any_stop, 1, MPI_INT, MPI_MAX, m->comm), err))
    *rc = -1;
  if (*rc == 0 && any_stop) *rc = XIO_STOPPED;
  if (*rc == 0)
    *rc = XIO_MPICHECK(MPI_Allreduce(&mine, sum, 1, MPI_UINT64_T, MPI_SUM, m->comm), err);
  return 1;
}

/* The sum of a piece [r0, r0 + nr) x [c0, c0 + nc) of m's matrix, read
 * into buf, by the keys it is summed with. */
typedef uint64_t (*piece_sum_fn)(const xio_matrix *m, const unsigned char *buf, int64_t r0,
                                 int64_t nr, int64_t c0, int64_t nc, const void *keys);

/* A piece sum over a run of the codec's (chunk_reader.h): one row. */
typedef struct {
  const xio_matrix *m;
  piece_sum_fn piece_sum;
  const void *keys;
} run_sum;

static uint64_t sum_run(void *arg, const unsigned char *elements, int64_t row, int64_t col,
                        int64_t n) {
  const run_sum *r = arg;
  return r->piece_sum(r->m, elements, row, 1, col, n, r->keys);
}

/* Chunks a rank sums between two looks for a stop. */
enum { CHUNKS_BETWEEN_STOPS = 256 };

/* Collective.  Where xpose's codec reads m's chunks and they hold whole
 * elements: the sum chunk by chunk, each rank a share of them, each chunk
 * decoded and summed once, on every thread of the rank's pool (blocks of
 * the folded matrix need whole chunks of every axis but the first: a
 * rechunked year of 8760 x 16 x 16 chunks, read in row slabs, inflated
 * each chunk 34 times).  1 with *rc (0, XIO_STOPPED or -1); 0 where the
 * walk must do it. */
static int checksum_chunks(const xio_matrix *m, int (*stop_requested)(void), piece_sum_fn piece_sum,
                           const void *keys, uint64_t *sum, int *rc, xio_error *err) {
  if (!m->chunk_index) return 0;
  const int usable = xio_chunk_index_build(m->chunk_index, m->comm, m->file, m->dset, &m->shape,
                                           m->type_size, m->dataset, err);
  if (usable < 0) return *rc = -1, 1;
  if (!usable || !xio_chunk_index_whole_elements(m->chunk_index, &m->shape))
    return 0; /* everywhere */
  int rank, nranks;
  if (XIO_MPICHECK(MPI_Comm_rank(m->comm, &rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(m->comm, &nranks), err))
    return *rc = -1, 1;
  const int64_t chunks = xio_chunk_index_chunks(m->chunk_index);
  int64_t first, count, most, none;
  xpose_block_range(chunks, nranks, rank, &first, &count);
  xpose_block_range(chunks, nranks, 0, &none, &most); /* rank 0's share is the largest */
  run_sum r = {m, piece_sum, keys};
  uint64_t mine = 0;
  int local = 0;
  for (int64_t at = 0; at < most; at += CHUNKS_BETWEEN_STOPS) {
    if ((*rc = stop_agreed(m->comm, stop_requested, err)) != 0) return 1;
    const int64_t n = count - at < CHUNKS_BETWEEN_STOPS ? count - at : CHUNKS_BETWEEN_STOPS,
                  left = count - at - n,
        ahead = left < CHUNKS_BETWEEN_STOPS ? left : CHUNKS_BETWEEN_STOPS;
    uint64_t part = 0;
    if (local == 0 && n > 0)
      local = xio_chunk_index_sum(m->chunk_index, &m->shape, first + at, n, ahead, sum_run, &r,
                                  &part, err);
    mine += part;
  }
  *rc = xio_agree(m->comm, local, err);
  if (*rc == 0)
    *rc = XIO_MPICHECK(MPI_Allreduce(&mine, sum, 1, MPI_UINT64_T, MPI_SUM, m->comm), err);
  return 1;
}

/* Bytes of one piece a slab walk reads: larger ones are no faster. */
#define WALK_PIECE_BYTES ((uint64_t)64 << 20)

/* Collective.  The sum of m read in contiguous row slabs (or blocks of
 * whole chunks) of up to WALK_PIECE_BYTES, or chunk by chunk. */
static int walk_checksum(const xio_matrix *m, uint64_t memory_budget, int (*stop_requested)(void),
                         piece_sum_fn piece_sum, const void *keys, uint64_t *sum, xio_error *err) {
  int chunkwise = 0;
  if (checksum_chunks(m, stop_requested, piece_sum, keys, sum, &chunkwise, err)) return chunkwise;
  const size_t es = m->elem_size;
  const uint64_t piece = memory_budget < WALK_PIECE_BYTES ? memory_budget : WALK_PIECE_BYTES;
  /* A chunked dataset in blocks of whole chunks, each read once, a block
   * as large as the budget allows where one chunk's needs it (in row
   * slabs, every slab would decompress every chunk it crosses: a
   * rechunked year's 8760 x 16 x 16 chunks, 201 MB a column of them, 12 s
   * instead of 1). */
  xio_slab_walk walk;
  const int chunks =
      m->chunked ? xio_slab_walk_chunks(m->comm, m->rows, m->cols, es, piece, memory_budget,
                                        m->chunk_rows, m->chunk_cols, &walk, err)
                 : 1;
  if (chunks < 0 || (chunks && xio_slab_walk_init(m->comm, m->rows, m->cols, es, piece, &walk, err)))
    return -1;
  unsigned char *buf = xio_host_alloc((size_t)(walk.piece_rows * walk.piece_cols) * es + 1);
  int rc = buf ? 0 : xio_fail(err, "cannot allocate the verification buffer");
  rc = xio_agree(m->comm, rc, err);
  uint64_t total = 0;
  for (int64_t p = 0; rc == 0 && p < walk.total; p++) {
    if ((rc = stop_agreed(m->comm, stop_requested, err)) != 0) break;
    int64_t r0, nr, c0, nc;
    xio_slab_walk_piece(&walk, p, &r0, &nr, &c0, &nc);
    rc = xio_read_block(m, r0, nr, c0, nc, buf, err);
    if (rc == 0 && nr * nc > 0) total += piece_sum(m, buf, r0, nr, c0, nc, keys);
  }
  free(buf);
  if (rc) return rc;
  return XIO_MPICHECK(MPI_Allreduce(&total, sum, 1, MPI_UINT64_T, MPI_SUM, m->comm), err);
}

/* Keys of m's own positions. */
static uint64_t own_keys_sum(const xio_matrix *m, const unsigned char *buf, int64_t r0, int64_t nr,
                             int64_t c0, int64_t nc, const void *keys) {
  (void)keys;
  return xio_checksum_block(buf, nr, nc, m->elem_size,
                            (uint64_t)r0 * (uint64_t)m->cols + (uint64_t)c0, (uint64_t)m->cols, 1);
}

/* Keys in A of B = A^T, item by item: B's keys step evenly within one.
 * keys: A's shape, as folded when B was written. */
static uint64_t transposed_keys_sum(const xio_matrix *m, const unsigned char *buf, int64_t r0,
                                    int64_t nr, int64_t c0, int64_t nc, const void *keys) {
  const xio_shape *from = keys;
  const int64_t item_rows = xio_item_rows(m);
  uint64_t total = 0;
  for (int64_t r = r0; r < r0 + nr;) {
    const int64_t item_end = (r / item_rows + 1) * item_rows,
                  n = (item_end < r0 + nr ? item_end : r0 + nr) - r;
    total += xio_checksum_block(
        buf + (size_t)((r - r0) * nc) * m->elem_size, n, nc, m->elem_size,
        xio_output_first_key(xio_shape_item_source(from, r / item_rows), r, c0, item_rows, m->cols),
        1, (uint64_t)item_rows);
    r += n;
  }
  return total;
}

int xio_checksum_matrix(const xio_matrix *m, const xio_shape *transposed_from,
                        uint64_t memory_budget, int (*stop_requested)(void), uint64_t *sum,
                        xio_error *err) {
  int raw_rc = 0;
  if (transposed_from && transposed_from->rechunk) transposed_from = NULL; /* in A's order */
  if (checksum_raw(m, transposed_from, memory_budget, stop_requested, sum, &raw_rc, err))
    return raw_rc;
  return walk_checksum(m, memory_budget, stop_requested,
                       transposed_from ? transposed_keys_sum : own_keys_sum, transposed_from, sum,
                       err);
}

/* Value keys of a permuted dataset: its axis i is axis source[i] of the
 * dataset its values came from, whose strides (in values) are given. */
typedef struct {
  int ndims;
  int64_t dims[XIO_MAX_DIMS];
  uint64_t step[XIO_MAX_DIMS]; /* the key step of each of m's axes */
} permuted_keys;

/* m folded as rows x (its last axis), one value per element: rows run
 * along its last but one axis with even key steps. */
static uint64_t permuted_keys_sum(const xio_matrix *m, const unsigned char *buf, int64_t r0,
                                  int64_t nr, int64_t c0, int64_t nc, const void *arg) {
  const permuted_keys *k = arg;
  const int n = k->ndims, row_axis = n - 2;
  uint64_t total = 0;
  for (int64_t r = r0; r < r0 + nr;) {
    /* row r's position on the axes before the last, and its first key */
    int64_t rest = r, along = 0;
    uint64_t key = (uint64_t)c0 * k->step[n - 1];
    for (int a = n - 2; a >= 0; a--) {
      const int64_t at = rest % k->dims[a];
      if (a == row_axis) along = at;
      key += (uint64_t)at * k->step[a];
      rest /= k->dims[a];
    }
    const int64_t left = k->dims[row_axis] - along,
                  run = left < r0 + nr - r ? left : r0 + nr - r; /* rows of one run */
    total += xio_checksum_block(buf + (size_t)((r - r0) * nc) * m->elem_size, run, nc, m->elem_size,
                                key, k->step[row_axis], k->step[n - 1]);
    r += run;
  }
  return total;
}

int xio_checksum_values(const xio_matrix *m, const int *source, uint64_t memory_budget,
                        int (*stop_requested)(void), uint64_t *sum, xio_error *err) {
  xio_matrix values = *m; /* the same datasets, refolded: one value per element */
  const int n = m->shape.ndims;
  xio_shape_set_lead_order(&values.shape, 0, NULL); /* m's, for its own fold */
  if (xio_matrix_fold(&values, 0, n - 1, n, err)) return -1;
  if (!source) return xio_checksum_matrix(&values, NULL, memory_budget, stop_requested, sum, err);
  permuted_keys keys = {n, {0}, {0}};
  uint64_t from_step[XIO_MAX_DIMS], step = 1;
  int64_t from_dims[XIO_MAX_DIMS];
  for (int i = 0; i < n; i++) from_dims[source[i]] = m->shape.dims[i];
  for (int a = n - 1; a >= 0; a--) from_step[a] = step, step *= (uint64_t)from_dims[a];
  for (int i = 0; i < n; i++) keys.dims[i] = m->shape.dims[i], keys.step[i] = from_step[source[i]];
  if (values.rows * values.cols == 0) return *sum = 0, 0;
  return walk_checksum(&values, memory_budget, stop_requested, permuted_keys_sum, &keys, sum, err);
}

int xio_checksum_passes(const xio_matrix *out, const xio_shape *in, const xio_progress *done,
                        int (*stop_requested)(void), uint64_t *sum, xio_error *err) {
  int rank, nranks;
  if (XIO_MPICHECK(MPI_Comm_rank(out->comm, &rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(out->comm, &nranks), err))
    return -1;
  const xio_pass_grid *grid = &done->grid;
  const size_t es = out->elem_size;
  int64_t first, largest; /* rank 0's share of a widest block is the largest */
  xpose_block_range(grid->block_cols, nranks, 0, &first, &largest);
  unsigned char *buf = xio_host_alloc((size_t)(largest * grid->block_rows) * es + 1);
  int64_t *order = xio_pass_order(grid);
  int rc = buf && order ? 0 : xio_fail(err, "cannot allocate the buffer to read back passes");
  rc = xio_agree(out->comm, rc, err);
  uint64_t total = 0;
  for (int64_t k = 0; rc == 0 && k < done->passes_done; k++) {
    if ((rc = stop_agreed(out->comm, stop_requested, err)) != 0) break;
    /* this rank's share of the pass's output block, as the pass wrote it */
    const xio_pass_geometry p = xio_pass_geometry_of(grid, in, order[k], rank, nranks, 0, 1);
    const xio_block_sum keys = xio_pass_output_keys(&p, grid->cols, grid->rows, NULL);
    rc = xio_read_block(out, p.write_row, p.write_rows, p.write_col, p.write_cols, buf, err);
    if (rc == 0) /* rechunked, read in the file's order: the exchange's transposed */
      total += xio_checksum_block(buf, p.write_rows, p.write_cols, es, keys.first_key,
                                  p.rechunk ? keys.col_step : keys.row_step,
                                  p.rechunk ? keys.row_step : keys.col_step);
  }
  free(order);
  free(buf);
  if (rc) return rc;
  return XIO_MPICHECK(MPI_Allreduce(&total, sum, 1, MPI_UINT64_T, MPI_SUM, out->comm), err);
}

/* Both verifications: the datatypes first (1 where they differ, said in
 * detail), then the two checksums. */
static int types_differ(const xio_matrix *in, const xio_matrix *out, char *detail,
                        size_t detail_size) {
  if (H5Tequal(in->type, out->type) > 0) return 0;
  snprintf(detail, detail_size, "output datatype differs from the input's");
  return 1;
}

static void compare_sums(uint64_t in_sum, uint64_t out_sum, int *match, char *detail,
                         size_t detail_size) {
  *match = in_sum == out_sum;
  snprintf(detail, detail_size, "checksums %016llx (input) and %016llx (output)",
           (unsigned long long)in_sum, (unsigned long long)out_sum);
}

int xio_verify_transpose(const xio_matrix *in, const xio_matrix *out, uint64_t memory_budget,
                         int *match, char *detail, size_t detail_size, xio_error *err) {
  *match = 0;
  if (!xio_matrix_transposes(out, in)) {
    snprintf(detail, detail_size, "output is %lld x %lld, expected %lld x %lld",
             (long long)out->rows, (long long)out->cols, (long long)(in->items * in->cols),
             (long long)xio_item_rows(in));
    return 0;
  }
  if (types_differ(in, out, detail, detail_size)) return 0;
  uint64_t in_sum = 0, out_sum = 0;
  if (xio_checksum_matrix(in, NULL, memory_budget, NULL, &in_sum, err) ||
      xio_checksum_matrix(out, &in->shape, memory_budget, NULL, &out_sum, err))
    return -1;
  compare_sums(in_sum, out_sum, match, detail, detail_size);
  return 0;
}

int xio_verify_permutation(const xio_matrix *in, const xio_matrix *out, const int *source,
                           uint64_t memory_budget, int *match, char *detail, size_t detail_size,
                           xio_error *err) {
  *match = 0;
  int same = out->shape.ndims == in->shape.ndims;
  for (int i = 0; same && i < out->shape.ndims; i++)
    same = out->shape.dims[i] == in->shape.dims[source[i]];
  if (!same) {
    snprintf(detail, detail_size, "output is not shaped as the input's axes moved so");
    return 0;
  }
  if (types_differ(in, out, detail, detail_size)) return 0;
  uint64_t in_sum = 0, out_sum = 0;
  if (xio_checksum_values(in, NULL, memory_budget, NULL, &in_sum, err) ||
      xio_checksum_values(out, source, memory_budget, NULL, &out_sum, err))
    return -1;
  compare_sums(in_sum, out_sum, match, detail, detail_size);
  return 0;
}
