/* Point lookups without value handles (strata_index_get_int,
   strata_index_get_string, strata_index_get_ints) and borrowed property
   reads (strata_node_peek, strata_rel_peek, strata_nodes_peek): on random
   graphs with deletions they answer exactly as the slow path
   (strata_index_get with a value handle, strata_node_get); misses, wrong
   key types, deleted nodes and bad arguments are statuses; a borrowed
   value read in a view survives every later write unchanged; the calls
   that promise no allocation make none, and the one that may allocate
   fails cleanly when it cannot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "storage/mem.h"
#include "strata.h"

#define OK(call) assert_int_equal((call), STRATA_OK)

typedef struct fixture {
    strata_graph *g;
    strata_token label, ikey, skey, prop, rtype;
    strata_index iidx, sidx;
    size_t n;          /* nodes created */
    bool *deleted;     /* per node */
} fixture;

static uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* The string key of record i: short ones inline in a value cell, every
   third one longer than 13 bytes (on the heap), all distinct. */
static void skey_of(size_t i, char *buf, size_t cap)
{
    if (i % 3 == 0)
        snprintf(buf, cap, "a-long-string-key-%zu", i);
    else
        snprintf(buf, cap, "s%zu", i);
}

/* A property of record i of a type chosen by i: a long string, a short
   one, an integer, a float, or none. */
static strata_value *prop_of(size_t i)
{
    char buf[96];
    switch (i % 5) {
    case 0:
        snprintf(buf, sizeof buf, "the value of record %zu, long enough for the heap", i);
        return strata_value_string(buf, strlen(buf));
    case 1:
        snprintf(buf, sizeof buf, "v%zu", i);
        return strata_value_string(buf, strlen(buf));
    case 2:
        return strata_value_int((int64_t)i * 31);
    case 3:
        return strata_value_float((double)i / 4);
    default:
        return NULL;
    }
}

/* n Item nodes: record i has ikey = 2i (even numbers only, so odd ones
   miss), skey = skey_of(i), prop = prop_of(i); then a random quarter of
   them deleted; a chain of relationships between survivors carries the
   same props. */
static fixture build(size_t n, uint64_t seed)
{
    fixture f = { .n = n };
    OK(strata_graph_new(&f.g));
    OK(strata_token_intern(f.g, STRATA_LABEL, "Item", &f.label));
    OK(strata_token_intern(f.g, STRATA_KEY, "ik", &f.ikey));
    OK(strata_token_intern(f.g, STRATA_KEY, "sk", &f.skey));
    OK(strata_token_intern(f.g, STRATA_KEY, "p", &f.prop));
    OK(strata_token_intern(f.g, STRATA_RELTYPE, "NEXT", &f.rtype));
    OK(strata_index_create(f.g, STRATA_INDEX_UNIQUE, false, f.label, &f.ikey, 1, &f.iidx));
    OK(strata_index_create(f.g, STRATA_INDEX_UNIQUE, false, f.label, &f.skey, 1, &f.sidx));
    f.deleted = calloc(n, sizeof *f.deleted);
    assert_non_null(f.deleted);
    for (size_t i = 0; i < n; i++) {
        strata_id id;
        OK(strata_node_create(f.g, &f.label, 1, &id));
        assert_int_equal(id, i);
        char buf[64];
        skey_of(i, buf, sizeof buf);
        strata_value *ik = strata_value_int((int64_t)(2 * i));
        strata_value *sk = strata_value_string(buf, strlen(buf));
        strata_value *p = prop_of(i);
        OK(strata_node_set(f.g, id, f.ikey, ik));
        OK(strata_node_set(f.g, id, f.skey, sk));
        if (p)
            OK(strata_node_set(f.g, id, f.prop, p));
        strata_value_free(&ik);
        strata_value_free(&sk);
        strata_value_free(&p);
    }
    for (size_t i = 0; i < n; i++)
        if (rnd(&seed) % 4 == 0) {
            OK(strata_node_delete(f.g, i));
            f.deleted[i] = true;
        }
    strata_id prev = STRATA_NO_ID;
    for (size_t i = 0; i < n; i++) {
        if (f.deleted[i])
            continue;
        if (prev != STRATA_NO_ID) {
            strata_id rel;
            OK(strata_rel_create(f.g, prev, i, f.rtype, &rel));
            strata_value *p = prop_of(i);
            if (p)
                OK(strata_rel_set(f.g, rel, f.prop, p));
            strata_value_free(&p);
        }
        prev = i;
    }
    return f;
}

