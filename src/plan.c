/* Plan creation, queries and destruction.  Creation is collective and
 * all-or-nothing: arguments are checked against every other rank's, and any
 * rank's failure to set up fails the plan everywhere.  It goes:
 * validate -> agree -> backend -> engine -> layout -> scratch -> engine's
 * own set-up. */
#include "plan.h"

#include <limits.h>
#include <stdlib.h>

#include "check.h"
#include "collective.h"

enum { DEFAULT_MAX_MESSAGE_BYTES = 1 << 30 };
/* Automatic chunks: about this many bytes of each rank's rows.  NCCL pays
 * per grouped call (2 x H200, 8 GiB per rank: 16 chunks cost its exchange
 * 21%, 8 chunks 3%), MPI on copy engines nothing (tests/bench/RESULTS.md). */
static const int64_t AUTO_CHUNK_BYTES = (int64_t)256 << 20;
static const int64_t AUTO_CHUNK_BYTES_NCCL = (int64_t)1 << 30;

void xpose_config_init(xpose_config *config) {
  config->backend = XPOSE_BACKEND_AUTO;
  config->exchange = XPOSE_EXCHANGE_AUTO;
  config->max_message_bytes = 0;
  config->pipeline_chunks = 0;
  config->own_output = 0;
  config->host_threads = 0;
  config->output_row_unit = 0;
}

/* Local checks; ranks compare the normalized values afterwards. */
static xpose_status check_arguments(int64_t rows, int64_t cols, size_t elem_size,
                                    const xpose_config *config) {
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_REQUIREGOTO(rows >= 0 && cols >= 0, XPOSE_ERROR_INVALID_ARGUMENT, res, fail,
                    "matrix shape %lld x %lld has a negative extent", (long long)rows,
                    (long long)cols);
  XPOSE_REQUIREGOTO(elem_size >= 1 && elem_size <= (size_t)INT64_MAX, XPOSE_ERROR_INVALID_ARGUMENT,
                    res, fail, "element size %zu is invalid", elem_size);
  XPOSE_REQUIREGOTO(rows == 0 || cols <= INT64_MAX / rows / (int64_t)elem_size,
                    XPOSE_ERROR_INVALID_ARGUMENT, res, fail,
                    "%lld x %lld elements of %zu bytes overflow 64-bit sizes", (long long)rows,
                    (long long)cols, elem_size);
  XPOSE_REQUIREGOTO(config->backend >= XPOSE_BACKEND_AUTO && config->backend <= XPOSE_BACKEND_CUDA,
                    XPOSE_ERROR_INVALID_ARGUMENT, res, fail, "unknown backend %d",
                    (int)config->backend);
  XPOSE_REQUIREGOTO(
      config->exchange >= XPOSE_EXCHANGE_AUTO && config->exchange <= XPOSE_EXCHANGE_P2P,
      XPOSE_ERROR_INVALID_ARGUMENT, res, fail, "unknown exchange engine %d", (int)config->exchange);
  XPOSE_REQUIREGOTO(config->pipeline_chunks >= 0, XPOSE_ERROR_INVALID_ARGUMENT, res, fail,
                    "pipeline_chunks %d is negative", config->pipeline_chunks);
  XPOSE_REQUIREGOTO(config->host_threads >= 0 && config->host_threads <= XPOSE_MAX_HOST_THREADS,
                    XPOSE_ERROR_INVALID_ARGUMENT, res, fail, "host_threads %d is not 0 to %d",
                    config->host_threads, XPOSE_MAX_HOST_THREADS);
  XPOSE_REQUIREGOTO(config->output_row_unit >= 0, XPOSE_ERROR_INVALID_ARGUMENT, res, fail,
                    "output_row_unit %lld is negative", (long long)config->output_row_unit);
fail:
  return res;
}

/* From agreed values only, so every rank cuts the same chunks.  Engines
 * that write peers' outputs run in one piece. */
