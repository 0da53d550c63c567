/*
 * A logged graph under threads: two writers (idle calls, statements,
 * transactions), a reader taking views, the background sync of sync
 * normal and a checkpoint, all at once; afterwards the reopened graph
 * equals the one closed.  Run under ThreadSanitizer by scripts/test.sh.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strata.h"
#include "persist_support.h"
#include "wal_support.h"

#define ROUNDS 400

typedef struct worker {
    strata_graph *g;
    strata_token key, label;
    int which;
    atomic_int *stop;
} worker;

static void *writer(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < ROUNDS; i++) {
        strata_id n;
        if (strata_node_create(w->g, &w->label, 1, &n) != STRATA_OK)
            return (void *)1;
        strata_value *v = strata_value_int(i);
        strata_status s = strata_node_set(w->g, n, w->key, v);
        strata_value_free(&v);
        if (s != STRATA_OK)
            return (void *)1;
    }
    return NULL;
}

static void *reader(void *arg)
{
    worker *w = arg;
    uint64_t last = 0;
    while (!atomic_load(w->stop)) {
        strata_view *v = NULL;
        if (strata_snapshot(w->g, &v) != STRATA_OK)
            return (void *)1;
        uint64_t n = strata_node_count(v);
        strata_view_release(&v);
        if (n < last)
            return (void *)1;   /* committed writes never go away */
        last = n;
    }
    return NULL;
}

static void *checkpointer(void *arg)
{
    worker *w = arg;
    while (!atomic_load(w->stop)) {
        strata_status s = strata_checkpoint(w->g);
        if (s != STRATA_OK && s != STRATA_EINVAL)
            return (void *)1;
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_graph *g = NULL;
    strata_open_options o = { .sync = STRATA_SYNC_NORMAL };
    wal_open_ok(dir, &o, &g);
    atomic_int stop = 0;
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){ .g = g, .which = i, .stop = &stop };
        assert_int_equal(strata_token_intern(g, STRATA_KEY, "k", &w[i].key), STRATA_OK);
        assert_int_equal(strata_token_intern(g, STRATA_LABEL, "L", &w[i].label), STRATA_OK);
    }
    pthread_t t[4];
    assert_int_equal(pthread_create(&t[0], NULL, writer, &w[0]), 0);
    assert_int_equal(pthread_create(&t[1], NULL, writer, &w[1]), 0);
    assert_int_equal(pthread_create(&t[2], NULL, reader, &w[2]), 0);
    assert_int_equal(pthread_create(&t[3], NULL, checkpointer, &w[3]), 0);
    void *rc;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(t[i], &rc), 0);
        assert_null(rc);
    }
    atomic_store(&stop, 1);
    for (int i = 2; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], &rc), 0);
        assert_null(rc);
    }
    char *before = wal_dump_with_next_ids(g);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_open_ok(dir, NULL, &g);
    char *after = wal_dump_with_next_ids(g);
    wal_assert_same(before, after);
    free(before);
    free(after);
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_node_count(v), 2 * ROUNDS);
    strata_view_release(&v);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
