/*
 * The nesting limit of values (storage/value.h, VALUE_MAX_DEPTH).
 *
 * Every list, map and path is built by value_list_from / value_map_from /
 * value_path_from, which refuse a value nested deeper than the limit; so
 * Cypher (literals, reduce, collect, comprehensions, concatenation), the
 * C API's constructors and the loader all stop at the same depth, with an
 * error, and the recursive walks over values (release, clone, =, <, ORDER
 * BY, equivalence, hash, save, load) never recurse deeper than that.  The
 * deepest legal value is walked on a thread with a 512 KiB stack.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strata.h"
#include "core/persist_codec.h"
#include "storage/mem.h"
#include "storage/value.h"

#define SMALL_STACK (512 * 1024)

/* A value depth containers deep, lists and maps alternating (a list
   outermost when depth is odd), an integer innermost; VALUE_TOO_DEEP or
   -1 as the constructors return them. */
static int nest(mem_ctx *m, unsigned depth, value *out)
{
    value v = value_int(42);
    for (unsigned d = 1; d <= depth; d++) {
        value w, k;
        int rc;
        if (d % 2)
            rc = value_list_from(m, &v, 1, &w);
        else if (value_string(m, "k", 1, &k) != 0)
            rc = -1;
        else
            rc = value_map_from(m, &k, &v, 1, &w);
        if (rc != 0) {
            value_release(&v);
            *out = value_null();
            return rc;
        }
        v = w;
    }
    *out = v;
    return 0;
}

/* Runs fn(arg) on a thread whose stack is SMALL_STACK bytes. */
static void on_small_stack(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t t;
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, SMALL_STACK), 0);
    assert_int_equal(pthread_create(&t, &attr, fn, arg), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_attr_destroy(&attr);
}

/* ---- constructors ----------------------------------------------------------- */

static void test_depth_recorded(void **state)
{
    (void)state;
    mem_ctx *m = mem_scratch();
    value v = value_int(1);
    assert_int_equal(value_depth(&v), 0);
    value s;
    assert_int_equal(value_string(m, "a string longer than inline", 27, &s), 0);
    assert_int_equal(value_depth(&s), 0);
    value_release(&s);
    for (unsigned d = 1; d <= 4; d++) {
        value n;
        assert_int_equal(nest(m, d, &n), 0);
        assert_int_equal(value_depth(&n), d);
        value_release(&n);
    }
    /* A list's depth is its deepest item's, plus one. */
    value items[3];
    items[0] = value_int(1);
    assert_int_equal(nest(m, 5, &items[1]), 0);
    assert_int_equal(nest(m, 2, &items[2]), 0);
    value l;
    assert_int_equal(value_list_from(m, items, 3, &l), 0);
    assert_int_equal(value_depth(&l), 6);
    /* Clone into another context keeps it. */
    mem_ctx *other = mem_ctx_new();
    assert_non_null(other);
    value c;
    assert_int_equal(value_clone(other, &l, &c), 0);
    assert_int_equal(value_depth(&c), 6);
    assert_int_equal(value_equals(&l, &c), TRI_TRUE);
    value_release(&c);
    value_release(&l);
    mem_ctx_release(other);
    value p[3] = { value_node(1), value_rel(2), value_node(3) };
    assert_int_equal(value_path_from(m, p, 3, &l), 0);
    assert_int_equal(value_depth(&l), 1);
    value_release(&l);
}

/* The constructors accept VALUE_MAX_DEPTH and refuse one more, the items
   released (the leak check sees it). */
static void test_constructors_refuse_past_limit(void **state)
{
    (void)state;
    mem_ctx *m = mem_scratch();
    value deepest;
    assert_int_equal(nest(m, VALUE_MAX_DEPTH, &deepest), 0);
    assert_int_equal(value_depth(&deepest), VALUE_MAX_DEPTH);

    value item = value_retain(deepest), out;
    assert_int_equal(value_list_from(m, &item, 1, &out), VALUE_TOO_DEEP);
    assert_true(value_is_null(&item));
    assert_true(value_is_null(&out));

    value k, val = value_retain(deepest);
    assert_int_equal(value_string(m, "k", 1, &k), 0);
    assert_int_equal(value_map_from(m, &k, &val, 1, &out), VALUE_TOO_DEEP);
    assert_true(value_is_null(&k) && value_is_null(&val) && value_is_null(&out));

    /* Depths far past the limit stop at the limit. */
    static const unsigned past[] = { VALUE_MAX_DEPTH + 1, 10 * VALUE_MAX_DEPTH,
                                     100 * VALUE_MAX_DEPTH };
    for (size_t i = 0; i < sizeof past / sizeof past[0]; i++)
        assert_int_equal(nest(m, past[i], &out), VALUE_TOO_DEEP);
    value_release(&deepest);
}

/* ---- the deepest value through every walk, on a small stack ------------------- */

