/*
 * The interner's lock-free readers (storage/intern.h, invariants 3 and 4)
 * while writers add: several threads intern the same names in different
 * orders and must agree on every id; readers looking names up while one
 * writer adds must find every id below the count they saw, and whatever
 * they find must have its name.  The same through the public API:
 * strata_token_lookup on views while the graph interns keys.  Runs under
 * ThreadSanitizer too (label "concurrency"), so a plain load or store on
 * the lock-free path shows up as a race even when the values come out
 * right.
 *
 * Threads never call cmocka's assertions (they longjmp on the calling
 * thread's stack): they count failures, and the main thread checks the
 * counts after joining.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "storage/intern.h"
#include "strata.h"

#define NTHREADS 4
/* Enough names that the table grows nine times (8 slots to 4096) while
   the threads run. */
#define NNAMES 2000

static size_t name_of(uint32_t i, char *buf, size_t size)
{
    return (size_t)snprintf(buf, size, "name-%u", i);
}

/* ---- several threads adding the same names -------------------------------- */

struct adder {
    interner *t;
    uint32_t stride;                /* this thread's order: i * stride mod NNAMES */
    uint32_t ids[NNAMES];           /* the id it got for name i */
    atomic_int *start;
    int bad;
};

static void *add_all(void *p)
{
    struct adder *a = p;
    char buf[32];
    while (!atomic_load(a->start))
        ;
    for (uint32_t k = 0; k < NNAMES; k++) {
        uint32_t i = (uint32_t)(((uint64_t)k * a->stride) % NNAMES);
        size_t len = name_of(i, buf, sizeof buf);
        uint32_t id, found;
        if (intern_add(a->t, buf, len, &id) != 0) {
            a->bad++;
            continue;
        }
        a->ids[i] = id;
        /* What this thread added, it finds, under that id and name. */
        size_t got_len;
        const char *got = intern_name(a->t, id, &got_len);
        if (intern_find(a->t, buf, len, &found) != 0 || found != id || !got ||
            got_len != len || memcmp(got, buf, len) != 0)
            a->bad++;
    }
    return NULL;
}

static void test_threads_add_the_same_names(void **state)
{
    (void)state;
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    interner *t = intern_new(m);
    assert_non_null(t);
    static struct adder adders[NTHREADS];
    atomic_int start;
    atomic_init(&start, 0);
    /* Strides coprime with NNAMES: each thread adds every name once, in
       its own order. */
    const uint32_t strides[NTHREADS] = { 1, 3, 7, 1999 };
    pthread_t th[NTHREADS];
    for (int k = 0; k < NTHREADS; k++) {
        memset(&adders[k], 0, sizeof adders[k]);
        adders[k] = (struct adder){ .t = t, .stride = strides[k], .start = &start };
        assert_int_equal(pthread_create(&th[k], NULL, add_all, &adders[k]), 0);
    }
    atomic_store(&start, 1);
    for (int k = 0; k < NTHREADS; k++)
        assert_int_equal(pthread_join(th[k], NULL), 0);

    assert_int_equal(intern_count(t), NNAMES);
    static bool seen[NNAMES];
    memset(seen, 0, sizeof seen);
    for (uint32_t i = 0; i < NNAMES; i++) {
        uint32_t id = adders[0].ids[i];
        for (int k = 0; k < NTHREADS; k++) {
            assert_int_equal(adders[k].bad, 0);
            assert_int_equal(adders[k].ids[i], id);   /* one id per name */
        }
        assert_true(id < NNAMES);
        assert_false(seen[id]);                       /* dense: each id once */
        seen[id] = true;
    }
    intern_free(&t);
    assert_int_equal(mem_ctx_bytes(m), 0);
    mem_ctx_release(m);
}

/* ---- readers while one writer adds ------------------------------------------ */

struct finder {
    interner *t;
    atomic_int *done;
    uint32_t seed;
    long lookups;
    int bad;
};

static void *find_while_adding(void *p)
{
    struct finder *f = p;
    char buf[32];
    uint32_t x = f->seed;
    for (bool last = false; !last;) {
        last = atomic_load(f->done);
        uint32_t n = intern_count(f->t);
        for (int j = 0; j < 64; j++) {
            x = x * 1103515245u + 12345u;
            /* Names the writer has added (below n) and names it may be
               adding right now or has not reached (up to n + 8). */
            uint32_t i = (x >> 8) % (n + 8);
            size_t len = name_of(i, buf, sizeof buf);
            uint32_t id = UINT32_MAX;
            int rc = intern_find(f->t, buf, len, &id);
            f->lookups++;
            if (i < n && (rc != 0 || id != i)) {
                f->bad++;   /* below the count it saw: must be there */
                continue;
            }
            if (rc == 0) {
                size_t got_len;
                const char *got = intern_name(f->t, id, &got_len);
                if (id != i || !got || got_len != len || memcmp(got, buf, len) != 0)
                    f->bad++;   /* found: must have its name */
            }
        }
    }
    return NULL;
}

