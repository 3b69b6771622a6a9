#include "shape.h"

#include <string.h>

int xio_shape_source_axis(const xio_shape *in, int axis) {
  /* the transpose starts with in's leading axes, then its column axes */
  const int columns = in->trail - in->split;
  if (in->rechunk) return axis;
  if (axis < in->lead) return in->lead_reordered ? in->lead_order[axis] : axis;
  if (axis < in->lead + columns) return in->split + axis - in->lead;
  if (axis < in->trail) return axis - columns;
  return axis;
}

xio_shape xio_shape_transposed(const xio_shape *in) {
  xio_shape out = {.ndims = in->ndims,
                   .lead = in->lead,
                   .split = in->lead + in->trail - in->split,
                   .trail = in->trail};
  if (in->rechunk) out.split = in->split;
  for (int i = 0; i < in->ndims; i++) {
    const int from = xio_shape_source_axis(in, i);
    out.dims[i] = in->dims[from];
    if (in->unlimited >> from & 1u) out.unlimited |= 1u << i;
  }
  return out;
}

void xio_shape_set_lead_order(xio_shape *in, int lead, const int *order) {
  in->lead_reordered = 0;
  for (int i = 0; order && i < lead; i++) in->lead_reordered |= order[i] != i;
  memset(in->lead_order, 0, sizeof in->lead_order);
  if (in->lead_reordered) memcpy(in->lead_order, order, sizeof *order * (size_t)lead);
}

/* The leading axes' positions of an item, row-major over `lengths`; and
 * back. */
static void item_position(int64_t item, int n, const int64_t *lengths, int64_t *at) {
  for (int a = n - 1; a >= 0; a--) {
    at[a] = lengths[a] ? item % lengths[a] : 0;
    item = lengths[a] ? item / lengths[a] : 0;
  }
}

static int64_t item_at(int n, const int64_t *lengths, const int64_t *at) {
  int64_t item = 0;
  for (int a = 0; a < n; a++) item = item * lengths[a] + at[a];
  return item;
}

int64_t xio_shape_moved_item(const xio_shape *in, int64_t item) {
  if (!in->lead_reordered) return item;
  int64_t at[XIO_MAX_DIMS], moved_at[XIO_MAX_DIMS], moved_lengths[XIO_MAX_DIMS];
  item_position(item, in->lead, in->dims, at);
  for (int i = 0; i < in->lead; i++)
    moved_at[i] = at[in->lead_order[i]], moved_lengths[i] = in->dims[in->lead_order[i]];
  return item_at(in->lead, moved_lengths, moved_at);
}

int64_t xio_shape_item_source(const xio_shape *in, int64_t out_item) {
  if (!in->lead_reordered) return out_item;
  int64_t at[XIO_MAX_DIMS], moved_at[XIO_MAX_DIMS], moved_lengths[XIO_MAX_DIMS];
  for (int i = 0; i < in->lead; i++) moved_lengths[i] = in->dims[in->lead_order[i]];
  item_position(out_item, in->lead, moved_lengths, moved_at);
  for (int i = 0; i < in->lead; i++) at[in->lead_order[i]] = moved_at[i];
  return item_at(in->lead, in->dims, at);
}

int xio_shape_same_dims(const xio_shape *a, const xio_shape *b) {
  int same = a->ndims == b->ndims;
  for (int i = 0; same && i < a->ndims; i++) same = a->dims[i] == b->dims[i];
  return same;
}

int64_t xio_dims_product(const int64_t *dims, int a, int b) {
  int64_t n = 1;
  for (int i = a; i < b; i++) {
    if (dims[i] != 0 && n > INT64_MAX / dims[i]) return -1;
    n *= dims[i];
  }
  return n;
}
