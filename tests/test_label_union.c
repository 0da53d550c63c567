/* Label disjunctions: (n:A|B) and WHERE n:A OR n:B start from the union
   of the labels' nodes (strata_nodes_by_any_label), each node once, and
   give the rows a filter over every node gives; the disjunction cannot be
   created, merged or mixed with ':' conjunctions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strata.h"
#include "support/model_value.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

/* The first column of every row, as integers joined in order. */
static void column(strata_graph *g, const char *text, char *out, size_t size)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    out[0] = 0;
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        int64_t i = -1;
        strata_value_get_int(row[0], &i);
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%lld,", (long long)i);
    }
    assert_null(strata_result_error(r));
    strata_result_free(&r);
}

static bool plan_has(strata_graph *g, const char *q, const char *what)
{
    char text[512];
    snprintf(text, sizeof text, "EXPLAIN %s", q);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    bool has = false;
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        const char *plan;
        size_t len;
        if (strata_value_get_string(row[3], &plan, &len) == STRATA_OK && strstr(plan, what))
            has = true;
    }
    strata_result_free(&r);
    return has;
}

static const char *const labels[] = {"A", "B", "C", "A:B", "B:C", "A:C", "A:B:C", "D"};

static void build(uint64_t seed, strata_graph **g)
{
    uint64_t s = seed;
    char q[160];
    assert_int_equal(strata_graph_new(g), STRATA_OK);
    int nodes = 40 + (int)below(&s, 60);
    for (int i = 0; i < nodes; i++) {
        snprintf(q, sizeof q, "CREATE (:%s {i: %d})", labels[below(&s, 8)], i);
        run(*g, q);
    }
    for (int i = 0; i < nodes; i++) {
        snprintf(q, sizeof q, "MATCH (a {i: %u}), (b {i: %u}) CREATE (a)-[:R]->(b)",
                 below(&s, (uint32_t)nodes), below(&s, (uint32_t)nodes));
        run(*g, q);
    }
    run(*g, "MATCH (n {i: 3}) DETACH DELETE n");   /* a hole in the ids */
}

/* The union scan against a filter over every node, on random graphs and
   label sets (unknown labels included). */
static void test_union_equals_filter(void **state)
{
    (void)state;
    static const char *const alts[] = {"A|B", "B|C", "A|C|D", "A|Nope", "Nope|Zip", "C|C|B",
                                       "A|:B"};
    static const char *const lists[] = {"'A','B'", "'B','C'", "'A','C','D'", "'A','Nope'",
                                        "'Nope','Zip'", "'C','B'", "'A','B'"};
    for (uint64_t seed = 1; seed <= 20; seed++) {
        strata_graph *g;
        build(seed * 7919, &g);
        for (size_t k = 0; k < sizeof alts / sizeof *alts; k++) {
            char q1[256], q2[256], q3[256], ref[256], a[8192], b[8192], c[8192], d[8192];
            snprintf(q1, sizeof q1, "MATCH (n:%s) RETURN n.i ORDER BY n.i", alts[k]);
            snprintf(ref, sizeof ref, "MATCH (n) WHERE any(l IN labels(n) WHERE l IN [%s]) "
                     "RETURN n.i ORDER BY n.i", lists[k]);
            column(g, q1, a, sizeof a);
            column(g, ref, b, sizeof b);
            assert_string_equal(a, b);
            /* the WHERE form, where every alternative is one label */
            if (!strchr(alts[k], ':')) {
                char where[128] = "";
                const char *p = alts[k];
                while (*p) {
                    size_t len = strcspn(p, "|");
                    size_t used = strlen(where);
                    snprintf(where + used, sizeof where - used, "%sn:%.*s", used ? " OR " : "",
                             (int)len, p);
                    p += len + (p[len] == '|');
                }
                snprintf(q2, sizeof q2, "MATCH (n) WHERE %s RETURN n.i ORDER BY n.i", where);
                column(g, q2, c, sizeof c);
                assert_string_equal(c, b);
                assert_true(plan_has(g, q2, "NodeByLabelUnionScan") ||
                            plan_has(g, q2, "Empty"));
            }
            /* as either end of a relationship */
            snprintf(q3, sizeof q3,
                     "MATCH (x:%s)-[:R]->(y:%s) RETURN x.i * 1000 + y.i AS v ORDER BY v",
                     alts[k], alts[(k + 1) % 7]);
            column(g, q3, c, sizeof c);
            snprintf(ref, sizeof ref,
                     "MATCH (x)-[:R]->(y) WHERE any(l IN labels(x) WHERE l IN [%s]) AND "
                     "any(l IN labels(y) WHERE l IN [%s]) RETURN x.i * 1000 + y.i AS v "
                     "ORDER BY v", lists[k], lists[(k + 1) % 7]);
            column(g, ref, d, sizeof d);
            assert_string_equal(c, d);
        }
        strata_graph_free(&g);
    }
}

