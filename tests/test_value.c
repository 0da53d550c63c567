/*
 * Tests for storage/value: construction and ownership, the inline/heap
 * string boundary, openCypher's =, <, ORDER BY and equivalence, the hash's
 * agreement with equivalence, clone, and every allocation failure.
 *
 * Each test gets a fresh mem_ctx in *state; the teardown asserts that
 * nothing allocated from it is left, and releasing it frees it only if no
 * heap value still holds a ref (else AddressSanitizer reports the leak).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "storage/value.h"

#define TWO_53 9007199254740992.0   /* 2^53: doubles stop being dense here */

#include "support/mem_fixture.h"

/* ---- builders (abort the test on failure) ----------------------------- */

static value str_n(mem_ctx *m, const char *s, size_t n)
{
    value v;
    assert_int_equal(value_string(m, s, n, &v), 0);
    return v;
}

static value str(mem_ctx *m, const char *s) { return str_n(m, s, strlen(s)); }

/* A heap string: n copies of c. */
static value long_str(mem_ctx *m, char c, size_t n)
{
    char buf[256];
    assert_true(n <= sizeof buf);
    memset(buf, c, n);
    return str_n(m, buf, n);
}

static value list(mem_ctx *m, size_t n, ...)
{
    value items[16];
    va_list ap;
    assert_true(n <= 16);
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        items[i] = va_arg(ap, value);
    va_end(ap);
    value v;
    assert_int_equal(value_list_from(m, items, n, &v), 0);
    return v;
}

/* Alternating node and relationship ids. */
static value path(mem_ctx *m, size_t n, ...)
{
    value items[16];
    va_list ap;
    assert_true(n <= 16);
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t id = va_arg(ap, uint64_t);
        items[i] = i % 2 ? value_rel(id) : value_node(id);
    }
    va_end(ap);
    value v;
    assert_int_equal(value_path_from(m, items, n, &v), 0);
    return v;
}

/* n pairs of (const char *key, value val). */
static value map(mem_ctx *m, size_t n, ...)
{
    value keys[16], vals[16];
    va_list ap;
    assert_true(n <= 16);
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) {
        keys[i] = str(m, va_arg(ap, const char *));
        vals[i] = va_arg(ap, value);
    }
    va_end(ap);
    value v;
    assert_int_equal(value_map_from(m, keys, vals, n, &v), 0);
    return v;
}

static bool is_heap_string(const value *v)
{
    return value_kind(v) == VAL_STRING && v->inl_len == 0xFF;
}

/* ---- checks that consume their operands -------------------------------- */

static void expect_eq(value a, value b, tri want)
{
    assert_int_equal(value_equals(&a, &b), want);
    assert_int_equal(value_equals(&b, &a), want);
    value_release(&a);
    value_release(&b);
}

/* a < b is want; b > a agrees; compare's status matches. */
static void expect_lt(value a, value b, tri want)
{
    int c1, c2;
    assert_int_equal(value_compare_lt(&a, &b), want);
    int r1 = value_compare(&a, &b, &c1);
    int r2 = value_compare(&b, &a, &c2);
    assert_int_equal(r1, r2);
    assert_int_equal(c1, -c2);
    if (want == TRI_NULL)
        assert_int_equal(r1, -1);
    if (r1 != 0)
        assert_int_equal(c1, 0);
    value_release(&a);
    value_release(&b);
}

/* Equivalent both ways, hashing alike, and tied in ORDER BY. */
static void expect_equiv(value a, value b, bool want)
{
    assert_int_equal(value_equivalent(&a, &b), want);
    assert_int_equal(value_equivalent(&b, &a), want);
    assert_int_equal(value_order(&a, &b) == 0, want);
    if (want)
        assert_true(value_hash(&a) == value_hash(&b));
    value_release(&a);
    value_release(&b);
}

/* ---- construction and ownership ---------------------------------------- */

static void test_scalars(void **state)
{
    (void)state;
    value vs[] = { value_null(), value_bool(true), value_int(-7),
                   value_float(2.5), value_node(3), value_rel(4) };
    value_type kinds[] = { VAL_NULL, VAL_BOOL, VAL_INT, VAL_FLOAT,
                           VAL_NODE, VAL_REL };
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        assert_int_equal(value_kind(&vs[i]), kinds[i]);
        assert_int_equal(value_heap_size(&vs[i]), 0);
        assert_int_equal(value_list_len(&vs[i]), 0);
        assert_null(value_list_items(&vs[i]));
        assert_int_equal(value_map_len(&vs[i]), 0);
        assert_null(value_map_get(&vs[i], "a", 1));
        size_t len = 99;
        assert_null(value_str(&vs[i], &len));
        assert_int_equal(len, 0);
        value r = value_retain(vs[i]);
        assert_memory_equal(&r, &vs[i], sizeof r);
        value_release(&r);
        assert_true(value_is_null(&r));
    }
    assert_true(value_is_null(&vs[0]));
    assert_false(value_is_null(&vs[1]));
    assert_true(value_is_number(&vs[2]) && value_is_number(&vs[3]));
    assert_false(value_is_number(&vs[1]));
    assert_true(vs[1].u.b);
    assert_int_equal(vs[2].u.i, -7);
    assert_true(vs[3].u.f == 2.5);
    assert_int_equal(vs[4].u.id, 3);
    assert_int_equal(vs[5].u.id, 4);
}

