#include "h5_storage.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

static int parse_level(const char *text, int *level) {
  if (!*text) return 0; /* keeps the default */
  char *end = NULL;
  const long value = *text == '=' ? strtol(text + 1, &end, 10) : -1;
  if (!end || *end || end == text + 1 || value < 1 || value > 9) return -1;
  *level = (int)value;
  return 0;
}

int xio_storage_parse_layout(const char *text, xio_storage *storage) {
  storage->chunk_ndims = 0;
  if (strcmp(text, "contiguous") == 0) {
    storage->layout = XIO_LAYOUT_CONTIGUOUS;
    return 0;
  }
  if (strncmp(text, "chunked", 7) != 0) return -1;
  storage->layout = XIO_LAYOUT_CHUNKED;
  if (text[7] == '\0') return 0;
  if (text[7] != '=') return -1;
  for (const char *p = text + 8;; p++) {
    char *end = NULL;
    const long long length = strtoll(p, &end, 10);
    if (end == p || *p == '-' || *p == '+' || length < 1 || length > (1ll << 32) ||
        storage->chunk_ndims == XIO_MAX_DIMS || (*end && *end != 'x'))
      return storage->chunk_ndims = 0, -1;
    storage->chunk_dims[storage->chunk_ndims++] = length;
    if (!*end) return 0;
    p = end;
  }
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

/* A filter's name: the codecs' table's (codec.h), else HDF5's. */
static const char *filter_name(H5Z_filter_t id, const char *name) {
  const xio_codec *c = xio_codec_of(id);
  return c ? c->name : name[0] ? name : "an unnamed filter";
}

/* Whether parallel HDF5 can write id's chunks (not szip's: codec.h). */
static int can_encode(H5Z_filter_t id) {
  const xio_codec *c = xio_codec_of(id);
  unsigned info = 0;
  return !(c && c->parallel_hdf5_fails) && H5Zfilter_avail(id) > 0 &&
         H5Zget_filter_info(id, &info) >= 0 && (info & H5Z_FILTER_CONFIG_ENCODE_ENABLED);
}

/* The input's filters, in order, onto dcpl. */
static int copy_filters(const xio_storage_like *like, hid_t from, hid_t dcpl, const char *shown,
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
                      xio_codec_of(id) && xio_codec_of(id)->parallel_hdf5_fails ? " reliably" : "");
    if (H5Pset_filter(dcpl, id, flags, count, values) < 0)
      return xio_fail_h5(err, "%s: cannot set up %s like the input's", shown,
                         filter_name(id, name));
  }
  return 0;
}

/* Chunks of about 1 MiB for N axes: whole trailing axes while they fit,
 * then part of the next, the leading ones 1 value thick. */
static void chosen_chunk_nd(const xio_shape *shape, size_t type_size, hsize_t *chunk) {
  uint64_t bytes = type_size;
  for (int i = shape->ndims - 1; i >= 0; i--) {
    const uint64_t room = bytes < (1u << 20) ? (1u << 20) / bytes : 1;
    chunk[i] = (hsize_t)(room < (uint64_t)shape->dims[i] ? room : (uint64_t)shape->dims[i]);
    if (chunk[i] == 0) chunk[i] = 1;
    bytes *= chunk[i];
  }
}

/* chunk[a..b) covering `extent` flattened positions of dims[a..b):
 * trailing axes whole while they fit, then part of the next, the leading
 * ones 1 value thick. */
static void fill_group(const int64_t *dims, int a, int b, int64_t extent, hsize_t *chunk) {
  for (int i = b - 1; i >= a; i--) {
    const int64_t take = extent < dims[i] ? extent : dims[i];
    chunk[i] = (hsize_t)(take > 0 ? take : 1);
    extent = take == dims[i] && dims[i] > 0 ? extent / dims[i] : 1;
  }
}

/* The side of the chunks along the first of the output's rows' axes,
 * `axis` long, on `ranks` ranks, where the square side would be `square`;
 * 0 for the square's.  Each rank compresses whole chunks of a pass, its
 * share of the pass's rows in whole chunks of that axis
 * (xpose_config.output_row_unit), so the side divides the ranks' even
 * share of the axis, if one of at least a quarter of the square side does
 * (the next axes then make up the chunk's size): 45 latitudes a rank took
 * 15 x 96 chunks, not 38 x 38 across the ranks' border (before the codec,
 * HDF5 gathered such a chunk to one rank to compress: the run took 12%
 * more time).  Where the share is uneven, the side is it, or where that
 * is over the square side, the share of k times as many ranks (each then
 * takes k): 181 latitudes on 16 ranks take 12 x 20 x 1095 chunks, one to a
 * rank, not 15 x 16, whose 13 bands leave three ranks nothing to
 * compress. */
