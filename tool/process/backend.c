/* The backend a run transposes on (backend.h). */
#define _POSIX_C_SOURCE 200809L /* gethostname */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gpus.h"
#include "report.h"

#ifdef XPOSE_HAVE_CUDA
enum { LINE = 400 }; /* a rank, a host name and tool_describe_gpu's words */

/* Collective: rank 0 prints which GPU every rank drives. */
static int report_gpu_map(MPI_Comm comm, int device, xio_error *err) {
  int rank, nranks;
  if (XIO_MPICHECK(MPI_Comm_rank(comm, &rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(comm, &nranks), err))
    return -1;
  char host[64] = "?", gpu[LINE - 100], line[LINE];
  if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "?");
  tool_describe_gpu(device, gpu, sizeof gpu);
  snprintf(line, sizeof line, "rank %d on %s: %s", rank, host, gpu);
  char *all = rank == 0 ? malloc((size_t)nranks * LINE) : NULL;
  const int rc = XIO_MPICHECK(MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, comm), err);
  for (int r = 0; rc == 0 && all && r < nranks; r++)
    tool_report_verbose("%s", all + (size_t)r * LINE);
  free(all);
  return rc;
}
#endif

int tool_choose_backend(const tool_options *opt, MPI_Comm comm, xpose_backend_kind *backend,
                        xio_error *err) {
  *backend = XPOSE_BACKEND_HOST;
  if (opt->backend == XPOSE_BACKEND_HOST) return TOOL_EXIT_OK;
  const int needs_gpu = opt->exchange == XPOSE_EXCHANGE_NCCL ||
                        opt->exchange == XPOSE_EXCHANGE_STAGED ||
                        opt->exchange == XPOSE_EXCHANGE_P2P;
  int device = -1;
  if (xpose_cuda_select_device(comm, &device) == XPOSE_SUCCESS) {
    *backend = XPOSE_BACKEND_CUDA;
#ifdef XPOSE_HAVE_CUDA
    /* every rank has the same argv */
    if (opt->verbose && report_gpu_map(comm, device, err)) return TOOL_EXIT_ERROR;
#endif
    return TOOL_EXIT_OK;
  }
#ifdef XPOSE_HAVE_CUDA
  int rank;
  char why[160];
  if (XIO_MPICHECK(MPI_Comm_rank(comm, &rank), err)) return TOOL_EXIT_ERROR;
  tool_why_no_gpu(why, sizeof why);
  /* The lowest rank without a GPU speaks for all. */
  if (why[0]) xio_fail(err, "rank %d can use no GPU: %s", rank, why);
  if (xio_agree(comm, why[0] ? -1 : 0, err) == 0) /* devices seen, but not selected */
    xio_fail(err, "a rank could not select its GPU (--verbose says why)");
  if (opt->backend == XPOSE_BACKEND_AUTO && !needs_gpu) {
    /* A machine without GPUs needs no word about it; some ranks with GPUs
     * and others without do (a job spread wrong, a GPU lost). */
    int mine = why[0] == '\0', any = 0;
    if (XIO_MPICHECK(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm), err))
      return TOOL_EXIT_ERROR;
    if (any)
      tool_report_note("transposing on the host: %s", err->message);
    else
      tool_report_verbose("transposing on the host (--backend host says so): %s", err->message);
    return TOOL_EXIT_OK;
  }
  const char *reason = err->message;
#else
  const char *reason = "this xpose was built without CUDA";
  if (opt->backend == XPOSE_BACKEND_AUTO && !needs_gpu) return TOOL_EXIT_OK;
#endif
  char message[sizeof err->message];
  snprintf(message, sizeof message, "%s", reason);
  if (opt->backend == XPOSE_BACKEND_CUDA)
    xio_fail(err, "--backend cuda: %s", message);
  else
    xio_fail(err, "--exchange %s moves GPU buffers: %s",
             opt->exchange == XPOSE_EXCHANGE_NCCL     ? "nccl"
             : opt->exchange == XPOSE_EXCHANGE_STAGED ? "staged"
                                                      : "p2p",
             message);
  return TOOL_EXIT_USAGE;
}