static void test_string_boundaries(void **state)
{
    mem_ctx *m = *state;
    char src[101];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (char)('a' + i % 26);
    size_t lens[] = { 0, 1, 12, 13, 14, 15, 100 };
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t n = lens[i];
        value v = str_n(m, src, n);
        bool inl = n <= VALUE_INLINE_MAX;
        assert_int_equal(value_kind(&v), VAL_STRING);
        assert_int_equal(is_heap_string(&v), !inl);
        size_t len;
        const char *s = value_str(&v, &len);
        assert_int_equal(len, n);
        assert_memory_equal(s, src, n);
        assert_int_equal(s[n], '\0');
        assert_ptr_equal(value_str(&v, NULL), s);
        if (inl) {
            /* Inline bytes live in the cell itself: nothing allocated. */
            assert_true(s > (const char *)&v && s + n < (const char *)(&v + 1));
            assert_int_equal(value_heap_size(&v), 0);
            assert_int_equal(mem_ctx_bytes(m), 0);
        } else {
            assert_true(value_heap_size(&v) > n);
            assert_int_equal(value_heap_size(&v), mem_ctx_bytes(m));
        }
        value_release(&v);
        assert_true(value_is_null(&v));
        assert_int_equal(mem_ctx_bytes(m), 0);
    }
    assert_int_equal(VALUE_INLINE_MAX, 13);
}

static void test_string_embedded_nul(void **state)
{
    mem_ctx *m = *state;
    value a = str_n(m, "a\0b", 3);
    value a2 = str_n(m, "a\0b", 3);
    value a_only = str(m, "a");
    value c = str_n(m, "a\0c", 3);
    size_t len;
    assert_memory_equal(value_str(&a, &len), "a\0b", 4);
    assert_int_equal(len, 3);
    assert_int_equal(value_equals(&a, &a2), TRI_TRUE);
    assert_int_equal(value_equals(&a, &a_only), TRI_FALSE);
    assert_int_equal(value_compare_lt(&a_only, &a), TRI_TRUE);
    assert_int_equal(value_compare_lt(&a, &c), TRI_TRUE);
    assert_true(value_hash(&a) != value_hash(&a_only));

    char big[40] = "x";
    big[20] = 'y';   /* the rest stays NUL */
    value h = str_n(m, big, sizeof big);
    value h2 = str_n(m, big, sizeof big);
    value h_short = str_n(m, big, sizeof big - 1);
    assert_true(is_heap_string(&h));
    assert_memory_equal(value_str(&h, &len), big, sizeof big);
    assert_int_equal(len, sizeof big);
    assert_int_equal(value_equals(&h, &h2), TRI_TRUE);
    assert_int_equal(value_equals(&h, &h_short), TRI_FALSE);
    assert_int_equal(value_order(&h_short, &h), -1);
    assert_true(value_hash(&h) == value_hash(&h2));
    value vs[] = { a, a2, a_only, c, h, h2, h_short };
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
        value_release(&vs[i]);
}

static void test_refcounts(void **state)
{
    mem_ctx *m = *state;
    value s = long_str(m, 'q', 50);
    size_t one = mem_ctx_bytes(m);
    assert_true(one > 50);

    value t = value_retain(s);
    value u = value_retain(t);
    assert_true(t.u.h == s.u.h && u.u.h == s.u.h);
    assert_int_equal(mem_ctx_bytes(m), one);
    value_release(&s);
    assert_true(value_is_null(&s));
    value_release(&s);   /* releasing null is a no-op */
    value_release(&t);
    assert_int_equal(mem_ctx_bytes(m), one);
    size_t len;
    assert_int_equal(value_str(&u, &len)[49], 'q');

    /* A list owns one ref; the string outlives the list. */
    value l = list(m, 2, value_retain(u), value_int(1));
    value_release(&u);
    assert_true(mem_ctx_bytes(m) > one);
    const value *items = value_list_items(&l);
    assert_int_equal(value_str(&items[0], &len)[0], 'q');
    value keep = value_retain(items[0]);
    value_release(&l);
    assert_int_equal(mem_ctx_bytes(m), one);
    value_release(&keep);
    assert_int_equal(mem_ctx_bytes(m), 0);
}

static void test_list_and_path(void **state)
{
    mem_ctx *m = *state;
    value items[3] = { value_int(1), long_str(m, 's', 30), value_null() };
    value l;
    assert_int_equal(value_list_from(m, items, 3, &l), 0);
    for (size_t i = 0; i < 3; i++)
        assert_true(value_is_null(&items[i]));   /* consumed */
    assert_int_equal(value_kind(&l), VAL_LIST);
    assert_int_equal(value_list_len(&l), 3);
    const value *it = value_list_items(&l);
    assert_int_equal(it[0].u.i, 1);
    assert_true(is_heap_string(&it[1]));
    assert_true(value_is_null(&it[2]));
    assert_int_equal(value_map_len(&l), 0);
    assert_null(value_str(&l, NULL));
    value_release(&l);

    value empty;
    assert_int_equal(value_list_from(m, NULL, 0, &empty), 0);
    assert_int_equal(value_kind(&empty), VAL_LIST);
    assert_int_equal(value_list_len(&empty), 0);
    value_release(&empty);

    value p = path(m, 5, (uint64_t)1, (uint64_t)10, (uint64_t)2, (uint64_t)11,
                   (uint64_t)3);
    assert_int_equal(value_kind(&p), VAL_PATH);
    assert_int_equal(value_list_len(&p), 5);
    it = value_list_items(&p);
    assert_int_equal(value_kind(&it[1]), VAL_REL);
    assert_int_equal(it[4].u.id, 3);
    value_release(&p);
    value single = path(m, 1, (uint64_t)9);
    assert_int_equal(value_list_len(&single), 1);
    value_release(&single);
    assert_int_equal(mem_ctx_bytes(m), 0);
}

static void test_path_refused(void **state)
{
    mem_ctx *m = *state;
    value out;
    value even[2] = { value_node(1), value_rel(2) };
    assert_int_equal(value_path_from(m, even, 2, &out), -1);
    assert_true(value_is_null(&out));
    value rel_first[3] = { value_rel(1), value_node(2), value_rel(3) };
    assert_int_equal(value_path_from(m, rel_first, 3, &out), -1);
    value stray[3] = { value_node(1), long_str(m, 'x', 40), value_node(3) };
    assert_int_equal(value_path_from(m, stray, 3, &out), -1);
    assert_true(value_is_null(&stray[1]));   /* released, not leaked */
    assert_int_equal(value_path_from(m, NULL, 0, &out), -1);
    assert_int_equal(mem_ctx_bytes(m), 0);
}

