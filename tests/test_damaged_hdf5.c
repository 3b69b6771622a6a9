/* Damaged netCDF-4 and HDF5 inputs (issue 67): small files of each kind
 * xpose reads (a CF file whose axes are dimension scales, with
 * variable-length attributes; Fletcher32; whole-series chunks; matrices
 * indexed by the old B-tree, the latest format's fixed array, extensible
 * array and v2 B-tree; contiguous), 1-4 bytes changed (mostly where the
 * metadata lies) or the file cut short, cases from a fixed seed.  Each
 * case runs in children of its own under an alarm:
 *   the metadata walk the tool runs first in a process of its own
 *   (h5_metadata_walk.h): a crash or a hang there is a refusal;
 *   xpose's read: its chunk index (walked B-tree, or HDF5 asked) and
 *   codec, or a contiguous dataset's bytes at its offset, as the tool
 *   reads them: refused with a message, or values;
 *   HDF5's own read (H5Dread) of the same dataset.
 * A crash or hang of xpose's read, or values that differ from HDF5's (or
 * that HDF5 cannot read), fails the test.  Usage: test_damaged_hdf5
 * [CASES [SEED]]. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chunk_reader.h"
#include "h5_metadata_walk.h"
#include "test_util.h"

enum { NT = 12, NY = 8, NX = 10, ROWS = 64, COLS = 48, SECONDS = 5 };
enum { READ = 0, REFUSED = 1, HDF5_READS = 2 }; /* xpose's read's exit */

static const char *const kinds[] = {"cf",     "fletcher32", "series", "btree1",
                                    "farray", "earray",     "btree2", "contiguous"};
enum { KINDS = sizeof kinds / sizeof *kinds };

static void must(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "making the seeds: %s failed\n", what);
    exit(1);
  }
}

/* The CF-like file: time, lat, lon as dimension scales of tas, which has
 * attributes (one a variable-length string) and a fill value. */
