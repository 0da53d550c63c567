/*
 * Tests for storage/props: set/get/remove against a small model, sorted
 * keys, the old-value contract, the empty map (NULL, or an emptied
 * record that keeps its room so re-adding needs no memory),
 * copy-on-write of a shared record, growth through several capacities, and
 * every allocation failure of set and remove on private and shared records.
 *
 * Values mix ints, inline strings and heap strings (longer than
 * VALUE_INLINE_MAX), so refcounts of values held by records are exercised
 * as well.  Each test gets a fresh mem_ctx in *state; the teardown asserts
 * that nothing allocated from it is left.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "storage/props.h"

#include "support/mem_fixture.h"

/* ---- values and a model ------------------------------------------------ */

/* The value a test stores under a key: an int, or a string (heap-backed
   when long).  Kept as plain data so the model owns no memory. */
typedef struct expect {
    uint32_t key;
    int is_str;
    int64_t i;
    char s[48];
} expect;

static expect ex_int(uint32_t key, int64_t i)
{
    expect e = { key, 0, i, "" };
    return e;
}

/* A string long enough to live on the heap unless short is asked for. */
static expect ex_str(uint32_t key, int64_t seed, int heap)
{
    expect e = { key, 1, 0, "" };
    snprintf(e.s, sizeof e.s, heap ? "heap string value number %lld" : "s%lld",
             (long long)seed);
    return e;
}

static value make_value(mem_ctx *m, const expect *e)
{
    if (!e->is_str)
        return value_int(e->i);
    value v;
    assert_int_equal(value_string(m, e->s, strlen(e->s), &v), 0);
    return v;
}

static void assert_value_is(const value *v, const expect *e)
{
    assert_non_null(v);
    if (!e->is_str) {
        assert_int_equal(value_kind(v), VAL_INT);
        assert_int_equal(v->u.i, e->i);
        return;
    }
    size_t len;
    const char *s = value_str(v, &len);
    assert_non_null(s);
    assert_int_equal(len, strlen(e->s));
    assert_memory_equal(s, e->s, len);
}

/* The model: entries in increasing key order. */
typedef struct model {
    uint32_t n;
    expect e[256];
} model;

static void model_set(model *md, const expect *e)
{
    uint32_t i = 0;
    while (i < md->n && md->e[i].key < e->key)
        i++;
    if (i < md->n && md->e[i].key == e->key) {
        md->e[i] = *e;
        return;
    }
    assert_true(md->n < sizeof md->e / sizeof md->e[0]);
    memmove(&md->e[i + 1], &md->e[i], (md->n - i) * sizeof md->e[0]);
    md->e[i] = *e;
    md->n++;
}

static void model_remove(model *md, uint32_t key)
{
    for (uint32_t i = 0; i < md->n; i++) {
        if (md->e[i].key == key) {
            memmove(&md->e[i], &md->e[i + 1], (md->n - i - 1) * sizeof md->e[0]);
            md->n--;
            return;
        }
    }
}

/* r holds exactly the model: strictly increasing keys, each value right,
   lookups agree.  An empty map is the NULL record or an emptied one. */
static void assert_rec(const prop_rec *r, const model *md)
{
    assert_int_equal(props_len(r), md->n);
    for (uint32_t i = 0; i < md->n; i++) {
        assert_int_equal(props_key_at(r, i), md->e[i].key);
        if (i)
            assert_true(props_key_at(r, i - 1) < props_key_at(r, i));
        assert_value_is(props_val_at(r, i), &md->e[i]);
        assert_false(value_is_null(props_val_at(r, i)));
        assert_ptr_equal(props_get(r, md->e[i].key), props_val_at(r, i));
    }
}

static void set_ok(mem_ctx *m, prop_rec **rp, model *md, const expect *e)
{
    assert_int_equal(props_set(m, rp, e->key, make_value(m, e), NULL), 0);
    model_set(md, e);
    assert_rec(*rp, md);
}

static void remove_ok(mem_ctx *m, prop_rec **rp, model *md, uint32_t key)
{
    assert_int_equal(props_remove(m, rp, key, NULL), 0);
    model_remove(md, key);
    assert_rec(*rp, md);
}

