/* Differential test of the planner: the same random graph twice, one with
   indices (range, unique, composite) and one without, and random read
   queries over both.  Index seeks, range seeks, the end a walk starts
   from and the order of pattern parts may differ between the two; the
   rows (as a multiset) must not.  STRATA_QUERY_DIFF_SEEDS sets how many
   graphs (default 20). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "strata.h"
#include "support/model_value.h"
#include "support/rows.h"

/* A property value as Cypher text: ints, floats, short strings, booleans;
   sometimes a value of another type than its neighbours. */
static void random_literal(uint64_t *s, char *buf, size_t size)
{
    switch (below(s, 10)) {
    case 0: case 1: case 2: case 3: case 4:
        snprintf(buf, size, "%d", (int)below(s, 20) - 3);
        break;
    case 5: case 6:
        snprintf(buf, size, "%d.5", (int)below(s, 20) - 3);
        break;
    case 7: case 8:
        snprintf(buf, size, "'%c%c'", 'a' + below(s, 4), 'a' + below(s, 4));
        break;
    default:
        snprintf(buf, size, "%s", chance(s, 50) ? "true" : "null");
        break;
    }
}

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

/* The same statements on both graphs. */
static void both(strata_graph *g[2], const char *text)
{
    run(g[0], text);
    run(g[1], text);
}

static void build(uint64_t seed, strata_graph *g[2])
{
    uint64_t s = seed;
    char lit[32], lit2[32], q[256];
    for (int i = 0; i < 2; i++)
        assert_int_equal(strata_graph_new(&g[i]), STRATA_OK);
    int nodes = 60 + (int)below(&s, 60);
    for (int i = 0; i < nodes; i++) {
        random_literal(&s, lit, sizeof lit);
        random_literal(&s, lit2, sizeof lit2);
        const char *label = chance(&s, 50) ? "A" : chance(&s, 50) ? "B" : "A:B";
        snprintf(q, sizeof q, "CREATE (:%s {i: %d, k: %s, j: %s, u: %d})", label, i, lit, lit2,
                 i);
        both(g, q);
    }
    for (int i = 0; i < nodes * 2; i++) {
        snprintf(q, sizeof q, "MATCH (a {i: %u}), (b {i: %u}) CREATE (a)-[:%s {w: %u}]->(b)",
                 below(&s, (uint32_t)nodes), below(&s, (uint32_t)nodes),
                 chance(&s, 70) ? "R" : "S", below(&s, 5));
        both(g, q);
    }
    run(g[0], "CREATE INDEX FOR (n:A) ON (n.k)");
    run(g[0], "CREATE INDEX FOR (n:B) ON (n.k)");
    run(g[0], "CREATE INDEX FOR (n:A) ON (n.k, n.j)");
    run(g[0], "CREATE CONSTRAINT FOR (n:B) REQUIRE n.u IS UNIQUE");
}

static const char *const ops[] = {"=", "<", "<=", ">", ">="};

static void random_query(uint64_t *s, char *q, size_t size)
{
    char lit[32], lit2[32];
    random_literal(s, lit, sizeof lit);
    random_literal(s, lit2, sizeof lit2);
    const char *op = ops[below(s, 5)];
    switch (below(s, 8)) {
    case 0:
        snprintf(q, size, "MATCH (a:A) WHERE a.k %s %s RETURN a.i", op, lit);
        break;
    case 1:
        snprintf(q, size, "MATCH (a:A)-[:R]->(b:B) WHERE b.k %s %s RETURN a.i, b.i", op, lit);
        break;
    case 2:
        snprintf(q, size, "MATCH (a:A {k: %s})-[r]-(b) RETURN a.i, type(r), b.i", lit);
        break;
    case 3:
        snprintf(q, size, "MATCH (a:A), (b:B {k: %s}) WHERE a.k = b.k RETURN a.i, b.i", lit);
        break;
    case 4:
        snprintf(q, size, "MATCH (a:A) WHERE a.k STARTS WITH '%c' RETURN a.i", 'a' + below(s, 4));
        break;
    case 5:
        snprintf(q, size, "MATCH (b:B)<-[:R*1..2]-(a:A {k: %s}) RETURN a.i, b.i", lit);
        break;
    case 6:
        snprintf(q, size, "MATCH (a:A {k: %s, j: %s})-->(b:B {u: %u}) RETURN a.i, b.i", lit,
                 lit2, below(s, 120));
        break;
    default:
        snprintf(q, size,
                 "MATCH (a:A) WHERE %s %s a.k %s %s RETURN a.i, [(a)-[:S]->(c) | c.i] AS cs",
                 lit, op[0] == '=' ? "<=" : op, op[0] == '=' ? "<=" : op, lit2);
        break;
    }
}

/* Whether the graph's plan for q seeks an index. */
static bool uses_index(strata_graph *g, const char *q)
{
    char text[600];
    snprintf(text, sizeof text, "EXPLAIN %s", q);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    bool seek = false;
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        const char *plan;
        size_t len;
        if (strata_value_get_string(row[3], &plan, &len) == STRATA_OK && strstr(plan, "Seek"))
            seek = true;
    }
    strata_result_free(&r);
    return seek;
}

static void test_seeks_agree_with_scans(void **state)
{
    (void)state;
    const char *env = getenv("STRATA_QUERY_DIFF_SEEDS");
    int seeds = env ? atoi(env) : 20;
    size_t total = 0, seeks = 0;
    for (int seed = 1; seed <= seeds; seed++) {
        strata_graph *g[2];
        build(0x9e3779b97f4a7c15ull * (uint64_t)seed, g);
        uint64_t s = (uint64_t)seed * 7919;
        for (int k = 0; k < 150; k++) {
            char q[512];
            random_query(&s, q, sizeof q);
            size_t n0, n1;
            char **r0 = rows(g[0], q, &n0), **r1 = rows(g[1], q, &n1);
            total += n0;
            seeks += uses_index(g[0], q);
            if (n0 != n1)
                fail_msg("seed %d: %s: %zu rows with indices, %zu without", seed, q, n0, n1);
            for (size_t i = 0; i < n0; i++)
                if (strcmp(r0[i], r1[i]) != 0)
                    fail_msg("seed %d: %s: row %s with indices, %s without", seed, q, r0[i],
                             r1[i]);
            rows_free(r0, n0);
            rows_free(r1, n1);
        }
        strata_graph_free(&g[0]);
        strata_graph_free(&g[1]);
    }
    /* the comparison means something: rows came back, and seeks ran */
    assert_true(total > (size_t)seeds * 150);
    assert_true(seeks > (size_t)seeds * 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeks_agree_with_scans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
