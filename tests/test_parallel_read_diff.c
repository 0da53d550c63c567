/* Reads on several threads (query/parallel.c) against one thread: random
   graphs and random read queries of the shapes that run in parallel — a
   scan, per-row expansion, WHERE, OPTIONAL MATCH, UNWIND and WITH, ending
   in a grouping aggregate of every function, a DISTINCT or an ORDER BY
   ... LIMIT — each run at 1, 2 and 5 threads on the graph and on a held
   view, whose results must be identical text (floats bit for bit, rows in
   order).  Each is also run with `WITH 1 AS one` in front, which keeps
   the pipeline off the parallel path: the same rows in the same order,
   floats bit for bit too (sums, averages and deviations are exact sums
   rounded once, whatever the order).  The parallel path must have been
   taken (EXPLAIN). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/graph_impl.h"
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

static uint64_t rng_state;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng_state >> 33) % n);
}

/* About 5,000 :L nodes (past the parallel bound) with integers, floats of
   few significant bits (sums exact in any order), strings and nulls, some
   :M nodes, and :T relationships with a random fan-out. */
static void build(strata_graph *g, unsigned seed)
{
    char q[1024];
    int n = 4400 + (int)(seed % 7) * 150;
    run(g, "CREATE INDEX FOR (n:L) ON (n.i)");
    snprintf(q, sizeof q,
             "UNWIND range(0, %d) AS i CREATE (:L {i: i, "
             "k: CASE WHEN (i * 7919 + %u) %% 11 = 0 THEN null ELSE (i * 31 + %u) %% 10 END, "
             "x: CASE WHEN (i * 104729 + %u) %% 13 = 0 THEN null "
             "WHEN i %% 5 = 0 THEN (i * 17 + %u) %% 40 - 20 "
             "ELSE ((i * 29 + %u) %% 400 - 200) * 0.25 END, "
             "s: CASE WHEN i %% 9 = 4 THEN null ELSE ['ash', 'birch', 'cedar', 'date', 'elm'][(i + %u) %% 5] END})",
             n - 1, seed, seed, seed, seed, seed, seed);
    run(g, q);
    snprintf(q, sizeof q, "UNWIND range(0, 199) AS i CREATE (:M {i: i, k: (i * 13 + %u) %% 7})",
             seed);
    run(g, q);
    snprintf(q, sizeof q,
             "MATCH (a:L) UNWIND range(1, (a.i * 7 + %u) %% 4) AS j "
             "MATCH (b:L {i: (a.i * j * 7919 + %u) %% %d}) CREATE (a)-[:T {w: j}]->(b)",
             seed, seed, n);
    run(g, q);
    snprintf(q, sizeof q,
             "MATCH (a:L) WHERE (a.i + %u) %% 6 = 0 MATCH (m:M {i: (a.i * 3 + %u) %% 200}) "
             "CREATE (a)-[:T {w: 0}]->(m)",
             seed, seed);
    run(g, q);
}

static const char *const patterns[] = {
    "MATCH (n:L)",
    "MATCH (n:L)-[r:T]->(m)",
    "MATCH (n:L) OPTIONAL MATCH (n)-[r:T]->(m)",
    "MATCH (n:L) WHERE n.k > 2 WITH n, n.i % 5 AS z MATCH (n)<-[r:T]-(m)",
    "MATCH (n:L) UNWIND [1, 2] AS u WITH n, u WHERE u + coalesce(n.k, 0) > 3 "
    "OPTIONAL MATCH (n)-[r:T]->(m:L)",
    "MATCH (n:L)-[r:T]->(m)-[:T]->(o)",
    "MATCH (n:L) WHERE n.i >= 100 MATCH (n)-[r:T]-(m)",
    "MATCH (n:L) WHERE n.i >= 50",
};
/* the patterns that seek a range: estimated a third of the index, below
   the parallel bound on these graphs (test_index_range has a larger one) */
static bool seeks_range(size_t p) { return p >= 6; }
/* the patterns that bind m and r */
static bool binds_m(size_t p) { return p != 0 && p != 7; }

static const char *const aggregates[] = {
    "count(*)", "count(n.k)", "sum(n.k)", "sum(n.x)", "avg(n.x)", "min(n.s)", "max(n.x)",
    "collect(n.i)", "collect(n.x)", "count(DISTINCT n.k)", "sum(DISTINCT n.x)",
    "collect(DISTINCT n.s)", "stDev(n.x)", "stDevP(n.k)", "percentileCont(n.x, 0.3)",
    "percentileDisc(n.k, 0.7)", "min(n.x)", "max(n.s)", "avg(n.k)", "sum(n.i * 1.5)",
};
static const char *const aggregates_m[] = {
    "count(m)", "collect(m.i)", "sum(r.w)", "max(m.k)", "count(DISTINCT m)", "avg(r.w * 0.5)",
};
static const char *const keys[] = {"n.k", "n.s", "n.k % 3", "n.x > 0", "size(n.s)"};
static const char *const keys_m[] = {"m.k", "r.w", "labels(m)[0]"};

