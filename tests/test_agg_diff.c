/* Differential test of the hash-based operators (grouping, DISTINCT,
   aggregates with DISTINCT, UNION, ORDER BY ... LIMIT) against simple
   references kept here: linear de-duplication with value_equivalent and a
   stable insertion sort with value_order, over random inputs with nulls,
   NaN, ints beside equal floats, strings, lists and maps, with many groups
   and with few.  The outputs must be the same rows in the same order,
   down to which of two equivalent values (1 or 1.0) was kept.
   STRATA_AGG_DIFF_SEEDS sets how many inputs (default 40). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/graph_impl.h"
#include "storage/value.h"
#include "strata.h"
#include "support/model_value.h"
#include "support/sbuf.h"

/* ---- rows out of a query, as values ---- */

typedef struct rows {
    value *cells;       /* n * ncols, owned */
    size_t n, ncols, cap;
} rows;

static rows query_rows(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s\n=> %s", text, strata_result_error(r)->message);
    rows out = {0};
    out.ncols = strata_result_columns(r, NULL);
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        if (out.n == out.cap) {
            out.cap = out.cap ? out.cap * 2 : 16;
            out.cells = realloc(out.cells, out.cap * out.ncols * sizeof *out.cells);
            assert_non_null(out.cells);
        }
        for (size_t c = 0; c < out.ncols; c++)
            out.cells[out.n * out.ncols + c] = value_retain(row[c]->v);
        out.n++;
    }
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    return out;
}

static void rows_free(rows *r)
{
    for (size_t i = 0; i < r->n * r->ncols; i++)
        value_release(&r->cells[i]);
    free(r->cells);
    memset(r, 0, sizeof *r);
}

static value *cell(const rows *r, size_t i, size_t c) { return &r->cells[i * r->ncols + c]; }

/* The same value: equivalent and of the same kind (so 1 is not 1.0). */
static bool same(const value *a, const value *b)
{
    return value_kind(a) == value_kind(b) && value_equivalent(a, b);
}

/* ---- random inputs ---- */

/* A value as Cypher text.  few: keys from a handful (many duplicates);
   else from hundreds (many groups). */
static void random_literal(uint64_t *s, bool few, sbuf *b)
{
    int span = few ? 3 : 400;
    int n = (int)below(s, (uint32_t)span);
    switch (below(s, 14)) {
    case 0: case 1: case 2: case 3: sb_printf(b, "%d", n); break;
    case 4: case 5: sb_printf(b, "%d.0", n); break;            /* equivalent to an int */
    case 6: sb_printf(b, "%d.5", n); break;
    case 7: sb_printf(b, "null"); break;
    case 8: sb_printf(b, "(0.0 / 0.0)"); break;                /* NaN */
    case 9: sb_printf(b, "'s%d'", n); break;
    case 10: sb_printf(b, "[%d, %d.0]", n % 4, n % 3); break;
    case 11: sb_printf(b, chance(s, 50) ? "[%d, null]" : "[%d]", n % 4); break;
    case 12: sb_printf(b, chance(s, 50) ? "{a: %d}" : "{a: %d.0, b: null}", n % 4); break;
    default: sb_printf(b, "%s", chance(s, 50) ? "true" : "false"); break;
    }
}

static void random_list(uint64_t *s, bool few, size_t len, sbuf *b)
{
    sb_printf(b, "[");
    for (size_t i = 0; i < len; i++) {
        if (i)
            sb_printf(b, ", ");
        random_literal(s, few, b);
    }
    sb_printf(b, "]");
}

/* ---- references ---- */

/* Index of the first of xs[0..n) equivalent to v, or n. */
static size_t find_equivalent(const value *const *xs, size_t n, const value *v)
{
    for (size_t i = 0; i < n; i++)
        if (value_equivalent(xs[i], v))
            return i;
    return n;
}

