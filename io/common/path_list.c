#include "path_list.h"

#include <string.h>

int xio_path_index(const xio_path_list *list, const char *path) {
  const char *relative = path[0] == '/' ? path + 1 : path;
  for (int i = 0; i < list->count; i++) {
    const char *listed = list->paths[i][0] == '/' ? list->paths[i] + 1 : list->paths[i];
    if (strcmp(relative, listed) == 0) return i;
  }
  return -1;
}
