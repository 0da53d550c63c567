/* Long is not deep: flat chains of thousands of terms (+, -, *, OR, AND,
   XOR, comparison chains, string and list concatenation) parse, check and
   evaluate at sizes 10, 100, 1,000 and 10,000, on a thread with a 512 KiB
   stack, where a walk recursing once per term would overflow it; real
   nesting keeps its clean error.  Thousands of RETURN columns work, and
   beyond the documented limit fail with a clear error.  Lists and strings
   a query builds stop at their documented limits with ArgumentError
   instead of filling memory (docs/QUERY.md, Limits). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strata.h"

#define SMALL_STACK (512 * 1024)

static const size_t sizes[] = {10, 100, 1000, 10000};

/* A growable query text. */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        assert_true(n >= 0);
        if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        t->cap = (t->cap + (size_t)n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
        if (t->len == 0)
            t->s[0] = '\0';
    }
}

/* term(0) op term(1) op ... term(n-1) */
static char *chain(const char *before, const char *op, const char *term_fmt, size_t n,
                   const char *after)
{
    text t = {0};
    put(&t, "%s", before);
    for (size_t i = 0; i < n; i++) {
        if (i)
            put(&t, " %s ", op);
        put(&t, term_fmt, (long)i);
    }
    put(&t, "%s", after);
    return t.s;
}

/* The first value of the one row a query returns, as text (an integer, a
   boolean, null; strings and lists by their length), or its error. */
static void run_one(strata_graph *g, const char *query, char *out, size_t cap)
{
    strata_result *r = NULL;
    strata_status st = strata_query(g, query, NULL, &r);
    const strata_query_error *e = strata_result_error(r);
    if (st != STRATA_OK || e) {
        snprintf(out, cap, "error %s: %s", e ? e->code : "?", e ? e->message : "?");
        strata_result_free(&r);
        return;
    }
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    int64_t i;
    bool b;
    const char *s;
    size_t len;
    if (strata_value_get_int(row[0], &i) == STRATA_OK)
        snprintf(out, cap, "%lld", (long long)i);
    else if (strata_value_get_bool(row[0], &b) == STRATA_OK)
        snprintf(out, cap, "%s", b ? "true" : "false");
    else if (strata_value_get_string(row[0], &s, &len) == STRATA_OK)
        snprintf(out, cap, "string of %zu", len);
    else if (strata_value_type(row[0]) == STRATA_LIST)
        snprintf(out, cap, "list of %zu", strata_value_list_len(row[0]));
    else if (strata_value_type(row[0]) == STRATA_NULL)
        snprintf(out, cap, "null");
    else
        snprintf(out, cap, "other");
    assert_false(strata_result_next(r, NULL));
    strata_result_free(&r);
}

static void expect(strata_graph *g, char *query, const char *want)
{
    char got[512];
    run_one(g, query, got, sizeof got);
    if (strcmp(got, want) != 0)
        fail_msg("%.80s...: got %s, want %s", query, got, want);
    free(query);
}

