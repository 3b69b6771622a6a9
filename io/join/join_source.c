#define _POSIX_C_SOURCE 200809L /* strdup */
#include "join_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chunk_reader.h"
#include "chunk_writer.h"
#include "matrix_zarr.h"
#include "netcdf3.h"
#include "raw_dataset.h"
#include "zarr_meta.h"

/* A Zarr store's array: its chunk files, which its index reads. */
typedef struct {
  xio_zarr_array array;
  xio_chunk_files files;
} store_array;

/* One input: where its records start among all, and how it is read
 * while open (a netCDF-3 variable at its offsets, compressed chunks
 * located before the passes, a store's chunk files, a contiguous dataset
 * located before the passes at its offsets, or else an HDF5 dataset on
 * this rank alone). */
typedef struct {
  char *path;
  int64_t first_record, records;
  int open;
  uint64_t last_read; /* the reads' count when it was last read: the oldest closes first */
  xio_nc3_source *netcdf3;
  xio_chunk_index *index; /* its file open while `open` */
  store_array *store;      /* a Zarr store's: read through `index` */
  xio_raw_dataset raw;    /* located: `raw_at`; its file open while `open` */
  int raw_at;
  xio_matrix hdf5;
  /* The type its values are read in where it is not the view's (another
   * byte order), converted after each read; else H5I_INVALID_HID. */
  hid_t order;
} member;

typedef struct {
  member *members;
  int count, open;
  uint64_t reads;
} join;

static void close_member(join *j, member *mb) {
  xio_error ignored; /* only read */
  xio_nc3_source_free(mb->netcdf3);
  mb->netcdf3 = NULL;
  if (mb->index) xio_chunk_index_close_file(mb->index);
  xio_raw_close(&mb->raw);
  (void)xio_close(&mb->hdf5, &ignored);
  if (mb->open) j->open--;
  mb->open = 0;
}

/* m's shape (folded as m is) with mb's records. */
static xio_shape member_shape(const member *mb, const xio_matrix *m) {
  xio_shape shape = m->shape;
  shape.dims[0] = mb->records;
  return shape;
}

/* mb's values come as `type` (as it stores them, or netCDF-3's in the
 * host's order): mb->order, where that is not m's type. */
static int set_order(member *mb, const xio_matrix *m, hid_t type, xio_error *err) {
  if (mb->order >= 0) (void)H5Tclose(mb->order);
  mb->order = H5I_INVALID_HID;
  if (H5Tequal(type, m->type) > 0) return 0;
  if (H5Tget_size(type) != H5Tget_size(m->type) || H5Tget_class(type) != H5Tget_class(m->type))
    return xio_fail(err, "%s:%s is of another type than the first input's", mb->path, m->dataset);
  mb->order = H5Tcopy(type);
  return mb->order < 0 ? xio_fail_h5(err, "%s:%s: cannot copy its type", mb->path, m->dataset) : 0;
}

/* mb's dataset opened through HDF5 on this rank alone, into h (to be
 * closed, opened or not), checked to be shaped as m's but for the
 * records, its type (byte order) noted. */
static int open_hdf5(member *mb, const xio_matrix *m, xio_matrix *h, xio_error *err) {
  const xio_shape shape = member_shape(mb, m);
  if (xio_open_input(MPI_COMM_SELF, mb->path, mb->path, m->dataset, h, err) ||
      set_order(mb, m, h->type, err))
    return -1;
  if (xio_shape_same_dims(&h->shape, &shape)) return 0;
  return xio_fail(err, "%s:%s is not shaped as the first input's (the records aside)", mb->path,
                  m->dataset);
}

/* netCDF-3 member mb's values come in the host's order. */
static int set_host_order(member *mb, const xio_matrix *m, xio_error *err) {
  const hid_t host = H5Tget_native_type(m->type, H5T_DIR_DEFAULT);
  const int rc = host < 0 ? xio_fail_h5(err, "%s: cannot read its type", m->dataset)
                          : set_order(mb, m, host, err);
  if (host >= 0) (void)H5Tclose(host);
  return rc;
}

/* Whether the input is a Zarr store (a directory): read from its chunk
 * files. */
