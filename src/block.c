/* The one place that splits n items over parts (in items, or in whole
 * units of them): plans, HDF5 passes and the
 * command-line tool all use it, so hyperslabs always match plan slabs. */
#include "xpose.h"

xpose_status xpose_block_range(int64_t n, int64_t parts, int64_t index, int64_t *first,
                               int64_t *count) {
  if (n < 0 || parts < 1 || index < 0 || index >= parts || !first || !count)
    return XPOSE_ERROR_INVALID_ARGUMENT;
  const int64_t base = n / parts, extra = n % parts;
  /* Parts below `extra` own base + 1 items; no product can overflow. */
  *first = index * base + (index < extra ? index : extra);
  *count = base + (index < extra ? 1 : 0);
  return XPOSE_SUCCESS;
}

xpose_status xpose_unit_range(int64_t n, int64_t unit, int64_t parts, int64_t index,
                              int64_t *first, int64_t *count) {
  if (unit < 0) return XPOSE_ERROR_INVALID_ARGUMENT;
  if (unit <= 1) return xpose_block_range(n, parts, index, first, count);
  const int64_t units = n / unit + (n % unit != 0);
  int64_t u0 = 0, nu = 0;
  const xpose_status st = xpose_block_range(units, parts, index, &u0, &nu);
  if (st != XPOSE_SUCCESS) return st;
  /* u0 <= units, so u0 * unit < n + unit: no overflow past n's margin */
  *first = u0 < units ? u0 * unit : n;
  const int64_t end = u0 + nu < units ? (u0 + nu) * unit : n;
  *count = end - *first;
  return XPOSE_SUCCESS;
}
