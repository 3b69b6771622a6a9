/* The rest of an HDF5 file in a Zarr store (zarr_rest.h). */
#include "zarr_rest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_file.h"
#include "filters.h"
#include "h5_compat.h"
#include "zarr_attributes.h"
#include "zarr_meta.h"

/* The arrays' chunks: about this many bytes at most. */
#define CHUNK_BYTES ((uint64_t)4 << 20)

typedef struct {
  hid_t from;
  const char *shown, *store;
  const xio_zarr_codec *codec;
  const xio_path_list *rearranged;
  uint64_t budget;
  int comparing;
  xio_phony_dims *phony;      /* copying */
  xio_zarr_rest_stats *stats; /* copying */
  char *differs;              /* comparing */
  size_t differs_size;
  uint64_t compared;
  xio_codec_scratch *scratch;
  int failed;
  xio_error *err;
} rest_walk;

/* One dataset's array: its description, and a slab of its rows. */
typedef struct {
  hid_t dset, type;
  const char *path;
  xio_zarr_array array;
  int64_t rows, row_values; /* along the first axis; values of one row */
  unsigned char *slab, *chunk, *encoded;
  size_t chunk_bytes, bound;
} rest_array;

/* The chunk shape: whole rows, about 4 MiB of them, the whole array where
 * it is smaller: a coordinate or bounds variable is one file, not one a
 * record as netCDF chunks them (a store of millions of files is what
 * parallel file systems forbid). */
static void chunk_shape(int ndims, const int64_t *dims, size_t type_size, int64_t *chunks) {
  uint64_t row = type_size;
  for (int a = 0; a < ndims; a++) {
    chunks[a] = dims[a] ? dims[a] : 1;
    if (a) row *= (uint64_t)chunks[a];
  }
  const int64_t rows = (int64_t)(CHUNK_BYTES / row);
  if (ndims) chunks[0] = rows < 1 ? 1 : rows < chunks[0] ? rows : chunks[0];
}

/* Local, comparing.  r->array as the store's metadata describes it (its
 * chunks and codecs whatever wrote it), where it holds the dataset's
 * shape and type; else the difference noted, r->array left as the copy
 * would make it (its chunks then read as missing). */
static void as_stored(rest_walk *w, rest_array *r) {
  xio_zarr_array stored;
  xio_error why;
  int same =
      xio_zarr_array_read(r->array.path, r->array.path, &stored, NULL, NULL, NULL, &why) == 0;
  if (same) {
    same = stored.ndims == r->array.ndims && stored.type_size == r->array.type_size &&
           stored.kind == r->array.kind;
    for (int i = 0; same && i < stored.ndims; i++) same = stored.shape[i] == r->array.shape[i];
    if (same)
      r->array = stored;
    else
      snprintf(why.message, sizeof why.message, "is not shaped or typed as %s:%s", w->shown,
               r->path);
  }
  if (!same && !w->differs[0])
    snprintf(w->differs, w->differs_size, "%s (%.900s)", r->path, why.message);
}

/* Local.  The dataset at `path` described as an array of the store. */
static int describe(rest_walk *w, rest_array *r, xio_error *err) {
  const hid_t space = H5Dget_space(r->dset);
  hsize_t dims[XIO_MAX_DIMS] = {0};
  const int ndims = space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
  if (space >= 0) (void)H5Sclose(space); /* only read */
  if (ndims < 0) return xio_fail_h5(err, "%s:%s: cannot read its shape", w->shown, r->path);
  xio_shape shape = {.ndims = ndims};
  for (int a = 0; a < ndims; a++) shape.dims[a] = (int64_t)dims[a];
  int64_t chunks[XIO_MAX_DIMS];
  chunk_shape(ndims, shape.dims, H5Tget_size(r->type), chunks);
  unsigned char fill[16];
  const int has_fill =
      H5Tget_size(r->type) <= sizeof fill && xio_zarr_fill_value(r->dset, r->type, fill);
  char where[4200], why[200];
  snprintf(where, sizeof where, "%s%s", w->store, r->path);
  if (xio_zarr_array_init(&r->array, where, w->codec, r->type, &shape, chunks,
                          has_fill ? fill : NULL, why, sizeof why))
    return xio_fail(err, "%s:%s cannot be stored: %s", w->shown, r->path, why);
  if (w->comparing) as_stored(w, r);
  r->rows = ndims ? shape.dims[0] : 1;
  r->row_values = ndims ? xio_dims_product(shape.dims, 1, ndims) : 1;
  r->chunk_bytes = xio_zarr_chunk_bytes(&r->array);
  r->bound = xio_chunk_encode_bound(&r->array.codecs, r->chunk_bytes);
  return 0;
}

