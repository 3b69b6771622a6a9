/* The chunk files an array has, from one listing of its directory
 * (zarr_array.h: xio_zarr_list_chunks). */
#define _DEFAULT_SOURCE /* d_type */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarr_array.h"

typedef struct {
  const xio_zarr_array *a;
  int64_t grid[XIO_MAX_DIMS];
  int64_t *numbers, count, room;
} listing;

/* The number (C order over the grid) of the chunk whose key is `key`
 * (relative to the array's directory, '/' between directories), or -1
 * where it is no chunk key of the array. */
static int64_t key_number(const listing *l, const char *key) {
  const xio_zarr_array *a = l->a;
  if (a->key_prefix) {
    if (key[0] != 'c' || (key[1] && key[1] != a->separator) || (!key[1] && a->ndims)) return -1;
    key += key[1] ? 2 : 1;
  }
  if (a->ndims == 0) return a->key_prefix || strcmp(key, "0") == 0 ? 0 : -1;
  int64_t number = 0;
  for (int i = 0; i < a->ndims; i++) {
    char *end = NULL;
    if (key[0] < '0' || key[0] > '9' || (key[0] == '0' && key[1] >= '0' && key[1] <= '9'))
      return -1; /* digits alone, as Zarr writes them */
    const unsigned long long q = strtoull(key, &end, 10);
    if (q >= (unsigned long long)l->grid[i] || (*end && *end != a->separator) ||
        (!*end && i < a->ndims - 1) || (*end && i == a->ndims - 1))
      return -1;
    number = number * l->grid[i] + (int64_t)q;
    key = *end ? end + 1 : end;
  }
  return number;
}

static int add(listing *l, int64_t number) {
  if (l->count == l->room) {
    const int64_t room = l->room ? 2 * l->room : 256;
    int64_t *more = realloc(l->numbers, sizeof *more * (size_t)room);
    if (!more) return -1;
    l->numbers = more, l->room = room;
  }
  l->numbers[l->count++] = number;
  return 0;
}

/* The directory `dir` (key `prefix` below the array's), `depth` levels
 * of it at most: -1 where one cannot be read (the chunks under it would
 * seem missing: the listing is then not used), 0 where `dir` is a file. */
static int walk(listing *l, const char *dir, const char *prefix, int depth) {
  DIR *d = opendir(dir);
  if (!d) return errno == ENOTDIR ? 0 : -1;
  int rc = 0;
  errno = 0;
  for (struct dirent *e; rc == 0 && (e = readdir(d)); errno = 0) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, "zarr.json") == 0) continue;
    char key[4400], path[8800];
    snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "/" : "", e->d_name);
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    const int64_t number = key_number(l, key);
    if (number >= 0)
      rc = add(l, number);
    else if (depth > 1 && (e->d_type == DT_DIR || e->d_type == DT_LNK || e->d_type == DT_UNKNOWN))
      rc = walk(l, path, key, depth - 1);
  }
  if (rc == 0 && errno) rc = -1; /* readdir failed: entries may be missing */
  closedir(d);
  return rc;
}

static int by_number(const void *x, const void *y) {
  const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return a < b ? -1 : a > b;
}

int xio_zarr_list_chunks(const xio_zarr_array *a, int64_t **numbers, int64_t *count) {
  listing l = {.a = a};
  for (int i = 0; i < a->ndims; i++)
    l.grid[i] = a->chunks[i] ? (a->shape[i] + a->chunks[i] - 1) / a->chunks[i] : 0;
  const int depth = a->separator == '/' ? a->ndims + 1 : 2;
  *numbers = NULL, *count = 0;
  if (walk(&l, a->path, "", depth)) {
    free(l.numbers);
    return -1;
  }
  qsort(l.numbers, (size_t)l.count, sizeof *l.numbers, by_number);
  *numbers = l.numbers, *count = l.count;
  return 0;
}
