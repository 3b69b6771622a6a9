/* Zarr v2's consolidated metadata (zarr_consolidate.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "zarr_consolidate.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarr_json.h"

/* nftw's callbacks take no argument: the walk in progress. */
static struct {
  xio_json *json;
  size_t root_length;
  int failed;
} walk;

/* A metadata file's text (malloc'd), NULL where it cannot be read. */
static char *read_text(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char *text = NULL;
  size_t length = 0;
  if (fseek(f, 0, SEEK_END) == 0 && (length = (size_t)ftell(f)) < ((size_t)1 << 30) &&
      fseek(f, 0, SEEK_SET) == 0 && (text = malloc(length + 1)) &&
      fread(text, 1, length, f) == length)
    text[length] = '\0';
  else
    free(text), text = NULL;
  fclose(f);
  return text;
}

static int add_metadata(const char *path, const struct stat *st, int type, struct FTW *at) {
  (void)st;
  const char *name = path + at->base;
  if (type != FTW_F || (strcmp(name, ".zgroup") != 0 && strcmp(name, ".zarray") != 0 &&
                        strcmp(name, ".zattrs") != 0))
    return 0;
  char *text = read_text(path);
  if (!text) return walk.failed = errno ? errno : EIO, 1;
  xio_json_key(walk.json, path + walk.root_length + 1); /* "tas/.zarray" */
  xio_json_raw(walk.json, text);
  free(text);
  return 0;
}

int xio_zarr_consolidate(const char *path, xio_error *err) {
  xio_json json;
  xio_json_init(&json);
  xio_json_open(&json, '{');
  xio_json_key(&json, "metadata");
  xio_json_open(&json, '{');
  walk.json = &json, walk.root_length = strlen(path), walk.failed = 0;
  const int walked = nftw(path, add_metadata, 16, FTW_PHYS);
  xio_json_close(&json, '}');
  xio_json_key(&json, "zarr_consolidated_format");
  xio_json_int(&json, 1);
  xio_json_close(&json, '}');
  int rc = walked != 0 || json.failed ? xio_fail(err, "cannot consolidate %s's metadata: %s", path,
                                                 strerror(walk.failed   ? walk.failed
                                                          : json.failed ? ENOMEM
                                                                        : errno))
                                      : 0;
  char file[4200];
  snprintf(file, sizeof file, "%s/.zmetadata", path);
  FILE *f = rc == 0 ? fopen(file, "w") : NULL;
  if (rc == 0 && (!f || fputs(json.text, f) < 0 || fputc('\n', f) == EOF))
    rc = xio_fail(err, "cannot write %s: %s", file, strerror(errno));
  if (f && fclose(f) != 0 && rc == 0)
    rc = xio_fail(err, "cannot write %s: %s", file, strerror(errno));
  xio_json_free(&json);
  return rc;
}