/* Local.  Rows [r0, r0 + n) of the dataset into the slab. */
static int read_rows(rest_walk *w, rest_array *r, int64_t r0, int64_t n, xio_error *err) {
  const int ndims = r->array.ndims;
  if (n * r->row_values == 0) return 0;
  hid_t file_space = H5Dget_space(r->dset), mem_space = H5I_INVALID_HID;
  hsize_t start[XIO_MAX_DIMS] = {0}, count[XIO_MAX_DIMS];
  for (int a = 0; a < ndims; a++) count[a] = (hsize_t)r->array.shape[a];
  if (ndims) start[0] = (hsize_t)r0, count[0] = (hsize_t)n;
  int ok =
      file_space >= 0 &&
      (!ndims || H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL) >= 0) &&
      (mem_space = ndims ? H5Screate_simple(ndims, count, NULL) : H5Screate(H5S_SCALAR)) >= 0 &&
      H5Dread(r->dset, r->type, mem_space, file_space, H5P_DEFAULT, r->slab) >= 0;
  if (mem_space >= 0) (void)H5Sclose(mem_space); /* only read */
  if (file_space >= 0) (void)H5Sclose(file_space);
  return ok ? 0 : xio_fail_h5(err, "%s:%s: reading it failed", w->shown, r->path);
}

/* Chunk `origin` of the slab (rows from r0) gathered whole into
 * r->chunk, what lies past the array's edges its fill value. */
static void gather(rest_array *r, const int64_t *origin, int64_t r0) {
  const xio_zarr_array *a = &r->array;
  const size_t t = a->type_size;
  const int nd = a->ndims, last = nd - 1;
  for (size_t b = 0; b < r->chunk_bytes; b += t) /* the fill value, where any is given */
    memcpy(r->chunk + b, a->fill, t);
  if (nd == 0) return (void)memcpy(r->chunk, r->slab, t);
  int64_t at[XIO_MAX_DIMS] = {0}; /* within the chunk, over every axis but the last */
  const int64_t run = a->chunks[last] < a->shape[last] - origin[last]
                          ? a->chunks[last]
                          : a->shape[last] - origin[last];
  for (;;) {
    int inside = 1;
    int64_t src = 0, dst = 0;
    for (int i = 0; i < nd; i++) {
      const int64_t pos = origin[i] + (i < last ? at[i] : 0);
      inside &= pos < a->shape[i];
      src = src * (i ? a->shape[i] : 1) + (i ? pos : pos - r0);
      dst = dst * a->chunks[i] + (i < last ? at[i] : 0);
    }
    if (inside && run > 0)
      memcpy(r->chunk + (size_t)dst * t, r->slab + (size_t)src * t, (size_t)run * t);
    int i = last - 1; /* the next run: an odometer over the axes before the last */
    while (i >= 0 && at[i] == a->chunks[i] - 1) at[i--] = 0;
    if (i < 0) return;
    at[i]++;
  }
}

/* Chunk `origin` (gathered) written, or compared with what the store holds. */
static int chunk_step(rest_walk *w, rest_array *r, const int64_t *origin, xio_error *err) {
  if (!w->comparing) {
    size_t size = 0;
    if (xio_chunk_encode(&r->array.codecs, r->chunk, r->chunk_bytes, r->encoded, r->bound, &size,
                         w->scratch))
      return xio_fail(err, "compressing a chunk of %s: out of memory", r->path);
    return xio_zarr_put_chunk(&r->array, origin, r->encoded, size, err);
  }
  char path[4400], why[4500] = "";
  const unsigned char *stored = NULL, *values = NULL;
  size_t size = 0;
  int rc = xio_zarr_chunk_path(&r->array, origin, path, sizeof path) ? -1 : 0;
  if (rc == 0)
    rc = xio_chunk_file_read(path, xio_chunk_file_most(&r->array.codecs, r->chunk_bytes),
                             w->scratch, &stored, &size, why, sizeof why);
  if (rc > 0) snprintf(why, sizeof why, "is missing");
  if (rc == 0 && xio_chunk_decode(&r->array.codecs, 0, stored, size, r->chunk_bytes, w->scratch,
                                  &values, why, sizeof why) != 0)
    rc = -1;
  w->compared += r->chunk_bytes;
  if (rc == 0 && memcmp(values, r->chunk, r->chunk_bytes) == 0) return 0;
  if (!w->differs[0])
    snprintf(w->differs, w->differs_size, "%s (its chunk %s %s)", r->path, path,
             why[0] ? why : "holds other values");
  return 0;
}

