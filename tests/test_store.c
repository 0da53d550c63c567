/*
 * Tests for storage/store: node and relationship slots allocated from the
 * end and from the LIFO free list, the store_next_*_id predictions, frees
 * that drop properties and adjacency, writes after store_share that leave
 * the shared copy unchanged, every allocation failure of alloc on private
 * and shared stores, and the undo calls (unalloc, restore) that put a
 * store back exactly, ids included.  store_check runs after every step.
 *
 * Each test gets a fresh mem_ctx in *state; the teardown asserts that
 * nothing allocated from it is left.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "storage/store.h"

#include "support/mem_fixture.h"

/* ---- a snapshot of everything a store holds ------------------------------- */

#define MAXSLOTS 256

/* Raw reads of the meta vectors (free slots too); pvec_get only needs the
   element size. */
static const pvec_ops node_meta_read = { sizeof(node_meta), NULL, NULL };
static const pvec_ops rel_meta_read = { sizeof(rel_meta), NULL, NULL };

typedef struct snap {
    uint64_t node_slots, rel_slots, node_live, rel_live, next_node, next_rel;
    node_meta nodes[MAXSLOTS];
    const prop_rec *node_props[MAXSLOTS];
    const adj_block *node_adj[MAXSLOTS];
    rel_meta rels[MAXSLOTS];
    const prop_rec *rel_props[MAXSLOTS];
} snap;

static void take_snap(const store *s, snap *sn)
{
    memset(sn, 0, sizeof *sn);
    sn->node_slots = store_node_slots(s);
    sn->rel_slots = store_rel_slots(s);
    assert_true(sn->node_slots <= MAXSLOTS && sn->rel_slots <= MAXSLOTS);
    sn->node_live = s->node_live;
    sn->rel_live = s->rel_live;
    sn->next_node = store_next_node_id(s, true);
    sn->next_rel = store_next_rel_id(s, true);
    for (uint64_t i = 0; i < sn->node_slots; i++) {
        sn->nodes[i] = *(const node_meta *)pvec_get(&s->node_meta, &node_meta_read, i);
        sn->node_props[i] = store_node_props(s, i);
        sn->node_adj[i] = store_node_adj(s, i);
    }
    for (uint64_t i = 0; i < sn->rel_slots; i++) {
        sn->rels[i] = *(const rel_meta *)pvec_get(&s->rel_meta, &rel_meta_read, i);
        sn->rel_props[i] = store_rel_props(s, i);
    }
}

/* s is sound and holds exactly what sn recorded (records by identity). */
static void assert_snap(const store *s, const snap *sn)
{
    assert_int_equal(store_check(s), 0);
    assert_int_equal(store_node_slots(s), sn->node_slots);
    assert_int_equal(store_rel_slots(s), sn->rel_slots);
    assert_int_equal(s->node_live, sn->node_live);
    assert_int_equal(s->rel_live, sn->rel_live);
    assert_int_equal(store_next_node_id(s, true), sn->next_node);
    assert_int_equal(store_next_rel_id(s, true), sn->next_rel);
    for (uint64_t i = 0; i < sn->node_slots; i++) {
        const node_meta *n = pvec_get(&s->node_meta, &node_meta_read, i);
        assert_int_equal(n->labelset, sn->nodes[i].labelset);
        assert_int_equal(n->link, sn->nodes[i].link);
        assert_ptr_equal(store_node_props(s, i), sn->node_props[i]);
        assert_ptr_equal(store_node_adj(s, i), sn->node_adj[i]);
    }
    for (uint64_t i = 0; i < sn->rel_slots; i++) {
        const rel_meta *r = pvec_get(&s->rel_meta, &rel_meta_read, i);
        assert_memory_equal(r, &sn->rels[i], sizeof *r);
        assert_ptr_equal(store_rel_props(s, i), sn->rel_props[i]);
    }
}

/* ---- steps that must succeed ------------------------------------------------ */

