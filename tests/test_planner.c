/* The planner: index seeks, range seeks and the choice of the end a walk
   starts from give exactly the rows a scan gives, and EXPLAIN / PROFILE
   say which access was chosen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/graph_impl.h"   /* reads the graph's catalog */
#include "query/plan_cache.h"
#include "storage/mem.h"
#include "strata.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    strata_status s = strata_query(g, text, NULL, &r);
    if (s != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

/* The rows of a query rendered as "id id ...;" lines, in the order the
   query gives (queries here ORDER BY). */
static char *rows_of(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    size_t cap = 1 << 16, used = 0;
    char *out = calloc(1, cap);
    assert_non_null(out);
    const strata_value *const *row;
    size_t ncols = strata_result_columns(r, NULL);
    while (strata_result_next(r, &row)) {
        for (size_t c = 0; c < ncols; c++) {
            int64_t i = 0;
            strata_id id;
            if (strata_value_get_id(row[c], &id) == STRATA_OK)
                i = (int64_t)id;
            else
                strata_value_get_int(row[c], &i);
            used += (size_t)snprintf(out + used, cap - used, "%lld ", (long long)i);
            assert_true(used < cap);
        }
        used += (size_t)snprintf(out + used, cap - used, ";");
    }
    strata_result_free(&r);
    return out;
}

/* The plan column of an EXPLAIN's first Match row. */
static char *first_plan(strata_graph *g, const char *query)
{
    char text[1024];
    snprintf(text, sizeof text, "EXPLAIN %s", query);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    const char *const *names;
    assert_int_equal(strata_result_columns(r, &names), 4);
    assert_string_equal(names[3], "plan");
    const strata_value *const *row;
    const char *s, *op;
    size_t len;
    do {
        assert_true(strata_result_next(r, &row));
        assert_int_equal(strata_value_get_string(row[2], &op, &len), STRATA_OK);
    } while (strcmp(op, "Match") != 0);
    assert_int_equal(strata_value_get_string(row[3], &s, &len), STRATA_OK);
    char *copy = strndup(s, len);
    strata_result_free(&r);
    return copy;
}

static const char *const predicates[] = {
    "n.k = 3", "n.k = 3.0", "3 = n.k", "n.k = 'b'", "n.k = true", "n.k = null", "n.k = [1, 2]",
    "n.k > 5", "n.k >= 5", "n.k < 2.5", "n.k <= -1", "5 < n.k", "2 < n.k <= 7",
    "n.k > 2 AND n.k < 4", "n.k > 'a'", "n.k < 'b'", "n.k > 3 AND n.k < 'z'",
    "n.k STARTS WITH 'a'", "n.k STARTS WITH ''", "n.k STARTS WITH 1", "n.k > null",
    "n.k >= 0 AND n.other = 1", "n.k = p", "n.k > p", "n.k = p + 1",
};

static void setup_mixed(strata_graph *g)
{
    /* numbers, floats, strings, booleans, lists, nulls, missing keys */
    run(g, "UNWIND range(-3, 12) AS i CREATE (:P {k: i, other: i % 2})");
    run(g, "UNWIND [0.5, 2.5, 3.0, 7.25, -1.0] AS f CREATE (:P {k: f})");
    run(g, "UNWIND ['a', 'ab', 'b', 'abc', '', 'z'] AS s CREATE (:P {k: s})");
    run(g, "CREATE (:P {k: true}), (:P {k: false}), (:P {k: [1, 2]}), (:P), (:Q {k: 3})");
}

static void test_seeks_agree_with_scans(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    setup_mixed(g);
    size_t n = sizeof predicates / sizeof *predicates;
    char *before[sizeof predicates / sizeof *predicates];
    char q[256];
    for (size_t i = 0; i < n; i++) {
        snprintf(q, sizeof q, "WITH 4 AS p MATCH (n:P) WHERE %s RETURN id(n) ORDER BY id(n)",
                 predicates[i]);
        before[i] = rows_of(g, q);
        char *plan = first_plan(g, q);
        assert_non_null(strstr(plan, "NodeByLabelScan"));
        free(plan);
    }
    run(g, "CREATE INDEX FOR (n:P) ON (n.k)");
    for (size_t i = 0; i < n; i++) {
        snprintf(q, sizeof q, "WITH 4 AS p MATCH (n:P) WHERE %s RETURN id(n) ORDER BY id(n)",
                 predicates[i]);
        char *after = rows_of(g, q);
        if (strcmp(before[i], after) != 0)
            fail_msg("%s: scan gave %s, seek gave %s", predicates[i], before[i], after);
        char *plan = first_plan(g, q);
        /* every predicate on n.k plans a seek; its values decide when it
           runs whether it narrows or rules everything out */
        if (strstr(predicates[i], "n.k") && !strstr(plan, "IndexSeek"))
            fail_msg("%s: expected a seek, planned %s", predicates[i], plan);
        free(plan);
        free(after);
        free(before[i]);
    }
    strata_graph_free(&g);
}

/* WHERE id(v) = e starts the walk at that one node: the same rows as the
   scan the equivalent id(v) + 0 = e forces, for every kind of e, from
   either end of a path and in a pattern of several parts. */
static void test_id_seeks_agree_with_scans(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    setup_mixed(g);
    run(g, "MATCH (a:P), (b:P) WHERE id(b) = id(a) + 1 OR id(b) = id(a) + 7 CREATE (a)-[:T]->(b)");
    run(g, "MATCH (n:P) WHERE id(n) = 9 DETACH DELETE n");   /* a free slot */
    static const char *const ids[] = { "3", "3.0", "3.5", "-1", "9", "1000", "null", "'3'",
                                       "p", "p - 1", "toInteger('2')", "[3]" };
    static const char *const shapes[] = {
        "MATCH (n) WHERE id(n) = %s RETURN id(n)",
        "MATCH (n:P) WHERE %s = id(n) AND n.k > 0 RETURN id(n)",
        "MATCH (n:Q) WHERE id(n) = %s RETURN id(n)",
        "MATCH (a)-[:T]->(n) WHERE id(n) = %s RETURN id(a), id(n) ORDER BY id(a)",
        "MATCH (n)-[:T]->(b) WHERE id(n) = %s RETURN id(n), id(b) ORDER BY id(b)",
        "MATCH (a), (n) WHERE id(a) = 4 AND id(n) = %s RETURN id(a), id(n)",
    };
    char q[256], fmt[256], scan[256];
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
            snprintf(fmt, sizeof fmt, "WITH 4 AS p %s", shapes[s]);
            snprintf(q, sizeof q, fmt, ids[i]);
            char *seek = rows_of(g, q);
            /* id(n) + 0 is no seek: every node is scanned and filtered */
            char *at = strstr(fmt, "id(n) =");
            if (at) {
                memmove(at + 9, at + 5, strlen(at + 5) + 1);
                memcpy(at, "id(n) + 0", 9);
            } else {
                at = strstr(fmt, "= id(n)");
                memmove(at + 11, at + 7, strlen(at + 7) + 1);
                memcpy(at, "= id(n) + 0", 11);
            }
            snprintf(scan, sizeof scan, fmt, ids[i]);
            char *scanned = rows_of(g, scan);
            if (strcmp(seek, scanned) != 0)
                fail_msg("%s: seek gave %s, scan gave %s", q, seek, scanned);
            free(seek);
            free(scanned);
        }
    char *plan = first_plan(g, "MATCH (a), (b) WHERE id(a) = 1 AND id(b) = $x RETURN a, b");
    if (!strstr(plan, "NodeByIdSeek (a)") || !strstr(plan, "NodeByIdSeek (b)"))
        fail_msg("expected two id seeks, planned %s", plan);
    free(plan);
    strata_graph_free(&g);
}

