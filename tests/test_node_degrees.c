/*
 * Each node keeps its outgoing and incoming entry counts beside its
 * adjacency block (storage/store.h, node_adj), so degree reads no block.
 * Random relationship creates, deletes and detach-deletes, in statements
 * and transactions committed or rolled back, with views held across them:
 * after every step strata_integrity_check (which compares the kept counts
 * with the blocks) passes on the graph and on every held view, and the
 * degree algorithm — which takes the kept counts when every node and type
 * is selected — equals strata_node_degree per node on each.  The same
 * after a save and load, where the counts are rebuilt from the blocks.
 * Test builds turn blocks into trees past 8 entries, so hubs are trees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"
#include "support/tmp_dir.h"

static int make_dir(void **state)
{
    (void)state;
    return tmp_dir_make("strata-degrees");
}

#define OK(g, call) \
    do { \
        strata_status s_ = (call); \
        if (s_ != STRATA_OK) \
            fail_msg("%s: %s", #call, strata_errmsg(g)); \
    } while (0)

enum { NODES = 60, STEPS = 400, VIEWS = 3 };

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static double *degrees_by_algo(strata_view *v, const char *direction, size_t *n)
{
    const char *key = "direction";
    strata_value *dir = strata_value_string(direction, strlen(direction));
    strata_value *cfg = strata_value_map(&key, (const strata_value *const *)&dir, 1);
    strata_algo_result *r = NULL;
    if (strata_algo_run(v, "degree", cfg, &r) != STRATA_OK)
        fail_msg("degree: %s", strata_view_errmsg(v));
    strata_value_free(&dir);
    strata_value_free(&cfg);
    *n = strata_algo_result_rows(r);
    double *out = calloc(NODES, sizeof *out);
    assert_non_null(out);
    strata_id node;
    double d;
    while (strata_algo_result_next(r, &node, &d)) {
        assert_true(node < NODES);
        out[node] = d;
    }
    strata_algo_result_free(&r);
    return out;
}

/* The view is sound, and its degrees by the algorithm (kept counts) equal
   the public API's per node, for OUT and IN. */
static void check_view(strata_view *v)
{
    if (strata_integrity_check(v) != STRATA_OK)
        fail_msg("integrity: %s", strata_view_errmsg(v));
    static const struct { const char *name; strata_direction dir; } dirs[] = {
        {"OUT", STRATA_OUT}, {"IN", STRATA_IN}};
    for (size_t k = 0; k < 2; k++) {
        size_t rows;
        double *d = degrees_by_algo(v, dirs[k].name, &rows);
        size_t live = 0;
        for (strata_id n = 0; n < NODES; n++) {
            uint64_t want;
            if (strata_node_degree(v, n, dirs[k].dir, STRATA_ANY_TYPE, &want) != STRATA_OK)
                continue;   /* deleted */
            live++;
            assert_int_equal((uint64_t)d[n], want);
        }
        assert_int_equal(rows, live);
        free(d);
    }
}

static void check_graph(strata_graph *g)
{
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    check_view(v);
    strata_view_release(&v);
}

/* One random write; ids that no longer exist make it fail, which is part
   of the test (a failed write changes nothing). */
static void random_write(strata_graph *g, uint64_t *seed, strata_token *types)
{
    strata_id a = rng(seed) % NODES, b = rng(seed) % NODES, id;
    switch (rng(seed) % 8) {
    case 0:
        (void)strata_node_detach_delete(g, a);
        break;
    case 1:
        (void)strata_rel_delete(g, rng(seed) % (4 * NODES));
        break;
    case 2:
        b = a % 3;   /* hubs: nodes 0..2 collect relationships and become trees */
        /* fall through */
    default:
        (void)strata_rel_create(g, a, rng(seed) % 5 == 0 ? a : b, types[rng(seed) % 2], &id);
    }
}

static void test_kept_degrees_follow_every_write(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token types[2];
    OK(g, strata_token_intern(g, STRATA_RELTYPE, "R", &types[0]));
    OK(g, strata_token_intern(g, STRATA_RELTYPE, "S", &types[1]));
    for (int i = 0; i < NODES; i++) {
        strata_id id;
        OK(g, strata_node_create(g, NULL, 0, &id));
    }
    strata_view *held[VIEWS] = {0};
    uint64_t seed = 42;
    for (int step = 0; step < STEPS; step++) {
        int kind = (int)(rng(&seed) % 4);
        if (kind == 0) {
            /* A transaction of several writes, kept or rolled back. */
            OK(g, strata_begin(g));
            for (int k = 0; k < 6; k++)
                random_write(g, &seed, types);
            OK(g, rng(&seed) % 2 ? strata_commit(g) : strata_rollback(g));
        } else if (kind == 1) {
            OK(g, strata_statement_begin(g));
            for (int k = 0; k < 4; k++)
                random_write(g, &seed, types);
            OK(g, strata_statement_end(g, rng(&seed) % 2 == 0));
        } else {
            random_write(g, &seed, types);
        }
        int slot = (int)(rng(&seed) % VIEWS);
        if (rng(&seed) % 3 == 0) {
            strata_view_release(&held[slot]);
            OK(g, strata_snapshot(g, &held[slot]));
        }
        check_graph(g);
        for (int k = 0; k < VIEWS; k++)
            if (held[k])
                check_view(held[k]);
    }
    for (int k = 0; k < VIEWS; k++)
        strata_view_release(&held[k]);

    /* Saved and loaded: the counts are rebuilt from the loaded blocks. */
    const char *path = tmp_path("g.strata");
    OK(g, strata_save(g, path));
    strata_graph *h = NULL;
    assert_int_equal(strata_load(path, &h), STRATA_OK);
    check_graph(h);
    strata_graph_free(&h);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_degrees_follow_every_write),
    };
    return cmocka_run_group_tests(tests, make_dir, tmp_dir_remove);
}
