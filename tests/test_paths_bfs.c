/* Shortest paths by breadth-first search against two references on small
   random graphs: the depth-first search (forced by a WHERE conjunct that
   names the path without being a universal path predicate, which the
   breadth-first search declines), and a brute force that enumerates
   every path with a plain variable-length MATCH and keeps, per pair of
   ends, those of the least length.  Directions, type alternatives,
   bounds, bound and unbound ends, with and without path predicates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

typedef struct rows {
    char **v;
    size_t n, cap;
} rows;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void rows_add(rows *r, const char *s)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        assert_non_null(r->v);
    }
    r->v[r->n] = strdup(s);
    assert_non_null(r->v[r->n]);
    r->n++;
}

static void rows_free(rows *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i]);
    free(r->v);
    *r = (rows){0};
}

/* The rows of a query, each column an integer or a string, "a|b|..",
   sorted. */
static rows query_rows(strata_graph *g, const char *text)
{
    rows out = {0};
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    size_t ncols = strata_result_columns(r, NULL);
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        char line[1024];
        size_t used = 0;
        for (size_t c = 0; c < ncols; c++) {
            int64_t i;
            const char *s;
            size_t len;
            if (strata_value_get_int(row[c], &i) == STRATA_OK)
                used += (size_t)snprintf(line + used, sizeof line - used, "%lld|", (long long)i);
            else if (strata_value_get_string(row[c], &s, &len) == STRATA_OK)
                used += (size_t)snprintf(line + used, sizeof line - used, "%.*s|", (int)len, s);
            else
                used += (size_t)snprintf(line + used, sizeof line - used, "?|");
            assert_true(used < sizeof line);
        }
        rows_add(&out, line);
    }
    if (strata_result_error(r))
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
    if (out.n)
        qsort(out.v, out.n, sizeof *out.v, cmp_str);
    return out;
}

static void assert_rows_equal(const rows *a, const rows *b, const char *what)
{
    size_t i = 0;
    for (; i < a->n && i < b->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0)
            break;
    if (i < a->n || i < b->n)
        fail_msg("%s: %zu vs %zu rows; first difference at %zu: %s vs %s", what, a->n, b->n, i,
                 i < a->n ? a->v[i] : "(none)", i < b->n ? b->v[i] : "(none)");
}

/* The operators EXPLAIN names for the query, all rows' plans joined. */
static char *explain(strata_graph *g, const char *query)
{
    char *text = malloc(strlen(query) + 16);
    assert_non_null(text);
    sprintf(text, "EXPLAIN %s", query);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    free(text);
    char *out = calloc(1, 4096);
    assert_non_null(out);
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        const char *s;
        size_t len;
        assert_int_equal(strata_value_get_string(row[3], &s, &len), STRATA_OK);
        strncat(out, s, len < 1000 ? len : 1000);
        strcat(out, ";");
    }
    strata_result_free(&r);
    return out;
}

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* nodes :N {i, k} and rels :A / :B {w} at random, multi-edges and loops
   included. */
static void random_graph(strata_graph *g, unsigned nodes, unsigned rels)
{
    size_t cap = 64 + 40 * (nodes + rels), used = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    used += (size_t)snprintf(text + used, cap - used, "CREATE ");
    for (unsigned i = 0; i < nodes; i++)
        used += (size_t)snprintf(text + used, cap - used, "%s(n%u:N {i: %u, k: %u})",
                                 i ? ", " : "", i, i, rnd(4));
    for (unsigned e = 0; e < rels; e++)
        used += (size_t)snprintf(text + used, cap - used, ", (n%u)-[:%s {w: %u}]->(n%u)",
                                 rnd(nodes), rnd(3) ? "A" : "B", rnd(4), rnd(nodes));
    assert_true(used < cap);
    run(g, text);
    free(text);
}

static const char *const dirs[][2] = {{"-", "->"}, {"<-", "-"}, {"-", "-"}};
static const char *const types[] = {"", ":A", ":A|B", ":B|A|A"};
static const char *const bounds[] = {"*", "*..2", "*1..3", "*0..", "*0..2", "*..5", "*1"};
/* the ends: both bound, the first, the last, neither */
static const char *const ends[] = {
    "MATCH (a:N), (b:N) WHERE a.i %% 3 = 0 AND b.i %% 2 = 1 ",
    "MATCH (a:N) WHERE a.i < 4 ",
    "MATCH (b:N) WHERE b.i > 8 ",
    "",
};
/* path predicates: none, or universal ones the search applies */
static const char *const preds[] = {
    "",
    "all(x IN nodes(p) WHERE x.k <> 0)",
    "none(y IN relationships(p) WHERE y.w = 3)",
    "all(x IN nodes(p) WHERE x.k < 3) AND none(y IN r WHERE y.w = 0) AND b.k <> 2",
};

