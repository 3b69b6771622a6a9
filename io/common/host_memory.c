#define _DEFAULT_SOURCE /* madvise */
#include "host_memory.h"

#include <hdf5.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif
#include <stdlib.h>
#include <sys/mman.h>

enum { HUGE_PAGE = 2 << 20 };

void *xio_host_alloc(size_t bytes) {
  if (bytes < HUGE_PAGE) return malloc(bytes ? bytes : 1);
  void *p = NULL;
  if (posix_memalign(&p, HUGE_PAGE, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, bytes, MADV_HUGEPAGE); /* advisory: small pages where refused */
#endif
  return p;
}

void xio_host_give_back(void) {
  (void)H5garbage_collect();
#ifdef __GLIBC__
  (void)malloc_trim(0);
#endif
}