static void test_find_while_one_writer_adds(void **state)
{
    (void)state;
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    interner *t = intern_new(m);
    assert_non_null(t);
    atomic_int done;
    atomic_init(&done, 0);
    struct finder finders[NTHREADS - 1];
    pthread_t th[NTHREADS - 1];
    for (int k = 0; k < NTHREADS - 1; k++) {
        finders[k] = (struct finder){ .t = t, .done = &done, .seed = (uint32_t)k + 1 };
        assert_int_equal(pthread_create(&th[k], NULL, find_while_adding, &finders[k]), 0);
    }
    char buf[32];
    int add_failed = 0;
    for (uint32_t i = 0; i < 20 * NNAMES; i++) {
        uint32_t id;
        if (intern_add(t, buf, name_of(i, buf, sizeof buf), &id) != 0 || id != i)
            add_failed++;
    }
    atomic_store(&done, 1);
    for (int k = 0; k < NTHREADS - 1; k++) {
        assert_int_equal(pthread_join(th[k], NULL), 0);
        assert_int_equal(finders[k].bad, 0);
        assert_true(finders[k].lookups > 0);
    }
    assert_int_equal(add_failed, 0);
    intern_free(&t);
    assert_int_equal(mem_ctx_bytes(m), 0);
    mem_ctx_release(m);
}

/* ---- readers do not wait for the writer's mutex ----------------------------- */

struct held {
    interner *t;
    atomic_int finished;   /* the reader thread's lookups returned */
    pthread_t reader;
    bool started;
    int bad;
};

static void *look_up_once(void *p)
{
    struct held *h = p;
    uint32_t id = UINT32_MAX;
    size_t len = 0;
    const char *name = intern_name(h->t, 1, &len);
    if (intern_find(h->t, "beta", 4, &id) != 0 || id != 1 || !name || len != 4 ||
        memcmp(name, "beta", 4) != 0)
        h->bad++;
    if (intern_find(h->t, "gamma", 5, &id) != -1)
        h->bad++;
    atomic_store(&h->finished, 1);
    return NULL;
}

/* While the mutex is held: start a reader and wait (up to 10 s, polling)
   for its lookups to return.  A reader that took the mutex would wait
   until fn returns, and the test fails. */
static void read_while_held(void *p)
{
    struct held *h = p;
    h->started = pthread_create(&h->reader, NULL, look_up_once, h) == 0;
    for (int ms = 0; h->started && ms < 10000 && !atomic_load(&h->finished); ms++)
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
}

static void test_readers_do_not_wait_for_the_writer(void **state)
{
    (void)state;
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    interner *t = intern_new(m);
    assert_non_null(t);
    uint32_t id;
    assert_int_equal(intern_add(t, "alpha", 5, &id), 0);
    assert_int_equal(intern_add(t, "beta", 4, &id), 0);
    struct held h = { .t = t };
    atomic_init(&h.finished, 0);
    intern_hold_writer_lock(t, read_while_held, &h);
    int finished_while_held = atomic_load(&h.finished);
    assert_true(h.started);
    assert_int_equal(pthread_join(h.reader, NULL), 0);
    assert_int_equal(finished_while_held, 1);
    assert_int_equal(h.bad, 0);
    intern_free(&t);
    assert_int_equal(mem_ctx_bytes(m), 0);
    mem_ctx_release(m);
}

/* ---- the public API: token lookups on views while the graph interns ----- */

struct view_reader {
    strata_graph *g;
    atomic_uint *published;   /* keys k0 .. k(published-1) are interned */
    atomic_int *done;
    long lookups;
    int bad;
};

static void *lookup_on_views(void *p)
{
    struct view_reader *r = p;
    char buf[32];
    for (bool last = false; !last;) {
        last = atomic_load(r->done);
        unsigned n = atomic_load(r->published);
        strata_view *v;
        if (strata_snapshot(r->g, &v) != STRATA_OK) {
            r->bad++;
            continue;
        }
        for (unsigned i = 0; i < n + 4; i += 1 + i / 8) {
            snprintf(buf, sizeof buf, "k%u", i);
            strata_token tok;
            strata_status st = strata_token_lookup(v, STRATA_KEY, buf, &tok);
            r->lookups++;
            if (i < n && st != STRATA_OK) {
                r->bad++;
            } else if (st == STRATA_OK) {
                const char *name = NULL;
                if (strata_token_name(v, STRATA_KEY, tok, &name) != STRATA_OK || !name ||
                    strcmp(name, buf) != 0)
                    r->bad++;
            } else if (st != STRATA_ENOTFOUND) {
                r->bad++;
            }
        }
        strata_view_release(&v);
    }
    return NULL;
}

static void test_token_lookup_on_views_while_interning(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    atomic_uint published;
    atomic_int done;
    atomic_init(&published, 0);
    atomic_init(&done, 0);
    struct view_reader readers[NTHREADS - 1];
    pthread_t th[NTHREADS - 1];
    for (int k = 0; k < NTHREADS - 1; k++) {
        readers[k] = (struct view_reader){ .g = g, .published = &published, .done = &done };
        assert_int_equal(pthread_create(&th[k], NULL, lookup_on_views, &readers[k]), 0);
    }
    char buf[32];
    for (unsigned i = 0; i < NNAMES; i++) {
        snprintf(buf, sizeof buf, "k%u", i);
        strata_token tok;
        assert_int_equal(strata_token_intern(g, STRATA_KEY, buf, &tok), STRATA_OK);
        atomic_store(&published, i + 1);
    }
    atomic_store(&done, 1);
    for (int k = 0; k < NTHREADS - 1; k++) {
        assert_int_equal(pthread_join(th[k], NULL), 0);
        assert_int_equal(readers[k].bad, 0);
        assert_true(readers[k].lookups > 0);
    }
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_add_the_same_names),
        cmocka_unit_test(test_find_while_one_writer_adds),
        cmocka_unit_test(test_readers_do_not_wait_for_the_writer),
        cmocka_unit_test(test_token_lookup_on_views_while_interning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