/* A record holding keys 10, 20, ..., 10 * n with mixed values. */
static prop_rec *build(mem_ctx *m, model *md, uint32_t n)
{
    prop_rec *r = NULL;
    md->n = 0;
    for (uint32_t i = 1; i <= n; i++) {
        expect e = i % 3 == 0 ? ex_int(10 * i, i) : ex_str(10 * i, i, i % 3 == 1);
        set_ok(m, &r, md, &e);
    }
    return r;
}

/* ---- tests -------------------------------------------------------------- */

static void test_set_get_remove(void **state)
{
    mem_ctx *m = *state;
    static const uint32_t order[] = { 50, 10, 90, 30, 70, 20, 0, 100, 60 };
    model md = { 0 };
    prop_rec *r = NULL;

    assert_int_equal(props_len(NULL), 0);
    assert_null(props_get(NULL, 1));
    assert_int_equal(props_size(NULL), 0);

    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        expect e = i % 2 ? ex_int(order[i], (int64_t)i * 11) : ex_str(order[i], (int64_t)i, 1);
        set_ok(m, &r, &md, &e);
        assert_true(props_size(r) > 0);
    }
    assert_null(props_get(r, 5));
    assert_null(props_get(r, 101));
    assert_null(props_get(r, UINT32_MAX));

    /* Removing an absent key succeeds and reports null. */
    value old = value_int(1);
    assert_int_equal(props_remove(m, &r, 55, &old), 0);
    assert_true(value_is_null(&old));
    assert_rec(r, &md);

    remove_ok(m, &r, &md, 50);    /* middle */
    remove_ok(m, &r, &md, 0);     /* first */
    remove_ok(m, &r, &md, 100);   /* last */
    expect e = ex_int(55, -5);
    set_ok(m, &r, &md, &e);

    props_release(m, &r);
    assert_null(r);
}

static void test_overwrite_returns_old(void **state)
{
    mem_ctx *m = *state;
    model md = { 0 };
    prop_rec *r = build(m, &md, 4);

    /* Key 10 holds a heap string; the overwrite hands it back owned. */
    expect prev = md.e[0];
    assert_true(prev.is_str);
    expect next = ex_int(10, 99);
    value old = value_null();
    assert_int_equal(props_set(m, &r, 10, make_value(m, &next), &old), 0);
    model_set(&md, &next);
    assert_rec(r, &md);
    assert_value_is(&old, &prev);
    value_release(&old);

    /* An absent key's old value is null. */
    old = value_int(7);
    expect fresh = ex_str(15, 1, 1);
    assert_int_equal(props_set(m, &r, 15, make_value(m, &fresh), &old), 0);
    model_set(&md, &fresh);
    assert_true(value_is_null(&old));
    assert_rec(r, &md);

    /* Without old, the replaced heap value is released (the teardown's
       byte count would catch a leak). */
    expect again = ex_str(15, 2, 1);
    set_ok(m, &r, &md, &again);

    /* remove hands back the removed value. */
    old = value_null();
    assert_int_equal(props_remove(m, &r, 15, &old), 0);
    assert_value_is(&old, &again);
    value_release(&old);
    model_remove(&md, 15);
    assert_rec(r, &md);

    props_release(m, &r);
}

static void test_remove_last_leaves_empty_map(void **state)
{
    mem_ctx *m = *state;
    model md = { 0 };
    prop_rec *r = build(m, &md, 1);
    expect only = md.e[0];
    value old = value_null();
    assert_int_equal(props_remove(m, &r, only.key, &old), 0);
    assert_int_equal(props_len(r), 0);
    assert_null(props_get(r, only.key));
    assert_value_is(&old, &only);
    value_release(&old);
    props_release(m, &r);
    assert_null(r);
    assert_int_equal(mem_ctx_bytes(m), 0);

    /* And without old. */
    r = build(m, &md, 2);
    remove_ok(m, &r, &md, 20);
    remove_ok(m, &r, &md, 10);
    assert_int_equal(props_len(r), 0);
    props_release(m, &r);
}

/* A remove keeps the record's room, so putting the value back (the undo of
   the remove) succeeds with every allocation failing. */
