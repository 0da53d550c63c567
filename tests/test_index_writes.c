/*
 * Tests for the write side of the level stacks (index/level_stack.h):
 * index maintenance's vouched writes (lstack_insert_absent /
 * lstack_delete_present), which look at the top level alone and trust
 * invariant 5 — a level's entries are what the levels below do not show,
 * its tombstones what they do — against a reference model, under copies
 * held across the writes (levels pushed, written by path copying, folded
 * back, flattened), with keys of the kinds indices hold (integers, inline
 * and heap strings, composite lists).  Folds stopped part way by a failed
 * allocation (a loose stack, whose writes must look below again) are
 * swept, and the checked writes (lstack_insert / lstack_delete) are mixed
 * in, each answer compared with the model's.
 *
 * Through the API: a write touching more indices than an index plan holds
 * without allocating, under a held view, with its allocations failed one
 * at a time: an error and the graph unchanged, then the write and every
 * index equal to a scan.  And a run of one-write statements with nothing
 * held: each folds the level the last one left (lstack_fold_back), so the
 * stacks stay one level deep instead of growing to LSTACK_CAP, committed
 * and rolled back alike.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/graph_impl.h"
#include "index/index_set.h"
#include "index/level_stack.h"
#include "storage/pbtree.h"
#include <strata.h>

#include "support/mem_fixture.h"

enum { KEYS = 24, IDS = 12, HELD = 3 };

static uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* KEYS distinct keys of mixed kinds, in a table so the model can name
   them by index: integers, inline strings, heap strings and lists. */
typedef struct keyset {
    value k[KEYS];
} keyset;

static void keys_make(keyset *ks, mem_ctx *m)
{
    for (int i = 0; i < KEYS; i++) {
        char buf[64];
        int n;
        switch (i % 4) {
        case 0:
            ks->k[i] = value_int(i * 7 - 40);
            break;
        case 1:
            n = snprintf(buf, sizeof buf, "k%d", i);
            assert_int_equal(value_string(m, buf, (size_t)n, &ks->k[i]), 0);
            break;
        case 2:
            n = snprintf(buf, sizeof buf, "a heap string, longer than inline: %d", i);
            assert_int_equal(value_string(m, buf, (size_t)n, &ks->k[i]), 0);
            break;
        default: {
            value parts[2] = { value_int(i), value_int(i % 3) };
            assert_int_equal(value_list_from(m, parts, 2, &ks->k[i]), 0);
        }
        }
    }
}

static void keys_free(keyset *ks)
{
    for (int i = 0; i < KEYS; i++)
        value_release(&ks->k[i]);
}

/* What a stack shows: which (key, id) are in. */
typedef struct model {
    bool in[KEYS][IDS];
    uint64_t n;
} model;

static int key_index(const keyset *ks, const value *k)
{
    for (int i = 0; i < KEYS; i++)
        if (value_order(&ks->k[i], k) == 0)
            return i;
    return -1;
}

/* A full merged scan, strictly increasing, equal to the model; point
   lookups and lstack_contains agree with it for every key. */
static void check(const level_stack *s, const model *md, const keyset *ks, mem_ctx *m)
{
    assert_int_equal(lstack_check(s), 0);
    assert_int_equal(lstack_count(s), md->n);
    lstack_cursor *c = lstack_seek(s, m, NULL);
    assert_non_null(c);
    const value *k, *pk = NULL;
    uint64_t id, pid = 0, seen = 0;
    while (lstack_cursor_get(c, &k, &id)) {
        if (pk)
            assert_true(pbtree_entry_cmp(pk, pid, k, id) < 0);
        int i = key_index(ks, k);
        assert_true(i >= 0 && id < IDS);
        assert_true(md->in[i][id]);
        seen++;
        pk = k;
        pid = id;
        lstack_cursor_next(c);
    }
    lstack_cursor_free(&c, m);
    assert_int_equal(seen, md->n);
    for (int i = 0; i < KEYS; i++) {
        uint64_t n = 0, least = UINT64_MAX;
        for (uint64_t j = 0; j < IDS; j++) {
            assert_int_equal(lstack_contains(s, &ks->k[i], j), md->in[i][j]);
            if (md->in[i][j]) {
                n++;
                least = j < least ? j : least;
            }
        }
        uint64_t got = UINT64_MAX;
        int r = lstack_point(s, &ks->k[i], &got);
        assert_int_equal(r, n > 1 ? 2 : (int)n);
        if (n)
            assert_int_equal(got, least);
        got = UINT64_MAX;
        assert_int_equal(lstack_first(s, &ks->k[i], &got), n > 0);
        if (n)
            assert_int_equal(got, least);
    }
}

