/* NCCL exchange: one grouped ncclSend/ncclRecv per peer on the backend's
 * COMM lane.  NCCL counts are size_t, so no message needs splitting.
 *
 * The send and receive buffers come from ncclMemAlloc and are registered
 * with the communicator (NCCL 2.19 and later), on every rank or on none:
 * NCCL then moves blocks from one rank's send buffer straight into the
 * other's receive buffer, without its own buffers in between, which on
 * NVLink saved a read and a write of every byte in each GPU's memory,
 * memory the pipeline's packing and placing share (the NCCL engine's
 * transpose on 2 H100s went from 1.58 to 1.30 times the exchange alone,
 * tests/bench/RESULTS.md).
 *
 * NCCL is loaded when an engine is first asked for, not linked: an xpose
 * built with NCCL still runs on nodes without it (CPU nodes, or GPU nodes
 * where only the other engines are installed), and the engine is then
 * simply not available.  The header gives the functions' types. */
#define _GNU_SOURCE /* dlopen's RTLD_ names */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "exchange/exchange.h"

/* ---- the library, loaded once per process ---- */

static struct {
  __typeof__(&ncclGetVersion) get_version;
  __typeof__(&ncclGetErrorString) error_string;
  __typeof__(&ncclGetUniqueId) get_unique_id;
  __typeof__(&ncclCommInitRank) comm_init_rank;
  __typeof__(&ncclCommDestroy) comm_destroy;
  __typeof__(&ncclGroupStart) group_start;
  __typeof__(&ncclGroupEnd) group_end;
  __typeof__(&ncclSend) send;
  __typeof__(&ncclRecv) recv;
  /* Optional (NCCL 2.19): registered buffers. */
  __typeof__(&ncclMemAlloc) mem_alloc;
  __typeof__(&ncclMemFree) mem_free;
  __typeof__(&ncclCommRegister) comm_register;
  __typeof__(&ncclCommDeregister) comm_deregister;
  int loaded;
  char why[256]; /* when not loaded */
} nccl;

static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;

#define XPOSE_NCCL_SONAME "libnccl.so.2"

static void *symbol(void *handle, const char *name) {
  void *address = dlsym(handle, name);
  if (!address && !nccl.why[0])
    snprintf(nccl.why, sizeof nccl.why, "%s has no %s (NCCL 2.7 or later is needed)",
             XPOSE_NCCL_SONAME, name);
  return address;
}

static void load_nccl(void) {
  /* By soname first (LD_LIBRARY_PATH, the system's paths), then where the
   * build found it. */
  void *handle = dlopen(XPOSE_NCCL_SONAME, RTLD_NOW | RTLD_LOCAL);
#ifdef XPOSE_NCCL_BUILD_PATH
  if (!handle) handle = dlopen(XPOSE_NCCL_BUILD_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
  if (!handle) {
    snprintf(nccl.why, sizeof nccl.why, "cannot load %s: %s", XPOSE_NCCL_SONAME, dlerror());
    return;
  }
#define LOAD(field, name) nccl.field = (__typeof__(nccl.field))symbol(handle, name)
  LOAD(get_version, "ncclGetVersion");
  LOAD(error_string, "ncclGetErrorString");
  LOAD(get_unique_id, "ncclGetUniqueId");
  LOAD(comm_init_rank, "ncclCommInitRank");
  LOAD(comm_destroy, "ncclCommDestroy");
  LOAD(group_start, "ncclGroupStart");
  LOAD(group_end, "ncclGroupEnd");
  LOAD(send, "ncclSend");
  LOAD(recv, "ncclRecv");
#undef LOAD
#define LOAD_OPTIONAL(field, name) nccl.field = (__typeof__(nccl.field))dlsym(handle, name)
  LOAD_OPTIONAL(mem_alloc, "ncclMemAlloc");
  LOAD_OPTIONAL(mem_free, "ncclMemFree");
  LOAD_OPTIONAL(comm_register, "ncclCommRegister");
  LOAD_OPTIONAL(comm_deregister, "ncclCommDeregister");
#undef LOAD_OPTIONAL
  if (nccl.why[0]) {
    dlclose(handle);
    return;
  }
  int version = 0;
  if (nccl.get_version(&version) == ncclSuccess)
    xpose_logf(XPOSE_LOG_DEBUG, NULL, 0, "loaded NCCL %d", version);
  nccl.loaded = 1; /* the handle stays open for the process */
}

#define XPOSE_NCCLCHECKGOTO(call, res, label)                                 \
  do {                                                                        \
    ncclResult_t check_nccl_ = (call);                                        \
    if (check_nccl_ != ncclSuccess) {                                         \
      xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "%s failed: %s", #call, \
                 nccl.error_string(check_nccl_));                             \
      (res) = XPOSE_ERROR_NCCL;                                               \
      goto label;                                                             \
    }                                                                         \
  } while (0)

