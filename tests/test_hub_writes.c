/*
 * Writes at a hub through the C API while a view is held: a relationship
 * created at the hub, one deleted there, and a leaf's detach-delete copy a
 * bounded number of adjacency entries, the same at degree 2,000 and
 * 40,000 (storage/adjacency.h: a hub's segments are trees); the view keeps
 * its state.  A statement rolled back at a hub restores it; a hub saved
 * and loaded keeps its relationships.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "strata.h"
#include "storage/adjacency.h"
#include "storage/mem.h"

#define OK(g, call) \
    do { \
        strata_status s_ = (call); \
        if (s_ != STRATA_OK) \
            fail_msg("%s: %s", #call, strata_errmsg(g)); \
    } while (0)

static int setup(void **state)
{
    adj_tree_min_for_tests = 1024;   /* the production threshold */
    (void)state;
    return 0;
}

static uint64_t degree(strata_view *v, strata_id n, strata_direction dir)
{
    uint64_t d = 0;
    assert_int_equal(strata_node_degree(v, n, dir, STRATA_ANY_TYPE, &d), STRATA_OK);
    return d;
}

static void check_integrity(strata_graph *g)
{
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    if (strata_integrity_check(v) != STRATA_OK)
        fail_msg("integrity: %s", strata_view_errmsg(v));
    strata_view_release(&v);
}

/* Node 0, the hub, with d relationships out to d leaves (1 .. d). */
static strata_graph *star(uint32_t d, strata_token *type)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    OK(g, strata_token_intern(g, STRATA_RELTYPE, "T", type));
    for (uint32_t i = 0; i <= d; i++) {
        strata_id id;
        OK(g, strata_node_create(g, NULL, 0, &id));
    }
    for (uint32_t i = 1; i <= d; i++) {
        strata_id r;
        OK(g, strata_rel_create(g, 0, i, *type, &r));
    }
    return g;
}

typedef struct hub_cost {
    uint64_t create, delete, detach;
} hub_cost;

/* Entries copied by each kind of write at the hub of a d-star, a view held
   across each; the view keeps the hub's degree. */
static hub_cost measure(uint32_t d)
{
    strata_token t;
    strata_graph *g = star(d, &t);
    hub_cost c;
    strata_view *v = NULL;

    OK(g, strata_snapshot(g, &v));
    uint64_t before = mem_copied_entries();
    strata_id r;
    OK(g, strata_rel_create(g, 0, d / 2, t, &r));
    c.create = mem_copied_entries() - before;
    assert_int_equal(degree(v, 0, STRATA_OUT), d);
    strata_view_release(&v);

    OK(g, strata_snapshot(g, &v));
    before = mem_copied_entries();
    OK(g, strata_rel_delete(g, r));
    c.delete = mem_copied_entries() - before;
    assert_int_equal(degree(v, 0, STRATA_OUT), d + 1);
    strata_view_release(&v);

    OK(g, strata_snapshot(g, &v));
    before = mem_copied_entries();
    OK(g, strata_node_detach_delete(g, d / 3));
    c.detach = mem_copied_entries() - before;
    assert_int_equal(degree(v, 0, STRATA_OUT), d);
    strata_view_release(&v);

    OK(g, strata_snapshot(g, &v));
    assert_int_equal(degree(v, 0, STRATA_OUT), d - 1);
    strata_view_release(&v);
    check_integrity(g);
    strata_graph_free(&g);
    return c;
}

static void test_copies_independent_of_degree(void **state)
{
    (void)state;
    hub_cost small = measure(2000), big = measure(40000);
    /* Node and relationship slot paths, one leaf of the hub's tree and its
       directory, and a leaf's own block: far below either degree, and no
       more at 20 times the degree (but the slot paths' one more level). */
    uint64_t bound = 3 * 510;
    assert_true(big.create <= bound && big.delete <= bound && big.detach <= bound);
    assert_true(big.create <= small.create + 64);
    assert_true(big.delete <= small.delete + 64);
    assert_true(big.detach <= small.detach + 64);
}

/* A transaction's writes at a hub, rolled back: the hub lists what it
   listed before, and the graph is sound. */
static void test_rollback_at_hub(void **state)
{
    (void)state;
    strata_token t;
    strata_graph *g = star(3000, &t);
    strata_view *before = NULL;
    OK(g, strata_snapshot(g, &before));
    OK(g, strata_begin(g));
    strata_id r;
    for (uint32_t i = 0; i < 700; i++)
        OK(g, strata_rel_create(g, 0, 1 + i * 3, t, &r));
    for (strata_id rel = 0; rel < 3000; rel += 2)
        OK(g, strata_rel_delete(g, rel));
    OK(g, strata_node_detach_delete(g, 7));
    OK(g, strata_rollback(g));
    strata_view *after = NULL;
    OK(g, strata_snapshot(g, &after));
    assert_int_equal(degree(after, 0, STRATA_OUT), 3000);
    strata_edge_iter *a = NULL, *b = NULL;
    OK(g, strata_neighbours(before, 0, STRATA_OUT, STRATA_ANY_TYPE, &a));
    OK(g, strata_neighbours(after, 0, STRATA_OUT, STRATA_ANY_TYPE, &b));
    /* Rel ids were made in order, so both list them in id order. */
    strata_id ra, na, rb, nb;
    uint64_t n = 0;
    while (strata_edge_iter_next(a, &ra, &na)) {
        assert_true(strata_edge_iter_next(b, &rb, &nb));
        assert_int_equal(ra, rb);
        assert_int_equal(na, nb);
        n++;
    }
    assert_false(strata_edge_iter_next(b, &rb, &nb));
    assert_int_equal(n, 3000);
    strata_edge_iter_free(&a);
    strata_edge_iter_free(&b);
    strata_view_release(&before);
    strata_view_release(&after);
    check_integrity(g);
    strata_graph_free(&g);
}

/* A hub saved and loaded: the same degree, relationships and soundness. */
static void test_hub_round_trip(void **state)
{
    (void)state;
    strata_token t;
    strata_graph *g = star(5000, &t);
    for (strata_id rel = 0; rel < 5000; rel += 3)
        OK(g, strata_rel_delete(g, rel));
    strata_id r;
    OK(g, strata_rel_create(g, 0, 0, t, &r));   /* a self-loop at the hub */
    char path[] = "/tmp/strata_hub_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    OK(g, strata_save(g, path));
    strata_graph *h = NULL;
    assert_int_equal(strata_load(path, &h), STRATA_OK);
    unlink(path);
    strata_view *x = NULL, *y = NULL;
    OK(g, strata_snapshot(g, &x));
    OK(h, strata_snapshot(h, &y));
    assert_int_equal(degree(x, 0, STRATA_BOTH), degree(y, 0, STRATA_BOTH));
    assert_int_equal(degree(y, 0, STRATA_OUT), 5000 - 1667 + 1);
    assert_int_equal(degree(y, 0, STRATA_IN), 1);
    check_integrity(h);
    /* Writes on the loaded hub under a view. */
    OK(h, strata_rel_create(h, 0, 10, t, &r));
    OK(h, strata_rel_delete(h, 1));
    assert_int_equal(degree(y, 0, STRATA_OUT), 5000 - 1667 + 1);
    check_integrity(h);
    strata_view_release(&x);
    strata_view_release(&y);
    strata_graph_free(&g);
    strata_graph_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_copies_independent_of_degree, setup),
        cmocka_unit_test_setup(test_rollback_at_hub, setup),
        cmocka_unit_test_setup(test_hub_round_trip, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
