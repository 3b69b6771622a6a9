/* The chunk codec's threads: one pool per process (per rank), which runs
 * the items of a job on every thread, its caller's included, and of two
 * jobs at once, an item of each in turn (a pass's reads beside the last
 * pass's writes: what one waits for the disk, the other computes).
 *
 * Inflating and deflating chunks is most of the time of a run on
 * compressed files; one core's zlib made a rank per GPU no faster than a
 * serial tool.  The pool takes the CPUs the rank may use
 * (xio_pool_set_threads: the tool gives it its affinity, or --threads).
 * Its threads start at the first job that has more than one item, so a
 * run on uncompressed data starts none. */
#ifndef XIO_POOL_H
#define XIO_POOL_H

#include <stdint.h>

/* Jobs that run at once; a caller of one more waits for one to end. */
enum { XIO_POOL_JOBS = 2 };

/* One item of a job, run on thread `worker` (0 .. xio_pool_threads() - 1;
 * 0 is the caller's: two jobs at once must not share what they keep per
 * worker): 0, or nonzero to end the job (items not yet begun are
 * skipped). */
typedef int (*xio_pool_fn)(void *arg, int64_t item, int worker);

/* Local.  The pool's size from now on (at least 1, at most 256); threads
 * already started are stopped first.  Not while a job runs. */
void xio_pool_set_threads(int threads);

/* Local.  The pool's size (1 until set). */
int xio_pool_threads(void);

/* Local.  Runs fn(arg, i, worker) for every i in [0, items), on every
 * thread at once, and returns when all are done: 0, or the first nonzero
 * value an item returned.  Jobs from two threads run at once, from more
 * in turn; an item must not start a job of its own. */
int xio_pool_run(int64_t items, xio_pool_fn fn, void *arg);

#endif