/* Every chunk of the array, the slab a band of whole chunk rows. */
static int each_chunk(rest_walk *w, rest_array *r, xio_error *err) {
  const xio_zarr_array *a = &r->array;
  const int64_t chunk_rows = a->ndims ? a->chunks[0] : 1;
  const uint64_t row_bytes = (uint64_t)r->row_values * a->type_size;
  int64_t band = (int64_t)(w->budget / (row_bytes ? row_bytes : 1)) / chunk_rows * chunk_rows;
  if (band < chunk_rows) band = chunk_rows;
  if (band > r->rows) band = r->rows ? r->rows : 1;
  if (!(r->slab = malloc((size_t)((uint64_t)band * row_bytes) + a->type_size)) ||
      !(r->chunk = malloc(r->chunk_bytes)) || !(r->encoded = malloc(r->bound)))
    return xio_fail(err, "out of memory copying %s:%s", w->shown, r->path);
  for (int64_t r0 = 0; r0 < (a->ndims ? r->rows : 1); r0 += band) {
    const int64_t n = r0 + band < r->rows ? band : r->rows - r0;
    if (read_rows(w, r, r0, a->ndims ? n : 1, err)) return -1;
    int64_t origin[XIO_MAX_DIMS] = {0};
    origin[0] = r0;
    for (;;) { /* the chunks of the band, an odometer over their origins */
      gather(r, origin, r0);
      if (chunk_step(w, r, origin, err)) return -1;
      int i = a->ndims - 1;
      while (i >= 0 && (origin[i] += a->chunks[i]) >= (i ? a->shape[i] : r0 + n))
        origin[i] = i ? 0 : origin[i], i--;
      if (i < 0) break;
    }
  }
  if (w->stats) w->stats->bytes += (uint64_t)r->rows * row_bytes;
  return 0;
}

/* The metadata of a copied array: its attributes and axis names. */
static int create_array(rest_walk *w, rest_array *r, xio_error *err) {
  char names[XIO_MAX_DIMS][128], *attributes = NULL;
  const int rc =
      xio_zarr_axis_names(r->dset, r->array.ndims, r->array.shape, w->phony->lengths,
                          &w->phony->count, names, err) ||
              xio_zarr_attributes(r->dset, w->codec->format, NULL, r->path, &attributes, err) ||
              xio_zarr_array_create(&r->array, names, attributes, err)
          ? -1
          : 0;
  free(attributes);
  return rc;
}

/* One dataset of the rest copied (or compared). */
static int rest_dataset(rest_walk *w, const char *path, xio_error *err) {
  rest_array r = {.path = path};
  r.dset = H5Dopen2(w->from, path, H5P_DEFAULT);
  r.type = r.dset >= 0 ? H5Dget_type(r.dset) : H5I_INVALID_HID;
  int rc = r.type < 0 ? xio_fail_h5(err, "%s:%s: cannot open it", w->shown, path) : 0;
  if (rc == 0 && xio_is_netcdf_dimension_only(r.dset)) goto done; /* a length, no variable */
  if (rc == 0) rc = describe(w, &r, err);
  if (rc == 0 && !w->comparing) rc = create_array(w, &r, err);
  if (rc == 0) rc = each_chunk(w, &r, err);
  if (rc == 0 && w->stats) w->stats->arrays++;
done:
  free(r.slab), free(r.chunk), free(r.encoded);
  if (r.type >= 0) (void)H5Tclose(r.type); /* only read */
  if (r.dset >= 0) (void)H5Dclose(r.dset);
  return rc;
}

static herr_t visit(hid_t group, const char *name, const xio_link_info *info, void *data);

/* A group's members in the order they were made (netCDF-C keeps it), else
 * by name. */
