/*
 * Tests for the point hash beside hashed index trees (storage/phash via
 * pbtree_point, index/level_stack's lstack_first): random writes checked
 * against a simple model — an unordered list of (key, id) entries — with
 * copies held across the writes (the held ones must keep answering as they
 * did), the trie's own check after every write, point lookups of keys of
 * every kind (1 and 1.0 one key, NaN, strings inline and on the heap,
 * booleans, and lists, which the hash leaves to the tree), and allocation
 * failure swept over the reserve, the level-stack prepare and the build.
 *
 * The test build has 4-way trie nodes and 10-bit hashes, so pushed-down
 * cells, pruned nodes and keys left out of the trie ("unknown": two keys of
 * one hash) all happen on small key sets; the tests assert they did.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "index/level_stack.h"
#include "storage/pbtree.h"

#include "support/mem_fixture.h"

static uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static value str_key(mem_ctx *m, const char *fmt, int k)
{
    char buf[80];
    int n = snprintf(buf, sizeof buf, fmt, k);
    value v;
    assert_int_equal(value_string(m, buf, (size_t)n, &v), 0);
    return v;
}

/* A key of a random kind from a space of `space` values per kind, so that
   keys repeat and 10-bit hashes collide.  int k and float k are one key. */
static value random_key(mem_ctx *m, uint64_t *rng, int space)
{
    int k = (int)(next_rand(rng) % (uint64_t)space);
    switch (next_rand(rng) % 8) {
    case 0:
    case 1:
        return value_int(k);
    case 2:
        return value_float(k);   /* the int k's key */
    case 3:
        return value_float(k % 4 == 0 ? NAN : k % 4 == 1 ? -0.0 : k + 0.25);
    case 4:
        return str_key(m, "s%d", k);
    case 5:
        return str_key(m, "a string long enough for the heap %d", k);
    case 6:
        return value_bool(k & 1);
    default: {
        value items[2] = { value_int(k % 3), value_int(k) };
        value list;
        assert_int_equal(value_list_from(m, items, 2, &list), 0);
        return list;
    }
    }
}

/* ---- the model: (key, id) entries in no order ------------------------------ */

typedef struct entry {
    value key;
    uint64_t id;
} entry;

typedef struct model {
    entry *e;
    size_t n, cap;
    mem_ctx *m;
} model;

static long find(const model *md, const value *key, uint64_t id)
{
    for (size_t i = 0; i < md->n; i++)
        if (md->e[i].id == id && value_order(&md->e[i].key, key) == 0)
            return (long)i;
    return -1;
}

/* Whether the write changed the model (as the tree reports it). */
static bool model_write(model *md, const value *key, uint64_t id, bool insert)
{
    long at = find(md, key, id);
    if (insert == (at >= 0))
        return false;
    if (insert) {
        if (md->n == md->cap) {
            size_t cap = md->cap ? 2 * md->cap : 64;
            entry *e = mem_alloc(mem_scratch(), cap * sizeof *e);
            assert_non_null(e);
            if (md->n)
                memcpy(e, md->e, md->n * sizeof *e);
            if (md->e)
                mem_free_sized(mem_scratch(), md->e, md->cap * sizeof *e);
            md->e = e;
            md->cap = cap;
        }
        md->e[md->n++] = (entry){ value_retain(*key), id };
    } else {
        value_release(&md->e[at].key);
        md->e[at] = md->e[--md->n];
    }
    return true;
}

/* The least id under key and how many there are. */
static uint64_t model_point(const model *md, const value *key, uint64_t *least)
{
    uint64_t n = 0;
    *least = UINT64_MAX;
    for (size_t i = 0; i < md->n; i++)
        if (value_order(&md->e[i].key, key) == 0) {
            n++;
            if (md->e[i].id < *least)
                *least = md->e[i].id;
        }
    return n;
}

static void model_copy(const model *from, model *to)
{
    *to = (model){ 0 };
    for (size_t i = 0; i < from->n; i++)
        model_write(to, &from->e[i].key, from->e[i].id, true);
}