static uint64_t node_alloc_ok(store *s, mem_ctx *m, uint32_t labelset)
{
    uint64_t predicted = store_next_node_id(s, true), live = s->node_live, id = UINT64_MAX;
    assert_int_equal(store_node_alloc(s, m, labelset, true, &id), 0);
    assert_int_equal(id, predicted);
    assert_int_equal(s->node_live, live + 1);
    const node_meta *n = store_node(s, id);
    assert_non_null(n);
    assert_int_equal(n->labelset, labelset);
    assert_null(store_node_props(s, id));
    assert_null(store_node_adj(s, id));
    assert_int_equal(store_check(s), 0);
    return id;
}

static uint64_t rel_alloc_ok(store *s, mem_ctx *m, uint32_t start, uint32_t end, uint32_t type)
{
    uint64_t predicted = store_next_rel_id(s, true), live = s->rel_live, id = UINT64_MAX;
    assert_int_equal(store_rel_alloc(s, m, start, end, type, true, &id), 0);
    assert_int_equal(id, predicted);
    assert_int_equal(s->rel_live, live + 1);
    const rel_meta *r = store_rel(s, id);
    assert_non_null(r);
    assert_int_equal(r->start, start);
    assert_int_equal(r->end, end);
    assert_int_equal(r->type, type);
    assert_null(store_rel_props(s, id));
    assert_int_equal(store_check(s), 0);
    return id;
}

static void node_free_ok(store *s, mem_ctx *m, uint64_t id)
{
    uint64_t live = s->node_live;
    assert_non_null(store_node(s, id));
    assert_int_equal(store_node_own(s, m, id), 0);
    store_node_free(s, m, id, NULL, NULL);
    assert_null(store_node(s, id));
    assert_null(store_node_props(s, id));
    assert_null(store_node_adj(s, id));
    assert_int_equal(store_next_node_id(s, true), id);   /* LIFO */
    assert_int_equal(s->node_live, live - 1);
    assert_int_equal(store_check(s), 0);
}

static void rel_free_ok(store *s, mem_ctx *m, uint64_t id)
{
    uint64_t live = s->rel_live;
    assert_non_null(store_rel(s, id));
    assert_int_equal(store_rel_own(s, m, id), 0);
    store_rel_free(s, m, id, NULL);
    assert_null(store_rel(s, id));
    assert_null(store_rel_props(s, id));
    assert_int_equal(store_next_rel_id(s, true), id);
    assert_int_equal(s->rel_live, live - 1);
    assert_int_equal(store_check(s), 0);
}

/* Gives a node or relationship property key = an int (a private record
   in a private slot). */
static void set_prop(mem_ctx *m, prop_rec **rp, uint32_t key, int64_t v)
{
    assert_non_null(rp);
    assert_int_equal(props_set(m, rp, key, value_int(v), NULL), 0);
}

static void node_set_prop(store *s, mem_ctx *m, uint64_t id, uint32_t key, int64_t v)
{
    set_prop(m, store_node_props_mut(s, m, id), key, v);
    assert_int_equal(store_check(s), 0);
}

/* Records relationship rel in the adjacency of its two endpoints. */
static void link_rel(store *s, mem_ctx *m, uint64_t rel)
{
    const rel_meta r = *store_rel(s, rel);
    node_adj *a = store_node_adj_mut(s, m, r.start);
    assert_non_null(a);
    assert_int_equal(adj_prepare_insert(m, &a->block, &(adj_edit){ ADJ_OUT, r.type, (uint32_t)rel }, 1), 0);
    store_adj_insert(a, ADJ_OUT, r.type, (uint32_t)rel, r.end);
    node_adj *b = store_node_adj_mut(s, m, r.end);
    assert_non_null(b);
    assert_int_equal(adj_prepare_insert(m, &b->block, &(adj_edit){ ADJ_IN, r.type, (uint32_t)rel }, 1), 0);
    store_adj_insert(b, ADJ_IN, r.type, (uint32_t)rel, r.start);
    assert_int_equal(store_check(s), 0);
}

