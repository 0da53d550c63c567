/*
 * pool — the worker threads of one algorithm run.
 *
 * A run makes its pool once (threads - 1 workers; the calling thread is
 * the last worker) and hands it parallel loops: algo_parallel(fn, nchunks)
 * wakes the workers, every thread takes the next chunk from an atomic
 * counter until none is left, and the caller waits for the last one.  A
 * loop is a generation: workers sleep on a condition variable between
 * generations, so an iterative algorithm (PageRank: one loop per
 * iteration) creates its threads once.
 *
 * Invariants:
 *   1. Workers touch only what fn touches; they allocate nothing.
 *   2. algo_parallel returns only when every worker has left the loop
 *      (running == 0), so fn's data may be freed right after.
 *   3. A thread that fails to start is not an error: the pool runs with
 *      the threads it has (the caller at least).
 */
#include <pthread.h>
#include <unistd.h>

#include "algo/algo.h"

typedef struct worker_start worker_start;

struct algo_pool {
    int threads;             /* including the caller */
    pthread_t *workers;
    worker_start *starts;    /* each worker's number, read by it */
    int nworkers;            /* started */
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    uint64_t generation;     /* guarded by lock */
    bool quit;
    int running;             /* workers inside the current loop */
    /* the current loop (written under lock before the generation moves) */
    algo_chunk_fn fn;
    void *arg;
    size_t nchunks;
    atomic_size_t next;
    atomic_bool *interrupt;
    atomic_bool stopped;
};

static void take_chunks(algo_pool *p, int worker)
{
    for (;;) {
        if (p->interrupt && atomic_load_explicit(p->interrupt, memory_order_relaxed)) {
            atomic_store(&p->stopped, true);
            return;
        }
        size_t k = atomic_fetch_add(&p->next, 1);
        if (k >= p->nchunks)
            return;
        p->fn(p->arg, k, worker);
    }
}

struct worker_start {
    algo_pool *pool;
    int index;
};

static void *worker_main(void *arg)
{
    worker_start *ws = arg;
    algo_pool *p = ws->pool;
    int index = ws->index;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->quit && p->generation == seen)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->quit)
            break;
        seen = p->generation;
        pthread_mutex_unlock(&p->lock);
        take_chunks(p, index);
        pthread_mutex_lock(&p->lock);
        if (--p->running == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static int default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

algo_status algo_pool_new(algo_ctx *c, int threads, algo_pool **out)
{
    *out = NULL;
    if (threads <= 0)
        threads = default_threads();
    algo_pool *p = algo_calloc(c, 1, sizeof *p);
    if (!p)
        return c->status;
    p->threads = threads;
    p->interrupt = c->interrupt;
    if (threads > 1 &&
        (!(p->workers = algo_alloc(c, (size_t)threads - 1, sizeof *p->workers)) ||
         !(p->starts = algo_alloc(c, (size_t)threads - 1, sizeof *p->starts)))) {
        algo_free(c, p->workers, (size_t)threads - 1, sizeof *p->workers);
        algo_free(c, p, 1, sizeof *p);
        return c->status;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < threads - 1; i++) {
        p->starts[i] = (worker_start){p, i + 1};
        if (pthread_create(&p->workers[i], NULL, worker_main, &p->starts[i]) != 0)
            break;
        p->nworkers++;
    }
    *out = p;
    return ALGO_OK;
}

void algo_pool_free(algo_ctx *c, algo_pool **pp)
{
    algo_pool *p = *pp;
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->quit = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nworkers; i++)
        pthread_join(p->workers[i], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    if (p->workers) {
        algo_free(c, p->workers, (size_t)p->threads - 1, sizeof *p->workers);
        algo_free(c, p->starts, (size_t)p->threads - 1, sizeof *p->starts);
    }
    algo_free(c, p, 1, sizeof *p);
    *pp = NULL;
}

int algo_pool_threads(const algo_pool *p) { return p->nworkers + 1; }

algo_status algo_parallel(algo_ctx *c, size_t nchunks, algo_chunk_fn fn, void *arg)
{
    algo_pool *p = c->pool;
    if (nchunks == 0)
        return algo_check_interrupt(c);
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->arg = arg;
    p->nchunks = nchunks;
    atomic_store(&p->next, 0);
    atomic_store(&p->stopped, false);
    /* a loop of one chunk is not worth waking anyone for */
    bool wake = nchunks > 1 && p->nworkers > 0;
    if (wake) {
        p->running = p->nworkers;
        p->generation++;
        pthread_cond_broadcast(&p->wake);
    }
    pthread_mutex_unlock(&p->lock);
    take_chunks(p, 0);
    pthread_mutex_lock(&p->lock);
    while (wake && p->running > 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    if (atomic_load(&p->stopped))
        return algo_check_interrupt(c);
    return ALGO_OK;
}