/* The first occurrence of each value, in input order. */
static size_t ref_distinct(const rows *in, const value **out, bool skip_null)
{
    size_t n = 0;
    for (size_t i = 0; i < in->n; i++) {
        const value *v = cell(in, i, 0);
        if (skip_null && value_is_null(v))
            continue;
        if (find_equivalent(out, n, v) == n)
            out[n++] = v;
    }
    return n;
}

/* A stable order of in's rows by column 0 (descending if desc): an
   insertion sort, which never moves a row past an equal one. */
static void ref_sort(const rows *in, bool desc, size_t *order)
{
    for (size_t i = 0; i < in->n; i++) {
        size_t j = i;
        for (; j > 0; j--) {
            int c = value_order(cell(in, order[j - 1], 0), cell(in, i, 0));
            if (!(desc ? c < 0 : c > 0))
                break;
            order[j] = order[j - 1];
        }
        order[j] = i;
    }
}

/* ---- the comparisons ---- */

static void check_distinct(strata_graph *g, const char *list, const rows *in)
{
    sbuf b = {0};
    sb_printf(&b, "UNWIND %s AS x RETURN DISTINCT x", list);
    rows got = query_rows(g, b.p);
    const value **ref = malloc((in->n + 1) * sizeof *ref);
    size_t n = ref_distinct(in, ref, false);
    assert_int_equal(got.n, n);
    for (size_t i = 0; i < n; i++)
        assert_true(same(cell(&got, i, 0), ref[i]));
    rows_free(&got);

    /* count / collect (DISTINCT) skip nulls */
    b.len = 0;
    sb_printf(&b, "UNWIND %s AS x RETURN count(DISTINCT x), collect(DISTINCT x)", list);
    got = query_rows(g, b.p);
    n = ref_distinct(in, ref, true);
    assert_int_equal(got.n, 1);
    assert_int_equal(cell(&got, 0, 0)->u.i, (int64_t)n);
    const value *coll = cell(&got, 0, 1);
    assert_int_equal(value_kind(coll), VAL_LIST);
    assert_int_equal(value_list_len(coll), n);
    for (size_t i = 0; i < n; i++)
        assert_true(same(&value_list_items(coll)[i], ref[i]));
    rows_free(&got);
    free(ref);
    free(b.p);
}

/* Grouping by x and by (x, i % 3), with aggregates over the row index,
   and count(DISTINCT) per group: groups in the order they first appear. */
static void check_grouping(strata_graph *g, const char *list, const rows *in)
{
    sbuf b = {0};
    sb_printf(&b,
              "WITH %s AS l UNWIND range(0, size(l) - 1) AS i WITH i, l[i] AS x "
              "RETURN x, i %% 3 AS m, count(*) AS c, sum(i) AS s, min(i) AS lo, "
              "collect(i) AS seq, count(DISTINCT i %% 5) AS d",
              list);
    rows got = query_rows(g, b.p);
    /* the reference: linear search over the groups so far */
    size_t ngroups = 0;
    size_t *first = malloc((in->n + 1) * sizeof *first);      /* a group's first row */
    size_t *group_of = malloc((in->n + 1) * sizeof *group_of);
    for (size_t i = 0; i < in->n; i++) {
        size_t gi = 0;
        for (; gi < ngroups; gi++)
            if (value_equivalent(cell(in, first[gi], 0), cell(in, i, 0)) &&
                first[gi] % 3 == i % 3)
                break;
        if (gi == ngroups)
            first[ngroups++] = i;
        group_of[i] = gi;
    }
    assert_int_equal(got.n, ngroups);
    for (size_t gi = 0; gi < ngroups; gi++) {
        int64_t c = 0, sum = 0, lo = -1;
        bool mods[5] = {0};
        int64_t d = 0;
        const value *all = cell(&got, gi, 5);
        for (size_t i = 0; i < in->n; i++) {
            if (group_of[i] != gi)
                continue;
            assert_int_equal(value_list_items(all)[c].u.i, (int64_t)i);
            c++;
            sum += (int64_t)i;
            lo = lo < 0 ? (int64_t)i : lo;
            d += !mods[i % 5];
            mods[i % 5] = true;
        }
        assert_true(same(cell(&got, gi, 0), cell(in, first[gi], 0)));
        assert_int_equal(cell(&got, gi, 1)->u.i, (int64_t)(first[gi] % 3));
        assert_int_equal(cell(&got, gi, 2)->u.i, c);
        assert_int_equal(cell(&got, gi, 3)->u.i, sum);
        assert_int_equal(cell(&got, gi, 4)->u.i, lo);
        assert_int_equal(value_list_len(all), (size_t)c);
        assert_int_equal(cell(&got, gi, 6)->u.i, d);
    }
    free(first);
    free(group_of);
    rows_free(&got);
    free(b.p);
}