static void model_free(model *md)
{
    for (size_t i = 0; i < md->n; i++)
        value_release(&md->e[i].key);
    if (md->e)
        mem_free_sized(mem_scratch(), md->e, md->cap * sizeof *md->e);
    *md = (model){ 0 };
}

/* ---- trees ------------------------------------------------------------------ */

typedef struct tally {
    uint64_t found, absent, unknown, unhashable;
} tally;

/* pbtree_point of key on t against the model (the tree's raw ids). */
static void check_point(const pbtree *t, const model *md, const value *key, tally *ty)
{
    uint64_t least, n = model_point(md, key, &least), id = 0, count = 0;
    int r = pbtree_point(t, key, &id, &count);
    if (!phash_hashable(key)) {
        assert_int_equal(r, -1);
        ty->unhashable++;
    } else if (r < 0) {
        ty->unknown++;
    } else if (r == 0) {
        assert_int_equal(n, 0);
        ty->absent++;
    } else {
        assert_int_equal(count, n);
        assert_int_equal(id, least);
        ty->found++;
    }
}

enum { EXTRA = 8 };

/* The model's keys (borrowed) and EXTRA random others; *n gets their
   number.  drop_keys releases the others and the array. */
static value *keys_to_ask(const model *md, mem_ctx *m, uint64_t *rng, size_t *n)
{
    value *k = test_malloc((md->n + EXTRA) * sizeof *k);
    for (size_t i = 0; i < md->n; i++)
        k[i] = md->e[i].key;
    for (size_t i = 0; i < EXTRA; i++)
        k[md->n + i] = random_key(m, rng, 400);
    *n = md->n + EXTRA;
    return k;
}

static void drop_keys(const model *md, value *k, size_t n)
{
    for (size_t i = md->n; i < n; i++)
        value_release(&k[i]);
    test_free(k);
}

/* pbtree_point_many on keys[0..n) at once answers as pbtree_point on each:
   the interleaved walks over a multi-level trie, hits, misses, keys left
   out and kinds the trie does not hold. */
static void check_point_many(const pbtree *t, const value *keys, size_t n)
{
    phash_answer *ans = test_malloc(n * sizeof *ans);
    phash_entry *e = test_malloc(n * sizeof *e);
    assert_int_equal(pbtree_point_many(t, keys, n, ans, e), 0);
    for (size_t i = 0; i < n; i++) {
        uint64_t id = 0, count = 0;
        int r = pbtree_point(t, &keys[i], &id, &count);
        assert_int_equal(ans[i], r < 0 ? PHASH_UNKNOWN : r ? PHASH_FOUND : PHASH_ABSENT);
        if (r == 1) {
            assert_int_equal(e[i].id, id);
            assert_int_equal(e[i].count, count);
        }
    }
    test_free(ans);
    test_free(e);
}

/* Every key of the model, and a few others, looked up one by one and all
   at once; the tree and its trie checked. */
static void check_tree(const pbtree *t, const model *md, mem_ctx *m, uint64_t *rng, tally *ty)
{
    assert_int_equal(pbtree_check(t), 0);
    assert_int_equal(t->count, md->n);
    size_t n;
    value *k = keys_to_ask(md, m, rng, &n);
    for (size_t i = 0; i < n; i++)
        check_point(t, md, &k[i], ty);
    check_point_many(t, k, n);
    drop_keys(md, k, n);
}

enum { HELD = 3 };

/* Random inserts and deletes on a hashed tree, with copies held across
   them (taken and dropped at random) that must keep their answers. */
