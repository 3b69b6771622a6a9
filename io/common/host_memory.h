/* Large host buffers on transparent huge pages where the kernel allows
 * them (its "madvise" mode, Debian's default): a buffer touched for the
 * first time takes a page fault every 4 KiB otherwise, and on the 2-core
 * VM page faults were a fifth of a compressed run's time (2 ranks, the
 * 95 MB climate file: 2.26 -> 1.82 s with huge pages for every buffer). */
#ifndef XIO_HOST_MEMORY_H
#define XIO_HOST_MEMORY_H

#include <stddef.h>

/* Local.  bytes (1 at least) of host memory, freed with free(); NULL when
 * out of memory. */
void *xio_host_alloc(size_t bytes);

#endif
