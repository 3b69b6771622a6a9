/* A block's shards encoded an inner chunk at a time (shard_block.h). */
#include "shard_block.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

typedef struct {
  const xio_shard_block *b;
  xio_chunk_box inner; /* the block's inner chunks */
  int64_t per_shard;
  size_t inner_bytes, bound, room; /* an inner chunk's: its values, the most they encode to, its slot */
  size_t *sizes; /* of each inner chunk encoded, shard by shard */
  atomic_int failed;
  xio_error err;
} job;

static int failed(job *j, const char *why) {
  int none = 0;
  if (atomic_compare_exchange_strong(&j->failed, &none, 1))
    xio_fail(&j->err, "compressing a shard of %s on rank %d: %s", j->b->dataset, j->b->rank, why);
  return -1;
}

/* Item k: inner chunk k % per_shard of shard k / per_shard, into its slot
 * of the shard's room in the arena. */
static int encode_inner(void *arg, int64_t k, int worker) {
  job *j = arg;
  const xio_shard_block *b = j->b;
  const int64_t shard = k / j->per_shard;
  int64_t shard_origin[XIO_MAX_DIMS], origin[XIO_MAX_DIMS];
  (void)xio_chunk_box_chunk(b->box, shard, shard_origin);
  if (!xio_chunk_box_holds(b->box, shard_origin))
    return failed(j, "internal: a shard lies across this rank's block");
  xio_shard_inner_origin(b->layout, shard_origin, k % j->per_shard, origin);
  xio_codec_scratch *s = xio_codec_scratches_get(b->scratch, worker);
  unsigned char *values = s ? xio_codec_scratch_buffer(s, j->inner_bytes) : NULL;
  if (!values) return failed(j, "out of memory");
  if (xio_chunk_box_at_edge(&j->inner, origin))
    xio_chunk_fill(values, j->inner_bytes, b->fill, b->layout->type_size);
  xio_chunk_box_copy(&j->inner, origin, values, (unsigned char *)b->block, 0);
  unsigned char *slot = b->arena + (size_t)shard * xio_shard_bound(b->layout) +
                        (size_t)(k % j->per_shard) * j->room;
  if (xio_chunk_encode_from(&b->layout->codecs, 0, values, j->inner_bytes, slot, j->bound,
                            &j->sizes[k], s))
    return failed(j, "out of memory");
  if (k % j->per_shard == 0) { /* the shard's record, by its first item */
    int64_t *record = b->records + shard * (b->layout->ndims + 1);
    memcpy(record, shard_origin, sizeof *shard_origin * (size_t)b->layout->ndims);
  }
  return 0;
}

int xio_shard_block_encode(const xio_shard_block *b, uint64_t *bytes, xio_error *err) {
  const xio_shard_layout *l = b->layout;
  const xio_chunk_box *box = b->box;
  job j = {.b = b, .per_shard = xio_shard_chunks(l), .inner_bytes = xio_shard_inner_bytes(l),
           .bound = xio_shard_inner_bound(l), .room = xio_shard_inner_room(l)};
  atomic_init(&j.failed, 0);
  xio_chunk_box_of(&j.inner, box->shape, l->inner, box->type_size,
                   (size_t)box->values * box->type_size, box->row, box->nrows, box->col,
                   box->ncols);
  const int64_t items = box->chunks * j.per_shard;
  *bytes = 0;
  if (!(j.sizes = malloc((size_t)items * sizeof *j.sizes)))
    return xio_fail(err, "out of memory for the shards of %s on rank %d", b->dataset, b->rank);
  if (xio_pool_run(items, encode_inner, &j)) {
    free(j.sizes);
    *err = j.err;
    return -1;
  }
  const size_t bound = xio_shard_bound(l);
  for (int64_t k = 0; k < box->chunks; k++) { /* packed: each down, never over one not yet */
    const size_t size = xio_shard_pack(l, b->arena + (size_t)k * bound,
                                       j.sizes + k * j.per_shard, b->arena + *bytes);
    b->records[k * (l->ndims + 1) + l->ndims] = (int64_t)size;
    *bytes += size;
  }
  free(j.sizes);
  return 0;
}