/* n.key keeps its key's token in the cached plan after the first row; a
   key no one had when the plan first ran is looked up again, so a later
   write that creates it shows. */
static void test_property_tokens_in_cached_plans(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 5) AS i CREATE (:P {a: i})");
    const char *q = "MATCH (n:P) RETURN n.fresh, n.a ORDER BY n.a";
    char *before = rows_of(g, q);
    assert_string_equal(before, "0 1 ;0 2 ;0 3 ;0 4 ;0 5 ;");   /* null reads as 0 here */
    run(g, "MATCH (n:P) SET n.fresh = n.a * 10");
    char *after = rows_of(g, q);
    assert_string_equal(after, "10 1 ;20 2 ;30 3 ;40 4 ;50 5 ;");
    /* a view of the older state, through the same cached plan */
    strata_graph *b;
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_branch(v, &b), STRATA_OK);
    strata_view_release(&v);
    run(b, "MATCH (n:P) REMOVE n.fresh");
    char *branch = rows_of(b, q);
    assert_string_equal(branch, "0 1 ;0 2 ;0 3 ;0 4 ;0 5 ;");
    char *still = rows_of(g, q);
    assert_string_equal(still, after);
    free(before);
    free(after);
    free(branch);
    free(still);
    strata_graph_free(&b);
    strata_graph_free(&g);
}