/* Takes relationship rel out of its endpoints' adjacency. */
static void unlink_rel(store *s, mem_ctx *m, uint64_t rel)
{
    const rel_meta r = *store_rel(s, rel);
    node_adj *a = store_node_adj_mut(s, m, r.start);
    assert_non_null(a);
    assert_int_equal(adj_prepare_erase(m, &a->block, &(adj_edit){ ADJ_OUT, r.type, (uint32_t)rel }), 0);
    assert_int_equal(store_adj_erase(m, a, ADJ_OUT, r.type, (uint32_t)rel), 0);
    node_adj *b = store_node_adj_mut(s, m, r.end);
    assert_non_null(b);
    assert_int_equal(adj_prepare_erase(m, &b->block, &(adj_edit){ ADJ_IN, r.type, (uint32_t)rel }), 0);
    assert_int_equal(store_adj_erase(m, b, ADJ_IN, r.type, (uint32_t)rel), 0);
    assert_int_equal(store_check(s), 0);
}

/* A store with n nodes, n - 1 relationships between neighbours, some
   properties and adjacency, and every third node and rel freed. */
static void build(store *s, mem_ctx *m, uint32_t n)
{
    store_init(s);
    assert_int_equal(store_check(s), 0);
    for (uint32_t i = 0; i < n; i++) {
        node_alloc_ok(s, m, i % 4);
        node_set_prop(s, m, i, 1, i);
    }
    for (uint32_t i = 0; i + 1 < n; i++) {
        uint64_t r = rel_alloc_ok(s, m, i, i + 1, i % 3);
        set_prop(m, store_rel_props_mut(s, m, r), 2, -(int64_t)i);
        link_rel(s, m, r);
    }
    for (uint32_t i = 0; i + 1 < n; i += 3) {
        unlink_rel(s, m, i);
        rel_free_ok(s, m, i);
    }
    assert_int_equal(store_check(s), 0);
}

/* ---- tests -------------------------------------------------------------- */

static void test_node_alloc_and_free_list(void **state)
{
    mem_ctx *m = *state;
    store s;
    store_init(&s);
    assert_int_equal(store_check(&s), 0);
    assert_int_equal(store_next_node_id(&s, true), 0);
    assert_null(store_node(&s, 0));

    for (uint32_t i = 0; i < 10; i++)
        assert_int_equal(node_alloc_ok(&s, m, i + 1), i);
    assert_int_equal(store_next_node_id(&s, true), 10);
    assert_null(store_node(&s, 10));
    assert_null(store_node(&s, UINT64_MAX));

    node_free_ok(&s, m, 3);
    node_free_ok(&s, m, 7);
    node_free_ok(&s, m, 5);
    assert_int_equal(s.node_live, 7);
    assert_int_equal(store_node_slots(&s), 10);

    /* LIFO: the most recently freed id comes back first. */
    assert_int_equal(node_alloc_ok(&s, m, 50), 5);
    assert_int_equal(node_alloc_ok(&s, m, 70), 7);
    assert_int_equal(store_next_node_id(&s, true), 3);
    assert_int_equal(node_alloc_ok(&s, m, 30), 3);
    assert_int_equal(node_alloc_ok(&s, m, 0), 10);   /* then the end again */
    assert_int_equal(store_node(&s, 7)->labelset, 70);

    /* Freeing everything and allocating again walks the list back. */
    for (uint64_t id = 0; id <= 10; id++)
        node_free_ok(&s, m, id);
    assert_int_equal(s.node_live, 0);
    for (uint64_t k = 0; k <= 10; k++)
        assert_int_equal(node_alloc_ok(&s, m, 1), 10 - k);

    store_release(&s, m);
}

/* Without reuse an alloc takes the next id at the end and leaves the free
   list alone (a statement that has deleted, core/txn.h); its unalloc pops
   it off the end again, and the store is as it was. */
