/* What the tool needs to know about the GPUs its ranks drive (cuda/tool/gpus.c;
 * CUDA builds only). */
#ifndef TOOL_GPUS_H
#define TOOL_GPUS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"

/* Local.  Why this rank can use no GPU, in plain words (no driver, a driver
 * too old, no device visible), or "" when it can. */
void tool_why_no_gpu(char *why, size_t why_size);

/* Collective.  Half of the current GPU's free memory, the minimum over
 * ranks (every rank plans the same passes).  0, or -1 with a message. */
int tool_default_gpu_budget(MPI_Comm comm, uint64_t *budget, xio_error *err);

/* Local.  Which GPU `device` is: "GPU 0, NVIDIA H100 80GB HBM3 (PCI
 * 0000:19:00.0)"; what cannot be read shows as "?". */
void tool_describe_gpu(int device, char *text, size_t size);

#endif
