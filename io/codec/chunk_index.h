/* The chunk reader's index (chunk_reader.h) inside the codec room: its
 * fields, and the pieces its reads and its sums (chunk_sum.c) share. */
#ifndef XIO_CHUNK_INDEX_H
#define XIO_CHUNK_INDEX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "chunk_box.h"
#include "chunk_file.h"
#include "chunk_reader.h"
#include "filters.h"

/* Indexes of more chunks than this are not built: HDF5 reads them. */
#define MAX_CHUNKS ((int64_t)1 << 22)

struct xio_chunk_index {
  int built, usable;
  int fd;
  char *path; /* to open the file again once closed (xio_chunk_index_close_file) */
  int ndims;
  int64_t chunk[XIO_MAX_DIMS], grid[XIO_MAX_DIMS]; /* chunks along each axis */
  int64_t count;
  uint64_t *addr, *size;
  unsigned *mask; /* bit i: filter i skipped for the chunk */
  xio_filters filters;
  size_t type_size, chunk_bytes;
  xio_codec_scratches scratch; /* one for each thread of the pool */
  char shown[700];
  const xio_chunk_files *files; /* chunks that are files: no fd, addr, size or mask */
  int fill_missing;
  /* files: their grid, and, once one was found missing, those that exist
   * (files->list), listed once by the first thread to miss one */
  int64_t file_grid[XIO_MAX_DIMS];
  uint64_t file_most; /* the most a chunk's stored bytes may hold: more is damage */
  int64_t *_Atomic present, present_count;
  int listed;
  pthread_mutex_t listing;
  /* where the time goes: locating the chunks; the threads' reading and decoding */
  double locate_seconds;
  atomic_uint_fast64_t fetch_ns, decode_ns;
};

/* A pool job over chunks: the first failure says why. */
typedef struct {
  xio_chunk_index *ix;
  atomic_int failed;
  xio_error err;
} chunk_job;

/* On pool thread `worker`: chunk `index` (its first value at origin) read
 * and decoded, but for the filters `skip` names (bit i: filter i), *values
 * in the worker's scratch.  0, or -1 (the job says why). */
int xio_decoded_chunk(chunk_job *job, int64_t index, const int64_t *origin, unsigned skip,
                      int worker, const unsigned char **values);

/* The stored bytes of n chunks (those of a box, or from `first` on)
 * asked of the disk at once, in as few ranges as they lie in. */
void xio_chunk_ask_ahead(const xio_chunk_index *ix, const xio_chunk_box *box, int64_t first,
                         int64_t n);

#endif
