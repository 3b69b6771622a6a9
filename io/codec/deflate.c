#define _GNU_SOURCE /* RTLD_NEXT, RTLD_DEFAULT */
#include "deflate.h"

#include <stdlib.h>
#include <string.h>

static const char *compressor_in_use = "zlib";

#if defined(XIO_HAVE_LIBDEFLATE)
#include <dlfcn.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdatomic.h>
#include <zlib.h>

static atomic_int use_libdeflate;
static atomic_uint_fast64_t chunks_compressed;

/* Each thread keeps its compressor (the match finder's tables, some
 * hundreds of KiB, too costly to set up for every chunk) until it ends. */
typedef struct {
  struct libdeflate_compressor *compressor;
  int level;
} thread_compressor;

static pthread_key_t compressor_key;
static pthread_once_t compressor_once = PTHREAD_ONCE_INIT;
static int compressor_key_made;

static void free_compressor(void *arg) {
  thread_compressor *c = arg;
  libdeflate_free_compressor(c->compressor);
  free(c);
}

static void make_compressor_key(void) {
  compressor_key_made = pthread_key_create(&compressor_key, free_compressor) == 0;
}

/* libdeflate's level for zlib's: the fastest whose streams are no larger
 * than zlib's, on shuffled float32 fields (tas323's chunks and the hourly
 * year's, 2026-11-29): zlib's 4 takes libdeflate's 2 (0.997 and 0.999 of
 * zlib's sizes, 12-15% faster than libdeflate's 4); from 6 up, a lower
 * level grows the year's chunks by over 1%, so each keeps its own. */
static int matching_level(int zlib_level) {
  static const int level[10] = {0, 1, 1, 1, 2, 3, 6, 7, 8, 9};
  return level[zlib_level];
}

static struct libdeflate_compressor *compressor_for(int level) {
  if (pthread_once(&compressor_once, make_compressor_key) != 0 || !compressor_key_made) return NULL;
  thread_compressor *c = pthread_getspecific(compressor_key);
  if (!c) {
    if (!(c = calloc(1, sizeof *c))) return NULL;
    if (pthread_setspecific(compressor_key, c) != 0) {
      free(c);
      return NULL;
    }
  }
  if (!c->compressor || c->level != level) {
    libdeflate_free_compressor(c->compressor);
    c->level = level;
    c->compressor = libdeflate_alloc_compressor(matching_level(level));
  }
  return c->compressor;
}

/* zlib's own compress2, for XPOSE_DEFLATE=zlib, before the install and
 * where libdeflate's stream does not fit. */
typedef int compress2_function(Bytef *, uLongf *, const Bytef *, uLong, int);
static compress2_function *zlib_compress2;
static pthread_once_t zlib_once = PTHREAD_ONCE_INIT;

static void find_zlib_compress2(void) {
  zlib_compress2 = (compress2_function *)dlsym(RTLD_NEXT, "compress2");
}

static int compress_with_zlib(Bytef *dest, uLongf *dest_len, const Bytef *source, uLong source_len,
                              int level) {
  if (pthread_once(&zlib_once, find_zlib_compress2) != 0 || !zlib_compress2) return Z_STREAM_ERROR;
  return zlib_compress2(dest, dest_len, source, source_len, level);
}

/* zlib's compress2(), as zlib documents it: Z_OK with *dest_len set to the
 * stream's length, Z_BUF_ERROR where it does not fit in *dest_len bytes,
 * Z_STREAM_ERROR for a bad level, Z_MEM_ERROR without memory; and it fails
 * only where zlib's would. */
int compress2(Bytef *dest, uLongf *dest_len, const Bytef *source, uLong source_len, int level) {
  if (!atomic_load_explicit(&use_libdeflate, memory_order_relaxed))
    return compress_with_zlib(dest, dest_len, source, source_len, level);
  if (level == Z_DEFAULT_COMPRESSION) level = 6;
  if (level < 0 || level > 9) return Z_STREAM_ERROR;
  struct libdeflate_compressor *compressor = compressor_for(level);
  if (!compressor) return Z_MEM_ERROR;
  const size_t packed = libdeflate_zlib_compress(compressor, source, source_len, dest, *dest_len);
  /* libdeflate wants a few bytes of slack: a stream that just fits, as
   * barely compressible small chunks make, is zlib's to write.  HDF5 1.10
   * gives compressBound()'s room and counts on it: a parallel write stores
   * a chunk that failed to compress as it is, but still marked deflated. */
  if (packed == 0) return compress_with_zlib(dest, dest_len, source, source_len, level);
  *dest_len = (uLongf)packed;
  atomic_fetch_add_explicit(&chunks_compressed, 1, memory_order_relaxed);
  return Z_OK;
}
#endif