static void teardown(fixture *f)
{
    free(f->deleted);
    strata_graph_free(&f->g);
}

/* Whether a and b are the same value: same type and equal (nothing here
   stores a NaN). */
static bool same(const strata_value *a, const strata_value *b)
{
    if (strata_value_type(a) != strata_value_type(b))
        return false;
    return strata_value_type(a) == STRATA_NULL || strata_value_equals(a, b) == 1;
}

/* The slow path: strata_index_get with a value handle. */
static strata_status slow_get(strata_view *v, strata_index idx, strata_value *key,
                              strata_id *out)
{
    const strata_value *k = key;
    return strata_index_get(v, idx, &k, 1, out);
}

static void int_lookups_equal_the_slow_path(void **state)
{
    (void)state;
    fixture f = build(600, 0x1234567);
    strata_view *v;
    OK(strata_snapshot(f.g, &v));
    uint64_t seed = 99;
    int hits = 0;
    for (int t = 0; t < 3000; t++) {
        int64_t key = (int64_t)(rnd(&seed) % (4 * f.n)) - 8;   /* hits, misses, negatives */
        strata_value *k = strata_value_int(key);
        strata_id slow = STRATA_NO_ID, fast = STRATA_NO_ID;
        strata_status s1 = slow_get(v, f.iidx, k, &slow);
        strata_status s2 = strata_index_get_int(v, f.iidx, key, &fast);
        assert_int_equal(s1, s2);
        if (s1 == STRATA_OK) {
            assert_int_equal(slow, fast);
            assert_int_equal(fast * 2, key);
            assert_false(f.deleted[fast]);
            hits++;
        } else {
            assert_int_equal(s1, STRATA_ENOTFOUND);
            assert_non_null(strstr(strata_view_errmsg(v), "holds nothing"));
            assert_int_equal(fast, STRATA_NO_ID);   /* untouched, as slow */
            assert_int_equal(slow, STRATA_NO_ID);
        }
        strata_value_free(&k);
    }
    assert_true(hits > 100);
    strata_view_release(&v);
    teardown(&f);
}

static void string_lookups_equal_the_slow_path(void **state)
{
    (void)state;
    fixture f = build(400, 0xabcdef);
    strata_view *v;
    OK(strata_snapshot(f.g, &v));
    for (size_t i = 0; i < f.n + 50; i++) {
        char buf[64];
        skey_of(i, buf, sizeof buf);
        strata_value *k = strata_value_string(buf, strlen(buf));
        strata_id slow = STRATA_NO_ID, fast = STRATA_NO_ID;
        strata_status s1 = slow_get(v, f.sidx, k, &slow);
        strata_status s2 = strata_index_get_string(v, f.sidx, buf, strlen(buf), &fast);
        assert_int_equal(s1, s2);
        assert_int_equal(s1, i < f.n && !f.deleted[i] ? STRATA_OK : STRATA_ENOTFOUND);
        if (s1 == STRATA_OK) {
            assert_int_equal(slow, fast);
            assert_int_equal(fast, i);
        }
        /* a prefix of a key is another key (found or not, as slowly) */
        strata_value *pk = strata_value_string(buf, strlen(buf) - 1);
        s1 = slow_get(v, f.sidx, pk, &slow);
        assert_int_equal(strata_index_get_string(v, f.sidx, buf, strlen(buf) - 1, &fast), s1);
        if (s1 == STRATA_OK)
            assert_int_equal(slow, fast);
        strata_value_free(&pk);
        strata_value_free(&k);
    }
    strata_view_release(&v);
    teardown(&f);
}

