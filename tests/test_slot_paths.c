/*
 * What a write under a shared store copies, counted exactly (storage/store.h:
 * a node's or relationship's property record sits in its slot's element).
 *
 *   - A property write on a shared store copies one root-to-leaf path of
 *     the slot vector and the record, and nothing of any other vector: when
 *     the records had a vector of their own, the same write copied a second
 *     path there.  The count is the path's chunks times their fanout plus
 *     the record's entries, to the entry.
 *   - Owning a node for a delete copies its slot path and its adjacency
 *     path, two paths (it was three); a relationship, one (it was two).
 *   - The shared side still reads the old record and meta; the writer's
 *     side the new.
 *   - A private record that grows (a new key) keeps its values, copies
 *     nothing, and an allocation failure while growing leaves it as it was.
 *   - The diff of two stores names a node whose properties changed and one
 *     whose labels changed, once each, in one walk.
 *
 * Each test gets a fresh mem_ctx in *state; the teardown asserts that
 * nothing allocated from it is left.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "storage/store.h"

#include "support/mem_fixture.h"

#define NODES 3000   /* test builds: fanout 4, so 6 levels (4^6 = 4096) */

/* n live nodes, node i with label set i % 7 and one property (key 1 = i). */
static void build(store *s, mem_ctx *m, uint64_t n)
{
    store_init(s);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id;
        assert_int_equal(store_node_alloc(s, m, (uint32_t)(i % 7), true, &id), 0);
        assert_int_equal(id, i);
        prop_rec **rp = store_node_props_mut(s, m, id);
        assert_non_null(rp);
        assert_int_equal(props_set(m, rp, 1, value_int((int64_t)i), NULL), 0);
    }
}

static uint64_t path_entries(const pvec *v) { return (uint64_t)(v->height + 1) * PVEC_FANOUT; }

static void test_set_copies_one_path(void **state)
{
    mem_ctx *m = *state;
    store s, view;
    build(&s, m, NODES);
    store_share(&s, &view);
    assert_true(s.node_meta.height >= 5);

    uint64_t before = mem_copied_entries();
    prop_rec **rp = store_node_props_mut(&s, m, 1234);
    assert_non_null(rp);
    assert_int_equal(props_set(m, rp, 1, value_int(-1), NULL), 0);
    /* One slot path and the one-entry record: nothing else. */
    assert_int_equal(mem_copied_entries() - before, path_entries(&s.node_meta) + 1);
    assert_int_equal((props_get(store_node_props(&view, 1234), 1)->u.i), 1234);
    assert_int_equal((props_get(store_node_props(&s, 1234), 1)->u.i), -1);
    assert_int_equal(store_node(&s, 1234)->labelset, 1234 % 7);

    /* The slot itself is private now: its labels change without a copy. */
    assert_false(pvec_is_shared(&s.node_meta, 1234));
    before = mem_copied_entries();
    store_node_meta_mut(&s, m, 1234)->labelset = 5;
    assert_int_equal(mem_copied_entries() - before, 0);
    assert_int_equal(store_node(&view, 1234)->labelset, 1234 % 7);

    /* A neighbour in the same leaf: only its record. */
    before = mem_copied_entries();
    rp = store_node_props_mut(&s, m, 1235);
    assert_int_equal(props_set(m, rp, 1, value_int(-2), NULL), 0);
    assert_int_equal(mem_copied_entries() - before, 1);
    assert_int_equal((props_get(store_node_props(&view, 1235), 1)->u.i), 1235);

    /* Under a fresh share, a label write copies its slot path only (none
       of its records: the leaf's copy retains them). */
    store_release(&view, m);
    store_share(&s, &view);
    before = mem_copied_entries();
    node_meta *n = store_node_meta_mut(&s, m, 2900);
    assert_non_null(n);
    n->labelset = 99;
    assert_int_equal(mem_copied_entries() - before, path_entries(&s.node_meta));
    assert_int_equal(store_node(&view, 2900)->labelset, 2900 % 7);
    assert_ptr_equal(store_node_props(&view, 2900), store_node_props(&s, 2900));

    assert_int_equal(store_check(&s), 0);
    assert_int_equal(store_check(&view), 0);
    store_release(&view, m);
    store_release(&s, m);
}