static void flat_chains_of(strata_graph *g, size_t n)
{
    char want[64];
    snprintf(want, sizeof want, "%zu", n);
    expect(g, chain("RETURN ", "+", "1", n, " AS s"), want);
    /* (((1 - 1) - 1) ...): left to right, 2 - n */
    snprintf(want, sizeof want, "%lld", 2 - (long long)n);
    expect(g, chain("RETURN 1 - ", "-", "1", n - 1, " AS s"), want);
    /* mixed precedence: 1 + 2 * 1 * 1 ... - 1, a run inside a run */
    expect(g, chain("RETURN 1 + 2 * ", "*", "1", n, " - 1 AS s"), "2");
    expect(g, chain("RETURN ", "OR", "%ld < 0", n, " AS b"), "false");
    expect(g, chain("RETURN ", "OR", "%ld < 0", n, " OR true AS b"), "true");
    expect(g, chain("RETURN ", "AND", "%ld >= 0", n, " AS b"), "true");
    expect(g, chain("RETURN ", "AND", "%ld >= 0", n, " AND null AS b"), "null");
    /* XOR of n trues: true when n is odd */
    expect(g, chain("RETURN ", "XOR", "true", n, " AS b"), n % 2 ? "true" : "false");
    expect(g, chain("RETURN ", "<", "%ld", n, " AS b"), "true");
    expect(g, chain("RETURN ", "<=", "0", n, " AS b"), "true");
    snprintf(want, sizeof want, "string of %zu", 2 * n);
    expect(g, chain("RETURN ", "+", "'ab'", n, " AS s"), want);
    /* strings, then a number converted, then strings again */
    snprintf(want, sizeof want, "string of %zu", 2 * n + 1);
    expect(g, chain("RETURN ", "+", "'ab'", n, " + 7 AS s"), want);
    snprintf(want, sizeof want, "list of %zu", n);
    expect(g, chain("RETURN ", "+", "[%ld]", n, " AS l"), want);
    snprintf(want, sizeof want, "list of %zu", n + 2);
    expect(g, chain("RETURN 0 + ", "+", "[%ld]", n, " + 1 AS l"), want);
    /* null stops a string run as it stops a pair */
    expect(g, chain("RETURN 'a' + null + ", "+", "'ab'", n, " IS NULL AS b"), "true");
    /* a run inside WHERE, aggregation and ORDER BY (written alike twice:
       the checker compares the two) */
    snprintf(want, sizeof want, "%zu", n);
    expect(g, chain("WITH 1 AS one RETURN ", "+", "one", n, " AS s ORDER BY s"), want);
    text t = {0};
    char *run = chain("", "+", "one", n, "");
    put(&t, "WITH 1 AS one RETURN %s AS s, count(*) AS c ORDER BY %s", run, run);
    expect(g, t.s, want);
    free(run);
    expect(g, chain("UNWIND [1] AS one WITH one WHERE ", "AND", "one = 1", n, " RETURN one"),
           "1");
}

typedef struct job {
    void (*fn)(strata_graph *g);
    strata_graph *g;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    j->fn(j->g);
    return NULL;
}

/* fn(g) on a thread whose stack is 512 KiB. */
static void on_small_stack(void (*fn)(strata_graph *g), strata_graph *g)
{
    pthread_attr_t attr;
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, SMALL_STACK), 0);
    job j = {fn, g};
    pthread_t t;
    assert_int_equal(pthread_create(&t, &attr, run_job, &j), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_attr_destroy(&attr);
}

static void all_flat_chains(strata_graph *g)
{
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        flat_chains_of(g, sizes[i]);
}

static void test_flat_chains(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    on_small_stack(all_flat_chains, g);
    strata_graph_free(&g);
}

/* The same on a view (strata_view_query). */
static void test_flat_chains_on_a_view(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    char *q = chain("RETURN ", "+", "%ld", 10000, " AS s");
    strata_result *r = NULL;
    assert_int_equal(strata_view_query(v, q, NULL, &r), STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    int64_t s;
    assert_int_equal(strata_value_get_int(row[0], &s), STRATA_OK);
    assert_int_equal(s, 10000LL * 9999 / 2);
    strata_result_free(&r);
    free(q);
    strata_view_release(&v);
    strata_graph_free(&g);
}

/* A run of ANDs is still read for the start of a pattern: an index seek
   on one of its terms. */
static void test_and_chain_still_plans_a_seek(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "CREATE INDEX FOR (n:P) ON (n.k)", NULL, &r), STRATA_OK);
    strata_result_free(&r);
    assert_int_equal(strata_query(g, "UNWIND range(1, 100) AS i CREATE (:P {k: i, a: i % 2})",
                                  NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    const char *q = "EXPLAIN MATCH (n:P) WHERE n.a = 1 AND n.k = 7 AND n.a < 5 RETURN n";
    assert_int_equal(strata_query(g, q, NULL, &r), STRATA_OK);
    const strata_value *const *row;
    bool seek = false;
    while (strata_result_next(r, &row)) {
        const char *s;
        size_t len;
        if (strata_value_get_string(row[3], &s, &len) == STRATA_OK && strstr(s, "IndexSeek"))
            seek = true;
    }
    assert_true(seek);
    strata_result_free(&r);
    char got[64];
    run_one(g, "MATCH (n:P) WHERE n.a = 1 AND n.k = 7 AND n.a < 5 RETURN n.k", got, sizeof got);
    assert_string_equal(got, "7");
    strata_graph_free(&g);
}

static void nesting_fails_cleanly(strata_graph *g)
{
    text t = {0};
    put(&t, "RETURN ");
    for (int i = 0; i < 100000; i++)
        put(&t, "(1 + ");
    put(&t, "1");
    for (int i = 0; i < 100000; i++)
        put(&t, ")");
    char got[512];
    run_one(g, t.s, got, sizeof got);
    free(t.s);
    assert_non_null(strstr(got, "error SyntaxError"));
    assert_non_null(strstr(got, "too deeply nested"));
}

static void test_real_nesting_keeps_its_error(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    nesting_fails_cleanly(g);
    strata_graph_free(&g);
}

/* RETURN 0 AS c0, 1 AS c1, ...: n columns with their values. */
static void columns_of(strata_graph *g, size_t n, const char *clause)
{
    text t = {0};
    put(&t, "%s ", clause);
    for (size_t i = 0; i < n; i++)
        put(&t, "%s%zu AS c%zu", i ? ", " : "", i, i);
    if (strcmp(clause, "WITH") == 0)
        put(&t, " RETURN *");
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, t.s, NULL, &r), STRATA_OK);
    free(t.s);
    const char *const *names;
    assert_int_equal(strata_result_columns(r, &names), n);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    for (size_t i = 0; i < n; i++) {
        /* whatever the order of the columns, each holds its own value */
        int64_t v;
        assert_int_equal(strata_value_get_int(row[i], &v), STRATA_OK);
        char want[32];
        snprintf(want, sizeof want, "c%lld", (long long)v);
        assert_string_equal(names[i], want);
    }
    strata_result_free(&r);
}