static void check_union(strata_graph *g, const char *l1, const char *l2, const rows *in1,
                        const rows *in2)
{
    sbuf b = {0};
    sb_printf(&b, "UNWIND %s AS x RETURN x UNION UNWIND %s AS x RETURN x", l1, l2);
    rows got = query_rows(g, b.p);
    const value **ref = malloc((in1->n + in2->n + 1) * sizeof *ref);
    size_t n = ref_distinct(in1, ref, false);
    for (size_t i = 0; i < in2->n; i++)
        if (find_equivalent(ref, n, cell(in2, i, 0)) == n)
            ref[n++] = cell(in2, i, 0);
    assert_int_equal(got.n, n);
    for (size_t i = 0; i < n; i++)
        assert_true(same(cell(&got, i, 0), ref[i]));
    rows_free(&got);
    free(ref);
    free(b.p);
}

/* ORDER BY with and without LIMIT (Top and Sort), ascending and
   descending: the row indices must come out in the reference's order,
   ties in input order. */
static void check_order(strata_graph *g, const char *list, const rows *in, uint64_t *s)
{
    size_t *order = malloc((in->n + 1) * sizeof *order);
    for (int desc = 0; desc < 2; desc++) {
        ref_sort(in, desc, order);
        size_t skip = below(s, 4), limit = below(s, 12);
        bool bounded = chance(s, 75);
        sbuf b = {0};
        sb_printf(&b,
                  "WITH %s AS l UNWIND range(0, size(l) - 1) AS i WITH i, l[i] AS x "
                  "RETURN i ORDER BY x%s SKIP %zu",
                  list, desc ? " DESC" : "", skip);
        if (bounded)
            sb_printf(&b, " LIMIT %zu", limit);
        rows got = query_rows(g, b.p);
        size_t want = in->n > skip ? in->n - skip : 0;
        if (bounded && want > limit)
            want = limit;
        assert_int_equal(got.n, want);
        for (size_t i = 0; i < want; i++)
            assert_int_equal(cell(&got, i, 0)->u.i, (int64_t)order[skip + i]);
        rows_free(&got);
        free(b.p);
    }
    free(order);
}

static void test_hash_operators_match_references(void **state)
{
    (void)state;
    const char *env = getenv("STRATA_AGG_DIFF_SEEDS");
    int seeds = env ? atoi(env) : 40;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    for (int seed = 1; seed <= seeds; seed++) {
        uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)seed;
        bool few = seed % 2 == 0;
        size_t len = below(&s, seed % 5 == 0 ? 4 : 300);
        sbuf l1 = {0}, l2 = {0};
        random_list(&s, few, len, &l1);
        random_list(&s, few, below(&s, 60), &l2);
        sbuf q = {0};
        sb_printf(&q, "UNWIND %s AS x RETURN x", l1.p);
        rows in1 = query_rows(g, q.p);
        q.len = 0;
        sb_printf(&q, "UNWIND %s AS x RETURN x", l2.p);
        rows in2 = query_rows(g, q.p);
        assert_int_equal(in1.n, len);
        check_distinct(g, l1.p, &in1);
        if (len)
            check_grouping(g, l1.p, &in1);
        check_union(g, l1.p, l2.p, &in1, &in2);
        if (len)
            check_order(g, l1.p, &in1, &s);
        rows_free(&in1);
        rows_free(&in2);
        free(q.p);
        free(l1.p);
        free(l2.p);
    }
    strata_graph_free(&g);
}

