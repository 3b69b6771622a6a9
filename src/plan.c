/* Plan creation, queries and destruction.  Creation is collective and
 * all-or-nothing: arguments are checked against every other rank's, and any
 * rank's failure to allocate fails the plan everywhere. */
#include "plan.h"

#include <limits.h>
#include <stdlib.h>

#include "check.h"

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
}

xpose_status xpose_agree(MPI_Comm comm, xpose_status local) {
  int worst = 0, mine = (int)local;
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_MPICHECKGOTO(MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm), res, fail);
  return (xpose_status)worst;
fail:
  return res;
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
      config->exchange >= XPOSE_EXCHANGE_AUTO && config->exchange <= XPOSE_EXCHANGE_STAGED,
      XPOSE_ERROR_INVALID_ARGUMENT, res, fail, "unknown exchange engine %d", (int)config->exchange);
  XPOSE_REQUIREGOTO(config->pipeline_chunks >= 0, XPOSE_ERROR_INVALID_ARGUMENT, res, fail,
                    "pipeline_chunks %d is negative", config->pipeline_chunks);
#ifndef XPOSE_HAVE_CUDA
  XPOSE_REQUIREGOTO(config->backend != XPOSE_BACKEND_CUDA, XPOSE_ERROR_UNSUPPORTED, res, fail,
                    "the CUDA backend was not built into this xpose");
#endif
  XPOSE_REQUIREGOTO(config->backend == XPOSE_BACKEND_CUDA ||
                        config->exchange == XPOSE_EXCHANGE_AUTO ||
                        config->exchange == XPOSE_EXCHANGE_MPI,
                    XPOSE_ERROR_UNSUPPORTED, res, fail,
                    "the NCCL and staged exchange engines need the CUDA backend");
fail:
  return res;
}

/* One MPI_MAX reduction over (status, v, -v, ...) tells every rank the worst
 * status and whether all ranks passed the same values. */
static xpose_status agree_on_arguments(MPI_Comm comm, xpose_status local, const int64_t *values,
                                       int nvalues) {
  int64_t both[1 + 2 * 8], worst[1 + 2 * 8];
  xpose_status res = XPOSE_SUCCESS;
  both[0] = (int64_t)local;
  for (int i = 0; i < nvalues; i++) {
    both[1 + 2 * i] = values[i];
    both[2 + 2 * i] = -values[i];
  }
  XPOSE_MPICHECKGOTO(MPI_Allreduce(both, worst, 1 + 2 * nvalues, MPI_INT64_T, MPI_MAX, comm), res,
                     fail);
  if (worst[0] != XPOSE_SUCCESS) return (xpose_status)worst[0];
  for (int i = 0; i < nvalues; i++)
    XPOSE_REQUIREGOTO(worst[1 + 2 * i] == -worst[2 + 2 * i], XPOSE_ERROR_INVALID_ARGUMENT, res,
                      fail,
                      "ranks passed different plan arguments (rows, cols, element size, "
                      "backend, exchange, max message bytes, chunks): argument %d differs",
                      i);
fail:
  return res;
}

static int layout_alloc(xpose_exchange_layout *l, int nranks) {
  l->nranks = nranks;
  l->send_bytes = calloc((size_t)nranks, sizeof(int64_t));
  l->send_offsets = calloc((size_t)nranks, sizeof(int64_t));
  l->recv_bytes = calloc((size_t)nranks, sizeof(int64_t));
  l->recv_offsets = calloc((size_t)nranks, sizeof(int64_t));
  return l->send_bytes && l->send_offsets && l->recv_bytes && l->recv_offsets ? 0 : -1;
}

static void layout_free(xpose_exchange_layout *l) {
  free(l->send_bytes);
  free(l->send_offsets);
  free(l->recv_bytes);
  free(l->recv_offsets);
}

/* Chunk k of each block: a range of the columns it carries, which is a
 * range of rows of the transposed block, so contiguous in both buffers.
 * Sender and receiver cut the same columns (the receiver's output rows). */
