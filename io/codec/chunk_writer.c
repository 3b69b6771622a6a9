/* Chunks encoded on every rank and written as stored by one (chunk_writer.h). */
#include "chunk_writer.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_box.h"
#include "chunk_reader.h"
#include "filters.h"
#include "host_memory.h"
#include "pool.h"
#include "shard.h"
#include "shard_block.h"

/* Chunks larger than this go through HDF5's pipeline. */
#define MOST_CHUNK_BYTES ((size_t)1 << 30)
/* Bytes of one message between ranks: MPI's counts are ints. */
#define MESSAGE_BYTES ((size_t)1 << 30)
enum { TAG_RECORDS = 1, TAG_BYTES = 2 };

struct xio_chunk_writer {
  MPI_Comm comm; /* a duplicate: the writer's messages only */
  int rank, nranks, ndims;
  const xio_shape *shape;
  size_t type_size, elem_size;
  const char *name;
  const xio_chunk_files *files; /* NULL: rank 0 writes into HDF5's dataset */
  xio_filters filters;
  int64_t chunk[XIO_MAX_DIMS];
  size_t chunk_bytes, bound; /* a chunk's values, and the most they encode to */
  unsigned char *fill;       /* the fill value: edge chunks start as it */
  xio_codec_scratches scratch;
  /* A block's encoded chunks: chunk k's record is its origin, then its
   * length; their bytes one after another in `arena`. */
  unsigned char *arena;
  size_t arena_bytes;
  int64_t *records;
  size_t record_room; /* in chunks */
  double encode_seconds, store_seconds;
  uint64_t stored_bytes, stored_chunks;
};

/* Local.  dcpl's chunk shape and filters into w: 1 where the codec runs
 * them, else 0 with what HDF5's pipeline runs instead in why. */
static int read_storage(xio_chunk_writer *w, hid_t dcpl, size_t type_size, char *why,
                        size_t why_size) {
  hsize_t chunk[XIO_MAX_DIMS];
  why[0] = '\0';
  const int ndims = H5Pget_chunk(dcpl, XIO_MAX_DIMS, chunk);
  if (ndims < 1 || xio_filters_of(dcpl, &w->filters) != 0) {
    snprintf(why, why_size, "its chunks cannot be read");
    return 0;
  }
  if (!w->filters.known)
    snprintf(why, why_size, "%s, which xpose's codec does not run", w->filters.unknown);
  w->ndims = ndims;
  w->chunk_bytes = type_size;
  for (int i = 0; i < w->ndims; i++) w->chunk[i] = (int64_t)chunk[i], w->chunk_bytes *= chunk[i];
  if (w->filters.known && w->chunk_bytes > MOST_CHUNK_BYTES)
    snprintf(why, why_size, "chunks over 1 GiB");
  return w->filters.known && w->filters.count > 0 && w->chunk_bytes <= MOST_CHUNK_BYTES;
}

int xio_chunk_writer_usable(hid_t dcpl, size_t type_size, char *why, size_t why_size) {
  char text[128] = "";
  xio_chunk_writer probe = {0};
  const int usable = !xio_codec_off() && read_storage(&probe, dcpl, type_size, text, sizeof text);
  if (why) snprintf(why, why_size, "%s", xio_codec_off() ? "XPOSE_CODEC=hdf5" : text);
  return usable;
}

/* Local.  The dataset's fill value (its default, zeros, where its creator
 * set none), as HDF5 fills what an edge chunk holds past the dataset's
 * end. */
static int make_fill(xio_chunk_writer *w, hid_t dcpl, hid_t type) {
  w->fill = calloc(1, w->type_size);
  return w->fill && H5Pget_fill_value(dcpl, type, w->fill) >= 0 ? 0 : -1;
}

int xio_chunk_writer_shuffles_first(const xio_chunk_writer *w) {
  return xio_filters_shuffle_first(&w->filters, w->type_size);
}

void xio_chunk_writer_fill(const xio_chunk_writer *w, unsigned char *chunk, int shuffled) {
  if (shuffled) { /* byte j of every value in plane j */
    const size_t values = w->chunk_bytes / w->type_size;
    for (size_t j = 0; j < w->type_size; j++) memset(chunk + j * values, w->fill[j], values);
    return;
  }
  xio_chunk_fill(chunk, w->chunk_bytes, w->fill, w->type_size);
}