/* A composite index serves equality on all its keys; the map form too. */
static void test_composite_and_map_seeks(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 200) AS i CREATE (:C {a: i % 10, b: i % 7, i: i})");
    const char *q = "MATCH (n:C {a: 3}) WHERE n.b = 5 RETURN n.i ORDER BY n.i";
    char *scan = rows_of(g, q);
    run(g, "CREATE INDEX FOR (n:C) ON (n.a, n.b)");
    char *seek = rows_of(g, q);
    assert_string_equal(scan, seek);
    char *plan = first_plan(g, q);
    assert_non_null(strstr(plan, "NodeIndexSeek (n:C {a, b})"));
    free(plan);
    free(scan);
    free(seek);
    strata_graph_free(&g);
}

/* With nothing bound, the walk starts at the cheaper end: the indexed
   one, or the one with the rarer label. */
static void test_start_from_the_cheaper_end(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 300) AS i CREATE (:Person {i: i})-[:LIVES_IN]->(:City {name: 'c' + (i % 5)})");
    run(g, "CREATE (:Rare {i: 1})");
    run(g, "MATCH (p:Person {i: 7}), (r:Rare) CREATE (p)-[:LIKES]->(r)");
    const char *q1 = "MATCH (p:Person)-[:LIVES_IN]->(c:City {name: 'c2'}) RETURN id(p) ORDER BY id(p)";
    const char *q2 = "MATCH (p:Person)-[:LIKES]->(r:Rare) RETURN id(p) ORDER BY id(p)";
    char *a1 = rows_of(g, q1), *a2 = rows_of(g, q2);
    char *plan = first_plan(g, q2);
    assert_non_null(strstr(plan, "NodeByLabelScan (r:Rare)"));
    assert_non_null(strstr(plan, "from the last node"));
    free(plan);
    run(g, "CREATE INDEX FOR (c:City) ON (c.name)");
    plan = first_plan(g, q1);
    assert_non_null(strstr(plan, "NodeIndexSeek (c:City {name})"));
    assert_non_null(strstr(plan, "from the last node"));
    free(plan);
    char *b1 = rows_of(g, q1), *b2 = rows_of(g, q2);
    assert_string_equal(a1, b1);
    assert_string_equal(a2, b2);
    assert_true(strlen(b1) > 0);
    free(a1), free(a2), free(b1), free(b2);
    /* several parts: the cheapest first, then those it binds */
    const char *q3 = "MATCH (p:Person)-[:LIKES]->(x), (x:Rare) RETURN id(p)";
    plan = first_plan(g, q3);
    assert_non_null(strstr(plan, "NodeByLabelScan (x:Rare) ~1 rows; Bound (x), from the last node"));
    free(plan);
    char *c3 = rows_of(g, q3);
    char *d3 = rows_of(g, "MATCH (p:Person)-[:LIKES]->(x:Rare) RETURN id(p)");
    assert_string_equal(c3, d3);
    assert_true(strlen(c3) > 0);
    free(c3), free(d3);
    strata_graph_free(&g);
}

/* EXPLAIN writes nothing and returns the plan; PROFILE runs the statement
   and counts rows per clause. */
static void test_explain_and_profile(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 10) AS i CREATE (:N {i: i})");
    run(g, "EXPLAIN MATCH (n:N) WITH count(n) AS c CREATE (:Made {c: c})");
    char *rows = rows_of(g, "MATCH (m:Made) RETURN count(m)");
    assert_string_equal(rows, "0 ;");
    free(rows);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "PROFILE MATCH (n:N) WHERE n.i > 3 CREATE (:Made) RETURN count(*)",
                                  NULL, &r), STRATA_OK);
    const char *const *names;
    assert_int_equal(strata_result_columns(r, &names), 6);
    assert_string_equal(names[4], "rows");
    const strata_value *const *row;
    int64_t counts[3] = {0}, i = 0;
    while (strata_result_next(r, &row) && i < 3)
        strata_value_get_int(row[4], &counts[i++]);
    assert_int_equal(i, 3);
    assert_int_equal(counts[0], 7);   /* MATCH ... WHERE */
    assert_int_equal(counts[1], 7);   /* CREATE */
    assert_int_equal(counts[2], 1);   /* RETURN count(*) */
    strata_query_stats st;
    strata_result_stats(r, &st);
    assert_int_equal(st.nodes_created, 7);
    strata_result_free(&r);
    rows = rows_of(g, "MATCH (m:Made) RETURN count(m)");
    assert_string_equal(rows, "7 ;");
    free(rows);
    strata_graph_free(&g);
}

/* The rows of column c of a PROFILE, in step order. */
static void profile_rows(strata_graph *g, const char *query, int64_t *rows, size_t n)
{
    char text[512];
    snprintf(text, sizeof text, "PROFILE %s", query);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    const strata_value *const *row;
    size_t i = 0;
    while (strata_result_next(r, &row) && i < n)
        assert_int_equal(strata_value_get_int(row[4], &rows[i++]), STRATA_OK);
    assert_int_equal(i, n);
    strata_result_free(&r);
}