static void query_text(char *buf, size_t size, const char *fn, size_t d, size_t t, size_t bnd,
                       size_t e, size_t pr, bool reference, const char *ret)
{
    const char *pred = preds[pr];
    snprintf(buf, size, "%sMATCH p = %s((a)%s[r%s%s]%s(b)) %s%s%s%s%s RETURN %s", ends[e], fn,
             dirs[d][0], types[t], bounds[bnd], dirs[d][1], *pred || reference ? "WHERE " : "",
             pred, *pred && reference ? " AND " : "", reference ? "length(p) >= 0" : "", "",
             ret);
    /* ends[] holds %% for the format above: undo it */
    for (char *s = strstr(buf, "%%"); s; s = strstr(s, "%%"))
        memmove(s, s + 1, strlen(s));
}

#define RET_ENDS "id(a), id(b), length(p)"
#define RET_PATH                                                                               \
    "id(a), id(b), length(p), reduce(s = '', y IN relationships(p) | s + toString(id(y)) + ',')"

/* BFS against the depth-first reference, for shortestPath (one path per
   pair of ends, which one is free: compared by ends and length) and
   allShortestPaths (every path). */
static void test_bfs_matches_depth_first(void **state)
{
    (void)state;
    rng_state = 0x9E3779B97F4A7C15ull;
    char q[2048], ref[2048];
    size_t checked = 0, fallback_seen = 0;
    for (int round = 0; round < 4; round++) {
        strata_graph *g;
        assert_int_equal(strata_graph_new(&g), STRATA_OK);
        random_graph(g, 11, 12 + 5 * (unsigned)round);
        for (size_t d = 0; d < 3; d++)
            for (size_t t = 0; t < 4; t++)
                for (size_t bnd = 0; bnd < 7; bnd++)
                    for (size_t e = 0; e < 4; e++)
                        for (size_t pr = 0; pr < 4; pr++) {
                            if ((d + t + bnd + e + pr + (size_t)round) % 3 != 0)
                                continue;   /* a third of the grid per round */
                            if (d == 2 && round > 0 && (bnd == 0 || bnd == 3 || bnd == 5))
                                continue;   /* the reference is exponential there */
                            for (int all = 0; all < 2; all++) {
                                const char *fn = all ? "allShortestPaths" : "shortestPath";
                                const char *ret = all ? RET_PATH : RET_ENDS;
                                query_text(q, sizeof q, fn, d, t, bnd, e, pr, false, ret);
                                query_text(ref, sizeof ref, fn, d, t, bnd, e, pr, true, ret);
                                char *plan = explain(g, q);
                                if (!strstr(plan, "BFS"))
                                    fail_msg("%s: not breadth first: %s", q, plan);
                                free(plan);
                                plan = explain(g, ref);
                                fallback_seen += strstr(plan, "deepening") != NULL;
                                free(plan);
                                rows got = query_rows(g, q), want = query_rows(g, ref);
                                assert_rows_equal(&got, &want, q);
                                rows_free(&got);
                                rows_free(&want);
                                checked++;
                            }
                        }
        strata_graph_free(&g);
    }
    assert_true(checked > 500);
    assert_int_equal(fallback_seen, checked);
}

/* allShortestPaths against every path of the same pattern, kept where its
   length is the least for its two ends (the ends differ, or the minimum
   is 0: a path back to its start is no shortest path). */
