#include "axes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_AXES = 32 };

void tool_axes_describe(int ndims, const char *const *names, const long long *dims, char *text,
                        size_t size) {
  int named = 1;
  for (int i = 0; i < ndims; i++) named = named && names && names[i] && names[i][0];
  size_t used = 0;
  text[0] = '\0';
  for (int i = 0; named && i < ndims && used < size; i++)
    used += (size_t)snprintf(text + used, size - used, "%s%s", i ? " x " : "", names[i]);
  if (named && used < size) used += (size_t)snprintf(text + used, size - used, " (");
  for (int i = 0; i < ndims && used < size; i++)
    used += (size_t)snprintf(text + used, size - used, "%s%lld", i ? " x " : "", dims[i]);
  if (named && used < size) snprintf(text + used, size - used, ")");
}

/* The axis numbers of --axes' comma-separated list; -1 with the message
 * in error. */
static int parse_axes(const char *list, int ndims, int *order, const char *shown, char *error,
                      size_t size) {
  int count = 0;
  const char *p = list;
  while (1) {
    const size_t length = strcspn(p, ",");
    char item[256];
    snprintf(item, sizeof item, "%.*s", (int)(length < 255 ? length : 255), p);
    char *end = NULL;
    const long value = strtol(item, &end, 10);
    if (!item[0] || *end || value < 0 || value >= ndims) {
      snprintf(error, size, "--axes %s: '%s' is not an axis of %s (0 to %d)", list, item, shown,
               ndims - 1);
      return -1;
    }
    if (count == ndims) {
      snprintf(error, size, "--axes %s names more axes than %s has (%d)", list, shown, ndims);
      return -1;
    }
    for (int i = 0; i < count; i++)
      if (order[i] == (int)value) {
        snprintf(error, size, "--axes %s names axis '%s' twice", list, item);
        return -1;
      }
    order[count++] = (int)value;
    if (!p[length]) break;
    p += length + 1;
  }
  if (count != ndims) {
    snprintf(error, size, "--axes %s names %d axes; %s has %d: name each once", list, count, shown,
             ndims);
    return -1;
  }
  return 0;
}

int tool_axes_next_name(const char **p, char *item, size_t size) {
  if (!*p) return 0;
  const size_t length = strcspn(*p, ",");
  snprintf(item, size, "%.*s", (int)(length < size - 1 ? length : size - 1), *p);
  *p = (*p)[length] ? *p + length + 1 : NULL;
  return 1;
}

int tool_axes_by_names(int ndims, const char *const *names, const char *dims, int *order) {
  int places[MAX_AXES], named = 0; /* the input axes dims names, in the input's order */
  int moved[MAX_AXES], count = 0;  /* the same in dims' order */
  for (int i = 0; i < ndims; i++) order[i] = i;
  const char *p = dims;
  char item[256];
  while (tool_axes_next_name(&p, item, sizeof item))
    for (int i = 0; i < ndims && count < MAX_AXES; i++)
      if (names[i] && names[i][0] && strcmp(names[i], item) == 0) {
        moved[count++] = i;
        break;
      }
  for (int i = 0; i < ndims; i++)
    for (int k = 0; k < count; k++)
      if (moved[k] == i) {
        places[named++] = i;
        break;
      }
  for (int k = 0; k < named; k++) order[places[k]] = moved[k];
  return named;
}

int tool_axes_check_names(const char *dims, char *error, size_t error_size) {
  const char *p = dims, *q;
  char item[256], other[256];
  for (int index = 0; tool_axes_next_name(&p, item, sizeof item); index++) {
    if (!item[0]) {
      snprintf(error, error_size, "--dims %s: an empty name", dims);
      return -1;
    }
    q = dims;
    for (int k = 0; k < index && tool_axes_next_name(&q, other, sizeof other); k++)
      if (strcmp(item, other) == 0) {
        snprintf(error, error_size, "--dims %s names '%s' twice", dims, item);
        return -1;
      }
  }
  return 0;
}

int tool_axes_fold(int ndims, const char *const *names, const char *axes, const char *dims,
                   const char *shown, int *split, int *trail, char *error, size_t error_size) {
  int order[MAX_AXES];
  if (ndims < 2 || ndims > MAX_AXES) {
    snprintf(error, error_size, "%s has %d axes", shown, ndims);
    return -1;
  }
  if (!axes && !dims) {
    if (ndims == 2) {
      *split = 1, *trail = 2;
      return 0;
    }
    snprintf(error, error_size,
             "%s is %d-D: give the output's axis order with --dims (by name) or --axes (by "
             "number); reversing them all, numpy's .T, needs two passes over the data, which "
             "xpose does not make yet",
             shown, ndims);
    return -1;
  }
  if (axes && parse_axes(axes, ndims, order, shown, error, error_size)) return -1;
  if (dims && tool_axes_check_names(dims, error, error_size)) return -1;
  if (dims && tool_axes_by_names(ndims, names, dims, order) == 0) {
    char known[512] = "";
    size_t used = 0;
    for (int i = 0; i < ndims && used < sizeof known; i++)
      used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? "," : "",
                               names[i] && names[i][0] ? names[i] : "(unnamed)");
    snprintf(error, error_size, "--dims %s names no axis of %s (its axes: %s)", dims, shown, known);
    return -1;
  }
  /* One run [s, t) moved before [0, s): order = s..t-1, 0..s-1, t..n-1. */
  const int s = order[0];
  int t = s;
  while (t < ndims && t - s < ndims && order[t - s] == t) t++;
  int fits = s > 0 && t > s;
  for (int i = 0; fits && i < s; i++) fits = order[t - s + i] == i;
  for (int i = t; fits && i < ndims; i++) fits = order[i] == i;
  if (fits) {
    *split = s, *trail = t;
    return 0;
  }
  int identity = 1;
  for (int i = 0; i < ndims; i++) identity = identity && order[i] == i;
  if (identity)
    snprintf(error, error_size, "--%s %s keeps every axis of %s in place: nothing to transpose",
             axes ? "axes" : "dims", axes ? axes : dims, shown);
  else
    snprintf(error, error_size,
             "--%s %s: xpose moves one run of adjacent axes in front of the run before it, the "
             "axes after both kept in place ((A,B,C,D) -> (B,C,A,D), (C,D,A,B), ...); this "
             "order needs more than one such move, which xpose does not make yet",
             axes ? "axes" : "dims", axes ? axes : dims);
  return -1;
}
