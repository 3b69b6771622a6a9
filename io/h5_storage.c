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

/* Chunks of about 1 MiB, square where the shape allows. */
static void chosen_chunk(int64_t rows, int64_t cols, size_t elem_size, hsize_t chunk[2]) {
  uint64_t side = 1;
  while ((2 * side) * (2 * side) * elem_size <= (1u << 20)) side *= 2;
  chunk[0] = side;
  chunk[1] = side;
  if ((int64_t)chunk[0] > rows) chunk[1] = side * side / (uint64_t)rows;
  if ((int64_t)chunk[1] > cols) chunk[0] = side * side / (uint64_t)cols;
  chunk[0] = chunk[0] < (hsize_t)rows ? chunk[0] : (hsize_t)rows;
  chunk[1] = chunk[1] < (hsize_t)cols ? chunk[1] : (hsize_t)cols;
}

static const char *filter_name(H5Z_filter_t id, const char *name) {
  return id == H5Z_FILTER_DEFLATE      ? "gzip"
         : id == H5Z_FILTER_SZIP       ? "szip"
         : id == H5Z_FILTER_SHUFFLE    ? "shuffle"
         : id == H5Z_FILTER_FLETCHER32 ? "fletcher32"
         : name[0]                     ? name
                                       : "an unnamed filter";
}

/* Whether parallel HDF5 can write id's chunks.  Not szip: HDF5 1.10.8's
 * parallel writes of szip chunks (libaec) read back as "szip_filter:
 * decompression failed" even on one rank, where h5repack's serial ones
 * read fine. */
static int can_encode(H5Z_filter_t id) {
  unsigned info = 0;
  return id != H5Z_FILTER_SZIP && H5Zfilter_avail(id) > 0 && H5Zget_filter_info(id, &info) >= 0 &&
         (info & H5Z_FILTER_CONFIG_ENCODE_ENABLED);
}

/* The input's filters, in order, onto dcpl. */
static int copy_filters(const xio_matrix *like, hid_t from, hid_t dcpl, const char *shown,
                        xio_error *err) {
  const int filters = H5Pget_nfilters(from);
  if (filters < 0) return xio_fail_h5(err, "%s: cannot read its filters", like->dataset);
  for (int i = 0; i < filters; i++) {
    unsigned flags = 0, config = 0, values[32];
    size_t count = 32;
    char name[128] = "";
    const H5Z_filter_t id =
        H5Pget_filter2(from, (unsigned)i, &flags, &count, values, sizeof name, name, &config);
    if (id < 0) return xio_fail_h5(err, "%s: cannot read its filters", like->dataset);
    if (!can_encode(id))
      return xio_fail(err,
                      "%s is stored with %s, which parallel HDF5 cannot write%s: choose the "
                      "output's compression with --filter none, gzip or shuffle+gzip",
                      like->dataset, filter_name(id, name),
                      id == H5Z_FILTER_SZIP ? " reliably" : "");
    if (H5Pset_filter(dcpl, id, flags, count, values) < 0)
      return xio_fail_h5(err, "%s: cannot set up %s like the input's", shown,
                         filter_name(id, name));
  }
  return 0;
}

