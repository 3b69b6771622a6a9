/* xpose-bench --distributed: the distributed GPU transpose under mpirun,
 * for each exchange engine, beside that engine's exchange of the same
 * bytes alone (the plan's own send/receive layout, nothing packed or
 * placed), all at once and in the pipeline's chunks, and, for engines on
 * the GPU's lanes, all at once beside plain copies of the bytes the
 * pipeline's local passes move (exchange_with_copies) and beside those
 * passes in no order (exchange_with_passes); the NCCL engine's
 * first row is a plain grouped NCCL all-to-all.  The p2p engine exchanges
 * nothing; its ratio is to NCCL's exchange alone in the same run.  Time
 * is the maximum over ranks of each run, median over runs; every transpose
 * is checked on the GPU against the input's definition. */
#include "bench_distributed.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_test_util.h"
#include "plan.h"

static int compare_doubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef enum {
  TIME_TRANSPOSE,
  TIME_EXCHANGE,
  TIME_EXCHANGE_CHUNKS,
  TIME_EXCHANGE_WITH_COPIES,
  TIME_EXCHANGE_WITH_PASSES
} timed_part;

/* The plan's exchange with nothing packed or placed: all at once, or chunk
 * by chunk as the pipeline starts and waits for them. */
static xpose_status exchange_only(xpose_plan plan, int chunked) {
  xpose_exchange *ex = plan->exchange;
  const xpose_layout *layout = &plan->layout;
  xpose_status res = XPOSE_SUCCESS;
  if (!chunked) {
    res = ex->ops->start(ex, 0, &layout->whole, plan->send_buf, plan->recv_buf);
    if (res == XPOSE_SUCCESS) res = ex->ops->wait(ex, 0);
  }
  for (int k = 0; chunked && k <= layout->nchunks && res == XPOSE_SUCCESS; k++) {
    if (k < layout->nchunks)
      res = ex->ops->start(ex, k % XPOSE_EXCHANGE_SLOTS, &layout->chunks[k].exchange,
                           plan->send_buf, plan->recv_buf);
    if (k > 0 && res == XPOSE_SUCCESS) res = ex->ops->wait(ex, (k - 1) % XPOSE_EXCHANGE_SLOTS);
  }
  if (res == XPOSE_SUCCESS) res = plan->backend->ops->synchronize(plan->backend);
  return res;
}

/* The exchange alone with, beside it on a local lane, plain copies of as
 * many bytes as the pipeline's local passes read and write: packing and
 * the own block (the input slab, into the output) and placing (what
 * arrives, into the output).  Any engine that needs each block contiguous
 * on both sides moves at least that much besides the transpose itself, so
 * where memory bandwidth is shared with the transfer this is its floor.
 * The copies race the exchange for data: timing only. */
static xpose_status exchange_with_copies(xpose_plan plan, const void *in, void *out) {
  xpose_exchange *ex = plan->exchange;
  const xpose_layout *layout = &plan->layout;
  cudaStream_t lane = plan->backend->ops->stream(plan->backend, XPOSE_LANE_SELF);
  const size_t in_bytes = (size_t)(layout->in.count * plan->cols) * plan->elem_size;
  const size_t out_bytes = (size_t)(layout->out.count * plan->rows) * plan->elem_size;
  int64_t received = 0;
  for (int q = 0; q < layout->whole.nranks; q++) received += layout->whole.recv_bytes[q];
  xpose_status res = ex->ops->start(ex, 0, &layout->whole, plan->send_buf, plan->recv_buf);
  if (res == XPOSE_SUCCESS && (cudaMemcpyAsync(out, in, in_bytes < out_bytes ? in_bytes : out_bytes,
                                               cudaMemcpyDeviceToDevice, lane) != cudaSuccess ||
                               cudaMemcpyAsync(out, plan->recv_buf, (size_t)received,
                                               cudaMemcpyDeviceToDevice, lane) != cudaSuccess))
    res = XPOSE_ERROR_CUDA;
  if (res == XPOSE_SUCCESS) res = ex->ops->wait(ex, 0);
  if (res == XPOSE_SUCCESS) res = plan->backend->ops->synchronize(plan->backend);
  return res;
}

/* The exchange alone with, beside it, the pipeline's own local passes
 * (every chunk's packing, own block and placing, on their lanes) in no
 * order with it: what sharing the GPU costs, without the pipeline's
 * waits.  Races the exchange for data: timing only. */
