/* xpose-bench: GPU transpose benchmark in the style of nccl-tests.
 *
 * One GPU: cudaMemcpy device-to-device of the same bytes, cuBLAS geam
 * (float, double, complex double), and xpose's kernel, in the same run on
 * the same buffers.  Time is the median of --iters runs timed with CUDA
 * events after --warmup runs; bandwidth = 2 x bytes / time (every byte read
 * and written once); % is of cudaMemcpy's bandwidth in the same run.
 * Every row is verified on the GPU against the definition after poisoning
 * the output; #wrong counts wrong elements.
 *
 * Several GPUs: mpirun -n P xpose-bench --distributed RxC [--sizes 4]
 * [--exchange nccl,mpi,staged,p2p] [--chunks N]
 * (see bench_distributed.c). */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cuda_kernels.h"
#include "bench_distributed.h"
#include "cuda_test_util.h"
#include "xpose.h"

#define CUBLAS_OK(call)                                                                     \
  do {                                                                                      \
    cublasStatus_t s_ = (call);                                                             \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                      \
      fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_); \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

typedef enum { RUN_MEMCPY, RUN_GEAM, RUN_XPOSE } contender;
static const char *const contender_names[] = {"cudaMemcpy", "cublas-geam", "xpose"};

typedef struct {
  cublasHandle_t blas;
  cudaStream_t stream;
} context;

static int run(const context *ctx, contender who, const void *src, void *dst, int64_t rows,
               int64_t cols, size_t es) {
  switch (who) {
    case RUN_MEMCPY:
      CUDA_OK(cudaMemcpyAsync(dst, src, (size_t)(rows * cols) * es, cudaMemcpyDeviceToDevice,
                              ctx->stream));
      return 1;
    case RUN_XPOSE:
      CUDA_OK(xpose_cuda_transpose(src, cols, dst, rows, rows, cols, es, ctx->stream));
      return 1;
    case RUN_GEAM: {
      /* Column-major view: src is cols x rows (lda = cols); dst = src^T is rows x cols. */
      const int m = (int)rows, n = (int)cols;
      if (es == 4) {
        const float one = 1, zero = 0;
        CUBLAS_OK(cublasSgeam(ctx->blas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, src, n, &zero, dst,
                              m, dst, m));
      } else if (es == 8) {
        const double one = 1, zero = 0;
        CUBLAS_OK(cublasDgeam(ctx->blas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, src, n, &zero, dst,
                              m, dst, m));
      } else if (es == 16) {
        const cuDoubleComplex one = {1, 0}, zero = {0, 0};
        CUBLAS_OK(cublasZgeam(ctx->blas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, src, n, &zero, dst,
                              m, dst, m));
      } else {
        return 0;
      }
      return 1;
    }
  }
  return 0;
}

static int compare_floats(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Median time in ms of `iters` timed runs after `warmup` untimed ones. */
static float time_runs(const context *ctx, contender who, const void *src, void *dst, int64_t rows,
                       int64_t cols, size_t es, int warmup, int iters) {
  cudaEvent_t start, stop;
  CUDA_OK(cudaEventCreate(&start));
  CUDA_OK(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; i++) run(ctx, who, src, dst, rows, cols, es);
  float *ms = calloc((size_t)iters, sizeof *ms);
  for (int i = 0; i < iters; i++) {
    CUDA_OK(cudaEventRecord(start, ctx->stream));
    run(ctx, who, src, dst, rows, cols, es);
    CUDA_OK(cudaEventRecord(stop, ctx->stream));
    CUDA_OK(cudaEventSynchronize(stop));
    CUDA_OK(cudaEventElapsedTime(&ms[i], start, stop));
  }
  qsort(ms, (size_t)iters, sizeof *ms, compare_floats);
  const float median = ms[iters / 2];
  free(ms);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median;
}

static int parse_shapes(const char *text, int64_t (*shapes)[2], int max) {
  int n = 0;
  const char *p = text;
  while (*p && n < max) {
    char *end;
    shapes[n][0] = strtoll(p, &end, 10);
    if (*end != 'x') return -1;
    shapes[n][1] = strtoll(end + 1, &end, 10);
    if (shapes[n][0] < 1 || shapes[n][1] < 1) return -1;
    n++;
    if (*end == ',')
      end++;
    else if (*end)
      return -1;
    p = end;
  }
  return n;
}

static int bench_one_gpu(int argc, char **argv);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const int status = bench_one_gpu(argc, argv);
  MPI_Finalize();
  return status;
}

