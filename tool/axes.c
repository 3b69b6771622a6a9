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

/* The axis numbers of a comma-separated list, each by parse_one; -1 with
 * the message in error. */
static int parse_list(const char *list, int ndims, const char *const *names, int by_name,
                      int *order, const char *shown, char *error, size_t size) {
  int count = 0;
  const char *p = list;
  while (1) {
    const size_t length = strcspn(p, ",");
    char item[256];
    snprintf(item, sizeof item, "%.*s", (int)(length < 255 ? length : 255), p);
    int axis = -1;
    if (by_name) {
      for (int i = 0; i < ndims && axis < 0; i++)
        if (names[i] && strcmp(names[i], item) == 0) axis = i;
      if (axis < 0) {
        char known[512] = "";
        size_t used = 0;
        for (int i = 0; i < ndims && used < sizeof known; i++)
          used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? "," : "",
                                   names[i] && names[i][0] ? names[i] : "(unnamed)");
        snprintf(error, size, "--dims %s: %s has no axis named '%s' (its axes: %s)", list, shown,
                 item, known);
        return -1;
      }
    } else {
      char *end = NULL;
      const long value = strtol(item, &end, 10);
      if (!item[0] || *end || value < 0 || value >= ndims) {
        snprintf(error, size, "--axes %s: '%s' is not an axis of %s (0 to %d)", list, item, shown,
                 ndims - 1);
        return -1;
      }
      axis = (int)value;
    }
    if (count == ndims) {
      snprintf(error, size, "--%s %s names more axes than %s has (%d)", by_name ? "dims" : "axes",
               list, shown, ndims);
      return -1;
    }
    for (int i = 0; i < count; i++)
      if (order[i] == axis) {
        snprintf(error, size, "--%s %s names axis '%s' twice", by_name ? "dims" : "axes", list,
                 item);
        return -1;
      }
    order[count++] = axis;
    if (!p[length]) break;
    p += length + 1;
  }
  if (count != ndims) {
    snprintf(error, size, "--%s %s names %d axes; %s has %d: name each once",
             by_name ? "dims" : "axes", list, count, shown, ndims);
    return -1;
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
  if (parse_list(axes ? axes : dims, ndims, names, dims != NULL, order, shown, error, error_size))
    return -1;
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
