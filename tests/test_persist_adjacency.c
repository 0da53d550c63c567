/*
 * The loader's adjacency build (core/persist.c, adj_plan and link_all):
 * half edges streamed into partitions of neighbouring nodes, each
 * partition sorted by segment key in cache, and, with many relationship
 * types, partitions shrunk down to one node.  Test builds use partitions
 * of at most 16 nodes, a sort of two bits a pass and room for seven bits
 * of node offset and key together, so small graphs take every shape: two
 * types sort in one pass; three types in two, over partitions of 16
 * nodes; forty types in four, over partitions of one node.  Each graph
 * has self-loops, a hub, nodes without relationships, whole partitions
 * without any, and deleted relationships.
 *
 * The loaded graph must equal the saved one (the canonical dump of
 * persist_support.h) and every node's block must list its segments in key
 * order and each segment in relationship id order, holding the saved
 * block's entries.  Every allocation of each load may fail cleanly.
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
#include "support/adj_runs.h"
#include "storage/mem.h"

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

/* nodes nodes and about rels relationships over ntypes types.  Node 1 is a
   hub with relationships of every type in both directions and to itself;
   nodes from nodes / 2 on for a stretch of 40 have none (whole partitions
   stay empty); some relationships are deleted. */
static strata_graph *shaped_graph(int nodes, int rels, int ntypes)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token *types = calloc((size_t)ntypes, sizeof *types), kw;
    for (int i = 0; i < ntypes; i++) {
        char name[16];
        snprintf(name, sizeof name, "T%d", i);
        OK(g, strata_token_intern(g, STRATA_RELTYPE, name, &types[i]));
    }
    OK(g, strata_token_intern(g, STRATA_KEY, "w", &kw));
    for (int i = 0; i < nodes; i++) {
        strata_id id;
        OK(g, strata_node_create(g, NULL, 0, &id));
    }
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    int quiet_from = nodes / 2, quiet_to = nodes / 2 + 40;
    for (int i = 0; i < rels; i++) {
        uint64_t x = next_rand(&seed);
        strata_id s = (x >> 8) % (uint64_t)nodes, e = (x >> 32) % (uint64_t)nodes, r;
        if (i % 7 == 0)
            s = 1;                 /* the hub, out */
        else if (i % 7 == 1)
            e = 1;                 /* the hub, in */
        else if (i % 7 == 2)
            e = s;                 /* a self-loop */
        if ((s >= (strata_id)quiet_from && s < (strata_id)quiet_to) ||
            (e >= (strata_id)quiet_from && e < (strata_id)quiet_to))
            continue;
        OK(g, strata_rel_create(g, s, e, types[x % (uint64_t)ntypes], &r));
        if (x % 3 == 0) {
            strata_value *v = strata_value_int((int64_t)(x % 100));
            OK(g, strata_rel_set(g, r, kw, v));
            strata_value_free(&v);
        }
        if (x % 11 == 0)
            OK(g, strata_rel_delete(g, r));
    }
    free(types);
    return g;
}

static bool has_entry(const adj_entry *e, uint32_t n, adj_entry want)
{
    for (uint32_t i = 0; i < n; i++)
        if (e[i].rel == want.rel && e[i].other == want.other)
            return true;
    return false;
}

/* Node id's loaded block against its saved one: the same segments in key
   order, each the same entries, in relationship id order. */
static void same_block(const store *want, const store *got, uint64_t id)
{
    const adj_block *x = store_node_adj(want, id), *y = store_node_adj(got, id);
    assert_int_equal(adj_nsegments(x), adj_nsegments(y));
    assert_int_equal(adj_len(x), adj_len(y));
    uint64_t last_key = 0;
    for (uint32_t s = 0; s < adj_nsegments(y); s++) {
        int dx, dy;
        uint32_t tx, ty, nx, ny;
        adj_segment_info(x, s, &dx, &tx);
        adj_segment_info(y, s, &dy, &ty);
        adj_entry *ex = adj_runs_gather(x, s, &nx), *ey = adj_runs_gather(y, s, &ny);
        assert_int_equal(dx, dy);
        assert_int_equal(tx, ty);
        assert_int_equal(nx, ny);
        uint64_t key = (uint64_t)ty << 1 | (uint64_t)dy;
        assert_true(s == 0 || key > last_key);
        last_key = key;
        for (uint32_t i = 0; i < ny; i++) {
            assert_true(i == 0 || ey[i - 1].rel < ey[i].rel);
            assert_true(has_entry(ex, nx, ey[i]));
        }
        free(ex);
        free(ey);
    }
}

