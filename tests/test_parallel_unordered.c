/* A parallel grouping aggregation or DISTINCT whose workers each keep
   one state across their morsels (query/parallel.c,
   aggregate_partial_gather, distinct_partial_gather),
   against one thread and against the pipeline kept off the parallel path
   (`WITH 1 AS one` in front): many groups, groups met first in late
   morsels, float sums that cancel, collect() and percentiles in scan
   order, min and max of equal values of two types, the percentile
   argument of the last row; integer sums near the int64 limits, which
   take the rows again in order; DISTINCT's first rows, and a LIMIT after
   it still ending the scan early; errors in late morsels; and every
   allocation failing in turn.  Results compare as text, floats bit for
   bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/graph_impl.h"
#include "query/parallel.h"
#include "query/plan_cache.h"
#include "storage/mem.h"
#include "strata.h"
#include "support/result_text.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

static char *text_of(strata_graph *g, const char *q)
{
    strata_result *r = NULL;
    strata_status st = strata_query(g, q, NULL, &r);
    return result_text(r, st, true);
}

static bool runs_parallel(strata_graph *g, const char *q)
{
    char explain[2048];
    snprintf(explain, sizeof explain, "EXPLAIN %s", q);
    char *t = text_of(g, explain);
    bool yes = strstr(t, "Parallel (") != NULL;
    free(t);
    return yes;
}

/* 12,000 :L nodes (47 morsels): x with many significant bits, c that
   cancels (1e16 and -1e16 far apart), t 1 or 1.0 by stretches, and some
   :T relationships to :M nodes for OPTIONAL MATCH. */
static strata_graph *build(void)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(0, 11999) AS i CREATE (:L {i: i, "
           "x: CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END * (i * 0.1 + i * 1e-7 + 1.0 / (i + 3)), "
           "c: CASE i % 4 WHEN 0 THEN 1e16 WHEN 1 THEN 1.0 + i * 1e-3 WHEN 2 THEN -1e16 "
           "ELSE 0.3 END, "
           "t: CASE WHEN (i / 700) % 2 = 0 THEN 1 ELSE 1.0 END, "
           "s: ['ash', 'birch', 'cedar'][i % 3]})");
    run(g, "UNWIND range(0, 99) AS i CREATE (:M {i: i})");
    run(g, "MATCH (a:L) WHERE a.i % 7 = 0 MATCH (m:M {i: a.i % 100}) CREATE (a)-[:T]->(m)");
    return g;
}

/* q at 1, 2 and 5 threads and kept off the parallel path: one text. */
static void check_same(strata_graph *g, const char *q, const char *want)
{
    if (!runs_parallel(g, q))
        fail_msg("%s: not run in parallel", q);
    char serial[2048];
    snprintf(serial, sizeof serial, "WITH 1 AS one %s", q);
    assert_false(runs_parallel(g, serial));
    strata_set_query_threads(g, 1);
    char *one = text_of(g, serial);
    if (want && strcmp(one, want) != 0)
        fail_msg("%s:\n%s\nnot\n%s", q, one, want);
    static const unsigned threads[] = {1, 2, 5};
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        strata_set_query_threads(g, threads[t]);
        char *got = text_of(g, q);
        if (strcmp(got, one) != 0)
            fail_msg("%s\nat %u threads:\n%s\noff the parallel path:\n%s", q, threads[t], got, one);
        free(got);
    }
    free(one);
}

static void test_same_results(void **state)
{
    (void)state;
    strata_graph *g = build();
    static const char *const queries[] = {
        /* many groups, every kind of aggregate but DISTINCT */
        "MATCH (n:L) RETURN n.i % 5000 AS g, count(*), sum(n.x), avg(n.c), collect(n.i), "
        "min(n.t), max(n.t), stDev(n.x), stDevP(n.c), "
        "percentileCont(n.x, CASE WHEN n.i < 6000 THEN 0.2 ELSE 0.9 END), "
        "percentileDisc(n.t, 0.5), min(n.s), sum(n.i)",
        /* groups met first only in the last morsels */
        "MATCH (n:L) RETURN CASE WHEN n.i >= 11000 THEN n.i ELSE n.i % 3 END AS g, "
        "count(*), sum(n.c), collect(n.i)[..3]",
        /* few groups, cancelling sums, every worker meeting every group */
        "MATCH (n:L) RETURN n.i % 2 AS g, sum(n.c), avg(n.c), sum(n.x), stDev(n.c)",
        "MATCH (n:L) RETURN sum(n.c), avg(n.x), min(n.t), max(n.t), count(n.t)",
        /* an expansion, rows without a match */
        "MATCH (n:L) OPTIONAL MATCH (n)-[:T]->(m) RETURN m.i % 10 AS g, count(m), "
        "collect(n.i)[-3..], sum(n.x)",
    };
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++)
        check_same(g, queries[q], NULL);
    strata_graph_free(&g);
}

