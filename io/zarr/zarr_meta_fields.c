/* What every field's check of an array's metadata needs
 * (zarr_meta_parts.h): its value shown in a message, and lists of
 * integers checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarr_meta_parts.h"

void xio_zarr_json_shown(json_t *value, char *text, size_t size) {
  char *dumped = value ? json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  snprintf(text, size, "%s", dumped ? dumped : value ? "(a value)" : "missing");
  if (dumped && strlen(dumped) >= size && size > 4) memcpy(text + size - 4, "...", 4);
  free(dumped);
}

int xio_zarr_integers(json_t *list, int ndims, int64_t least, int64_t *v, const char *what,
                      const char *shown, xio_error *err) {
  int ok = json_is_array(list) && (int)json_array_size(list) == ndims;
  for (int i = 0; ok && i < ndims; i++) {
    json_t *x = json_array_get(list, (size_t)i);
    ok = json_is_integer(x) && json_integer_value(x) >= least;
    if (ok) v[i] = json_integer_value(x);
  }
  if (ok) return 0;
  char text[80];
  xio_zarr_json_shown(list, text, sizeof text);
  return xio_fail(err, "%s: its %s is %s, not a list of %d integers of %lld or more", shown, what,
                  text, ndims, (long long)least);
}