/* One random write, prepared first: vouched when `vouched`, else checked
   (with a no-op's answer compared too).  fail_at > 0 fails that
   allocation of the prepare (a fold-back may then stop part way); a
   failed prepare writes nothing.  Returns whether the write was done. */
static bool write_at(level_stack **sp, pbtree_pool *pool, mem_ctx *m, model *md,
                     const keyset *ks, uint64_t *rng, bool vouched, long fail_at, int i,
                     uint64_t id)
{
    if (fail_at > 0)
        mem_fail_at(fail_at);
    int rc = lstack_prepare(sp, pool, m, 1);
    mem_fail_clear();
    if (rc != 0)
        return false;
    level_stack *s = *sp;
    bool was = md->in[i][id];
    if (vouched) {
        mem_fail_at(1);   /* a prepared write allocates nothing */
        if (was)
            lstack_delete_present(s, pool, m, &ks->k[i], id);
        else
            lstack_insert_absent(s, pool, m, &ks->k[i], id);
        assert_int_equal(mem_fail_count(), 0);
        mem_fail_clear();
        md->in[i][id] = !was;
        md->n = was ? md->n - 1 : md->n + 1;
        return true;
    }
    bool insert = next_rand(rng) % 2;
    mem_fail_at(1);
    bool changed = insert ? lstack_insert(s, pool, m, &ks->k[i], id)
                          : lstack_delete(s, pool, m, &ks->k[i], id);
    assert_int_equal(mem_fail_count(), 0);
    mem_fail_clear();
    assert_int_equal(changed, insert != was);
    if (changed) {
        md->in[i][id] = insert;
        md->n = insert ? md->n + 1 : md->n - 1;
    }
    return true;
}

static bool write_one(level_stack **sp, pbtree_pool *pool, mem_ctx *m, model *md,
                      const keyset *ks, uint64_t *rng, bool vouched, long fail_at)
{
    int i = (int)(next_rand(rng) % KEYS);
    uint64_t id = next_rand(rng) % IDS;
    return write_at(sp, pool, m, md, ks, rng, vouched, fail_at, i, id);
}

/* Vouched and checked writes under copies held and dropped at random:
   every write checked against the model, every held copy still showing
   what it showed when taken. */
static void stack_random(mem_ctx *m, uint64_t seed, bool hashed, int checked_in)
{
    uint64_t rng = seed;
    keyset ks;
    keys_make(&ks, m);
    level_stack *s = NULL, *held[HELD] = { NULL };
    model md, held_md[HELD];
    memset(&md, 0, sizeof md);
    pbtree_pool pool = { 0 };
    assert_int_equal(lstack_create(&s, m, hashed), 0);
    uint32_t deepest = 0;
    for (int step = 0; step < 3000; step++) {
        bool vouched = next_rand(&rng) % checked_in != 0;
        assert_true(write_one(&s, &pool, m, &md, &ks, &rng, vouched, 0));
        if (lstack_depth(s) > deepest)
            deepest = lstack_depth(s);
        if (step % 50 == 0)
            check(s, &md, &ks, m);
        int h = (int)(next_rand(&rng) % (HELD * 4));
        if (h < HELD) {
            if (held[h]) {
                check(held[h], &held_md[h], &ks, m);
                lstack_release(m, &held[h]);
            }
            lstack_retain(s);
            held[h] = s;
            held_md[h] = md;
        }
    }
    assert_true(deepest >= 2);
    check(s, &md, &ks, m);
    for (int h = 0; h < HELD; h++)
        if (held[h]) {
            check(held[h], &held_md[h], &ks, m);
            lstack_release(m, &held[h]);
        }
    lstack_release(m, &s);
    pbtree_pool_free(&pool, m);
    keys_free(&ks);
}

