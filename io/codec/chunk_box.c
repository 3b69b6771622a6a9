/* Chunks and blocks (chunk_box.h). */
#include "chunk_box.h"

#include <string.h>

/* The box around flattened positions first..last of axes [a, b). */
static void box_of_run(xio_chunk_box *box, int a, int b, int64_t first, int64_t last) {
  const int64_t *dims = box->shape->dims;
  int64_t step = 1;
  for (int i = b - 1; i >= a; i--) box->step[i] = step, step *= dims[i];
  int split = 0; /* past the first axis where first and last differ: whole */
  for (int i = a; i < b; i++) {
    const int64_t f = first / box->step[i] % dims[i], l = last / box->step[i] % dims[i];
    box->lo[i] = split ? 0 : f;
    box->hi[i] = split ? dims[i] - 1 : l;
    split = split || f != l;
  }
}

void xio_chunk_box_of(xio_chunk_box *box, const xio_shape *shape, const int64_t *chunk,
                      size_t type_size, size_t elem_size, int64_t row, int64_t nrows, int64_t col,
                      int64_t ncols) {
  memset(box, 0, sizeof *box);
  box->shape = shape;
  box->chunk = chunk;
  box->type_size = type_size;
  box->row = row, box->nrows = nrows, box->col = col, box->ncols = ncols;
  box->values = (int64_t)(elem_size / type_size);
  box_of_run(box, 0, shape->split, row, row + nrows - 1);
  box_of_run(box, shape->split, shape->trail, col, col + ncols - 1);
  box_of_run(box, shape->trail, shape->ndims, 0, box->values - 1);
  box->chunks = 1;
  for (int i = 0; i < shape->ndims; i++) {
    box->grid[i] = (shape->dims[i] + chunk[i] - 1) / chunk[i];
    box->first[i] = box->lo[i] / chunk[i];
    box->count[i] = box->hi[i] / chunk[i] - box->first[i] + 1;
    box->chunks *= box->count[i];
  }
}

int64_t xio_chunk_box_chunk(const xio_chunk_box *box, int64_t k, int64_t *origin) {
  int64_t index = 0, rest = k, q[XIO_MAX_DIMS];
  for (int i = box->shape->ndims - 1; i >= 0; i--) {
    q[i] = box->first[i] + rest % box->count[i];
    rest /= box->count[i];
  }
  for (int i = 0; i < box->shape->ndims; i++) {
    origin[i] = q[i] * box->chunk[i];
    index = index * box->grid[i] + q[i];
  }
  return index;
}

void xio_chunk_origin(int ndims, const int64_t *chunk, const int64_t *grid, int64_t index,
                      int64_t *origin) {
  for (int a = ndims - 1; a >= 0; a--) {
    origin[a] = index % grid[a] * chunk[a];
    index /= grid[a];
  }
}

/* The flattened index, over axes [a, b), of the position where each axis
 * is at its chunk's first (last: 0) or last value within the dataset. */
static int64_t flat_corner(const xio_chunk_box *box, const int64_t *origin, int a, int b,
                           int last) {
  int64_t at = 0;
  for (int i = a; i < b; i++) {
    int64_t x = origin[i];
    if (last) {
      x += box->chunk[i] - 1;
      if (x > box->shape->dims[i] - 1) x = box->shape->dims[i] - 1;
    }
    at += x * box->step[i];
  }
  return at;
}

int xio_chunk_box_holds(const xio_chunk_box *box, const int64_t *origin) {
  const xio_shape *s = box->shape;
  /* the chunk's rows (and columns) run from its first corner's flattened
   * index to its last's, and the block's are one interval */
  return flat_corner(box, origin, 0, s->split, 0) >= box->row &&
         flat_corner(box, origin, 0, s->split, 1) < box->row + box->nrows &&
         flat_corner(box, origin, s->split, s->trail, 0) >= box->col &&
         flat_corner(box, origin, s->split, s->trail, 1) < box->col + box->ncols;
}

int xio_chunk_box_at_edge(const xio_chunk_box *box, const int64_t *origin) {
  for (int i = 0; i < box->shape->ndims; i++)
    if (origin[i] + box->chunk[i] > box->shape->dims[i]) return 1;
  return 0;
}

void xio_chunk_box_copy(const xio_chunk_box *box, const int64_t *origin, unsigned char *chunk,
                        unsigned char *block, int to_block) {
  const xio_shape *s = box->shape;
  const int n = s->ndims, last = n - 1;
  int64_t from[XIO_MAX_DIMS], to[XIO_MAX_DIMS], at[XIO_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    const int64_t end = origin[i] + box->chunk[i] - 1;
    from[i] = origin[i] > box->lo[i] ? origin[i] : box->lo[i];
    to[i] = end < box->hi[i] ? end : box->hi[i];
    if (from[i] > to[i]) return;
    at[i] = from[i];
  }
  const size_t ts = box->type_size;
  for (;;) {
    int64_t r = 0, c = 0, e = 0, in_chunk = 0;
    for (int i = 0; i < n; i++) {
      const int64_t part = at[i] * box->step[i];
      r += i < s->split ? part : 0;
      c += i >= s->split && i < s->trail ? part : 0;
      e += i >= s->trail ? part : 0;
      in_chunk = in_chunk * box->chunk[i] + (at[i] - origin[i]);
    }
    int64_t run = to[last] - from[last] + 1, skip = 0;
    if (last < s->trail) { /* the run is of columns: those in the block */
      if (c < box->col) skip = box->col - c;
      if (c + run > box->col + box->ncols) run = box->col + box->ncols - c;
    } else if (c < box->col || c >= box->col + box->ncols) {
      run = 0;
    }
    if (r >= box->row && r < box->row + box->nrows && run > skip) {
      const int64_t dest = ((r - box->row) * box->ncols + (c + skip - box->col)) * box->values + e;
      unsigned char *in_block = block + (size_t)dest * ts,
                    *there = chunk + (size_t)(in_chunk + skip) * ts;
      const size_t bytes = (size_t)(run - skip) * ts;
      if (to_block)
        memcpy(in_block, there, bytes);
      else
        memcpy(there, in_block, bytes);
    }
    int i = last - 1; /* the next run: an odometer over the other axes */
    while (i >= 0 && at[i] == to[i]) at[i] = from[i], i--;
    if (i < 0) return;
    at[i]++;
  }
}

void xio_chunk_fill(unsigned char *chunk, size_t bytes, const unsigned char *value, size_t size) {
  memcpy(chunk, value, size);
  for (size_t done = size; done < bytes; done *= 2) /* doubling copies */
    memcpy(chunk + done, chunk, done < bytes - done ? done : bytes - done);
}
