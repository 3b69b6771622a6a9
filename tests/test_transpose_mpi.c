#define _POSIX_C_SOURCE 200809L /* setenv */
/* The distributed transpose under mpiexec with any number of ranks: every
 * shape up to 24 x 24 (and empty ones), 1 x N, N x 1, prime shapes, element
 * sizes 1..24, transpose twice == identity, messages split far below
 * INT_MAX (the large-count path), host transposes over threads, and
 * collective failure: one rank's bad
 * argument fails every rank, and nobody hangs, nor when one rank fails in
 * the middle of the pipeline (XPOSE_FAULT_EXECUTE). */
#include <string.h>

#include "test_util.h"
#include "xpose.h"

static int rank, nranks;
static int log_messages;

static void count_log(xpose_log_level level, const char *message, void *user_data) {
  (void)level, (void)message, (void)user_data;
  log_messages++;
}

static void fill_input(unsigned char *in, int64_t first, int64_t count, int64_t cols, size_t es) {
  for (int64_t i = 0; i < count; i++)
    for (int64_t j = 0; j < cols; j++)
      for (size_t k = 0; k < es; k++)
        in[((size_t)i * cols + j) * es + k] = pattern_byte(first + i, j, k);
}

static void run_case(int64_t rows, int64_t cols, size_t es, const xpose_config *config) {
  xpose_plan forward = NULL, backward = NULL;
  int64_t in_first, in_count, out_first, out_count, back_first, back_count;
  xpose_status st = xpose_plan_create(MPI_COMM_WORLD, rows, cols, es, config, &forward);
  EXPECT(st == XPOSE_SUCCESS, "plan %lldx%lld es=%zu: %s", (long long)rows, (long long)cols, es,
         xpose_status_string(st));
  /* Output rows in units: the way back takes the plain split, from the
   * units' (transposing twice checks the forward plan alone there). */
  const int64_t unit = config ? config->output_row_unit : 0;
  xpose_config back = {0};
  if (config) back = *config, back.output_row_unit = 0;
  st = xpose_plan_create(MPI_COMM_WORLD, cols, rows, es, config ? &back : NULL, &backward);
  EXPECT(st == XPOSE_SUCCESS, "backward plan: %s", xpose_status_string(st));
  if (!forward || !backward) goto done;
  xpose_plan_input_rows(forward, &in_first, &in_count);
  xpose_plan_output_rows(forward, &out_first, &out_count);
  xpose_plan_output_rows(backward, &back_first, &back_count);
  EXPECT(back_first == in_first && back_count == in_count, "backward plan slabs differ");
  int64_t unit_first = 0, unit_count = 0;
  xpose_unit_range(cols, unit, nranks, rank, &unit_first, &unit_count);
  EXPECT(out_first == unit_first && out_count == unit_count,
         "%lldx%lld: output rows %lld+%lld, not the units' %lld+%lld", (long long)rows,
         (long long)cols, (long long)out_first, (long long)out_count, (long long)unit_first,
         (long long)unit_count);
  const size_t in_bytes = (size_t)(in_count * cols) * es,
               out_bytes = (size_t)(out_count * rows) * es;
  unsigned char *in = malloc(in_bytes + 1), *out = NULL, *again = NULL;
  if (config && config->own_output) { /* the plans' own buffers */
    EXPECT(xpose_plan_output_buffer(forward, (void **)&out) == XPOSE_SUCCESS &&
               xpose_plan_output_buffer(backward, (void **)&again) == XPOSE_SUCCESS,
           "plan-owned outputs");
    EXPECT((out != NULL) == (out_bytes > 0) && (again != NULL) == (in_bytes > 0),
           "plan-owned output missing, or given for an empty slab");
  } else {
    out = malloc(out_bytes + 1);
    again = malloc(in_bytes + 1);
  }
  if (!in || (!out && out_bytes) || (!again && in_bytes)) abort();
  fill_input(in, in_first, in_count, cols, es);
  if (out_bytes) memset(out, POISON, out_bytes);
  if (in_bytes) memset(again, POISON, in_bytes);
  st = xpose_execute(forward, in, out);
  EXPECT(st == XPOSE_SUCCESS, "execute: %s", xpose_status_string(st));
  int64_t wrong = 0;
  for (int64_t j = 0; j < out_count; j++)
    for (int64_t i = 0; i < rows; i++)
      for (size_t k = 0; k < es; k++)
        wrong += out[((size_t)j * rows + i) * es + k] != pattern_byte(i, out_first + j, k);
  EXPECT(wrong == 0, "%lldx%lld es=%zu on %d ranks: rank %d has %lld wrong bytes", (long long)rows,
         (long long)cols, es, nranks, rank, (long long)wrong);
  if (unit <= 1) {
    st = xpose_execute(backward, out, again);
    EXPECT(st == XPOSE_SUCCESS, "execute backward: %s", xpose_status_string(st));
    EXPECT(memcmp(in, again, in_bytes) == 0, "%lldx%lld es=%zu: transposing twice is not identity",
           (long long)rows, (long long)cols, es);
  }
  free(in);
  if (!config || !config->own_output) {
    free(out);
    free(again);
  }
done:
  EXPECT(xpose_plan_destroy(forward) == XPOSE_SUCCESS, "destroy");
  EXPECT(xpose_plan_destroy(backward) == XPOSE_SUCCESS, "destroy");
}