/* What the answers must be, not only that they agree. */
static void test_known_answers(void **state)
{
    (void)state;
    strata_graph *g = build();
    /* 1e16 + 1.0 - 1e16 from three far-apart morsels: exactly 1.0 (a
       running sum of doubles loses the 1.0) */
    check_same(g, "MATCH (n:L) RETURN sum(CASE n.i WHEN 0 THEN 1e16 WHEN 5000 THEN 1.0 "
                  "WHEN 11000 THEN -1e16 ELSE 0.0 END) = 1.0",
               "true|\n");
    /* collect() in scan order in every group */
    check_same(g, "MATCH (n:L) WITH n.i % 3 AS g, collect(n.i) AS c "
                  "RETURN g, c = [k IN range(0, 11999) WHERE k % 3 = g]",
               "0|true|\n1|true|\n2|true|\n");
    /* the first of equal values: the integer 1, met first */
    check_same(g, "MATCH (n:L) RETURN min(n.t), max(n.t)", "1|1|\n");
    /* a group's key and first row: the first row's, though 1.0 groups
       with 1 and more workers meet 1.0 first */
    check_same(g, "MATCH (n:L) WHERE n.i >= 600 RETURN n.t AS k, n.t + count(*) AS h",
               "1|11401|\n");
    /* the percentile argument of the last row */
    check_same(g, "MATCH (n:L) RETURN percentileDisc(n.i, CASE WHEN n.i < 11990 THEN 0.0 "
                  "ELSE 1.0 END)",
               "11999|\n");
    /* 1e9 + 0, 1, 2 evenly: the deviation of {0, 1, 2}, exactly */
    check_same(g, "MATCH (n:L) RETURN stDevP(1e9 + n.i % 3) = sqrt(2.0 / 3)", "true|\n");
    strata_graph_free(&g);
}

/* DISTINCT kept per worker: the first row of each set in scan order,
   whatever worker met it; sets met first in late morsels. */
static void test_distinct(void **state)
{
    (void)state;
    strata_graph *g = build();
    check_same(g, "MATCH (n:L) RETURN DISTINCT n.i % 5000 AS k, n.s AS s", NULL);
    check_same(g, "MATCH (n:L) RETURN DISTINCT CASE WHEN n.i >= 11000 THEN n.i "
                  "ELSE n.i % 3 END AS k",
               NULL);
    check_same(g, "MATCH (n:L) OPTIONAL MATCH (n)-[:T]->(m) RETURN DISTINCT m.i % 10 AS k, n.s",
               NULL);
    /* 1.0 is the same as 1, and the row kept is the first in scan order
       (the integer), though more workers meet 1.0 first */
    check_same(g, "MATCH (n:L) WHERE n.i >= 600 WITH DISTINCT n.t AS t, n.i % 2 AS p "
                  "RETURN t, p",
               "1|0|\n1|1|\n");
    /* WITH DISTINCT's WHERE reads the first row of each set */
    check_same(g, "MATCH (n:L) WITH DISTINCT n.i % 10 AS k WHERE n.i < 5 RETURN k",
               "0|\n1|\n2|\n3|\n4|\n");
    /* a LIMIT behind ORDER BY waits for every row anyway */
    check_same(g, "MATCH (n:L) RETURN DISTINCT n.i % 97 AS k ORDER BY k DESC LIMIT 3",
               "96|\n95|\n94|\n");
    strata_graph_free(&g);
}

/* The rows the scan gave (PROFILE's first step). */
static long scanned(strata_graph *g, const char *q)
{
    char profiled[2048];
    snprintf(profiled, sizeof profiled, "PROFILE %s", q);
    char *t = text_of(g, profiled);
    const char *f = t;
    for (int field = 0; field < 4 && f; field++)
        f = strchr(f, '|') ? strchr(f, '|') + 1 : NULL;
    long rows = f ? strtol(f, NULL, 10) : -1;
    free(t);
    return rows;
}

/* A LIMIT after DISTINCT ends the scan at the first morsels, as on one
   thread: those states are merged morsel by morsel, in order.  One
   thread reads one morsel; more may have read ahead of the merge, by at
   most PARALLEL_AHEAD morsels each (as many when the head morsel's
   worker is descheduled). */
static void test_distinct_limit(void **state)
{
    (void)state;
    strata_graph *g = build();
    static const char *const cut[] = {
        "MATCH (n:L) RETURN DISTINCT n.s LIMIT 2",
        "MATCH (n:L) WITH DISTINCT n.s AS s RETURN s LIMIT 2",
        "MATCH (n:L) WITH DISTINCT n.s AS s WITH s WHERE s <> 'ash' RETURN s LIMIT 1",
    };
    for (size_t q = 0; q < sizeof cut / sizeof *cut; q++) {
        check_same(g, cut[q], NULL);
        for (unsigned t = 1; t <= 2; t++) {
            strata_set_query_threads(g, t);
            long rows = scanned(g, cut[q]);
            long most = t == 1 ? PARALLEL_MORSEL : (long)t * PARALLEL_AHEAD * PARALLEL_MORSEL;
            if (rows <= 0 || rows > most)
                fail_msg("%s at %u threads: %ld rows scanned", cut[q], t, rows);
        }
    }
    assert_int_equal(scanned(g, "MATCH (n:L) RETURN DISTINCT n.s"), 12000);
    strata_graph_free(&g);
}