/* ---- the engine ---- */

enum { MAX_REGISTERED = 2 }; /* the send and the receive buffer */

typedef struct {
  ncclComm_t comm;
  xpose_backend *backend;
  int rank;
  int registers; /* every rank can register buffers: agreed at creation */
  struct {
    void *ptr, *handle;
  } registered[MAX_REGISTERED];
} nccl_state;

static xpose_status nccl_start(xpose_exchange *exchange, int slot, const xpose_exchange_layout *l,
                               const void *send, void *recv) {
  (void)slot; /* stream-ordered: nothing to keep per slot */
  nccl_state *st = exchange->state;
  cudaStream_t stream = (cudaStream_t)st->backend->ops->stream(st->backend, XPOSE_LANE_COMM);
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_NCCLCHECKGOTO(nccl.group_start(), res, fail);
  for (int k = 1; k < l->nranks; k++) {
    const int to = (st->rank + k) % l->nranks, from = (st->rank - k + l->nranks) % l->nranks;
    if (l->send_bytes[to] > 0)
      XPOSE_NCCLCHECKGOTO(nccl.send((const char *)send + l->send_offsets[to],
                                    (size_t)l->send_bytes[to], ncclUint8, to, st->comm, stream),
                          res, group);
    if (l->recv_bytes[from] > 0)
      XPOSE_NCCLCHECKGOTO(nccl.recv((char *)recv + l->recv_offsets[from],
                                    (size_t)l->recv_bytes[from], ncclUint8, from, st->comm, stream),
                          res, group);
  }
group:
  if (nccl.group_end() != ncclSuccess && res == XPOSE_SUCCESS) res = XPOSE_ERROR_NCCL;
fail:
  return res;
}

static xpose_status nccl_wait(xpose_exchange *exchange, int slot) {
  (void)exchange, (void)slot; /* what follows on the COMM lane sees the data */
  return XPOSE_SUCCESS;
}

/* Registered memory where every rank has it, else the backend's. */
static xpose_status nccl_alloc(xpose_exchange *exchange, size_t bytes, void **ptr) {
  nccl_state *st = exchange->state;
  xpose_status res = XPOSE_SUCCESS;
  *ptr = NULL;
  if (!st->registers) return st->backend->ops->alloc(st->backend, bytes, ptr);
  if (bytes == 0) return XPOSE_SUCCESS;
  int slot = 0;
  while (slot < MAX_REGISTERED && st->registered[slot].ptr) slot++;
  XPOSE_REQUIREGOTO(slot < MAX_REGISTERED, XPOSE_ERROR_INTERNAL, res, fail,
                    "more than %d NCCL buffers asked for", MAX_REGISTERED);
  const ncclResult_t allocated = nccl.mem_alloc(ptr, bytes);
  if (allocated != ncclSuccess) {
    (void)cudaGetLastError();
    *ptr = NULL;
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__,
               "cannot allocate %zu bytes of device scratch through NCCL: %s", bytes,
               nccl.error_string(allocated));
    return XPOSE_ERROR_OUT_OF_MEMORY;
  }
  void *handle = NULL;
  XPOSE_NCCLCHECKGOTO(nccl.comm_register(st->comm, *ptr, bytes, &handle), res, unregistered);
  st->registered[slot].ptr = *ptr;
  st->registered[slot].handle = handle;
  return XPOSE_SUCCESS;
unregistered:
  nccl.mem_free(*ptr);
  *ptr = NULL;
fail:
  return res;
}