static void expect_collective_failure(const char *what, int64_t rows, int64_t cols, size_t es,
                                      const xpose_config *config, xpose_status expected) {
  xpose_plan plan = (xpose_plan)&plan; /* must be reset to NULL */
  const xpose_status st = xpose_plan_create(MPI_COMM_WORLD, rows, cols, es, config, &plan);
  EXPECT(st == expected && plan == NULL, "%s: rank %d got '%s', expected '%s'", what, rank,
         xpose_status_string(st), xpose_status_string(expected));
}

static void failure_cases(void) {
  const int last = nranks - 1;
  if (nranks > 1) /* one rank cannot disagree with itself */
    expect_collective_failure("rows differ on the last rank", rank == last ? 11 : 10, 7, 4, NULL,
                              XPOSE_ERROR_INVALID_ARGUMENT);
  expect_collective_failure("element size 0 on rank 0", 10, 7, rank == 0 ? 0 : 4, NULL,
                            XPOSE_ERROR_INVALID_ARGUMENT);
  expect_collective_failure("negative rows everywhere", -1, 7, 4, NULL,
                            XPOSE_ERROR_INVALID_ARGUMENT);
  expect_collective_failure("overflowing size", INT64_MAX / 2, 4, 8, NULL,
                            XPOSE_ERROR_INVALID_ARGUMENT);
  xpose_config bad;
  xpose_config_init(&bad);
  if (nranks > 1) { /* one rank cannot disagree with itself */
    if (rank == last) bad.pipeline_chunks = 4;
    expect_collective_failure("chunk counts differ on the last rank", 10, 7, 4, &bad,
                              XPOSE_ERROR_INVALID_ARGUMENT);
  }
  xpose_config_init(&bad);
  bad.pipeline_chunks = -1;
  expect_collective_failure("negative chunk count", 10, 7, 4, &bad, XPOSE_ERROR_INVALID_ARGUMENT);
  xpose_config_init(&bad);
  bad.host_threads = rank == last ? -2 : 2;
  expect_collective_failure("a negative thread count on the last rank", 10, 7, 4, &bad,
                            XPOSE_ERROR_INVALID_ARGUMENT);
  xpose_config_init(&bad);
  if (rank == last) bad.backend = (xpose_backend_kind)99;
  expect_collective_failure("unknown backend on the last rank", 10, 7, 4, &bad,
                            XPOSE_ERROR_INVALID_ARGUMENT);
  xpose_config_init(&bad);
  bad.backend = XPOSE_BACKEND_HOST;
  bad.exchange = XPOSE_EXCHANGE_NCCL;
  expect_collective_failure("NCCL with host buffers", 10, 7, 4, &bad, XPOSE_ERROR_UNSUPPORTED);
  xpose_config_init(&bad);
  bad.exchange = XPOSE_EXCHANGE_P2P; /* without plan-owned outputs */
  expect_collective_failure("p2p without own_output", 10, 7, 4, &bad, XPOSE_ERROR_UNSUPPORTED);
  bad.own_output = 1; /* and on host buffers */
  expect_collective_failure("p2p with host buffers", 10, 7, 4, &bad, XPOSE_ERROR_UNSUPPORTED);
  if (nranks > 1) {
    xpose_config_init(&bad);
    bad.own_output = rank == last;
    expect_collective_failure("own_output on the last rank only", 10, 7, 4, &bad,
                              XPOSE_ERROR_INVALID_ARGUMENT);
  }
#ifndef XPOSE_HAVE_CUDA
  xpose_config_init(&bad);
  bad.backend = XPOSE_BACKEND_CUDA;
  expect_collective_failure("CUDA backend without CUDA", 10, 7, 4, &bad, XPOSE_ERROR_UNSUPPORTED);
#endif

  /* A NULL buffer on the last rank fails execution on every rank. */
  xpose_plan plan = NULL;
  EXPECT(xpose_plan_create(MPI_COMM_WORLD, 40, 30, 8, NULL, &plan) == XPOSE_SUCCESS, "plan");
  double *in = calloc(40 * 30, sizeof(double)), *out = calloc(40 * 30, sizeof(double));
  xpose_status st = xpose_execute(plan, rank == last ? NULL : in, out);
  EXPECT(st == XPOSE_ERROR_INVALID_ARGUMENT, "NULL input on the last rank: rank %d got '%s'", rank,
         xpose_status_string(st));
  st = xpose_execute(plan, in, in); /* in place is refused everywhere */
  EXPECT(st == XPOSE_ERROR_INVALID_ARGUMENT, "in place: rank %d got '%s'", rank,
         xpose_status_string(st));
  st = xpose_execute(plan, in, out); /* and the plan still works */
  EXPECT(st == XPOSE_SUCCESS, "after failures: %s", xpose_status_string(st));
  void *none = in;
  EXPECT(xpose_plan_output_buffer(plan, &none) == XPOSE_ERROR_INVALID_ARGUMENT && !none,
         "an output buffer from a plan that owns none");
  xpose_plan_destroy(plan);

  /* The last rank fails in the middle of the pipeline, with chunks in
   * flight: every rank fails, none hangs, and the plan still works. */
  xpose_config chunked;
  xpose_config_init(&chunked);
  chunked.pipeline_chunks = 3;
  EXPECT(xpose_plan_create(MPI_COMM_WORLD, 40, 30, 8, &chunked, &plan) == XPOSE_SUCCESS, "plan");
  char last_rank[16];
  snprintf(last_rank, sizeof last_rank, "%d", last);
  setenv("XPOSE_FAULT_EXECUTE", last_rank, 1);
  st = xpose_execute(plan, in, out);
  unsetenv("XPOSE_FAULT_EXECUTE");
  EXPECT(st == XPOSE_ERROR_INTERNAL, "packing fails on the last rank: rank %d got '%s'", rank,
         xpose_status_string(st));
  st = xpose_execute(plan, in, out);
  EXPECT(st == XPOSE_SUCCESS, "after a failed execution: %s", xpose_status_string(st));
  xpose_plan_destroy(plan);

  /* A plan that owns its output refuses any other. */
  xpose_config owning;
  xpose_config_init(&owning);
  owning.own_output = 1;
  EXPECT(xpose_plan_create(MPI_COMM_WORLD, 40, 30, 8, &owning, &plan) == XPOSE_SUCCESS, "plan");
  st = xpose_execute(plan, in, rank == last ? out : NULL);
  EXPECT(st == XPOSE_ERROR_INVALID_ARGUMENT, "a foreign output on the last rank: rank %d got '%s'",
         rank, xpose_status_string(st));
  xpose_plan_destroy(plan);
  free(in);
  free(out);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  xpose_set_log_handler(count_log, NULL);
  int64_t cases = 0;

  const size_t sizes[] = {1, 2, 4, 8, 16, 3, 12};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int64_t r = 0; r <= 24; r++)
      for (int64_t c = 0; c <= 24; c++, cases++) run_case(r, c, sizes[s], NULL);

  const int64_t lines[][2] = {{1, 1000}, {1000, 1}, {2, 999}, {999, 3}, {97, 89}, {1009, 997}};
  const size_t line_sizes[] = {1, 4, 8, 16, 24};
  for (size_t l = 0; l < sizeof lines / sizeof *lines; l++)
    for (size_t s = 0; s < sizeof line_sizes / sizeof *line_sizes; s++, cases++)
      run_case(lines[l][0], lines[l][1], line_sizes[s], NULL);

  /* Large-count path: every block split into many messages. */
  xpose_config split;
  xpose_config_init(&split);
  const size_t limits[] = {1, 7, 1000, 4096};
  for (size_t m = 0; m < sizeof limits / sizeof *limits; m++, cases += 2) {
    split.max_message_bytes = limits[m];
    run_case(limits[m] < 8 ? 13 : 97, limits[m] < 8 ? 11 : 89, 8, &split);
    run_case(limits[m] < 8 ? 9 : 1009, limits[m] < 8 ? 17 : 997, 4, &split);
  }
  split.max_message_bytes = SIZE_MAX; /* clamped to INT_MAX */
  run_case(31, 37, 2, &split);

  /* The chunked pipeline: blocks exchanged in pieces of their columns, more
   * chunks than some blocks have columns, with split messages too. */
  xpose_config chunked;
  xpose_config_init(&chunked);
  const int chunk_counts[] = {2, 3, 16};
  for (size_t c = 0; c < sizeof chunk_counts / sizeof *chunk_counts; c++) {
    chunked.pipeline_chunks = chunk_counts[c];
    for (int64_t r = 1; r <= 13; r += 3)
      for (int64_t col = 1; col <= 13; col += 2, cases++) run_case(r, col, 4, &chunked);
    run_case(97, 89, 8, &chunked);
    run_case(1009, 997, 1, &chunked);
    cases += 2;
  }
  chunked.max_message_bytes = 100;
  run_case(97, 89, 16, &chunked);

  /* Plans that own their outputs, ranks owning nothing included. */
  xpose_config owning;
  xpose_config_init(&owning);
  owning.own_output = 1;
  run_case(97, 89, 8, &owning);
  run_case(1, 13, 4, &owning);
  run_case(13, 1, 4, &owning);
  cases += 3;

  /* Output rows in whole units: ranks owning several, one, none, and a
   * short last unit, through the pipeline's chunks too. */
  xpose_config units;
  xpose_config_init(&units);
  const int64_t unit_sizes[] = {2, 7, 16, 200};
  for (size_t u = 0; u < sizeof unit_sizes / sizeof *unit_sizes; u++, cases += 3) {
    units.output_row_unit = unit_sizes[u];
    units.pipeline_chunks = u % 2 ? 3 : 0;
    run_case(97, 89, 4, &units);
    run_case(13, 61, 8, &units);
    run_case(5, 200, 2, &units);
  }

  /* Host transposes split over threads: blocks of 8 MiB and more, the
   * threads' rows uneven, more threads than some blocks have rows;
   * different counts on different ranks. */
  xpose_config threaded;
  xpose_config_init(&threaded);
  threaded.host_threads = rank % 2 ? 5 : 3;
  run_case(1009, 2003, 8, &threaded);
  run_case(3, 1048583, 4, &threaded);
  run_case(97, 89, 4, &threaded); /* too small: one thread */
  cases += 3;

  log_messages = 0;
  failure_cases();
  EXPECT(log_messages > 0 || rank != nranks - 1, "the failing rank logged nothing");

  int failures = test_failures, total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("distributed transpose on %d rank(s): %lld cases, %d failure(s)\n", nranks,
           (long long)cases, total);
  MPI_Finalize();
  return total ? 1 : 0;
}
