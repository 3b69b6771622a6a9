/* Host transpose benchmark: xpose's kernel beside memcpy of the same bytes
 * and OpenBLAS's out-of-place transpose (?omatcopy), in one process on the
 * same buffers.  Bandwidth = 2 x bytes / time (every byte read and written
 * once), the best of several runs.  Every result is checked element by
 * element against the source; outputs are poisoned before each run. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "backend/host_kernels.h"
#include "xpose.h"
#ifdef XPOSE_HAVE_OPENBLAS
#include <cblas.h>
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *huge_alloc(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 2 << 20, bytes)) {
    fprintf(stderr, "cannot allocate %zu bytes\n", bytes);
    exit(1);
  }
  madvise(p, bytes, MADV_HUGEPAGE); /* the same pages for every contender */
  return p;
}

/* Distinct, finite, non-zero values: floats for 4/8/16 bytes so OpenBLAS's
 * alpha = 1 multiplication reproduces them exactly. */
static void fill(unsigned char *src, size_t n, size_t es) {
  for (size_t k = 0; k < n; k++) {
    if (es == 4) {
      float f = (float)(k % 1000003) + 0.25f;
      memcpy(src + k * 4, &f, 4);
    } else if (es == 8 || es == 16) {
      for (size_t part = 0; part < es / 8; part++) {
        double d = (double)k + 0.5 + (double)part * 0.125;
        memcpy(src + k * es + part * 8, &d, 8);
      }
    } else {
      for (size_t b = 0; b < es; b++)
        src[k * es + b] = (unsigned char)(1 + (k * 131 + b * 7) % 251);
    }
  }
}

static long long count_wrong(const unsigned char *src, const unsigned char *dst, int64_t rows,
                             int64_t cols, size_t es) {
  long long wrong = 0;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      wrong +=
          memcmp(dst + ((size_t)j * rows + i) * es, src + ((size_t)i * cols + j) * es, es) != 0;
  return wrong;
}

typedef enum { RUN_MEMCPY, RUN_XPOSE, RUN_OPENBLAS } contender;

static int run(contender who, xpose_host_kernel kernel, const void *src, void *dst, int64_t rows,
               int64_t cols, size_t es) {
  const size_t bytes = (size_t)rows * (size_t)cols * es;
  switch (who) {
    case RUN_MEMCPY: memcpy(dst, src, bytes); return 1;
    case RUN_XPOSE:
      xpose_host_transpose_using(kernel, src, cols, dst, rows, rows, cols, es);
      return 1;
    case RUN_OPENBLAS:
#ifdef XPOSE_HAVE_OPENBLAS
      if (es == 4) {
        cblas_somatcopy(CblasRowMajor, CblasTrans, (int)rows, (int)cols, 1.0f, src, (int)cols, dst,
                        (int)rows);
        return 1;
      }
      if (es == 8) {
        cblas_domatcopy(CblasRowMajor, CblasTrans, (int)rows, (int)cols, 1.0, src, (int)cols, dst,
                        (int)rows);
        return 1;
      }
      if (es == 16) {
        const double one[2] = {1.0, 0.0};
        cblas_zomatcopy(CblasRowMajor, CblasTrans, (int)rows, (int)cols, one, src, (int)cols, dst,
                        (int)rows);
        return 1;
      }
#endif
      return 0;
  }
  return 0;
}