static void nccl_release(xpose_exchange *exchange, void *ptr) {
  nccl_state *st = exchange->state;
  if (!st->registers) {
    st->backend->ops->release(st->backend, ptr);
    return;
  }
  for (int slot = 0; ptr && slot < MAX_REGISTERED; slot++)
    if (st->registered[slot].ptr == ptr) {
      if (st->registered[slot].handle) nccl.comm_deregister(st->comm, st->registered[slot].handle);
      nccl.mem_free(ptr);
      st->registered[slot].ptr = st->registered[slot].handle = NULL;
    }
}

static void nccl_destroy(xpose_exchange *exchange) {
  nccl_state *st = exchange->state;
  if (st->comm) nccl.comm_destroy(st->comm);
  free(st);
  free(exchange);
}

static const xpose_exchange_ops nccl_ops = {.start = nccl_start,
                                            .wait = nccl_wait,
                                            .destroy = nccl_destroy,
                                            .alloc = nccl_alloc,
                                            .release = nccl_release};

/* ncclCommInitRank blocks until every rank joins: a rank whose set-up
 * failed never does, and the others would wait forever.  So it runs on a
 * helper thread, and the plan gives up after XPOSE_NCCL_INIT_TIMEOUT
 * seconds (default 300): it fails like the rank that failed, and the
 * plan's agreement fails them all.  A thread that never returns is left
 * behind with its job (the process is failing anyway). */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t finished;
  int done, device, nranks, rank;
  ncclUniqueId id;
  ncclComm_t comm;
  ncclResult_t result;
} init_job;

static void *init_on_thread(void *arg) {
  init_job *job = arg;
  ncclResult_t result = ncclSystemError;
  if (cudaSetDevice(job->device) == cudaSuccess) /* the plan's GPU, on this thread too */
    result = nccl.comm_init_rank(&job->comm, job->nranks, job->id, job->rank);
  pthread_mutex_lock(&job->lock);
  job->result = result;
  job->done = 1;
  pthread_cond_signal(&job->finished);
  pthread_mutex_unlock(&job->lock);
  return NULL;
}

static double init_timeout_seconds(void) {
  const char *text = getenv("XPOSE_NCCL_INIT_TIMEOUT");
  const double seconds = text && *text ? atof(text) : 0;
  return seconds > 0 ? seconds : 300;
}

static xpose_status init_comm(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  init_job *job = calloc(1, sizeof *job);
  if (!job) return XPOSE_ERROR_OUT_OF_MEMORY;
  pthread_mutex_init(&job->lock, NULL);
  pthread_cond_init(&job->finished, NULL);
  job->nranks = nranks;
  job->rank = rank;
  job->id = id;
  pthread_t thread;
  if (cudaGetDevice(&job->device) != cudaSuccess ||
      pthread_create(&thread, NULL, init_on_thread, job) != 0) {
    (void)cudaGetLastError();
    free(job);
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "cannot start NCCL's set-up");
    return XPOSE_ERROR_NCCL;
  }
  pthread_detach(thread);
  const double timeout = init_timeout_seconds();
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += (time_t)timeout;
  pthread_mutex_lock(&job->lock);
  while (!job->done && pthread_cond_timedwait(&job->finished, &job->lock, &deadline) == 0) {
  }
  const int done = job->done;
  const ncclResult_t result = job->result;
  pthread_mutex_unlock(&job->lock);
  if (!done) {
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__,
               "NCCL's set-up did not finish in %.0f s: another rank's failed "
               "(XPOSE_NCCL_INIT_TIMEOUT sets the wait)",
               timeout);
    return XPOSE_ERROR_NCCL; /* the job stays with its thread */
  }
  *comm = job->comm;
  pthread_mutex_destroy(&job->lock);
  pthread_cond_destroy(&job->finished);
  free(job);
  if (result != ncclSuccess) {
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "ncclCommInitRank failed: %s",
               nccl.error_string(result));
    return XPOSE_ERROR_NCCL;
  }
  return XPOSE_SUCCESS;
}

/* Collective: bootstraps an NCCL communicator over the plan's.  Every
 * rank takes the same way up to ncclCommInitRank, which has a deadline. */