static xpose_status exchange_with_passes(xpose_plan plan, const void *in, void *out) {
  xpose_exchange *ex = plan->exchange;
  const xpose_layout *layout = &plan->layout;
  xpose_status res = ex->ops->start(ex, 0, &layout->whole, plan->send_buf, plan->recv_buf);
  for (int k = 0; k < layout->nchunks && res == XPOSE_SUCCESS; k++) {
    const xpose_chunk_layout *c = &layout->chunks[k];
    res = xpose_pack_chunk(plan, c, in);
    if (res == XPOSE_SUCCESS) res = xpose_own_chunk(plan, c, in, out);
    if (res == XPOSE_SUCCESS) res = xpose_place_chunk(plan, c, out);
  }
  if (res == XPOSE_SUCCESS) res = ex->ops->wait(ex, 0);
  if (res == XPOSE_SUCCESS) res = plan->backend->ops->synchronize(plan->backend);
  return res;
}

static xpose_status run_part(xpose_plan plan, timed_part part, const void *in, void *out) {
  switch (part) {
    case TIME_TRANSPOSE: return xpose_execute(plan, in, out);
    case TIME_EXCHANGE: return exchange_only(plan, 0);
    case TIME_EXCHANGE_CHUNKS: return exchange_only(plan, 1);
    case TIME_EXCHANGE_WITH_COPIES: return exchange_with_copies(plan, in, out);
    case TIME_EXCHANGE_WITH_PASSES: return exchange_with_passes(plan, in, out);
  }
  return XPOSE_ERROR_INVALID_ARGUMENT;
}

static void print_row(const char *engine, const char *what, int64_t bytes, double seconds,
                      const char *ratio, const char *wrong) {
  printf("%-15s %-16s %14lld %10.3f %9.1f %7s %7s\n", engine, what, (long long)bytes, seconds * 1e3,
         (double)bytes / seconds / 1e9, ratio, wrong);
}

/* Median over runs of the slowest rank's time, in seconds. */
static double time_part(xpose_plan plan, timed_part part, const void *in, void *out, int warmup,
                        int iters) {
  double *t = calloc((size_t)iters, sizeof *t);
  for (int r = -warmup; r < iters; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (run_part(plan, part, in, out) != XPOSE_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r >= 0) t[r] = slowest;
  }
  qsort(t, (size_t)iters, sizeof *t, compare_doubles);
  const double median = t[iters / 2];
  free(t);
  return median;
}