static void test_all_shortest_matches_brute_force(void **state)
{
    (void)state;
    rng_state = 12345;
    static const char *const small_bounds[] = {"*..3", "*1..4", "*0..3", "*", "*0.."};
    char q[2048], brute[2048];
    size_t nonempty = 0;
    for (int round = 0; round < 3; round++) {
        strata_graph *g;
        assert_int_equal(strata_graph_new(&g), STRATA_OK);
        random_graph(g, 9, 11 + 2 * (unsigned)round);
        for (size_t d = 0; d < 3; d++)
            for (size_t t = 0; t < 3; t++)
                for (size_t b = 0; b < 5; b++)
                    for (size_t pr = 0; pr < 4; pr++) {
                        if (b >= 3 && d == 2)
                            continue;   /* unbounded undirected trails: too many */
                        const char *pred = preds[pr];
                        bool zero = strstr(small_bounds[b], "*0") != NULL;
                        snprintf(q, sizeof q,
                                 "MATCH p = allShortestPaths((a)%s[r%s%s]%s(b)) %s%s%s%s RETURN %s",
                                 dirs[d][0], types[t], small_bounds[b], dirs[d][1],
                                 *pred || !zero ? "WHERE " : "", pred,
                                 *pred && !zero ? " AND " : "", zero ? "" : "a <> b", RET_PATH);
                        snprintf(brute, sizeof brute,
                                 "MATCH p = (a)%s[r%s%s]%s(b) %s%s%s%s RETURN %s", dirs[d][0],
                                 types[t], small_bounds[b], dirs[d][1],
                                 *pred || !zero ? "WHERE " : "", pred,
                                 *pred && !zero ? " AND " : "", zero ? "" : "a <> b", RET_PATH);
                        rows got = query_rows(g, q), all = query_rows(g, brute), want = {0};
                        /* per (a, b) the least length; rows sort by "a|b|" */
                        for (size_t i = 0; i < all.n;) {
                            long a, bb, len, min = -1;
                            size_t j = i;
                            char key[64];
                            sscanf(all.v[i], "%ld|%ld|", &a, &bb);
                            snprintf(key, sizeof key, "%ld|%ld|", a, bb);
                            for (; j < all.n && strncmp(all.v[j], key, strlen(key)) == 0; j++) {
                                sscanf(all.v[j], "%ld|%ld|%ld|", &a, &bb, &len);
                                if (min < 0 || len < min)
                                    min = len;
                            }
                            for (; i < j; i++) {
                                sscanf(all.v[i], "%ld|%ld|%ld|", &a, &bb, &len);
                                if (len == min)
                                    rows_add(&want, all.v[i]);
                            }
                        }
                        if (want.n)
                            qsort(want.v, want.n, sizeof *want.v, cmp_str);
                        assert_rows_equal(&got, &want, q);
                        nonempty += got.n > 0;
                        rows_free(&got);
                        rows_free(&all);
                        rows_free(&want);
                    }
        strata_graph_free(&g);
    }
    assert_true(nonempty > 100);
}

/* Pattern predicates over one variable-length relationship are answered
   by a reachability search; the reference enumerates the same pattern in
   a pattern comprehension.  Both ends bound, one end, a node back to
   itself. */
static void test_reachability_matches_enumeration(void **state)
{
    (void)state;
    rng_state = 777;
    static const char *const rbounds[] = {"*", "*..2", "*1..3", "*0..", "*0..2", "*1"};
    static const char *const shapes[][2] = {
        {"MATCH (a:N), (b:N) WHERE %s RETURN id(a), id(b)", "(a)%s[%s%s]%s(b)"},
        {"MATCH (a:N) WHERE %s RETURN id(a)", "(a)%s[%s%s]%s(:N {k: 2})"},
        {"MATCH (a:N) WHERE %s RETURN id(a)", "(a)%s[%s%s]%s(a)"},
        {"MATCH (b:N) WHERE %s RETURN id(b)", "(:N {k: 1})%s[%s%s]%s(b)"},
        {"MATCH (a:N), (b) WHERE %s RETURN id(a), id(b)", "(a)%s[%s%s]%s(b:N {k: 3})"},
        {"MATCH (a:N), (b) WHERE %s RETURN id(a), id(b)", "(a:N {k: 0})%s[%s%s]%s(b:Missing)"},
    };
    char pat[256], pred[512], q[1024], ref[1024];
    size_t found = 0;
    for (int round = 0; round < 3; round++) {
        strata_graph *g;
        assert_int_equal(strata_graph_new(&g), STRATA_OK);
        random_graph(g, 10, 9 + 4 * (unsigned)round);
        for (size_t d = 0; d < 3; d++)
            for (size_t t = 0; t < 3; t++)
                for (size_t b = 0; b < 6; b++)
                    for (size_t sh = 0; sh < 6; sh++) {
                        if (d == 2 && (b == 0 || b == 3) && round > 0)
                            continue;   /* the enumeration is exponential there */
                        snprintf(pat, sizeof pat, shapes[sh][1], dirs[d][0], types[t],
                                 rbounds[b], dirs[d][1]);
                        snprintf(q, sizeof q, shapes[sh][0], pat);
                        snprintf(pred, sizeof pred, "size([%s | 1]) > 0", pat);
                        snprintf(ref, sizeof ref, shapes[sh][0], pred);
                        rows got = query_rows(g, q), want = query_rows(g, ref);
                        assert_rows_equal(&got, &want, q);
                        found += got.n;
                        rows_free(&got);
                        rows_free(&want);
                    }
        strata_graph_free(&g);
    }
    assert_true(found > 1000);
}

