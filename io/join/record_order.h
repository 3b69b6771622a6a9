/* The record coordinate across the inputs of a join, input after input:
 * it should increase from each to the next; the first time it does not (a
 * file out of order, or a duplicate), a warning naming both files. */
#ifndef XIO_RECORD_ORDER_H
#define XIO_RECORD_ORDER_H

#include <stddef.h>

typedef struct {
  double last; /* the previous input's last record coordinate */
  int known;   /* whether that input had one */
  const char *previous;
} xio_record_order;

/* Local.  Input `path` seen, its record coordinate from `head` to `tail`
 * where `here` (an input of no records has none); `warning` (of
 * `warning_size`, "" so far) set the first time the order breaks. */
void xio_record_order_next(xio_record_order *order, const char *path, int here, double head,
                           double tail, char *warning, size_t warning_size);

#endif
