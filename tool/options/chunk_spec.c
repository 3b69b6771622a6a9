#include "chunk_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axes.h"

/* Splits an item "NAME/LENGTH" into its name and length (0: none given);
 * -1 where it is not one. */
static int split_item(const char *item, char *name, size_t size, long long *length) {
  const char *slash = strrchr(item, '/');
  if (!slash || slash == item) return -1;
  snprintf(name, size, "%.*s", (int)(slash - item), item);
  *length = 0;
  if (!slash[1]) return 0;
  char *end = NULL;
  *length = strtoll(slash + 1, &end, 10);
  return *end || slash[1] == '-' || slash[1] == '+' || *length < 1 || *length > (1ll << 32) ? -1
                                                                                            : 0;
}

int tool_chunk_spec_check(const char *spec, char *error, size_t error_size) {
  char item[256], name[256];
  long long length;
  const char *p = spec;
  while (tool_axes_next_name(&p, item, sizeof item))
    if (split_item(item, name, sizeof name, &length)) {
      snprintf(error, error_size,
               "--chunks %s: '%s' is not NAME/LENGTH (a dimension's name, then its chunk "
               "length from 1 to 2^32, or nothing for the whole dimension)",
               spec, item);
      return -1;
    }
  char names[1024];
  tool_chunk_spec_names(spec, names, sizeof names);
  if (tool_axes_check_names(names, error, error_size) == 0) return 0;
  snprintf(error, error_size, "--chunks %s names a dimension twice", spec);
  return -1;
}

void tool_chunk_spec_names(const char *spec, char *names, size_t size) {
  char item[256], name[256];
  long long length;
  size_t used = 0;
  names[0] = '\0';
  for (const char *p = spec; tool_axes_next_name(&p, item, sizeof item) && used < size;)
    if (split_item(item, name, sizeof name, &length) == 0)
      used += (size_t)snprintf(names + used, size - used, "%s%s", used ? "," : "", name);
}

void tool_chunk_spec_apply(const char *spec, int ndims, const char *const *names,
                           const int64_t *lengths, int64_t *chunk) {
  for (int i = 0; i < ndims; i++) chunk[i] = lengths[i];
  char item[256], name[256];
  long long length;
  for (const char *p = spec; tool_axes_next_name(&p, item, sizeof item);) {
    if (split_item(item, name, sizeof name, &length) != 0 || length == 0) continue;
    for (int i = 0; i < ndims; i++)
      if (names[i] && strcmp(names[i], name) == 0) chunk[i] = length;
  }
}