static void test_map_build_and_get(void **state)
{
    mem_ctx *m = *state;
    char long_key[30];
    memset(long_key, 'k', sizeof long_key);
    value keys[] = { str(m, "b"), str(m, "a"), str(m, "ab"), str(m, "\xc3\xa9"),
                     str(m, "B"), str(m, "a"), str(m, ""),
                     str_n(m, long_key, sizeof long_key), str_n(m, "n\0x", 3) };
    value vals[] = { value_int(1), value_int(2), value_int(3), value_int(4),
                     value_int(5), long_str(m, 'v', 20), value_int(7),
                     value_int(8), value_int(9) };
    size_t n = sizeof keys / sizeof keys[0];
    value mp;
    assert_int_equal(value_map_from(m, keys, vals, n, &mp), 0);
    for (size_t i = 0; i < n; i++)
        assert_true(value_is_null(&keys[i]) && value_is_null(&vals[i]));
    assert_int_equal(value_kind(&mp), VAL_MAP);
    assert_int_equal(value_map_len(&mp), n - 1);   /* "a" twice */

    const char *sorted[] = { "", "B", "a", "ab", "b", NULL, "n", "\xc3\xa9" };
    const value *k = value_map_keys(&mp);
    for (size_t i = 0; i < n - 1; i++) {
        if (i > 0)
            assert_int_equal(value_order(&k[i - 1], &k[i]), -1);
        if (i < sizeof sorted / sizeof sorted[0] && sorted[i])
            assert_memory_equal(value_str(&k[i], NULL), sorted[i],
                                strlen(sorted[i]));
    }
    size_t len;
    const value *got = value_map_get(&mp, "a", 1);
    assert_non_null(got);
    assert_true(is_heap_string(got));   /* the last "a" won */
    assert_int_equal(value_str(got, &len)[0], 'v');
    assert_int_equal(value_map_get(&mp, "", 0)->u.i, 7);
    assert_int_equal(value_map_get(&mp, "ab", 2)->u.i, 3);
    assert_int_equal(value_map_get(&mp, "b", 1)->u.i, 1);
    assert_int_equal(value_map_get(&mp, "B", 1)->u.i, 5);
    assert_int_equal(value_map_get(&mp, "\xc3\xa9", 2)->u.i, 4);
    assert_int_equal(value_map_get(&mp, long_key, sizeof long_key)->u.i, 8);
    assert_int_equal(value_map_get(&mp, "n\0x", 3)->u.i, 9);
    assert_null(value_map_get(&mp, "n", 1));
    assert_null(value_map_get(&mp, "c", 1));
    assert_null(value_map_get(&mp, "a\0", 2));
    assert_null(value_map_get(&mp, long_key, sizeof long_key - 1));
    const value *v = value_map_vals(&mp);
    assert_int_equal(v[0].u.i, 7);
    assert_int_equal(value_list_len(&mp), 0);
    value_release(&mp);

    value empty;
    assert_int_equal(value_map_from(m, NULL, NULL, 0, &empty), 0);
    assert_int_equal(value_map_len(&empty), 0);
    assert_null(value_map_get(&empty, "a", 1));
    value_release(&empty);
    assert_int_equal(mem_ctx_bytes(m), 0);
}

static void test_map_bad_key(void **state)
{
    mem_ctx *m = *state;
    value keys[] = { long_str(m, 'a', 20), value_int(1) };
    value vals[] = { long_str(m, 'b', 20), value_int(2) };
    value out;
    assert_int_equal(value_map_from(m, keys, vals, 2, &out), -1);
    assert_true(value_is_null(&out));
    assert_true(value_is_null(&keys[0]) && value_is_null(&vals[0]));
    assert_int_equal(mem_ctx_bytes(m), 0);
}

/* ---- = ------------------------------------------------------------------- */

static void test_equals_scalars(void **state)
{
    mem_ctx *m = *state;
    expect_eq(value_null(), value_null(), TRI_NULL);
    expect_eq(value_null(), value_int(1), TRI_NULL);
    expect_eq(value_null(), str(m, "a"), TRI_NULL);
    expect_eq(value_int(1), value_int(1), TRI_TRUE);
    expect_eq(value_int(1), value_int(2), TRI_FALSE);
    expect_eq(value_int(1), value_float(1.0), TRI_TRUE);
    expect_eq(value_int(1), value_float(1.5), TRI_FALSE);
    expect_eq(value_float(0.0), value_float(-0.0), TRI_TRUE);
    expect_eq(value_int(0), value_float(-0.0), TRI_TRUE);
    /* 2^53 + 1 rounds to 2^53 through double; the comparison must not. */
    expect_eq(value_int(9007199254740993), value_float(TWO_53), TRI_FALSE);
    expect_eq(value_int(9007199254740992), value_float(TWO_53), TRI_TRUE);
    expect_eq(value_int(INT64_MAX), value_float(0x1p63), TRI_FALSE);
    expect_eq(value_int(INT64_MIN), value_float(-0x1p63), TRI_TRUE);
    expect_eq(value_int(INT64_MAX), value_float(INFINITY), TRI_FALSE);
    expect_eq(value_float(INFINITY), value_float(INFINITY), TRI_TRUE);
    expect_eq(value_float(NAN), value_float(NAN), TRI_FALSE);
    expect_eq(value_float(NAN), value_int(1), TRI_FALSE);
    expect_eq(value_float(NAN), value_null(), TRI_NULL);
    expect_eq(value_bool(true), value_bool(true), TRI_TRUE);
    expect_eq(value_bool(true), value_bool(false), TRI_FALSE);
    expect_eq(value_bool(true), value_int(1), TRI_FALSE);
    expect_eq(value_int(1), str(m, "1"), TRI_FALSE);
    expect_eq(str(m, "abc"), str(m, "abc"), TRI_TRUE);
    expect_eq(str(m, "abc"), str(m, "abd"), TRI_FALSE);
    expect_eq(str(m, ""), str(m, ""), TRI_TRUE);
    expect_eq(long_str(m, 'z', 60), long_str(m, 'z', 60), TRI_TRUE);
    expect_eq(long_str(m, 'z', 60), long_str(m, 'z', 61), TRI_FALSE);
    expect_eq(value_node(1), value_node(1), TRI_TRUE);
    expect_eq(value_node(1), value_node(2), TRI_FALSE);
    expect_eq(value_node(1), value_rel(1), TRI_FALSE);
    expect_eq(value_rel(5), value_rel(5), TRI_TRUE);
    expect_eq(value_node(1), value_int(1), TRI_FALSE);
}