static void peeks_equal_node_get(void **state)
{
    (void)state;
    fixture f = build(500, 0x77);
    strata_view *v;
    OK(strata_snapshot(f.g, &v));
    strata_token keys[] = { f.prop, f.ikey, f.skey, 12345 /* never interned */ };
    for (size_t i = 0; i < f.n + 5; i++) {
        for (size_t k = 0; k < 4; k++) {
            strata_value *slow = NULL;
            const strata_value *fast = NULL;
            strata_status s1 = strata_node_get(v, i, keys[k], &slow);
            strata_status s2 = strata_node_peek(v, i, keys[k], &fast);
            assert_int_equal(s1, s2);
            assert_int_equal(s1, i < f.n && !f.deleted[i] ? STRATA_OK : STRATA_ENOTFOUND);
            if (s1 == STRATA_OK)
                assert_true(same(slow, fast));
            else
                assert_null(fast);
            strata_value_free(&slow);
        }
    }
    /* relationships: every one of them, and one past the last */
    for (strata_id r = 0;; r++) {
        strata_value *slow = NULL;
        const strata_value *fast = NULL;
        strata_status s1 = strata_rel_get(v, r, f.prop, &slow);
        assert_int_equal(strata_rel_peek(v, r, f.prop, &fast), s1);
        if (s1 != STRATA_OK) {
            assert_int_equal(s1, STRATA_ENOTFOUND);
            assert_int_equal(r, strata_rel_count(v));
            break;
        }
        assert_true(same(slow, fast));
        strata_value_free(&slow);
    }
    strata_view_release(&v);
    teardown(&f);
}

static void batches_equal_single_calls(void **state)
{
    (void)state;
    fixture f = build(700, 0x5eed);
    strata_view *v;
    OK(strata_snapshot(f.g, &v));
    uint64_t seed = 7;
    for (int round = 0; round < 40; round++) {
        size_t n = rnd(&seed) % 100;   /* 0 .. 99: empty, partial and full ways */
        int64_t keys[100];
        strata_id ids[100], nodes[100];
        const strata_value *vals[100];
        size_t want = 0;
        for (size_t i = 0; i < n; i++) {
            keys[i] = (int64_t)(rnd(&seed) % (3 * f.n));
            nodes[i] = rnd(&seed) % (f.n + 10);   /* deleted and out-of-range ids too */
        }
        for (size_t i = 0; i < n; i++) {
            strata_id one;
            want += strata_index_get_int(v, f.iidx, keys[i], &one) == STRATA_OK;
        }
        size_t found = 12345;
        OK(strata_index_get_ints(v, f.iidx, n ? keys : NULL, n, n ? ids : NULL, &found));
        assert_int_equal(found, want);
        OK(strata_nodes_peek(v, n ? nodes : NULL, n, f.prop, n ? vals : NULL));
        for (size_t i = 0; i < n; i++) {
            strata_id one;
            if (strata_index_get_int(v, f.iidx, keys[i], &one) == STRATA_OK)
                assert_int_equal(ids[i], one);
            else
                assert_int_equal(ids[i], STRATA_NO_ID);
            const strata_value *pv = NULL;
            if (strata_node_peek(v, nodes[i], f.prop, &pv) == STRATA_OK)
                assert_ptr_equal(vals[i], pv);   /* the same stored value */
            else
                assert_null(vals[i]);
        }
    }
    strata_view_release(&v);
    teardown(&f);
}

/* strata_index_get_ints on v answers each of many random keys (hits,
   misses, deleted records' keys; batches longer than the walks' groups)
   exactly as strata_index_get_int does. */
