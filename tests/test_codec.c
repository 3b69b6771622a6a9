/* The chunk codec (io/codec/): chunks it encodes read back through HDF5's
 * own pipeline, chunks HDF5 encodes decoded by it, for every filter it
 * runs (shuffle, deflate at levels 0-9, Fletcher32), alone and together,
 * values of 1 to 16 bytes, filter masks that skip some; damaged chunks
 * refused with the reason; the pool's jobs; chunks copied between a block
 * and their own layout; chunks located by walking the file's B-tree;
 * Zarr's codecs (gzip, zstd, Blosc, crc32c) round trip and refuse damage.
 * Skipped (77) in builds without libdeflate. */
#include <fcntl.h>
#include <hdf5.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "chunk_box.h"
#include "chunk_btree.h"
#include "filters.h"
#include "pool.h"
#include "test_util.h"
#include "blosc_codec.h"
#include "codec.h"
#include "crc32c.h"

static long long cases;

/* A filter pipeline: which of shuffle, deflate (at `level`), Fletcher32,
 * in HDF5's order of application. */
typedef struct {
  int shuffle, level, fletcher; /* level < 0: no deflate */
  int fletcher_first;           /* Fletcher32 before the others */
} pipeline;

static hid_t make_dcpl(const pipeline *p, const hsize_t *chunk) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  if (p->fletcher && p->fletcher_first) H5Pset_fletcher32(dcpl);
  if (p->shuffle) H5Pset_shuffle(dcpl);
  if (p->level >= 0) H5Pset_deflate(dcpl, (unsigned)p->level);
  if (p->fletcher && !p->fletcher_first) H5Pset_fletcher32(dcpl);
  return dcpl;
}

/* Values that compress somewhat: smooth rows, noisy low bytes. */
static void fill_values(unsigned char *v, size_t n, size_t size) {
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < size; k++)
      v[i * size + k] = k + 1 == size ? (unsigned char)(i / 7) : pattern_byte((int64_t)i, 3, k);
}

/* One dataset of rows x cols values of `size` bytes in chunks of crows x
 * ccols: every chunk encoded by the codec and written as stored, read
 * back by HDF5; then written by HDF5 and every chunk decoded here. */
