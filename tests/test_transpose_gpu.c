/* The distributed transpose on GPUs, under mpiexec: every exchange engine
 * this machine can run (NCCL, CUDA-aware MPI, host staging, and p2p on
 * plan-owned outputs), element sizes
 * 1..16 and 12, small, prime and empty-rank shapes, split messages, a
 * caller's stream, output rows in whole units; each result compared with
 * the host backend's.  Engines
 * that cannot run here are reported as skipped, with the reason; without a
 * GPU the whole test is skipped (exit 77 on every rank).
 *
 * Under XPOSE_PRETEND_NODES=N only the engines on plan-owned outputs run,
 * and p2p must send the blocks between pretend nodes through another engine
 * ("p2p+...").  With
 * --p2p-open-fails (and XPOSE_FAULT_P2P_OPEN naming a rank), creating a p2p
 * plan must fail on every rank, none hanging. */
#include <cuda_runtime_api.h>
#include <string.h>

#include "cuda_test_util.h"
#include "test_util.h"
#include "xpose.h"

static int rank, nranks;

static void fill_input(unsigned char *in, int64_t first, int64_t count, int64_t cols, size_t es) {
  for (int64_t i = 0; i < count; i++)
    for (int64_t j = 0; j < cols; j++)
      for (size_t k = 0; k < es; k++)
        in[((size_t)i * cols + j) * es + k] = pattern_byte(first + i, j, k);
}

/* One shape on the GPU with `config`, compared with the host backend. */
static void run_case(const xpose_config *config, int64_t rows, int64_t cols, size_t es,
                     void *stream) {
  xpose_plan gpu = NULL, host = NULL;
  xpose_config host_config; /* the same split of the output rows */
  xpose_config_init(&host_config);
  host_config.output_row_unit = config->output_row_unit;
  xpose_status st = xpose_plan_create(MPI_COMM_WORLD, rows, cols, es, config, &gpu);
  EXPECT(st == XPOSE_SUCCESS, "GPU plan %lldx%lld es=%zu: %s", (long long)rows, (long long)cols, es,
         xpose_status_string(st));
  EXPECT(xpose_plan_create(MPI_COMM_WORLD, rows, cols, es, &host_config, &host) == XPOSE_SUCCESS,
         "host plan");
  if (!gpu || !host) goto done;
  if (stream) EXPECT(xpose_plan_set_stream(gpu, stream) == XPOSE_SUCCESS, "set_stream");
  int64_t in_first, in_count, out_first, out_count;
  xpose_plan_input_rows(gpu, &in_first, &in_count);
  xpose_plan_output_rows(gpu, &out_first, &out_count);
  const size_t in_bytes = (size_t)(in_count * cols) * es,
               out_bytes = (size_t)(out_count * rows) * es;
  unsigned char *in = malloc(in_bytes + 1), *expected = malloc(out_bytes + 1),
                *got = malloc(out_bytes + 1);
  void *d_in = NULL, *d_out = NULL;
  fill_input(in, in_first, in_count, cols, es);
  EXPECT(xpose_execute(host, in, expected) == XPOSE_SUCCESS, "host execute");
  if (config->own_output)
    EXPECT(xpose_plan_output_buffer(gpu, &d_out) == XPOSE_SUCCESS, "plan-owned output");
  if (cudaMalloc(&d_in, in_bytes + 1) != cudaSuccess ||
      (!config->own_output && cudaMalloc(&d_out, out_bytes + 1) != cudaSuccess))
    abort();
  cudaMemcpy(d_in, in, in_bytes, cudaMemcpyHostToDevice);
  cudaMemset(d_out, POISON, out_bytes);
  st = xpose_execute(gpu, d_in, d_out);
  EXPECT(st == XPOSE_SUCCESS, "GPU execute: %s", xpose_status_string(st));
  cudaMemcpy(got, d_out, out_bytes, cudaMemcpyDeviceToHost);
  EXPECT(memcmp(got, expected, out_bytes) == 0,
         "%s %lldx%lld es=%zu: rank %d differs from the host", xpose_plan_exchange_name(gpu),
         (long long)rows, (long long)cols, es, rank);
  cudaFree(d_in);
  if (!config->own_output) cudaFree(d_out);
  free(in);
  free(expected);
  free(got);
done:
  xpose_plan_destroy(gpu);
  xpose_plan_destroy(host);
}