static void test_tree_random_against_model(void **state)
{
    mem_ctx *m = *state;
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    pbtree t, held[HELD];
    model md = { 0 }, held_md[HELD];
    bool holding[HELD] = { false };
    pbtree_pool pool = { 0 };
    tally ty = { 0 };
    pbtree_init_hashed(&t);
    for (int step = 0; step < 3000; step++) {
        /* Inserts win two to one for the first half, then lose. */
        bool insert = step < 1500 ? next_rand(&rng) % 3 != 0 : next_rand(&rng) % 3 == 0;
        value key = random_key(m, &rng, 150);
        uint64_t id = next_rand(&rng) % 6;
        assert_int_equal(pbtree_reserve(&pool, m, &t, 1), 0);
        int changed = insert ? pbtree_insert(&t, &pool, m, &key, id)
                             : pbtree_delete(&t, &pool, m, &key, id);
        assert_int_equal(changed, model_write(&md, &key, id, insert));
        check_point(&t, &md, &key, &ty);
        value_release(&key);
        if (step % 25 == 0)
            check_tree(&t, &md, m, &rng, &ty);
        int h = (int)(next_rand(&rng) % (HELD * 8));
        if (h < HELD) {
            if (holding[h]) {
                check_tree(&held[h], &held_md[h], m, &rng, &ty);
                pbtree_release(&held[h], m);
                model_free(&held_md[h]);
            }
            pbtree_share(&t, &held[h]);
            model_copy(&md, &held_md[h]);
            holding[h] = true;
        }
    }
    check_tree(&t, &md, m, &rng, &ty);
    for (int h = 0; h < HELD; h++)
        if (holding[h]) {
            check_tree(&held[h], &held_md[h], m, &rng, &ty);
            pbtree_release(&held[h], m);
            model_free(&held_md[h]);
        }
    /* Every path ran: hits, misses, keys left out, and the tree's kinds. */
    assert_true(ty.found > 1000 && ty.absent > 100 && ty.unknown > 0 && ty.unhashable > 100);
    pbtree_release(&t, m);
    pbtree_pool_free(&pool, m);
    model_free(&md);
}

/* Deleting a key's least id finds the next one; deleting the last drops
   the key; 1 and 1.0 are one key; an unhashed tree's hash says nothing. */
static void test_tree_summaries(void **state)
{
    mem_ctx *m = *state;
    pbtree t, plain;
    pbtree_pool pool = { 0 };
    pbtree_init_hashed(&t);
    pbtree_init(&plain);
    value one = value_int(1), one_f = value_float(1.0), two = value_int(2);
    uint64_t id, n;
    uint64_t ids[] = { 9, 4, 7 };
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pbtree_reserve(&pool, m, &t, 1), 0);
        assert_int_equal(pbtree_insert(&t, &pool, m, i == 1 ? &one_f : &one, ids[i]), 1);
    }
    assert_int_equal(pbtree_point(&t, &one_f, &id, &n), 1);
    assert_int_equal(id, 4);
    assert_int_equal(n, 3);
    assert_int_equal(pbtree_reserve(&pool, m, &t, 1), 0);
    assert_int_equal(pbtree_delete(&t, &pool, m, &one, 4), 1);   /* 1 finds 1.0's entry */
    assert_int_equal(pbtree_point(&t, &one, &id, &n), 1);
    assert_int_equal(id, 7);
    assert_int_equal(n, 2);
    assert_int_equal(pbtree_point(&t, &two, &id, &n), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pbtree_reserve(&pool, m, &t, 1), 0);
        assert_int_equal(pbtree_delete(&t, &pool, m, &one, i ? 9 : 7), 1);
    }
    assert_int_equal(pbtree_point(&t, &one, &id, &n), 0);
    assert_null(t.hash.root);
    assert_int_equal(pbtree_check(&t), 0);
    assert_int_equal(pbtree_reserve(&pool, m, &plain, 1), 0);
    assert_int_equal(pbtree_insert(&plain, &pool, m, &one, 1), 1);
    assert_int_equal(pbtree_point(&plain, &one, &id, &n), -1);
    phash_answer ans;
    phash_entry e;
    assert_int_equal(pbtree_point_many(&plain, &one, 1, &ans, &e), -1);
    assert_int_equal(pbtree_check(&plain), 0);
    pbtree_release(&t, m);
    pbtree_release(&plain, m);
    pbtree_pool_free(&pool, m);
}

/* ---- level stacks ------------------------------------------------------------ */

/* lstack_first of key against the model's least id, and lstack_point
   against its count (none, one, several) and least id. */
