/* A Zarr array as a matrix (matrix_zarr.h). */
#include "matrix_zarr.h"

#include <stdio.h>
#include <stdlib.h>

#include "chunk_reader.h"

hid_t xio_zarr_type(const xio_zarr_array *a) {
  const int big = a->big_endian;
  hid_t type = H5I_INVALID_HID;
  if (a->kind == 'f')
    type = a->type_size == 4 ? (big ? H5T_IEEE_F32BE : H5T_IEEE_F32LE)
                             : (big ? H5T_IEEE_F64BE : H5T_IEEE_F64LE);
  else
    switch (a->type_size) {
      case 1: type = a->kind == 'u' ? H5T_STD_U8LE : H5T_STD_I8LE; break;
      case 2:
        type = a->kind == 'u' ? (big ? H5T_STD_U16BE : H5T_STD_U16LE)
                              : (big ? H5T_STD_I16BE : H5T_STD_I16LE);
        break;
      case 4:
        type = a->kind == 'u' ? (big ? H5T_STD_U32BE : H5T_STD_U32LE)
                              : (big ? H5T_STD_I32BE : H5T_STD_I32LE);
        break;
      default:
        type = a->kind == 'u' ? (big ? H5T_STD_U64BE : H5T_STD_U64LE)
                              : (big ? H5T_STD_I64BE : H5T_STD_I64LE);
    }
  return H5Tcopy(type);
}

int xio_open_zarr(MPI_Comm comm, const xio_zarr_array *array, const char *dataset,
                  int missing_as_fill, xio_matrix *m, xio_error *err) {
  xio_matrix_init(m, comm);
  snprintf(m->dataset, sizeof m->dataset, "%s", dataset);
  struct xio_zarr_matrix *z = calloc(1, sizeof *z);
  if (!z || (m->type = xio_zarr_type(array)) < 0) {
    free(z);
    xio_matrix_init(m, MPI_COMM_NULL);
    return xio_fail(err, "cannot describe the Zarr array %s: out of memory", array->path);
  }
  m->zarr = z;
  m->describe = xio_describe_zarr;
  z->array = *array;
  xio_zarr_chunk_files(&z->array, &z->files);
  m->files = &z->files;
  m->type_size = array->type_size;
  /* a 1-D array (an input's coordinate) as one column: its chunks' keys
   * keep their one axis, the second's origin always 0 */
  const int ndims = array->ndims == 1 ? 2 : array->ndims;
  m->shape = (xio_shape){.ndims = ndims};
  for (int i = 0; i < ndims; i++) {
    m->shape.dims[i] = i < array->ndims ? array->shape[i] : 1;
    m->chunk_dims[i] = z->files.chunk[i] = i < array->ndims ? array->chunks[i] : 1;
  }
  m->chunked = m->filtered = m->codec = 1; /* each chunk a file: the codec writes every one */
  m->codec_work = xio_chunk_encode_work(&array->codecs, 0, xio_zarr_chunk_bytes(array));
  if (!(m->chunk_index = xio_chunk_index_of_files(m->files, missing_as_fill)))
    return xio_fail(err, "cannot describe the Zarr array %s: out of memory", array->path);
  return xio_matrix_fold(m, 0, 1, ndims == 2 ? 2 : ndims, err);
}

int xio_zarr_chunks_like(const xio_matrix *like, const xio_storage *storage, const xio_shape *shape,
                         size_t type_size, const char *shown, int64_t *chunks, xio_error *err) {
  xio_storage chunked = *storage;
  chunked.layout = XIO_LAYOUT_CHUNKED;
  chunked.filter = XIO_FILTER_NONE;
  hsize_t dims[XIO_MAX_DIMS];
  const xio_storage_like source = like ? xio_matrix_storage_like(like) : (xio_storage_like){0};
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  int rc = dcpl < 0 ? xio_fail_h5(err, "cannot set up %s's chunks", shown) : 0;
  if (rc == 0)
    rc = xio_storage_apply(like ? &source : NULL, &chunked, shape, type_size, dcpl, shown, err);
  if (rc == 0 && H5Pget_chunk(dcpl, XIO_MAX_DIMS, dims) != shape->ndims)
    rc = xio_fail_h5(err, "cannot set up %s's chunks", shown);
  for (int i = 0; rc == 0 && i < shape->ndims; i++) chunks[i] = (int64_t)dims[i];
  if (dcpl >= 0) (void)H5Pclose(dcpl); /* only read */
  return rc;
}

void xio_describe_zarr(const xio_matrix *m, char *text, size_t size) {
  const xio_zarr_array *a = &m->zarr->array;
  int n = snprintf(text, size, "Zarr v%d, chunks ", a->format);
  for (int i = 0; i < a->ndims && n > 0 && (size_t)n < size; i++)
    n += snprintf(text + n, size - (size_t)n, "%s%lld", i ? " x " : "",
                  (long long)(a->sharded ? a->shards.inner[i] : a->chunks[i]));
  for (int i = 0; a->sharded && i < a->ndims && n > 0 && (size_t)n < size; i++)
    n += snprintf(text + n, size - (size_t)n, "%s%lld", i ? " x " : " in shards of ",
                  (long long)(a->shards.shard[i] / a->shards.inner[i]));
  if (n > 0 && (size_t)n < size)
    snprintf(text + n, size - (size_t)n, ", %s%s%.0u, %lld file(s)",
             xio_zarr_compressor_name(a->codec.compressor), a->codecs.count ? ":" : "",
             a->codecs.count ? a->codecs.value[0] : 0u, (long long)xio_zarr_files(a));
}
