/* The plan cache: a query text is parsed and checked once, a plan taken
   from the cache outlives its eviction, a cached plan stays right across
   schema changes (access paths are chosen when a pattern runs), and each
   graph has a cache of its own, shared by its views. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/graph_impl.h"   /* reads the graph's catalog */
#include "query/plan_cache.h"
#include "strata.h"

static int64_t query_int(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    int64_t v;
    assert_int_equal(strata_value_get_int(row[0], &v), STRATA_OK);
    strata_result_free(&r);
    return v;
}

static void test_hit_after_first_run(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    const char *q = "UNWIND range(1, 3) AS x RETURN sum(x)";
    assert_null(plan_cache_get(plan_cache_for(g->current->cat), q, strlen(q)));
    assert_int_equal(query_int(g, q), 6);
    cached_plan *a = plan_cache_get(plan_cache_for(g->current->cat), q, strlen(q));
    assert_non_null(a);
    assert_int_equal(query_int(g, q), 6);
    cached_plan *b = plan_cache_get(plan_cache_for(g->current->cat), q, strlen(q));
    assert_ptr_equal(a, b);                       /* not parsed again */
    plan_release(&a);
    plan_release(&b);
    /* a statement that fails to parse or check is not cached */
    strata_result *r = NULL;
    const char *bad = "RETURN nope";
    assert_int_not_equal(strata_query(g, bad, NULL, &r), STRATA_OK);
    strata_result_free(&r);
    assert_null(plan_cache_get(plan_cache_for(g->current->cat), bad, strlen(bad)));
    strata_graph_free(&g);
}

static void test_eviction_keeps_held_plans(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    const char *first = "RETURN 0 AS x";
    assert_int_equal(query_int(g, first), 0);
    cached_plan *held = plan_cache_get(plan_cache_for(g->current->cat), first, strlen(first));
    assert_non_null(held);
    char q[64];
    for (int i = 1; i <= PLAN_CACHE_ENTRIES + 10; i++) {
        snprintf(q, sizeof q, "RETURN %d AS x", i);
        assert_int_equal(query_int(g, q), i);
    }
    assert_null(plan_cache_get(plan_cache_for(g->current->cat), first, strlen(first)));   /* evicted */
    const cypher_ast *ast = plan_ast(held);              /* still whole */
    assert_non_null(cypher_ast_root(ast));
    plan_release(&held);
    snprintf(q, sizeof q, "RETURN %d AS x", PLAN_CACHE_ENTRIES + 10);
    cached_plan *recent = plan_cache_get(plan_cache_for(g->current->cat), q, strlen(q));
    assert_non_null(recent);
    plan_release(&recent);
    plan_cache_clear(plan_cache_for(g->current->cat));
    assert_null(plan_cache_get(plan_cache_for(g->current->cat), q, strlen(q)));
    strata_graph_free(&g);
}

/* The same cached text before and after an index exists, and after it is
   dropped: always the right rows. */
static void test_valid_across_schema_changes(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "UNWIND range(1, 100) AS i CREATE (:P {k: i % 10})", NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    const char *q = "MATCH (n:P {k: 3}) RETURN count(n)";
    assert_int_equal(query_int(g, q), 10);
    assert_int_equal(strata_query(g, "CREATE INDEX FOR (n:P) ON (n.k)", NULL, &r), STRATA_OK);
    strata_result_free(&r);
    assert_int_equal(query_int(g, q), 10);
    assert_int_equal(strata_query(g, "CREATE (:P {k: 3})", NULL, &r), STRATA_OK);
    strata_result_free(&r);
    assert_int_equal(query_int(g, q), 11);
    strata_graph_free(&g);
}

static void test_one_cache_per_graph(void **state)
{
    (void)state;
    strata_graph *g, *h;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    assert_int_equal(strata_graph_new(&h), STRATA_OK);
    const char *q = "RETURN 7 AS x";
    assert_int_equal(query_int(g, q), 7);
    assert_null(plan_cache_get(plan_cache_for(h->current->cat), q, strlen(q)));
    /* a view of g uses g's cache */
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    const char *vq = "RETURN 8 AS x";
    strata_result *r = NULL;
    assert_int_equal(strata_view_query(v, vq, NULL, &r), STRATA_OK);
    strata_result_free(&r);
    strata_view_release(&v);
    cached_plan *p = plan_cache_get(plan_cache_for(g->current->cat), vq, strlen(vq));
    assert_non_null(p);
    plan_release(&p);
    strata_graph_free(&g);
    strata_graph_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_after_first_run),
        cmocka_unit_test(test_eviction_keeps_held_plans),
        cmocka_unit_test(test_valid_across_schema_changes),
        cmocka_unit_test(test_one_cache_per_graph),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
