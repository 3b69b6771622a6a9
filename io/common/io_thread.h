/* A helper thread that runs one job at a time while the caller goes on:
 * the pass loop's reads and writes overlap its transposes this way.
 *
 * HDF5 (a parallel build is never thread-safe) must only ever be called
 * by one thread at a time: while a job runs, the caller stays out of HDF5
 * and off the communicators the job's collectives use.  The job's MPI-IO
 * and the caller's exchange run at once, which needs MPI_THREAD_MULTIPLE:
 * without it (or without a thread) jobs run inline, at post time.  Jobs
 * that call neither (raw reads and writes: raw_dataset.h) can run on
 * several such threads at once. */
#ifndef XIO_IO_THREAD_H
#define XIO_IO_THREAD_H

#include <pthread.h>

typedef int (*xio_job_fn)(void *arg);

typedef struct {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int threaded;            /* 0: jobs run inline */
  int pending, quit, rc;   /* under lock */
  xio_job_fn job;
  void *arg;
} xio_io_thread;

/* Starts the thread; for jobs that call MPI (calls_mpi), only when MPI
 * provides MPI_THREAD_MULTIPLE (the tool asks for it unless
 * XPOSE_IO_THREAD=0).  Otherwise, or if the thread cannot start, jobs run
 * inline. */
void xio_io_thread_start(xio_io_thread *t, int calls_mpi);

/* Jobs run inline: no thread. */
void xio_io_thread_inline(xio_io_thread *t);

/* Runs job(arg): on the thread, or here and now.  One job at a time:
 * every post is followed by a wait. */
void xio_io_thread_post(xio_io_thread *t, xio_job_fn job, void *arg);

/* Whether a posted job is still running (never, inline). */
int xio_io_thread_busy(xio_io_thread *t);

/* Waits for the posted job and returns what it returned. */
int xio_io_thread_wait(xio_io_thread *t);

/* Joins the thread (no job may be pending). */
void xio_io_thread_stop(xio_io_thread *t);

#endif