/* Local.  The chunks' shape, encoding and fill value: the files', or
 * HDF5's dataset's. */
static int read_chunks(xio_chunk_writer *w, const xio_chunked_dataset *d, xio_error *err) {
  const xio_chunk_files *files = d->files;
  if (files) {
    w->filters = files->filters;
    w->ndims = d->shape->ndims;
    w->chunk_bytes = w->type_size;
    for (int i = 0; i < w->ndims; i++)
      w->chunk[i] = files->chunk[i], w->chunk_bytes *= (size_t)files->chunk[i];
    if (!(w->fill = calloc(1, w->type_size))) return xio_fail(err, "out of memory");
    if (files->fill) memcpy(w->fill, files->fill, w->type_size);
    return 0;
  }
  char why[128];
  const hid_t dcpl = H5Dget_create_plist(d->dset);
  const int rc = dcpl >= 0 && w->type_size &&
                         read_storage(w, dcpl, w->type_size, why, sizeof why) &&
                         w->ndims == d->shape->ndims && make_fill(w, dcpl, d->type) == 0
                     ? 0
                     : xio_fail_h5(err, "cannot set up the writer of %s's chunks", d->name);
  if (dcpl >= 0) (void)H5Pclose(dcpl); /* only read */
  return rc;
}

int xio_chunk_writer_open(const xio_chunked_dataset *d, xio_chunk_writer **writer, xio_error *err) {
  xio_chunk_writer *w = calloc(1, sizeof *w);
  *writer = NULL;
  if (w) {
    w->comm = MPI_COMM_NULL;
    w->shape = d->shape, w->elem_size = d->elem_size, w->name = d->name, w->files = d->files;
    w->type_size = H5Tget_size(d->type);
  }
  int rc = w ? read_chunks(w, d, err) : xio_fail(err, "out of memory");
  if (rc == 0)
    w->bound = w->files && w->files->shards ? xio_shard_bound(w->files->shards)
                                            : xio_chunk_encode_bound(&w->filters, w->chunk_bytes);
  if (rc == 0 && (XIO_MPICHECK(MPI_Comm_dup(d->comm, &w->comm), err) ||
                  XIO_MPICHECK(MPI_Comm_rank(w->comm, &w->rank), err) ||
                  XIO_MPICHECK(MPI_Comm_size(w->comm, &w->nranks), err)))
    rc = -1;
  if (xio_agree(d->comm, rc, err)) {
    xio_chunk_writer_close(w);
    return -1;
  }
  *writer = w;
  return 0;
}

void xio_chunk_writer_close(xio_chunk_writer *w) {
  if (!w) return;
  if (w->comm != MPI_COMM_NULL) (void)MPI_Comm_free(&w->comm);
  xio_codec_scratches_free(&w->scratch);
  free(w->fill);
  free(w->arena);
  free(w->records);
  free(w);
}

void xio_chunk_writer_times(const xio_chunk_writer *w, double *encode_seconds,
                            double *store_seconds, uint64_t *stored_bytes,
                            uint64_t *stored_chunks) {
  *encode_seconds = w->encode_seconds;
  *store_seconds = w->store_seconds;
  *stored_bytes = w->stored_bytes;
  *stored_chunks = w->stored_chunks;
}

/* One block's encoding: its chunks, each an item of a pool job, into the
 * arena at k * bound. */
typedef struct {
  xio_chunk_writer *w;
  const char *dataset;
  xio_chunk_box box;
  const unsigned char *buf;
  atomic_int failed;
  xio_error err;
} block_encode;

static int encode_failed(block_encode *e, const char *why) {
  int none = 0;
  if (atomic_compare_exchange_strong(&e->failed, &none, 1))
    xio_fail(&e->err, "compressing a chunk of %s on rank %d: %s", e->dataset, e->w->rank, why);
  return -1;
}

/* A whole chunk's values encoded (filters before `first` run already):
 * as xio_chunk_encode_from, or as a shard of inner chunks. */
