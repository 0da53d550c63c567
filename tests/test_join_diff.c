/* Differential test of the join (query/join.h) against the walker it
   replaces: random graphs (two labels, three types, self-loops and
   parallel relationships), random patterns with cycles, several MATCH
   clauses, counts with and without grouping, WHERE conjuncts and pattern
   predicates, bound variables from earlier clauses; every query runs with
   the join and again with the walker alone, and the rows (as a multiset)
   must be equal.  STRATA_JOIN_DIFF_SEEDS sets how many graphs (default
   12). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/graph_impl.h"
#include "query/join.h"
#include "query/plan_cache.h"
#include "storage/mem.h"
#include "strata.h"
#include "support/model_value.h"
#include "support/rows.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

static void build(uint64_t seed, strata_graph **g)
{
    uint64_t s = seed;
    char q[256];
    assert_int_equal(strata_graph_new(g), STRATA_OK);
    int nodes = 20 + (int)below(&s, 40);
    for (int i = 0; i < nodes; i++) {
        const char *label = chance(&s, 45) ? "A" : chance(&s, 50) ? "B" : "A:B";
        snprintf(q, sizeof q, "CREATE (:%s {i: %d, k: %d, j: %d})", label, i,
                 (int)below(&s, 5), (int)below(&s, 3));
        run(*g, q);
    }
    int rels = nodes * (1 + (int)below(&s, 3));
    for (int i = 0; i < rels; i++) {
        uint32_t a = below(&s, (uint32_t)nodes);
        uint32_t b = chance(&s, 8) ? a : below(&s, (uint32_t)nodes);   /* self-loops */
        const char *type = chance(&s, 50) ? "R" : chance(&s, 60) ? "S" : "T";
        snprintf(q, sizeof q,
                 "MATCH (a {i: %u}), (b {i: %u}) CREATE (a)-[:%s {w: %u}]->(b)%s", a, b,
                 type, below(&s, 3), chance(&s, 10) ? ", (a)-[:R {w: 0}]->(b)" : "");
        run(*g, q);
    }
}

/* A relationship pattern: a direction and type set. */
static const char *rel(uint64_t *s)
{
    static const char *const r[] = {
        "-[:R]->", "<-[:R]-", "-[:S]-", "-[:R|S]->", "<-[:T|R]-", "-->", "--", "-[:T]-",
        "<-[:S]-", "-[:S|T]-",
    };
    return r[below(s, sizeof r / sizeof *r)];
}

