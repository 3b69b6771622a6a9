/* What the tool needs to know about the GPUs its ranks drive. */
#ifndef XPOSE_GPUS_H
#define XPOSE_GPUS_H

#include <mpi.h>
#include <stdint.h>

/* Collective.  Half of the current GPU's free memory, the minimum over
 * ranks (every rank plans the same passes). */
uint64_t xpose_default_gpu_budget(MPI_Comm comm);

/* Collective.  With --verbose, rank 0 prints which GPU every rank drives. */
void xpose_report_gpu_map(MPI_Comm comm, int device);

#endif
