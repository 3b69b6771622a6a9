/* checksum.h's sums, of a block in GPU memory (builds with CUDA only). */
#ifndef XIO_CHECKSUM_CUDA_H
#define XIO_CHECKSUM_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xio_checksum_block of a row-major block in device memory, into *sum;
 * scratch: 8 bytes of device memory.  Returns a cudaError_t (0: success);
 * the block's writer must be done (same stream: the default one). */
int xio_checksum_block_gpu(const void *block, int64_t nrows, int64_t ncols, size_t elem_size,
                           uint64_t first_key, uint64_t row_step, uint64_t col_step, void *scratch,
                           uint64_t *sum);

#ifdef __cplusplus
}
#endif

#endif