static void test_many_columns(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        columns_of(g, sizes[i], "RETURN");
        columns_of(g, sizes[i], "WITH");
    }
    /* beyond the limit: a clear error */
    text t = {0};
    put(&t, "RETURN ");
    for (size_t i = 0; i < 16385; i++)
        put(&t, "%s%zu AS c%zu", i ? ", " : "", i, i);
    char got[512];
    run_one(g, t.s, got, sizeof got);
    free(t.s);
    assert_string_equal(got, "error SemanticError: too many variables in scope (the limit is "
                             "16384)");
    strata_graph_free(&g);
}

static void expect_error(strata_graph *g, const char *query, const char *code, const char *part)
{
    char got[512];
    run_one(g, query, got, sizeof got);
    if (strncmp(got, "error ", 6) != 0 || strncmp(got + 6, code, strlen(code)) != 0 ||
        !strstr(got, part))
        fail_msg("%s: got %s, want %s with %s", query, got, code, part);
}

static void test_built_lists_and_strings_are_bounded(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    expect_error(g, "RETURN size(range(1, 1000000000000)) AS n", "ArgumentError",
                 "range() list too large: 1000000000000 elements (the limit is 10000000)");
    expect_error(g, "RETURN size(range(1, 10000001)) AS n", "ArgumentError", "too large");
    char got[64];
    run_one(g, "RETURN size(range(1, 10000000)) AS n", got, sizeof got);
    assert_string_equal(got, "10000000");
    expect_error(g, "RETURN size(range(1, 6000000) + range(1, 6000000)) AS n", "ArgumentError",
                 "list too large: 12000000 elements");
    expect_error(g, "WITH range(1, 6000000) AS l RETURN size(l + l + [1]) AS n", "ArgumentError",
                 "list too large");
    /* doubling a string: 2^29 bytes is over the 256 MiB limit */
    expect_error(g, "RETURN size(reduce(s = 'x', i IN range(1, 40) | s + s)) AS n",
                 "ArgumentError", "string too large: 536870912 bytes (the limit is 268435456)");
    /* 1,024 hits, each replaced by 512 KiB */
    expect_error(g, "WITH reduce(s = 'x', i IN range(1, 10) | s + s) AS s, "
                    "reduce(r = 'y', i IN range(1, 19) | r + r) AS r "
                    "RETURN size(replace(s, 'x', r)) AS n",
                 "ArgumentError", "string too large");
    /* a failed statement leaves the graph as it was */
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "CREATE (:Keep)", NULL, &r), STRATA_OK);
    strata_result_free(&r);
    expect_error(g, "CREATE (:Gone) WITH 1 AS one RETURN size(range(1, 100000000)) AS n",
                 "ArgumentError", "too large");
    run_one(g, "MATCH (n) RETURN count(n) AS c", got, sizeof got);
    assert_string_equal(got, "1");
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_chains),
        cmocka_unit_test(test_flat_chains_on_a_view),
        cmocka_unit_test(test_and_chain_still_plans_a_seek),
        cmocka_unit_test(test_real_nesting_keeps_its_error),
        cmocka_unit_test(test_many_columns),
        cmocka_unit_test(test_built_lists_and_strings_are_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