static int bench_one_gpu(int argc, char **argv) {
  int64_t shapes[16][2];
  int distributed = 0, chunks = 0;
  const char *engines = NULL;
  int nshapes = parse_shapes("16384x16384,32768x32768,16411x12289", shapes, 16);
  size_t sizes[8] = {1, 2, 4, 8, 16};
  int nsizes = 5, warmup = 3, iters = 20;
  static const struct option opts[] = {{"shapes", required_argument, NULL, 's'},
                                       {"sizes", required_argument, NULL, 'e'},
                                       {"iters", required_argument, NULL, 'n'},
                                       {"warmup", required_argument, NULL, 'w'},
                                       {"distributed", required_argument, NULL, 'd'},
                                       {"exchange", required_argument, NULL, 'x'},
                                       {"chunks", required_argument, NULL, 'c'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "s:e:n:w:d:x:c:h", opts, NULL)) != -1) {
    switch (c) {
      case 's': nshapes = parse_shapes(optarg, shapes, 16); break;
      case 'd':
        nshapes = parse_shapes(optarg, shapes, 1);
        distributed = 1;
        break;
      case 'e': {
        nsizes = 0;
        for (char *tok = strtok(optarg, ","); tok && nsizes < 8; tok = strtok(NULL, ","))
          sizes[nsizes++] = (size_t)atoll(tok);
        break;
      }
      case 'n': iters = atoi(optarg); break;
      case 'x': engines = optarg; break;
      case 'c': chunks = atoi(optarg); break;
      case 'w': warmup = atoi(optarg); break;
      default:
        printf(
            "Usage: xpose-bench [--shapes RxC,...] [--sizes 1,2,4,8,16] [--iters N] [--warmup N]\n"
            "       mpirun -n P xpose-bench --distributed RxC [--sizes S] [--iters N]\n"
            "              [--exchange nccl,mpi,staged,p2p] [--chunks N]\n");
        return c == 'h' ? 0 : 2;
    }
  }
  if (nshapes < 1 || nsizes < 1 || iters < 1 || warmup < 0 || chunks < 0) {
    fprintf(stderr, "xpose-bench: bad arguments\n");
    return 2;
  }
  if (distributed)
    return xpose_bench_distributed(shapes[0][0], shapes[0][1], nsizes == 5 ? 4 : sizes[0], warmup,
                                   iters, engines, chunks); /* default: 4-byte floats */
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("skipped: no GPU\n");
    return XPOSE_TEST_SKIPPED;
  }
  struct cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  char date[32];
  const time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  printf("# xpose-bench, one GPU: %s (%d SMs, %.0f GiB), %s\n", prop.name, prop.multiProcessorCount,
         (double)prop.totalGlobalMem / (1 << 30), date);
  printf("# median of %d runs after %d warm-ups; GB/s = 2 x bytes / time; %% of cudaMemcpy\n",
         iters, warmup);
  printf("%-13s %4s %-11s %14s %10s %9s %8s %7s\n", "shape", "elem", "method", "bytes", "time_ms",
         "GB/s", "%memcpy", "#wrong");
  context ctx;
  CUDA_OK(cudaStreamCreate(&ctx.stream));
  CUBLAS_OK(cublasCreate(&ctx.blas));
  CUBLAS_OK(cublasSetStream(ctx.blas, ctx.stream));
  unsigned long long total_wrong = 0;
  for (int s = 0; s < nshapes; s++)
    for (int e = 0; e < nsizes; e++) {
      const int64_t rows = shapes[s][0], cols = shapes[s][1];
      const size_t es = sizes[e], bytes = (size_t)(rows * cols) * es;
      char shape[32];
      snprintf(shape, sizeof shape, "%lldx%lld", (long long)rows, (long long)cols);
      void *src = NULL, *dst = NULL;
      if (cudaMalloc(&src, bytes) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess) {
        printf("%-13s %4zu skipped: %zu bytes twice do not fit\n", shape, es, bytes);
        cudaFree(src);
        cudaGetLastError();
        continue;
      }
      if (es == 4 || es == 8 || es == 16)
        CUDA_OK(xpose_test_fill_floats(src, cols, rows, cols, es, ctx.stream));
      else
        CUDA_OK(xpose_test_fill(src, cols, rows, cols, es, (uint32_t)s, ctx.stream));
      float memcpy_ms = 0;
      for (int who = RUN_MEMCPY; who <= RUN_XPOSE; who++) {
        CUDA_OK(cudaMemsetAsync(dst, 0xA5, bytes, ctx.stream));
        if (!run(&ctx, (contender)who, src, dst, rows, cols, es)) continue;
        unsigned long long wrong = 0;
        if (who == RUN_MEMCPY) /* a copy is the transpose of a 1 x n matrix */
          CUDA_OK(xpose_test_count_wrong(src, rows * cols, dst, 1, 1, rows * cols, es, &wrong,
                                         ctx.stream));
        else
          CUDA_OK(xpose_test_count_wrong(src, cols, dst, rows, rows, cols, es, &wrong, ctx.stream));
        const float ms = time_runs(&ctx, (contender)who, src, dst, rows, cols, es, warmup, iters);
        if (who == RUN_MEMCPY) memcpy_ms = ms;
        total_wrong += wrong;
        printf("%-13s %4zu %-11s %14zu %10.3f %9.1f %7.1f%% %7llu\n", shape, es,
               contender_names[who], bytes, ms, 2.0 * (double)bytes / ms / 1e6,
               100.0 * memcpy_ms / ms, wrong);
        fflush(stdout);
      }
      CUDA_OK(cudaFree(src));
      CUDA_OK(cudaFree(dst));
    }
  cublasDestroy(ctx.blas);
  cudaStreamDestroy(ctx.stream);
  if (total_wrong) printf("# %llu WRONG elements\n", total_wrong);
  return total_wrong ? 1 : 0;
}