static void add(char *q, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *q, size_t size, const char *fmt, ...)
{
    size_t used = strlen(q);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q + used, size - used, fmt, ap);
    va_end(ap);
}

/* A random query of a parallel shape. */
static size_t make_query(char *q, size_t size)
{
    size_t p = rnd(sizeof patterns / sizeof *patterns);
    bool m = binds_m(p);
    snprintf(q, size, "%s ", patterns[p]);
    switch (rnd(5)) {
    case 0:
    case 1: {   /* grouping */
        add(q, size, "RETURN ");
        unsigned nkeys = rnd(3);
        for (unsigned k = 0; k < nkeys; k++) {
            if (m && rnd(2))
                add(q, size, "%s AS g%u, ", keys_m[rnd(3)], k);
            else
                add(q, size, "%s AS g%u, ", keys[rnd(5)], k);
        }
        unsigned naggs = 1 + rnd(4);
        for (unsigned a = 0; a < naggs; a++) {
            if (m && rnd(3) == 0)
                add(q, size, "%s%s AS a%u", a ? ", " : "", aggregates_m[rnd(6)], a);
            else
                add(q, size, "%s%s AS a%u", a ? ", " : "",
                    aggregates[rnd(sizeof aggregates / sizeof *aggregates)], a);
        }
        if (rnd(3) == 0 && nkeys)
            add(q, size, " ORDER BY g0 DESC LIMIT %u", 1 + rnd(5));
        break;
    }
    case 2:     /* DISTINCT */
        add(q, size, "RETURN DISTINCT %s AS a, %s AS b", keys[rnd(5)],
            m ? keys_m[rnd(3)] : keys[rnd(5)]);
        if (rnd(2))
            add(q, size, " ORDER BY a, b LIMIT %u", 1 + rnd(20));
        break;
    case 3:     /* ORDER BY ... LIMIT, with ties */
        add(q, size, "RETURN n.i AS i, n.x AS x%s ORDER BY %s%s LIMIT %u",
            m ? ", m.i AS mi" : "", rnd(2) ? "n.k, " : "", rnd(2) ? "n.x DESC" : "n.s",
            1 + rnd(30));
        if (rnd(2))
            add(q, size, " ");
        break;
    default:    /* aggregation, then more stages */
        add(q, size, "WITH %s AS g, count(*) AS c, collect(n.i)[..4] AS f, sum(n.x) AS s "
                     "WHERE c > 1 RETURN g, c, f, s ORDER BY c DESC, g LIMIT 6",
            keys[rnd(5)]);
        break;
    }
    return p;
}

static char *text_on(strata_graph *g, strata_view *v, const char *q, bool exact)
{
    strata_result *r = NULL;
    strata_status st = v ? strata_view_query(v, q, NULL, &r) : strata_query(g, q, NULL, &r);
    return result_text(r, st, exact);
}

static bool runs_parallel(strata_graph *g, const char *q)
{
    size_t size = strlen(q) + 16;
    char *explain = malloc(size);
    assert_non_null(explain);
    snprintf(explain, size, "EXPLAIN %s", q);
    char *t = text_on(g, NULL, explain, true);
    free(explain);
    bool yes = strstr(t, "Parallel (") != NULL;
    free(t);
    return yes;
}

static void check_query(strata_graph *g, strata_view *v, const char *q, size_t *parallel,
                        bool want_parallel)
{
    strata_set_query_threads(g, 1);
    char *one = text_on(g, NULL, q, true);
    if (strncmp(one, "error", 5) == 0)
        fail_msg("%s: %s", q, one);
    static const unsigned threads[] = {1, 2, 5};
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        strata_set_query_threads(g, threads[t]);
        for (int on_view = 0; on_view < 2; on_view++) {
            char *got = text_on(g, on_view ? v : NULL, q, true);
            if (strcmp(got, one) != 0)
                fail_msg("%s\nat %u threads%s:\n%s\none thread:\n%s", q, threads[t],
                         on_view ? " on a view" : "", got, one);
            free(got);
        }
    }
    free(one);
    /* the pipeline kept on one thread: the same rows, in the same order */
    size_t size = strlen(q) + 16;
    char *serial = malloc(size);
    assert_non_null(serial);
    snprintf(serial, size, "WITH 1 AS one %s", q);
    strata_set_query_threads(g, 2);
    char *want = text_on(g, NULL, serial, true);
    char *got = text_on(g, NULL, q, true);
    if (strcmp(got, want) != 0)
        fail_msg("%s\nin parallel:\n%s\non one thread:\n%s", q, got, want);
    free(want);
    free(got);
    assert_false(runs_parallel(g, serial));
    free(serial);
    bool par = runs_parallel(g, q);
    if (!par && want_parallel)
        fail_msg("%s: not run in parallel", q);
    *parallel += par;
}