static void test_equals_lists(void **state)
{
    mem_ctx *m = *state;
    expect_eq(list(m, 2, value_int(1), value_int(2)),
              list(m, 2, value_int(1), value_int(2)), TRI_TRUE);
    expect_eq(list(m, 0), list(m, 0), TRI_TRUE);
    expect_eq(list(m, 1, value_int(1)), list(m, 2, value_int(1), value_int(2)),
              TRI_FALSE);
    expect_eq(list(m, 1, value_null()), list(m, 2, value_null(), value_null()),
              TRI_FALSE);
    expect_eq(list(m, 1, value_int(1)), list(m, 1, value_float(1.0)), TRI_TRUE);
    expect_eq(list(m, 2, value_int(1), value_null()),
              list(m, 2, value_int(1), value_null()), TRI_NULL);
    expect_eq(list(m, 2, value_int(1), value_null()),
              list(m, 2, value_int(2), value_null()), TRI_FALSE);
    /* false wins wherever it is, before or after the null */
    expect_eq(list(m, 2, value_null(), value_int(1)),
              list(m, 2, value_null(), value_int(2)), TRI_FALSE);
    expect_eq(list(m, 2, value_null(), value_int(1)),
              list(m, 2, value_int(3), value_int(1)), TRI_NULL);
    expect_eq(list(m, 1, list(m, 2, value_int(1), value_null())),
              list(m, 1, list(m, 2, value_int(1), value_null())), TRI_NULL);
    expect_eq(list(m, 1, value_float(NAN)), list(m, 1, value_float(NAN)),
              TRI_FALSE);
    expect_eq(list(m, 1, long_str(m, 'x', 20)),
              list(m, 1, long_str(m, 'x', 20)), TRI_TRUE);
    expect_eq(list(m, 1, value_int(1)), value_int(1), TRI_FALSE);
    expect_eq(list(m, 1, value_node(1)), path(m, 1, (uint64_t)1), TRI_FALSE);
    expect_eq(list(m, 0), map(m, 0), TRI_FALSE);

    /* Shared heap objects: [null] = [null] is still null, not true. */
    value l = list(m, 1, value_null());
    expect_eq(value_retain(l), value_retain(l), TRI_NULL);
    value_release(&l);
}

static void test_equals_maps_and_paths(void **state)
{
    mem_ctx *m = *state;
    expect_eq(map(m, 1, "a", value_int(1)), map(m, 1, "a", value_int(1)),
              TRI_TRUE);
    expect_eq(map(m, 1, "a", value_int(1)), map(m, 1, "a", value_float(1.0)),
              TRI_TRUE);
    expect_eq(map(m, 1, "a", value_int(1)), map(m, 1, "b", value_int(1)),
              TRI_FALSE);
    expect_eq(map(m, 1, "a", value_int(1)),
              map(m, 2, "a", value_int(1), "b", value_int(2)), TRI_FALSE);
    expect_eq(map(m, 2, "b", value_int(2), "a", value_int(1)),
              map(m, 2, "a", value_int(1), "b", value_int(2)), TRI_TRUE);
    expect_eq(map(m, 1, "a", value_null()), map(m, 1, "a", value_null()),
              TRI_NULL);
    expect_eq(map(m, 1, "a", value_null()), map(m, 1, "b", value_null()),
              TRI_FALSE);
    expect_eq(map(m, 2, "a", value_null(), "b", value_int(1)),
              map(m, 2, "a", value_null(), "b", value_int(2)), TRI_FALSE);
    expect_eq(map(m, 2, "a", value_null(), "b", value_int(1)),
              map(m, 2, "a", value_int(0), "b", value_int(1)), TRI_NULL);
    expect_eq(map(m, 1, "a", list(m, 1, value_null())),
              map(m, 1, "a", list(m, 1, value_null())), TRI_NULL);
    expect_eq(map(m, 0), map(m, 0), TRI_TRUE);

    expect_eq(path(m, 3, (uint64_t)1, (uint64_t)2, (uint64_t)3),
              path(m, 3, (uint64_t)1, (uint64_t)2, (uint64_t)3), TRI_TRUE);
    expect_eq(path(m, 3, (uint64_t)1, (uint64_t)2, (uint64_t)3),
              path(m, 3, (uint64_t)1, (uint64_t)9, (uint64_t)3), TRI_FALSE);
    expect_eq(path(m, 3, (uint64_t)1, (uint64_t)2, (uint64_t)3),
              path(m, 1, (uint64_t)1), TRI_FALSE);
}

/* ---- < ------------------------------------------------------------------- */