static int walk_group(rest_walk *w, const char *path) {
  const hid_t group = H5Gopen2(w->from, path[0] ? path : "/", H5P_DEFAULT);
  if (group < 0) return xio_fail_h5(w->err, "%s: cannot open group %s", w->shown, path);
  unsigned order = 0;
  const hid_t gcpl = H5Gget_create_plist(group);
  if (gcpl < 0 || H5Pget_link_creation_order(gcpl, &order) < 0) order = 0;
  if (gcpl >= 0) (void)H5Pclose(gcpl); /* only read */
  hsize_t at = 0;
  struct {
    rest_walk *w;
    const char *path;
  } here = {w, path};
  const herr_t walked =
      XIO_LINK_ITERATE(group, order & H5P_CRT_ORDER_INDEXED ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME,
                       H5_ITER_INC, &at, visit, &here);
  (void)H5Gclose(group); /* only read */
  if (walked < 0 && !w->failed) xio_fail_h5(w->err, "%s: cannot list group %s", w->shown, path);
  return walked < 0 ? -1 : 0;
}

static herr_t visit(hid_t group, const char *name, const xio_link_info *info, void *data) {
  const struct {
    rest_walk *w;
    const char *path;
  } *here = data;
  rest_walk *w = here->w;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", here->path, name);
  if (info->type != H5L_TYPE_HARD) return 0; /* soft and external links: no arrays */
  const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  const H5I_type_t type = object >= 0 ? H5Iget_type(object) : H5I_BADID;
  if (object >= 0) (void)H5Oclose(object); /* only read */
  if (object < 0) {
    w->failed = 1;
    return xio_fail_h5(w->err, "%s: cannot read %s", w->shown, path);
  }
  int rc = 0;
  if (type == H5I_GROUP) {
    char *attributes = NULL, where[8200];
    snprintf(where, sizeof where, "%s%s", w->store, path);
    const hid_t sub = w->comparing ? H5I_INVALID_HID : H5Gopen2(group, name, H5P_DEFAULT);
    if (!w->comparing)
      rc = sub < 0 ? xio_fail_h5(w->err, "%s: cannot open group %s", w->shown, path)
                   : xio_zarr_attributes(sub, w->codec->format, NULL, path, &attributes, w->err) ||
                         xio_zarr_group_create(where, w->codec->format, attributes, w->err);
    if (sub >= 0) (void)H5Gclose(sub); /* only read */
    free(attributes);
    if (rc == 0 && w->stats && !w->comparing) w->stats->groups++;
    if (rc == 0) rc = walk_group(w, path);
  } else if (type == H5I_DATASET && xio_path_index(w->rearranged, path) < 0) {
    rc = rest_dataset(w, path, w->err);
  }
  if (rc) w->failed = 1;
  return rc ? -1 : 0;
}

static int walk(rest_walk *w) {
  if (!(w->scratch = xio_codec_scratch_new())) return xio_fail(w->err, "out of memory");
  const int rc = walk_group(w, "");
  xio_codec_scratch_free(w->scratch);
  return rc;
}

int xio_zarr_copy_rest(hid_t from, const char *shown, const char *store,
                       const xio_zarr_codec *codec, const xio_path_list *rearranged,
                       uint64_t budget, xio_phony_dims *phony, xio_zarr_rest_stats *stats,
                       xio_error *err) {
  memset(stats, 0, sizeof *stats);
  rest_walk w = {.from = from,
                 .shown = shown,
                 .store = store,
                 .codec = codec,
                 .rearranged = rearranged,
                 .budget = budget,
                 .phony = phony,
                 .stats = stats,
                 .err = err};
  return walk(&w);
}

int xio_zarr_compare_rest(hid_t from, const char *shown, const char *store,
                          const xio_zarr_codec *codec, const xio_path_list *rearranged,
                          uint64_t budget, char *differs, size_t differs_size, uint64_t *compared,
                          xio_error *err) {
  differs[0] = '\0';
  rest_walk w = {.from = from,
                 .shown = shown,
                 .store = store,
                 .codec = codec,
                 .rearranged = rearranged,
                 .budget = budget,
                 .comparing = 1,
                 .differs = differs,
                 .differs_size = differs_size,
                 .err = err};
  const int rc = walk(&w);
  *compared = w.compared;
  return rc;
}