static int p2p_open_fails(void) {
  xpose_config config;
  xpose_config_init(&config);
  config.backend = XPOSE_BACKEND_CUDA;
  config.exchange = XPOSE_EXCHANGE_P2P;
  config.own_output = 1;
  xpose_plan plan = NULL;
  const xpose_status st = xpose_plan_create(MPI_COMM_WORLD, 1000, 999, 4, &config, &plan);
  EXPECT(st != XPOSE_SUCCESS && !plan,
         "rank %d: a p2p plan was made although a rank could not open its peers' outputs", rank);
  if (rank == 0 && st != XPOSE_SUCCESS)
    printf("p2p plan with a rank that cannot open its peers' outputs: %s on rank 0\n",
           xpose_status_string(st));
  xpose_plan_destroy(plan);
  int failures = test_failures, total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total ? 1 : 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int device = -1;
  if (xpose_cuda_select_device(MPI_COMM_WORLD, &device) != XPOSE_SUCCESS) {
    if (rank == 0) printf("skipped: no GPU (or xpose built without CUDA)\n");
    MPI_Finalize();
    return XPOSE_TEST_SKIPPED;
  }
  setvbuf(stdout, NULL, _IOLBF, 0); /* progress shows even if the test times out */
  if (argc > 1 && strcmp(argv[1], "--p2p-open-fails") == 0) return p2p_open_fails();
  const char *pretend = getenv("XPOSE_PRETEND_NODES");
  const int pretend_nodes = pretend && atoi(pretend) > 1 && nranks > 1;
  /* NCCL refuses two ranks on one GPU. */
  MPI_Comm node;
  int node_ranks = 1, devices = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  cudaGetDeviceCount(&devices);
  int shared_gpu = node_ranks > devices, any_shared = 0;
  MPI_Allreduce(&shared_gpu, &any_shared, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  /* The last two own their outputs: p2p, and what auto picks then. */
  const xpose_exchange_kind engines[] = {XPOSE_EXCHANGE_AUTO, XPOSE_EXCHANGE_NCCL,
                                         XPOSE_EXCHANGE_MPI,  XPOSE_EXCHANGE_STAGED,
                                         XPOSE_EXCHANGE_P2P,  XPOSE_EXCHANGE_AUTO};
  const char *names[] = {"auto", "nccl", "mpi", "staged", "p2p", "auto (own output)"};
  int engines_run = 0;
  for (int e = 0; e < 6; e++) {
    xpose_config config;
    xpose_config_init(&config);
    config.backend = XPOSE_BACKEND_CUDA;
    config.exchange = engines[e];
    config.own_output = e >= 4;
    /* auto picks p2p for plans that own their outputs, shared GPUs or not. */
    const int may_pick_nccl = engines[e] == XPOSE_EXCHANGE_NCCL ||
                              (engines[e] == XPOSE_EXCHANGE_AUTO && !config.own_output);
    if (pretend_nodes && !config.own_output) continue; /* the other tests run these */
    if (any_shared && may_pick_nccl) {
      if (rank == 0)
        printf("engine %s: skipped: ranks share a GPU, which NCCL refuses\n", names[e]);
      continue;
    }
    /* 256 rows of 4 bytes, where auto may pick p2p. */
    xpose_plan probe = NULL;
    const xpose_status st = xpose_plan_create(MPI_COMM_WORLD, 256, 96, 4, &config, &probe);
    if (st == XPOSE_ERROR_UNSUPPORTED) {
      if (rank == 0) printf("engine %s: skipped: not available here\n", names[e]);
      continue;
    }
    EXPECT(st == XPOSE_SUCCESS, "engine %s: %s", names[e], xpose_status_string(st));
    char probe_engine[32] = "";
    if (probe) snprintf(probe_engine, sizeof probe_engine, "%s", xpose_plan_exchange_name(probe));
    if (rank == 0 && probe) printf("engine %s: runs as %s\n", names[e], probe_engine);
    if (probe && pretend_nodes && config.own_output)
      EXPECT(strncmp(xpose_plan_exchange_name(probe), "p2p+", 4) == 0,
             "engine %s on pretend nodes runs as %s, not p2p and another", names[e],
             xpose_plan_exchange_name(probe));
    xpose_plan_destroy(probe);
    if (engines[e] == XPOSE_EXCHANGE_AUTO && config.own_output) {
      /* 1-byte elements on output rows of 97 bytes, which auto kept away from
       * p2p before the shifted tiles: the same engine as 4-byte rows now. */
      xpose_plan odd = NULL;
      if (xpose_plan_create(MPI_COMM_WORLD, 97, 89, 1, &config, &odd) == XPOSE_SUCCESS)
        EXPECT(strcmp(xpose_plan_exchange_name(odd), probe_engine) == 0,
               "auto picked %s for 1-byte output rows of 97 bytes, %s for 4-byte ones",
               xpose_plan_exchange_name(odd), probe_engine);
      xpose_plan_destroy(odd);
    }
    engines_run++;

    const int64_t shapes[][2] = {{1, 1},    {7, 5},    {24, 24}, {97, 89},
                                 {1, 1000}, {1000, 1}, {2, 3},   {1009, 997}};
    const size_t sizes[] = {1, 2, 4, 8, 16, 12};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
      for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        run_case(&config, shapes[s][0], shapes[s][1], sizes[z], NULL);
    config.max_message_bytes = 1000; /* split (MPI engines) */
    run_case(&config, 1009, 997, 8, NULL);
    config.max_message_bytes = 0;
    config.pipeline_chunks = 3; /* the pipeline, on every lane */
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
      run_case(&config, shapes[s][0], shapes[s][1], 4, NULL);
    config.pipeline_chunks = 0;
    config.output_row_unit = 7; /* ranks owning several units, one, none; a short last one */
    run_case(&config, 97, 89, 4, NULL);
    run_case(&config, 13, 61, 8, NULL);
    run_case(&config, 1009, 997, 2, NULL);
    config.output_row_unit = 0;
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    run_case(&config, 513, 257, 4, stream); /* on the caller's stream */
    cudaStreamDestroy(stream);
  }

  /* Host pointers handed to a CUDA plan fail on every rank. */
  xpose_config config;
  xpose_config_init(&config);
  config.backend = XPOSE_BACKEND_CUDA;
  config.exchange = XPOSE_EXCHANGE_STAGED;
  xpose_plan plan = NULL;
  if (xpose_plan_create(MPI_COMM_WORLD, 16, 16, 4, &config, &plan) == XPOSE_SUCCESS) {
    float host_in[256], host_out[256];
    EXPECT(xpose_execute(plan, host_in, host_out) == XPOSE_ERROR_INVALID_ARGUMENT,
           "host pointers accepted by a CUDA plan");
    xpose_plan_destroy(plan);
  }

  int failures = test_failures, total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("GPU distributed transpose on %d rank(s), device %d: %d engine(s) run, %d failure(s)\n",
           nranks, device, engines_run, total);
  MPI_Finalize();
  return total ? 1 : engines_run ? 0 : XPOSE_TEST_SKIPPED;
}