/* Without grouping keys an empty input is one group; with keys, none. */
static void test_empty_input(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    rows r = query_rows(g, "UNWIND [] AS x RETURN count(DISTINCT x), collect(x), sum(x)");
    assert_int_equal(r.n, 1);
    assert_int_equal(cell(&r, 0, 0)->u.i, 0);
    rows_free(&r);
    r = query_rows(g, "UNWIND [] AS x RETURN x, count(*)");
    assert_int_equal(r.n, 0);
    rows_free(&r);
    r = query_rows(g, "UNWIND [] AS x RETURN DISTINCT x ORDER BY x LIMIT 3");
    assert_int_equal(r.n, 0);
    rows_free(&r);
    strata_graph_free(&g);
}

/* Groups and sorted rows leave a finished input a batch at a time (a
   result read as it goes pulls them in steps): more rows than a batch,
   through a LIMIT after the aggregation, and a result freed half read. */
static void test_output_in_batches(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    rows r = query_rows(g, "UNWIND range(0, 2999) AS x RETURN x % 1700 AS k, count(*) AS c");
    assert_int_equal(r.n, 1700);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(cell(&r, i, 0)->u.i, (int64_t)i);
        assert_int_equal(cell(&r, i, 1)->u.i, i < 1300 ? 2 : 1);
    }
    rows_free(&r);
    r = query_rows(g, "UNWIND range(0, 2999) AS x WITH x ORDER BY x % 3, x DESC "
                      "WITH x SKIP 700 LIMIT 900 WITH x, count(*) AS c RETURN x ORDER BY x");
    assert_int_equal(r.n, 900);
    /* ORDER BY x % 3, x DESC is 2997, 2994, ..., 0, then 2998, 2995, ...;
       rows 700 to 1599 of it are 897 down to 0 and 2998 down to 1201 */
    for (size_t i = 0; i < r.n; i++)
        assert_int_equal(cell(&r, i, 0)->u.i,
                         i < 300 ? 3 * (int64_t)i : 1201 + 3 * (int64_t)(i - 300));
    rows_free(&r);
    strata_result *res = NULL;
    assert_int_equal(strata_query(g, "UNWIND range(1, 5000) AS x RETURN x ORDER BY -x", NULL,
                                  &res), STRATA_OK);
    const strata_value *const *row;
    for (int i = 0; i < 300; i++) {
        assert_true(strata_result_next(res, &row));
        assert_int_equal(row[0]->v.u.i, 5000 - i);
    }
    strata_result_free(&res);
    strata_graph_free(&g);
}

/* PROFILE names the steps of a projection and counts its rows: the
   groups a HashAggregate produced, the rows a Top let through. */
static void test_profile_operators(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    rows r = query_rows(g, "PROFILE UNWIND range(1, 100) AS x WITH x % 7 AS k, count(*) AS c "
                           "RETURN DISTINCT k ORDER BY k DESC LIMIT 3");
    assert_int_equal(r.n, 3);   /* step, clause, operator, plan, rows, time_ms */
    size_t len;
    const char *op = value_str(cell(&r, 1, 2), &len);
    assert_int_equal(len, strlen("HashAggregate"));
    assert_memory_equal(op, "HashAggregate", len);
    assert_int_equal(cell(&r, 1, 4)->u.i, 7);
    const char *plan = value_str(cell(&r, 2, 3), &len);
    assert_non_null(memmem(plan, len, "Distinct Top Limit", strlen("Distinct Top Limit")));
    assert_int_equal(cell(&r, 2, 4)->u.i, 3);
    rows_free(&r);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_operators_match_references),
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_profile_operators),
        cmocka_unit_test(test_output_in_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
