/* algo.bfs outgoing (algo/paths.c) reads the view's adjacency blocks in
   place instead of building rows: its rows (node and hops, in the order
   reached) must be exactly those of a breadth-first search through the
   public API's neighbour iterator, which lists a node's relationships in
   the same block order, under every type list and label selection, with
   and without deleted nodes; IN and BOTH (rows built) must give the same
   distances as the same search over their direction; and every
   allocation failure is ENOMEM with nothing leaked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "storage/mem.h"
#include "strata.h"

enum { NODES = 2500 };

/* Every third node labelled A; types R and S; hubs, self-loops and
   parallel pairs; with holes, every 89th node deleted. */
static strata_graph *test_graph(size_t m, uint64_t seed, bool holes)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token a, r, s;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "A", &a), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "R", &r), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "S", &s), STRATA_OK);
    for (size_t i = 0; i < NODES; i++) {
        strata_id id;
        assert_int_equal(strata_node_create(g, &a, i % 3 == 0, &id), STRATA_OK);
    }
    for (size_t i = 0; i < m; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        strata_id from = (seed >> 33) % NODES, to = (seed >> 13) % NODES, rel;
        if (i % 5 == 0)
            to %= 11;
        if (i % 41 == 0)
            to = from;
        for (int copies = i % 13 == 0 ? 2 : 1; copies > 0; copies--)
            assert_int_equal(strata_rel_create(g, from, to, i % 3 ? r : s, &rel), STRATA_OK);
    }
    for (strata_id id = 7; holes && id < NODES; id += 89)
        assert_int_equal(strata_node_detach_delete(g, id), STRATA_OK);
    return g;
}

typedef struct selection {
    const char *direction;
    const char *type;        /* NULL: every type */
    bool labelled;
} selection;

static strata_value *bfs_config(const selection *sel, strata_id source)
{
    const char *keys[4] = {"source"};
    strata_value *vals[4] = {strata_value_int((int64_t)source)};
    size_t k = 1;
    if (sel->direction) {
        keys[k] = "direction";
        vals[k++] = strata_value_string(sel->direction, strlen(sel->direction));
    }
    if (sel->type) {
        keys[k] = "types";
        vals[k++] = strata_value_string(sel->type, strlen(sel->type));
    }
    if (sel->labelled) {
        keys[k] = "labels";
        vals[k++] = strata_value_string("A", 1);
    }
    strata_value *m = strata_value_map(keys, (const strata_value *const *)vals, k);
    for (size_t i = 0; i < k; i++)
        strata_value_free(&vals[i]);
    assert_non_null(m);
    return m;
}

static bool selected(strata_view *v, const selection *sel, strata_id id)
{
    if (!strata_node_exists(v, id))
        return false;
    if (!sel->labelled)
        return true;
    strata_token a;
    bool has = false;
    assert_int_equal(strata_token_lookup(v, STRATA_LABEL, "A", &a), STRATA_OK);
    assert_int_equal(strata_node_has_label(v, id, a, &has), STRATA_OK);
    return has;
}

/* Breadth-first search through strata_neighbours: order[] the nodes in
   the order reached, dist[] by id (-1 not reached); returns how many. */
static size_t api_bfs(strata_view *v, const selection *sel, strata_id source, strata_id *order,
                      int64_t *dist)
{
    strata_direction dir = !sel->direction || strcmp(sel->direction, "OUT") == 0 ? STRATA_OUT
                           : strcmp(sel->direction, "IN") == 0               ? STRATA_IN
                                                                              : STRATA_BOTH;
    strata_token type = STRATA_ANY_TYPE;
    if (sel->type)
        assert_int_equal(strata_token_lookup(v, STRATA_RELTYPE, sel->type, &type), STRATA_OK);
    for (size_t i = 0; i < NODES; i++)
        dist[i] = -1;
    size_t head = 0, tail = 0;
    dist[source] = 0;
    order[tail++] = source;
    while (head < tail) {
        strata_id at = order[head++];
        strata_edge_iter *it;
        assert_int_equal(strata_neighbours(v, at, dir, type, &it), STRATA_OK);
        strata_id rel, other;
        while (strata_edge_iter_next(it, &rel, &other))
            if (dist[other] < 0 && selected(v, sel, other)) {
                dist[other] = dist[at] + 1;
                order[tail++] = other;
            }
        strata_edge_iter_free(&it);
    }
    return tail;
}