static void check_first(const level_stack *s, const model *md, const value *key)
{
    uint64_t least, id = UINT64_MAX;
    uint64_t n = model_point(md, key, &least);
    bool there = n > 0;
    assert_int_equal(lstack_first(s, key, &id), there);
    if (there)
        assert_int_equal(id, least);
    id = UINT64_MAX;
    assert_int_equal(lstack_point(s, key, &id), n > 1 ? 2 : (int)n);
    if (there)
        assert_int_equal(id, least);
}

/* lstack_first_many on keys[0..n) answers as lstack_first on each: by
   the interleaved hash walks on a stack without levels, by each key's own
   path on one with levels. */
static void check_first_many(const level_stack *s, const value *keys, size_t n)
{
    uint64_t *ids = test_malloc(n * sizeof *ids);
    bool *hit = test_malloc(n * sizeof *hit);
    size_t hits = 0, got = lstack_first_many(s, keys, n, ids, hit);
    for (size_t i = 0; i < n; i++) {
        uint64_t id = UINT64_MAX;
        bool there = lstack_first(s, &keys[i], &id);
        assert_int_equal(hit[i], there);
        if (there)
            assert_int_equal(ids[i], id);
        hits += there;
    }
    assert_int_equal(got, hits);
    test_free(ids);
    test_free(hit);
}

static void check_stack(const level_stack *s, const model *md, mem_ctx *m, uint64_t *rng)
{
    assert_int_equal(lstack_check(s), 0);
    assert_int_equal(lstack_count(s), md->n);
    size_t n;
    value *k = keys_to_ask(md, m, rng, &n);
    for (size_t i = 0; i < n; i++)
        check_first(s, md, &k[i]);
    check_first_many(s, k, n);
    drop_keys(md, k, n);
}

/* A hashed level stack written under held copies (so levels are pushed,
   written by path copying, folded back and flattened), each write
   prepared first; unique-style (each key on at most one id, the point
   lookups' own path) and then many ids per key (the merge's). */
static void stack_random(mem_ctx *m, uint64_t seed, uint64_t ids)
{
    uint64_t rng = seed;
    level_stack *s = NULL, *held[HELD] = { NULL };
    model md = { 0 }, held_md[HELD];
    pbtree_pool pool = { 0 };
    assert_int_equal(lstack_create(&s, m, true), 0);
    assert_true(lstack_hashed(s));
    uint32_t deepest = 0;
    for (int step = 0; step < 2000; step++) {
        value key = random_key(m, &rng, 120);
        uint64_t id = next_rand(&rng) % ids;
        bool insert = next_rand(&rng) % 5 < (step < 1000 ? 3u : 2u);
        if (ids == 1 && insert) {   /* a key holds at most one id */
            uint64_t least;
            if (model_point(&md, &key, &least) && least != id)
                insert = false;
        }
        assert_int_equal(lstack_prepare(&s, &pool, m, 1), 0);
        bool changed = insert ? lstack_insert(s, &pool, m, &key, id)
                              : lstack_delete(s, &pool, m, &key, id);
        assert_int_equal(changed, model_write(&md, &key, id, insert));
        check_first(s, &md, &key);
        value_release(&key);
        if (lstack_depth(s) > deepest)
            deepest = lstack_depth(s);
        if (step % 40 == 0)
            check_stack(s, &md, m, &rng);
        int h = (int)(next_rand(&rng) % (HELD * 3));
        if (h < HELD) {
            if (held[h]) {
                check_stack(held[h], &held_md[h], m, &rng);
                lstack_release(m, &held[h]);
                model_free(&held_md[h]);
            }
            lstack_retain(s);
            held[h] = s;
            model_copy(&md, &held_md[h]);
        }
    }
    assert_true(deepest >= 2);
    check_stack(s, &md, m, &rng);
    for (int h = 0; h < HELD; h++)
        if (held[h]) {
            check_stack(held[h], &held_md[h], m, &rng);
            lstack_release(m, &held[h]);
            model_free(&held_md[h]);
        }
    lstack_release(m, &s);
    pbtree_pool_free(&pool, m);
    model_free(&md);
}

