/* The simplest out-of-core transpose of a contiguous HDF5 dataset's bytes:
 * the floor xpose's passes are held against (bench_io.sh's `simple`).
 * Row bands are read in order by one thread while the band before is
 * transposed by THREADS threads and the one before that written by one
 * thread, each output row's piece of a band as one pwrite into the page
 * cache; one fsync at the end.  No checksums, no HDF5 output, no resume.
 *   simple_transpose IN.h5 DATASET OUT.raw [BAND_ROWS [THREADS]]
 *   simple_transpose --check IN.h5 DATASET OUT.raw [SAMPLES]
 * The first prints its time split on stderr; the second compares SAMPLES
 * (default 1M) elements at random places and prints how many are wrong. */
#define _GNU_SOURCE /* posix_fadvise */
#include <fcntl.h>
#include <hdf5.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  uint64_t offset;
  int64_t rows, cols;
  size_t es;
} layout;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fail(const char *what) {
  perror(what);
  exit(1);
}

/* Where the dataset's bytes are: HDF5 only says, the rest is plain I/O. */
static layout find(const char *file, const char *dataset) {
  layout l = {0, 0, 0, 0};
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, dataset, H5P_DEFAULT);
  hid_t space = H5Dget_space(d), type = H5Dget_type(d);
  hsize_t dims[2];
  if (d < 0 || H5Sget_simple_extent_ndims(space) != 2 || H5Dget_offset(d) == HADDR_UNDEF) {
    fprintf(stderr, "%s:%s is not a contiguous 2-D dataset\n", file, dataset);
    exit(2);
  }
  H5Sget_simple_extent_dims(space, dims, NULL);
  l = (layout){H5Dget_offset(d), (int64_t)dims[0], (int64_t)dims[1], H5Tget_size(type)};
  H5Tclose(type), H5Sclose(space), H5Dclose(d), H5Fclose(f);
  return l;
}

typedef struct {
  int fd;
  const layout *l;
  int64_t row0, rows; /* the band */
  unsigned char *buf;
  int64_t col0, cols; /* transposing: the input columns this thread takes */
  const unsigned char *from;
} job;

static void *read_band(void *arg) {
  const job *j = arg;
  const size_t bytes = (size_t)(j->rows * j->l->cols) * j->l->es;
  const uint64_t at = j->l->offset + (uint64_t)(j->row0 * j->l->cols) * j->l->es;
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = pread(j->fd, j->buf + done, bytes - done, (off_t)(at + done));
    if (n <= 0) fail("pread");
    done += (size_t)n;
  }
  return NULL;
}

/* out (cols x rows of the band) = the band transposed, 64 x 64 tiles. */
static void *transpose_cols(void *arg) {
  const job *j = arg;
  const size_t es = j->l->es;
  const int64_t n = j->l->cols, h = j->rows;
  for (int64_t c = j->col0; c < j->col0 + j->cols; c += 64)
    for (int64_t r = 0; r < h; r += 64)
      for (int64_t cc = c; cc < c + 64 && cc < j->col0 + j->cols; cc++)
        for (int64_t rr = r; rr < r + 64 && rr < h; rr++) {
          if (es == 4)
            ((uint32_t *)j->buf)[cc * h + rr] = ((const uint32_t *)j->from)[rr * n + cc];
          else
            memcpy(j->buf + (size_t)(cc * h + rr) * es, j->from + (size_t)(rr * n + cc) * es, es);
        }
  return NULL;
}

static void *write_band(void *arg) {
  const job *j = arg;
  const size_t es = j->l->es, piece = (size_t)j->rows * es;
  for (int64_t c = 0; c < j->l->cols; c++) {
    const off_t at = (off_t)((uint64_t)(c * j->l->rows + j->row0) * es);
    if (pwrite(j->fd, j->buf + (size_t)c * piece, piece, at) != (ssize_t)piece) fail("pwrite");
  }
  return NULL;
}

