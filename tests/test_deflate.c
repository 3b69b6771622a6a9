/* HDF5's deflate chunks compressed by libdeflate (io/codec/deflate.c): zlib's
 * compress2() contract kept (what HDF5 relies on), zlib inflating every
 * stream back, HDF5's own calls reaching it, and XPOSE_DEFLATE obeyed.
 * Skipped (77) in builds without libdeflate. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <hdf5.h>
#include <mpi.h>
#include <string.h>
#include <zlib.h>

#include "deflate.h"
#include "test_util.h"

/* A record of a field: smooth values, as climate data, so it compresses. */
static void smooth_floats(float *v, size_t n) {
  for (size_t i = 0; i < n; i++) v[i] = 280.0f + 10.0f * (float)((i * 7919) % 1000) / 1000.0f;
}

static void noise(unsigned char *b, size_t n) {
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b[i] = (unsigned char)(x >> 24);
  }
}

/* compress2 into room bytes; returns its code, and checks that zlib
 * inflates a stream it made back to the source. */
static int compress_and_inflate(const unsigned char *source, size_t n, size_t room, int level) {
  unsigned char *packed = malloc(room + 1), *back = malloc(n + 1);
  uLongf packed_len = (uLongf)room;
  const int rc = compress2(packed, &packed_len, source, (uLong)n, level);
  if (rc == Z_OK) {
    EXPECT(packed_len <= room, "n=%zu level %d: %lu bytes in %zu of room", n, level,
           (unsigned long)packed_len, room);
    uLongf back_len = (uLongf)n;
    const int inflated = uncompress(back, &back_len, packed, packed_len);
    EXPECT(inflated == Z_OK && back_len == n && memcmp(back, source, n) == 0,
           "n=%zu level %d: zlib inflates it to %lu bytes (code %d)", n, level,
           (unsigned long)back_len, inflated);
  }
  free(packed);
  free(back);
  return rc;
}

static void check_compress2(void) {
  const size_t n = (1 << 20) + 3;
  float *field = malloc(n);
  unsigned char *zeros = calloc(1, n), *random = malloc(n);
  smooth_floats(field, n / sizeof *field);
  noise(random, n);
  const size_t sizes[] = {1, 7, 4096, n};
  for (int level = -1; level <= 9; level++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
      EXPECT(compress_and_inflate(zeros, sizes[s], compressBound(sizes[s]), level) == Z_OK,
             "zeros n=%zu level %d", sizes[s], level);
      EXPECT(compress_and_inflate((unsigned char *)field, sizes[s], compressBound(sizes[s]),
                                  level) == Z_OK,
             "field n=%zu level %d", sizes[s], level);
    }
  /* Where zlib's stream fits, this one does: HDF5 1.10 gives
   * compressBound()'s room, and a parallel write marks a chunk that failed
   * to compress as deflated all the same. */
  for (size_t small = 1; small <= 600; small++)
    EXPECT(compress_and_inflate(random, small, compressBound(small), 4) == Z_OK,
           "%zu bytes of noise in compressBound's room", small);
  EXPECT(compress_and_inflate(random, n, n, 4) == Z_BUF_ERROR, "noise in no more room");
  EXPECT(compress_and_inflate(random, n, compressBound(n), 4) == Z_OK, "noise with zlib's bound");
  EXPECT(compress_and_inflate(zeros, 4096, 4096, 10) == Z_STREAM_ERROR, "level 10");
  free(field);
  free(zeros);
  free(random);
}

/* A chunked dataset with shuffle + deflate 4 written and read back through
 * HDF5 in memory; returns the chunks libdeflate compressed meanwhile. */
static uint64_t through_hdf5(int incompressible) {
  enum { ROWS = 64, COLS = 96 };
  static float out[ROWS][COLS], in[ROWS][COLS];
  if (incompressible)
    noise((unsigned char *)out, sizeof out);
  else
    smooth_floats(&out[0][0], ROWS * COLS);
  const uint64_t before = xio_deflate_chunks();
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_core(fapl, 1 << 20, 0);
  hid_t file = H5Fcreate("deflate.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  const hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {16, 32};
  hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_shuffle(dcpl);
  H5Pset_deflate(dcpl, 4);
  hid_t set = H5Dcreate2(file, "v", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  EXPECT(set >= 0 && H5Dwrite(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0,
         "writing a deflated dataset");
  H5Dclose(set); /* its chunks leave the cache, compressed */
  set = H5Dopen2(file, "v", H5P_DEFAULT);
  hid_t read_dcpl = H5Dget_create_plist(set);
  unsigned flags, level = 99;
  size_t count = 1;
  char name[32] = "";
  EXPECT(H5Pget_filter2(read_dcpl, 1, &flags, &count, &level, sizeof name, name, NULL) ==
                 H5Z_FILTER_DEFLATE &&
             level == 4,
         "the filter is HDF5's deflate at level 4 (level %u)", level);
  memset(in, 0, sizeof in);
  EXPECT(H5Dread(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, in) >= 0 &&
             memcmp(in, out, sizeof in) == 0,
         "the dataset reads back as written (incompressible: %d)", incompressible);
  H5Pclose(read_dcpl);
  H5Dclose(set);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
  H5Pclose(fapl);
  return xio_deflate_chunks() - before;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  xio_error err = {""};
  setenv("XPOSE_DEFLATE", "gzip", 1);
  EXPECT(xio_deflate_install(&err) != 0 && strstr(err.message, "\"gzip\""),
         "XPOSE_DEFLATE=gzip refused: %s", err.message);
  setenv("XPOSE_DEFLATE", "zlib", 1);
  EXPECT(xio_deflate_install(&err) == 0 && strcmp(xio_deflate_name(), "zlib") == 0,
         "XPOSE_DEFLATE=zlib keeps zlib: %s", xio_deflate_name());
  EXPECT(through_hdf5(0) == 0, "zlib compressed the chunks before the install");
  unsetenv("XPOSE_DEFLATE");
  const int installed = xio_deflate_install(&err);
  check_compress2(); /* libdeflate's, or zlib's where xpose has none */
#if !defined(XIO_HAVE_LIBDEFLATE)
  EXPECT(installed == 0 && strcmp(xio_deflate_name(), "zlib") == 0, "without libdeflate: %s",
         xio_deflate_name());
  MPI_Finalize();
  if (test_failures) return 1;
  puts("built without libdeflate: zlib compresses; skipped");
  return 77;
#else
  EXPECT(installed == 0 && strncmp(xio_deflate_name(), "libdeflate ", 11) == 0,
         "installed: %s (%s)", xio_deflate_name(), err.message);
  const uint64_t chunks = through_hdf5(0);
  EXPECT(chunks == 12, "libdeflate compressed %llu of HDF5's 12 chunks",
         (unsigned long long)chunks);
  EXPECT(through_hdf5(1) == 0, "noise compressed");
  MPI_Finalize();
  if (test_failures) return 1;
  puts("deflate: all passed");
  return 0;
#endif
}
