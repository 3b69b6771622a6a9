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

/* Local.  Memory freed given back to the system, between a dataset's
 * moves and phases: HDF5 keeps freed blocks on its free lists (a read
 * of many chunks, megabytes), glibc freed buffers of a few MiB in its
 * heap, where the top has room new ones of many MiB too; resident, they
 * stood beside the next phase's and the next dataset's buffers (a whole
 * file at --memory 28M peaked 131 MiB, tas alone 69). */
void xio_host_give_back(void);

#endif