static int check(const char *in, const layout *l, const char *out, long samples) {
  const int fi = open(in, O_RDONLY), fo = open(out, O_RDONLY);
  if (fi < 0 || fo < 0) fail("open");
  long wrong = 0;
  uint64_t x = 88172645463325252ull; /* xorshift */
  unsigned char a[64], b[64];
  for (long s = 0; s < samples; s++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const int64_t i = (int64_t)(x % (uint64_t)l->rows),
                  j = (int64_t)((x >> 32) % (uint64_t)l->cols);
    if (pread(fi, a, l->es, (off_t)(l->offset + (uint64_t)(i * l->cols + j) * l->es)) !=
            (ssize_t)l->es ||
        pread(fo, b, l->es, (off_t)((uint64_t)(j * l->rows + i) * l->es)) != (ssize_t)l->es ||
        memcmp(a, b, l->es) != 0)
      wrong++;
  }
  printf("#wrong %ld of %ld sampled\n", wrong, samples);
  return wrong != 0;
}

int main(int argc, char **argv) {
  const int checking = argc > 1 && strcmp(argv[1], "--check") == 0;
  if (argc < 4 + checking) {
    fprintf(stderr, "usage: simple_transpose [--check] IN.h5 DATASET OUT.raw [BAND [THREADS]]\n");
    return 2;
  }
  argv += checking;
  const layout l = find(argv[1], argv[2]);
  if (checking) return check(argv[1], &l, argv[3], argc > 5 ? atol(argv[5]) : 1 << 20);
  const int64_t band = argc > 4 ? atoll(argv[4]) : 4096;
  const int threads = argc > 5 ? atoi(argv[5]) : 8;
  const double t0 = now();
  const int fi = open(argv[1], O_RDONLY), fo = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fi < 0 || fo < 0) fail("open");
  (void)posix_fadvise(fi, 0, 0, POSIX_FADV_SEQUENTIAL);
  const size_t bytes = (size_t)(band * l.cols) * l.es;
  unsigned char *in[2] = {malloc(bytes), malloc(bytes)}, *out[2] = {malloc(bytes), malloc(bytes)};
  if (!in[0] || !in[1] || !out[0] || !out[1]) fail("malloc");
  const int64_t bands = (l.rows + band - 1) / band;
  job reading = {fi, &l, 0, band < l.rows ? band : l.rows, in[0], 0, 0, NULL}, writing;
  read_band(&reading);
  double wait_read = now() - t0, wait_write = 0, transposing = 0;
  pthread_t reader, writer, worker[64];
  job part[64];
  for (int64_t b = 0; b < bands; b++) {
    const int64_t row0 = b * band, rows = l.rows - row0 < band ? l.rows - row0 : band;
    if (b + 1 < bands) {
      const int64_t next = row0 + band;
      reading = (job){fi, &l, next, l.rows - next < band ? l.rows - next : band, in[(b + 1) % 2],
                      0,  0,  NULL};
      pthread_create(&reader, NULL, read_band, &reading);
    }
    double t = now();
    const int n = threads < 64 ? threads : 64;
    for (int k = 0; k < n; k++) {
      const int64_t c0 = l.cols * k / n, c1 = l.cols * (k + 1) / n;
      part[k] = (job){fi, &l, row0, rows, out[b % 2], c0, c1 - c0, in[b % 2]};
      pthread_create(&worker[k], NULL, transpose_cols, &part[k]);
    }
    for (int k = 0; k < n; k++) pthread_join(worker[k], NULL);
    transposing += now() - t;
    t = now();
    if (b > 0) pthread_join(writer, NULL);
    wait_write += now() - t;
    writing = (job){fo, &l, row0, rows, out[b % 2], 0, 0, NULL};
    pthread_create(&writer, NULL, write_band, &writing);
    t = now();
    if (b + 1 < bands) pthread_join(reader, NULL);
    wait_read += now() - t;
  }
  double t = now();
  pthread_join(writer, NULL);
  wait_write += now() - t;
  t = now();
  if (fsync(fo) != 0) fail("fsync");
  const double syncing = now() - t, total = now() - t0;
  close(fi), close(fo);
  fprintf(stderr,
          "simple_transpose: %lld x %lld, %zu-byte elements, %lld-row bands, %d threads: %.2f s "
          "(waiting for reads %.2f s, transposing %.2f s, waiting for writes %.2f s, final fsync "
          "%.2f s)\n",
          (long long)l.rows, (long long)l.cols, l.es, (long long)band, threads, total, wait_read,
          transposing, wait_write, syncing);
  return 0;
}