int xio_deflate_install(xio_error *err) {
  const char *choice = getenv("XPOSE_DEFLATE");
  if (choice && strcmp(choice, "zlib") == 0) return 0;
  if (choice && *choice && strcmp(choice, "libdeflate") != 0)
    return xio_fail(err, "XPOSE_DEFLATE is \"%s\"; it takes zlib or libdeflate", choice);
#if defined(XIO_HAVE_LIBDEFLATE)
  /* Where the program's compress2 is not the one every library finds (a
   * zlib linked into HDF5, say), zlib compresses. */
  if (dlsym(RTLD_DEFAULT, "compress2") == (void *)compress2) {
    atomic_store(&use_libdeflate, 1);
    compressor_in_use = "libdeflate " LIBDEFLATE_VERSION_STRING;
    return 0;
  }
  if (choice && *choice)
    return xio_fail(err, "XPOSE_DEFLATE is libdeflate, but HDF5 does not reach xpose's compress2");
  return 0;
#else
  if (choice && *choice)
    return xio_fail(err, "XPOSE_DEFLATE is libdeflate, but xpose was built without it");
  return 0;
#endif
}

const char *xio_deflate_name(void) { return compressor_in_use; }

uint64_t xio_deflate_chunks(void) {
#if defined(XIO_HAVE_LIBDEFLATE)
  return atomic_load(&chunks_compressed);
#else
  return 0;
#endif
}

#if defined(XIO_HAVE_LIBDEFLATE)
xio_inflater *xio_inflater_new(void) { return (xio_inflater *)libdeflate_alloc_decompressor(); }

void xio_inflater_free(xio_inflater *inflater) {
  if (inflater) libdeflate_free_decompressor((struct libdeflate_decompressor *)inflater);
}

static xio_inflate_result inflate_result(enum libdeflate_result r) {
  return r == LIBDEFLATE_SUCCESS              ? XIO_INFLATED
         : r == LIBDEFLATE_INSUFFICIENT_SPACE ? XIO_INFLATE_LONG
                                              : XIO_INFLATE_BAD;
}

xio_inflate_result xio_inflate(xio_inflater *inflater, const void *in, size_t in_size, void *out,
                               size_t room, size_t *size) {
  *size = 0;
  return inflate_result(libdeflate_zlib_decompress((struct libdeflate_decompressor *)inflater, in,
                                                   in_size, out, room, size));
}

xio_deflater *xio_deflater_new(int level) {
  return level >= 0 && level <= 9
             ? (xio_deflater *)libdeflate_alloc_compressor(matching_level(level))
             : NULL;
}

void xio_deflater_free(xio_deflater *deflater) {
  if (deflater) libdeflate_free_compressor((struct libdeflate_compressor *)deflater);
}

size_t xio_deflate_bound(xio_deflater *deflater, size_t in_size) {
  return libdeflate_zlib_compress_bound((struct libdeflate_compressor *)deflater, in_size);
}

size_t xio_deflate(xio_deflater *deflater, const void *in, size_t in_size, void *out, size_t room) {
  return libdeflate_zlib_compress((struct libdeflate_compressor *)deflater, in, in_size, out, room);
}

size_t xio_gzip_bound(size_t in_size) { return libdeflate_gzip_compress_bound(NULL, in_size); }

size_t xio_gzip(xio_deflater *deflater, const void *in, size_t in_size, void *out, size_t room) {
  return libdeflate_gzip_compress((struct libdeflate_compressor *)deflater, in, in_size, out, room);
}

xio_inflate_result xio_gunzip(xio_inflater *inflater, const void *in, size_t in_size, void *out,
                              size_t room, size_t *size) {
  size_t used = 0;
  *size = 0;
  const xio_inflate_result r = inflate_result(libdeflate_gzip_decompress_ex(
      (struct libdeflate_decompressor *)inflater, in, in_size, out, room, &used, size));
  /* bytes after the member: numcodecs reads them as another, or refuses them */
  return r == XIO_INFLATED && used != in_size ? XIO_INFLATE_BAD : r;
}
#else
xio_inflater *xio_inflater_new(void) { return NULL; }

void xio_inflater_free(xio_inflater *inflater) { (void)inflater; }

xio_inflate_result xio_inflate(xio_inflater *inflater, const void *in, size_t in_size, void *out,
                               size_t room, size_t *size) {
  (void)inflater, (void)in, (void)in_size, (void)out, (void)room;
  *size = 0;
  return XIO_INFLATE_BAD;
}

xio_deflater *xio_deflater_new(int level) {
  (void)level;
  return NULL;
}

void xio_deflater_free(xio_deflater *deflater) { (void)deflater; }

size_t xio_deflate_bound(xio_deflater *deflater, size_t in_size) {
  (void)deflater;
  return in_size;
}

size_t xio_deflate(xio_deflater *deflater, const void *in, size_t in_size, void *out, size_t room) {
  (void)deflater, (void)in, (void)in_size, (void)out, (void)room;
  return 0;
}

size_t xio_gzip_bound(size_t in_size) { return in_size; }

size_t xio_gzip(xio_deflater *deflater, const void *in, size_t in_size, void *out, size_t room) {
  return xio_deflate(deflater, in, in_size, out, room);
}

xio_inflate_result xio_gunzip(xio_inflater *inflater, const void *in, size_t in_size, void *out,
                              size_t room, size_t *size) {
  return xio_inflate(inflater, in, in_size, out, room, size);
}
#endif