static int encode_values(const xio_chunk_writer *w, int first, const unsigned char *values,
                         unsigned char *out, size_t room, size_t *size, xio_codec_scratch *s) {
  if (w->files && w->files->shards)
    return xio_shard_encode(w->files->shards, values, out, room, size, s);
  return xio_chunk_encode_from(&w->filters, first, values, w->chunk_bytes, out, room, size, s);
}

static int encode_chunk(void *arg, int64_t k, int worker) {
  block_encode *e = arg;
  xio_chunk_writer *w = e->w;
  int64_t origin[XIO_MAX_DIMS];
  (void)xio_chunk_box_chunk(&e->box, k, origin);
  if (!xio_chunk_box_holds(&e->box, origin))
    return encode_failed(e, "internal: a chunk lies across this rank's block");
  xio_codec_scratch *s = xio_codec_scratches_get(&w->scratch, worker);
  unsigned char *values = s ? xio_codec_scratch_buffer(s, w->chunk_bytes) : NULL;
  if (!values) return encode_failed(e, "out of memory");
  if (xio_chunk_box_at_edge(&e->box, origin)) xio_chunk_writer_fill(w, values, 0);
  xio_chunk_box_copy(&e->box, origin, values, (unsigned char *)e->buf, 0);
  size_t size = 0;
  if (encode_values(w, 0, values, w->arena + (size_t)k * w->bound, w->bound, &size, s))
    return encode_failed(e, "out of memory");
  int64_t *record = w->records + (size_t)k * (size_t)(w->ndims + 1);
  memcpy(record, origin, sizeof *origin * (size_t)w->ndims);
  record[w->ndims] = (int64_t)size;
  return 0;
}

/* Local.  An arena of `bytes`, the records of n chunks, and a codec
 * scratch for each thread: -1 where they cannot be had. */
static int reserve(xio_chunk_writer *w, size_t n, size_t bytes) {
  if (bytes > w->arena_bytes) {
    free(w->arena);
    w->arena_bytes = (w->arena = xio_host_alloc(bytes)) ? bytes : 0;
  }
  if (n > w->record_room) {
    free(w->records);
    w->record_room = (w->records = malloc(n * sizeof *w->records * (size_t)(w->ndims + 1))) ? n : 0;
  }
  return !w->arena_bytes || (n && !w->record_room) ||
                 xio_codec_scratches_reserve(&w->scratch, xio_pool_threads())
             ? -1
             : 0;
}

/* Local.  The chunks encoded at k * room packed one after another from
 * the arena's start, their records too, those that did not fit left out
 * (their indexes into `misfits`, how many in *left): their bytes. */
static uint64_t pack_fitted(xio_chunk_writer *w, int64_t count, size_t room, int64_t *misfits,
                            int64_t *kept, int64_t *left) {
  const size_t per = (size_t)(w->ndims + 1);
  uint64_t bytes = 0;
  *kept = 0, *left = 0;
  for (int64_t k = 0; k < count; k++) { /* each moves down, never over one not yet moved */
    const int64_t *record = w->records + (size_t)k * per;
    if (record[w->ndims] < 0) {
      misfits[(*left)++] = k;
      continue;
    }
    memmove(w->arena + bytes, w->arena + (size_t)k * room, (size_t)record[w->ndims]);
    memmove(w->records + (size_t)*kept * per, record, sizeof *record * per);
    bytes += (uint64_t)record[w->ndims];
    (*kept)++;
  }
  return bytes;
}

/* Local.  The block's chunks encoded, packed one after another from the
 * arena's start: how many in *count, their bytes in *bytes. */