static void make_cf(const char *path, int kind) {
  const hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t dims[3] = {NT, NY, NX}, max[3] = {H5S_UNLIMITED, NY, NX};
  const hsize_t chunk[3] = {kind == 2 ? NT : 1, kind == 2 ? 4 : NY, kind == 2 ? 5 : NX};
  const hid_t space = H5Screate_simple(3, dims, max), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const float fill = 1e20f;
  must(f >= 0 && H5Pset_chunk(dcpl, 3, chunk) >= 0 && H5Pset_shuffle(dcpl) >= 0 &&
           H5Pset_deflate(dcpl, 4) >= 0 && H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fill) >= 0 &&
           (kind != 1 || H5Pset_fletcher32(dcpl) >= 0),
       "tas's properties");
  const hid_t tas = H5Dcreate2(f, "tas", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  float values[NT * NY * NX];
  for (int i = 0; i < NT * NY * NX; i++) values[i] = 250.0f + (float)((i * 37) % 101) / 4.0f;
  must(H5Dwrite(tas, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0, "tas");
  const char *axes[3] = {"time", "lat", "lon"};
  for (int a = 0; a < 3; a++) {
    const hsize_t n = dims[a];
    const hid_t s = H5Screate_simple(1, &n, a ? NULL : &max[0]);
    const hid_t c = H5Pcreate(H5P_DATASET_CREATE);
    const hsize_t one = n;
    if (a == 0) must(H5Pset_chunk(c, 1, &one) >= 0, "time's chunks");
    const hid_t d = H5Dcreate2(f, axes[a], H5T_IEEE_F64LE, s, H5P_DEFAULT, c, H5P_DEFAULT);
    double v[NT];
    for (hsize_t i = 0; i < n; i++) v[i] = (double)i + 0.5;
    must(d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0 &&
             H5DSset_scale(d, axes[a]) >= 0 && H5DSattach_scale(tas, d, (unsigned)a) >= 0,
         "an axis");
    H5Dclose(d), H5Pclose(c), H5Sclose(s);
  }
  const hid_t str = H5Tcopy(H5T_C_S1), scalar = H5Screate(H5S_SCALAR);
  const char *units = "K";
  must(H5Tset_size(str, H5T_VARIABLE) >= 0, "a string type");
  const hid_t attr = H5Acreate2(tas, "units", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
  must(attr >= 0 && H5Awrite(attr, str, &units) >= 0, "units");
  H5Aclose(attr), H5Sclose(scalar), H5Tclose(str);
  H5Dclose(tas), H5Pclose(dcpl), H5Sclose(space), H5Fclose(f);
}

/* A matrix m: the old B-tree (kind 3), the latest format's fixed array,
 * extensible array and v2 B-tree (4-6), or contiguous (7). */
static void make_matrix(const char *path, int kind) {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (kind >= 4 && kind <= 6)
    must(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) >= 0, "latest");
  const hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  const hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {8, 12};
  const hsize_t max[2] = {kind == 5 || kind == 6 ? H5S_UNLIMITED : ROWS,
                          kind == 6 ? H5S_UNLIMITED : COLS};
  const hid_t space = H5Screate_simple(2, dims, max), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (kind != 7)
    must(H5Pset_chunk(dcpl, 2, chunk) >= 0 && H5Pset_deflate(dcpl, 1) >= 0, "m's chunks");
  const hid_t m = H5Dcreate2(f, "m", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  int32_t values[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++) values[i] = i * 7 + 3;
  must(m >= 0 && H5Dwrite(m, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0, "m");
  H5Dclose(m), H5Pclose(dcpl), H5Sclose(space), H5Fclose(f), H5Pclose(fapl);
}

static unsigned char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  must(f != NULL, path);
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  rewind(f);
  unsigned char *bytes = malloc(*size);
  must(bytes && fread(bytes, 1, *size, f) == *size, path);
  fclose(f);
  return bytes;
}

/* Child: the dataset's values as xpose reads them into `out` (READ),
 * refused (REFUSED), or left to HDF5's own read (HDF5_READS). */
static int xpose_read(const char *path, const char *name, const char *out) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = f >= 0 ? H5Dopen2(f, name, H5P_DEFAULT) : H5I_INVALID_HID;
  const hid_t space = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID,
              type = d >= 0 ? H5Dget_type(d) : -1;
  hsize_t dims[3] = {0};
  const int ndims = space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
  const size_t size = type >= 0 ? H5Tget_size(type) : 0;
  if (ndims < 2 || size == 0 || size > 8) return REFUSED;
  xio_shape shape = {.ndims = ndims, .lead = 0, .split = 1, .trail = ndims};
  uint64_t values = 1;
  for (int a = 0; a < ndims; a++) shape.dims[a] = (int64_t)dims[a], values *= dims[a];
  if (values > ((uint64_t)1 << 24)) return REFUSED;
  unsigned char *buf = malloc(values * size);
  const hid_t dcpl = H5Dget_create_plist(d);
  int rc = HDF5_READS;
  if (H5Pget_layout(dcpl) == H5D_CONTIGUOUS) { /* the raw path: its bytes at its offset */
    const haddr_t at = H5Dget_offset(d);
    struct stat st;
    const int fd = open(path, O_RDONLY);
    rc = at == HADDR_UNDEF || fstat(fd, &st) != 0 || at + values * size > (uint64_t)st.st_size ||
                 pread(fd, buf, values * size, (off_t)at) != (ssize_t)(values * size)
             ? REFUSED
             : READ;
  } else if (H5Pget_nfilters(dcpl) > 0) {
    xio_chunk_index *ix = xio_chunk_index_new();
    xio_error err;
    const int usable = xio_chunk_index_build(ix, MPI_COMM_NULL, f, d, &shape, size, name, &err);
    const int64_t cols = (int64_t)(values / dims[0]);
    rc = usable < 0    ? REFUSED
         : usable == 0 ? HDF5_READS
         : xio_chunk_index_read(ix, &shape, size, 0, (int64_t)dims[0], 0, cols, buf, &err) ? REFUSED
                                                                                           : READ;
  }
  FILE *o = rc == READ ? fopen(out, "wb") : NULL;
  if (o) fwrite(buf, size, values, o), fclose(o);
  return rc;
}

/* Child: HDF5's own read of the dataset into `out`: 0, or 1. */
static int hdf5_read(const char *path, const char *name, const char *out) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = f >= 0 ? H5Dopen2(f, name, H5P_DEFAULT) : H5I_INVALID_HID;
  const hid_t type = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
  const hssize_t n = d >= 0 ? H5Sget_simple_extent_npoints(H5Dget_space(d)) : -1;
  const size_t size = type >= 0 ? H5Tget_size(type) : 0;
  if (n <= 0 || size == 0 || (uint64_t)n > ((uint64_t)1 << 24)) return 1;
  void *buf = malloc((size_t)n * size);
  if (H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) return 1;
  FILE *o = fopen(out, "wb");
  if (o) fwrite(buf, size, (size_t)n, o), fclose(o);
  return o ? 0 : 1;
}

