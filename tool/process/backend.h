/* Which backend a run transposes on: the GPUs where every rank has one
 * (or as --backend says), else the host, and why. */
#ifndef TOOL_BACKEND_H
#define TOOL_BACKEND_H

#include "h5_error.h"
#include "options.h"
#include "xpose.h"

/* Collective.  Host or CUDA for this run; with CUDA, each rank's GPU is
 * current afterwards.  --backend auto takes GPUs when every rank has one,
 * and says why not where an xpose built with CUDA runs on the host.
 * Returns an exit status: --backend cuda, --exchange p2p, nccl or staged
 * without GPUs are usage errors. */
int tool_choose_backend(const tool_options *opt, MPI_Comm comm, xpose_backend_kind *backend,
                        xio_error *err);

#endif