static int engine_wanted(const char *engines, const char *name) {
  if (!engines) return 1;
  const size_t n = strlen(name);
  for (const char *p = engines; (p = strstr(p, name)) != NULL; p += n)
    if ((p == engines || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return 1;
  return 0;
}

int xpose_bench_distributed(int64_t rows, int64_t cols, size_t es, int warmup, int iters,
                            const char *engines, int chunks) {
  int rank, nranks, device;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (xpose_cuda_select_device(MPI_COMM_WORLD, &device) != XPOSE_SUCCESS) {
    if (rank == 0) printf("skipped: no GPU\n");
    return XPOSE_TEST_SKIPPED;
  }
  struct cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, device);
  char date[32];
  const time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  if (rank == 0) {
    printf("# xpose-bench --distributed: %d rank(s), one %s each, %s\n", nranks, prop.name, date);
    printf("# %lld x %lld, %zu-byte elements, %.2f GiB in all; time = slowest rank, median of %d\n",
           (long long)rows, (long long)cols, es,
           (double)rows * (double)cols * (double)es / (1 << 30), iters);
    printf(
        "# GB/s = bytes each rank sends / time; ratio = time / the same engine's exchange alone\n"
        "# (p2p: / nccl's exchange alone)\n");
    printf("%-15s %-16s %14s %10s %9s %7s %7s\n", "engine", "what", "sent/rank", "time_ms", "GB/s",
           "ratio", "#wrong");
  }
  const xpose_exchange_kind kinds[] = {XPOSE_EXCHANGE_NCCL, XPOSE_EXCHANGE_MPI,
                                       XPOSE_EXCHANGE_STAGED, XPOSE_EXCHANGE_P2P};
  const char *const engine_names[] = {"nccl", "cuda-aware-mpi", "staged", "p2p"};
  const char *const engine_options[] = {"nccl", "mpi", "staged", "p2p"};
  const uint32_t seed = 11;
  unsigned long long all_wrong = 0;
  double nccl_exchange = 0; /* NCCL's exchange alone, the p2p engine's yardstick */
  for (int e = 0; e < 4; e++) {
    if (!engine_wanted(engines, engine_options[e])) continue;
    /* p2p exchanges nothing: it writes into the plans' own outputs. */
    const int p2p = kinds[e] == XPOSE_EXCHANGE_P2P;
    xpose_config config;
    xpose_config_init(&config);
    config.backend = XPOSE_BACKEND_CUDA;
    config.exchange = kinds[e];
    config.pipeline_chunks = chunks;
    config.own_output = p2p;
    xpose_plan plan = NULL;
    const xpose_status st = xpose_plan_create(MPI_COMM_WORLD, rows, cols, es, &config, &plan);
    if (st != XPOSE_SUCCESS) {
      if (rank == 0) printf("%-15s skipped: %s\n", engine_names[e], xpose_status_string(st));
      continue;
    }
    const char *name = xpose_plan_exchange_name(plan);
    void *in = NULL, *out = NULL;
    const xpose_range in_rows = plan->layout.in, out_rows = plan->layout.out;
    const size_t in_bytes = (size_t)(in_rows.count * cols) * es;
    const size_t out_bytes = (size_t)(out_rows.count * rows) * es;
    if (p2p) xpose_plan_output_buffer(plan, &out);
    if (cudaMalloc(&in, in_bytes + 1) != cudaSuccess ||
        (!p2p && cudaMalloc(&out, out_bytes + 1) != cudaSuccess))
      MPI_Abort(MPI_COMM_WORLD, 1);
    xpose_test_fill_rows(in, in_rows.first, in_rows.count, cols, es, seed, 0);
    cudaMemset(out, 0xA5, out_bytes);
    cudaDeviceSynchronize();
    unsigned long long wrong = 0, total_wrong = 0;
    if (xpose_execute(plan, in, out) != XPOSE_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
    xpose_test_count_wrong_slab(out, out_rows.first, out_rows.count, rows, es, seed, &wrong, 0);
    MPI_Allreduce(&wrong, &total_wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    all_wrong += total_wrong;
    /* The staged engine moves a few GB/s: fewer runs. */
    const int n = kinds[e] == XPOSE_EXCHANGE_STAGED && iters > 3 ? 3 : iters;
    const double exchange = p2p ? 0 : time_part(plan, TIME_EXCHANGE, in, out, 1, n);
    const double chunks_alone = p2p ? 0 : time_part(plan, TIME_EXCHANGE_CHUNKS, in, out, 1, n);
    /* Only where the exchange runs on the GPU's lanes beside the copies. */
    const int floor_row = !p2p && plan->exchange->stream_ordered;
    const double with_copies =
        floor_row ? time_part(plan, TIME_EXCHANGE_WITH_COPIES, in, out, 1, n) : 0;
    const double with_passes =
        floor_row ? time_part(plan, TIME_EXCHANGE_WITH_PASSES, in, out, 1, n) : 0;
    const double transpose = time_part(plan, TIME_TRANSPOSE, in, out, warmup < 1 ? 1 : warmup, n);
    if (kinds[e] == XPOSE_EXCHANGE_NCCL) nccl_exchange = exchange;
    /* Every block but the own one leaves the rank, whatever the engine. */
    int64_t sent = in_rows.count * (cols - out_rows.count) * (int64_t)es, most = 0;
    MPI_Allreduce(&sent, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    char ratio[16] = "-", wrong_text[24];
    snprintf(wrong_text, sizeof wrong_text, "%llu", total_wrong);
    if (rank == 0 && p2p) {
      /* Its yardstick is NCCL's exchange alone of the same bytes, this run. */
      if (nccl_exchange > 0) snprintf(ratio, sizeof ratio, "%.2f", transpose / nccl_exchange);
      print_row(name, "transpose", most, transpose, ratio, wrong_text);
      fflush(stdout);
    } else if (rank == 0) {
      print_row(name, "exchange alone", most, exchange, "1.00", "-");
      char what[32];
      snprintf(what, sizeof what, "in %d chunks", plan->layout.nchunks);
      const char *const labels[] = {what, "+ local copies", "+ local passes", "transpose"};
      const double times[] = {chunks_alone, with_copies, with_passes, transpose};
      for (int i = 0; i < 4; i++) {
        if (!floor_row && (i == 1 || i == 2)) continue;
        snprintf(ratio, sizeof ratio, "%.2f", times[i] / exchange);
        print_row(name, labels[i], most, times[i], ratio, i == 3 ? wrong_text : "-");
      }
      fflush(stdout);
    }
    cudaFree(in);
    if (!p2p) cudaFree(out);
    xpose_plan_destroy(plan);
  }
  return all_wrong ? 1 : 0;
}