/* fn run in a child under an alarm: its exit status, or -(signal). */
static int in_child(int (*fn)(const char *, const char *, const char *), const char *path,
                    const char *name, const char *out) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int quiet = open("/dev/null", O_WRONLY); /* glibc's words on HDF5's crashes */
    if (quiet >= 0) dup2(quiet, 2);
    alarm(SECONDS);
    _exit(fn(path, name, out));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
}

static int walk(const char *path, const char *name, const char *out) {
  (void)name, (void)out;
  return xio_h5_metadata_walk(path) == 0 ? 0 : 1;
}

static int same_files(const char *a, const char *b) {
  size_t na, nb;
  unsigned char *x = slurp(a, &na), *y = slurp(b, &nb);
  const int same = na == nb && memcmp(x, y, na) == 0;
  free(x), free(y);
  return same;
}

int main(int argc, char **argv) {
  const int cases = argc > 1 ? atoi(argv[1]) : 3000;
  srand(argc > 2 ? (unsigned)atoi(argv[2]) : 67u);
  char dir[] = "/tmp/xpose-damaged-XXXXXX";
  must(mkdtemp(dir) != NULL, "a directory");
  char seed[KINDS][600], path[600], xout[600], hout[600];
  unsigned char *bytes[KINDS];
  size_t sizes[KINDS];
  for (int k = 0; k < KINDS; k++) {
    snprintf(seed[k], sizeof seed[k], "%s/%s.h5", dir, kinds[k]);
    if (k <= 2)
      make_cf(seed[k], k);
    else
      make_matrix(seed[k], k);
    bytes[k] = slurp(seed[k], &sizes[k]);
  }
  snprintf(path, sizeof path, "%s/case.h5", dir);
  snprintf(xout, sizeof xout, "%s/xpose.bin", dir);
  snprintf(hout, sizeof hout, "%s/hdf5.bin", dir);
  int tally[KINDS][4] = {{0}}; /* walk refused, xpose refused, HDF5's read, equal */
  for (int c = 0; c < cases; c++) {
    const int k = c % KINDS;
    unsigned char *b = malloc(sizes[k]);
    memcpy(b, bytes[k], sizes[k]);
    size_t size = sizes[k];
    const int how = rand() % 10;
    if (how == 0) size = (size_t)rand() % size; /* cut short */
    for (int n = how ? 1 + rand() % 4 : 0; n > 0; n--) {
      const size_t span = how < 8 && size > 4096 ? 4096 : size;
      b[(size_t)rand() % span] = (unsigned char)rand();
    }
    FILE *f = fopen(path, "wb");
    must(f && fwrite(b, 1, size, f) == size && fclose(f) == 0, path);
    free(b);
    const char *name = k <= 2 ? "tas" : "m";
    unlink(xout), unlink(hout);
    if (in_child(walk, path, name, NULL) < 0) { /* a crash or hang: the tool refuses */
      tally[k][0]++;
      continue;
    }
    const int x = in_child(xpose_read, path, name, xout);
    EXPECT(x >= 0, "case %d (%s): xpose's read died by signal %d", c, kinds[k], -x);
    if (x != READ) {
      tally[k][x == HDF5_READS ? 2 : 1]++;
      continue;
    }
    const int h = in_child(hdf5_read, path, name, hout);
    EXPECT(h == 0 && same_files(xout, hout),
           "case %d (%s): xpose read values that HDF5 %s (kept as %s.%d)", c, kinds[k],
           h ? "cannot read" : "reads otherwise", path, c);
    if (h == 0 && same_files(xout, hout))
      tally[k][3]++;
    else {
      char keep[700];
      snprintf(keep, sizeof keep, "%s.%d", path, c);
      rename(path, keep);
    }
  }
  for (int k = 0; k < KINDS; k++)
    printf("%-10s  walk refused %4d  xpose refused %4d  HDF5 reads %4d  equal %4d\n", kinds[k],
           tally[k][0], tally[k][1], tally[k][2], tally[k][3]);
  if (test_failures) {
    printf("%d failure(s); the cases are kept in %s\n", test_failures, dir);
    return 1;
  }
  for (int k = 0; k < KINDS; k++) unlink(seed[k]), free(bytes[k]);
  unlink(path), unlink(xout), unlink(hout), rmdir(dir);
  puts("ok");
  return 0;
}