static int is_store(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Store mb's array (m's): its chunk files indexed for the codec, a
 * missing one read as the fill value (Zarr's rule), once checked to be
 * shaped as m but for the records: 1, or -1 with a message. */
static int index_store(member *mb, const xio_matrix *m, xio_error *err) {
  char shown[4700];
  xio_zarr_array_path(mb->path, m->dataset, shown, sizeof shown);
  if (!(mb->store = calloc(1, sizeof *mb->store)))
    return xio_fail(err, "out of memory reading %s", shown);
  const xio_zarr_array *a = &mb->store->array;
  if (xio_zarr_array_read(shown, shown, &mb->store->array, NULL, NULL, NULL, err)) return -1;
  const xio_shape shape = member_shape(mb, m);
  int same = a->ndims == shape.ndims;
  for (int i = 0; same && i < a->ndims; i++) same = a->shape[i] == shape.dims[i];
  if (!same)
    return xio_fail(err, "%s is not shaped as the first input's (the records aside)", shown);
  const hid_t type = xio_zarr_type(a);
  const int rc = type < 0 ? xio_fail(err, "%s: its type has no HDF5 form", shown)
                          : set_order(mb, m, type, err);
  if (type >= 0) (void)H5Tclose(type);
  if (rc) return -1;
  xio_zarr_chunk_files(a, &mb->store->files);
  if (!(mb->index = xio_chunk_index_of_files(&mb->store->files, 1)))
    return xio_fail(err, "out of memory reading %s", shown);
  return xio_chunk_index_build(mb->index, MPI_COMM_SELF, H5I_INVALID_HID, H5I_INVALID_HID, &shape,
                               m->type_size, shown, err);
}

/* Opens mb for m's dataset (read_member folds it as m is), closing the
 * least recently read input where too many are open. */
static int open_member(join *j, member *mb, const xio_matrix *m, xio_error *err) {
  if (j->open >= XIO_JOIN_OPEN_INPUTS) {
    member *oldest = NULL;
    for (int i = 0; i < j->count; i++)
      if (j->members[i].open && (!oldest || j->members[i].last_read < oldest->last_read))
        oldest = &j->members[i];
    close_member(j, oldest);
  }
  const xio_shape shape = member_shape(mb, m);
  int rc = 0; /* an indexed one's file is opened by read_member */
  if (mb->raw_at && (mb->raw.fd = open(mb->path, O_RDONLY | O_CLOEXEC)) < 0)
    rc = xio_fail(err, "%s: cannot open: %s", mb->path, strerror(errno));
  else if (mb->raw_at)
    rc = 0;
  else if (!mb->index && is_store(mb->path))
    rc = index_store(mb, m, err) < 0 ? -1 : 0;
  else if (!mb->index && xio_nc3_signature(mb->path) >= 0)
    rc = xio_nc3_source_open(mb->path, m->dataset, &shape, mb->path, &mb->netcdf3, err) ||
         set_host_order(mb, m, err);
  else if (!mb->index)
    rc = open_hdf5(mb, m, &mb->hdf5, err);
  if (rc != 0) return close_member(j, mb), -1;
  mb->open = 1;
  j->open++;
  return 0;
}

/* Rows [row, row + nrows) of input mb's own matrix, columns as asked,
 * as it stores them. */
static int read_stored(join *j, member *mb, const xio_matrix *m, int64_t row, int64_t nrows,
                       int64_t col, int64_t ncols, void *buf, xio_error *err) {
  if (!mb->open && open_member(j, mb, m, err)) return -1;
  mb->last_read = ++j->reads;
  if (mb->index) {
    const xio_shape shape = member_shape(mb, m);
    return xio_chunk_index_read(mb->index, &shape, m->elem_size, row, nrows, col, ncols, buf, err);
  }
  if (mb->raw_at) return xio_raw_read(&mb->raw, row, nrows, col, ncols, buf, NULL, err);
  if (mb->netcdf3)
    return xio_nc3_source_read(mb->netcdf3, m->cols, m->elem_size, row, nrows, col, ncols, buf,
                               err);
  if (mb->hdf5.shape.lead != m->shape.lead || mb->hdf5.shape.split != m->shape.split ||
      mb->hdf5.shape.trail != m->shape.trail)
    if (xio_matrix_fold(&mb->hdf5, m->shape.lead, m->shape.split, m->shape.trail, err)) return -1;
  return xio_read_block(&mb->hdf5, row, nrows, col, ncols, buf, err);
}

/* The same in the view's type: another byte order converted. */
static int read_member(join *j, member *mb, const xio_matrix *m, int64_t row, int64_t nrows,
                       int64_t col, int64_t ncols, void *buf, xio_error *err) {
  if (read_stored(j, mb, m, row, nrows, col, ncols, buf, err)) return -1;
  const size_t values = (size_t)nrows * (size_t)ncols * (m->elem_size / m->type_size);
  if (mb->order < 0 || values == 0 ||
      H5Tconvert(mb->order, m->type, values, buf, NULL, H5P_DEFAULT) >= 0)
    return 0;
  return xio_fail_h5(err, "%s:%s: cannot convert its values to the first input's byte order",
                     mb->path, m->dataset);
}

/* The block split where the inputs' records meet: record k holds rows
 * [k * rows_per_record, (k + 1) * rows_per_record), the record dimension
 * being the first axis of the rows (or of the items). */
static int read_joined(void *state, const xio_matrix *m, int64_t row, int64_t nrows, int64_t col,
                       int64_t ncols, void *buf, xio_error *err) {
  join *j = state;
  if (nrows <= 0 || ncols <= 0) return 0;
  const int64_t per_record = m->rows / m->shape.dims[0];
  const size_t row_bytes = (size_t)ncols * m->elem_size;
  for (int i = 0; i < j->count; i++) {
    member *mb = &j->members[i];
    const int64_t first = mb->first_record * per_record, end = first + mb->records * per_record;
    const int64_t from = row > first ? row : first, to = row + nrows < end ? row + nrows : end;
    if (from >= to) continue;
    unsigned char *part = (unsigned char *)buf + (size_t)(from - row) * row_bytes;
    if (read_member(j, mb, m, from - first, to - from, col, ncols, part, err)) return -1;
  }
  return 0;
}

static void free_join(void *state) {
  join *j = state;
  for (int i = 0; i < j->count; i++) {
    close_member(j, &j->members[i]);
    xio_chunk_index_free(j->members[i].index);
    free(j->members[i].store);
    if (j->members[i].order >= 0) (void)H5Tclose(j->members[i].order);
    free(j->members[i].path);
  }
  free(j->members);
  free(j);
}

/* Where contiguous input mb's values lie in its file (h, folded as m),
 * for reads at their offsets: 1; 0 where HDF5 must read them (external
 * or unallocated storage); -1 with a message. */
static int locate_raw(member *mb, const xio_matrix *m, xio_matrix *h, xio_error *err) {
  uint64_t base = 0;
  if (xio_matrix_fold(h, m->shape.lead, m->shape.split, m->shape.trail, err)) return -1;
  if (!xio_raw_usable(h, &base)) return 0;
  if (xio_raw_open(h, base, 0, &mb->raw, err)) return -1;
  xio_raw_close(&mb->raw); /* opened again with the member */
  mb->raw_at = 1;
  return 1;
}

/* Where input mb's values lie, for reads with no HDF5 call during the
 * passes (its file closed again): compressed chunks located for the
 * codec, a store's chunk files, a contiguous dataset at its offsets: 1;
 * 0 where HDF5 must read them (a chunk not written, a filter the codec
 * does not run, chunks not compressed); -1 with a message. */
static int index_member(member *mb, const xio_matrix *m, xio_error *err) {
  if (is_store(mb->path)) return index_store(mb, m, err);
  xio_matrix h;
  xio_matrix_reset(&h);
  int usable = open_hdf5(mb, m, &h, err);
  if (usable == 0 && !h.chunked) usable = locate_raw(mb, m, &h, err);
  xio_chunk_index *ix = usable == 0 && h.filtered ? xio_chunk_index_new() : NULL;
  if (ix)
    usable = xio_chunk_index_build(ix, MPI_COMM_SELF, h.file, h.dset, &h.shape, h.type_size,
                                   m->dataset, err);
  if (ix && usable == 1) {
    xio_chunk_index_close_file(ix);
    mb->index = ix;
  } else {
    xio_chunk_index_free(ix);
  }
  xio_error ignored; /* only read */
  (void)xio_close(&h, &ignored);
  return usable;
}

/* Collective: every HDF5 input with records located on each rank (a
 * netCDF-3 one is read at its offsets), their reads alone where all are. */
static int prepare_joined(xio_block_source *source, const xio_matrix *m, xio_error *err) {
  join *j = source->state;
  int alone = 1, rc = 0;
  for (int i = 0; rc == 0 && i < j->count; i++) {
    member *mb = &j->members[i];
    const int indexed =
        mb->index || mb->raw_at || mb->records == 0 || xio_nc3_signature(mb->path) >= 0
            ? 1 /* indexed already, never read, or read at its offsets */
            : index_member(mb, m, err);
    if (indexed < 0) rc = -1;
    alone &= indexed == 1;
  }
  rc = xio_agree(m->comm, rc, err);
  if (rc == 0) /* the same on every rank (xio_reads_alone) */
    rc = XIO_MPICHECK(MPI_Allreduce(MPI_IN_PLACE, &alone, 1, MPI_INT, MPI_MIN, m->comm), err);
  source->alone = rc == 0 && alone;
  return rc;
}

int xio_join_attach(xio_matrix *m, const char *const *inputs, const int64_t *records, int count,
                    xio_error *err) {
  join *j = calloc(1, sizeof *j);
  xio_block_source *source = calloc(1, sizeof *source);
  if (j) j->members = calloc((size_t)count, sizeof *j->members);
  int rc = j && source && j->members ? 0 : xio_fail(err, "out of memory joining the inputs");
  int64_t first = 0;
  for (int i = 0; rc == 0 && i < count; i++, j->count++) {
    member *mb = &j->members[i];
    xio_matrix_reset(&mb->hdf5);
    mb->order = H5I_INVALID_HID;
    mb->raw.fd = -1;
    mb->path = strdup(inputs[i]);
    mb->first_record = first;
    mb->records = records[i];
    first += records[i];
    if (!mb->path) rc = xio_fail(err, "out of memory joining the inputs");
  }
  if (rc == 0 && first != m->shape.dims[0])
    rc = xio_fail(err, "%s: %lld records in its view, %lld in the inputs joined", m->dataset,
                  (long long)m->shape.dims[0], (long long)first);
  if (rc) {
    if (j) free_join(j);
    free(source);
    return -1;
  }
  *source = (xio_block_source){read_joined, free_join, prepare_joined, j, 0};
  xio_source_free(m->source);
  m->source = source;
  return 0;
}