static void random_query(uint64_t *s, char *q, size_t size)
{
    const char *r1 = rel(s), *r2 = rel(s), *r3 = rel(s), *r4 = rel(s);
    int k = (int)below(s, 5);
    switch (below(s, 25)) {
    case 19:    /* two leaves that must differ, off different nodes */
        snprintf(q, size, "MATCH (a)%s(b)%s(c)%s(d) WHERE a <> d RETURN count(*)", r1, r2, r3);
        break;
    case 20:    /* ... off one node */
        snprintf(q, size, "MATCH (a:A)%s(b)%s(c) WHERE a <> c RETURN count(*)", r1, r2);
        break;
    case 21:    /* a leaf that must differ from a node of the core */
        snprintf(q, size, "MATCH (a:A)%s(b)%s(c)%s(d) WHERE d <> b RETURN count(*)", r1, r2,
                 r3);
        break;
    case 22:
        snprintf(q, size, "MATCH (a)%s(b:B) WHERE a <> b RETURN count(*)", r1);
        break;
    case 23:    /* grouped, so weighted rows rather than one sum */
        snprintf(q, size, "MATCH (a)%s(b)%s(c)%s(d:B) WHERE a <> d AND c.k <> %d "
                 "RETURN b.k, count(*)", r1, r2, r3, k);
        break;
    case 24:    /* bound by the input row */
        snprintf(q, size, "UNWIND [%d, %d] AS i MATCH (a {i: i})%s(b)%s(c) WHERE c <> a "
                 "RETURN i, count(*)", k, k + 3, r1, r2);
        break;
    case 18:
        snprintf(q, size, "MATCH (a:A)%s(b)%s(c) WHERE a = c AND b <> a RETURN a.i, b.i, "
                 "count(*)", r1, r2);
        break;
    case 16:
        snprintf(q, size, "MATCH (a:A)-[:R]->(b)<-[:S]-(c), (b)-[:T]-(d) RETURN a.j, count(*)");
        break;
    case 17:
        snprintf(q, size, "MATCH (a)-[:S]->(b)-[:R]->(c)-[:T]-(d:B) RETURN count(*), count(a)");
        break;
    case 0:
        snprintf(q, size, "MATCH (a)%s(b)%s(c)%s(a) RETURN a.i, b.i, c.i", r1, r2, r3);
        break;
    case 1:
        snprintf(q, size,
                 "MATCH (a:A)-[x:R]->(b)-[y]-(c)%s(a) RETURN a.i, id(x), id(y), c.i", r3);
        break;
    case 2:
        snprintf(q, size, "MATCH (a)%s(b)%s(c)%s(d)%s(a) RETURN count(*)", r1, r2, r3, r4);
        break;
    case 3:
        snprintf(q, size, "MATCH (a:A)%s(b) MATCH (b)%s(c)%s(a) WHERE c.k > %d "
                 "RETURN a.i, b.i, c.i", r1, r2, r3, k);
        break;
    case 4:
        snprintf(q, size, "MATCH (a:A)%s(b)%s(c) RETURN count(*)", r1, r2);
        break;
    case 5:
        snprintf(q, size, "MATCH (a)%s(b:B)%s(c)%s(d) RETURN a.k, count(*), count(b)", r1, r2,
                 r3);
        break;
    case 6:
        snprintf(q, size, "MATCH (a)%s(b), (a)%s(c), (c)%s(d:B) RETURN a.k, count(*) AS n "
                 "ORDER BY n DESC", r1, r2, r3);
        break;
    case 7:
        snprintf(q, size, "MATCH (a)-[x:R]->(a), (a)%s(b) RETURN a.i, b.i, id(x)", r1);
        break;
    case 8:
        snprintf(q, size, "MATCH (a:A) WITH a WHERE a.i %% 3 = %d "
                 "MATCH (a)%s(b)%s(c)%s(a) RETURN a.i, b.i, c.i", k % 3, r1, r2, r3);
        break;
    case 9:
        snprintf(q, size, "MATCH (a)%s(b)%s(c) WHERE NOT (a)%s(c) AND a <> c RETURN count(*)",
                 r1, r2, r3);
        break;
    case 10:
        snprintf(q, size, "MATCH (a:B {k: %d}) MATCH (b:A) WHERE b.j = a.j RETURN a.i, b.i", k);
        break;
    case 11:
        snprintf(q, size, "MATCH (a)-[:R]->(b)-[:R]->(c)%s(d) RETURN count(*)", r1);
        break;
    case 12:
        snprintf(q, size, "MATCH (a)%s(b) MATCH (b)%s(c) RETURN count(*), count(DISTINCT c)",
                 r1, r2);
        break;
    case 13:
        snprintf(q, size, "MATCH (a)-[x:R {w: %d}]->(b)%s(c)%s(a) RETURN count(*)", k % 3, r2,
                 r3);
        break;
    case 14:
        snprintf(q, size, "UNWIND [%d, %d] AS i MATCH (a {i: i})%s(b)%s(c) "
                 "RETURN i, count(c)", k, k + 7, r1, r2);
        break;
    default:
        snprintf(q, size, "MATCH (a:A)%s(b) MATCH (c)%s(b) MATCH (c)%s(d:B) "
                 "WHERE a.k <= c.k RETURN count(*), sum(d.k)", r1, r2, r3);
        break;
    }
}

/* How the plan of q runs: 1 joined, 2 joined and counted, 3 counted with
   a leaf that must differ from another node. */
static int plan_kind(strata_graph *g, const char *q)
{
    char text[600];
    snprintf(text, sizeof text, "EXPLAIN %s", q);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    int kind = 0;
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        const char *plan;
        size_t len;
        if (strata_value_get_string(row[3], &plan, &len) != STRATA_OK)
            continue;
        if (strstr(plan, "less the ways"))
            kind = 3;
        else if (strstr(plan, "CountExpand") && kind < 2)
            kind = 2;
        else if (strstr(plan, "Join (") && kind == 0)
            kind = 1;
    }
    strata_result_free(&r);
    return kind;
}

