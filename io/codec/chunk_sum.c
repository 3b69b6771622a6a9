/* A chunk-wise sum of an index's chunks, for verification
 * (chunk_reader.h: xio_chunk_index_sum). */
#include <stdatomic.h>
#include <stdlib.h>

#include "chunk_index.h"
#include "pool.h"

/* A chunk-wise sum: chunks [first, first + count) of the index, each an
 * item of a pool job, each thread's sum in its slot. */
typedef struct {
  chunk_job job;
  const xio_shape *shape;
  int64_t first;
  xio_chunk_run_fn fn;
  void *arg;
  uint64_t *sums;
  /* chunks summed from their byte planes, left shuffled: a chunk's
   * values need one buffer the size of a chunk on each thread, not two */
  int shuffled;
  int64_t element_values; /* values in an element: the axes from shape->trail */
} chunk_sum;

/* Values gathered from byte planes at a time, at most. */
#define PLANE_RUN_BYTES 4096

/* The n elements from value `offset` of a chunk handed to fn: from
 * `values`, or gathered back from its byte planes (HDF5's shuffle puts
 * byte j of value i at j * values + i) a few at a time. */
static uint64_t sum_run(const chunk_sum *c, const unsigned char *values, int shuffled,
                        int64_t offset, int64_t row, int64_t col, int64_t n) {
  const size_t size = c->job.ix->type_size, element = size * (size_t)c->element_values;
  if (!shuffled) return c->fn(c->arg, values + (size_t)offset * size, row, col, n);
  const size_t count = c->job.ix->chunk_bytes / size;
  const int64_t per = (int64_t)(PLANE_RUN_BYTES / element);
  unsigned char run[PLANE_RUN_BYTES];
  uint64_t sum = 0;
  for (int64_t k = 0; k < n; k += per) {
    const size_t m = (size_t)((n - k < per ? n - k : per) * c->element_values);
    const size_t from = (size_t)offset + (size_t)(k * c->element_values);
    for (size_t j = 0; j < size; j++)
      for (size_t e = 0; e < m; e++) run[e * size + j] = values[j * count + from + e];
    sum += c->fn(c->arg, run, row, col + k, n - k < per ? n - k : per);
  }
  return sum;
}

/* The runs of whole elements along the last column axis of the chunk
 * whose first value is at origin, decoded in values, each handed to fn. */
static uint64_t sum_runs(const chunk_sum *c, const int64_t *origin, const unsigned char *values,
                         int shuffled) {
  const xio_chunk_index *ix = c->job.ix;
  const xio_shape *s = c->shape;
  const int n = s->ndims, last = s->trail - 1;
  int64_t step[XIO_MAX_DIMS], stride[XIO_MAX_DIMS], to[XIO_MAX_DIMS], at[XIO_MAX_DIMS];
  int64_t along = 1, in_chunk = 1; /* an axis's step in its group's flattened index, in the chunk */
  for (int i = n - 1; i >= 0; i--) {
    if (i == s->trail - 1 || i == s->split - 1) along = 1;
    step[i] = along, along *= s->dims[i];
    stride[i] = in_chunk, in_chunk *= ix->chunk[i];
    const int64_t end = origin[i] + ix->chunk[i];
    to[i] = (end < s->dims[i] ? end : s->dims[i]) - 1;
    at[i] = origin[i];
  }
  uint64_t sum = 0;
  for (;;) {
    int64_t row = 0, col = at[last], offset = 0; /* at[last]: the run's first */
    for (int i = 0; i <= last; i++) {
      if (i < s->split)
        row += at[i] * step[i];
      else if (i < last)
        col += at[i] * step[i];
      offset += (at[i] - origin[i]) * stride[i];
    }
    sum += sum_run(c, values, shuffled, offset, row, col, to[last] - at[last] + 1);
    int i = last - 1; /* the next run: an odometer over the axes before */
    while (i >= 0 && at[i] == to[i]) at[i] = origin[i], i--;
    if (i < 0) return sum;
    at[i]++;
  }
}

/* Item k: chunk first + k read, decoded and summed. */
static int sum_chunk(void *arg, int64_t k, int worker) {
  chunk_sum *c = arg;
  const xio_chunk_index *ix = c->job.ix;
  const int64_t index = c->first + k;
  int64_t origin[XIO_MAX_DIMS];
  xio_chunk_origin(ix->ndims, ix->chunk, ix->grid, index, origin);
  const unsigned char *values = NULL;
  const int shuffled = c->shuffled && !(ix->mask[index] & 1u);
  if (xio_decoded_chunk(&c->job, index, origin, shuffled ? 1u : 0u, worker, &values)) return -1;
  c->sums[worker] += sum_runs(c, origin, values, shuffled);
  return 0;
}

int xio_chunk_index_sum(xio_chunk_index *ix, const xio_shape *shape, int64_t first, int64_t count,
                        int64_t ahead, xio_chunk_run_fn fn, void *arg, uint64_t *sum,
                        xio_error *err) {
  *sum = 0;
  if (count <= 0) return 0;
  const int threads = xio_pool_threads();
  chunk_sum c = {.job = {.ix = ix}, .shape = shape, .first = first, .fn = fn, .arg = arg};
  c.element_values = xio_dims_product(shape->dims, shape->trail, shape->ndims);
  c.shuffled = ix->type_size > 1 && ix->type_size * (size_t)c.element_values <= PLANE_RUN_BYTES &&
               xio_filters_shuffle_first(&ix->filters, ix->type_size);
  atomic_init(&c.job.failed, 0);
  if (xio_codec_scratches_reserve(&ix->scratch, threads) ||
      !(c.sums = calloc((size_t)threads, sizeof *c.sums)))
    return xio_fail(err, "out of memory reading %s", ix->shown);
  xio_chunk_ask_ahead(ix, NULL, first, count);
  if (ahead > 0) xio_chunk_ask_ahead(ix, NULL, first + count, ahead);
  const int rc = xio_pool_run(count, sum_chunk, &c);
  for (int w = 0; w < threads; w++) *sum += c.sums[w];
  free(c.sums);
  if (rc) *err = c.job.err;
  return rc ? -1 : 0;
}