static void assert_batch_is_singles(strata_view *v, const fixture *f, uint64_t *seed)
{
    enum { MAX = 300 };
    int64_t keys[MAX];
    strata_id ids[MAX];
    for (int round = 0; round < 20; round++) {
        size_t n = rnd(seed) % MAX, want = 0, found = 0;
        for (size_t i = 0; i < n; i++)
            keys[i] = (int64_t)(rnd(seed) % (2 * f->n + 40)) - 20;   /* negatives too */
        OK(strata_index_get_ints(v, f->iidx, n ? keys : NULL, n, n ? ids : NULL, &found));
        for (size_t i = 0; i < n; i++) {
            strata_id one = STRATA_NO_ID;
            if (strata_index_get_int(v, f->iidx, keys[i], &one) == STRATA_OK)
                want++;
            assert_int_equal(ids[i], one);
        }
        assert_int_equal(found, want);
    }
}

/* The batched walks against single lookups on a graph big enough for a
   deep trie, before and after writes made while a view is held (so the
   newer versions' index has delta levels, which take the per-key path),
   in the held view and in fresh ones. */
static void batched_walks_across_writes(void **state)
{
    (void)state;
    fixture f = build(3000, 0xba7c4);
    uint64_t seed = 99;
    strata_view *held;
    OK(strata_snapshot(f.g, &held));
    assert_batch_is_singles(held, &f, &seed);
    for (int wave = 0; wave < 4; wave++) {
        for (int w = 0; w < 200; w++) {
            strata_id node = rnd(&seed) % f.n;
            if (f.deleted[node])
                continue;
            if (w % 3 == 0) {
                OK(strata_node_detach_delete(f.g, node));
                f.deleted[node] = true;
            } else {   /* a new key, odd, beyond the built ones */
                strata_value *k = strata_value_int((int64_t)(2 * f.n + 1 + 2 * (wave * 200 + w)));
                OK(strata_node_set(f.g, node, f.ikey, k));
                strata_value_free(&k);
            }
        }
        strata_view *fresh;
        OK(strata_snapshot(f.g, &fresh));
        assert_batch_is_singles(fresh, &f, &seed);
        strata_view_release(&fresh);
        assert_batch_is_singles(held, &f, &seed);
    }
    strata_view_release(&held);
    /* nobody holds the old version now: the next write folds the levels
       back and the batched walks answer again */
    strata_value *k = strata_value_int(-7);
    strata_id node = 0;
    while (f.deleted[node])
        node++;
    OK(strata_node_set(f.g, node, f.ikey, k));
    strata_value_free(&k);
    strata_view *last;
    OK(strata_snapshot(f.g, &last));
    assert_batch_is_singles(last, &f, &seed);
    strata_id id;
    int64_t minus7 = -7;
    size_t found;
    OK(strata_index_get_ints(last, f.iidx, &minus7, 1, &id, &found));
    assert_int_equal(found, 1);
    assert_int_equal(id, node);
    strata_view_release(&last);
    teardown(&f);
}

/* 1 matches 1.0 as in strata_index_get; a key of another type than the
   stored ones misses; an index over strings never matches an integer. */