static void test_join_agrees_with_walker(void **state)
{
    /* state: the scan size from which acyclic patterns are joined */
    join_set_scan_min((uint64_t)(uintptr_t)*state);
    const char *env = getenv("STRATA_JOIN_DIFF_SEEDS");
    int seeds = env ? atoi(env) : 12;
    size_t total = 0, joined = 0, counted = 0, paired = 0, queries = 0;
    for (int seed = 1; seed <= seeds; seed++) {
        strata_graph *g;
        build(0x9e3779b97f4a7c15ull * (uint64_t)seed + 11, &g);
        uint64_t s = (uint64_t)seed * 104729;
        for (int k = 0; k < 120; k++, queries++) {
            char q[512];
            random_query(&s, q, sizeof q);
            size_t n0, n1;
            join_set_enabled(true);
            int kind = plan_kind(g, q);
            joined += kind >= 1;
            counted += kind >= 2;
            paired += kind == 3;
            char **r0 = rows(g, q, &n0);
            join_set_enabled(false);
            char **r1 = rows(g, q, &n1);
            join_set_enabled(true);
            total += n0;
            if (n0 != n1)
                fail_msg("seed %d: %s: %zu rows joined, %zu walked", seed, q, n0, n1);
            for (size_t i = 0; i < n0; i++)
                if (strcmp(r0[i], r1[i]) != 0)
                    fail_msg("seed %d: %s: row %s joined, %s walked", seed, q, r0[i], r1[i]);
            rows_free(r0, n0);
            rows_free(r1, n1);
        }
        strata_graph_free(&g);
    }
    /* the comparison means something: rows came back, the join ran and
       counted without enumerating in a good share of the queries */
    assert_true(total > queries);
    assert_true(joined > queries / 2);
    assert_true(counted > queries / 12);
    assert_true(paired > queries / 50);
    join_set_scan_min(1000);
}

/* The rows PROFILE reports for q's Match and for what consumes them. */
static void profile_rows(strata_graph *g, const char *q, int64_t *match_rows, int64_t *agg_rows)
{
    char text[600];
    snprintf(text, sizeof text, "PROFILE %s", q);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    const strata_value *const *row;
    *match_rows = *agg_rows = -1;
    while (strata_result_next(r, &row)) {
        const char *op;
        size_t len;
        int64_t n;
        assert_int_equal(strata_value_get_string(row[2], &op, &len), STRATA_OK);
        assert_int_equal(strata_value_get_int(row[4], &n), STRATA_OK);
        if (strncmp(op, "Match", len) == 0)
            *match_rows = n;
        else
            *agg_rows = n;
    }
    strata_result_free(&r);
}

/* q's one integer. */
static int64_t count_of(strata_graph *g, const char *q)
{
    size_t n;
    char **c = rows(g, q, &n);
    assert_int_equal(n, 1);
    int64_t v = strtoll(c[0], NULL, 10);
    rows_free(c, n);
    return v;
}

/* A count over many matches is taken without producing them: the rows
   into the aggregation are far fewer than the count. */
static void test_count_is_not_enumerated(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 200) AS i CREATE (:Hub {i: i})");
    run(g, "MATCH (h:Hub) UNWIND range(1, 50) AS j CREATE (h)-[:OUT]->(:Leaf)");
    run(g, "MATCH (h:Hub) WITH h, h.i % 20 AS g MATCH (o:Hub) WHERE o.i % 20 = g AND o <> h "
           "CREATE (h)-[:PEER]->(o)");
    const char *q = "MATCH (a:Hub)-[:PEER]->(b:Hub)-[:OUT]->(c:Leaf) RETURN count(*)";
    int64_t match_rows, agg_rows;
    profile_rows(g, q, &match_rows, &agg_rows);
    /* 200 hubs, 9 peers each, 50 leaves each: 90,000 paths, passed on as
       one weighted row per (a, b) pair at most */
    assert_int_equal(agg_rows, 1);
    assert_true(match_rows > 0 && match_rows <= 200 * 9);
    assert_int_equal(count_of(g, q), 90000);
    strata_graph_free(&g);
}

/* `t1 <> t2` between two leaves is counted as the product of their ways
   less the pairs that meet, not by enumerating the pairs. */