static void test_alloc_without_reuse(void **state)
{
    mem_ctx *m = *state;
    store s;
    store_init(&s);
    for (uint32_t i = 0; i < 6; i++)
        node_alloc_ok(&s, m, 1);
    for (uint32_t i = 0; i < 4; i++)
        rel_alloc_ok(&s, m, 0, 1, 2);
    node_free_ok(&s, m, 2);
    rel_free_ok(&s, m, 1);
    static snap before;
    take_snap(&s, &before);

    assert_int_equal(store_next_node_id(&s, false), 6);
    assert_int_equal(store_next_rel_id(&s, false), 4);
    uint64_t n = UINT64_MAX, r = UINT64_MAX;
    assert_int_equal(store_node_alloc(&s, m, 9, false, &n), 0);
    assert_int_equal(store_rel_alloc(&s, m, 0, 1, 2, false, &r), 0);
    assert_int_equal(n, 6);
    assert_int_equal(r, 4);
    assert_int_equal(store_next_node_id(&s, true), 2);   /* the freed ids wait */
    assert_int_equal(store_next_rel_id(&s, true), 1);
    assert_int_equal(store_check(&s), 0);

    assert_int_equal(store_rel_unalloc(&s, m, r, true), 0);
    assert_int_equal(store_node_unalloc(&s, m, n, true), 0);
    assert_snap(&s, &before);
    assert_int_equal(store_check(&s), 0);
    store_release(&s, m);
}

static void test_rel_alloc_and_free_list(void **state)
{
    mem_ctx *m = *state;
    store s;
    store_init(&s);
    assert_int_equal(store_next_rel_id(&s, true), 0);
    assert_null(store_rel(&s, 0));

    for (uint32_t i = 0; i < 20; i++)
        assert_int_equal(rel_alloc_ok(&s, m, i, i + 1, i % 5), i);
    rel_free_ok(&s, m, 0);
    rel_free_ok(&s, m, 19);
    rel_free_ok(&s, m, 8);
    assert_int_equal(s.rel_live, 17);
    assert_int_equal(rel_alloc_ok(&s, m, 100, 101, 9), 8);
    assert_int_equal(rel_alloc_ok(&s, m, 102, 103, 9), 19);
    assert_int_equal(rel_alloc_ok(&s, m, 104, 105, 9), 0);
    assert_int_equal(rel_alloc_ok(&s, m, 106, 107, 9), 20);
    assert_int_equal(store_rel(&s, 19)->start, 102);
    assert_int_equal(store_rel_slots(&s), 21);
    store_release(&s, m);
}

static void test_free_drops_props_and_adj(void **state)
{
    mem_ctx *m = *state;
    store s;
    store_init(&s);
    uint64_t a = node_alloc_ok(&s, m, 1);
    uint64_t b = node_alloc_ok(&s, m, 2);
    node_set_prop(&s, m, a, 1, 10);
    node_set_prop(&s, m, a, 2, 20);
    uint64_t r = rel_alloc_ok(&s, m, (uint32_t)a, (uint32_t)b, 0);
    set_prop(m, store_rel_props_mut(&s, m, r), 3, 30);
    link_rel(&s, m, r);
    assert_int_equal(props_len(store_node_props(&s, a)), 2);
    assert_int_equal(adj_len(store_node_adj(&s, a)), 1);

    size_t bytes = mem_ctx_bytes(m);
    unlink_rel(&s, m, r);
    rel_free_ok(&s, m, r);
    assert_non_null(store_node_adj(&s, a));   /* an emptied block is still a block */
    node_free_ok(&s, m, a);   /* drops its props and adjacency */
    node_free_ok(&s, m, b);
    assert_true(mem_ctx_bytes(m) < bytes);

    /* The reused slots start empty. */
    assert_int_equal(node_alloc_ok(&s, m, 9), b);
    assert_int_equal(node_alloc_ok(&s, m, 9), a);
    assert_int_equal(rel_alloc_ok(&s, m, 1, 0, 4), r);

    /* Freeing can hand the records over instead of releasing them. */
    uint64_t c = node_alloc_ok(&s, m, 3);
    node_set_prop(&s, m, c, 4, 40);
    uint64_t r2 = rel_alloc_ok(&s, m, (uint32_t)c, (uint32_t)c, 1);
    set_prop(m, store_rel_props_mut(&s, m, r2), 6, 60);
    link_rel(&s, m, r2);
    const prop_rec *c_props = store_node_props(&s, c);
    const adj_block *c_adj = store_node_adj(&s, c);
    const prop_rec *r2_props = store_rel_props(&s, r2);
    prop_rec *got_rel_props = NULL, *got_props = NULL;
    adj_block *got_adj = NULL;
    assert_int_equal(store_rel_own(&s, m, r2), 0);
    store_rel_free(&s, m, r2, &got_rel_props);
    assert_int_equal(store_node_own(&s, m, c), 0);
    store_node_free(&s, m, c, &got_props, &got_adj);
    assert_int_equal(store_check(&s), 0);
    assert_ptr_equal(got_rel_props, r2_props);
    assert_ptr_equal(got_props, c_props);
    assert_ptr_equal(got_adj, c_adj);
    assert_null(store_node_props(&s, c));
    assert_null(store_node_adj(&s, c));
    assert_null(store_rel_props(&s, r2));
    props_release(m, &got_rel_props);
    props_release(m, &got_props);
    adj_release(m, &got_adj);
    assert_int_equal(store_next_node_id(&s, true), c);
    assert_int_equal(store_next_rel_id(&s, true), r2);

    store_release(&s, m);
}

