/* The plan cache shared by a graph's readers: threads run more distinct
   statements than the cache holds, on views of one graph, each keeping
   its previous result (and so its plan) while it runs the next, so plans
   are evicted while other threads still hold them and references are
   given back on one thread while another takes one under the lock.
   Every lookup must still find its row; TSan (the concurrency label)
   checks the reference counting. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "strata.h"

#define THREADS 4
#define ROUNDS 700
#define TEXTS 400   /* more than the cache's 256 entries */
#define NODES 100

typedef struct reader {
    strata_view *view;
    unsigned seed;
    int failures;
} reader;

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

/* Runs lookups by statements chosen at random among TEXTS texts that
   differ only in a column alias, holding each result until the next. */
static void *read_loop(void *arg)
{
    reader *rd = arg;
    const char *names[] = { "k" };
    strata_result *held = NULL;
    for (int i = 0; i < ROUNDS; i++) {
        rd->seed = rd->seed * 1103515245u + 12345u;
        unsigned text = (rd->seed >> 8) % TEXTS, key = (rd->seed >> 4) % NODES;
        char q[96];
        snprintf(q, sizeof q, "MATCH (n:Item {key: $k}) RETURN n.key AS c%u", text);
        strata_value *k = strata_value_int(key);
        const strata_value *vals[] = { k };
        strata_value *params = strata_value_map(names, vals, 1);
        strata_result *r = NULL;
        const strata_value *const *row;
        int64_t got = -1;
        if (strata_view_query(rd->view, q, params, &r) != STRATA_OK ||
            !strata_result_next(r, &row) || strata_value_get_int(row[0], &got) != STRATA_OK ||
            got != (int64_t)key)
            rd->failures++;
        strata_result_free(&held);
        held = r;
        strata_value_free(&params);
        strata_value_free(&k);
    }
    strata_result_free(&held);
    return NULL;
}

static void readers_share_and_evict_plans(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    char q[96];
    snprintf(q, sizeof q, "UNWIND range(0, %d) AS i CREATE (:Item {key: i})", NODES - 1);
    run(g, q);
    run(g, "CREATE CONSTRAINT FOR (n:Item) REQUIRE n.key IS UNIQUE");
    reader rd[THREADS];
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        rd[t] = (reader){.seed = 7u + (unsigned)t * 7919u};
        assert_int_equal(strata_snapshot(g, &rd[t].view), STRATA_OK);
    }
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, read_loop, &rd[t]), 0);
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(rd[t].failures, 0);
        strata_view_release(&rd[t].view);
    }
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(readers_share_and_evict_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
