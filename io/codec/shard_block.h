/* A block's shards (shard.h) encoded on the pool one inner chunk per item,
 * then each packed with its index: a shard of many inner chunks is
 * neither one thread's work (18 shards of 16 chunks on 16 threads wait
 * for the last two) nor a copy of a shard's values per thread. */
#ifndef XIO_SHARD_BLOCK_H
#define XIO_SHARD_BLOCK_H

#include <stdint.h>

#include "chunk_box.h"
#include "filters.h"
#include "h5_error.h"
#include "shard.h"

typedef struct {
  const xio_shard_layout *layout;
  const xio_chunk_box *box; /* the block's shards: chunks of layout->shard */
  const unsigned char *block;
  const unsigned char *fill; /* one value: what inner chunks hold past the array's end */
  /* xio_shard_bound bytes for each shard of the box; shard k's packed
   * bytes one after another from the start */
  unsigned char *arena;
  int64_t *records; /* shard k's origin (ndims values), then its bytes */
  xio_codec_scratches *scratch;
  const char *dataset;
  int rank;
} xio_shard_block;

/* Local.  Every shard of the box encoded and packed: their bytes in
 * *bytes.  -1 with a message naming the dataset and the rank. */
int xio_shard_block_encode(const xio_shard_block *b, uint64_t *bytes, xio_error *err);

#endif