static int chunk_count(const xpose_config *config, const xpose_exchange_engine *engine,
                       int64_t rows, int64_t cols, size_t elem_size, int nranks) {
  if (nranks == 1 || engine->writes_peer_outputs) return 1;
  if (config->pipeline_chunks > 0)
    return config->pipeline_chunks < XPOSE_MAX_CHUNKS ? config->pipeline_chunks : XPOSE_MAX_CHUNKS;
  if (config->backend != XPOSE_BACKEND_CUDA) return 1;
  const int64_t per_rank = rows / nranks * (int64_t)elem_size * cols;
  const int64_t target =
      engine->kind == XPOSE_EXCHANGE_NCCL ? AUTO_CHUNK_BYTES_NCCL : AUTO_CHUNK_BYTES;
  const int64_t chunks = per_rank > target ? (per_rank + target - 1) / target : 1;
  return chunks < XPOSE_MAX_CHUNKS ? (int)chunks : XPOSE_MAX_CHUNKS;
}

/* Where auto may write into other GPUs' outputs: where it was measured
 * faster than the NCCL engine (2 and 4 H200s, 2 and 4 H100s,
 * tests/bench/RESULTS.md).  Every shape measured is, since tiles that write
 * into several outputs walk down tile columns, taking every part in turn,
 * and, on rows off 32-byte sectors, write whole sectors (shifted tiles): on
 * 2 H100s, 16 shapes of 1-16 bytes at 0.98-1.02 times NCCL's exchange
 * alone, the NCCL engine at 1.23-1.63; on 4 H100s, 15 shapes at 0.71-1.06,
 * the NCCL engine at 1.26-1.72 (on 4 H200s, with the edges of ranks' parts
 * in aligned stores, 0.70-1.04 and 1.16-1.63), up to 48 GiB of other
 * ranks' outputs mapped (131072 x 65536, 8 bytes).  Larger mappings were not measured:
 * kept as a bound on what was.  From agreed values only. */
static const int64_t PEER_WRITES_MAPPED_BYTES = (int64_t)48 << 30;

static int peer_writes_measured_fast(int64_t rows, int64_t cols, size_t elem_size, int64_t unit,
                                     int nranks) {
  const int64_t es = (int64_t)elem_size;
  if (rows > INT64_MAX / es) return 0; /* with no columns, nothing bounds rows x size */
  /* The largest output slab (the first rank's), as many times as there are other ranks. */
  int64_t first = 0, slab_rows = 0;
  xpose_unit_range(cols, unit, nranks, 0, &first, &slab_rows);
  return slab_rows == 0 || rows == 0 ||
         (nranks - 1) <= PEER_WRITES_MAPPED_BYTES / slab_rows / rows / es;
}

static xpose_status create_backend(const xpose_config *config, xpose_backend **backend) {
  return config->backend == XPOSE_BACKEND_CUDA
             ? xpose_backend_cuda_create(backend)
             : xpose_backend_host_create(config->host_threads, backend);
}

/* The output slab, where the plan owns it: before the engine, which may
 * map it for the other ranks. */
static xpose_status allocate_output(xpose_plan plan) {
  if (!plan->own_output) return XPOSE_SUCCESS;
  xpose_backend *b = plan->backend;
  return b->ops->alloc(b, (size_t)plan->layout.out.count * (size_t)plan->rows * plan->elem_size,
                       &plan->output);
}

/* The layout's scratch (none for blocks that go straight into their
 * owners' outputs), from the engine where it has memory of its own. */
static xpose_status allocate_buffers(xpose_plan plan) {
  xpose_status res = XPOSE_SUCCESS;
  xpose_exchange *e = plan->exchange;
  XPOSE_CHECKGOTO(
      xpose_exchange_alloc(e, plan->backend, (size_t)plan->layout.send_bytes, &plan->send_buf), res,
      fail);
  XPOSE_CHECKGOTO(
      xpose_exchange_alloc(e, plan->backend, (size_t)plan->layout.recv_bytes, &plan->recv_buf), res,
      fail);
fail:
  return res;
}

/* Rank q's block, the input columns q owns as output rows, goes straight to
 * this rank's columns of q's output where the engine mapped it here
 * (direct[q]), and otherwise into q's place in the send buffer. */