/* MATCH, UNWIND and plain projections stream: a LIMIT stops the clauses
   before it, which PROFILE's row counts show; and the results are those
   of clause-by-clause evaluation. */
static void test_pipeline_stops_at_limit(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 5000) AS i CREATE (:N {i: i})");
    int64_t rows[3];
    profile_rows(g, "MATCH (n:N) RETURN n.i LIMIT 3", rows, 2);
    assert_int_equal(rows[0], 3);
    assert_int_equal(rows[1], 3);
    profile_rows(g, "MATCH (n:N) WITH n WHERE n.i > 10 RETURN n.i SKIP 1 LIMIT 2", rows, 3);
    assert_int_equal(rows[0], 13);   /* 10 filtered, 1 skipped, 2 kept */
    assert_int_equal(rows[2], 2);
    profile_rows(g, "UNWIND range(1, 1000000) AS x WITH x LIMIT 4 RETURN x", rows, 3);
    assert_int_equal(rows[0], 4);
    char *got = rows_of(g, "MATCH (n:N) WITH n WHERE n.i > 10 RETURN n.i SKIP 1 LIMIT 2");
    assert_string_equal(got, "12 ;13 ;");
    free(got);
    /* LIMIT 0 reads nothing */
    profile_rows(g, "MATCH (n:N) RETURN n LIMIT 0", rows, 2);
    assert_int_equal(rows[0], 0);
    strata_graph_free(&g);
}

/* Relationship uniqueness holds within a MATCH, not across two streaming
   MATCH clauses; OPTIONAL MATCH keeps rows with nothing matched. */
static void test_pipeline_semantics(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "CREATE (:A {i: 1})-[:R]->(:B {i: 2})-[:R]->(:C {i: 3}), (:A {i: 4})");
    char *got = rows_of(g, "MATCH ()-[r]->() MATCH ()-[s]->() RETURN count(*)");
    assert_string_equal(got, "4 ;");
    free(got);
    got = rows_of(g, "MATCH ()-[r]->()-[s]->() RETURN count(*)");
    assert_string_equal(got, "1 ;");
    free(got);
    got = rows_of(g, "MATCH (a:A) OPTIONAL MATCH (a)-[:R]->(b) RETURN a.i, b.i ORDER BY a.i");
    assert_string_equal(got, "1 2 ;4 0 ;");   /* null renders as 0 here */
    free(got);
    got = rows_of(g, "UNWIND [1, 2] AS x MATCH (n {i: x}) UNWIND [x, x] AS y RETURN count(*)");
    assert_string_equal(got, "4 ;");
    free(got);
    strata_graph_free(&g);
}

/* Every allocation of a pipelined query, of EXPLAIN and of PROFILE fails
   in turn: each failure is OutOfMemory and frees what it took. */
static void test_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 50) AS i CREATE (:N {i: i})-[:R]->(:M {i: i})");
    run(g, "CREATE INDEX FOR (n:N) ON (n.i)");
    const char *queries[] = {
        "MATCH (n:N)-[:R]->(m) WHERE n.i > 10 WITH n, m UNWIND [1, 2] AS k "
        "MATCH (n)-->(x) RETURN n.i, m.i, k SKIP 3 LIMIT 5",
        "EXPLAIN MATCH (n:N {i: 3})-->(m) RETURN m",
        "PROFILE MATCH (n:N) WHERE n.i < 5 RETURN count(n)",
        "CALL db.indexes() YIELD name RETURN name",
    };
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        plan_cache_clear(plan_cache_for(g->current->cat));
        size_t base = mem_ctx_bytes(mem_scratch());
        for (long k = 1;; k++) {
            strata_result *r = NULL;
            mem_fail_at(k);
            strata_status st = strata_query(g, queries[q], NULL, &r);
            bool failed = mem_fail_count() >= k;
            mem_fail_clear();
            strata_result_free(&r);
            plan_cache_clear(plan_cache_for(g->current->cat));
            assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
            if (!failed) {
                assert_int_equal(st, STRATA_OK);
                break;
            }
            assert_int_equal(st, STRATA_ENOMEM);
        }
    }
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    assert_int_equal(strata_node_count(v), 100);
    strata_view_release(&v);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeks_agree_with_scans),
        cmocka_unit_test(test_id_seeks_agree_with_scans),
        cmocka_unit_test(test_property_tokens_in_cached_plans),
        cmocka_unit_test(test_composite_and_map_seeks),
        cmocka_unit_test(test_start_from_the_cheaper_end),
        cmocka_unit_test(test_explain_and_profile),
        cmocka_unit_test(test_pipeline_stops_at_limit),
        cmocka_unit_test(test_pipeline_semantics),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