static const selection selections[] = {
    {NULL, NULL, false}, {"OUT", "S", false}, {"OUT", "R", true}, {NULL, NULL, true},
    {"IN", NULL, false}, {"BOTH", "S", true},
};

static void check_bfs(strata_graph *g)
{
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    strata_id *order = malloc(NODES * sizeof *order);
    int64_t *dist = malloc(NODES * sizeof *dist);
    assert_true(order && dist);
    for (size_t i = 0; i < sizeof selections / sizeof *selections; i++) {
        const selection *sel = &selections[i];
        bool out = !sel->direction || strcmp(sel->direction, "OUT") == 0;
        size_t total = 0, runs = 0;
        for (strata_id source = 0; source < NODES; source += 401) {
            if (!selected(v, sel, source))
                continue;
            size_t reached = api_bfs(v, sel, source, order, dist);
            strata_algo_result *r = NULL;
            strata_value *cfg = bfs_config(sel, source);
            assert_int_equal(strata_algo_run(v, "bfs", cfg, &r), STRATA_OK);
            strata_value_free(&cfg);
            assert_int_equal(strata_algo_result_rows(r), reached);
            total += reached;
            runs++;
            const strata_id *nodes = strata_algo_result_nodes(r);
            const double *hops = strata_algo_result_values(r);
            for (size_t k = 0; k < reached; k++) {
                if (out)   /* the same order: both read block order */
                    assert_int_equal(nodes[k], order[k]);
                assert_true(nodes[k] < NODES && dist[nodes[k]] >= 0);
                assert_true(hops[k] == (double)dist[nodes[k]]);
            }
            strata_algo_result_free(&r);
        }
        assert_true(total > 2 * runs);   /* searches that go somewhere */
    }
    free(order);
    free(dist);
    strata_view_release(&v);
}

static void test_bfs_matches_api_search(void **state)
{
    (void)state;
    for (int holes = 0; holes <= 1; holes++) {
        strata_graph *g = test_graph(20000, 4, holes);
        check_bfs(g);
        strata_graph_free(&g);
    }
}

/* A source outside the selected labels is an ArgumentError naming it. */
static void test_source_not_selected(void **state)
{
    (void)state;
    strata_graph *g = test_graph(100, 5, false);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    static const selection labelled = {NULL, NULL, true};
    strata_value *cfg = bfs_config(&labelled, 1);   /* node 1 is not an A */
    strata_algo_result *r = NULL;
    assert_int_equal(strata_algo_run(v, "bfs", cfg, &r), STRATA_EINVAL);
    assert_null(r);
    assert_non_null(strstr(strata_view_errmsg(v), "node 1 is not among the selected labels"));
    strata_value_free(&cfg);
    strata_view_release(&v);
    strata_graph_free(&g);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g = test_graph(1200, 6, true);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    static const selection sels[] = {{NULL, NULL, false}, {"OUT", "R", true}};
    for (size_t i = 0; i < 2; i++) {
        strata_value *cfg = bfs_config(&sels[i], 0);
        size_t base = mem_ctx_bytes(mem_scratch());
        for (long k = 1;; k++) {
            strata_algo_result *r = NULL;
            mem_fail_at(k);
            strata_status s = strata_algo_run(v, "bfs", cfg, &r);
            bool failed = mem_fail_count() >= k;
            mem_fail_clear();
            if (failed) {
                if (s != STRATA_ENOMEM)
                    fail_msg("allocation %ld: status %d (%s)", k, s, strata_view_errmsg(v));
                assert_null(r);
                assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
                continue;
            }
            assert_int_equal(s, STRATA_OK);
            assert_true(strata_algo_result_rows(r) > 0);
            strata_algo_result_free(&r);
            assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
            break;
        }
        strata_value_free(&cfg);
    }
    strata_view_release(&v);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bfs_matches_api_search),
        cmocka_unit_test(test_source_not_selected),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