/* Integer sums whose integers' totals pass the int64 limits are taken
   again in order: an overflow only where a running sum overflows. */
static void test_integer_limits(void **state)
{
    (void)state;
    strata_graph *g = build();
    check_same(g, "MATCH (n:L) RETURN sum(CASE n.i WHEN 10 THEN 9223372036854775807 "
                  "WHEN 11000 THEN -9223372036854775807 WHEN 11001 THEN 5 ELSE 0 END)",
               "5|\n");
    check_same(g, "MATCH (n:L) RETURN n.i % 2 AS g, sum(CASE WHEN n.i < 2 THEN "
                  "9223372036854775807 WHEN n.i > 11997 THEN -9223372036854775807 ELSE 0 END)",
               "0|0|\n1|0|\n");
    check_same(g, "MATCH (n:L) RETURN sum(CASE n.i WHEN 10 THEN 9223372036854775807 "
                  "WHEN 11000 THEN 1 ELSE 0 END)",
               "error ArgumentError: integer overflow in sum()");
    /* a float before the second large integer: no integer overflow */
    check_same(g, "MATCH (n:L) RETURN sum(CASE n.i WHEN 10 THEN 9223372036854775807 "
                  "WHEN 20 THEN 0.5 WHEN 11000 THEN 9223372036854775807 ELSE 0 END) > 1e19",
               "true|\n");
    strata_graph_free(&g);
}

/* An error in a late morsel: the one the rows in order give. */
static void test_errors(void **state)
{
    (void)state;
    strata_graph *g = build();
    static const struct {
        const char *q, *want;
    } cases[] = {
        {"MATCH (n:L) RETURN n.i % 2, count(*), sum(n.x), 10 / (n.i - 11500)",
         "error ArgumentError: division by zero"},
        {"MATCH (n:L) RETURN n.i % 7, sum(CASE WHEN n.i = 11700 THEN 'a' ELSE n.x END)",
         "error TypeError: sum() expects numbers, not String"},
        {"MATCH (n:L) RETURN sum(CASE n.i WHEN 10 THEN 9223372036854775807 WHEN 300 THEN 1 "
         "WHEN 11000 THEN 'x' ELSE 0 END)",
         "error ArgumentError: integer overflow in sum()"},
        {"MATCH (n:L) RETURN DISTINCT n.i % 3, 10 / (n.i - 11500)",
         "error ArgumentError: division by zero"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        assert_true(runs_parallel(g, cases[c].q));
        for (unsigned t = 1; t <= 5; t += 2) {
            strata_set_query_threads(g, t);
            char *got = text_of(g, cases[c].q);
            if (strstr(got, cases[c].want) != got)
                fail_msg("%s at %u threads: %s, not %s", cases[c].q, t, got, cases[c].want);
            free(got);
        }
    }
    strata_graph_free(&g);
}

/* Every allocation fails in turn (one thread: in a fixed order; two:
   every 13th, for leaks): an OutOfMemory error that leaks nothing, then
   the whole answer. */
static void test_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(0, 4399) AS i CREATE (:L {i: i, k: i % 5, x: i * 0.37, "
           "s: ['a', 'b'][i % 2]})");
    run(g, "MATCH (a:L) WHERE a.i % 50 = 0 MATCH (b:L {i: (a.i * 7) % 4400}) "
           "CREATE (a)-[:T]->(b)");
    const char *q = "MATCH (n:L) OPTIONAL MATCH (n)-[:T]->(m) RETURN n.i % 300 AS g, count(*), "
                    "sum(n.x), collect(m.i), stDev(n.x), percentileDisc(n.i, 0.5), min(n.s), "
                    "avg(n.x), sum(n.k)";
    assert_true(runs_parallel(g, q));
    for (unsigned threads = 1; threads <= 2; threads++) {
        strata_set_query_threads(g, threads);
        char *want = text_of(g, q);
        plan_cache_clear(plan_cache_for(g->current->cat));
        size_t base = mem_ctx_bytes(mem_scratch());
        long step = threads == 1 ? 1 : 13;
        for (long k = 1;; k += step) {
            strata_result *r = NULL;
            mem_fail_at(k);
            strata_status st = strata_query(g, q, NULL, &r);
            char *got = result_text(r, st, true);
            bool failed = mem_fail_count() >= k;
            mem_fail_clear();
            plan_cache_clear(plan_cache_for(g->current->cat));
            if (mem_ctx_bytes(mem_scratch()) != base)
                fail_msg("%zu bytes leaked with allocation %ld failing",
                         mem_ctx_bytes(mem_scratch()) - base, k);
            if (!failed) {
                assert_string_equal(got, want);
                free(got);
                break;
            }
            /* rows stream: the error may follow the first of them */
            if (st != STRATA_ENOMEM && !strstr(got, "error OutOfMemory"))
                fail_msg("%u threads, allocation %ld failing: %s", threads, k, got);
            free(got);
        }
        free(want);
    }
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_results),   cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_distinct),       cmocka_unit_test(test_distinct_limit),
        cmocka_unit_test(test_integer_limits), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