/* pw_value then pr_value through a temporary file. */
static void save_load(const value *v, value *got)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    unsigned char buf[4096];
    pwriter w;
    pw_init(&w, fileno(f), buf, sizeof buf);
    pw_value(&w, v);
    pw_flush(&w);
    assert_int_equal(w.err, 0);
    off_t size = lseek(fileno(f), 0, SEEK_END);
    unsigned char *bytes = malloc((size_t)size);
    assert_non_null(bytes);
    assert_int_equal(pread(fileno(f), bytes, (size_t)size, 0), size);
    preader r;
    pr_init(&r, bytes, 0, (size_t)size, mem_scratch(), "test");
    if (pr_value(&r, got) != 0)
        fail_msg("load: %s", r.err);
    free(bytes);
    fclose(f);
}

static void *walk_deepest(void *arg)
{
    (void)arg;
    mem_ctx *m = mem_scratch();
    value a, b;
    /* Built twice, so that no walk can stop early at a shared object. */
    assert_int_equal(nest(m, VALUE_MAX_DEPTH, &a), 0);
    assert_int_equal(nest(m, VALUE_MAX_DEPTH, &b), 0);
    assert_int_equal(value_equals(&a, &b), TRI_TRUE);
    int cmp;
    assert_int_equal(value_compare(&a, &b, &cmp), -1);   /* maps inside: not comparable */
    assert_int_equal(value_order(&a, &b), 0);
    assert_true(value_equivalent(&a, &b));
    assert_true(value_hash(&a) == value_hash(&b));
    assert_true(value_heap_size(&a) > 0);
    mem_ctx *other = mem_ctx_new();
    assert_non_null(other);
    value c;
    assert_int_equal(value_clone(other, &a, &c), 0);
    assert_int_equal(value_equals(&a, &c), TRI_TRUE);
    value loaded;
    save_load(&a, &loaded);
    assert_int_equal(value_depth(&loaded), VALUE_MAX_DEPTH);
    assert_true(value_equivalent(&a, &loaded));
    value_release(&loaded);
    value_release(&c);
    mem_ctx_release(other);
    value_release(&a);
    value_release(&b);
    return NULL;
}

static void test_deepest_value_walks_on_small_stack(void **state)
{
    (void)state;
    on_small_stack(walk_deepest, NULL);
}

/* ---- the loader ----------------------------------------------------------------- */

/* Encoded lists nested depth deep around one integer. */
static size_t encode_nested_lists(unsigned char *out, unsigned depth)
{
    size_t n = 0;
    for (unsigned i = 0; i < depth; i++) {
        out[n++] = 6;   /* a list (FORMAT.md) */
        out[n++] = 1;   /* of one item */
    }
    out[n++] = 3;       /* an integer */
    out[n++] = 0;
    return n;
}

static void test_loader_uses_the_same_limit(void **state)
{
    (void)state;
    static unsigned char bytes[2 * (VALUE_MAX_DEPTH + 1) + 2];
    preader r;
    value got;
    size_t n = encode_nested_lists(bytes, VALUE_MAX_DEPTH);
    pr_init(&r, bytes, 0, n, mem_scratch(), "test");
    assert_int_equal(pr_value(&r, &got), 0);
    assert_int_equal(value_depth(&got), VALUE_MAX_DEPTH);
    value_release(&got);
    n = encode_nested_lists(bytes, VALUE_MAX_DEPTH + 1);
    pr_init(&r, bytes, 0, n, mem_scratch(), "test");
    assert_int_equal(pr_value(&r, &got), -1);
    assert_int_equal(r.status, STRATA_ECORRUPT);
    assert_non_null(strstr(r.err, "nest deeper than 1000"));
}

/* ---- the C API ------------------------------------------------------------------- */