static void test_remove_keeps_room(void **state)
{
    mem_ctx *m = *state;
    model md = { 0 };
    prop_rec *r = build(m, &md, 7);
    for (uint32_t i = 0; i < 7; i++) {
        expect e = md.e[i];
        value old = value_null();
        assert_int_equal(props_remove(m, &r, e.key, &old), 0);
        size_t size = props_size(r);
        mem_fail_at(1);
        int rc = props_set(m, &r, e.key, old, NULL);   /* consumes old */
        mem_fail_clear();
        assert_int_equal(rc, 0);
        assert_int_equal(props_size(r), size);
        assert_rec(r, &md);
    }
    /* Down to the empty record and back up. */
    model empty = { 0 };
    value saved[7];
    for (uint32_t i = 0; i < 7; i++)
        assert_int_equal(props_remove(m, &r, md.e[i].key, &saved[i]), 0);
    assert_rec(r, &empty);
    mem_fail_at(1);
    for (uint32_t i = 0; i < 7; i++)
        assert_int_equal(props_set(m, &r, md.e[i].key, saved[i], NULL), 0);
    mem_fail_clear();
    assert_rec(r, &md);
    props_release(m, &r);
}

static void test_cow_set(void **state)
{
    mem_ctx *m = *state;
    model md = { 0 };
    prop_rec *r = build(m, &md, 5);
    model shared_md = md;

    /* A second holder, as a forked slot chunk would be. */
    prop_rec *held = r;
    props_retain(held);

    uint64_t before = mem_copied_entries();
    expect e = ex_str(20, 77, 1);   /* overwrite */
    set_ok(m, &r, &md, &e);
    assert_ptr_not_equal(r, held);
    assert_int_equal(mem_copied_entries() - before, shared_md.n);
    assert_rec(held, &shared_md);

    /* r is private now: further writes are in place. */
    prop_rec *mine = r;
    before = mem_copied_entries();
    expect add = ex_int(25, 1);
    set_ok(m, &r, &md, &add);
    remove_ok(m, &r, &md, 30);
    assert_int_equal(mem_copied_entries(), before);
    assert_ptr_equal(r, mine);   /* room for six: no realloc either */
    assert_rec(held, &shared_md);

    /* A set of a new key on a shared record copies too. */
    prop_rec *held2 = r;
    props_retain(held2);
    model md2 = md;
    expect add2 = ex_str(1, 3, 1);
    set_ok(m, &r, &md, &add2);
    assert_ptr_not_equal(r, held2);
    assert_rec(held2, &md2);

    props_release(m, &held2);
    props_release(m, &r);
    assert_rec(held, &shared_md);
    props_release(m, &held);
}

static void test_cow_remove(void **state)
{
    mem_ctx *m = *state;
    model md = { 0 };
    prop_rec *r = build(m, &md, 4);
    model shared_md = md;
    prop_rec *held = r;
    props_retain(held);

    value old = value_null();
    assert_int_equal(props_remove(m, &r, 10, &old), 0);
    assert_value_is(&old, &shared_md.e[0]);
    value_release(&old);
    model_remove(&md, 10);
    assert_ptr_not_equal(r, held);
    assert_rec(r, &md);
    assert_rec(held, &shared_md);

    /* Removing an absent key from a shared record changes nothing. */
    prop_rec *held2 = r;
    props_retain(held2);
    assert_int_equal(props_remove(m, &r, 11, NULL), 0);
    assert_ptr_equal(r, held2);
    props_release(m, &held2);

    props_release(m, &r);
    assert_rec(held, &shared_md);

    /* The last key of a shared one-key record: this holder's map becomes
       empty, the other keeps its value. */
    model one = { 0 };
    r = build(m, &one, 1);
    held2 = r;
    props_retain(held2);
    old = value_null();
    assert_int_equal(props_remove(m, &r, 10, &old), 0);
    assert_ptr_not_equal(r, held2);
    assert_int_equal(props_len(r), 0);
    assert_value_is(&old, &one.e[0]);
    value_release(&old);
    assert_rec(held2, &one);
    props_release(m, &held2);
    props_release(m, &r);

    props_release(m, &held);
}

static void test_growth(void **state)
{
    mem_ctx *m = *state;
    model md = { 0 };
    prop_rec *r = NULL;
    size_t size = 0;
    int grew = 0;
    /* Keys in a scrambled order (37 is coprime to 200). */
    for (uint32_t i = 0; i < 200; i++) {
        uint32_t key = (i * 37) % 200;
        expect e = key % 2 ? ex_int(key, -(int64_t)key) : ex_str(key, key, key % 4 == 0);
        set_ok(m, &r, &md, &e);
        if (props_size(r) != size) {
            assert_true(props_size(r) > size);
            size = props_size(r);
            grew++;
        }
    }
    assert_true(grew >= 5);
    /* Overwrite every key, then remove them in another order. */
    for (uint32_t key = 0; key < 200; key += 3) {
        expect e = ex_str(key, key + 1000, 1);
        set_ok(m, &r, &md, &e);
    }
    for (uint32_t i = 0; i < 200; i++)
        remove_ok(m, &r, &md, (i * 71) % 200);
    assert_int_equal(props_len(r), 0);
    props_release(m, &r);
}