static void test_random_queries(void **state)
{
    (void)state;
    const char *env = getenv("STRATA_PARALLEL_SEEDS");
    unsigned seeds = env ? (unsigned)atoi(env) : 3;
    size_t parallel = 0, total = 0;
    for (unsigned seed = 1; seed <= seeds; seed++) {
        strata_graph *g;
        assert_int_equal(strata_graph_new(&g), STRATA_OK);
        build(g, seed);
        strata_view *v;
        assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
        rng_state = seed * 0x9E3779B97F4A7C15ULL;
        for (int i = 0; i < 40; i++, total++) {
            char q[4096];
            size_t p = make_query(q, sizeof q);
            check_query(g, v, q, &parallel, !seeks_range(p));
        }
        strata_view_release(&v);
        strata_graph_free(&g);
    }
    /* every shape but the range seeks was checked to run in parallel */
    assert_true(parallel > 0 && parallel <= total);
}

/* Rows in the order one thread defines: collect() in scan order, groups
   in order of first appearance, DISTINCT's first rows, Top's ties in
   input order. */
static void test_orders(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    build(g, 11);
    size_t parallel = 0;
    static const char *const queries[] = {
        "MATCH (n:L) RETURN n.i % 7 AS g, collect(n.i) AS c",
        "MATCH (n:L) RETURN collect(n.i) AS c",
        "MATCH (n:L) RETURN DISTINCT n.k AS k, n.s AS s",
        "MATCH (n:L) RETURN n.i ORDER BY n.k LIMIT 600",
        "MATCH (n:L)-[:T]->(m) RETURN m.i % 13 AS g, count(*), sum(n.x), collect(n.i)[..3]",
    };
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++)
        check_query(g, NULL, queries[q], &parallel, true);
    assert_int_equal(parallel, sizeof queries / sizeof *queries);
    /* collect() in scan order is every node in id order */
    strata_set_query_threads(g, 5);
    char *got = text_on(g, NULL, "MATCH (n:L) RETURN collect(n.i) = range(0, count(*) - 1)", true);
    assert_string_equal(got, "true|\n");
    free(got);
    strata_graph_free(&g);
}

/* Errors: the first in scan order, whatever the threads: a type error in
   a late morsel, an integer overflow found only by merging two morsels'
   sums, one found inside a morsel, and a sum whose morsel overflows alone
   but whose running sum never does. */
