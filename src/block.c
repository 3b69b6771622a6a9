/* The one place that splits n items over parts: plans, HDF5 passes and the
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
