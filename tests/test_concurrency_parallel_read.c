/* Reads on several threads (query/parallel.c) while other threads work:
   views read in parallel from two threads while the writer writes, each
   result exactly its view's; an error in any worker fails the statement
   with the first error in scan order; strata_interrupt and a cancel
   handle stop every worker.  Run under TSan (label concurrency). */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "strata.h"
#include "support/result_text.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

static const char *const queries[] = {
    "MATCH (n:L)-[:T]->(m) RETURN m.k % 10 AS g, count(*), sum(n.x), collect(n.i)[..3], "
    "avg(n.x), min(m.i), count(DISTINCT n.k)",
    "MATCH (n:L) OPTIONAL MATCH (n)-[:T]->(m:L) RETURN DISTINCT n.k AS a, m.k AS b",
    "MATCH (n:L) WHERE n.k <> 3 RETURN n.i, n.x ORDER BY n.x DESC, n.i LIMIT 9",
};

static void build(strata_graph *g)
{
    run(g, "CREATE INDEX FOR (n:L) ON (n.i)");
    run(g, "UNWIND range(0, 5999) AS i CREATE (:L {i: i, k: i % 7, x: (i % 101) * 0.25})");
    run(g, "MATCH (a:L) WITH a, [j IN range(1, 3) | (a.i * 7919 + j * 104729) % 6000] AS ts "
           "UNWIND ts AS t MATCH (b:L) WHERE b.i = t CREATE (a)-[:T]->(b)");
}

static char *text_of(strata_graph *g, strata_view *v, const char *q)
{
    strata_result *r = NULL;
    strata_status st = v ? strata_view_query(v, q, NULL, &r) : strata_query(g, q, NULL, &r);
    return result_text(r, st, true);
}

typedef struct reader {
    strata_view *v;
    char *want[sizeof queries / sizeof *queries];
    int failures;
} reader;

static void *read_views(void *arg)
{
    reader *rd = arg;
    for (int round = 0; round < 2; round++)
        for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
            char *got = text_of(NULL, rd->v, queries[q]);
            rd->failures += strcmp(got, rd->want[q]) != 0;
            free(got);
        }
    return NULL;
}

/* Two views read on three threads each, from two threads, while the
   writer changes the properties and adds relationships: each result is
   its view's, as computed before on one thread. */
static void test_views_while_writing(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    build(g);
    reader rd[2];
    for (int i = 0; i < 2; i++) {
        if (i == 1)
            run(g, "MATCH (n:L) WHERE n.i % 5 = 0 SET n.x = n.x + 1, n.k = n.k + 1");
        assert_int_equal(strata_snapshot(g, &rd[i].v), STRATA_OK);
        rd[i].failures = 0;
        strata_set_query_threads(g, 1);
        for (size_t q = 0; q < sizeof queries / sizeof *queries; q++)
            rd[i].want[q] = text_of(NULL, rd[i].v, queries[q]);
    }
    strata_set_query_threads(g, 3);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, read_views, &rd[i]), 0);
    for (int k = 0; k < 40; k++) {
        char q[160];
        snprintf(q, sizeof q,
                 "MATCH (a:L {i: %d}), (b:L {i: %d}) CREATE (a)-[:T]->(b) SET a.x = 0.5", k * 7,
                 (k * 31) % 6000);
        run(g, q);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(rd[i].failures, 0);
        for (size_t q = 0; q < sizeof queries / sizeof *queries; q++)
            free(rd[i].want[q]);
        strata_view_release(&rd[i].v);
    }
    strata_graph_free(&g);
}

/* Errors met by whichever worker: the first in scan order is the one
   reported, on the graph and on a view, at any thread count. */
static void test_worker_error(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    build(g);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    static const struct {
        const char *q, *want;
    } cases[] = {
        /* a division by zero on one late candidate, a type error later */
        {"MATCH (n:L)-[:T]->(m) RETURN m.k AS g, sum(10 / (n.i - 5000)), "
         "sum(CASE WHEN n.i > 5500 THEN 'x' ELSE 1 END)",
         "error ArgumentError: division by zero"},
        /* failing on the first candidate of every morsel */
        {"MATCH (n:L) RETURN DISTINCT 1 / (n.i % 256) AS d",
         "error ArgumentError: division by zero"},
        {"MATCH (n:L) WITH n WHERE n.i > 300 RETURN n.i ORDER BY n.k / (n.i - 4500) LIMIT 3",
         "error ArgumentError: division by zero"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (unsigned t = 1; t <= 4; t++) {
            strata_set_query_threads(g, t);
            for (int on_view = 0; on_view < 2; on_view++) {
                char *got = text_of(g, on_view ? v : NULL, cases[c].q);
                if (strstr(got, cases[c].want) != got)
                    fail_msg("%s at %u threads: %s", cases[c].q, t, got);
                free(got);
            }
        }
    strata_view_release(&v);
    strata_graph_free(&g);
}

typedef struct stopper {
    strata_graph *g;
    strata_cancel *cancel;
    atomic_bool done;
} stopper;

static void *stop_soon(void *arg)
{
    stopper *s = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    while (!atomic_load(&s->done)) {
        nanosleep(&ts, NULL);
        if (s->g)
            strata_interrupt(s->g);
        else
            strata_cancel_request(s->cancel);
    }
    return NULL;
}

/* A long parallel read is stopped by strata_interrupt (on the graph) and
   by its cancel handle (on a view): every worker stops, the statement
   fails with Interrupted, and the graph reads as before after. */
static void test_interrupt(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    build(g);
    strata_set_query_threads(g, 3);
    const char *q = "MATCH (n:L)-[:T]->(m)-[:T]->(o)-[:T]->(p)-[:T]->(s)-[:T]->()-[:T]->() "
                    "RETURN s.k AS g, count(*), collect(n.i)[..2]";
    for (int on_view = 0; on_view < 2; on_view++) {
        stopper s = {.g = on_view ? NULL : g};
        atomic_init(&s.done, false);
        strata_view *v = NULL;
        if (on_view) {
            assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
            assert_int_equal(strata_cancel_new(&s.cancel), STRATA_OK);
        }
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, stop_soon, &s), 0);
        strata_result *r = NULL;
        strata_status st = v ? strata_view_query_cancellable(v, q, NULL, s.cancel, &r)
                             : strata_query(g, q, NULL, &r);
        char *got = result_text(r, st, true);
        atomic_store(&s.done, true);
        pthread_join(th, NULL);
        if (strstr(got, "error Interrupted") != got)
            fail_msg("%s: %s", on_view ? "cancelled" : "interrupted", got);
        free(got);
        if (v) {
            strata_cancel_free(&s.cancel);
            strata_view_release(&v);
        }
    }
    char *after = text_of(g, NULL, "MATCH (n:L) RETURN count(*), sum(n.k)");
    assert_string_equal(after, "6000|17997|\n");
    free(after);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views_while_writing),
        cmocka_unit_test(test_worker_error),
        cmocka_unit_test(test_interrupt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
