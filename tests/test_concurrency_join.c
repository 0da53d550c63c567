/* Counting on several threads (query/op_join.c): a count whose join
   starts from many candidates is split over the graph's query threads;
   every count must equal the one-thread count exactly, on the graph and
   on views read from other threads while the writer writes, and an error
   in any worker fails the statement with that error.  Run under TSan
   (label concurrency). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "strata.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

static int64_t count_on(strata_result *r, strata_status st, const char *q)
{
    if (st != STRATA_OK)
        fail_msg("%s: %s", q, strata_result_error(r)->message);
    const strata_value *const *row;
    int64_t v = -1;
    if (strata_result_next(r, &row))
        strata_value_get_int(row[0], &v);
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    return v;
}

static int64_t count(strata_graph *g, const char *q)
{
    strata_result *r = NULL;
    strata_status st = strata_query(g, q, NULL, &r);
    return count_on(r, st, q);
}

static const char *const queries[] = {
    "MATCH (a:P)-[:K]-(b:P)-[:K]-(c:P)-[:I]->(:T) WHERE a <> c RETURN count(*)",
    "MATCH (a:P)-[:K]->(b:P)-[:K]->(c:P)-[:K]->(a) RETURN count(*)",
    "MATCH (a:P)-[:K]->(b)-[:I]->(t:T) WHERE NOT (a)-[:I]->(t) RETURN count(*)",
    "MATCH (a:P)-[:K]->(b:P) MATCH (b)-[:K]->(c:P) WHERE a.k < c.k RETURN count(*)",
    "MATCH (t1:T)<-[:I]-(a:P)-[:K]->(b:P)-[:I]->(t2:T) WHERE t1 <> t2 RETURN count(*)",
};

static void build(strata_graph *g)
{
    run(g, "CREATE INDEX FOR (n:P) ON (n.i)");
    run(g, "UNWIND range(0, 5999) AS i CREATE (:P {i: i, k: i % 7})");
    run(g, "UNWIND range(0, 99) AS i CREATE (:T {i: i})");
    run(g, "MATCH (a:P) WITH a, [x IN range(1, 4) | (a.i * 7919 + x * 104729) % 6000] AS ts "
           "UNWIND ts AS t MATCH (b:P {i: t}) CREATE (a)-[:K]->(b)");
    run(g, "MATCH (a:P) WHERE a.i % 3 = 0 WITH a MATCH (t:T) WHERE t.i % 17 = a.i % 17 "
           "CREATE (a)-[:I]->(t)");
}

static void test_parallel_equals_one_thread(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    build(g);
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        strata_set_query_threads(g, 1);
        int64_t one = count(g, queries[q]);
        assert_true(one > 0);
        for (unsigned t = 2; t <= 5; t += 3) {
            strata_set_query_threads(g, t);
            assert_int_equal(count(g, queries[q]), one);
        }
    }
    strata_graph_free(&g);
}

typedef struct reader {
    strata_view *v;
    int64_t want[sizeof queries / sizeof *queries];
    int failures;
} reader;

static void *read_counts(void *arg)
{
    reader *rd = arg;
    for (int round = 0; round < 3; round++)
        for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
            strata_result *r = NULL;
            strata_status st = strata_view_query(rd->v, queries[q], NULL, &r);
            rd->failures += count_on(r, st, queries[q]) != rd->want[q];
        }
    return NULL;
}

/* Views counted on several threads each, from two threads, while the
   writer adds relationships: each count is its view's. */
static void test_views_while_writing(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    build(g);
    strata_set_query_threads(g, 3);
    reader rd[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(strata_snapshot(g, &rd[i].v), STRATA_OK);
        rd[i].failures = 0;
        for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
            strata_result *r = NULL;
            strata_status st = strata_view_query(rd[i].v, queries[q], NULL, &r);
            rd[i].want[q] = count_on(r, st, queries[q]);
        }
    }
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, read_counts, &rd[i]), 0);
    for (int k = 0; k < 50; k++) {
        char q[128];
        snprintf(q, sizeof q, "MATCH (a:P {i: %d}), (b:P {i: %d}) CREATE (a)-[:K]->(b)", k,
                 (k * 31) % 6000);
        run(g, q);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(rd[i].failures, 0);
        strata_view_release(&rd[i].v);
    }
    strata_graph_free(&g);
}

/* A division by zero on some candidates, met by whichever worker takes
   them: the statement fails with it. */
static void test_worker_error(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    build(g);
    strata_set_query_threads(g, 4);
    const char *q = "MATCH (a:P)-[:K]->(b:P)-[:K]->(c:P)-[:K]->(a) "
                    "WHERE 10 / (a.i - 4321) > -100 RETURN count(*)";
    strata_result *r = NULL;
    strata_status st = strata_query(g, q, NULL, &r);
    const strata_query_error *e = strata_result_error(r);
    if (st == STRATA_OK) {
        /* no triangle through node 4321: the error never comes up */
        assert_null(e);
    } else {
        assert_non_null(e);
        assert_string_equal(e->code, "ArgumentError");
    }
    strata_result_free(&r);
    /* a conjunct failing on the first candidate of every morsel */
    r = NULL;
    assert_int_not_equal(strata_query(g, "MATCH (a:P)-[:K]->(b:P)-[:K]->(c:P) "
                                         "WHERE 1 / (a.i % 256) >= 0 RETURN count(*)", NULL, &r),
                         STRATA_OK);
    assert_string_equal(strata_result_error(r)->code, "ArgumentError");
    strata_result_free(&r);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_equals_one_thread),
        cmocka_unit_test(test_views_while_writing),
        cmocka_unit_test(test_worker_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