static void test_vouched_writes_hashed(void **state)
{
    stack_random(*state, 0x9e3779b97f4a7c15ull, true, 1000000);
}

static void test_vouched_writes_plain(void **state)
{
    stack_random(*state, 0x2545f4914f6cdd1dull, false, 1000000);
}

static void test_vouched_and_checked_mixed(void **state)
{
    stack_random(*state, 0xdeadbeefcafef00dull, true, 3);
}

/* Fold-backs stopped part way: a stack with levels over a base that a
   released copy no longer shares folds at its next prepare; failing the
   k-th allocation from there on (k = 1, 2, ...) stops the fold, leaving
   part of level 0 in the base: the prepare fails, the stack shows what it
   showed and is loose.  Held again (so the next writes do not fold), it
   takes writes of both kinds while loose, each matching the model; let
   go, it folds clean. */
static void test_partial_fold_sweep(void **state)
{
    mem_ctx *m = *state;
    keyset ks;
    keys_make(&ks, m);
    uint64_t rng = 0x51ed2701a3c4e5f7ull;
    int loose = 0, loose_writes = 0;
    for (long k = 1; k < 300; k++) {
        level_stack *s = NULL, *held = NULL;
        model md, held_md;
        memset(&md, 0, sizeof md);
        pbtree_pool pool = { 0 };
        assert_int_equal(lstack_create(&s, m, k % 2 == 0), 0);
        for (int i = 0; i < 60; i++)
            assert_true(write_one(&s, &pool, m, &md, &ks, &rng, true, 0));
        lstack_retain(s);   /* held across writes: they go to levels */
        held = s;
        for (int i = 0; i < 40; i++)
            assert_true(write_one(&s, &pool, m, &md, &ks, &rng, true, 0));
        assert_true(lstack_depth(s) >= 1);
        lstack_release(m, &held);
        pbtree_pool_free(&pool, m);   /* the fold's reserves allocate */
        mem_fail_at(k);
        int rc = lstack_prepare(&s, &pool, m, 1);
        mem_fail_clear();
        check(s, &md, &ks, m);
        if (rc != 0 && lstack_loose(s)) {
            loose++;
            lstack_retain(s);
            held = s;
            held_md = md;
            for (int i = 0; i < 30; i++) {
                loose_writes += lstack_loose(s);
                assert_true(write_one(&s, &pool, m, &md, &ks, &rng, i % 3 != 0, 0));
                if (i % 10 == 0)
                    check(s, &md, &ks, m);
            }
            check(s, &md, &ks, m);
            check(held, &held_md, &ks, m);
            lstack_release(m, &held);
        }
        for (int i = 0; i < 20; i++)
            assert_true(write_one(&s, &pool, m, &md, &ks, &rng, i % 2 == 0, 0));
        assert_false(lstack_loose(s));
        check(s, &md, &ks, m);
        lstack_release(m, &s);
        pbtree_pool_free(&pool, m);
    }
    assert_true(loose > 0);
    assert_true(loose_writes > 0);
    keys_free(&ks);
}

/* A fold-back that stops part way and a write that still goes ahead in
   the same prepare, into the loose level 0 (depth one): the pool holds
   just enough for the write but not for the fold's next entry (a tall
   base, a short level), and every allocation fails.  The write is on
   level 0's first entry, which the base then already holds. */
