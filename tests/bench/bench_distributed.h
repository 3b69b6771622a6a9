/* The multi-GPU half of xpose-bench. */
#ifndef XPOSE_BENCH_DISTRIBUTED_H
#define XPOSE_BENCH_DISTRIBUTED_H

#include <stddef.h>
#include <stdint.h>

/* Collective over MPI_COMM_WORLD; returns the process exit status.
 * engines: comma-separated exchange names (nccl, mpi, staged), NULL for all;
 * chunks: the plan's pipeline_chunks (0: automatic). */
int xpose_bench_distributed(int64_t rows, int64_t cols, size_t elem_size, int warmup, int iters,
                            const char *engines, int chunks);

#endif
