/* Local out-of-place transpose on the host, for any element size. */
#ifndef XPOSE_HOST_KERNELS_H
#define XPOSE_HOST_KERNELS_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  XPOSE_HOST_KERNEL_AUTO = 0, /* the fastest this CPU supports */
  XPOSE_HOST_KERNEL_PORTABLE, /* plain C tiles; every CPU */
  XPOSE_HOST_KERNEL_AVX2      /* x86-64 with AVX2 */
} xpose_host_kernel;

/* Non-zero when `kernel` can run on this CPU. */
int xpose_host_kernel_available(xpose_host_kernel kernel);

/* The kernel XPOSE_HOST_KERNEL_AUTO resolves to, by name ("avx2", "portable"). */
const char *xpose_host_kernel_name(xpose_host_kernel kernel);

/* dst (cols x rows, leading dimension ld_dst elements) = transpose of
 * src (rows x cols, leading dimension ld_src elements).  src and dst must not
 * overlap.  Leading dimensions let blocks go straight into their place. */
void xpose_host_transpose(const void *src, int64_t ld_src, void *dst, int64_t ld_dst, int64_t rows,
                          int64_t cols, size_t elem_size);

/* The same with a chosen kernel (tests and benchmarks); the kernel must be
 * available. */
void xpose_host_transpose_using(xpose_host_kernel kernel, const void *src, int64_t ld_src,
                                void *dst, int64_t ld_dst, int64_t rows, int64_t cols,
                                size_t elem_size);

#endif