static void test_inequality_is_not_enumerated(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(0, 9) AS i CREATE (:Tag {i: i})");
    run(g, "UNWIND range(1, 100) AS i CREATE (:Post {i: i})");
    run(g, "MATCH (p:Post), (t:Tag) WHERE (p.i + t.i) % 3 = 0 CREATE (p)-[:HAS]->(t)");
    run(g, "MATCH (p:Post) UNWIND range(1, 30) AS j CREATE (p)<-[:REPLY]-(:Comment {j: j})");
    run(g, "MATCH (c:Comment), (t:Tag) WHERE (c.j + t.i) % 4 = 0 CREATE (c)-[:HAS]->(t)");
    const char *q = "MATCH (t1:Tag)<-[:HAS]-(:Post)<-[:REPLY]-(:Comment)-[:HAS]->(t2:Tag) "
                    "WHERE t1 <> t2 RETURN count(*)";
    int64_t match_rows, agg_rows;
    profile_rows(g, q, &match_rows, &agg_rows);
    assert_int_equal(agg_rows, 1);
    assert_true(match_rows > 0 && match_rows <= 100 * 30);
    int64_t joined = count_of(g, q);
    join_set_enabled(false);
    int64_t walked = count_of(g, q);
    join_set_enabled(true);
    assert_int_equal(joined, walked);
    assert_true(joined > 100 * 30 * 4);     /* more matches than rows passed on */
    strata_graph_free(&g);
}

/* The query's rows summed (every integer column); STRATA_ENOMEM when it
   failed with OutOfMemory, any other error fails the test. */
static strata_status run_sum(strata_graph *g, const char *text, int64_t *sum)
{
    strata_result *r = NULL;
    *sum = 0;
    strata_status st = strata_query(g, text, NULL, &r);
    const strata_value *const *row;
    while (st == STRATA_OK && strata_result_next(r, &row))
        for (size_t c = 0; c < strata_result_columns(r, NULL); c++) {
            int64_t i;
            if (strata_value_get_int(row[c], &i) == STRATA_OK)
                *sum += i;
        }
    const strata_query_error *e = strata_result_error(r);
    if (e) {
        if (strcmp(e->code, "OutOfMemory") != 0)
            fail_msg("%s: %s", text, e->message);
        st = STRATA_ENOMEM;
    }
    strata_result_free(&r);
    return st;
}

/* Every allocation of planning and running a join fails in turn: each
   failure is OutOfMemory, gives back what it took, and the next run
   answers right. */
static void test_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g;
    build(77, &g);
    const char *queries[] = {
        "MATCH (a)-[:R]->(b)-[:S]-(c)-[:R|T]-(a) RETURN a.i, b.i, c.i",
        "MATCH (a:A)-[:R]->(b) MATCH (b)-[:S]-(c) MATCH (c)--(a) WHERE a.k <= c.k "
        "RETURN count(*)",
        "MATCH (a)-[:S]->(b)-[:R]->(c)-[:T]-(d:B) RETURN a.k, count(*)",
        "MATCH (a)-[:R]->(b)-[:R]->(c) WHERE NOT (a)-[:S]-(c) RETURN count(*)",
        "MATCH (a)-[:R]->(b)<-[:S]-(c)<-[:R]-(d) WHERE a <> d RETURN count(*)",
        "MATCH (a:A)-[:R]->(b)-[:S]->(c)-[:T]->(d) WHERE d <> b RETURN b.k, count(*)",
    };
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        int64_t want, got;
        assert_int_equal(run_sum(g, queries[q], &want), STRATA_OK);
        plan_cache_clear(plan_cache_for(g->current->cat));
        size_t base = mem_ctx_bytes(mem_scratch());
        long failures = 0;
        for (long k = 1;; k++) {
            mem_fail_at(k);
            strata_status st = run_sum(g, queries[q], &got);
            bool failed = mem_fail_count() >= k;
            mem_fail_clear();
            plan_cache_clear(plan_cache_for(g->current->cat));
            assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
            if (!failed) {
                assert_int_equal(st, STRATA_OK);
                assert_int_equal(got, want);
                break;
            }
            assert_int_equal(st, STRATA_ENOMEM);
            failures++;
        }
        assert_true(failures > 5);
    }
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_join_agrees_with_walker, (void *)(uintptr_t)1000),
        /* every pattern of two or more relationships joined */
        cmocka_unit_test_prestate(test_join_agrees_with_walker, (void *)(uintptr_t)0),
        cmocka_unit_test(test_count_is_not_enumerated),
        cmocka_unit_test(test_inequality_is_not_enumerated),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