static int64_t first_axis_side(int64_t axis, int64_t ranks, double square) {
  if (axis % ranks == 0) {
    const int64_t share = axis / ranks;
    int64_t side = square < (double)share ? (int64_t)square : share;
    while (side > 1 && share % side != 0) side--;
    if (side >= square / 4 || side == share) return side;
  }
  const int64_t per_rank = (axis + ranks - 1) / ranks;
  const int64_t k = square >= 1 ? (int64_t)ceil((double)per_rank / square) : per_rank;
  const int64_t side = (per_rank + k - 1) / k;
  return k == 1 || (double)side >= square / 4 ? side : 0;
}

/* Chunks shaped for the output's order (a chunked input's default), of
 * about `target` bytes: the axes inside the elements whole; along the
 * columns (the input's rows, now last: a time series' time) as far as a
 * pass reaches, so that each chunk is written whole by one pass and every
 * input chunk is read once; then along the rows, as square as the shape
 * allows where passes span every row, else whole trailing axes within a
 * pass; the leading axes (one matrix per position) 1 value thick. */
static void chunk_for_output(const xio_shape *shape, size_t type_size, uint64_t target,
                             int64_t pass_rows, int64_t pass_cols, int pass_ranks, hsize_t *chunk) {
  const int64_t *dims = shape->dims;
  const int lead = shape->lead, split = shape->split, trail = shape->trail;
  uint64_t bytes = type_size;
  for (int i = 0; i < lead; i++) chunk[i] = 1;
  for (int i = trail; i < shape->ndims; i++) {
    chunk[i] = (hsize_t)(dims[i] > 0 ? dims[i] : 1);
    bytes *= chunk[i];
  }
  uint64_t room = bytes < target ? target / bytes : 1;
  fill_group(dims, split, trail, (int64_t)room < pass_cols ? (int64_t)room : pass_cols, chunk);
  for (int i = split; i < trail; i++) bytes *= chunk[i];
  room = bytes < target ? target / bytes : 1;
  int64_t rows = 1; /* of one matrix */
  for (int i = lead; i < split; i++) rows *= dims[i];
  if (pass_rows < rows) {
    fill_group(dims, lead, split, (int64_t)room < pass_rows ? (int64_t)room : pass_rows, chunk);
    return;
  }
  double left = (double)room;
  int first = lead; /* the first axis left to shape */
  const double square = ceil(pow(left, 1.0 / (split - lead)));
  const int64_t lead_side = pass_ranks > 1 ? first_axis_side(dims[lead], pass_ranks, square) : 0;
  if (lead_side > 0) {
    chunk[lead] = (hsize_t)lead_side;
    left /= (double)lead_side;
    first = lead + 1;
  }
  for (int i = split - 1; i >= first; i--) {
    double side = ceil(pow(left, 1.0 / (i + 1 - first)));
    if (side > (double)dims[i]) side = (double)dims[i];
    chunk[i] = (hsize_t)(side >= 1 ? side : 1);
    left /= (double)chunk[i];
  }
}