static void test_compare_scalars(void **state)
{
    mem_ctx *m = *state;
    expect_lt(value_int(1), value_int(2), TRI_TRUE);
    expect_lt(value_int(2), value_int(1), TRI_FALSE);
    expect_lt(value_int(1), value_int(1), TRI_FALSE);
    expect_lt(value_int(1), value_float(1.5), TRI_TRUE);
    expect_lt(value_float(-1.5), value_int(-1), TRI_TRUE);
    expect_lt(value_int(-2), value_float(-1.5), TRI_TRUE);
    expect_lt(value_float(TWO_53), value_int(9007199254740993), TRI_TRUE);
    expect_lt(value_int(INT64_MAX), value_float(0x1p63), TRI_TRUE);
    expect_lt(value_float(-0x1p63), value_int(INT64_MIN), TRI_FALSE);
    expect_lt(value_float(-INFINITY), value_int(INT64_MIN), TRI_TRUE);
    expect_lt(value_int(INT64_MAX), value_float(INFINITY), TRI_TRUE);
    expect_lt(value_float(NAN), value_int(1), TRI_FALSE);
    expect_lt(value_int(1), value_float(NAN), TRI_FALSE);
    expect_lt(value_float(NAN), value_float(NAN), TRI_FALSE);
    expect_lt(value_float(NAN), value_float(INFINITY), TRI_FALSE);
    expect_lt(str(m, "a"), str(m, "b"), TRI_TRUE);
    expect_lt(str(m, "a"), str(m, "ab"), TRI_TRUE);
    expect_lt(str(m, ""), str(m, "a"), TRI_TRUE);
    expect_lt(str(m, "B"), str(m, "a"), TRI_TRUE);
    expect_lt(str(m, "z"), str(m, "\xc3\xa9"), TRI_TRUE);   /* U+00E9 > z */
    expect_lt(long_str(m, 'a', 30), long_str(m, 'a', 31), TRI_TRUE);
    expect_lt(value_bool(false), value_bool(true), TRI_TRUE);
    expect_lt(value_bool(true), value_bool(false), TRI_FALSE);
    expect_lt(value_int(1), str(m, "a"), TRI_NULL);
    expect_lt(value_bool(false), value_int(1), TRI_NULL);
    expect_lt(value_null(), value_int(1), TRI_NULL);
    expect_lt(value_null(), value_null(), TRI_NULL);
    expect_lt(value_float(NAN), value_null(), TRI_NULL);
    expect_lt(value_node(1), value_node(2), TRI_NULL);
    expect_lt(value_rel(1), value_rel(2), TRI_NULL);
    expect_lt(map(m, 0), map(m, 1, "a", value_int(1)), TRI_NULL);
    expect_lt(path(m, 1, (uint64_t)1), path(m, 1, (uint64_t)2), TRI_NULL);

    int c;
    value nan = value_float(NAN), one = value_int(1);
    assert_int_equal(value_compare(&nan, &one, &c), 1);
    assert_int_equal(c, 0);
    value big = value_int(9007199254740993), f = value_float(TWO_53);
    assert_int_equal(value_compare(&big, &f, &c), 0);
    assert_int_equal(c, 1);
    value fone = value_float(1.0);
    assert_int_equal(value_compare(&one, &fone, &c), 0);
    assert_int_equal(c, 0);
}

static void test_compare_lists(void **state)
{
    mem_ctx *m = *state;
    expect_lt(list(m, 2, value_int(1), value_int(2)),
              list(m, 2, value_int(1), value_int(3)), TRI_TRUE);
    expect_lt(list(m, 1, value_int(1)), list(m, 2, value_int(1), value_int(2)),
              TRI_TRUE);
    expect_lt(list(m, 2, value_int(1), value_int(2)), list(m, 1, value_int(1)),
              TRI_FALSE);
    expect_lt(list(m, 0), list(m, 1, value_null()), TRI_TRUE);
    expect_lt(list(m, 1, value_int(1)), list(m, 1, value_float(1.0)),
              TRI_FALSE);
    expect_lt(list(m, 1, value_int(1)), list(m, 1, value_float(1.5)), TRI_TRUE);
    /* The first unequal pair decides; a null after it does not matter. */
    expect_lt(list(m, 2, value_int(1), value_null()),
              list(m, 2, value_int(2), value_int(0)), TRI_TRUE);
    expect_lt(list(m, 2, value_null(), value_int(1)),
              list(m, 2, value_int(2), value_int(0)), TRI_NULL);
    expect_lt(list(m, 2, value_int(1), str(m, "a")),
              list(m, 2, value_int(1), value_int(2)), TRI_NULL);
    expect_lt(list(m, 1, value_float(NAN)), list(m, 1, value_int(1)),
              TRI_FALSE);
    expect_lt(list(m, 2, value_int(0), value_float(NAN)),
              list(m, 2, value_int(1), value_float(NAN)), TRI_TRUE);
    expect_lt(list(m, 1, list(m, 1, value_int(1))),
              list(m, 1, list(m, 1, value_int(2))), TRI_TRUE);
    expect_lt(list(m, 1, str(m, "b")), list(m, 1, long_str(m, 'c', 20)),
              TRI_TRUE);
    expect_lt(list(m, 1, value_int(1)), value_int(1), TRI_NULL);
    expect_lt(list(m, 1, value_node(1)), list(m, 1, value_node(2)), TRI_NULL);
}

/* ---- ORDER BY ------------------------------------------------------------ */

static int order_cmp(const void *a, const void *b) { return value_order(a, b); }

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void shuffle(value *vs, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = rng() % i;
        value t = vs[i - 1];
        vs[i - 1] = vs[j];
        vs[j] = t;
    }
}

/* Sorting a shuffle of want (strictly ascending) must give want back. */
static void expect_sorted(value *want, size_t n)
{
    value got[32];
    assert_true(n <= 32);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int c = value_order(&want[i], &want[j]);
            assert_int_equal(c, i < j ? -1 : i > j ? 1 : 0);
        }
    for (int round = 0; round < 20; round++) {
        memcpy(got, want, n * sizeof *got);
        shuffle(got, n);
        qsort(got, n, sizeof *got, order_cmp);
        for (size_t i = 0; i < n; i++)
            assert_memory_equal(&got[i], &want[i], sizeof got[i]);
    }
    for (size_t i = 0; i < n; i++)
        value_release(&want[i]);
}