int xio_storage_apply(const xio_matrix *like, const xio_storage *storage, int64_t rows,
                      int64_t cols, size_t elem_size, hid_t dcpl, const char *shown,
                      xio_error *err) {
  const int new_filter = storage->filter == XIO_FILTER_GZIP ||
                         storage->filter == XIO_FILTER_SHUFFLE_GZIP ||
                         storage->filter == XIO_FILTER_SZIP;
  if (new_filter && storage->layout == XIO_LAYOUT_CONTIGUOUS)
    return xio_fail(err, "a compressed output must be chunked: --filter needs --layout chunked");
  const int input_chunked = like && like->chunked;
  int chunked = storage->layout == XIO_LAYOUT_CHUNKED || new_filter ||
                (storage->layout == XIO_LAYOUT_AS_INPUT && input_chunked);
  if (rows == 0 || cols == 0) chunked = 0; /* no elements, nothing to chunk */
  if (!chunked)
    return H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0 ||
                   H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0
               ? xio_fail_h5(err, "cannot set up the output's layout")
               : 0;
  hid_t from = input_chunked ? H5Dget_create_plist(like->dset) : H5I_INVALID_HID;
  hsize_t chunk[2] = {0, 0}, input_chunk[2];
  int rc = input_chunked && from < 0 ? xio_fail_h5(err, "%s: cannot read its layout", like->dataset)
                                     : 0;
  if (storage->chunk_rows > 0) {
    chunk[0] = (hsize_t)storage->chunk_rows;
    chunk[1] = (hsize_t)storage->chunk_cols;
  } else if (rc == 0 && input_chunked && H5Pget_chunk(from, 2, input_chunk) == 2) {
    chunk[0] = input_chunk[1]; /* the input's chunk, transposed */
    chunk[1] = input_chunk[0];
  } else {
    chosen_chunk(rows, cols, elem_size, chunk);
  }
  if (chunk[0] > (hsize_t)rows) chunk[0] = (hsize_t)rows;
  if (chunk[1] > (hsize_t)cols) chunk[1] = (hsize_t)cols;
  if (rc == 0 && (double)chunk[0] * (double)chunk[1] * (double)elem_size >= 4294967296.0)
    rc = xio_fail(err, "chunks of %llu x %llu elements reach HDF5's limit of 4 GiB per chunk",
                  (unsigned long long)chunk[0], (unsigned long long)chunk[1]);
  if (rc == 0 && H5Pset_chunk(dcpl, 2, chunk) < 0)
    rc = xio_fail_h5(err, "cannot set chunks of %llu x %llu", (unsigned long long)chunk[0],
                     (unsigned long long)chunk[1]);
  if (rc == 0 && storage->filter == XIO_FILTER_AS_INPUT && input_chunked)
    rc = copy_filters(like, from, dcpl, shown, err);
  if (rc == 0 && storage->filter == XIO_FILTER_SZIP) /* see can_encode */
    rc = xio_fail(err, "parallel HDF5 cannot write szip reliably (chunks written in parallel by "
                       "HDF5 1.10 do not read back): choose --filter gzip or shuffle+gzip");
  if (rc == 0 &&
      ((storage->filter == XIO_FILTER_SHUFFLE_GZIP && H5Pset_shuffle(dcpl) < 0) ||
       ((storage->filter == XIO_FILTER_GZIP || storage->filter == XIO_FILTER_SHUFFLE_GZIP) &&
        H5Pset_deflate(dcpl, (unsigned)storage->gzip_level) < 0)))
    rc = xio_fail_h5(err, "cannot set up the output's compression");
  /* Unfiltered chunks are all allocated at once (so that space can be
   * reserved); filtered ones as they are written, their size unknown. */
  if (rc == 0 && H5Pget_nfilters(dcpl) == 0 && H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0)
    rc = xio_fail_h5(err, "cannot set up the output's layout");
  if (from >= 0) (void)H5Pclose(from); /* only read from */
  return rc;
}

void xio_describe_storage(const xio_matrix *m, char *text, size_t size) {
  snprintf(text, size, "unknown");
  const hid_t dcpl = H5Dget_create_plist(m->dset);
  if (dcpl < 0) return;
  xio_describe_dcpl(dcpl, text, size);
  (void)H5Pclose(dcpl); /* only read */
}

void xio_describe_dcpl(hid_t dcpl, char *text, size_t size) {
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
    const char *known = filter_name(id, name);
    if (id == H5Z_FILTER_DEFLATE && count > 0)
      used += snprintf(text + used, size - (size_t)used, "%s%s=%u", i ? "+" : ", ", known,
                       values[0]);
    else
      used += snprintf(text + used, size - (size_t)used, "%s%s", i ? "+" : ", ", known);
  }
}