static void test_errors(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(0, 4999) AS i CREATE (:L {i: i})");
    static const struct {
        const char *q, *want;
    } cases[] = {
        {"MATCH (n:L) RETURN n.i % 3 AS g, sum(CASE WHEN n.i = 4700 THEN 'a' "
         "WHEN n.i = 4900 THEN [] ELSE 1 END)",
         "error TypeError: sum() expects numbers, not String"},
        {"MATCH (n:L) RETURN sum(CASE n.i WHEN 10 THEN 9223372036854775807 WHEN 300 THEN 1 "
         "WHEN 4000 THEN 'x' ELSE 0 END)",
         "error ArgumentError: integer overflow in sum()"},
        {"MATCH (n:L) RETURN sum(CASE n.i WHEN 10 THEN 9223372036854775807 WHEN 20 THEN 1 "
         "ELSE 0 END)",
         "error ArgumentError: integer overflow in sum()"},
        {"MATCH (n:L) RETURN sum(CASE n.i WHEN 10 THEN -9223372036854775807 "
         "WHEN 300 THEN 9223372036854775807 WHEN 301 THEN 9223372036854775807 ELSE 0 END)",
         "9223372036854775807|\n"},
        {"MATCH (n:L) RETURN sum(CASE n.i WHEN 10 THEN 9223372036854775807 WHEN 300 THEN 0.5 "
         "WHEN 301 THEN 9223372036854775807 ELSE 0 END) > 0",
         "true|\n"},
        {"MATCH (n:L) RETURN n.i % 2, count(*), 10 / (n.i - 4321)",
         "error ArgumentError: division by zero"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        assert_true(runs_parallel(g, cases[c].q));
        for (unsigned t = 1; t <= 5; t += 2) {
            strata_set_query_threads(g, t);
            char *got = text_on(g, NULL, cases[c].q, true);
            if (strstr(got, cases[c].want) != got)
                fail_msg("%s at %u threads: %s, not %s", cases[c].q, t, got, cases[c].want);
            free(got);
        }
    }
    strata_graph_free(&g);
}

/* Small statements never take the parallel path, so their results are
   exactly as before. */
static void test_small_stays_serial(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(0, 999) AS i CREATE (:L {i: i, x: i * 0.1})");
    assert_false(runs_parallel(g, "MATCH (n:L) RETURN n.i % 3, sum(n.x)"));
    run(g, "UNWIND range(0, 4999) AS i CREATE (:L {i: i, x: i * 0.1})");
    assert_true(runs_parallel(g, "MATCH (n:L) RETURN n.i % 3, sum(n.x)"));
    strata_graph_free(&g);
}

/* An index range seek expected to yield past the parallel bound. */
static void test_index_range(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "CREATE INDEX FOR (n:L) ON (n.i)");
    run(g, "UNWIND range(0, 15999) AS i CREATE (:L {i: i, x: (i % 97) * 0.125})");
    size_t parallel = 0;
    static const char *const queries[] = {
        "MATCH (n:L) WHERE n.i >= 10 RETURN n.i % 7 AS g, collect(n.i)[..5], count(*), "
        "sum(n.x), avg(n.x)",
        "MATCH (n:L) WHERE n.i < 15000 RETURN DISTINCT n.x ORDER BY n.x DESC LIMIT 4",
    };
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++)
        check_query(g, NULL, queries[q], &parallel, true);
    strata_graph_free(&g);
}

/* Every allocation of a parallel aggregation, DISTINCT and Top fails in
   turn (one thread, so the order of allocations is fixed; then two, where
   it is not, for leaks): each failure is an OutOfMemory error that leaks
   nothing, and the last run gives the whole answer. */
static void test_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(0, 4199) AS i CREATE (:L {i: i, k: i % 5, x: (i % 9) * 0.5, "
           "s: ['a', 'b'][i % 2]})");
    run(g, "MATCH (a:L) WHERE a.i % 50 = 0 MATCH (b:L {i: (a.i * 7) % 4200}) "
           "CREATE (a)-[:T]->(b)");
    static const char *const queries[] = {
        "MATCH (n:L) OPTIONAL MATCH (n)-[:T]->(m) RETURN n.k AS g, count(*), sum(n.x), "
        "collect(m.i), count(DISTINCT n.s), stDev(n.x), percentileDisc(n.i, 0.5), min(n.s)",
        "MATCH (n:L) RETURN DISTINCT n.k AS a, n.s AS b",
        "MATCH (n:L) RETURN n.i ORDER BY n.x DESC, n.s LIMIT 5",
    };
    for (unsigned threads = 1; threads <= 2; threads++) {
        strata_set_query_threads(g, threads);
        for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
            assert_true(runs_parallel(g, queries[q]));
            char *want = text_on(g, NULL, queries[q], true);
            plan_cache_clear(plan_cache_for(g->current->cat));
            size_t base = mem_ctx_bytes(mem_scratch());
            /* two threads: every 13th allocation, a sample of the orders */
            long step = threads == 1 ? 1 : 13;
            for (long k = 1;; k += step) {
                strata_result *r = NULL;
                mem_fail_at(k);
                strata_status st = strata_query(g, queries[q], NULL, &r);
                char *got = result_text(r, st, true);
                bool failed = mem_fail_count() >= k;
                mem_fail_clear();
                plan_cache_clear(plan_cache_for(g->current->cat));
                if (mem_ctx_bytes(mem_scratch()) != base)
                    fail_msg("%s: %zu bytes leaked with allocation %ld failing", queries[q],
                             mem_ctx_bytes(mem_scratch()) - base, k);
                if (!failed) {
                    if (getenv("STRATA_PARALLEL_VERBOSE"))
                        printf("%ld allocations\n", k);
                    assert_string_equal(got, want);
                    free(got);
                    break;
                }
                if (st != STRATA_ENOMEM && strstr(got, "error OutOfMemory") != got)
                    fail_msg("%s with allocation %ld failing: %s", queries[q], k, got);
                free(got);
            }
            free(want);
        }
    }
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_queries),
        cmocka_unit_test(test_orders),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_index_range),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_small_stays_serial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