static void test_order_cross_type(void **state)
{
    mem_ctx *m = *state;
    value want[] = {
        map(m, 1, "a", value_int(1)),
        value_node(1),
        value_rel(1),
        list(m, 1, value_int(1)),
        path(m, 1, (uint64_t)1),
        str(m, "s"),
        value_bool(true),
        value_int(1),
        value_null(),
    };
    value_type kinds[] = { VAL_MAP, VAL_NODE, VAL_REL, VAL_LIST, VAL_PATH,
                           VAL_STRING, VAL_BOOL, VAL_INT, VAL_NULL };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        assert_int_equal(value_kind(&want[i]), kinds[i]);
    expect_sorted(want, sizeof want / sizeof want[0]);

    /* Kind beats content: the largest map sorts before the smallest node. */
    value a = map(m, 1, "zzz", value_int(INT64_MAX));
    value b = value_node(0);
    value c = value_bool(false);
    value d = value_float(-INFINITY);
    assert_int_equal(value_order(&a, &b), -1);
    assert_int_equal(value_order(&c, &d), -1);
    value_release(&a);
}

static void test_order_numbers(void **state)
{
    (void)state;
    value want[] = {
        value_float(-INFINITY), value_float(-0x1p64), value_int(INT64_MIN),
        value_int(INT64_MIN + 1), value_float(-1e18), value_int(-1),
        value_float(-0.5), value_int(0), value_float(0.5), value_int(1),
        value_float(1.5), value_int(2), value_float(TWO_53),
        value_int(9007199254740993), value_float(9007199254740994.0),
        value_int(INT64_MAX), value_float(0x1p63), value_float(1e300),
        value_float(INFINITY), value_float(NAN),
    };
    expect_sorted(want, sizeof want / sizeof want[0]);

    value one = value_int(1), fone = value_float(1.0);
    value nan = value_float(NAN), nan2 = value_float(-NAN);
    value zero = value_float(0.0), nzero = value_float(-0.0);
    assert_int_equal(value_order(&one, &fone), 0);
    assert_int_equal(value_order(&nan, &nan2), 0);
    assert_int_equal(value_order(&zero, &nzero), 0);
}

static void test_order_within_kinds(void **state)
{
    mem_ctx *m = *state;
    value strings[] = { str(m, ""), str(m, "B"), str(m, "a"),
                        str_n(m, "a\0", 2), str(m, "ab"),
                        long_str(m, 'b', 20), str(m, "\xc3\xa9") };
    expect_sorted(strings, sizeof strings / sizeof strings[0]);

    value bools[] = { value_bool(false), value_bool(true) };
    expect_sorted(bools, 2);

    /* Lists by value_order on elements, so here null sorts last and a
       string before a number; a shorter prefix first. */
    value lists[] = {
        list(m, 0),
        list(m, 1, map(m, 0)),
        list(m, 1, str(m, "x")),
        list(m, 1, value_int(1)),
        list(m, 2, value_int(1), value_int(1)),
        list(m, 1, value_float(1.5)),
        list(m, 1, value_float(NAN)),
        list(m, 1, value_null()),
        list(m, 2, value_null(), value_null()),
    };
    expect_sorted(lists, sizeof lists / sizeof lists[0]);

    /* Maps by their sorted keys first, then by values. */
    value maps[] = {
        map(m, 0),
        map(m, 1, "a", value_int(1)),
        map(m, 1, "a", value_int(2)),
        map(m, 2, "a", value_int(0), "b", value_int(0)),
        map(m, 2, "b", value_int(9), "a", value_int(0)),
        map(m, 1, "b", value_int(0)),
    };
    expect_sorted(maps, sizeof maps / sizeof maps[0]);

    value nodes[] = { value_node(0), value_node(7), value_node(UINT64_MAX) };
    expect_sorted(nodes, 3);
    value rels[] = { value_rel(0), value_rel(7) };
    expect_sorted(rels, 2);

    value paths[] = {
        path(m, 1, (uint64_t)1),
        path(m, 3, (uint64_t)1, (uint64_t)5, (uint64_t)2),
        path(m, 3, (uint64_t)1, (uint64_t)6, (uint64_t)0),
        path(m, 1, (uint64_t)2),
    };
    expect_sorted(paths, sizeof paths / sizeof paths[0]);

    value nulls[] = { value_null(), value_null() };
    assert_int_equal(value_order(&nulls[0], &nulls[1]), 0);
}

/* ---- equivalence and hash ------------------------------------------------ */

static void test_equivalence_and_hash(void **state)
{
    mem_ctx *m = *state;
    expect_equiv(value_int(1), value_float(1.0), true);
    expect_equiv(value_float(NAN), value_float(NAN), true);
    expect_equiv(value_float(NAN), value_float(-NAN), true);
    expect_equiv(value_null(), value_null(), true);
    expect_equiv(value_float(0.0), value_float(-0.0), true);
    expect_equiv(value_int(0), value_float(-0.0), true);
    expect_equiv(value_int(INT64_MIN), value_float(-0x1p63), true);
    expect_equiv(value_float(1e300), value_float(1e300), true);
    expect_equiv(value_float(0.25), value_float(0.25), true);
    expect_equiv(value_bool(true), value_bool(true), true);
    expect_equiv(str(m, "abc"), str(m, "abc"), true);
    expect_equiv(long_str(m, 'h', 90), long_str(m, 'h', 90), true);
    expect_equiv(list(m, 1, value_int(1)), list(m, 1, value_float(1.0)), true);
    expect_equiv(list(m, 1, value_null()), list(m, 1, value_null()), true);
    expect_equiv(list(m, 2, value_float(NAN), list(m, 1, value_int(2))),
                 list(m, 2, value_float(NAN), list(m, 1, value_float(2.0))),
                 true);
    expect_equiv(map(m, 2, "a", value_int(1), "b", value_null()),
                 map(m, 2, "b", value_null(), "a", value_float(1.0)), true);
    expect_equiv(value_node(4), value_node(4), true);
    expect_equiv(value_rel(4), value_rel(4), true);
    expect_equiv(path(m, 3, (uint64_t)1, (uint64_t)2, (uint64_t)3),
                 path(m, 3, (uint64_t)1, (uint64_t)2, (uint64_t)3), true);

    expect_equiv(value_int(1), value_int(2), false);
    expect_equiv(value_int(1), value_float(1.5), false);
    expect_equiv(value_int(9007199254740993), value_float(TWO_53), false);
    expect_equiv(value_float(NAN), value_int(0), false);
    expect_equiv(value_int(1), str(m, "1"), false);
    expect_equiv(value_int(1), value_bool(true), false);
    expect_equiv(value_null(), value_int(0), false);
    expect_equiv(value_node(1), value_rel(1), false);
    expect_equiv(str(m, "ab"), str(m, "ba"), false);
    expect_equiv(list(m, 1, value_int(1)),
                 list(m, 2, value_int(1), value_int(1)), false);
    expect_equiv(list(m, 1, value_null()), list(m, 1, value_int(0)), false);
    expect_equiv(list(m, 1, value_node(1)), path(m, 1, (uint64_t)1), false);
    expect_equiv(map(m, 1, "a", value_int(1)), map(m, 1, "b", value_int(1)),
                 false);
    expect_equiv(map(m, 1, "a", value_int(1)), map(m, 1, "a", value_int(2)),
                 false);

    value l = list(m, 1, value_null());
    expect_equiv(value_retain(l), value_retain(l), true);
    value_release(&l);
}