static void test_write_into_loose_level(void **state)
{
    mem_ctx *m = *state;
    keyset ks;
    keys_make(&ks, m);
    uint64_t rng = 0x6a09e667f3bcc909ull;
    int loose_writes = 0;
    for (int round = 0; round < 400; round++) {
        level_stack *s = NULL, *held = NULL;
        model md;
        memset(&md, 0, sizeof md);
        pbtree_pool pool = { 0 };
        assert_int_equal(lstack_create(&s, m, round % 2 == 0), 0);
        for (int i = 0; i < KEYS; i++)   /* a tall base */
            for (uint64_t id = 0; id < IDS; id++)
                if (next_rand(&rng) % 3)
                    assert_true(write_at(&s, &pool, m, &md, &ks, &rng, true, 0, i, id));
        lstack_retain(s);
        held = s;
        int wi[6];
        uint64_t wid[6];
        for (int w = 0; w < 6; w++) {   /* a short level 0 */
            wi[w] = (int)(next_rand(&rng) % KEYS);
            wid[w] = next_rand(&rng) % IDS;
            assert_true(write_at(&s, &pool, m, &md, &ks, &rng, true, 0, wi[w], wid[w]));
        }
        lstack_release(m, &held);
        assert_int_equal(lstack_depth(s), 1);
        pbtree_pool_free(&pool, m);
        assert_int_equal(pbtree_pool_fill(&pool, m, 10 + (uint64_t)(round % 16)), 0);
        int w = 0;   /* level 0's least entry: the one a fold applies first */
        for (int v = 1; v < 6; v++)
            if (pbtree_entry_cmp(&ks.k[wi[v]], wid[v], &ks.k[wi[w]], wid[w]) < 0)
                w = v;
        bool done = write_at(&s, &pool, m, &md, &ks, &rng, round % 4 < 2, 1, wi[w], wid[w]);
        if (done && lstack_loose(s))
            loose_writes++;
        check(s, &md, &ks, m);
        for (int i = 0; i < 10; i++)
            assert_true(write_one(&s, &pool, m, &md, &ks, &rng, i % 2 == 0, 0));
        assert_false(lstack_loose(s));
        check(s, &md, &ks, m);
        lstack_release(m, &s);
        pbtree_pool_free(&pool, m);
    }
    assert_true(loose_writes > 0);
    keys_free(&ks);
}

/* ---- through the API ------------------------------------------------------ */

enum { NIDX = 11, NODES = 60 };

/* Every index of g equals a scan: each node holding the key is found by
   a lookup of its value, and the index holds as many entries as there
   are such nodes. */
static void check_graph(strata_graph *g, const strata_token *keys)
{
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    for (int k = 0; k < NIDX; k++) {
        strata_index idx;
        char name[16];
        snprintf(name, sizeof name, "i%d", k);
        assert_int_equal(strata_index_find(v, name, &idx), STRATA_OK);
        uint64_t members = 0;
        for (strata_id id = 0; id < NODES * 2; id++) {
            if (!strata_node_exists(v, id))
                continue;
            strata_value *val = NULL;
            assert_int_equal(strata_node_get(v, id, keys[k], &val), STRATA_OK);
            if (strata_value_type(val) == STRATA_NULL) {
                strata_value_free(&val);
                continue;
            }
            members++;
            strata_node_iter *it;
            const strata_value *key[1] = { val };
            assert_int_equal(strata_index_lookup(v, idx, key, 1, &it), STRATA_OK);
            bool found = false;
            strata_id got;
            while (strata_node_iter_next(it, &got))
                found |= got == id;
            strata_node_iter_free(&it);
            assert_true(found);
            strata_value_free(&val);
        }
        strata_index_info info;
        assert_int_equal(strata_index_info_get(v, idx, &info), STRATA_OK);
        assert_int_equal(info.entries, members);
    }
    strata_view_release(&v);
}

/* NODES nodes labelled L with properties p0..p(NIDX-1) and an index on
   each (p0 unique, holding the node's number; the rest range and hash
   indices over repeating values). */