static void check_pipeline(const pipeline *p, size_t size, hsize_t rows, hsize_t cols,
                           hsize_t crows, hsize_t ccols) {
  const hsize_t dims[2] = {rows, cols}, chunk[2] = {crows, ccols};
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_core(fapl, 1 << 20, 0);
  hid_t file = H5Fcreate("codec.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hid_t type = H5Tcreate(H5T_OPAQUE, size), space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = make_dcpl(p, chunk);
  hid_t ours = H5Dcreate2(file, "ours", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  hid_t theirs = H5Dcreate2(file, "theirs", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  hid_t stored_dcpl = H5Dget_create_plist(ours); /* with HDF5's local values (shuffle's size) */
  xio_filters f;
  EXPECT(xio_filters_of(stored_dcpl, &f) == 0 && f.known, "filters not known");
  const size_t n = (size_t)(rows * cols), chunk_bytes = (size_t)(crows * ccols) * size;
  unsigned char *values = malloc(n * size), *back = malloc(n * size),
                *chunkbuf = malloc(chunk_bytes);
  const size_t bound = xio_chunk_encode_bound(&f, chunk_bytes);
  unsigned char *stored = malloc(bound), *raw = malloc(bound + 64);
  xio_codec_scratch *s = xio_codec_scratch_new();
  fill_values(values, n, size);
  H5Dwrite(theirs, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
  long long wrong = 0;
  for (hsize_t r0 = 0; r0 < rows; r0 += crows)
    for (hsize_t c0 = 0; c0 < cols; c0 += ccols) {
      /* the chunk's values, edges past the dataset zero as HDF5's fill */
      memset(chunkbuf, 0, chunk_bytes);
      for (hsize_t i = 0; i < crows && r0 + i < rows; i++)
        for (hsize_t j = 0; j < ccols && c0 + j < cols; j++)
          memcpy(chunkbuf + (i * ccols + j) * size, values + ((r0 + i) * cols + c0 + j) * size,
                 size);
      size_t got = 0;
      EXPECT(xio_chunk_encode(&f, chunkbuf, chunk_bytes, stored, bound, &got, s) == 0, "encode");
      const hsize_t offset[2] = {r0, c0};
      EXPECT(H5Dwrite_chunk(ours, H5P_DEFAULT, 0, offset, got, stored) >= 0, "write_chunk");
      /* HDF5's chunk, decoded here */
      hsize_t their_size = 0;
      uint32_t mask = 0;
      H5Dget_chunk_storage_size(theirs, offset, &their_size);
      EXPECT(
          their_size <= bound + 64 && H5Dread_chunk(theirs, H5P_DEFAULT, offset, &mask, raw) >= 0,
          "read_chunk");
      const unsigned char *decoded = NULL;
      char why[200] = "";
      EXPECT(xio_chunk_decode(&f, mask, raw, (size_t)their_size, chunk_bytes, s, &decoded, why,
                              sizeof why) == 0,
             "decode HDF5's chunk: %s", why);
      for (hsize_t i = 0; decoded && i < crows && r0 + i < rows; i++)
        wrong += memcmp(decoded + i * ccols * size, chunkbuf + i * ccols * size,
                        (size_t)((c0 + ccols <= cols ? ccols : cols - c0) * size)) != 0;
    }
  H5Dread(ours, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back);
  EXPECT(memcmp(back, values, n * size) == 0 && wrong == 0,
         "shuffle %d level %d fletcher %d%s, %zu-byte values, %llux%llu in %llux%llu: "
         "HDF5 reads the codec's chunks %s, the codec HDF5's with %lld rows wrong",
         p->shuffle, p->level, p->fletcher, p->fletcher_first ? " (first)" : "", size,
         (unsigned long long)rows, (unsigned long long)cols, (unsigned long long)crows,
         (unsigned long long)ccols, memcmp(back, values, n * size) ? "wrong" : "right", wrong);
  xio_codec_scratch_free(s);
  free(values), free(back), free(chunkbuf), free(stored), free(raw);
  H5Pclose(stored_dcpl), H5Pclose(dcpl), H5Dclose(ours), H5Dclose(theirs);
  H5Sclose(space), H5Tclose(type), H5Fclose(file), H5Pclose(fapl);
  cases++;
}

/* Chunks skipping filters by their mask, and damaged ones, with why. */
static void check_masks_and_damage(void) {
  const pipeline p = {1, 4, 1, 0};
  const hsize_t chunk[2] = {16, 16};
  hid_t dcpl = make_dcpl(&p, chunk);
  /* the value size a dataset's creation sets (none here) */
  H5Pmodify_filter(dcpl, H5Z_FILTER_SHUFFLE, 0, 1, (unsigned[]){4});
  xio_filters f;
  EXPECT(xio_filters_of(dcpl, &f) == 0 && f.known && f.count == 3, "three filters");
  const size_t bytes = 16 * 16 * 4, bound = xio_chunk_encode_bound(&f, bytes);
  unsigned char *values = malloc(bytes), *stored = malloc(bound);
  fill_values(values, 256, 4);
  xio_codec_scratch *s = xio_codec_scratch_new();
  size_t size = 0;
  const unsigned char *out = NULL;
  char why[200];
  /* deflate alone applied (mask: shuffle and Fletcher32 skipped) */
  xio_filters just_deflate = {.count = 1, .id = {H5Z_FILTER_DEFLATE}, .value = {4}, .known = 1};
  EXPECT(xio_chunk_encode(&just_deflate, values, bytes, stored, bound, &size, s) == 0, "encode");
  EXPECT(xio_chunk_decode(&f, 1u | 4u, stored, size, bytes, s, &out, why, sizeof why) == 0 &&
             memcmp(out, values, bytes) == 0,
         "a chunk whose mask skips shuffle and Fletcher32: %s", why);
  cases++;
  /* damaged: a flipped byte fails the checksum; without one, inflating */
  EXPECT(xio_chunk_encode(&f, values, bytes, stored, bound, &size, s) == 0, "encode");
  stored[size / 2] ^= 0x5a;
  EXPECT(xio_chunk_decode(&f, 0, stored, size, bytes, s, &out, why, sizeof why) != 0 &&
             strstr(why, "Fletcher32"),
         "a flipped byte: %s", why);
  EXPECT(xio_chunk_encode(&just_deflate, values, bytes, stored, bound, &size, s) == 0, "encode");
  memset(stored + 2, 0xff, 8);
  EXPECT(xio_chunk_decode(&just_deflate, 0, stored, size, bytes, s, &out, why, sizeof why) != 0 &&
             strstr(why, "inflate"),
         "a broken stream: %s", why);
  /* a whole stream of the wrong size: longer, and shorter */
  EXPECT(xio_chunk_encode(&just_deflate, values, bytes, stored, bound, &size, s) == 0, "encode");
  EXPECT(
      xio_chunk_decode(&just_deflate, 0, stored, size, bytes / 2, s, &out, why, sizeof why) != 0 &&
          strstr(why, "not 512"),
      "a chunk too long: %s", why);
  EXPECT(xio_chunk_encode(&just_deflate, values, bytes / 2, stored, bound, &size, s) == 0,
         "encode");
  EXPECT(xio_chunk_decode(&just_deflate, 0, stored, size, bytes, s, &out, why, sizeof why) != 0 &&
             strstr(why, "inflate to 512 bytes, not 1024"),
         "a chunk too short: %s", why);
  /* a filter the codec does not run: not known, and named */
  H5Pset_nbit(dcpl);
  EXPECT(xio_filters_of(dcpl, &f) == 0 && !f.known && strcmp(f.unknown, "nbit") == 0,
         "nbit named: '%s'", f.unknown);
  cases += 5;
  xio_codec_scratch_free(s);
  free(values), free(stored);
  H5Pclose(dcpl);
}

/* Chunks encoded from their byte planes (shuffled already) into rooms
 * smaller than the bound, the work buffers each pipeline needs, and a
 * chunk decoded but for its shuffle. */
static void check_encode_from(void) {
  enum { N = 4096, SIZE = 4 };
  const size_t bytes = N * SIZE;
  const xio_filters f = {.count = 3,
                         .id = {H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE, H5Z_FILTER_FLETCHER32},
                         .value = {SIZE, 4, 0},
                         .known = 1};
  const xio_filters netcdf = {.count = 3,
                              .id = {H5Z_FILTER_FLETCHER32, H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE},
                              .value = {0, SIZE, 4},
                              .known = 1};
  const size_t bound = xio_chunk_encode_bound(&f, bytes);
  unsigned char *values = malloc(bytes), *planes = malloc(bytes), *whole = malloc(bound),
                *from = malloc(bound);
  fill_values(values, N, SIZE);
  for (size_t i = 0; i < N; i++)
    for (size_t j = 0; j < SIZE; j++) planes[j * N + i] = values[i * SIZE + j];
  xio_codec_scratch *s = xio_codec_scratch_new();
  size_t size = 0, size_from = 0;
  EXPECT(xio_chunk_encode(&f, values, bytes, whole, bound, &size, s) == 0, "encode");
  EXPECT(xio_chunk_encode_from(&f, 1, planes, bytes, from, bound, &size_from, s) == 0 &&
             size_from == size && memcmp(from, whole, size) == 0,
         "byte planes encoded from the deflate: %zu bytes, not %zu", size_from, size);
  /* libdeflate writes with a few bytes to spare at the end */
  EXPECT(xio_chunk_encode_from(&f, 1, planes, bytes, from, size + 16, &size_from, s) == 0,
         "a room of the chunk's bytes and a few");
  EXPECT(xio_chunk_encode_from(&f, 1, planes, bytes, from, size - 1, &size_from, s) == 1 &&
             xio_chunk_encode_from(&f, 1, planes, bytes, from, 64, &size_from, s) == 1,
         "a room too small: said so");
  EXPECT(xio_chunk_encode_work(&f, 1, bytes) == 0 && xio_chunk_encode_work(&f, 0, bytes) == bound &&
             xio_chunk_encode_work(&netcdf, 0, bytes) == 2 * bound,
         "work buffers: %zu %zu %zu", xio_chunk_encode_work(&f, 1, bytes),
         xio_chunk_encode_work(&f, 0, bytes), xio_chunk_encode_work(&netcdf, 0, bytes));
  EXPECT(xio_filters_shuffle_first(&f, SIZE) && !xio_filters_shuffle_first(&f, 8) &&
             !xio_filters_shuffle_first(&netcdf, SIZE),
         "which pipelines shuffle first");
  const unsigned char *out = NULL;
  char why[200] = "";
  EXPECT(xio_chunk_decode(&f, 1u, whole, size, bytes, s, &out, why, sizeof why) == 0 &&
             memcmp(out, planes, bytes) == 0,
         "decoded but for the shuffle: the byte planes (%s)", why);
  cases += 6;
  xio_codec_scratch_free(s);
  free(values), free(planes), free(whole), free(from);
}

typedef struct {
  atomic_llong sum;
  atomic_int on[64];
  int64_t fail_at;
} job;

static int add_item(void *arg, int64_t item, int worker) {
  job *j = arg;
  atomic_fetch_add(&j->sum, item);
  atomic_fetch_add(&j->on[worker], 1);
  return item == j->fail_at ? 7 : 0;
}

/* Three jobs posted from three threads at once (two run together, the
 * third after one ends), one of them failing. */
typedef struct {
  job j;
  int64_t items;
  int rc;
} posted_job;

/* Zarr's codecs: each pipeline round trips through rooms of its bound,
 * crc32c has its check value, and a flipped byte is refused. */
static void check_zarr_codecs(void) {
  enum { N = 5000, SIZE = 4 };
  const size_t bytes = N * SIZE;
  const unsigned blosc_lz4 = xio_blosc_option(XIO_BLOSC_LZ4, 1, SIZE),
                 blosc_zstd = xio_blosc_option(XIO_BLOSC_ZSTD, 1, SIZE);
  const xio_filters pipelines[] = {
      {.count = 1, .id = {XIO_CODEC_GZIP}, .value = {1}, .known = 1},
      {.count = 1, .id = {XIO_CODEC_ZSTD}, .value = {3}, .known = 1},
      {.count = 1, .id = {XIO_CODEC_BLOSC}, .value = {5}, .option = {blosc_lz4}, .known = 1},
      {.count = 2,
       .id = {XIO_CODEC_BLOSC, XIO_CODEC_CRC32C},
       .value = {3},
       .option = {blosc_zstd},
       .known = 1},
      {.count = 1, .id = {XIO_CODEC_CRC32C}, .known = 1},
  };
  EXPECT(xio_crc32c("123456789", 9) == 0xe3069283u, "crc32c's check value: %08x",
         xio_crc32c("123456789", 9));
  unsigned char *values = malloc(bytes);
  fill_values(values, N, SIZE);
  xio_codec_scratch *s = xio_codec_scratch_new();
  for (size_t p = 0; p < sizeof pipelines / sizeof *pipelines; p++) {
    const xio_filters *f = &pipelines[p];
    const size_t bound = xio_chunk_encode_bound(f, bytes);
    unsigned char *stored = malloc(bound);
    size_t size = 0;
    const unsigned char *out = NULL;
    char why[200] = "";
    EXPECT(xio_chunk_encode(f, values, bytes, stored, bound, &size, s) == 0 && size <= bound,
           "pipeline %zu encodes", p);
    EXPECT(xio_chunk_decode(f, 0, stored, size, bytes, s, &out, why, sizeof why) == 0 &&
               memcmp(out, values, bytes) == 0,
           "pipeline %zu round trips: %s", p, why);
    stored[size / 2] ^= 0x5a;
    EXPECT(xio_chunk_decode(f, 0, stored, size, bytes, s, &out, why, sizeof why) != 0 ||
               memcmp(out, values, bytes) != 0,
           "pipeline %zu: a flipped byte goes unnoticed", p);
    cases += 3;
    free(stored);
  }
  xio_codec_scratch_free(s);
  free(values);
}

static void *post_job(void *arg) {
  posted_job *p = arg;
  p->rc = xio_pool_run(p->items, add_item, &p->j);
  return NULL;
}

static void check_jobs_at_once(int threads) {
  xio_pool_set_threads(threads);
  posted_job p[3] = {{.j.fail_at = -1, .items = 5000},
                     {.j.fail_at = 1234, .items = 3000},
                     {.j.fail_at = -1, .items = 7}};
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, post_job, &p[i]);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 3; i += 2)
    EXPECT(p[i].rc == 0 && p[i].j.sum == p[i].items * (p[i].items - 1) / 2,
           "%d threads, job %d at once: rc %d, sum %lld", threads, i, p[i].rc,
           (long long)p[i].j.sum);
  EXPECT(p[1].rc == 7, "%d threads: the failing job at once: rc %d", threads, p[1].rc);
  cases++;
}

/* Every item once, on several threads; a failure ends the job with its code. */
static void check_pool(void) {
  for (int threads = 1; threads <= 4; threads += 3) check_jobs_at_once(threads);
  for (int threads = 1; threads <= 5; threads += 2) {
    xio_pool_set_threads(threads);
    EXPECT(xio_pool_threads() == threads, "pool of %d", threads);
    for (int64_t items = 0; items <= 2000; items += 997) {
      job j = {.fail_at = -1};
      EXPECT(xio_pool_run(items, add_item, &j) == 0 && j.sum == items * (items - 1) / 2,
             "%d threads, %lld items: sum %lld", threads, (long long)items, (long long)j.sum);
      int workers = 0;
      for (int w = 0; w < 64; w++) workers += j.on[w] > 0;
      EXPECT(workers <= threads, "%d workers of %d threads", workers, threads);
      cases++;
    }
    job failing = {.fail_at = 10};
    EXPECT(xio_pool_run(1000, add_item, &failing) == 7, "a failing item's code");
  }
  xio_pool_set_threads(1);
}

/* A 3-D dataset (5 x 7 x 6) folded at 0, 1, 3: the block of rows 1-3,
 * columns 5-29, copied out of its chunks and back. */
static void check_box(void) {
  xio_shape shape = {.ndims = 3, .lead = 0, .split = 1, .trail = 3, .dims = {5, 7, 6}};
  const int64_t chunk[3] = {2, 3, 4};
  xio_chunk_box box;
  xio_chunk_box_of(&box, &shape, chunk, 1, 1, 1, 3, 5, 25);
  unsigned char block[3 * 25], again[3 * 25], one[24];
  for (int i = 0; i < 75; i++) block[i] = (unsigned char)(i + 1);
  memset(again, 0, sizeof again);
  int holds = 0;
  for (int64_t k = 0; k < box.chunks; k++) {
    int64_t origin[3];
    xio_chunk_box_chunk(&box, k, origin);
    holds += xio_chunk_box_holds(&box, origin);
    memset(one, 0, sizeof one);
    xio_chunk_box_copy(&box, origin, one, block, 0);
    xio_chunk_box_copy(&box, origin, one, again, 1);
  }
  EXPECT(memcmp(block, again, sizeof block) == 0, "a block through its chunks and back");
  EXPECT(box.chunks == 2 * 2 * 2 && holds == 0, "%lld chunks, %d whole in the block",
         (long long)box.chunks, holds);
  /* rows 2-3 (a whole chunk of the first axis), every column: all whole */
  xio_chunk_box_of(&box, &shape, chunk, 1, 1, 2, 2, 0, 42);
  holds = 0;
  for (int64_t k = 0; k < box.chunks; k++) {
    int64_t origin[3];
    xio_chunk_box_chunk(&box, k, origin);
    holds += xio_chunk_box_holds(&box, origin);
  }
  EXPECT(box.chunks == 6 && holds == 6, "%lld chunks, %d whole", (long long)box.chunks, holds);
  cases += 2;
}

/* Chunk places walked from the file (chunk_btree.h) against HDF5's, for
 * every chunk of a 3-D dataset (6 x 7 x 9 in 2 x 3 x 4 chunks, edges
 * included) in the file layouts HDF5 1.10 writes: object headers of
 * version 1 (the earliest format) and 2 (1.8's, with attributes in order
 * of creation, as netCDF-4 keeps them, and enough of them to continue the
 * header elsewhere), a user block; files the walk must leave to HDF5: the
 * latest format's index, a chunk never written. */
static void check_btree_walk(void) {
  enum { CHUNKS = 3 * 3 * 3 };
  const struct {
    int latest, v18, order, userblock, attributes, unwritten, walked;
  } files[] = {{0, 0, 0, 0, 0, 0, 1}, {0, 1, 1, 0, 40, 0, 1}, {0, 0, 0, 512, 40, 0, 1},
               {0, 1, 0, 0, 0, 0, 1}, {1, 0, 0, 0, 0, 0, 0},  {0, 0, 0, 0, 0, 1, 0}};
  const hsize_t dims[3] = {6, 7, 9}, chunk[3] = {2, 3, 4};
  float values[6 * 7 * 9];
  for (int i = 0; i < 6 * 7 * 9; i++) values[i] = (float)(i % 17) * 0.25f;
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (files[f].latest) H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    if (files[f].v18) H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
    if (files[f].userblock) H5Pset_userblock(fcpl, (hsize_t)files[f].userblock);
    hid_t file = H5Fcreate("btree.h5", H5F_ACC_TRUNC, fcpl, fapl);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5Screate_simple(3, dims, NULL);
    H5Pset_chunk(dcpl, 3, chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 4);
    if (files[f].order) H5Pset_attr_creation_order(dcpl, H5P_CRT_ORDER_TRACKED);
    const hid_t dset =
        H5Dcreate2(file, "v", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    const hsize_t some[3] = {0, 0, 0}, first[3] = {2, 3, 4};
    if (files[f].unwritten) H5Sselect_hyperslab(space, H5S_SELECT_SET, some, NULL, first, NULL);
    const hid_t memory = files[f].unwritten ? H5Screate_simple(3, first, NULL) : H5S_ALL;
    H5Dwrite(dset, H5T_NATIVE_FLOAT, memory, files[f].unwritten ? space : H5S_ALL, H5P_DEFAULT,
             values);
    for (int a = 0; a < files[f].attributes; a++) {
      char name[64];
      snprintf(name, sizeof name, "attribute_%02d_with_a_long_name", a);
      const hid_t s = H5Screate(H5S_SCALAR),
                  attribute = H5Acreate2(dset, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(attribute, H5T_NATIVE_INT, &a);
      H5Aclose(attribute), H5Sclose(s);
    }
    if (memory != H5S_ALL) H5Sclose(memory);
    H5Dclose(dset), H5Sclose(space), H5Pclose(dcpl), H5Fclose(file), H5Pclose(fcpl), H5Pclose(fapl);

    file = H5Fopen("btree.h5", H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t d = H5Dopen2(file, "v", H5P_DEFAULT);
    const int fd = open("btree.h5", O_RDONLY);
    const int64_t c[3] = {2, 3, 4}, grid[3] = {3, 3, 3};
    uint64_t addr[CHUNKS], size[CHUNKS];
    unsigned mask[CHUNKS];
    uint64_t eoa = 0;
    char why[300] = "";
    EXPECT(xio_superblock_eoa(fd, (uint64_t)files[f].userblock, &eoa, why, sizeof why) == 1,
           "file %zu: its superblock %s", f, why);
    const xio_chunk_places places = {3,   c,    grid, CHUNKS, (uint64_t)files[f].userblock,
                                     eoa, addr, size, mask};
    const int walked = xio_chunk_btree_walk(fd, file, d, &places, why, sizeof why);
    EXPECT(walked == files[f].walked, "file %zu: walked %d", f, walked);
    EXPECT(!walked || xio_chunk_btree_agrees(d, &places), "file %zu: HDF5 disagrees", f);
    for (int64_t k = 0; walked && k < CHUNKS; k++) {
      const hsize_t offset[3] = {(hsize_t)(k / 9 * 2), (hsize_t)(k / 3 % 3 * 3),
                                 (hsize_t)(k % 3 * 4)};
      unsigned m = 9;
      haddr_t a = HADDR_UNDEF;
      hsize_t n = 0;
      H5Dget_chunk_info_by_coord(d, offset, &m, &a, &n);
      EXPECT(addr[k] == (uint64_t)a + (uint64_t)files[f].userblock && size[k] == n && mask[k] == m,
             "file %zu, chunk %lld: walked %llu (%llu bytes), HDF5 %llu (%llu)", f, (long long)k,
             (unsigned long long)addr[k], (unsigned long long)size[k], (unsigned long long)a,
             (unsigned long long)n);
    }
    close(fd);
    H5Dclose(d), H5Fclose(file);
    cases++;
  }
  remove("btree.h5");
}

int main(void) {
#if !defined(XIO_HAVE_LIBDEFLATE)
  printf("skipped: built without libdeflate\n");
  return 77;
#endif
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const pipeline pipelines[] = {{0, 4, 0, 0},  {1, 4, 0, 0}, {1, 4, 1, 0}, {0, -1, 1, 0},
                                {1, -1, 0, 0}, {1, 9, 1, 1}, {1, 1, 0, 0}, {0, 0, 0, 0}};
  const size_t sizes[] = {1, 2, 4, 8, 12, 16};
  for (size_t p = 0; p < sizeof pipelines / sizeof *pipelines; p++)
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
      check_pipeline(&pipelines[p], sizes[z], 37, 53, 16, 20); /* edge chunks both ways */
      check_pipeline(&pipelines[p], sizes[z], 32, 40, 32, 40); /* one whole chunk */
    }
  check_pipeline(&pipelines[2], 4, 301, 7, 1, 7);
  check_masks_and_damage();
  check_encode_from();
  check_zarr_codecs();
  check_pool();
  check_box();
  check_btree_walk();
  if (test_failures) return 1;
  printf("chunk codec: %lld cases passed\n", cases);
  return 0;
}