/* One shape, every element size (or only_size); returns wrong elements. */
static long long bench_shape(int64_t rows, int64_t cols, int repeats, size_t only_size,
                             xpose_host_kernel kernel) {
  const size_t sizes[] = {1, 2, 4, 8, 16};
  const char *names[] = {"memcpy", "xpose", "openblas"};
  long long total_wrong = 0;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    const size_t es = sizes[s], bytes = (size_t)rows * (size_t)cols * es;
    if (only_size && es != only_size) continue;
    unsigned char *src = huge_alloc(bytes), *dst = huge_alloc(bytes);
    fill(src, (size_t)rows * (size_t)cols, es);
    /* Contenders take turns within each repeat, so drifting machine
     * bandwidth affects all of them alike; each keeps its best time, and
     * its first (on a destination only touched by the poisoning). */
    double best[3] = {1e30, 1e30, 1e30}, first[3] = {0, 0, 0};
    long long wrong[3] = {0, 0, 0};
    int ran[3] = {1, 1, 1};
    for (int r = 0; r < repeats; r++)
      for (int who = RUN_MEMCPY; who <= RUN_OPENBLAS; who++) {
        if (!ran[who]) continue;
        memset(dst, 0xA5, bytes);
        const double t0 = now();
        ran[who] = run((contender)who, kernel, src, dst, rows, cols, es);
        const double t = now() - t0;
        if (t < best[who]) best[who] = t;
        if (ran[who] && r == 0) {
          first[who] = t;
          wrong[who] = who == RUN_MEMCPY ? (memcmp(src, dst, bytes) != 0)
                                         : count_wrong(src, dst, rows, cols, es);
        }
      }
    const double memcpy_gbs = 2.0 * (double)bytes / best[RUN_MEMCPY] / 1e9;
    for (int who = RUN_MEMCPY; who <= RUN_OPENBLAS; who++) {
      if (!ran[who]) continue;
      const double gbs = 2.0 * (double)bytes / best[who] / 1e9;
      total_wrong += wrong[who];
      printf("%6lld %6lld %4zu %-9s %11zu %9.3f %9.3f %8.2f %7.1f%% %7lld\n", (long long)rows,
             (long long)cols, es, names[who], bytes, first[who] * 1e3, best[who] * 1e3, gbs,
             100.0 * gbs / memcpy_gbs, wrong[who]);
    }
    free(src);
    free(dst);
  }
  return total_wrong;
}

int main(int argc, char **argv) {
  /* Without --rows/--cols: a power of two, and odd row and column counts
   * (destination rows that are not a whole number of cache lines). */
  static const int64_t default_shapes[][2] = {
      {8192, 8192}, {8191, 8192}, {10007, 6007}, {10000, 6000}};
  int64_t rows = 0, cols = 0;
  int repeats = 5;
  size_t only_size = 0; /* 0: all of 1, 2, 4, 8, 16 */
  xpose_host_kernel kernel = XPOSE_HOST_KERNEL_AUTO;
  static const struct option opts[] = {{"rows", required_argument, NULL, 'r'},
                                       {"cols", required_argument, NULL, 'c'},
                                       {"repeats", required_argument, NULL, 'n'},
                                       {"kernel", required_argument, NULL, 'k'},
                                       {"elem-size", required_argument, NULL, 'e'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "r:c:n:k:e:h", opts, NULL)) != -1) {
    switch (c) {
      case 'r': rows = atoll(optarg); break;
      case 'c': cols = atoll(optarg); break;
      case 'n': repeats = atoi(optarg); break;
      case 'e': only_size = (size_t)atoll(optarg); break;
      case 'k':
        kernel = strcmp(optarg, "portable") == 0 ? XPOSE_HOST_KERNEL_PORTABLE
                 : strcmp(optarg, "avx2") == 0   ? XPOSE_HOST_KERNEL_AVX2
                                                 : XPOSE_HOST_KERNEL_AUTO;
        break;
      default:
        printf(
            "Usage: %s [--rows N --cols N] [--repeats N] [--kernel auto|portable|avx2] "
            "[--elem-size 1|2|4|8|16]\n"
            "Without --rows and --cols: 8192x8192, 8191x8192, 10007x6007 and 10000x6000.\n",
            argv[0]);
        return c == 'h' ? 0 : 2;
    }
  }
  if ((rows > 0) != (cols > 0) || rows < 0 || cols < 0 || repeats < 1 ||
      !xpose_host_kernel_available(kernel)) {
    fprintf(stderr, "bad arguments or kernel not available on this CPU\n");
    return 2;
  }
  printf("# host transpose, one core, best of %d (contenders interleaved), kernel %s\n", repeats,
         xpose_host_kernel_name(kernel));
  printf("# bandwidth = 2 x bytes / time of the best run; %% = of memcpy in the same run;\n"
         "# first_ms = the first run\n");
  printf("%6s %6s %4s %-9s %11s %9s %9s %8s %8s %7s\n", "rows", "cols", "elem", "method", "bytes",
         "first_ms", "best_ms", "GB/s", "%memcpy", "#wrong");
  long long total_wrong = 0;
  if (rows > 0) {
    total_wrong = bench_shape(rows, cols, repeats, only_size, kernel);
  } else {
    for (size_t k = 0; k < sizeof default_shapes / sizeof *default_shapes; k++)
      total_wrong += bench_shape(default_shapes[k][0], default_shapes[k][1], repeats, only_size,
                                 kernel);
  }
  if (total_wrong) printf("# %lld WRONG elements\n", total_wrong);
  return total_wrong ? 1 : 0;
}