/* ---- allocation failure ------------------------------------------------ */

/* Runs props_set(key, e) with the 1st, 2nd, ... allocation failing until
   it succeeds; after each failure both *rp and held (when not NULL) still
   hold their models.  Returns the failures seen. */
static long set_until_success(mem_ctx *m, prop_rec **rp, model *md, const prop_rec *held,
                              const model *held_md, const expect *e)
{
    for (long k = 1;; k++) {
        assert_true(k < 32);
        prop_rec *before = *rp;
        value v = make_value(m, e);   /* allocated before failures start */
        mem_fail_at(k);
        int rc = props_set(m, rp, e->key, v, NULL);
        mem_fail_clear();
        if (rc == 0) {
            model_set(md, e);
            assert_rec(*rp, md);
            return k - 1;
        }
        assert_int_equal(rc, -1);
        assert_ptr_equal(*rp, before);
        assert_rec(*rp, md);
        if (held)
            assert_rec(held, held_md);
    }
}

static long remove_until_success(mem_ctx *m, prop_rec **rp, model *md, const prop_rec *held,
                                 const model *held_md, uint32_t key)
{
    for (long k = 1;; k++) {
        assert_true(k < 32);
        prop_rec *before = *rp;
        value old = value_int(-1);
        mem_fail_at(k);
        int rc = props_remove(m, rp, key, &old);
        mem_fail_clear();
        if (rc == 0) {
            value_release(&old);
            model_remove(md, key);
            assert_rec(*rp, md);
            return k - 1;
        }
        assert_int_equal(rc, -1);
        assert_ptr_equal(*rp, before);
        assert_rec(*rp, md);
        if (held)
            assert_rec(held, held_md);
    }
}

static void test_set_failure_private(void **state)
{
    mem_ctx *m = *state;
    model md = { 0 };
    prop_rec *r = NULL;
    long failures = 0;
    /* From the NULL record through several in-place growths. */
    for (uint32_t i = 0; i < 20; i++) {
        expect e = ex_str(100 - i * 5, i, i % 2);
        failures += set_until_success(m, &r, &md, NULL, NULL, &e);
    }
    assert_true(failures > 0);
    props_release(m, &r);
}

static void test_set_failure_shared(void **state)
{
    mem_ctx *m = *state;
    static const uint32_t keys[] = { 20, 5, 45, 60, 30 };   /* overwrite, new */
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        model md = { 0 };
        prop_rec *r = build(m, &md, 5);
        prop_rec *held = r;
        props_retain(held);
        model held_md = md;
        expect e = ex_str(keys[k], 500 + (int64_t)k, 1);
        long failures = set_until_success(m, &r, &md, held, &held_md, &e);
        assert_true(failures >= 1);
        assert_ptr_not_equal(r, held);
        assert_rec(held, &held_md);
        props_release(m, &r);
        props_release(m, &held);
        assert_int_equal(mem_ctx_bytes(m), 0);
    }
}

static void test_remove_failure_shared(void **state)
{
    mem_ctx *m = *state;
    static const uint32_t keys[] = { 10, 30, 50 };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        model md = { 0 };
        prop_rec *r = build(m, &md, 5);
        prop_rec *held = r;
        props_retain(held);
        model held_md = md;
        long failures = remove_until_success(m, &r, &md, held, &held_md, keys[k]);
        assert_true(failures >= 1);
        assert_rec(held, &held_md);
        props_release(m, &r);
        props_release(m, &held);
        assert_int_equal(mem_ctx_bytes(m), 0);
    }
    /* Removing from a private record never allocates. */
    model md = { 0 };
    prop_rec *r = build(m, &md, 3);
    assert_int_equal(remove_until_success(m, &r, &md, NULL, NULL, 20), 0);
    props_release(m, &r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_set_get_remove, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_overwrite_returns_old, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_remove_last_leaves_empty_map, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_remove_keeps_room, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_cow_set, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_cow_remove, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_growth, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_set_failure_private, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_set_failure_shared, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_remove_failure_shared, mem_ctx_setup, mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