static int encode_block(xio_chunk_writer *w, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                        const void *buf, int64_t *count, uint64_t *bytes, xio_error *err) {
  *count = 0, *bytes = 0;
  if (nrows <= 0 || ncols <= 0) return 0;
  block_encode e = {.w = w, .dataset = w->name, .buf = buf};
  atomic_init(&e.failed, 0);
  xio_chunk_box_of(&e.box, w->shape, w->chunk, w->type_size, w->elem_size, row, nrows, col, ncols);
  const size_t n = (size_t)e.box.chunks;
  if (reserve(w, n, n * w->bound))
    return xio_fail(err, "cannot allocate %zu bytes to compress %s's chunks in on rank %d",
                    n * w->bound, w->name, w->rank);
  if (w->files && w->files->shards) {
    const xio_shard_block shards = {.layout = w->files->shards, .box = &e.box, .block = buf,
                                    .fill = w->fill, .arena = w->arena, .records = w->records,
                                    .scratch = &w->scratch, .dataset = w->name, .rank = w->rank};
    if (xio_shard_block_encode(&shards, bytes, err)) return -1;
  } else if (xio_pool_run((int64_t)n, encode_chunk, &e)) {
    *err = e.err;
    return -1;
  } else {
    int64_t kept = 0, left = 0; /* every one fits its bound */
    *bytes = pack_fitted(w, (int64_t)n, w->bound, NULL, &kept, &left);
  }
  *count = (int64_t)n;
  return 0;
}

/* Rank 0, or each rank of files: `count` chunks (records, then their
 * bytes) written as stored. */
static int store_chunks(xio_chunk_writer *w, hid_t dset, int64_t count, const int64_t *records,
                        const unsigned char *bytes, xio_error *err) {
  for (int64_t k = 0; k < count; k++) {
    const int64_t *record = records + k * (w->ndims + 1);
    hsize_t offset[XIO_MAX_DIMS];
    for (int i = 0; i < w->ndims; i++) offset[i] = (hsize_t)record[i];
    const size_t size = (size_t)record[w->ndims];
    if (w->files ? w->files->put(w->files->target, record, bytes, size, err)
                 : H5Dwrite_chunk(dset, H5P_DEFAULT, 0, offset, size, bytes) < 0 &&
                       xio_fail_h5(err, "writing a chunk of %s failed", w->name))
      return -1;
    bytes += size;
    w->stored_bytes += size;
    w->stored_chunks++;
  }
  return 0;
}

/* Bytes sent or received in messages of at most MESSAGE_BYTES. */
static int move_bytes(xio_chunk_writer *w, int sending, int peer, unsigned char *bytes,
                      uint64_t size, xio_error *err) {
  for (uint64_t at = 0; at < size; at += MESSAGE_BYTES) {
    const int n = (int)(size - at < MESSAGE_BYTES ? size - at : MESSAGE_BYTES);
    if (sending ? XIO_MPICHECK(MPI_Send(bytes + at, n, MPI_BYTE, peer, TAG_BYTES, w->comm), err)
                : XIO_MPICHECK(MPI_Recv(bytes + at, n, MPI_BYTE, peer, TAG_BYTES, w->comm,
                                        MPI_STATUS_IGNORE),
                               err))
      return -1;
  }
  return 0;
}

/* Rank 0.  Rank r's chunks received (whatever failed here before: rc)
 * into `records` and `incoming`, which hold the largest rank's, and,
 * unless something failed, written. */
static int receive_and_store(xio_chunk_writer *w, hid_t dset, int r, int64_t count, uint64_t bytes,
                             int64_t *records, unsigned char *incoming, int rc, xio_error *err) {
  xio_error lost;
  xio_error *why = rc ? &lost : err;
  /* the records of 4M chunks of 32 axes stay within an int's count */
  const int values = (int)((size_t)count * (size_t)(w->ndims + 1));
  if (XIO_MPICHECK(
          MPI_Recv(records, values, MPI_INT64_T, r, TAG_RECORDS, w->comm, MPI_STATUS_IGNORE),
          why) ||
      move_bytes(w, 0, r, incoming, bytes, why))
    return -1;
  return rc ? rc : store_chunks(w, dset, count, records, incoming, err);
}

/* Rank 0.  Buffers for the largest of the other ranks' chunks (`all`
 * holds each rank's count and bytes): 1 where they could be had. */
static int make_room(const xio_chunk_writer *w, const int64_t *all, int64_t **records,
                     unsigned char **incoming) {
  int64_t most_count = 0, most_bytes = 0;
  for (int r = 1; r < w->nranks; r++) {
    if (all[2 * r] > most_count) most_count = all[2 * r];
    if (all[2 * r + 1] > most_bytes) most_bytes = all[2 * r + 1];
  }
  *records = malloc(sizeof **records * (size_t)(most_count * (w->ndims + 1)) + 1);
  *incoming = xio_host_alloc((size_t)most_bytes);
  return *records && *incoming;
}