static void round_trip(int nodes, int rels, int ntypes)
{
    strata_graph *g = shaped_graph(nodes, rels, ntypes);
    strata_view *vw = NULL, *vg = NULL;
    OK(g, strata_snapshot(g, &vw));
    char *want = dump_view(vw);
    OK(g, strata_save(g, tmp_path("adj.db")));
    strata_graph *h = NULL;
    char err[512];
    if (strata_load_ex(tmp_path("adj.db"), &h, err, sizeof err) != STRATA_OK)
        fail_msg("load: %s", err);
    OK(h, strata_snapshot(h, &vg));
    char *got = dump_view(vg);
    assert_string_equal(want, got);
    const store *sw = &vw->ver->st, *sg = &vg->ver->st;
    assert_int_equal(store_node_slots(sw), store_node_slots(sg));
    uint64_t degrees = 0;
    for (uint64_t id = 0; id < store_node_slots(sg); id++) {
        same_block(sw, sg, id);
        degrees += adj_len(store_node_adj(sg, id));
    }
    assert_int_equal(degrees, 2 * sg->rel_live);
    assert_true(adj_len(store_node_adj(sg, 1)) > (uint32_t)rels / 10);
    assert_null(store_node_adj(sg, (uint64_t)nodes / 2 + 3));
    if (strata_integrity_check(vg))
        fail_msg("integrity: %s", strata_view_errmsg(vg));
    free(want);
    free(got);
    strata_view_release(&vw);
    strata_view_release(&vg);
    strata_graph_free(&g);
    strata_graph_free(&h);
}

/* Two types: four segment keys, one sorting pass. */
static void test_one_sort_pass(void **state)
{
    (void)state;
    round_trip(100, 600, 2);
}

/* Three types: six keys, two passes; partitions of 16 nodes, some
   empty. */
static void test_sorted_partitions(void **state)
{
    (void)state;
    round_trip(500, 3000, 3);
}

/* Forty types: eighty keys, four passes, partitions of one node. */
static void test_many_types(void **state)
{
    (void)state;
    round_trip(120, 1500, 40);
}

/* No relationship at all, and relationships whose every one is deleted. */
static void test_no_relationships(void **state)
{
    (void)state;
    for (int deleted = 0; deleted < 2; deleted++) {
        strata_graph *g = NULL;
        assert_int_equal(strata_graph_new(&g), STRATA_OK);
        strata_id a, b, r;
        OK(g, strata_node_create(g, NULL, 0, &a));
        OK(g, strata_node_create(g, NULL, 0, &b));
        if (deleted) {
            strata_token t;
            OK(g, strata_token_intern(g, STRATA_RELTYPE, "T", &t));
            OK(g, strata_rel_create(g, a, b, t, &r));
            OK(g, strata_rel_delete(g, r));
        }
        char *want = dump_graph(g);
        OK(g, strata_save(g, tmp_path("none.db")));
        strata_graph *h = NULL;
        char err[512];
        if (strata_load_ex(tmp_path("none.db"), &h, err, sizeof err) != STRATA_OK)
            fail_msg("load: %s", err);
        char *got = dump_graph(h);
        assert_string_equal(want, got);
        free(want);
        free(got);
        strata_graph_free(&g);
        strata_graph_free(&h);
    }
}

/* Every allocation of a load of each shape may fail: an out-of-memory
   error that leaves no scratch behind, until the load that gets all its
   memory, which equals the saved graph. */
static void test_allocation_failures(void **state)
{
    (void)state;
    static const int shapes[][3] = { { 60, 300, 2 }, { 200, 900, 3 }, { 60, 400, 40 } };
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        strata_graph *g = shaped_graph(shapes[k][0], shapes[k][1], shapes[k][2]);
        OK(g, strata_save(g, tmp_path("oom.db")));
        char *want = dump_graph(g);
        strata_graph_free(&g);
        size_t scratch = mem_ctx_bytes(mem_scratch());
        for (long n = 1;; n++) {
            strata_graph *h = NULL;
            char err[512];
            mem_fail_at(n);
            strata_status s = strata_load_ex(tmp_path("oom.db"), &h, err, sizeof err);
            mem_fail_clear();
            if (s == STRATA_OK) {
                char *got = dump_graph(h);
                assert_string_equal(want, got);
                free(got);
                strata_graph_free(&h);
                break;
            }
            if (s != STRATA_ENOMEM)
                fail_msg("allocation %ld failed: %s (%s)", n, strata_errstr(s), err);
            assert_null(h);
            assert_non_null(strstr(err, "out of memory"));
            assert_int_equal(mem_ctx_bytes(mem_scratch()), scratch);
        }
        free(want);
    }
}

static int make_dir(void **state)
{
    (void)state;
    return tmp_dir_make("strata-persist-adj");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_sort_pass),
        cmocka_unit_test(test_sorted_partitions),
        cmocka_unit_test(test_many_types),
        cmocka_unit_test(test_no_relationships),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, make_dir, tmp_dir_remove);
}