static void test_own_copies_slot_and_adjacency_paths(void **state)
{
    mem_ctx *m = *state;
    store s, view;
    build(&s, m, NODES);
    /* Every node gets a relationship to the next, so the adjacency vector
       is as deep as the slots and the relationships have a deep vector. */
    for (uint64_t i = 0; i + 1 < NODES; i++) {
        uint64_t rel;
        assert_int_equal(store_rel_alloc(&s, m, (uint32_t)i, (uint32_t)i + 1, 0, true, &rel), 0);
        assert_int_equal(store_rel_props_mut(&s, m, rel) != NULL, 1);
        assert_int_equal(props_set(m, store_rel_props_mut(&s, m, rel), 2, value_int(7), NULL),
                         0);
        for (int d = 0; d < 2; d++) {
            node_adj *a = store_node_adj_mut(&s, m, d ? i + 1 : i);
            adj_edit e = { d ? ADJ_IN : ADJ_OUT, 0, (uint32_t)rel };
            assert_non_null(a);
            assert_int_equal(adj_prepare_insert(m, &a->block, &e, 1), 0);
            store_adj_insert(a, e.dir, 0, (uint32_t)rel, (uint32_t)(d ? i : i + 1));
        }
    }
    assert_int_equal(store_check(&s), 0);
    store_share(&s, &view);

    uint64_t before = mem_copied_entries();
    assert_int_equal(store_node_own(&s, m, 1500), 0);
    assert_int_equal(mem_copied_entries() - before,
                     path_entries(&s.node_meta) + path_entries(&s.node_adj));
    before = mem_copied_entries();
    assert_int_equal(store_rel_own(&s, m, 1500), 0);
    assert_int_equal(mem_copied_entries() - before, path_entries(&s.rel_meta));

    /* The relationship's free hands its record over; the view keeps its. */
    prop_rec *props = NULL;
    const prop_rec *seen = store_rel_props(&view, 1500);
    store_rel_free(&s, m, 1500, &props);
    assert_ptr_equal(props, seen);
    assert_null(store_rel(&s, 1500));
    assert_non_null(store_rel(&view, 1500));
    assert_ptr_equal(store_rel_props(&view, 1500), seen);
    props_release(m, &props);

    store_release(&view, m);
    store_release(&s, m);
}

static void test_private_record_grows_in_place_of_realloc(void **state)
{
    mem_ctx *m = *state;
    prop_rec *r = NULL;
    uint64_t before = mem_copied_entries();
    for (uint32_t k = 0; k < 40; k++)
        assert_int_equal(props_set(m, &r, 100 - k, value_int(k), NULL), 0);
    assert_int_equal(mem_copied_entries() - before, 0);
    assert_int_equal(props_len(r), 40);
    for (uint32_t k = 0; k < 40; k++)
        assert_int_equal((props_get(r, 100 - k)->u.i), k);

    /* Growing fails: the record is the one it was, with its values. */
    const prop_rec *was = r;
    size_t size = props_size(r);
    uint32_t cap_reached = 0;
    for (uint32_t k = 200; props_size(r) == size; k++) {
        mem_fail_at(1);
        int rc = props_set(m, &r, k, value_int(k), NULL);
        mem_fail_clear();
        if (rc != 0) {
            cap_reached = k;
            break;
        }
    }
    assert_true(cap_reached > 0);
    assert_ptr_equal(r, was);
    assert_null(props_get(r, cap_reached));
    for (uint32_t k = 0; k < 40; k++)
        assert_int_equal((props_get(r, 100 - k)->u.i), k);
    props_release(m, &r);
}

static void test_diff_names_each_changed_slot_once(void **state)
{
    mem_ctx *m = *state;
    store s, view;
    build(&s, m, NODES);
    store_share(&s, &view);
    /* Node 10: a property; node 11: its labels; node 2000: both. */
    assert_int_equal(props_set(m, store_node_props_mut(&s, m, 10), 1, value_int(0), NULL), 0);
    store_node_meta_mut(&s, m, 11)->labelset = 50;
    store_node_meta_mut(&s, m, 2000)->labelset = 50;
    assert_int_equal(props_set(m, store_node_props_mut(&s, m, 2000), 3, value_int(0), NULL), 0);
    id_list out;
    assert_int_equal(store_diff_nodes(&view, &s, m, &out), 0);
    assert_int_equal(out.n, 3);
    assert_int_equal(out.ids[0], 10);
    assert_int_equal(out.ids[1], 11);
    assert_int_equal(out.ids[2], 2000);
    id_list_free(&out, m);

    /* Out of memory: -1 and an empty list. */
    mem_fail_at(1);
    assert_int_equal(store_diff_nodes(&view, &s, m, &out), -1);
    mem_fail_clear();
    assert_int_equal(out.n, 0);
    store_release(&view, m);
    store_release(&s, m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_set_copies_one_path, mem_ctx_setup,
                                        mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_own_copies_slot_and_adjacency_paths, mem_ctx_setup,
                                        mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_private_record_grows_in_place_of_realloc,
                                        mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_diff_names_each_changed_slot_once, mem_ctx_setup,
                                        mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