/* Rank 0.  The other ranks' chunks written; every rank's are received
 * even after a failure (rc), so that no rank waits. */
static int store_others(xio_chunk_writer *w, hid_t dset, const int64_t *all, int64_t *records,
                        unsigned char *incoming, int rc, xio_error *err) {
  for (int r = 1; r < w->nranks; r++)
    if (all[2 * r])
      rc = receive_and_store(w, dset, r, all[2 * r], (uint64_t)all[2 * r + 1], records, incoming,
                             rc, err);
  return rc;
}

/* Not rank 0.  This rank's chunks sent to the writer. */
static int send_chunks(xio_chunk_writer *w, int64_t count, uint64_t bytes, xio_error *err) {
  return XIO_MPICHECK(MPI_Send(w->records, (int)((size_t)count * (size_t)(w->ndims + 1)),
                               MPI_INT64_T, 0, TAG_RECORDS, w->comm),
                      err) ||
                 move_bytes(w, 1, 0, w->arena, bytes, err)
             ? -1
             : 0;
}

/* Collective.  This rank's `count` chunks, encoded and packed in the
 * arena (`bytes` of them; none after a failure here, rc), written: rank
 * 0's own first, then every other rank's, received in turn. */
static int store_everyone(xio_chunk_writer *w, hid_t dset, int64_t count, uint64_t bytes, int rc,
                          double encoded, xio_error *err) {
  if (rc) count = 0, bytes = 0; /* still takes part, with nothing */
  if (w->files) {               /* each its own */
    if (rc == 0) rc = store_chunks(w, dset, count, w->records, w->arena, err);
    w->store_seconds += MPI_Wtime() - encoded;
    return rc;
  }
  /* rank 0's own first, while the others may still be compressing theirs */
  if (w->rank == 0 && rc == 0) rc = store_chunks(w, dset, count, w->records, w->arena, err);
  int64_t mine[2] = {count, (int64_t)bytes}, *all = NULL, *records = NULL;
  unsigned char *incoming = NULL;
  int ready = 0;
  if (w->rank == 0 && !(all = malloc(sizeof *all * 2 * (size_t)w->nranks))) abort(); /* bytes */
  if (XIO_MPICHECK(MPI_Gather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, 0, w->comm), err)) {
    free(all);
    return -1;
  }
  if (w->rank == 0) ready = make_room(w, all, &records, &incoming);
  /* whether rank 0 takes the others' chunks: where not, none are sent */
  if (XIO_MPICHECK(MPI_Bcast(&ready, 1, MPI_INT, 0, w->comm), err)) rc = -1, ready = -1;
  xio_error lost;
  if (ready == 0 && rc == 0)
    rc = xio_fail(err, "rank 0 cannot allocate room for the other ranks' chunks of %s", w->name);
  else if (ready > 0 && w->rank == 0)
    rc = store_others(w, dset, all, records, incoming, rc, err);
  else if (ready > 0 && count && send_chunks(w, count, bytes, rc ? &lost : err))
    rc = -1;
  if (w->rank == 0) w->store_seconds += MPI_Wtime() - encoded;
  free(all);
  free(records);
  free(incoming);
  return rc;
}

int xio_chunk_writer_write(xio_chunk_writer *w, hid_t dset, int64_t row, int64_t nrows, int64_t col,
                           int64_t ncols, const void *buf, xio_error *err) {
  const double began = MPI_Wtime();
  int64_t count = 0;
  uint64_t bytes = 0;
  const int rc = encode_block(w, row, nrows, col, ncols, buf, &count, &bytes, err);
  const double encoded = MPI_Wtime();
  w->encode_seconds += encoded - began;
  return store_everyone(w, dset, count, bytes, rc, encoded, err);
}

/* Chunks given whole: each an item of a pool job, into the arena at
 * k * room; one that does not fit its room has length -1. */