static void key_types(void **state)
{
    (void)state;
    strata_graph *g;
    OK(strata_graph_new(&g));
    strata_token lab, key;
    strata_index idx;
    OK(strata_token_intern(g, STRATA_LABEL, "L", &lab));
    OK(strata_token_intern(g, STRATA_KEY, "k", &key));
    OK(strata_index_create(g, STRATA_INDEX_UNIQUE, false, lab, &key, 1, &idx));
    strata_id a, b, c;
    OK(strata_node_create(g, &lab, 1, &a));
    OK(strata_node_create(g, &lab, 1, &b));
    OK(strata_node_create(g, &lab, 1, &c));
    strata_value *one = strata_value_float(1.0), *s = strata_value_string("7", 1),
                 *big = strata_value_int(INT64_MIN);
    OK(strata_node_set(g, a, key, one));
    OK(strata_node_set(g, b, key, s));
    OK(strata_node_set(g, c, key, big));
    strata_view *v;
    OK(strata_snapshot(g, &v));
    strata_id id = 99;
    OK(strata_index_get_int(v, idx, 1, &id));
    assert_int_equal(id, a);
    OK(strata_index_get_int(v, idx, INT64_MIN, &id));
    assert_int_equal(id, c);
    assert_int_equal(strata_index_get_int(v, idx, 7, &id), STRATA_ENOTFOUND);
    OK(strata_index_get_string(v, idx, "7", 1, &id));
    assert_int_equal(id, b);
    assert_int_equal(strata_index_get_string(v, idx, "1", 1, &id), STRATA_ENOTFOUND);
    /* the peeked value has the stored type */
    const strata_value *pv;
    OK(strata_node_peek(v, a, key, &pv));
    assert_int_equal(strata_value_type(pv), STRATA_FLOAT);
    int64_t i;
    assert_int_equal(strata_value_get_int(pv, &i), STRATA_ETYPE);
    strata_value_free(&one);
    strata_value_free(&s);
    strata_value_free(&big);
    strata_view_release(&v);
    strata_graph_free(&g);
}

static void bad_arguments(void **state)
{
    (void)state;
    fixture f = build(20, 3);
    strata_token both[] = { f.ikey, f.skey };
    strata_index comp, hash;
    OK(strata_index_create(f.g, STRATA_INDEX_HASH, false, f.label, both, 2, &comp));
    OK(strata_index_create(f.g, STRATA_INDEX_HASH, false, f.label, &f.prop, 1, &hash));
    strata_view *v;
    OK(strata_snapshot(f.g, &v));
    strata_id id;
    size_t found;
    int64_t k = 2;
    const strata_value *pv;
    assert_int_equal(strata_index_get_int(NULL, f.iidx, 2, &id), STRATA_EINVAL);
    assert_int_equal(strata_index_get_int(v, f.iidx, 2, NULL), STRATA_EINVAL);
    assert_int_equal(strata_index_get_int(v, 999, 2, &id), STRATA_ENOTFOUND);
    assert_int_equal(strata_index_get_int(v, comp, 2, &id), STRATA_EINVAL);
    assert_non_null(strstr(strata_view_errmsg(v), "has 2 keys"));
    assert_int_equal(strata_index_get_string(NULL, f.sidx, "s1", 2, &id), STRATA_EINVAL);
    assert_int_equal(strata_index_get_string(v, f.sidx, NULL, 2, &id), STRATA_EINVAL);
    assert_int_equal(strata_index_get_string(v, f.sidx, "s1", 2, NULL), STRATA_EINVAL);
    assert_int_equal(strata_index_get_string(v, f.sidx, "\xff", 1, &id), STRATA_EINVAL);
    assert_non_null(strstr(strata_view_errmsg(v), "UTF-8"));
    assert_int_equal(strata_index_get_string(v, comp, "s1", 2, &id), STRATA_EINVAL);
    assert_int_equal(strata_index_get_ints(NULL, f.iidx, &k, 1, &id, &found), STRATA_EINVAL);
    assert_int_equal(strata_index_get_ints(v, f.iidx, NULL, 1, &id, &found), STRATA_EINVAL);
    assert_int_equal(strata_index_get_ints(v, f.iidx, &k, 1, NULL, &found), STRATA_EINVAL);
    assert_int_equal(strata_index_get_ints(v, f.iidx, &k, 1, &id, NULL), STRATA_EINVAL);
    assert_int_equal(strata_index_get_ints(v, 999, &k, 1, &id, &found), STRATA_ENOTFOUND);
    assert_int_equal(strata_index_get_ints(v, comp, &k, 1, &id, &found), STRATA_EINVAL);
    /* a single-key hash index answers the same calls (not only unique ones) */
    size_t rec = 2;   /* an integer property, i * 31 */
    while (f.deleted[rec])
        rec += 5;
    OK(strata_index_get_int(v, hash, (int64_t)rec * 31, &id));
    assert_int_equal(id, rec);
    assert_int_equal(strata_node_peek(NULL, 0, f.prop, &pv), STRATA_EINVAL);
    assert_int_equal(strata_node_peek(v, 0, f.prop, NULL), STRATA_EINVAL);
    assert_int_equal(strata_node_peek(v, UINT64_MAX, f.prop, &pv), STRATA_ENOTFOUND);
    assert_int_equal(strata_rel_peek(NULL, 0, f.prop, &pv), STRATA_EINVAL);
    assert_int_equal(strata_rel_peek(v, 0, f.prop, NULL), STRATA_EINVAL);
    assert_int_equal(strata_rel_peek(v, UINT64_MAX, f.prop, &pv), STRATA_ENOTFOUND);
    strata_id node = 0;
    assert_int_equal(strata_nodes_peek(NULL, &node, 1, f.prop, &pv), STRATA_EINVAL);
    assert_int_equal(strata_nodes_peek(v, NULL, 1, f.prop, &pv), STRATA_EINVAL);
    assert_int_equal(strata_nodes_peek(v, &node, 1, f.prop, NULL), STRATA_EINVAL);
    OK(strata_nodes_peek(v, NULL, 0, f.prop, NULL));
    strata_view_release(&v);
    teardown(&f);
}