static xpose_status nccl_create(const xpose_exchange_setup *setup, xpose_exchange **exchange) {
  xpose_status res = XPOSE_SUCCESS;
  nccl_state *st = calloc(1, sizeof *st);
  *exchange = calloc(1, sizeof **exchange);
  int rank = 0, nranks = 0;
  XPOSE_MPICHECKGOTO(MPI_Comm_rank(setup->comm, &rank), res, fail);
  XPOSE_MPICHECKGOTO(MPI_Comm_size(setup->comm, &nranks), res, fail);
  /* Rank 0's id, or its failure: every rank learns which before going on. */
  struct {
    int ok;
    ncclUniqueId id;
  } root = {.ok = 1};
  if (rank == 0 && nccl.get_unique_id(&root.id) != ncclSuccess) root.ok = 0;
  XPOSE_MPICHECKGOTO(MPI_Bcast(&root, (int)sizeof root, MPI_BYTE, 0, setup->comm), res, fail);
  /* Whether every rank has its state, and can register buffers: NCCL's
   * rule is registered buffers on every rank or on none. */
  const int mine[2] = {st && *exchange, nccl.mem_alloc && nccl.mem_free && nccl.comm_register &&
                                            nccl.comm_deregister};
  int all[2] = {0, 0};
  XPOSE_MPICHECKGOTO(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, setup->comm), res, fail);
  XPOSE_REQUIREGOTO(root.ok, XPOSE_ERROR_NCCL, res, fail, "ncclGetUniqueId failed on rank 0");
  XPOSE_REQUIREGOTO(all[0], XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "a rank cannot allocate its NCCL exchange");
  st->backend = setup->backend;
  st->rank = rank;
  st->registers = all[1];
  XPOSE_CHECKGOTO(init_comm(&st->comm, nranks, root.id, rank), res, fail);
  (*exchange)->ops = &nccl_ops;
  (*exchange)->name = "nccl";
  (*exchange)->stream_ordered = 1;
  (*exchange)->state = st;
  return XPOSE_SUCCESS;
fail:
  free(st);
  free(*exchange);
  *exchange = NULL;
  return res;
}

/* Collective.  The lowest two ranks of comm that drive the same GPU
 * (compared by UUID, so whatever CUDA_VISIBLE_DEVICES each sees), or -1:
 * NCCL refuses a GPU shared by two ranks, and refuses it inside
 * ncclCommInitRank, where the other ranks would wait for them forever. */
static int shared_gpu(MPI_Comm comm, int *first, int *second) {
  int nranks = 0, device = -1;
  struct cudaDeviceProp prop;
  memset(&prop, 0, sizeof prop);
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    (void)cudaGetLastError(); /* an all-zero UUID: the choice below still agrees */
  if (MPI_Comm_size(comm, &nranks) != MPI_SUCCESS) return -1;
  unsigned char *all = malloc((size_t)nranks * sizeof prop.uuid.bytes);
  int found = -1;
  if (all && MPI_Allgather(prop.uuid.bytes, (int)sizeof prop.uuid.bytes, MPI_BYTE, all,
                           (int)sizeof prop.uuid.bytes, MPI_BYTE, comm) == MPI_SUCCESS)
    for (int i = 0; i < nranks && found < 0; i++)
      for (int j = i + 1; j < nranks && found < 0; j++)
        if (memcmp(all + (size_t)i * 16, all + (size_t)j * 16, 16) == 0) {
          *first = i;
          *second = j;
          found = 0;
        }
  free(all);
  return found;
}

static int nccl_available(xpose_backend *backend, MPI_Comm comm, char *why, size_t why_size) {
  if (!backend->ops->device_memory) return 0; /* for device buffers only: nothing to explain */
  pthread_once(&nccl_once, load_nccl);
  int first = -1, second = -1;
  if (shared_gpu(comm, &first, &second) == 0) {
    snprintf(why, why_size,
             "ranks %d and %d drive the same GPU, and NCCL needs a GPU of its own per rank "
             "(run one rank per GPU)",
             first, second);
    return 0;
  }
  if (!nccl.loaded) snprintf(why, why_size, "%s", nccl.why);
  return nccl.loaded;
}

const xpose_exchange_engine xpose_exchange_nccl = {
    .kind = XPOSE_EXCHANGE_NCCL,
    .name = "nccl",
    .available = nccl_available,
    .create = nccl_create,
};
