/* A Zarr array's values read from its chunk files (zarr_source.h). */
#include "zarr_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_file.h"
#include "chunk_reader.h"
#include "zarr_meta.h"

typedef struct {
  xio_zarr_array array;
  xio_chunk_files files; /* of array */
  xio_chunk_index *index;
  char shown[4700];
} store_array;

static int read_store(void *state, const xio_matrix *m, int64_t row, int64_t nrows, int64_t col,
                      int64_t ncols, void *buf, xio_error *err) {
  store_array *s = state;
  if (xio_chunk_index_build(s->index, m->comm, H5I_INVALID_HID, H5I_INVALID_HID, &m->shape,
                            m->type_size, s->shown, err) < 0)
    return -1;
  return xio_chunk_index_read(s->index, &m->shape, m->elem_size, row, nrows, col, ncols, buf, err);
}

static int prepare_store(xio_block_source *source, const xio_matrix *m, xio_error *err) {
  store_array *s = source->state;
  const int built = xio_chunk_index_build(s->index, m->comm, H5I_INVALID_HID, H5I_INVALID_HID,
                                          &m->shape, m->type_size, s->shown, err);
  source->alone = built == 1; /* an index of files is built alike on every rank */
  return built < 0 ? -1 : 0;
}

static void free_store(void *state) {
  store_array *s = state;
  if (s) xio_chunk_index_free(s->index);
  free(s);
}

int xio_zarr_attach(xio_matrix *m, const char *input, xio_error *err) {
  store_array *s = calloc(1, sizeof *s);
  xio_block_source *source = calloc(1, sizeof *source);
  int rc = s && source ? 0 : xio_fail(err, "out of memory reading %s", input);
  if (rc == 0) {
    xio_zarr_array_path(input, m->dataset, s->shown, sizeof s->shown);
    rc = xio_zarr_array_read(s->shown, s->shown, &s->array, NULL, NULL, NULL, err);
  }
  int same = rc == 0 && s->array.ndims == m->shape.ndims && s->array.type_size == m->type_size;
  for (int i = 0; same && i < m->shape.ndims; i++) same = s->array.shape[i] == m->shape.dims[i];
  if (rc == 0 && !same)
    rc = xio_fail(err, "%s changed while xpose read it: its shape or type is not its view's",
                  s->shown);
  if (rc == 0) {
    xio_zarr_chunk_files(&s->array, &s->files);
    if (!(s->index = xio_chunk_index_of_files(&s->files, 1)))
      rc = xio_fail(err, "out of memory reading %s", s->shown);
  }
  if (rc) {
    free_store(s);
    free(source);
    return -1;
  }
  *source = (xio_block_source){read_store, free_store, prepare_store, s, 0};
  xio_source_free(m->source);
  m->source = source;
  return 0;
}

int xio_zarr_scalar_read(const xio_zarr_array *a, unsigned char *value, const char *shown,
                         xio_error *err) {
  char path[4400], why[256] = "";
  const unsigned char *stored = NULL, *values = NULL;
  size_t size = 0;
  xio_codec_scratch *s = xio_codec_scratch_new();
  int found = s && xio_zarr_chunk_path(a, NULL, path, sizeof path) == 0
                  ? xio_chunk_file_read(path, xio_chunk_file_most(&a->codecs, a->type_size), s,
                                        &stored, &size, why, sizeof why)
                  : -1;
  if (found == 1)
    values = xio_chunk_file_fill(a->has_fill ? a->fill : NULL, a->type_size, a->type_size, s);
  else if (found == 0 &&
           xio_chunk_decode(&a->codecs, 0, stored, size, a->type_size, s, &values, why, sizeof why))
    values = NULL;
  if (values) memcpy(value, values, a->type_size);
  xio_codec_scratch_free(s);
  return values ? 0 : xio_fail(err, "%s: its value %s", shown, why[0] ? why : "cannot be read");
}

int64_t xio_zarr_slab_rows(const xio_zarr_array *a, uint64_t row_bytes, uint64_t piece_bytes) {
  const int64_t chunk = a->ndims ? (a->sharded ? a->shards.inner[0] : a->chunks[0]) : 1;
  const int64_t rows = row_bytes ? (int64_t)(piece_bytes / row_bytes) : chunk;
  return rows > chunk ? rows - rows % chunk : chunk;
}