static xpose_status build_chunk_layouts(xpose_plan plan) {
  xpose_status res = XPOSE_SUCCESS;
  const int64_t p = plan->nranks, es = (int64_t)plan->elem_size;
  plan->chunk_layouts = calloc((size_t)plan->chunks, sizeof *plan->chunk_layouts);
  XPOSE_REQUIREGOTO(plan->chunk_layouts, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the chunk layouts");
  for (int k = 0; k < plan->chunks; k++) {
    xpose_exchange_layout *c = &plan->chunk_layouts[k];
    XPOSE_REQUIREGOTO(layout_alloc(c, plan->nranks) == 0, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                      "cannot allocate the chunk layouts");
    int64_t mine_first, mine_count;
    xpose_block_range(plan->out_count, plan->chunks, k, &mine_first, &mine_count);
    for (int64_t peer = 0; peer < p; peer++) {
      if (peer == plan->rank) continue;
      int64_t first, count, theirs_first, theirs_cols, rows_there;
      xpose_block_range(plan->cols, p, peer, &first, &theirs_cols);
      xpose_block_range(theirs_cols, plan->chunks, k, &theirs_first, &count);
      c->send_bytes[peer] = plan->in_count * count * es;
      c->send_offsets[peer] = plan->layout.send_offsets[peer] + theirs_first * plan->in_count * es;
      xpose_block_range(plan->rows, p, peer, &first, &rows_there);
      c->recv_bytes[peer] = mine_count * rows_there * es;
      c->recv_offsets[peer] = plan->layout.recv_offsets[peer] + mine_first * rows_there * es;
    }
  }
fail:
  return res;
}

static int chunk_count(const xpose_config *config, xpose_exchange_kind engine, int64_t rows,
                       int64_t cols, size_t elem_size, int nranks) {
  if (nranks == 1) return 1;
  if (config->pipeline_chunks > 0)
    return config->pipeline_chunks < XPOSE_MAX_CHUNKS ? config->pipeline_chunks : XPOSE_MAX_CHUNKS;
  if (config->backend != XPOSE_BACKEND_CUDA) return 1;
  /* From agreed values only, so every rank cuts the same chunks. */
  const int64_t per_rank = rows / nranks * (int64_t)elem_size * cols;
  const int64_t target = engine == XPOSE_EXCHANGE_NCCL ? AUTO_CHUNK_BYTES_NCCL : AUTO_CHUNK_BYTES;
  const int64_t chunks = per_rank > target ? (per_rank + target - 1) / target : 1;
  return chunks < XPOSE_MAX_CHUNKS ? (int)chunks : XPOSE_MAX_CHUNKS;
}

static xpose_status build_layout(xpose_plan plan) {
  xpose_exchange_layout *l = &plan->layout;
  xpose_status res = XPOSE_SUCCESS;
  const int64_t p = plan->nranks;
  XPOSE_REQUIREGOTO(layout_alloc(l, plan->nranks) == 0, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the exchange layout");
  int64_t send_total = 0, recv_total = 0;
  for (int64_t peer = 0; peer < p; peer++) {
    if (peer == plan->rank) continue; /* the own block is transposed in place */
    int64_t first, cols_there, rows_there;
    xpose_block_range(plan->cols, p, peer, &first, &cols_there);
    xpose_block_range(plan->rows, p, peer, &first, &rows_there);
    /* To peer: my rows x its columns.  From peer: its rows x my columns. */
    l->send_offsets[peer] = send_total;
    l->send_bytes[peer] = plan->in_count * cols_there * (int64_t)plan->elem_size;
    l->recv_offsets[peer] = recv_total;
    l->recv_bytes[peer] = rows_there * plan->out_count * (int64_t)plan->elem_size;
    send_total += l->send_bytes[peer];
    recv_total += l->recv_bytes[peer];
  }
  plan->scratch_bytes = (size_t)(send_total + recv_total);
  XPOSE_CHECKGOTO(plan->backend->ops->alloc(plan->backend, (size_t)send_total, &plan->send_buf),
                  res, fail);
  XPOSE_CHECKGOTO(plan->backend->ops->alloc(plan->backend, (size_t)recv_total, &plan->recv_buf),
                  res, fail);
  XPOSE_CHECKGOTO(build_chunk_layouts(plan), res, fail);
fail:
  return res;
}

/* Engines each rank could run, as bits of 1 << xpose_exchange_kind. */
static int engines_available(xpose_backend_kind backend) {
  if (backend != XPOSE_BACKEND_CUDA) return 1 << XPOSE_EXCHANGE_MPI;
  int mask = 0;
#ifdef XPOSE_HAVE_CUDA
  mask |= 1 << XPOSE_EXCHANGE_STAGED;
  if (xpose_mpi_is_cuda_aware()) mask |= 1 << XPOSE_EXCHANGE_MPI;
#endif
#ifdef XPOSE_HAVE_NCCL
  mask |= 1 << XPOSE_EXCHANGE_NCCL;
#endif
  return mask;
}

/* Collective: every rank picks the same engine, one that all of them have. */
static xpose_status choose_engine(MPI_Comm comm, const xpose_config *config,
                                  xpose_exchange_kind *engine) {
  xpose_status res = XPOSE_SUCCESS;
  int mine = engines_available(config->backend), common = 0;
  XPOSE_MPICHECKGOTO(MPI_Allreduce(&mine, &common, 1, MPI_INT, MPI_BAND, comm), res, fail);
  xpose_exchange_kind kind = config->exchange;
  if (kind == XPOSE_EXCHANGE_AUTO) {
    static const xpose_exchange_kind preference[] = {XPOSE_EXCHANGE_NCCL, XPOSE_EXCHANGE_MPI,
                                                     XPOSE_EXCHANGE_STAGED};
    for (int i = 0; i < 3 && kind == XPOSE_EXCHANGE_AUTO; i++)
      if (common & (1 << preference[i])) kind = preference[i];
  }
  XPOSE_REQUIREGOTO(kind != XPOSE_EXCHANGE_AUTO && (common & (1 << kind)), XPOSE_ERROR_UNSUPPORTED,
                    res, fail,
                    kind == XPOSE_EXCHANGE_MPI && config->backend == XPOSE_BACKEND_CUDA
                        ? "MPI is not CUDA-aware on every rank: device buffers cannot go to MPI "
                          "(use the nccl or staged exchange)"
                        : "exchange engine %d is not available on every rank",
                    (int)kind);
  *engine = kind;
fail:
  return res;
}

static xpose_status create_exchange(xpose_plan plan, const xpose_config *config,
                                    xpose_exchange_kind engine, size_t max_message) {
  xpose_status res = XPOSE_SUCCESS;
  const int cuda = config->backend == XPOSE_BACKEND_CUDA;
  switch (engine) {
#ifdef XPOSE_HAVE_NCCL
    case XPOSE_EXCHANGE_NCCL:
      res = xpose_exchange_nccl_create(plan->comm, plan->nranks, plan->backend, &plan->exchange);
      break;
#endif
#ifdef XPOSE_HAVE_CUDA
    case XPOSE_EXCHANGE_STAGED:
      res = xpose_exchange_staged_create(plan->comm, &plan->layout, plan->chunk_layouts,
                                         plan->chunks, max_message, plan->backend, &plan->exchange);
      break;
#endif
    default:
      res =
          xpose_exchange_mpi_create(plan->comm, &plan->layout, plan->chunk_layouts, plan->chunks,
                                    max_message, cuda ? "cuda-aware-mpi" : "mpi", &plan->exchange);
      break;
  }
  return res;
}

static xpose_status create_backend(xpose_backend_kind kind, xpose_backend **backend) {
#ifdef XPOSE_HAVE_CUDA
  if (kind == XPOSE_BACKEND_CUDA) return xpose_backend_cuda_create(backend);
#else
  (void)kind;
#endif
  return xpose_backend_host_create(backend);
}

static void free_plan(xpose_plan plan) {
  if (plan->backend) {
    plan->backend->ops->release(plan->backend, plan->send_buf);
    plan->backend->ops->release(plan->backend, plan->recv_buf);
    plan->backend->ops->destroy(plan->backend);
  }
  if (plan->exchange) plan->exchange->ops->destroy(plan->exchange);
  layout_free(&plan->layout);
  for (int k = 0; plan->chunk_layouts && k < plan->chunks; k++)
    layout_free(&plan->chunk_layouts[k]);
  free(plan->chunk_layouts);
  free(plan);
}

xpose_status xpose_plan_create(MPI_Comm comm, int64_t rows, int64_t cols, size_t elem_size,
                               const xpose_config *config, xpose_plan *plan_out) {
  xpose_status res = XPOSE_SUCCESS;
  xpose_config defaults;
  xpose_plan plan = NULL;
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
  const int64_t values[] = {rows, cols, (int64_t)elem_size, (int64_t)config->backend,
                            (int64_t)config->exchange, (int64_t)max_message,
                            (int64_t)config->pipeline_chunks};
  XPOSE_CHECKGOTO(agree_on_arguments(comm, local, values, 7), res, fail);

  XPOSE_MPICHECKGOTO(MPI_Comm_dup(comm, &plan->comm), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_set_errhandler(plan->comm, MPI_ERRORS_RETURN), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_rank(plan->comm, &plan->rank), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_size(plan->comm, &plan->nranks), res, fail);
  plan->rows = rows;
  plan->cols = cols;
  plan->elem_size = elem_size;
  xpose_block_range(rows, plan->nranks, plan->rank, &plan->in_first, &plan->in_count);
  xpose_block_range(cols, plan->nranks, plan->rank, &plan->out_first, &plan->out_count);
  xpose_exchange_kind engine = XPOSE_EXCHANGE_MPI;
  XPOSE_CHECKGOTO(choose_engine(plan->comm, config, &engine), res, fail); /* same on every rank */
  plan->chunks = chunk_count(config, engine, rows, cols, elem_size, plan->nranks);

  local = create_backend(config->backend, &plan->backend);
  if (local == XPOSE_SUCCESS) local = build_layout(plan);
  /* Engines may be collective to create (NCCL): only when all ranks got here. */
  XPOSE_CHECKGOTO(xpose_agree(plan->comm, local), res, fail);
  local = create_exchange(plan, config, engine, max_message);
  XPOSE_CHECKGOTO(xpose_agree(plan->comm, local), res, fail);
  *plan_out = plan;
  return XPOSE_SUCCESS;
fail:
  if (plan) {
    if (plan->comm != MPI_COMM_NULL) MPI_Comm_free(&plan->comm);
    free_plan(plan);
  }
  return res;
}

xpose_status xpose_plan_input_rows(const xpose_plan plan, int64_t *first, int64_t *count) {
  if (!plan || !first || !count) return XPOSE_ERROR_INVALID_ARGUMENT;
  *first = plan->in_first;
  *count = plan->in_count;
  return XPOSE_SUCCESS;
}

xpose_status xpose_plan_output_rows(const xpose_plan plan, int64_t *first, int64_t *count) {
  if (!plan || !first || !count) return XPOSE_ERROR_INVALID_ARGUMENT;
  *first = plan->out_first;
  *count = plan->out_count;
  return XPOSE_SUCCESS;
}

xpose_status xpose_plan_scratch_bytes(const xpose_plan plan, size_t *bytes) {
  if (!plan || !bytes) return XPOSE_ERROR_INVALID_ARGUMENT;
  *bytes = plan->scratch_bytes;
  return XPOSE_SUCCESS;
}

const char *xpose_plan_exchange_name(const xpose_plan plan) {
  return plan && plan->exchange ? plan->exchange->name : "none";
}

xpose_status xpose_plan_set_stream(xpose_plan plan, void *stream) {
  if (!plan) return XPOSE_ERROR_INVALID_ARGUMENT;
#ifdef XPOSE_HAVE_CUDA
  if (plan->backend->ops->stream(plan->backend, XPOSE_LANE_COMM) != NULL) { /* CUDA only */
    xpose_backend_cuda_set_stream(plan->backend, stream);
    return XPOSE_SUCCESS;
  }
#else
  (void)stream;
#endif
  xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "streams belong to plans of the CUDA backend");
  return XPOSE_ERROR_INVALID_ARGUMENT;
}

xpose_status xpose_plan_destroy(xpose_plan plan) {
  if (!plan) return XPOSE_SUCCESS;
  xpose_status res = XPOSE_SUCCESS;
  if (MPI_Comm_free(&plan->comm) != MPI_SUCCESS) res = XPOSE_ERROR_MPI;
  free_plan(plan);
  return res;
}
