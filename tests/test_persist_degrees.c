/*
 * The loader hands each node's block to its slot with the entry counts per
 * direction it counted while building the block (store_set_adj), rather
 * than reading the block's directory again.  A round trip of a graph
 * large enough for every bulk path — slot vectors several levels deep
 * (test builds use 4-entry chunks), two hubs that become trees (one mostly
 * out, one mostly in), self-loops, nodes without relationships, deleted
 * relationships, relationships with one and with three properties — must
 * give every node the saved graph's out and in counts, which must be its
 * block's, and the same graph (the canonical dump and the integrity
 * check).
 *
 * And the smallest flat block stays out of the size class of a one-
 * property record (storage/adjacency.c, FLAT_MIN_BYTES): a node's first
 * block, freed when the node gains a second relationship, must not leave
 * holes that the records created meanwhile fill out of id order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "persist_support.h"
#include "support/tmp_dir.h"
#include "storage/adjacency.h"
#include "storage/mem.h"
#include "storage/props.h"

#define OK(g, call)                                                                       \
    do {                                                                                  \
        strata_status ok_s_ = (call);                                                     \
        if (ok_s_ != STRATA_OK)                                                           \
            fail_msg("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, strata_errstr(ok_s_), \
                     strata_errmsg(g));                                                   \
    } while (0)

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void set_int(strata_graph *g, strata_id rel, strata_token key, int64_t x)
{
    strata_value *v = strata_value_int(x);
    OK(g, strata_rel_set(g, rel, key, v));
    strata_value_free(&v);
}

/* Node 0 is a hub mostly out, node 1 one mostly in; every ninth
   relationship is a self-loop; nodes from nodes - 20 on have none. */
static strata_graph *degree_graph(int nodes, int rels)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token types[5], keys[3];
    const char *tn[5] = { "A", "B", "C", "D", "E" }, *kn[3] = { "w", "x", "y" };
    for (int i = 0; i < 5; i++)
        OK(g, strata_token_intern(g, STRATA_RELTYPE, tn[i], &types[i]));
    for (int i = 0; i < 3; i++)
        OK(g, strata_token_intern(g, STRATA_KEY, kn[i], &keys[i]));
    for (int i = 0; i < nodes; i++) {
        strata_id id;
        OK(g, strata_node_create(g, NULL, 0, &id));
    }
    uint64_t seed = 0x2545F4914F6CDD1Dull, busy = (uint64_t)nodes - 20;
    for (int i = 0; i < rels; i++) {
        uint64_t x = next_rand(&seed);
        strata_id s = (x >> 8) % busy, e = (x >> 32) % busy, r;
        if (i % 5 == 0)
            s = 0;
        else if (i % 5 == 1)
            e = 1;
        else if (i % 9 == 2)
            e = s;
        OK(g, strata_rel_create(g, s, e, types[x % 5], &r));
        int nprops = x % 4 == 0 ? 0 : x % 4 == 3 ? 3 : 1;
        for (int k = 0; k < nprops; k++)
            set_int(g, r, keys[k], (int64_t)(x >> (k * 8)) % 1000);
        if (x % 13 == 0)
            OK(g, strata_rel_delete(g, r));
    }
    return g;
}

static void test_loaded_degrees(void **state)
{
    (void)state;
    strata_graph *g = degree_graph(400, 6000);
    strata_view *vw = NULL, *vg = NULL;
    OK(g, strata_snapshot(g, &vw));
    char *want = dump_view(vw);
    OK(g, strata_save(g, tmp_path("degrees.db")));
    strata_graph *h = NULL;
    char err[512];
    if (strata_load_ex(tmp_path("degrees.db"), &h, err, sizeof err) != STRATA_OK)
        fail_msg("load: %s", err);
    OK(h, strata_snapshot(h, &vg));
    char *got = dump_view(vg);
    assert_string_equal(want, got);
    const store *sw = &vw->ver->st, *sg = &vg->ver->st;
    assert_int_equal(store_node_slots(sw), store_node_slots(sg));
    uint64_t outs = 0, ins = 0;
    for (uint64_t id = 0; id < store_node_slots(sg); id++) {
        const node_adj *a = store_node_adj_slot(sw, id), *b = store_node_adj_slot(sg, id);
        assert_int_equal(a->out, b->out);
        assert_int_equal(a->in, b->in);
        assert_int_equal(b->out, store_adj_count(b->block, ADJ_OUT));
        assert_int_equal(b->in, store_adj_count(b->block, ADJ_IN));
        outs += b->out;
        ins += b->in;
    }
    assert_int_equal(outs, sg->rel_live);
    assert_int_equal(ins, sg->rel_live);
    /* The hubs are trees, and lopsided. */
    const node_adj *out_hub = store_node_adj_slot(sg, 0), *in_hub = store_node_adj_slot(sg, 1);
    assert_true(adj_is_tree(out_hub->block) && adj_is_tree(in_hub->block));
    assert_true(out_hub->out > 4 * out_hub->in);
    assert_true(in_hub->in > 4 * in_hub->out);
    assert_null(store_node_adj_slot(sg, 399)->block);
    if (strata_integrity_check(vg))
        fail_msg("integrity: %s", strata_view_errmsg(vg));
    free(want);
    free(got);
    strata_view_release(&vw);
    strata_view_release(&vg);
    strata_graph_free(&g);
    strata_graph_free(&h);
}

/* A node's first block (one entry, one segment) and a one-property
   record are of different size classes. */
static void test_first_block_class(void **state)
{
    (void)state;
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    adj_block *b = NULL;
    assert_int_equal(adj_reserve_segments(m, &b, 1, 1), 0);
    adj_append(b, ADJ_OUT, 0, 7, 9);
    prop_rec *r = props_new(m, 1);
    assert_non_null(r);
    props_append(r, 0, value_int(1));
    assert_true(mem_good_size(m, adj_size(b)) != mem_good_size(m, props_size(r)));
    assert_true(adj_size(b) > props_size(r));
    props_release(m, &r);
    adj_release(m, &b);
    assert_int_equal(mem_ctx_bytes(m), 0);
    mem_ctx_release(m);
}

static int make_dir(void **state)
{
    (void)state;
    return tmp_dir_make("strata-persist-degrees");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loaded_degrees),
        cmocka_unit_test(test_first_block_class),
    };
    return cmocka_run_group_tests(tests, make_dir, tmp_dir_remove);
}