static void test_stack_unique_keys(void **state) { stack_random(*state, 0x51ed2701a3c4e5f7ull, 1); }
static void test_stack_shared_keys(void **state) { stack_random(*state, 0x2545f4914f6cdd1dull, 5); }

/* ---- allocation failure -------------------------------------------------------- */

/* Fails the k-th allocation of a prepare on a hashed stack held by a copy,
   k = 1, 2, ... until it succeeds: -1 and the stack unchanged (both
   copies answer as before); then the writes it prepared allocate nothing. */
static void test_prepare_failure_sweep(void **state)
{
    mem_ctx *m = *state;
    uint64_t rng = 0xdeadbeefcafef00dull;
    level_stack *s = NULL, *held = NULL;
    model md = { 0 };
    pbtree_pool pool = { 0 };
    assert_int_equal(lstack_create(&s, m, true), 0);
    for (int i = 0; i < 300; i++) {
        value key = value_int(i);
        assert_int_equal(lstack_prepare(&s, &pool, m, 1), 0);
        assert_true(lstack_insert(s, &pool, m, &key, (uint64_t)i));
        model_write(&md, &key, (uint64_t)i, true);
    }
    for (int round = 0; round < 12; round++) {
        pbtree_pool_free(&pool, m);   /* every reserve allocates afresh */
        lstack_retain(s);
        held = s;
        model held_md;
        model_copy(&md, &held_md);
        for (long k = 1;; k++) {
            mem_fail_at(k);
            int rc = lstack_prepare(&s, &pool, m, 2);
            mem_fail_clear();
            if (rc == 0)
                break;
            assert_int_equal(rc, -1);   /* the header may be a private copy now */
            check_stack(s, &md, m, &rng);
            assert_true(k < 10000);
        }
        mem_fail_at(1);   /* the writes prepared for cannot allocate */
        value gone = value_int(round * 7), fresh = value_int(1000 + round);
        assert_true(lstack_delete(s, &pool, m, &gone, (uint64_t)round * 7));
        assert_true(lstack_insert(s, &pool, m, &fresh, 1000 + (uint64_t)round));
        assert_int_equal(mem_fail_count(), 0);
        mem_fail_clear();
        model_write(&md, &gone, (uint64_t)round * 7, false);
        model_write(&md, &fresh, 1000 + (uint64_t)round, true);
        check_stack(s, &md, m, &rng);
        check_stack(held, &held_md, m, &rng);
        lstack_release(m, &held);
        model_free(&held_md);
    }
    lstack_release(m, &s);
    pbtree_pool_free(&pool, m);
    model_free(&md);
}

/* A load's bulk build of a hashed stack, failing its k-th allocation for
   k = 1, 2, ...: -1, nothing left allocated; then it succeeds and answers
   every key. */
static void test_build_failure_sweep(void **state)
{
    mem_ctx *m = *state;
    uint64_t rng = 1;
    enum { N = 200 };
    pbtree_entry e[N];
    model md = { 0 };
    for (int i = 0; i < N; i++) {   /* strictly increasing: key i / 3, ids */
        e[i].key = i % 2 ? value_int(i / 3) : value_float(i / 3);
        e[i].id = (uint64_t)i;
        model_write(&md, &e[i].key, (uint64_t)i, true);
    }
    level_stack *s = NULL;
    for (long k = 1;; k++) {
        pbtree_entry copy[N];
        memcpy(copy, e, sizeof e);
        size_t before = mem_ctx_bytes(m);
        mem_fail_at(k);
        int rc = lstack_build(&s, m, copy, N, true);
        mem_fail_clear();
        if (rc == 0)
            break;
        assert_int_equal(rc, -1);
        assert_null(s);
        assert_int_equal(mem_ctx_bytes(m), before);
        assert_true(k < 10000);
    }
    check_stack(s, &md, m, &rng);
    lstack_release(m, &s);
    model_free(&md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tree_random_against_model, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_tree_summaries, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_stack_unique_keys, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_stack_shared_keys, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_prepare_failure_sweep, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_build_failure_sweep, mem_ctx_setup, mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