static xpose_status build_peer_parts(xpose_plan plan, const unsigned char *direct) {
  xpose_status res = XPOSE_SUCCESS;
  plan->peer_parts = calloc((size_t)plan->nranks, sizeof *plan->peer_parts);
  XPOSE_REQUIREGOTO(plan->peer_parts, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the plan's table of outputs");
  for (int q = 0; q < plan->nranks; q++) {
    int64_t first = 0, count = 0;
    xpose_unit_range(plan->cols, plan->output_row_unit, plan->nranks, q, &first, &count);
    xpose_part *part = &plan->peer_parts[q];
    part->first = first;
    if (!direct[q]) {
      part->dst = (char *)plan->send_buf + plan->layout.whole.send_offsets[q];
      part->ld_dst = plan->layout.in.count;
      continue;
    }
    char *output = plan->exchange->ops->peer_output(plan->exchange, q);
    part->dst = output ? output + (size_t)plan->layout.in.first * plan->elem_size : NULL;
    part->ld_dst = plan->rows;
  }
fail:
  return res;
}

static void free_plan(xpose_plan plan) {
  if (plan->exchange) { /* the scratch exists only with an engine */
    xpose_exchange_release(plan->exchange, plan->backend, plan->send_buf);
    xpose_exchange_release(plan->exchange, plan->backend, plan->recv_buf);
    plan->exchange->ops->destroy(plan->exchange);
  }
  if (plan->backend) {
    plan->backend->ops->release(plan->backend, plan->output);
    plan->backend->ops->destroy(plan->backend);
  }
  xpose_layout_free(&plan->layout);
  free(plan->peer_parts);
  if (plan->comm != MPI_COMM_NULL) MPI_Comm_free(&plan->comm);
  free(plan);
}

xpose_status xpose_plan_create(MPI_Comm comm, int64_t rows, int64_t cols, size_t elem_size,
                               const xpose_config *config, xpose_plan *plan_out) {
  xpose_status res = XPOSE_SUCCESS;
  xpose_config defaults;
  xpose_plan plan = NULL;
  unsigned char *direct = NULL; /* engines that write peers' outputs: their ranks */
  if (!plan_out || comm == MPI_COMM_NULL) return XPOSE_ERROR_INVALID_ARGUMENT;
  *plan_out = NULL;
  if (!config) {
    xpose_config_init(&defaults);
    config = &defaults;
  }
  size_t max_message =
      config->max_message_bytes ? config->max_message_bytes : (size_t)DEFAULT_MAX_MESSAGE_BYTES;
  if (max_message > INT_MAX) max_message = INT_MAX;

  plan = calloc(1, sizeof *plan);
  if (plan) plan->comm = MPI_COMM_NULL;
  xpose_status local =
      plan ? check_arguments(rows, cols, elem_size, config) : XPOSE_ERROR_OUT_OF_MEMORY;
  const int64_t values[] = {rows,
                            cols,
                            (int64_t)elem_size,
                            (int64_t)config->backend,
                            (int64_t)config->exchange,
                            (int64_t)max_message,
                            (int64_t)config->pipeline_chunks,
                            (int64_t)(config->own_output != 0),
                            config->output_row_unit > 1 ? config->output_row_unit : 1};
  XPOSE_CHECKGOTO(xpose_agree_on_values(comm, local, values, 9,
                                        "rows, cols, element size, backend, exchange, max "
                                        "message bytes, chunks, own output, output row unit"),
                  res, fail);

  XPOSE_MPICHECKGOTO(MPI_Comm_dup(comm, &plan->comm), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_set_errhandler(plan->comm, MPI_ERRORS_RETURN), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_rank(plan->comm, &plan->rank), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_size(plan->comm, &plan->nranks), res, fail);
  plan->rows = rows;
  plan->cols = cols;
  plan->elem_size = elem_size;
  plan->own_output = config->own_output != 0;
  plan->output_row_unit = config->output_row_unit;
  XPOSE_CHECKGOTO(xpose_agree(plan->comm, create_backend(config, &plan->backend)), res,
                  fail);
  const xpose_exchange_engine *engine = NULL;
  const char *avoid =
      peer_writes_measured_fast(rows, cols, elem_size, config->output_row_unit, plan->nranks)
          ? NULL
          : "this shape is outside where its writes into other GPUs measured faster than NCCL "
            "(XPOSE_EXCHANGE_P2P still runs it)";
  XPOSE_CHECKGOTO(xpose_exchange_choose(plan->comm, plan->backend, config->exchange,
                                        plan->own_output, avoid, &engine),
                  res, fail);
  if (engine->writes_peer_outputs) {
    /* Collective even where the table could not be allocated. */
    direct = malloc((size_t)plan->nranks);
    XPOSE_CHECKGOTO(xpose_agree(plan->comm, engine->direct_peers(plan->comm, direct)), res, fail);
  }
  const int chunks = chunk_count(config, engine, rows, cols, elem_size, plan->nranks);
  local = xpose_layout_build(plan->rank, plan->nranks, rows, cols, elem_size,
                             config->output_row_unit, chunks, direct, &plan->layout);
  if (local == XPOSE_SUCCESS) local = allocate_output(plan);
  /* Engines may be collective to create (NCCL): only when all ranks got here. */
  XPOSE_CHECKGOTO(xpose_agree(plan->comm, local), res, fail);
  const xpose_exchange_setup setup = {plan->comm, plan->backend, &plan->layout.whole, max_message,
                                      plan->output};
  XPOSE_CHECKGOTO(xpose_agree(plan->comm, engine->create(&setup, &plan->exchange)), res, fail);
  XPOSE_CHECKGOTO(xpose_agree(plan->comm, allocate_buffers(plan)), res, fail);
  if (engine->writes_peer_outputs)
    XPOSE_CHECKGOTO(xpose_agree(plan->comm, build_peer_parts(plan, direct)), res, fail);
  free(direct);
  *plan_out = plan;
  return XPOSE_SUCCESS;
fail:
  free(direct);
  if (plan) free_plan(plan);
  return res;
}

xpose_status xpose_plan_input_rows(const xpose_plan plan, int64_t *first, int64_t *count) {
  if (!plan || !first || !count) return XPOSE_ERROR_INVALID_ARGUMENT;
  *first = plan->layout.in.first;
  *count = plan->layout.in.count;
  return XPOSE_SUCCESS;
}

xpose_status xpose_plan_output_rows(const xpose_plan plan, int64_t *first, int64_t *count) {
  if (!plan || !first || !count) return XPOSE_ERROR_INVALID_ARGUMENT;
  *first = plan->layout.out.first;
  *count = plan->layout.out.count;
  return XPOSE_SUCCESS;
}

xpose_status xpose_plan_output_buffer(const xpose_plan plan, void **out) {
  if (!plan || !out) return XPOSE_ERROR_INVALID_ARGUMENT;
  *out = plan->output;
  return plan->own_output ? XPOSE_SUCCESS : XPOSE_ERROR_INVALID_ARGUMENT;
}

xpose_status xpose_plan_scratch_bytes(const xpose_plan plan, size_t *bytes) {
  if (!plan || !bytes) return XPOSE_ERROR_INVALID_ARGUMENT;
  *bytes = (size_t)(plan->layout.send_bytes + plan->layout.recv_bytes);
  return XPOSE_SUCCESS;
}

const char *xpose_plan_exchange_name(const xpose_plan plan) {
  return plan && plan->exchange ? plan->exchange->name : "none";
}

xpose_status xpose_plan_set_stream(xpose_plan plan, void *stream) {
  if (!plan) return XPOSE_ERROR_INVALID_ARGUMENT;
  return plan->backend->ops->set_stream(plan->backend, stream);
}

xpose_status xpose_plan_destroy(xpose_plan plan) {
  if (!plan) return XPOSE_SUCCESS;
  xpose_status res = XPOSE_SUCCESS;
  if (MPI_Comm_free(&plan->comm) != MPI_SUCCESS) res = XPOSE_ERROR_MPI;
  free_plan(plan);
  return res;
}
