#include "path_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xio_path_index(const xio_path_list *list, const char *path) {
  const char *relative = path[0] == '/' ? path + 1 : path;
  for (int i = 0; i < list->count; i++) {
    const char *listed = list->paths[i][0] == '/' ? list->paths[i] + 1 : list->paths[i];
    if (strcmp(relative, listed) == 0) return i;
  }
  return -1;
}

int xio_path_array_add(xio_path_array *a, const char *path) {
  if (a->count == a->capacity) {
    const int larger = a->capacity ? 2 * a->capacity : 16;
    void *bigger = realloc(a->paths, sizeof *a->paths * (size_t)larger);
    if (!bigger) return -1;
    a->paths = bigger;
    a->capacity = larger;
  }
  const int written =
      snprintf(a->paths[a->count], sizeof *a->paths, "%s%s", path[0] == '/' ? "" : "/", path);
  if (written < 0 || written >= (int)sizeof *a->paths) return -1;
  a->count++;
  return 0;
}

void xio_path_array_free(xio_path_array *a) {
  free(a->paths);
  *a = (xio_path_array){NULL, 0, 0};
}