static void test_api_constructors_refuse_past_limit(void **state)
{
    (void)state;
    assert_int_equal(STRATA_VALUE_MAX_DEPTH, VALUE_MAX_DEPTH);
    strata_value *v = strata_value_int(1), *below = NULL;
    for (int d = 1; d <= VALUE_MAX_DEPTH; d++) {
        const strata_value *items[] = { v };
        strata_value *l = d % 2 ? strata_value_list(items, 1)
                                : strata_value_map((const char *const[]){ "k" }, items, 1);
        assert_non_null(l);
        if (d == VALUE_MAX_DEPTH)
            below = v;   /* 999 deep: the parameter map makes it 1000 */
        else
            strata_value_free(&v);
        v = l;
    }
    const strata_value *items[] = { v };
    assert_null(strata_value_list(items, 1));
    assert_null(strata_value_map((const char *const[]){ "k" }, items, 1));
    assert_null(strata_value_map((const char *const[]){ "p" }, items, 1));
    strata_value_free(&v);
    /* The deepest value goes in as a parameter map and comes back equal. */
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    v = below;
    items[0] = v;
    strata_value *params = strata_value_map((const char *const[]){ "p" }, items, 1);
    assert_non_null(params);
    strata_result *r;
    assert_int_equal(strata_query(g, "RETURN $p AS p", params, &r), STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    assert_int_equal(strata_value_equals(row[0], v), 1);
    strata_result_free(&r);
    strata_value_free(&params);
    strata_value_free(&v);
    strata_graph_free(&g);
}

/* ---- Cypher ------------------------------------------------------------------------ */

/* Runs text; returns the error's detail (static storage copy) or NULL. */
static const char *run(strata_graph *g, const char *text, int64_t *first)
{
    static char detail[64];
    strata_result *r = NULL;
    strata_query(g, text, NULL, &r);
    assert_non_null(r);
    const strata_value *const *row;
    while (strata_result_next(r, &row))
        if (first)
            strata_value_get_int(row[0], first);
    const strata_query_error *e = strata_result_error(r);
    const char *out = NULL;
    if (e) {
        snprintf(detail, sizeof detail, "%s", e->detail ? e->detail : e->code);
        out = detail;
    }
    strata_result_free(&r);
    return out;
}

static void test_cypher_depths(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    char q[256];
    /* 10, 100, 1000 levels are values; 1001, 10^4, 10^5, 10^6 an error
       at the level past the limit (the process survives to say so). */
    static const long legal[] = { 10, 100, VALUE_MAX_DEPTH };
    for (size_t i = 0; i < sizeof legal / sizeof legal[0]; i++) {
        snprintf(q, sizeof q,
                 "WITH reduce(acc = 0, i IN range(1, %ld) | [acc]) AS x RETURN size(x)", legal[i]);
        int64_t size = 0;
        assert_null(run(g, q, &size));
        assert_int_equal(size, 1);
    }
    static const long past[] = { VALUE_MAX_DEPTH + 1, 10000, 100000, 1000000 };
    for (size_t i = 0; i < sizeof past / sizeof past[0]; i++) {
        snprintf(q, sizeof q, "WITH reduce(acc = [], i IN range(1, %ld) | [acc]) AS x RETURN x",
                 past[i]);
        const char *d = run(g, q, NULL);
        assert_non_null(d);
        assert_string_equal(d, "NestingTooDeep");
    }
    /* Every way of building a container: the value at the limit, one more
       level by each of them. */
    static const char *const deeper[] = {
        "WITH reduce(acc = 0, i IN range(1, 1000) | [acc]) AS d RETURN [d]",
        "WITH reduce(acc = 0, i IN range(1, 1000) | [acc]) AS d RETURN {k: d}",
        "WITH reduce(acc = 0, i IN range(1, 1000) | {k: acc}) AS d RETURN [] + d",
        "WITH reduce(acc = 0, i IN range(1, 1000) | {k: acc}) AS d RETURN d + []",
        "WITH reduce(acc = 0, i IN range(1, 1000) | [acc]) AS d RETURN [x IN [1] | d]",
        "WITH reduce(acc = 0, i IN range(1, 1000) | [acc]) AS d UNWIND [1, 2] AS i "
        "RETURN collect(d)",
        "WITH reduce(acc = 0, i IN range(1, 999) | [acc]) AS d, {x: 1} AS m "
        "RETURN m {.x, y: [d]}",
    };
    for (size_t i = 0; i < sizeof deeper / sizeof deeper[0]; i++) {
        const char *d = run(g, deeper[i], NULL);
        if (!d || strcmp(d, "NestingTooDeep") != 0)
            fail_msg("%s: %s", deeper[i], d ? d : "no error");
    }
    strata_graph_free(&g);
}

/* The engine's own walks over the deepest value (=, DISTINCT, ORDER BY,
   the result's copy and release) inside a statement, on a small stack. */
static void *cypher_deepest(void *arg)
{
    strata_graph *g = arg;
    static const char *const queries[] = {
        "WITH reduce(acc = 0, i IN range(1, 1000) | [acc]) AS x, "
        "reduce(acc = 0, i IN range(1, 1000) | [acc]) AS y "
        "RETURN CASE WHEN x = y AND x <= y AND NOT x <> y THEN 1 ELSE 0 END",
        "UNWIND range(1, 3) AS i WITH DISTINCT reduce(acc = 0, j IN range(1, 1000) | [acc]) AS x "
        "RETURN count(x)",
        "UNWIND range(1, 3) AS i WITH i, reduce(acc = i, j IN range(1, 999) | {k: acc}) AS x "
        "ORDER BY x DESC RETURN i LIMIT 1",
        "UNWIND range(1, 3) AS i WITH reduce(acc = i % 2, j IN range(1, 1000) | [acc]) AS x "
        "RETURN count(DISTINCT x)",
    };
    static const int64_t expect[] = { 1, 1, 3, 2 };
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
        int64_t got = -1;
        const char *d = run(g, queries[i], &got);
        if (d)
            fail_msg("%s: %s", queries[i], d);
        assert_int_equal(got, expect[i]);
    }
    return NULL;
}

static void test_cypher_deepest_on_small_stack(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    on_small_stack(cypher_deepest, g);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_depth_recorded),
        cmocka_unit_test(test_constructors_refuse_past_limit),
        cmocka_unit_test(test_deepest_value_walks_on_small_stack),
        cmocka_unit_test(test_loader_uses_the_same_limit),
        cmocka_unit_test(test_api_constructors_refuse_past_limit),
        cmocka_unit_test(test_cypher_depths),
        cmocka_unit_test(test_cypher_deepest_on_small_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