/* A view's borrowed values, and its lookups, stay as they were whatever
   the writer does after it was taken; a fresh view sees the writes. */
static void a_view_held_across_writes(void **state)
{
    (void)state;
    fixture f = build(50, 11);
    strata_id node = 0;   /* record 0: a long string property */
    while (f.deleted[node])
        node += 5;
    strata_view *old;
    OK(strata_snapshot(f.g, &old));
    const strata_value *pv;
    const char *s;
    size_t len;
    OK(strata_node_peek(old, node, f.prop, &pv));
    OK(strata_value_get_string(pv, &s, &len));
    char want[96];
    assert_true(len < sizeof want);
    memcpy(want, s, len + 1);
    strata_value *repl = strata_value_string("replaced", 8), *nk = strata_value_int(-1);
    OK(strata_node_set(f.g, node, f.prop, repl));
    OK(strata_node_set(f.g, node, f.ikey, nk));
    OK(strata_node_detach_delete(f.g, node));
    OK(strata_index_drop(f.g, f.sidx));
    strata_value_free(&repl);
    strata_value_free(&nk);
    /* the string read before the writes is still there, unchanged */
    assert_int_equal(strlen(s), len);
    assert_memory_equal(s, want, len);
    const strata_value *again;
    OK(strata_node_peek(old, node, f.prop, &again));
    assert_ptr_equal(again, pv);
    strata_id id;
    OK(strata_index_get_int(old, f.iidx, (int64_t)(2 * node), &id));
    assert_int_equal(id, node);
    char key[64];
    skey_of(node, key, sizeof key);
    OK(strata_index_get_string(old, f.sidx, key, strlen(key), &id));
    strata_view *fresh;
    OK(strata_snapshot(f.g, &fresh));
    assert_int_equal(strata_node_peek(fresh, node, f.prop, &again), STRATA_ENOTFOUND);
    assert_int_equal(strata_index_get_int(fresh, f.iidx, (int64_t)(2 * node), &id),
                     STRATA_ENOTFOUND);
    assert_int_equal(strata_index_get_string(fresh, f.sidx, key, strlen(key), &id),
                     STRATA_ENOTFOUND);
    const strata_value *batch[1];
    OK(strata_nodes_peek(fresh, &node, 1, f.prop, batch));
    assert_null(batch[0]);
    OK(strata_nodes_peek(old, &node, 1, f.prop, batch));
    assert_ptr_equal(batch[0], pv);
    strata_view_release(&fresh);
    /* the graph gone too: the view alone keeps the value */
    strata_graph_free(&f.g);
    assert_memory_equal(s, want, len);
    strata_view_release(&old);
    free(f.deleted);
}

