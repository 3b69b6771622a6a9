/* Zarr v3's shards: the default shards of arrays of many chunks (an
 * ERA5-like variable in one-record chunks, a 0.25-degree time series, an
 * hourly year's series that needs none, a budget that fits none, v2), and
 * a shard packed from inner chunks encoded apart equal to the shard
 * encoded whole; each inner chunk of it, stored as a file, read alone
 * back to its values, and a damaged index refused. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, pwrite */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunk_file.h"
#include "shard.h"
#include "test_util.h"
#include "zarr_array.h"
#include "codec.h"

#define MiB ((uint64_t)1 << 20)

/* The default shards of a float32 array (none: shard[0] = 0), and its
 * files once sharded so. */
static int64_t default_files(int format, int64_t t, int64_t y, int64_t x, int64_t ct, int64_t cy,
                             int64_t cx, uint64_t most_bytes, int64_t *shard) {
  const xio_zarr_codec codec = {.format = format, .compressor = XIO_ZARR_BLOSC_ZSTD, .level = -1};
  const xio_shape shape = {.ndims = 3, .dims = {t, y, x}};
  const int64_t chunks[3] = {ct, cy, cx};
  xio_zarr_array a;
  char why[200];
  if (xio_zarr_array_init(&a, "/a", &codec, H5T_NATIVE_FLOAT, &shape, chunks, NULL, why,
                          sizeof why))
    return -1;
  const int sharded = xio_zarr_default_shards(&a, most_bytes, shard);
  if (sharded && xio_zarr_array_shard(&a, shard, why, sizeof why)) return -1;
  if (!sharded) shard[0] = 0; /* none */
  return xio_zarr_files(&a);
}

static void check_default_shards(void) {
  int64_t s[3];
  int64_t files = default_files(3, 96432, 721, 1440, 1, 721, 1440, 256 * MiB, s);
  EXPECT(files == 1507 && s[0] == 64 && s[1] == 721 && s[2] == 1440,
         "ERA5-like, one record a chunk: %lld files, shards %lld x %lld x %lld", (long long)files,
         (long long)s[0], (long long)s[1], (long long)s[2]);
  files = default_files(3, 8760, 721, 1440, 8760, 16, 16, 256 * MiB, s);
  EXPECT(files == 529 && s[1] == 32 && s[2] == 64, "0.25-degree series: %lld files, %lld x %lld",
         (long long)files, (long long)s[1], (long long)s[2]);
  files = default_files(3, 8760, 181, 360, 8760, 16, 16, 256 * MiB, s);
  EXPECT(files == 12 * 23 && s[0] == 0, "the hourly year's series: %lld files", (long long)files);
  files = default_files(3, 96432, 721, 1440, 1, 721, 1440, 4 * MiB, s);
  EXPECT(files == 96432 && s[0] == 0, "no two chunks within the budget: %lld", (long long)files);
  files = default_files(2, 96432, 721, 1440, 1, 721, 1440, 256 * MiB, s);
  EXPECT(files == 96432 && s[0] == 0, "v2 has no shards: %lld", (long long)files);
}

/* A 7 x 9 shard of 3 x 4 inner chunks of int32 (edge chunks past its
 * values hold what the shard holds there), zstd: packed from its inner
 * chunks encoded apart, it is the shard xio_shard_encode makes. */
static void check_pack(void) {
  enum { SY = 9, SX = 12, IY = 3, IX = 4, N = (SY / IY) * (SX / IX) };
  const xio_shard_layout l = {
      .ndims = 2,
      .shard = {SY, SX},
      .inner = {IY, IX},
      .type_size = 4,
      .codecs = {.count = 1, .id = {XIO_CODEC_ZSTD}, .value = {1}, .known = 1}};
  int32_t values[SY * SX], chunk[IY * IX], back[SY * SX];
  for (int i = 0; i < SY * SX; i++) values[i] = (int32_t)(pattern_byte(i / SX, i % SX, 0) * 1000 + i);
  xio_codec_scratch *s = xio_codec_scratch_new();
  const size_t bound = xio_shard_bound(&l), room = xio_shard_inner_room(&l),
               inner_bound = xio_shard_inner_bound(&l);
  unsigned char *whole = malloc(bound), *slots = malloc(bound);
  size_t whole_size = 0, sizes[N];
  EXPECT(xio_shard_encode(&l, (unsigned char *)values, whole, bound, &whole_size, s) == 0,
         "the shard encodes whole");
  for (int k = 0; k < N; k++) {
    const int64_t zero[2] = {0, 0};
    int64_t origin[2];
    xio_shard_inner_origin(&l, zero, k, origin);
    for (int y = 0; y < IY; y++)
      memcpy(chunk + y * IX, values + (origin[0] + y) * SX + origin[1], IX * sizeof *chunk);
    EXPECT(xio_chunk_encode(&l.codecs, (unsigned char *)chunk, sizeof chunk, slots + k * room,
                            inner_bound, &sizes[k], s) == 0,
           "inner chunk %d encodes", k);
  }
  const size_t packed = xio_shard_pack(&l, slots, sizes, slots);
  EXPECT(packed == whole_size && memcmp(slots, whole, packed) == 0,
         "packed: %zu bytes, whole: %zu, the same bytes", packed, whole_size);
  /* stored as a file, each inner chunk read from it alone and decoded */
  char path[] = "/tmp/xpose-shard-XXXXXX", why[200] = "";
  const int fd = mkstemp(path);
  EXPECT(fd >= 0 && write(fd, slots, packed) == (ssize_t)packed, "the shard written");
  for (int k = 0; k < N; k++) {
    const int64_t zero[2] = {0, 0};
    int64_t origin[2];
    const unsigned char *stored = NULL, *decoded = NULL;
    size_t size = 0;
    xio_shard_inner_origin(&l, zero, k, origin);
    EXPECT(xio_chunk_file_read_inner(path, &l, bound, origin, s, &stored, &size, why, sizeof why) == 0 &&
               xio_chunk_decode(&l.codecs, 0, stored, size, sizeof chunk, s, &decoded, why,
                                sizeof why) == 0,
           "inner chunk %d read alone: %s", k, why);
    for (int y = 0; decoded && y < IY; y++)
      memcpy(back + (origin[0] + y) * SX + origin[1], decoded + y * IX * sizeof *chunk,
             IX * sizeof *chunk);
  }
  EXPECT(memcmp(back, values, sizeof back) == 0, "the shard's inner chunks read back its values");
  slots[packed - 1] ^= 1; /* the index's crc32c */
  EXPECT(fd >= 0 && pwrite(fd, slots + packed - 1, 1, (off_t)packed - 1) == 1, "damaged");
  const int64_t first[2] = {0, 0};
  const unsigned char *stored = NULL;
  size_t size = 0;
  EXPECT(xio_chunk_file_read_inner(path, &l, bound, first, s, &stored, &size, why, sizeof why) == -1 &&
             strstr(why, "crc32c"),
         "a damaged index refused: %s", why);
  if (fd >= 0) close(fd), unlink(path);
  xio_codec_scratch_free(s);
  free(whole), free(slots);
}

int main(void) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  check_default_shards();
  check_pack();
  if (test_failures) return 1;
  printf("zarr shards: passed\n");
  return 0;
}