static void test_share_then_write(void **state)
{
    mem_ctx *m = *state;
    static snap held_snap;
    store s, t;
    build(&s, m, 40);
    size_t bytes = mem_ctx_bytes(m);
    store_share(&s, &t);
    assert_int_equal(mem_ctx_bytes(m), bytes);   /* O(1) */
    take_snap(&t, &held_snap);
    assert_snap(&s, &held_snap);

    /* Allocation from the free list and from the end. */
    uint64_t r = rel_alloc_ok(&s, m, 5, 6, 1);
    assert_int_equal(r, 36);   /* rels 0, 3, ..., 36 were freed, 36 last */
    assert_snap(&t, &held_snap);
    rel_alloc_ok(&s, m, 6, 7, 1);
    uint64_t n = node_alloc_ok(&s, m, 7);
    assert_int_equal(n, 40);
    assert_snap(&t, &held_snap);

    /* A property and a label change on an existing node. */
    node_set_prop(&s, m, 12, 1, 1212);
    node_set_prop(&s, m, 12, 5, 5);
    node_meta *nm = store_node_meta_mut(&s, m, 13);
    assert_non_null(nm);
    nm->labelset = 99;
    assert_int_equal(props_len(store_node_props(&s, 12)), 2);
    assert_int_equal(props_len(store_node_props(&t, 12)), 1);
    assert_int_equal(store_node(&t, 13)->labelset, held_snap.nodes[13].labelset);
    assert_snap(&t, &held_snap);

    /* New adjacency on shared blocks. */
    uint64_t r2 = rel_alloc_ok(&s, m, 20, 21, 2);
    link_rel(&s, m, r2);
    assert_int_equal(adj_len(store_node_adj(&s, 20)), adj_len(store_node_adj(&t, 20)) + 1);
    assert_snap(&t, &held_snap);

    /* Frees: a rel with properties and a node with properties and
       (emptied) adjacency. */
    unlink_rel(&s, m, 1);
    rel_free_ok(&s, m, 1);
    node_free_ok(&s, m, 0);   /* its only rel, 0, was freed by build */
    assert_non_null(store_node(&t, 0));
    assert_non_null(store_rel(&t, 1));
    assert_snap(&t, &held_snap);

    store_release(&s, m);
    assert_snap(&t, &held_snap);
    store_release(&t, m);
}

/* ---- allocation failure ------------------------------------------------ */

/* store_node_alloc (or store_rel_alloc when rel) with the 1st, 2nd, ...
   allocation failing until it succeeds; after each failure s and held
   (when not NULL) are exactly as before.  Returns the failures seen. */
