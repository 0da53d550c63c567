/* Labels, relationship types and map keys written in a query keep their
   token in the cached plan after the first lookup or intern (query/ast.h,
   exec_cached_token / exec_cached_intern).  The cache must give the same
   answers as a lookup by name every time: a name nobody has yet is looked
   up again once a write interns it, and two graphs whose catalogs number
   the same names differently each get their own plan's tokens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
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

static int64_t count(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    const strata_value *const *row;
    int64_t n = -1;
    if (strata_result_next(r, &row))
        assert_int_equal(strata_value_get_int(row[0], &n), STRATA_OK);
    strata_result_free(&r);
    return n;
}

/* The number of rows q returns. */
static size_t nrows(strata_graph *g, const char *q)
{
    strata_result *r = NULL;
    if (strata_query(g, q, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", q, strata_result_error(r)->message);
    const strata_value *const *row;
    size_t n = 0;
    while (strata_result_next(r, &row))
        n++;
    strata_result_free(&r);
    return n;
}

/* A key the pattern's map names but nobody has yet: the walk checks it on
   every candidate and finds nothing, and once a write interns it the same
   cached plan finds the node.  (An unknown label never reaches the check:
   the planner starts from nothing.) */
static void test_name_interned_later_is_found(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "CREATE (:A)-[:R]->(:B)");
    const char *q = "MATCH (a:A)-[:R]->(b:B {late: 1}) RETURN b";
    assert_int_equal(nrows(g, q), 0);
    run(g, "MATCH (b:B) SET b.late = 1");
    assert_int_equal(nrows(g, q), 1);
    assert_int_equal(nrows(g, q), 1);
    strata_graph_free(&g);
}

/* The same statements on two graphs that interned their names in
   opposite orders: every label, type and key lands where it was named. */
static void test_graphs_number_names_apart(void **state)
{
    (void)state;
    strata_graph *g[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(strata_graph_new(&g[i]), STRATA_OK);
    run(g[0], "CREATE (:A {x: 1})-[:S]->(:B {y: 2})-[:T]->(:C)");
    run(g[1], "CREATE (:C)<-[:T]-(:B {y: 2})<-[:S]-(:A {x: 1})");
    run(g[1], "CREATE (:Z {z: 0})-[:U]->(:Z)");
    const char *writes[] = {
        "CREATE (:B {y: 5})-[:S]->(:A {x: 6})",
        "MATCH (a:A {x: 6}) SET a:C",
        "MATCH (b:B {y: 5}) CREATE (b)-[:T]->(:C {x: 7})",
    };
    const char *reads[] = {
        "MATCH (b:B)-[:S]->(a:A) RETURN count(*)",
        "MATCH (n:A:C) RETURN count(n)",
        "MATCH (:B {y: 5})-[:T]->(c:C {x: 7}) RETURN count(c)",
        "MATCH (a:A {x: 1})-[:S]->(b:B {y: 2})-[:T]->(c:C) RETURN count(*)",
        "MATCH (n:C) RETURN count(n)",
    };
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 2; i++)
            for (size_t w = 0; w < sizeof writes / sizeof *writes; w++)
                run(g[i], writes[w]);
    for (size_t r = 0; r < sizeof reads / sizeof *reads; r++)
        assert_int_equal(count(g[0], reads[r]), count(g[1], reads[r]));
    assert_int_equal(count(g[0], "MATCH (b:B)-[:S]->(a:A) RETURN count(*)"), 2);
    assert_int_equal(count(g[0], "MATCH (n:A:C) RETURN count(n)"), 2);
    assert_int_equal(count(g[0], "MATCH (n:C) RETURN count(n)"), 6);
    for (int i = 0; i < 2; i++)
        strata_graph_free(&g[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_interned_later_is_found),
        cmocka_unit_test(test_graphs_number_names_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
