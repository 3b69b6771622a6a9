/* The chunk codec's threads (pool.h): workers wait for a job, take items
 * from the open jobs in turn, one at a time, from each job's shared
 * counter, and report when a job's last item is done. */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { MOST_THREADS = 256 };

/* A job: its items taken from `next`; `running` items begun and not ended. */
typedef struct {
  int open; /* a caller's, until it has seen its items end */
  xio_pool_fn fn;
  void *arg;
  int64_t items;
  atomic_int_fast64_t next;
  atomic_int failed;
  int running; /* under the lock */
} pool_job;

typedef struct {
  pthread_mutex_t lock;           /* the fields below, and the wake-ups */
  pthread_cond_t wake, done, free; /* a job posted; an item ended; a slot freed */
  pthread_t threads[MOST_THREADS];
  int size, started; /* threads wanted (a caller included); workers running */
  int quit;
  pool_job jobs[XIO_POOL_JOBS];
} pool_state;

static pool_state pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
                          .wake = PTHREAD_COND_INITIALIZER,
                          .done = PTHREAD_COND_INITIALIZER,
                          .free = PTHREAD_COND_INITIALIZER,
                          .size = 1};

/* Under the lock.  A job with items left, after `after` in turn; -1: none. */
static int job_with_items(int after) {
  for (int k = 1; k <= XIO_POOL_JOBS; k++) {
    const int j = (after + k) % XIO_POOL_JOBS;
    pool_job *job = &pool.jobs[j];
    if (job->open && atomic_load(&job->next) < job->items && !atomic_load(&job->failed)) return j;
  }
  return -1;
}

/* Item i of job j, outside the lock; the first failure is kept. */
static void run_item(pool_job *job, int64_t i, int worker) {
  const int rc = job->fn(job->arg, i, worker);
  if (rc) {
    int none = 0;
    atomic_compare_exchange_strong(&job->failed, &none, rc);
  }
}

/* Under the lock, left under it.  One item of job j, if it has one left:
 * 1, else 0. */
static int take_item(int j, int worker) {
  pool_job *job = &pool.jobs[j];
  if (atomic_load_explicit(&job->failed, memory_order_relaxed)) return 0;
  const int64_t i = atomic_fetch_add(&job->next, 1);
  if (i >= job->items) return 0;
  job->running++;
  pthread_mutex_unlock(&pool.lock);
  run_item(job, i, worker);
  pthread_mutex_lock(&pool.lock);
  if (--job->running == 0) pthread_cond_broadcast(&pool.done);
  return 1;
}

static void *worker_main(void *arg) {
  const int worker = (int)(intptr_t)arg;
  int last = 0;
  pthread_mutex_lock(&pool.lock);
  for (;;) {
    const int j = job_with_items(last);
    if (j >= 0) {
      last = j; /* the jobs in turn, an item each */
      (void)take_item(j, worker);
      continue;
    }
    if (pool.quit) break;
    pthread_cond_wait(&pool.wake, &pool.lock);
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

/* Under the lock.  The workers, where they have not started; as many as
 * start (none: each caller runs its items). */
static void start_workers(void) {
  while (pool.started < pool.size - 1 &&
         pthread_create(&pool.threads[pool.started], NULL, worker_main,
                        (void *)(intptr_t)(pool.started + 1)) == 0)
    pool.started++;
  if (pool.started < pool.size - 1) pool.size = pool.started + 1; /* no more to be had */
}

void xio_pool_set_threads(int threads) {
  if (pool.started) stop_workers();
  pool.size = threads < 1 ? 1 : threads > MOST_THREADS ? MOST_THREADS : threads;
}

int xio_pool_threads(void) { return pool.size; }

int xio_pool_run(int64_t items, xio_pool_fn fn, void *arg) {
  if (items <= 0) return 0;
  pthread_mutex_lock(&pool.lock);
  int j = 0;
  for (;;) { /* a free slot */
    while (j < XIO_POOL_JOBS && pool.jobs[j].open) j++;
    if (j < XIO_POOL_JOBS) break;
    pthread_cond_wait(&pool.free, &pool.lock);
    j = 0;
  }
  pool_job *job = &pool.jobs[j];
  job->open = 1, job->fn = fn, job->arg = arg, job->items = items, job->running = 0;
  atomic_store(&job->next, 0);
  atomic_store(&job->failed, 0);
  if (items > 1) {
    start_workers();
    pthread_cond_broadcast(&pool.wake);
  }
  while (take_item(j, 0)) { /* the caller is worker 0 of its own job */
  }
  while (job->running) pthread_cond_wait(&pool.done, &pool.lock);
  const int rc = atomic_load(&job->failed);
  job->open = 0;
  pthread_cond_signal(&pool.free);
  pthread_mutex_unlock(&pool.lock);
  return rc;
}