typedef struct {
  block_encode e;
  const xio_whole_chunks *given;
  size_t room;
} whole_encode;

/* Local.  Given chunk k encoded into `room` bytes at `out`, its record
 * at `record`: 1 where it does not fit them. */
static int encode_one(xio_chunk_writer *w, const xio_whole_chunks *given, int64_t k,
                      unsigned char *out, size_t room, int64_t *record, int worker) {
  xio_codec_scratch *s = xio_codec_scratches_get(&w->scratch, worker);
  const int first = given->shuffled ? 1 : 0;
  size_t size = 0;
  const int rc = s ? encode_values(w, first, given->values[k], out, room, &size, s) : -1;
  memcpy(record, given->origins + k * w->ndims, sizeof *record * (size_t)w->ndims);
  record[w->ndims] = rc ? -1 : (int64_t)size;
  return rc;
}

static int encode_whole(void *arg, int64_t k, int worker) {
  whole_encode *we = arg;
  xio_chunk_writer *w = we->e.w;
  int64_t *record = w->records + (size_t)k * (size_t)(w->ndims + 1);
  const int rc =
      encode_one(w, we->given, k, w->arena + (size_t)k * we->room, we->room, record, worker);
  return rc < 0 ? encode_failed(&we->e, "out of memory") : 0;
}

/* Collective.  The chunks that did not fit their room, one at a time on
 * each rank (as many times as the rank with the most has), each encoded
 * alone in the arena, where a whole chunk's bound fits. */
static int write_misfits(xio_chunk_writer *w, hid_t dset, const xio_whole_chunks *given,
                         const int64_t *misfits, int64_t left, int rc, xio_error *err) {
  int64_t most = rc ? 0 : left;
  if (XIO_MPICHECK(MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT64_T, MPI_MAX, w->comm), err))
    return -1;
  for (int64_t i = 0; i < most; i++) {
    const double began = MPI_Wtime();
    int one = 0;
    if (rc == 0 && i < left) {
      one = 1;
      if (encode_one(w, given, misfits[i], w->arena, w->bound, w->records, 0))
        rc = xio_fail(err, "compressing a chunk of %s on rank %d: out of memory", w->name, w->rank);
    }
    const double encoded = MPI_Wtime();
    w->encode_seconds += encoded - began;
    const uint64_t bytes = rc || !one ? 0 : (uint64_t)w->records[w->ndims];
    if (store_everyone(w, dset, rc ? 0 : one, bytes, rc, encoded, err)) rc = -1;
  }
  return rc;
}

int xio_chunk_writer_write_chunks(xio_chunk_writer *w, hid_t dset, const xio_whole_chunks *given,
                                  xio_error *err) {
  const double began = MPI_Wtime();
  const int64_t count = given->count > 0 ? given->count : 0;
  const size_t room = given->room && given->room < w->bound ? given->room : w->bound;
  const size_t arena = (size_t)count * room > w->bound ? (size_t)count * room : w->bound;
  int64_t kept = 0, left = 0, *misfits = malloc(sizeof *misfits * (size_t)count + 1);
  uint64_t bytes = 0;
  whole_encode we = {.e = {.w = w, .dataset = w->name}, .given = given, .room = room};
  atomic_init(&we.e.failed, 0);
  int rc = 0;
  if (!misfits || reserve(w, (size_t)count, arena))
    rc = xio_fail(err, "cannot allocate %zu bytes to compress %s's chunks in on rank %d", arena,
                  w->name, w->rank);
  else if (given->shuffled && !xio_chunk_writer_shuffles_first(w))
    rc = xio_fail(err, "internal: %s's chunks given shuffled, which its filters do not do first",
                  w->name);
  else if (count && xio_pool_run(count, encode_whole, &we))
    rc = -1, *err = we.e.err;
  if (rc == 0) bytes = pack_fitted(w, count, room, misfits, &kept, &left);
  const double encoded = MPI_Wtime();
  w->encode_seconds += encoded - began;
  if (store_everyone(w, dset, rc ? 0 : kept, bytes, rc, encoded, err)) rc = -1;
  rc = write_misfits(w, dset, given, misfits, left, rc, err);
  free(misfits);
  return rc;
}
