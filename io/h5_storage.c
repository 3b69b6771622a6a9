#include "h5_storage.h"

#include "h5_matrix.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_level(const char *text, int *level) {
  if (!*text) return 0; /* keeps the default */
  char *end = NULL;
  const long value = *text == '=' ? strtol(text + 1, &end, 10) : -1;
  if (!end || *end || end == text + 1 || value < 1 || value > 9) return -1;
  *level = (int)value;
  return 0;
}

int xio_storage_parse_layout(const char *text, xio_storage *storage) {
  storage->chunk_rows = storage->chunk_cols = 0;
  if (strcmp(text, "contiguous") == 0) {
    storage->layout = XIO_LAYOUT_CONTIGUOUS;
    return 0;
  }
  if (strncmp(text, "chunked", 7) != 0) return -1;
  storage->layout = XIO_LAYOUT_CHUNKED;
  if (text[7] == '\0') return 0;
  long long rows = 0, cols = 0;
  char tail = 0;
  if (sscanf(text + 7, "=%lldx%lld%c", &rows, &cols, &tail) != 2 || rows < 1 || cols < 1 ||
      rows > (1ll << 32) || cols > (1ll << 32))
    return -1;
  storage->chunk_rows = rows;
  storage->chunk_cols = cols;
  return 0;
}

int xio_storage_parse_filter(const char *text, xio_storage *storage) {
  storage->gzip_level = 4; /* h5repack's and netCDF's usual middle ground */
  if (strcmp(text, "none") == 0) {
    storage->filter = XIO_FILTER_NONE;
    return 0;
  }
  if (strcmp(text, "szip") == 0) {
    storage->filter = XIO_FILTER_SZIP;
    return 0;
  }
  if (strncmp(text, "gzip", 4) == 0) {
    storage->filter = XIO_FILTER_GZIP;
    return parse_level(text + 4, &storage->gzip_level);
  }
  if (strncmp(text, "shuffle+gzip", 12) == 0) {
    storage->filter = XIO_FILTER_SHUFFLE_GZIP;
    return parse_level(text + 12, &storage->gzip_level);
  }
  return -1;
}

void xio_describe_storage(const xio_matrix *m, char *text, size_t size) {
  snprintf(text, size, "unknown");
  const hid_t dcpl = H5Dget_create_plist(m->dset);
  if (dcpl < 0) return;
  hsize_t chunk[2] = {0, 0};
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  int used = 0;
  if (layout == H5D_CHUNKED && H5Pget_chunk(dcpl, 2, chunk) == 2)
    used = snprintf(text, size, "chunked %llu x %llu", (unsigned long long)chunk[0],
                    (unsigned long long)chunk[1]);
  else
    used = snprintf(text, size, "%s", layout == H5D_COMPACT ? "compact" : "contiguous");
  const int filters = H5Pget_nfilters(dcpl);
  for (int i = 0; i < filters && used >= 0 && (size_t)used < size; i++) {
    unsigned flags = 0, config = 0, values[8];
    size_t count = 8;
    char name[64] = "";
    const H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &count, values, sizeof name,
                                           name, &config);
    const char *known = id == H5Z_FILTER_DEFLATE      ? "deflate"
                        : id == H5Z_FILTER_SHUFFLE    ? "shuffle"
                        : id == H5Z_FILTER_FLETCHER32 ? "fletcher32"
                        : id == H5Z_FILTER_SZIP       ? "szip"
                                                      : name[0] ? name : "filter";
    if (id == H5Z_FILTER_DEFLATE && count > 0)
      used += snprintf(text + used, size - (size_t)used, "%s%s(%u)", i ? "+" : ", ", known,
                       values[0]);
    else
      used += snprintf(text + used, size - (size_t)used, "%s%s", i ? "+" : ", ", known);
  }
  (void)H5Pclose(dcpl); /* only read */
}
