/* strata_interrupt from another thread stops a query that would otherwise
   run for hours, with the code "Interrupted", and its statement is rolled
   back whole. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "strata.h"

typedef struct interrupter {
    strata_graph *g;
    atomic_bool done;
} interrupter;

/* Keeps asking until the query is over: a request made before the query
   starts is cleared by it, so one call alone could be lost. */
static void *keep_interrupting(void *arg)
{
    interrupter *it = arg;
    struct timespec pause = {0, 5 * 1000 * 1000};
    while (!atomic_load(&it->done)) {
        nanosleep(&pause, NULL);
        strata_interrupt(it->g);
    }
    return NULL;
}

static int64_t count_nodes(strata_graph *g)
{
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    int64_t n = (int64_t)strata_node_count(v);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    strata_view_release(&v);
    return n;
}

static void run_interrupted(strata_graph *g, const char *query)
{
    interrupter it = {.g = g};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, keep_interrupting, &it), 0);
    strata_result *r = NULL;
    /* a statement that only reads is computed as its result is read: the
       interrupt then ends the reading */
    if (strata_query(g, query, NULL, &r) == STRATA_OK)
        while (strata_result_next(r, NULL))
            ;
    atomic_store(&it.done, true);
    pthread_join(t, NULL);
    const strata_query_error *e = strata_result_error(r);
    assert_non_null(e);
    assert_string_equal(e->code, "Interrupted");
    strata_result_free(&r);
}

static void test_interrupt_stops_queries(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r = NULL;
    /* a complete digraph on 12 nodes: its paths are far too many to walk */
    assert_int_equal(strata_query(g, "UNWIND range(1, 12) AS i CREATE (:K {i: i})", NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    assert_int_equal(strata_query(g, "MATCH (a:K), (b:K) WHERE a <> b CREATE (a)-[:E]->(b)",
                                  NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    /* an expansion that produces no rows for a long time */
    run_interrupted(g, "MATCH p = (a:K {i: 1})-[*]->(b) WHERE length(p) > 100 RETURN count(*)");
    /* a long stream of rows */
    run_interrupted(g, "UNWIND range(1, 10000000) AS i UNWIND range(1, 1000) AS j RETURN i, j");
    /* a statement that wrote before it was stopped is rolled back whole */
    run_interrupted(g, "UNWIND range(1, 100) AS i CREATE (:Tmp {i: i}) WITH count(*) AS c "
                       "MATCH p = (a:K {i: 1})-[*]->(b) WHERE length(p) > 100 RETURN c");
    assert_int_equal(count_nodes(g), 12);
    /* the next query runs normally */
    assert_int_equal(strata_query(g, "MATCH (n) RETURN count(n)", NULL, &r), STRATA_OK);
    strata_result_free(&r);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interrupt_stops_queries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
