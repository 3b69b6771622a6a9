/* xpose: distributed transpose of dense row-major matrices over MPI.
 *
 * A plan describes one transpose of a rows x cols matrix of elem_size-byte
 * elements, distributed over the ranks of a communicator: every rank owns a
 * contiguous slab of input rows and, after execution, a contiguous slab of
 * output rows (output = cols x rows).  Elements are opaque bytes; any
 * element size works.
 *
 *   xpose_plan plan;
 *   xpose_plan_create(MPI_COMM_WORLD, rows, cols, sizeof(double), NULL, &plan);
 *   xpose_plan_input_rows(plan, &first, &count);   // this rank's input slab
 *   xpose_plan_output_rows(plan, &first, &count);  // this rank's output slab
 *   xpose_execute(plan, in, out);                  // in: count x cols, out: count x rows
 *   xpose_plan_destroy(plan);
 *
 * Plan creation, execution and destruction are collective over the plan's
 * communicator.  A failure on one rank is a failure on every rank: all ranks
 * return the same status, so no rank is left waiting.  The library never
 * prints; install a handler with xpose_set_log_handler() to see its messages.
 */
#ifndef XPOSE_H
#define XPOSE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "xpose_config.h" /* generated: version, and what this xpose was built with */

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the public API: the library hides everything else. */
#if defined(__GNUC__) || defined(__clang__)
#define XPOSE_API __attribute__((visibility("default")))
#else
#define XPOSE_API
#endif

/* XPOSE_VERSION_MAJOR, _MINOR, _PATCH and _STRING come from xpose_config.h. */
#define XPOSE_VERSION \
  (XPOSE_VERSION_MAJOR * 10000 + XPOSE_VERSION_MINOR * 100 + XPOSE_VERSION_PATCH)

/* The version of the library linked in, as XPOSE_VERSION encodes it: differs
 * from XPOSE_VERSION when the header and the library do not match. */
XPOSE_API int xpose_version(void);

typedef enum {
  XPOSE_SUCCESS = 0,
  XPOSE_ERROR_INVALID_ARGUMENT = 1, /* bad argument, or ranks passed different ones */
  XPOSE_ERROR_OUT_OF_MEMORY = 2,    /* scratch or bookkeeping allocation failed */
  XPOSE_ERROR_MPI = 3,              /* an MPI call failed */
  XPOSE_ERROR_UNSUPPORTED = 4,      /* backend or exchange engine not available */
  XPOSE_ERROR_CUDA = 5,             /* a CUDA call failed */
  XPOSE_ERROR_NCCL = 6,             /* an NCCL call failed */
  XPOSE_ERROR_INTERNAL = 7          /* a bug in xpose: please report it */
} xpose_status;

/* A short, constant English description of a status. */
XPOSE_API const char *xpose_status_string(xpose_status status);

typedef enum {
  XPOSE_BACKEND_AUTO = 0, /* host */
  XPOSE_BACKEND_HOST = 1, /* input and output in host memory */
  XPOSE_BACKEND_CUDA = 2  /* input and output in the current CUDA device's memory */
} xpose_backend_kind;

typedef enum {
  XPOSE_EXCHANGE_AUTO = 0, /* host: MPI; CUDA: p2p (plan-owned outputs, shapes where it was
                             measured faster), else NCCL, else CUDA-aware MPI, else staged */
  XPOSE_EXCHANGE_MPI = 1,   /* point-to-point MPI on the buffers (CUDA: needs CUDA-aware MPI) */
  XPOSE_EXCHANGE_NCCL = 2,  /* NCCL grouped send/receive (CUDA backend) */
  XPOSE_EXCHANGE_STAGED = 3, /* through pinned host buffers, any MPI (CUDA backend) */
  /* Transpose on the wire (CUDA backend, plan-owned outputs, every pair of
   * GPUs on a node with peer access): each rank's kernel reads its input
   * once and writes every block for its node straight into the owner's
   * output over NVLink or PCIe, through CUDA IPC; nothing is packed or
   * placed.  Blocks for other nodes go, in the same execution, through the
   * best of the other engines.  `auto` prefers it where it was measured
   * faster than NCCL: everywhere but 1-byte elements on output rows that
   * are not a power of two bytes long, and while a rank maps at most 16 GiB
   * of other ranks' outputs (tests/bench/RESULTS.md). */
  XPOSE_EXCHANGE_P2P = 4
} xpose_exchange_kind;

typedef struct {
  xpose_backend_kind backend;
  xpose_exchange_kind exchange;
  /* Messages larger than this are split, so no MPI count exceeds INT_MAX.
   * 0 selects the default (1 GiB); values above INT_MAX are clamped. */
  size_t max_message_bytes;
  /* Chunks each block is exchanged in, so that packing, transfers and
   * placing of different chunks overlap.  0: automatic (on GPUs about
   * 1 GiB of each rank's rows per chunk with NCCL, 256 MiB otherwise, up
   * to 16; one on the host). */
  int pipeline_chunks;
  /* Non-zero: the plan allocates this rank's output slab itself (device
   * memory for the CUDA backend), once, and xpose_execute must be given
   * that buffer (xpose_plan_output_buffer).  This is what lets the p2p
   * engine register every rank's output with the others at plan time. */
  int own_output;
  /* Threads each rank's host transposes use (host backend), at most 256:
   * 0 or 1, the calling thread alone; more split every block of 8 MiB or
   * more by its rows, the calling thread among them.  Local: ranks may
   * differ. */
  int host_threads;
  /* Output rows go to the ranks in whole units of this many rows (the
   * last unit may be short), as many units to each as xpose_unit_range
   * gives: for outputs stored in blocks of that many rows (an HDF5
   * chunk's), so that no block is split between two ranks.  0 or 1: the
   * balanced split of xpose_block_range. */
  int64_t output_row_unit;
} xpose_config;