/* Every call but a long string key allocates nothing: the allocator's own
   count of attempts stays at zero over hits, misses and batches. */
static void no_allocation(void **state)
{
    (void)state;
    fixture f = build(300, 5);
    strata_view *v;
    OK(strata_snapshot(f.g, &v));
    int64_t keys[40];
    strata_id ids[40], nodes[40];
    const strata_value *vals[40];
    for (int i = 0; i < 40; i++) {
        keys[i] = i * 3;
        nodes[i] = (strata_id)i * 7;
    }
    mem_fail_clear();
    size_t found, hits = 0;
    for (int i = 0; i < 200; i++) {
        strata_id id;
        const strata_value *pv;
        if (strata_index_get_int(v, f.iidx, i, &id) == STRATA_OK) {
            OK(strata_node_peek(v, id, f.prop, &pv));
            hits++;
        }
        char buf[16];
        snprintf(buf, sizeof buf, "s%d", i);   /* short keys: inline */
        hits += strata_index_get_string(v, f.sidx, buf, strlen(buf), &id) == STRATA_OK;
        (void)strata_rel_peek(v, (strata_id)i, f.prop, &pv);
    }
    OK(strata_index_get_ints(v, f.iidx, keys, 40, ids, &found));
    OK(strata_nodes_peek(v, nodes, 40, f.prop, vals));
    assert_int_equal(mem_fail_count(), 0);
    assert_true(hits > 50 && found > 5);
    /* the slow path, for contrast, allocates its key handle */
    strata_value *k = strata_value_int(4);
    assert_true(mem_fail_count() > 0);
    strata_value_free(&k);
    strata_view_release(&v);
    teardown(&f);
}

/* A long string key is copied once: each allocation failing in turn is
   STRATA_ENOMEM with nothing leaked, and the lookup then succeeds. */
static void long_string_key_out_of_memory(void **state)
{
    (void)state;
    fixture f = build(30, 9);
    strata_view *v;
    OK(strata_snapshot(f.g, &v));
    size_t node = 3;
    while (f.deleted[node])
        node += 3;
    char key[64];
    skey_of(node, key, sizeof key);
    assert_true(strlen(key) > 13);
    size_t live = mem_live_bytes();
    long k;
    strata_status s = STRATA_ENOMEM;
    strata_id id = STRATA_NO_ID;
    for (k = 1; k < 20 && s == STRATA_ENOMEM; k++) {
        mem_fail_at(k);
        s = strata_index_get_string(v, f.sidx, key, strlen(key), &id);
        mem_fail_clear();
        if (s == STRATA_ENOMEM) {
            assert_non_null(strstr(strata_view_errmsg(v), "out of memory"));
            assert_int_equal(id, STRATA_NO_ID);
        }
        assert_int_equal(mem_live_bytes(), live);
    }
    assert_true(k > 2);   /* at least one allocation failed first */
    assert_int_equal(s, STRATA_OK);
    assert_int_equal(id, node);
    strata_view_release(&v);
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(int_lookups_equal_the_slow_path),
        cmocka_unit_test(string_lookups_equal_the_slow_path),
        cmocka_unit_test(peeks_equal_node_get),
        cmocka_unit_test(batches_equal_single_calls),
        cmocka_unit_test(batched_walks_across_writes),
        cmocka_unit_test(key_types),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(a_view_held_across_writes),
        cmocka_unit_test(no_allocation),
        cmocka_unit_test(long_string_key_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