/* A hash that ignored content would pass the consistency checks above. */
static void test_hash_spreads(void **state)
{
    mem_ctx *m = *state;
    value vs[] = {
        value_null(), value_bool(false), value_bool(true), value_int(0),
        value_int(1), value_int(-1), value_float(0.5), value_float(NAN),
        value_node(1), value_rel(1), str(m, ""), str(m, "ab"), str(m, "ba"),
        long_str(m, 'a', 20), list(m, 0), list(m, 1, value_int(1)),
        list(m, 2, value_int(1), value_int(2)),
        list(m, 2, value_int(2), value_int(1)), map(m, 0),
        map(m, 1, "a", value_int(1)), map(m, 1, "b", value_int(1)),
        path(m, 1, (uint64_t)1),
    };
    size_t n = sizeof vs / sizeof vs[0];
    for (size_t i = 0; i < n; i++) {
        assert_true(value_hash(&vs[i]) == value_hash(&vs[i]));
        for (size_t j = i + 1; j < n; j++)
            assert_true(value_hash(&vs[i]) != value_hash(&vs[j]));
    }
    for (size_t i = 0; i < n; i++)
        value_release(&vs[i]);
}

/* ---- clone and sizes --------------------------------------------------- */

static value sample_tree(mem_ctx *m)
{
    return map(m, 3,
               "name", long_str(m, 'n', 40),
               "tags", list(m, 3, str(m, "x"), long_str(m, 't', 25),
                            value_float(2.5)),
               "walk", path(m, 3, (uint64_t)1, (uint64_t)2, (uint64_t)3));
}

static void test_clone(void **state)
{
    mem_ctx *m = *state;
    mem_ctx *other = mem_ctx_new();
    assert_non_null(other);

    value src = sample_tree(m);
    size_t before = mem_ctx_bytes(m);
    assert_int_equal(value_heap_size(&src), before);
    value copy;
    assert_int_equal(value_clone(other, &src, &copy), 0);
    assert_int_equal(mem_ctx_bytes(m), before);
    assert_int_equal(mem_ctx_bytes(other), value_heap_size(&copy));
    assert_int_equal(value_heap_size(&copy), before);
    assert_true(copy.u.h != src.u.h);
    assert_int_equal(value_equals(&src, &copy), TRI_TRUE);
    assert_true(value_hash(&src) == value_hash(&copy));
    value_release(&src);
    assert_int_equal(mem_ctx_bytes(m), 0);
    const value *tags = value_map_get(&copy, "tags", 4);
    assert_int_equal(value_list_len(tags), 3);
    assert_int_equal(value_str(&value_list_items(tags)[1], NULL)[24], 't');

    /* Already wholly in the target: shared, nothing allocated. */
    size_t held = mem_ctx_bytes(other);
    value again;
    assert_int_equal(value_clone(other, &copy, &again), 0);
    assert_true(again.u.h == copy.u.h);
    assert_int_equal(mem_ctx_bytes(other), held);
    value_release(&again);

    /* A list in the target holding a string from elsewhere is copied. */
    value foreign = long_str(m, 'f', 30);
    value mixed = list(other, 1, value_retain(foreign));
    value fixed;
    assert_int_equal(value_clone(other, &mixed, &fixed), 0);
    assert_true(fixed.u.h != mixed.u.h);
    assert_true(value_list_items(&fixed)[0].u.h != foreign.u.h);
    assert_int_equal(value_equals(&fixed, &mixed), TRI_TRUE);
    value_release(&mixed);
    value_release(&foreign);
    assert_int_equal(mem_ctx_bytes(m), 0);
    value_release(&fixed);

    value scalars[] = { value_int(3), str(m, "inline"), value_null() };
    for (size_t i = 0; i < 3; i++) {
        value c;
        assert_int_equal(value_clone(other, &scalars[i], &c), 0);
        assert_memory_equal(&c, &scalars[i], sizeof c);
    }

    value_release(&copy);
    assert_int_equal(mem_ctx_bytes(other), 0);
    mem_ctx_release(other);
}

static void test_heap_size(void **state)
{
    mem_ctx *m = *state;
    value s = long_str(m, 's', 100);
    size_t one = value_heap_size(&s);
    assert_true(one > 100);
    assert_int_equal(one, mem_ctx_bytes(m));

    /* A shared object counts once per reference. */
    value l = list(m, 3, value_retain(s), value_retain(s), str(m, "in"));
    size_t list_only = mem_ctx_bytes(m) - one;
    assert_int_equal(value_heap_size(&l), list_only + 2 * one);
    value_release(&s);
    value_release(&l);
}

/* ---- out of memory ------------------------------------------------------- */

static void test_oom_string(void **state)
{
    mem_ctx *m = *state;
    value v = value_int(1);
    mem_fail_at(1);
    assert_int_equal(value_string(m, "0123456789abcdef", 16, &v), -1);
    assert_true(value_is_null(&v));
    assert_int_equal(mem_ctx_bytes(m), 0);
    /* Inline strings allocate nothing, so cannot fail. */
    assert_int_equal(value_string(m, "0123456789abc", 13, &v), 0);
    mem_fail_clear();
    value_release(&v);
}