/* Fills *config with the defaults. */
XPOSE_API void xpose_config_init(xpose_config *config);

typedef struct xpose_plan_s *xpose_plan;

/* Collective.  rows, cols >= 0, elem_size >= 1, the same on every rank;
 * config may be NULL for the defaults.  The plan duplicates comm. */
XPOSE_API xpose_status xpose_plan_create(MPI_Comm comm, int64_t rows, int64_t cols,
                                         size_t elem_size, const xpose_config *config,
                                         xpose_plan *plan);

/* This rank's input rows [first, first + count) of the rows x cols input. */
XPOSE_API xpose_status xpose_plan_input_rows(const xpose_plan plan, int64_t *first, int64_t *count);

/* This rank's output rows [first, first + count) of the cols x rows output. */
XPOSE_API xpose_status xpose_plan_output_rows(const xpose_plan plan, int64_t *first,
                                              int64_t *count);

/* The output slab the plan owns (xpose_config.own_output): out_rows x rows
 * elements, for xpose_execute's `out`.  NULL, with XPOSE_ERROR_INVALID_ARGUMENT,
 * for plans that do not own one; NULL for an empty slab. */
XPOSE_API xpose_status xpose_plan_output_buffer(const xpose_plan plan, void **out);

/* Bytes of scratch memory the plan holds on this rank (device memory for
 * the CUDA backend; the staged engine holds as much again in pinned host
 * memory). */
XPOSE_API xpose_status xpose_plan_scratch_bytes(const xpose_plan plan, size_t *bytes);

/* The exchange engine the plan uses: "mpi", "nccl", "cuda-aware-mpi",
 * "staged" or "p2p" (what XPOSE_EXCHANGE_AUTO picked); where the p2p
 * engine's ranks span nodes, with the engine between nodes after a "+"
 * ("p2p+nccl").  A static string. */
XPOSE_API const char *xpose_plan_exchange_name(const xpose_plan plan);

/* CUDA backend: execution follows the work queued on `stream` (a
 * cudaStream_t of the plan's device) instead of the legacy default stream;
 * NULL goes back to the legacy default stream.  The plan's work itself runs
 * on streams of its own (see xpose_config.pipeline_chunks). */
XPOSE_API xpose_status xpose_plan_set_stream(xpose_plan plan, void *stream);

/* Collective.  in: this rank's input rows, count x cols, row-major, contiguous.
 * out: this rank's output rows, count x rows.  in and out must not overlap.
 * With the CUDA backend both are device pointers; execution starts after the
 * work already queued on the caller's stream (xpose_plan_set_stream; by
 * default the legacy default stream, so cudaMemcpy and cudaMemset issued
 * before come first) and returns once out is complete. */
XPOSE_API xpose_status xpose_execute(xpose_plan plan, const void *in, void *out);

/* Collective.  Frees the plan; NULL is accepted. */
XPOSE_API xpose_status xpose_plan_destroy(xpose_plan plan);

/* The balanced 1-D distribution every plan uses: part `index` of `parts`
 * owns [first, first + count) of n items; counts differ by at most one and
 * lower parts get the larger ones.  Parts beyond n own nothing. */
XPOSE_API xpose_status xpose_block_range(int64_t n, int64_t parts, int64_t index, int64_t *first,
                                         int64_t *count);

/* The split of n items in whole units of `unit` (the last one short
 * where unit does not divide n): part `index` of `parts` owns the units
 * xpose_block_range gives it of ceil(n / unit), as items [first, first +
 * count).  unit 0 or 1 is xpose_block_range's split. */
XPOSE_API xpose_status xpose_unit_range(int64_t n, int64_t unit, int64_t parts, int64_t index,
                                        int64_t *first, int64_t *count);

/* Collective.  Makes the GPU this rank should drive current: the rank's
 * index among the ranks on its node, modulo the devices it can see (so
 * CUDA_VISIBLE_DEVICES is respected).  XPOSE_ERROR_UNSUPPORTED without CUDA
 * or without a device. */
XPOSE_API xpose_status xpose_cuda_select_device(MPI_Comm comm, int *device);

typedef enum {
  XPOSE_LOG_ERROR = 0,
  XPOSE_LOG_WARN = 1,
  XPOSE_LOG_INFO = 2,
  XPOSE_LOG_DEBUG = 3
} xpose_log_level;

/* message is one line without a trailing newline; errors carry file:line. */
typedef void (*xpose_log_fn)(xpose_log_level level, const char *message, void *user_data);

/* Process-wide; NULL silences the library (the default). */
XPOSE_API void xpose_set_log_handler(xpose_log_fn handler, void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* XPOSE_H */