static void test_iterator(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "CREATE (:A), (:B), (:A:B), (:C), (:A:C), (:B)");
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    strata_token a, b, c;
    assert_int_equal(strata_token_lookup(v, STRATA_LABEL, "A", &a), STRATA_OK);
    assert_int_equal(strata_token_lookup(v, STRATA_LABEL, "B", &b), STRATA_OK);
    assert_int_equal(strata_token_lookup(v, STRATA_LABEL, "C", &c), STRATA_OK);
    strata_token ab[] = {b, a, b};
    strata_node_iter *it;
    assert_int_equal(strata_nodes_by_any_label(v, ab, 3, &it), STRATA_OK);
    /* a later write does not show in the held view's iteration */
    run(g, "CREATE (:A)");
    strata_id id, want[] = {0, 1, 2, 4, 5}, got[8];
    size_t n = 0;
    while (strata_node_iter_next(it, &id))
        got[n++] = id;
    strata_node_iter_free(&it);
    assert_int_equal(n, 5);
    assert_memory_equal(got, want, sizeof want);
    strata_token bad[] = {a, 9999};
    assert_int_equal(strata_nodes_by_any_label(v, bad, 2, &it), STRATA_ENOTFOUND);
    assert_int_equal(strata_nodes_by_any_label(v, ab, 0, &it), STRATA_EINVAL);
    assert_int_equal(strata_nodes_by_any_label(v, NULL, 1, &it), STRATA_EINVAL);
    strata_token many[STRATA_ANY_LABEL_MAX + 1] = {0};
    assert_int_equal(strata_nodes_by_any_label(v, many, STRATA_ANY_LABEL_MAX + 1, &it),
                     STRATA_EINVAL);
    strata_view_release(&v);
    strata_graph_free(&g);
}

static void expect_error(strata_graph *g, const char *q, const char *detail)
{
    strata_result *r = NULL;
    assert_int_not_equal(strata_query(g, q, NULL, &r), STRATA_OK);
    const strata_query_error *e = strata_result_error(r);
    assert_non_null(e);
    if (strcmp(e->detail, detail) != 0)
        fail_msg("%s: %s (%s)", q, e->detail, e->message);
    strata_result_free(&r);
}

static void test_refused(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    expect_error(g, "CREATE (n:A|B)", "InvalidLabelExpression");
    expect_error(g, "MERGE (n:A|B)", "InvalidLabelExpression");
    expect_error(g, "MATCH (n:A|B:C) RETURN n", "InvalidLabelExpression");
    expect_error(g, "MATCH (n:A|) RETURN n", "UnexpectedSyntax");
    /* nothing was created */
    char out[64];
    column(g, "MATCH (n) RETURN count(n)", out, sizeof out);
    assert_string_equal(out, "0,");
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_union_equals_filter),
        cmocka_unit_test(test_iterator),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