static long alloc_until_success(store *s, mem_ctx *m, int rel, const store *held,
                                const snap *held_snap)
{
    static snap before;
    take_snap(s, &before);
    for (long k = 1;; k++) {
        assert_true(k < 64);
        uint64_t id = UINT64_MAX;
        mem_fail_at(k);
        int rc = rel ? store_rel_alloc(s, m, 1, 2, 3, true, &id)
                     : store_node_alloc(s, m, 4, true, &id);
        mem_fail_clear();
        if (rc == 0) {
            assert_int_equal(id, rel ? before.next_rel : before.next_node);
            assert_int_equal(store_check(s), 0);
            return k - 1;
        }
        assert_int_equal(rc, -1);
        assert_snap(s, &before);
        if (held)
            assert_snap(held, held_snap);
    }
}

static void test_alloc_failure_private(void **state)
{
    mem_ctx *m = *state;
    store s;
    store_init(&s);
    /* From the end through every vector growth up to 70 slots. */
    long failures = 0;
    for (int i = 0; i < 70; i++) {
        failures += alloc_until_success(&s, m, 0, NULL, NULL);
        failures += alloc_until_success(&s, m, 1, NULL, NULL);
    }
    assert_true(failures > 0);
    /* From the free list of a private store: nothing to allocate. */
    node_free_ok(&s, m, 17);
    rel_free_ok(&s, m, 33);
    assert_int_equal(alloc_until_success(&s, m, 0, NULL, NULL), 0);
    assert_int_equal(alloc_until_success(&s, m, 1, NULL, NULL), 0);
    store_release(&s, m);
}

static void test_alloc_failure_shared(void **state)
{
    mem_ctx *m = *state;
    static snap held_snap;
    /* Sizes at and around leaf and height boundaries (fanout 4). */
    static const uint32_t sizes[] = { 1, 4, 5, 16, 17, 30 };
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        for (int rel = 0; rel <= 1; rel++) {
            for (int from_free_list = 0; from_free_list <= 1; from_free_list++) {
                store s, t;
                build(&s, m, sizes[z]);
                if (!from_free_list) {
                    /* Drain the free lists so the alloc takes the end. */
                    while (s.node_free != SLOT_END)
                        node_alloc_ok(&s, m, 0);
                    while (s.rel_free != SLOT_END)
                        rel_alloc_ok(&s, m, 0, 0, 0);
                } else if (rel ? s.rel_free == SLOT_END : s.node_free == SLOT_END) {
                    if (rel)
                        rel_free_ok(&s, m, rel_alloc_ok(&s, m, 0, 0, 0));
                    else
                        node_free_ok(&s, m, node_alloc_ok(&s, m, 0));
                }
                store_share(&s, &t);
                take_snap(&t, &held_snap);
                assert_true(alloc_until_success(&s, m, rel, &t, &held_snap) >= 1);
                assert_snap(&t, &held_snap);
                store_release(&s, m);
                assert_snap(&t, &held_snap);
                store_release(&t, m);
                assert_int_equal(mem_ctx_bytes(m), 0);
            }
        }
    }
}

/* ---- undo: unalloc and restore ---------------------------------------- */

/* Allocates a node (or rel), shares the store when asked (so the undo must
   copy), then undoes the alloc with the 1st, 2nd, ... allocation failing
   until it succeeds: each failure leaves s as after the alloc, success as
   before it, and a share never changes. */
static void alloc_then_unalloc(store *s, mem_ctx *m, int rel, int share)
{
    static snap before, after, held_snap;
    take_snap(s, &before);
    uint64_t id = rel ? rel_alloc_ok(s, m, 7, 8, 9) : node_alloc_ok(s, m, 7);
    bool pushed = id == (rel ? before.rel_slots : before.node_slots);
    store t;
    if (share) {
        store_share(s, &t);
        take_snap(&t, &held_snap);
    }
    take_snap(s, &after);
    long k;
    for (k = 1;; k++) {
        assert_true(k < 64);
        mem_fail_at(k);
        int rc = rel ? store_rel_unalloc(s, m, id, pushed) : store_node_unalloc(s, m, id, pushed);
        mem_fail_clear();
        if (rc == 0)
            break;
        assert_int_equal(rc, -1);
        assert_snap(s, &after);
        if (share)
            assert_snap(&t, &held_snap);
    }
    if (share)
        assert_true(k > 1);
    assert_snap(s, &before);
    if (share) {
        assert_snap(&t, &held_snap);
        store_release(&t, m);
    }
}