static void test_oom_list(void **state)
{
    mem_ctx *m = *state;
    int failures = 0;
    for (long k = 1;; k++) {
        value items[] = { long_str(m, 'a', 20), value_int(1),
                          list(m, 1, long_str(m, 'b', 20)) };
        value out;
        mem_fail_at(k);
        int rc = value_list_from(m, items, 3, &out);
        mem_fail_clear();
        for (size_t i = 0; i < 3; i++)
            assert_true(value_is_null(&items[i]));
        if (rc == 0) {
            assert_int_equal(value_list_len(&out), 3);
            value_release(&out);
            assert_int_equal(mem_ctx_bytes(m), 0);
            break;
        }
        assert_int_equal(rc, -1);
        assert_true(value_is_null(&out));
        assert_int_equal(mem_ctx_bytes(m), 0);
        failures++;
    }
    assert_int_equal(failures, 1);
}

static void test_oom_map(void **state)
{
    mem_ctx *m = *state;
    int failures = 0;
    for (long k = 1;; k++) {
        value keys[] = { str(m, "b"), long_str(m, 'k', 20), str(m, "b") };
        value vals[] = { long_str(m, 'x', 20), value_int(2),
                         list(m, 1, long_str(m, 'y', 20)) };
        value out;
        mem_fail_at(k);
        int rc = value_map_from(m, keys, vals, 3, &out);
        mem_fail_clear();
        if (rc == 0) {
            assert_int_equal(value_map_len(&out), 2);
            assert_int_equal(value_kind(value_map_get(&out, "b", 1)), VAL_LIST);
            value_release(&out);
            assert_int_equal(mem_ctx_bytes(m), 0);
            break;
        }
        assert_int_equal(rc, -1);
        assert_true(value_is_null(&out));
        assert_int_equal(mem_ctx_bytes(m), 0);
        failures++;
    }
    assert_int_equal(failures, 2);   /* the sort scratch, then the map */
}

/* Builds sample_tree's shape with every allocation fallible: returns -1
   with nothing left allocated when any step fails. */
static int build_tree(mem_ctx *m, value *out)
{
    value keys[3] = {0}, vals[3] = {0}, tags[3] = {0}, walk[3];
    if (value_string(m, "name", 4, &keys[0]) ||
        value_string(m, "tags", 4, &keys[1]) ||
        value_string(m, "walk", 4, &keys[2]))
        goto fail;
    if (value_string(m, "nnnnnnnnnnnnnnnnnnnnnnnnn", 25, &vals[0]))
        goto fail;
    if (value_string(m, "x", 1, &tags[0]) ||
        value_string(m, "tttttttttttttttttttttttt", 24, &tags[1]))
        goto fail;
    tags[2] = value_float(2.5);
    if (value_list_from(m, tags, 3, &vals[1]))
        goto fail;
    walk[0] = value_node(1);
    walk[1] = value_rel(2);
    walk[2] = value_node(3);
    if (value_path_from(m, walk, 3, &vals[2]))
        goto fail;
    return value_map_from(m, keys, vals, 3, out);
fail:
    for (size_t i = 0; i < 3; i++) {
        value_release(&keys[i]);
        value_release(&vals[i]);
        value_release(&tags[i]);
    }
    *out = value_null();
    return -1;
}

static void test_oom_nested(void **state)
{
    mem_ctx *m = *state;
    int failures = 0;
    for (long k = 1;; k++) {
        value out;
        mem_fail_at(k);
        int rc = build_tree(m, &out);
        mem_fail_clear();
        if (rc == 0) {
            assert_int_equal(value_map_len(&out), 3);
            value_release(&out);
            break;
        }
        assert_int_equal(mem_ctx_bytes(m), 0);
        failures++;
    }
    /* name, tags' long string, tags, walk, sort scratch, map */
    assert_int_equal(failures, 6);
    assert_int_equal(mem_ctx_bytes(m), 0);
}

static void test_oom_clone(void **state)
{
    mem_ctx *m = *state;
    mem_ctx *other = mem_ctx_new();
    assert_non_null(other);
    value src = sample_tree(m);
    size_t size = value_heap_size(&src);
    uint64_t hash = value_hash(&src);
    int failures = 0;
    for (long k = 1;; k++) {
        value copy;
        mem_fail_at(k);
        int rc = value_clone(other, &src, &copy);
        mem_fail_clear();
        assert_int_equal(value_heap_size(&src), size);
        assert_true(value_hash(&src) == hash);
        if (rc == 0) {
            assert_int_equal(value_equals(&src, &copy), TRI_TRUE);
            value_release(&copy);
            break;
        }
        assert_int_equal(rc, -1);
        assert_true(value_is_null(&copy));
        assert_int_equal(mem_ctx_bytes(other), 0);
        failures++;
    }
    /* one per heap object: the map, name, tags, tags' long string, walk */
    assert_int_equal(failures, 5);
    value_release(&src);
    assert_int_equal(mem_ctx_bytes(other), 0);
    mem_ctx_release(other);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, mem_ctx_setup, mem_ctx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_scalars),
        T(test_string_boundaries),
        T(test_string_embedded_nul),
        T(test_refcounts),
        T(test_list_and_path),
        T(test_path_refused),
        T(test_map_build_and_get),
        T(test_map_bad_key),
        T(test_equals_scalars),
        T(test_equals_lists),
        T(test_equals_maps_and_paths),
        T(test_compare_scalars),
        T(test_compare_lists),
        T(test_order_cross_type),
        T(test_order_numbers),
        T(test_order_within_kinds),
        T(test_equivalence_and_hash),
        T(test_hash_spreads),
        T(test_clone),
        T(test_heap_size),
        T(test_oom_string),
        T(test_oom_list),
        T(test_oom_map),
        T(test_oom_nested),
        T(test_oom_clone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
