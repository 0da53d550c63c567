/* Memory of the aggregating operators: grouping, aggregates with and
   without DISTINCT, DISTINCT, UNION and ORDER BY ... LIMIT hold what their
   answer needs (the groups, the distinct rows, the k rows kept), never
   every input row.  The same queries run over graphs 10x apart in size
   with the same number of groups; the peak of the scratch memory
   (mem_ctx_peak, test builds) must not grow with the input.  Then every
   allocation of those operators fails in turn: each failure is an
   OutOfMemory error that leaks nothing and leaves the graph as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "core/graph_impl.h"
#include "query/plan_cache.h"
#include "storage/mem.h"
#include "strata.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

static strata_graph *graph_of(int nodes)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    char q[96];
    snprintf(q, sizeof q, "UNWIND range(1, %d) AS i CREATE (:P {k: i})", nodes);
    run(g, q);
    return g;
}

/* The scratch bytes q needs beyond what was held before it, at its
   peak, reading every row; *nrows gets the row count. */
static size_t peak_of(strata_graph *g, const char *q, size_t *nrows)
{
    run(g, q);      /* parse and cache the statement first */
    mem_ctx *m = mem_scratch();
    size_t base = mem_ctx_bytes(m);
    mem_ctx_peak_reset(m);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, q, NULL, &r), STRATA_OK);
    const strata_value *const *row;
    *nrows = 0;
    while (strata_result_next(r, &row))
        (*nrows)++;
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    assert_int_equal(mem_ctx_bytes(m), base);
    return mem_ctx_peak(m) - base;
}

static const struct {
    const char *q;
    size_t rows;
} growth_queries[] = {
    {"MATCH (n:P) RETURN n.k % 16 AS g, count(*) AS c, sum(n.k) AS s, min(n.k) AS lo, "
     "max(n.k) AS hi, avg(n.k) AS a, stDev(n.k) AS sd", 16},
    {"MATCH (n:P) RETURN count(DISTINCT n.k % 16) AS d, sum(DISTINCT n.k % 16) AS s", 1},
    {"MATCH (n:P) WITH n.k % 16 AS g, collect(DISTINCT n.k % 4) AS c RETURN g, size(c)", 16},
    {"MATCH (n:P) RETURN DISTINCT n.k % 16 AS g", 16},
    {"MATCH (n:P) RETURN n.k AS k ORDER BY n.k % 100 DESC, k LIMIT 5", 5},
    {"MATCH (n:P) WITH DISTINCT n.k % 16 AS g ORDER BY g DESC SKIP 2 LIMIT 3 RETURN g", 3},
    {"MATCH (n:P) RETURN n.k % 16 AS g UNION MATCH (n:P) RETURN n.k % 8 AS g", 16},
};

/* The queries over graphs of n and 10 n nodes: the peaks must agree. */
static void peaks_agree(int n)
{
    strata_graph *small = graph_of(n), *big = graph_of(n * 10);
    /* one thread: what a parallel read holds besides (a worker's copy of
       the pipeline, one morsel's partial) is then the same every time */
    strata_set_query_threads(small, 1);
    strata_set_query_threads(big, 1);
    for (size_t i = 0; i < sizeof growth_queries / sizeof *growth_queries; i++) {
        size_t rows_small, rows_big;
        size_t p_small = peak_of(small, growth_queries[i].q, &rows_small);
        size_t p_big = peak_of(big, growth_queries[i].q, &rows_big);
        assert_int_equal(rows_small, growth_queries[i].rows);
        assert_int_equal(rows_big, growth_queries[i].rows);
        /* 9 n more rows: holding them would take 100 KB and more; a
           few hundred bytes of slack cover the allocator's rounding */
        if (p_big > p_small + 512)
            fail_msg("%s: peak %zu bytes over %d rows, %zu over %d", growth_queries[i].q,
                     p_small, n, p_big, n * 10);
    }
    strata_graph_free(&small);
    strata_graph_free(&big);
}

/* Both sizes on one side of the parallel bound (query/parallel.h): 300
   and 3,000 rows on one thread's path, 5,000 and 50,000 read in morsels
   (which holds a fixed amount more: a worker's copy of the pipeline and a
   morsel's partial). */
static void test_memory_tracks_groups_not_rows(void **state)
{
    (void)state;
    peaks_agree(300);
    peaks_agree(5000);
}

static int64_t count_nodes(strata_graph *g)
{
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    int64_t n = (int64_t)strata_node_count(v);
    strata_view_release(&v);
    return n;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g = graph_of(12);
    static const char *const queries[] = {
        "UNWIND range(1, 40) AS x RETURN x % 7 AS g, count(*), count(DISTINCT x % 3), "
        "collect(DISTINCT x % 5), percentileDisc(x, 0.5), min(x) ORDER BY g DESC LIMIT 3",
        "UNWIND range(1, 30) AS x WITH DISTINCT x % 6 AS y ORDER BY y SKIP 1 RETURN y",
        "UNWIND range(1, 30) AS x RETURN x ORDER BY x % 4, x DESC",
        "UNWIND range(1, 20) AS x RETURN x % 5 AS a UNION UNWIND range(1, 20) AS x "
        "RETURN x % 7 AS a",
        "UNWIND [1, 1.0, null, [1], [1.0], {a: 1}, {a: 1.0}, 0.0 / 0.0] AS x RETURN DISTINCT x",
        "MATCH (n:P) WITH n.k % 3 AS g, count(*) AS c WHERE c > 3 RETURN g, c",
        "PROFILE MATCH (n:P) RETURN n.k % 4 AS g, sum(n.k) ORDER BY g LIMIT 2",
    };
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        plan_cache_clear(plan_cache_for(g->current->cat));
        size_t base = mem_ctx_bytes(mem_scratch());
        int64_t nodes = count_nodes(g);
        for (long k = 1;; k++) {
            strata_result *r = NULL;
            mem_fail_at(k);
            strata_status st = strata_query(g, queries[q], NULL, &r);
            bool failed = mem_fail_count() >= k;
            mem_fail_clear();
            strata_result_free(&r);
            plan_cache_clear(plan_cache_for(g->current->cat));
            if (mem_ctx_bytes(mem_scratch()) != base)
                fail_msg("%s: %zu bytes leaked with allocation %ld failing", queries[q],
                         mem_ctx_bytes(mem_scratch()) - base, k);
            if (!failed) {
                assert_int_equal(st, STRATA_OK);
                break;
            }
            assert_int_equal(st, STRATA_ENOMEM);
            if (count_nodes(g) != nodes)
                fail_msg("%s: the graph changed with allocation %ld failing", queries[q], k);
        }
    }
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_tracks_groups_not_rows),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
