#include "record_order.h"

#include <stdio.h>

void xio_record_order_next(xio_record_order *order, const char *path, int here, double head,
                           double tail, char *warning, size_t warning_size) {
  if (here && order->known && !(head > order->last) && !warning[0])
    snprintf(warning, warning_size,
             "the record coordinate does not increase from %s to %s (%g, then %g): a file out of "
             "order, or a duplicate",
             order->previous, path, order->last, head);
  if (here) order->last = tail;
  order->known = here;
  order->previous = path;
}
