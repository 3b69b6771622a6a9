/* The chunk codec's threads (pool.h): workers wait for a job, take its
 * items one at a time from a shared counter, and report when it is done. */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { MOST_THREADS = 256 };

typedef struct {
  pthread_mutex_t lock;      /* the fields below, and the workers' wake-ups */
  pthread_cond_t wake, done; /* a job posted; a worker finished one */
  pthread_mutex_t one_job;   /* jobs from several callers, one at a time */
  pthread_t threads[MOST_THREADS];
  int size, started; /* threads wanted (the caller included); workers running */
  int quit;
  uint64_t generation; /* bumped for each job */
  int busy;            /* workers still in the current job */
  /* the job */
  xio_pool_fn fn;
  void *arg;
  int64_t items;
  atomic_int_fast64_t next;
  atomic_int failed;
} pool_state;

static pool_state pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
                          .wake = PTHREAD_COND_INITIALIZER,
                          .done = PTHREAD_COND_INITIALIZER,
                          .one_job = PTHREAD_MUTEX_INITIALIZER,
                          .size = 1};

/* Items until none is left or one failed; the first failure is kept. */
static void take_items(int worker) {
  for (;;) {
    if (atomic_load_explicit(&pool.failed, memory_order_relaxed)) return;
    const int64_t i = atomic_fetch_add(&pool.next, 1);
    if (i >= pool.items) return;
    const int rc = pool.fn(pool.arg, i, worker);
    if (rc) {
      int none = 0;
      atomic_compare_exchange_strong(&pool.failed, &none, rc);
    }
  }
}

static void *worker_main(void *arg) {
  const int worker = (int)(intptr_t)arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&pool.lock);
  for (;;) {
    while (!pool.quit && pool.generation == seen) pthread_cond_wait(&pool.wake, &pool.lock);
    if (pool.quit) break;
    seen = pool.generation;
    pthread_mutex_unlock(&pool.lock);
    take_items(worker);
    pthread_mutex_lock(&pool.lock);
    if (--pool.busy == 0) pthread_cond_signal(&pool.done);
  }
  pthread_mutex_unlock(&pool.lock);
  return NULL;
}

static void stop_workers(void) {
  pthread_mutex_lock(&pool.lock);
  pool.quit = 1;
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);
  for (int i = 0; i < pool.started; i++) pthread_join(pool.threads[i], NULL);
  pool.started = 0;
  pool.quit = 0;
}

/* Under one_job.  The workers, where they have not started; as many as
 * start (none: the caller runs every item). */
static void start_workers(void) {
  while (pool.started < pool.size - 1 &&
         pthread_create(&pool.threads[pool.started], NULL, worker_main,
                        (void *)(intptr_t)(pool.started + 1)) == 0)
    pool.started++;
  if (pool.started < pool.size - 1) pool.size = pool.started + 1; /* no more to be had */
}

void xio_pool_set_threads(int threads) {
  pthread_mutex_lock(&pool.one_job);
  if (pool.started) stop_workers();
  pool.size = threads < 1 ? 1 : threads > MOST_THREADS ? MOST_THREADS : threads;
  pthread_mutex_unlock(&pool.one_job);
}

int xio_pool_threads(void) { return pool.size; }

int xio_pool_run(int64_t items, xio_pool_fn fn, void *arg) {
  if (items <= 0) return 0;
  pthread_mutex_lock(&pool.one_job);
  pool.fn = fn;
  pool.arg = arg;
  pool.items = items;
  atomic_store(&pool.next, 0);
  atomic_store(&pool.failed, 0);
  const int helpers = items > 1 ? (start_workers(), pool.started) : 0;
  if (helpers) {
    pthread_mutex_lock(&pool.lock);
    pool.busy = helpers;
    pool.generation++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
  }
  take_items(0);
  if (helpers) {
    pthread_mutex_lock(&pool.lock);
    while (pool.busy) pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
  }
  const int rc = atomic_load(&pool.failed);
  pthread_mutex_unlock(&pool.one_job);
  return rc;
}