static void test_unalloc_undoes_alloc(void **state)
{
    mem_ctx *m = *state;
    for (int share = 0; share <= 1; share++) {
        for (int rel = 0; rel <= 1; rel++) {
            store s;
            build(&s, m, 18);
            alloc_then_unalloc(&s, m, rel, share);   /* from the free list */
            while (s.node_free != SLOT_END)
                node_alloc_ok(&s, m, 0);
            while (s.rel_free != SLOT_END)
                rel_alloc_ok(&s, m, 0, 0, 0);
            alloc_then_unalloc(&s, m, rel, share);   /* from the end */
            store_release(&s, m);
            assert_int_equal(mem_ctx_bytes(m), 0);
        }
    }
}

/* Frees a node (or rel) with properties (and adjacency), keeping them,
   shares the store when asked, then restores it with the 1st, 2nd, ...
   allocation failing until it succeeds: the store ends exactly as before
   the free, records included, and a share never changes. */
static void free_then_restore(store *s, mem_ctx *m, uint64_t id, int rel, int share)
{
    static snap before, after, held_snap;
    take_snap(s, &before);
    prop_rec *props = NULL;
    adj_block *adj = NULL;
    rel_meta meta = { 0 };
    uint32_t labelset = 0;
    if (rel) {
        meta = *store_rel(s, id);
        assert_int_equal(store_rel_own(s, m, id), 0);
        store_rel_free(s, m, id, &props);
    } else {
        labelset = store_node(s, id)->labelset;
        assert_int_equal(store_node_own(s, m, id), 0);
        store_node_free(s, m, id, &props, &adj);
        assert_non_null(adj);
    }
    assert_non_null(props);
    assert_int_equal(store_check(s), 0);
    store t;
    if (share) {
        store_share(s, &t);
        take_snap(&t, &held_snap);
    }
    take_snap(s, &after);
    long k;
    for (k = 1;; k++) {
        assert_true(k < 64);
        mem_fail_at(k);
        int rc = rel ? store_rel_restore(s, m, id, &meta, props)
                     : store_node_restore(s, m, id, labelset, props, adj);
        mem_fail_clear();
        if (rc == 0)
            break;
        assert_int_equal(rc, -1);
        assert_snap(s, &after);
        if (share)
            assert_snap(&t, &held_snap);
    }
    if (share)
        assert_true(k > 1);
    assert_snap(s, &before);
    if (share) {
        assert_snap(&t, &held_snap);
        store_release(&t, m);
    }
}

static void test_restore_undoes_free(void **state)
{
    mem_ctx *m = *state;
    for (int share = 0; share <= 1; share++) {
        store s;
        build(&s, m, 18);   /* nodes 0..17 with props and adjacency */
        free_then_restore(&s, m, 5, 0, share);
        free_then_restore(&s, m, 17, 0, share);
        free_then_restore(&s, m, 4, 1, share);    /* rel 4: 4 -> 5, live */
        free_then_restore(&s, m, 16, 1, share);
        /* A restore must name the free list's head. */
        uint64_t a = node_alloc_ok(&s, m, 1);
        node_free_ok(&s, m, a);
        uint64_t b = node_alloc_ok(&s, m, 1);
        assert_int_equal(b, a);
        node_free_ok(&s, m, 2);
        assert_int_equal(store_node_restore(&s, m, 3, 0, NULL, NULL), -1);
        assert_int_equal(store_check(&s), 0);
        store_release(&s, m);
        assert_int_equal(mem_ctx_bytes(m), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_node_alloc_and_free_list, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_rel_alloc_and_free_list, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_alloc_without_reuse, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_free_drops_props_and_adj, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_share_then_write, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failure_private, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failure_shared, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_unalloc_undoes_alloc, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_restore_undoes_free, mem_ctx_setup, mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
