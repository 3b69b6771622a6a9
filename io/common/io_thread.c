#include "io_thread.h"

#include <mpi.h>

static void *serve(void *arg) {
  xio_io_thread *t = arg;
  pthread_mutex_lock(&t->lock);
  for (;;) {
    while (!t->pending && !t->quit) pthread_cond_wait(&t->changed, &t->lock);
    if (!t->pending) break;
    pthread_mutex_unlock(&t->lock);
    const int rc = t->job(t->arg);
    pthread_mutex_lock(&t->lock);
    t->rc = rc;
    t->pending = 0;
    pthread_cond_broadcast(&t->changed);
  }
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

void xio_io_thread_inline(xio_io_thread *t) {
  t->threaded = t->pending = t->quit = t->rc = 0;
  t->job = NULL;
  t->arg = NULL;
}

void xio_io_thread_start(xio_io_thread *t, int calls_mpi) {
  xio_io_thread_inline(t);
  int provided = MPI_THREAD_SINGLE;
  if (calls_mpi &&
      (MPI_Query_thread(&provided) != MPI_SUCCESS || provided < MPI_THREAD_MULTIPLE))
    return;
  if (pthread_mutex_init(&t->lock, NULL) != 0) return;
  if (pthread_cond_init(&t->changed, NULL) != 0) {
    pthread_mutex_destroy(&t->lock);
    return;
  }
  if (pthread_create(&t->thread, NULL, serve, t) != 0) {
    pthread_cond_destroy(&t->changed);
    pthread_mutex_destroy(&t->lock);
    return;
  }
  t->threaded = 1;
}

void xio_io_thread_post(xio_io_thread *t, xio_job_fn job, void *arg) {
  if (!t->threaded) {
    t->rc = job(arg);
    return;
  }
  pthread_mutex_lock(&t->lock);
  t->job = job;
  t->arg = arg;
  t->pending = 1;
  pthread_cond_broadcast(&t->changed);
  pthread_mutex_unlock(&t->lock);
}

int xio_io_thread_busy(xio_io_thread *t) {
  if (!t->threaded) return 0;
  pthread_mutex_lock(&t->lock);
  const int busy = t->pending;
  pthread_mutex_unlock(&t->lock);
  return busy;
}

int xio_io_thread_wait(xio_io_thread *t) {
  if (!t->threaded) return t->rc;
  pthread_mutex_lock(&t->lock);
  while (t->pending) pthread_cond_wait(&t->changed, &t->lock);
  const int rc = t->rc;
  pthread_mutex_unlock(&t->lock);
  return rc;
}

void xio_io_thread_stop(xio_io_thread *t) {
  if (!t->threaded) return;
  pthread_mutex_lock(&t->lock);
  t->quit = 1;
  pthread_cond_broadcast(&t->changed);
  pthread_mutex_unlock(&t->lock);
  pthread_join(t->thread, NULL);
  pthread_cond_destroy(&t->changed);
  pthread_mutex_destroy(&t->lock);
  t->threaded = 0;
}