/* A variable-length MATCH whose rows only matter as distinct rows runs
   breadth first, each end once; the reference names the path, which
   makes the walk enumerate every path. */
static void test_distinct_ends_match_enumeration(void **state)
{
    (void)state;
    rng_state = 4242;
    static const char *const rbounds[] = {"*", "*..2", "*1..3", "*0..", "*0..2", "*1", "*..4"};
    static const char *const shapes[] = {
        "MATCH %s(a:N)%s[%s%s]%s(b) RETURN DISTINCT id(a), id(b)",
        "MATCH %s(a:N)%s[%s%s]%s(b) WHERE b.k <> 1 RETURN id(a), count(DISTINCT b.i)",
        "MATCH %s(a:N {k: 2})%s[%s%s]%s(b) WITH DISTINCT b RETURN id(b)",
        "MATCH (c:N {k: 0}) MATCH %s(c)%s[%s%s]%s(b) RETURN DISTINCT id(c), b.k",
        "MATCH %s(a:N)%s[%s%s]%s(a) RETURN DISTINCT id(a)",
    };
    char q[1024], ref[1024];
    size_t found = 0;
    for (int round = 0; round < 3; round++) {
        strata_graph *g;
        assert_int_equal(strata_graph_new(&g), STRATA_OK);
        random_graph(g, 10, 9 + 4 * (unsigned)round);
        for (size_t d = 0; d < 3; d++)
            for (size_t t = 0; t < 3; t++)
                for (size_t b = 0; b < 7; b++)
                    for (size_t sh = 0; sh < 5; sh++) {
                        if (d == 2 && (b == 0 || b == 3) && round > 0)
                            continue;   /* the enumeration is exponential there */
                        snprintf(q, sizeof q, shapes[sh], "", dirs[d][0], types[t], rbounds[b],
                                 dirs[d][1]);
                        snprintf(ref, sizeof ref, shapes[sh], "p = ", dirs[d][0], types[t],
                                 rbounds[b], dirs[d][1]);
                        char *plan = explain(g, q);
                        if (!strstr(plan, "distinct ends"))
                            fail_msg("%s: not breadth first: %s", q, plan);
                        free(plan);
                        plan = explain(g, ref);
                        assert_null(strstr(plan, "distinct ends"));
                        free(plan);
                        rows got = query_rows(g, q), want = query_rows(g, ref);
                        assert_rows_equal(&got, &want, q);
                        found += got.n;
                        rows_free(&got);
                        rows_free(&want);
                    }
        strata_graph_free(&g);
    }
    assert_true(found > 1000);
}

/* On a complete digraph of 12 nodes the paths are far too many to
   enumerate; reachability and shortest paths answer at once. */
static void test_dense_graph_answers(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 12) AS i CREATE (:K {i: i})");
    run(g, "MATCH (a:K), (b:K) WHERE a <> b CREATE (a)-[:E]->(b)");
    rows got = query_rows(g, "MATCH (a:K) WHERE NOT (a)-[*]->(:Missing) "
                             "AND (a)-[:E*2..]->(a) RETURN count(a)");
    assert_int_equal(got.n, 1);
    assert_string_equal(got.v[0], "12|");
    rows_free(&got);
    got = query_rows(g, "MATCH (a:K {i: 1}), (b:K {i: 2}) "
                        "MATCH p = allShortestPaths((a)-[*]-(b)) RETURN count(p), max(length(p))");
    assert_string_equal(got.v[0], "2|1|");   /* the two relationships between them */
    rows_free(&got);
    got = query_rows(g, "MATCH (a:K {i: 1}) MATCH p = shortestPath((a)-[*]->(b)) "
                        "WHERE none(x IN nodes(p) WHERE x.i = 2) RETURN count(p)");
    assert_string_equal(got.v[0], "10|");
    rows_free(&got);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bfs_matches_depth_first),
        cmocka_unit_test(test_all_shortest_matches_brute_force),
        cmocka_unit_test(test_reachability_matches_enumeration),
        cmocka_unit_test(test_distinct_ends_match_enumeration),
        cmocka_unit_test(test_dense_graph_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