int xio_storage_apply(const xio_storage_like *like, const xio_storage *storage,
                      const xio_shape *shape, size_t type_size, hid_t dcpl, const char *shown,
                      xio_error *err) {
  const int new_filter = storage->filter == XIO_FILTER_GZIP ||
                         storage->filter == XIO_FILTER_SHUFFLE_GZIP ||
                         storage->filter == XIO_FILTER_SZIP;
  if (new_filter && storage->layout == XIO_LAYOUT_CONTIGUOUS)
    return xio_fail(err, "a compressed output must be chunked: --filter needs --layout chunked");
  const int input_chunked = like && like->chunked && like->shape.ndims == shape->ndims;
  const int chunked = storage->layout == XIO_LAYOUT_CHUNKED || new_filter ||
                      (storage->layout == XIO_LAYOUT_AS_INPUT && input_chunked);
  if (!chunked)
    return H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0 ||
                   H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0
               ? xio_fail_h5(err, "cannot set up the output's layout")
               : 0;
  hid_t from = input_chunked ? H5Dget_create_plist(like->dset) : H5I_INVALID_HID;
  hsize_t chunk[XIO_MAX_DIMS] = {0};
  int rc =
      input_chunked && from < 0 ? xio_fail_h5(err, "%s: cannot read its layout", like->dataset) : 0;
  const int n = shape->ndims;
  if (storage->chunk_ndims > 0 && n != storage->chunk_ndims) {
    rc = xio_fail(err, "the chunks asked for have %d axes, and %s has %d", storage->chunk_ndims,
                  shown, n);
  } else if (storage->chunk_ndims > 0) {
    for (int i = 0; i < n; i++) chunk[i] = (hsize_t)storage->chunk_dims[i];
  } else if (input_chunked && storage->pass_cols > 0) {
    /* the input's chunk size, never under 1 MiB, shaped for the output */
    uint64_t target = like->type_size;
    for (int i = 0; i < n; i++) target *= (uint64_t)like->chunk_dims[i];
    if (target < ((uint64_t)1 << 20)) target = (uint64_t)1 << 20;
    if (target > ((uint64_t)64 << 20)) target = (uint64_t)64 << 20;
    chunk_for_output(shape, type_size, target, storage->pass_rows, storage->pass_cols,
                     storage->pass_ranks, chunk);
  } else if (input_chunked) { /* the input's chunk, its axes moved as the data's */
    for (int i = 0; i < n; i++)
      chunk[i] = (hsize_t)like->chunk_dims[xio_shape_source_axis(&like->shape, i)];
  } else if (n == 2) {
    chosen_chunk(shape->dims[0], shape->dims[1], type_size, chunk);
  } else {
    chosen_chunk_nd(shape, type_size, chunk);
  }
  /* Each pass writes one position of the leading axes (h5_matrix.h): a
   * chunk across several would be written in parts, by several passes,
   * which HDF5 1.10 gets wrong for compressed chunks across a resume
   * (passes.h). */
  for (int i = 0; i < shape->lead; i++) chunk[i] = 1;
  double bytes = (double)type_size;
  for (int i = 0; i < n; i++) {
    if (chunk[i] > (hsize_t)shape->dims[i]) chunk[i] = (hsize_t)shape->dims[i];
    if (chunk[i] == 0) chunk[i] = 1; /* an axis of no records yet: chunks wait for them */
    bytes *= (double)chunk[i];
  }
  if (rc == 0 && bytes >= 4294967296.0)
    rc = xio_fail(err, "chunks of %.0f bytes reach HDF5's limit of 4 GiB per chunk", bytes);
  if (rc == 0 && H5Pset_chunk(dcpl, n, chunk) < 0)
    rc = xio_fail_h5(err, "cannot set chunks of %llu x %llu%s", (unsigned long long)chunk[0],
                     (unsigned long long)chunk[1], n > 2 ? " x ..." : "");
  if (rc == 0 && storage->filter == XIO_FILTER_AS_INPUT && input_chunked)
    rc = copy_filters(like, from, dcpl, shown, err);
  if (rc == 0 && storage->filter == XIO_FILTER_SZIP) /* see can_encode */
    rc = xio_fail(err,
                  "parallel HDF5 cannot write szip reliably (chunks written in parallel by "
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

void xio_describe_dcpl(hid_t dcpl, char *text, size_t size) {
  hsize_t chunk[XIO_MAX_DIMS] = {0};
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  int used = 0;
  const int n = layout == H5D_CHUNKED ? H5Pget_chunk(dcpl, XIO_MAX_DIMS, chunk) : -1;
  if (n > 0) {
    used = snprintf(text, size, "chunked");
    for (int i = 0; i < n && used >= 0 && (size_t)used < size; i++)
      used += snprintf(text + used, size - (size_t)used, "%s%llu", i ? " x " : " ",
                       (unsigned long long)chunk[i]);
  } else
    used = snprintf(text, size, "%s", layout == H5D_COMPACT ? "compact" : "contiguous");
  const int filters = H5Pget_nfilters(dcpl);
  for (int i = 0; i < filters && used >= 0 && (size_t)used < size; i++) {
    unsigned flags = 0, config = 0, values[8];
    size_t count = 8;
    char name[64] = "";
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl, (unsigned)i, &flags, &count, values, sizeof name, name, &config);
    const char *known = filter_name(id, name);
    const xio_codec *c = xio_codec_of(id);
    if (c && c->settings == XIO_SETTINGS_LEVEL && count > 0)
      used +=
          snprintf(text + used, size - (size_t)used, "%s%s=%u", i ? "+" : ", ", known, values[0]);
    else
      used += snprintf(text + used, size - (size_t)used, "%s%s", i ? "+" : ", ", known);
  }
}