static strata_graph *indexed_graph(strata_token keys[NIDX])
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token label;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "L", &label), STRATA_OK);
    for (int k = 0; k < NIDX; k++) {
        char name[8];
        snprintf(name, sizeof name, "p%d", k);
        assert_int_equal(strata_token_intern(g, STRATA_KEY, name, &keys[k]), STRATA_OK);
    }
    for (int i = 0; i < NODES; i++) {
        strata_id id;
        assert_int_equal(strata_node_create(g, &label, 1, &id), STRATA_OK);
        for (int k = 0; k < NIDX; k++) {
            strata_value *v = k == 0 ? strata_value_int(i) : strata_value_int(i % (k + 2));
            assert_int_equal(strata_node_set(g, id, keys[k], v), STRATA_OK);
            strata_value_free(&v);
        }
    }
    for (int k = 0; k < NIDX; k++) {
        strata_index idx;
        char name[16];
        snprintf(name, sizeof name, "i%d", k);
        assert_int_equal(strata_index_create_named(g, k == 0 ? STRATA_INDEX_UNIQUE
                                                          : k % 2 ? STRATA_INDEX_RANGE
                                                                  : STRATA_INDEX_HASH,
                                                   false, label, &keys[k], 1, name, &idx),
                         STRATA_OK);
    }
    return g;
}

static void test_many_indices_delete_under_view(void **state)
{
    (void)state;
    strata_token keys[NIDX];
    strata_graph *g = indexed_graph(keys);
    check_graph(g, keys);
    int failed = 0;
    for (strata_id victim = 0; victim < 12; victim++) {
        strata_view *held;
        assert_int_equal(strata_snapshot(g, &held), STRATA_OK);
        for (long k = 1;; k++) {
            mem_fail_at(k);
            strata_status s = strata_node_detach_delete(g, victim);
            mem_fail_clear();
            if (s == STRATA_OK)
                break;
            assert_int_equal(s, STRATA_ENOMEM);
            failed++;
            strata_view *now;
            assert_int_equal(strata_snapshot(g, &now), STRATA_OK);
            assert_true(strata_node_exists(now, victim));
            strata_view_release(&now);
            check_graph(g, keys);
            assert_true(k < 100000);
        }
        assert_true(strata_node_exists(held, victim));
        strata_view_release(&held);
        check_graph(g, keys);
    }
    assert_true(failed > 0);
    strata_graph_free(&g);
}

/* The deepest level stack among g's indices now. */
static uint32_t deepest_stack(strata_graph *g)
{
    const index_set *s = graph_writer_version(g)->indexes;
    uint32_t deepest = 0;
    for (uint32_t i = 0; i < idxset_len(s); i++)
        if (lstack_depth(idxset_stack(s, i)) > deepest)
            deepest = lstack_depth(idxset_stack(s, i));
    return deepest;
}

static void test_statements_fold_back(void **state)
{
    (void)state;
    strata_token keys[NIDX];
    strata_graph *g = indexed_graph(keys);
    uint64_t rng = 99;
    uint32_t deepest = 0;
    for (int round = 0; round < 200; round++) {
        strata_id id = (strata_id)(next_rand(&rng) % NODES);
        int k = (int)(next_rand(&rng) % NIDX);
        /* p0 is unique: a value no node holds (they hold 0..NODES-1). */
        strata_value *v = strata_value_int(NODES * NIDX + round);
        assert_int_equal(strata_statement_begin(g), STRATA_OK);
        assert_int_equal(strata_node_set(g, id, keys[k], v), STRATA_OK);
        assert_int_equal(strata_statement_end(g, round % 5 != 0), STRATA_OK);
        strata_value_free(&v);
        if (deepest_stack(g) > deepest)
            deepest = deepest_stack(g);
    }
    /* The level a statement pushed is folded by the next one's first write. */
    assert_true(deepest <= 1);
    check_graph(g, keys);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_vouched_writes_hashed, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_vouched_writes_plain, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_vouched_and_checked_mixed, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_partial_fold_sweep, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_write_into_loose_level, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test(test_many_indices_delete_under_view),
        cmocka_unit_test(test_statements_fold_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
