/* The two shortcuts the adjacency build takes (algo/csr.c):
   - unweighted degree counts each row from the blocks' segment directories
     and never fills it: it must equal the degree counted through the
     public API and the weighted degree when every weight is 1 (which fills
     the rows and sums them), for every direction,
     type list and label selection, on graphs with self-loops, parallel
     relationships and deleted nodes;
   - simple rows (k-core, triangles) drop repeats with a per-worker stamp
     array instead of sorting: k-core and triangle counts must equal a
     brute-force computation on the same simple graph, on 1 and 2 threads.
   And every allocation failure of both is ENOMEM with nothing leaked. */
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

/* 3000 nodes (more than one chunk of work per thread), every third one
   labelled A; relationships of types R and S with a few hubs, self-loops
   and parallel pairs; weight w = 1 on each; then, with holes, every 97th
   node deleted with its relationships.  Without holes every id is
   selected and the count reads segment directories only; with them, ids
   map to dense indices. */
enum { NODES = 3000 };

static strata_graph *test_graph(size_t m, uint64_t seed, bool holes)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token a, r, s, w;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "A", &a), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "R", &r), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "S", &s), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "w", &w), STRATA_OK);
    for (size_t i = 0; i < NODES; i++) {
        strata_id id;
        assert_int_equal(strata_node_create(g, &a, i % 3 == 0, &id), STRATA_OK);
    }
    strata_value *one = strata_value_int(1);
    for (size_t i = 0; i < m; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        strata_id from = (seed >> 33) % NODES, to = (seed >> 13) % NODES, rel;
        if (i % 5 == 0)
            to %= 11;      /* hubs */
        if (i % 41 == 0)
            to = from;     /* self-loops */
        for (int copies = i % 13 == 0 ? 2 : 1; copies > 0; copies--) {   /* parallel pairs */
            assert_int_equal(strata_rel_create(g, from, to, i % 4 ? r : s, &rel), STRATA_OK);
            assert_int_equal(strata_rel_set(g, rel, w, one), STRATA_OK);
        }
    }
    strata_value_free(&one);
    for (strata_id id = 5; holes && id < NODES; id += 97)
        assert_int_equal(strata_node_detach_delete(g, id), STRATA_OK);
    return g;
}

static strata_value *string_list(const char *const *items, size_t n)
{
    strata_value *vals[2] = {NULL, NULL};
    assert_true(n <= 2);
    for (size_t i = 0; i < n; i++)
        vals[i] = strata_value_string(items[i], strlen(items[i]));
    strata_value *l = strata_value_list((const strata_value *const *)vals, n);
    for (size_t i = 0; i < n; i++)
        strata_value_free(&vals[i]);
    assert_non_null(l);
    return l;
}

typedef struct selection {
    const char *direction;   /* NULL: the default */
    const char *types[2];
    size_t ntypes;           /* 0: every type */
    bool labelled;           /* labels: ['A'] */
} selection;

static const selection selections[] = {
    {NULL, {0}, 0, false},
    {"IN", {0}, 0, false},
    {"BOTH", {0}, 0, false},
    {"OUT", {"R"}, 1, false},
    {"BOTH", {"S"}, 1, false},
    {"IN", {"S", "R"}, 2, false},
    {"BOTH", {0}, 0, true},
    {"OUT", {"R"}, 1, true},
    {"IN", {0}, 0, true},
};

static strata_value *selection_config(const selection *sel, const char *weight, int threads)
{
    const char *keys[5];
    strata_value *vals[5];
    size_t k = 0;
    keys[k] = "threads";
    vals[k++] = strata_value_int(threads);
    if (sel->direction) {
        keys[k] = "direction";
        vals[k++] = strata_value_string(sel->direction, strlen(sel->direction));
    }
    if (sel->ntypes) {
        keys[k] = "types";
        vals[k++] = string_list(sel->types, sel->ntypes);
    }
    if (sel->labelled) {
        const char *a = "A";
        keys[k] = "labels";
        vals[k++] = string_list(&a, 1);
    }
    if (weight) {
        keys[k] = "weight";
        vals[k++] = strata_value_string(weight, strlen(weight));
    }
    strata_value *m = strata_value_map(keys, (const strata_value *const *)vals, k);
    for (size_t i = 0; i < k; i++)
        strata_value_free(&vals[i]);
    assert_non_null(m);
    return m;
}

static strata_algo_result *run(strata_view *v, const char *name, strata_value *cfg)
{
    strata_algo_result *r = NULL;
    strata_status s = strata_algo_run(v, name, cfg, &r);
    if (s != STRATA_OK)
        fail_msg("%s: %s", name, strata_view_errmsg(v));
    strata_value_free(&cfg);
    return r;
}

static void assert_same_rows(strata_algo_result *a, strata_algo_result *b)
{
    size_t rows = strata_algo_result_rows(a);
    assert_int_equal(rows, strata_algo_result_rows(b));
    assert_memory_equal(strata_algo_result_nodes(a), strata_algo_result_nodes(b),
                        rows * sizeof(strata_id));
    assert_memory_equal(strata_algo_result_values(a), strata_algo_result_values(b),
                        rows * sizeof(double));
}

/* Whether node id is selected by sel. */
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

/* The degree of a selected node, through the public API: relationships
   of the wanted types and directions whose other end is selected (a
   self-loop once per direction). */
static double api_degree(strata_view *v, const selection *sel, strata_id id)
{
    const char *dir = sel->direction ? sel->direction : "OUT";
    strata_token types[2];
    size_t ntypes = sel->ntypes;
    for (size_t t = 0; t < ntypes; t++)
        assert_int_equal(strata_token_lookup(v, STRATA_RELTYPE, sel->types[t], &types[t]),
                         STRATA_OK);
    double d = 0;
    for (int k = 0; k < 2; k++) {
        strata_direction want = k == 0 ? STRATA_OUT : STRATA_IN;
        if (strcmp(dir, "BOTH") != 0 && strcmp(dir, k == 0 ? "OUT" : "IN") != 0)
            continue;
        for (size_t t = 0; t < (ntypes ? ntypes : 1); t++) {
            strata_edge_iter *it;
            assert_int_equal(
                strata_neighbours(v, id, want, ntypes ? types[t] : STRATA_ANY_TYPE, &it),
                STRATA_OK);
            strata_id rel, other;
            while (strata_edge_iter_next(it, &rel, &other))
                d += selected(v, sel, other);
            strata_edge_iter_free(&it);
        }
    }
    return d;
}

static void check_degrees(strata_graph *g)
{
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    for (size_t i = 0; i < sizeof selections / sizeof *selections; i++) {
        const selection *sel = &selections[i];
        strata_algo_result *summed = run(v, "degree", selection_config(sel, "w", 1));
        size_t rows = 0;
        for (strata_id id = 0; id < NODES; id++)
            if (selected(v, sel, id)) {
                assert_true(rows < strata_algo_result_rows(summed));
                assert_int_equal(strata_algo_result_nodes(summed)[rows], id);
                assert_true(strata_algo_result_values(summed)[rows] == api_degree(v, sel, id));
                rows++;
            }
        assert_int_equal(rows, strata_algo_result_rows(summed));
        double total = 0;
        for (size_t k = 0; k < strata_algo_result_rows(summed); k++)
            total += strata_algo_result_values(summed)[k];
        assert_true(total > 0);
        for (int threads = 1; threads <= 2; threads++) {
            strata_algo_result *counted = run(v, "degree", selection_config(sel, NULL, threads));
            assert_same_rows(summed, counted);
            strata_algo_result_free(&counted);
        }
        /* a weight key no relationship has: every weight 1, counted too */
        strata_algo_result *absent = run(v, "degree", selection_config(sel, "nope", 2));
        assert_same_rows(summed, absent);
        strata_algo_result_free(&absent);
        strata_algo_result_free(&summed);
    }
    strata_view_release(&v);
}

static void test_degree_counted_equals_summed(void **state)
{
    (void)state;
    for (int holes = 0; holes <= 1; holes++) {
        strata_graph *g = test_graph(12000, 1, holes);
        check_degrees(g);
        strata_graph_free(&g);
    }
}

/* ---- brute force on the simple undirected graph ---- */

typedef struct simple_graph {
    size_t n;                /* ids 0..n-1; live[] says which are selected */
    bool live[NODES];
    uint8_t *adj;            /* n * n: 1 when an edge joins the two */
} simple_graph;

static void simple_from_view(strata_graph *g, bool labelled, simple_graph *s)
{
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    strata_token a;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "A", &a), STRATA_OK);
    s->n = NODES;
    s->adj = calloc((size_t)NODES * NODES, 1);
    assert_non_null(s->adj);
    for (strata_id id = 0; id < NODES; id++) {
        bool has = false;
        s->live[id] = strata_node_exists(v, id);
        if (s->live[id] && labelled) {
            assert_int_equal(strata_node_has_label(v, id, a, &has), STRATA_OK);
            s->live[id] = has;
        }
    }
    for (strata_id id = 0; id < NODES; id++) {
        if (!s->live[id])
            continue;
        strata_edge_iter *it;
        assert_int_equal(strata_neighbours(v, id, STRATA_OUT, STRATA_ANY_TYPE, &it), STRATA_OK);
        strata_id rel, other;
        while (strata_edge_iter_next(it, &rel, &other))
            if (other != id && s->live[other])
                s->adj[id * NODES + other] = s->adj[other * NODES + id] = 1;
        strata_edge_iter_free(&it);
    }
    strata_view_release(&v);
}

/* Core numbers by repeatedly removing a node of least remaining degree. */
static void brute_cores(const simple_graph *s, uint32_t *core)
{
    uint32_t *deg = calloc(s->n, sizeof *deg);
    bool *gone = calloc(s->n, sizeof *gone);
    assert_true(deg && gone);
    size_t left = 0;
    for (size_t u = 0; u < s->n; u++) {
        gone[u] = !s->live[u];
        left += s->live[u];
        for (size_t x = 0; x < s->n; x++)
            deg[u] += s->adj[u * s->n + x];
    }
    uint32_t k = 0;
    for (; left > 0; left--) {
        size_t best = SIZE_MAX;
        for (size_t u = 0; u < s->n; u++)
            if (!gone[u] && (best == SIZE_MAX || deg[u] < deg[best]))
                best = u;
        if (deg[best] > k)
            k = deg[best];
        core[best] = k;
        gone[best] = true;
        for (size_t x = 0; x < s->n; x++)
            if (s->adj[best * s->n + x] && !gone[x])
                deg[x]--;
    }
    free(deg);
    free(gone);
}

static void brute_triangles(const simple_graph *s, uint64_t *tri)
{
    memset(tri, 0, s->n * sizeof *tri);
    for (size_t u = 0; u < s->n; u++)
        for (size_t v = u + 1; v < s->n; v++) {
            if (!s->adj[u * s->n + v])
                continue;
            for (size_t w = v + 1; w < s->n; w++)
                if (s->adj[u * s->n + w] && s->adj[v * s->n + w]) {
                    tri[u]++;
                    tri[v]++;
                    tri[w]++;
                }
        }
}

static void check_simple_rows(strata_graph *g)
{
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    static const selection all = {NULL, {0}, 0, false}, labelled = {NULL, {0}, 0, true};
    const selection *sels[] = {&all, &labelled};
    uint32_t *core = malloc(NODES * sizeof *core);
    uint64_t *tri = malloc(NODES * sizeof *tri);
    assert_true(core && tri);
    for (size_t i = 0; i < 2; i++) {
        simple_graph s;
        simple_from_view(g, sels[i]->labelled, &s);
        brute_cores(&s, core);
        brute_triangles(&s, tri);
        uint64_t closed = 0;
        for (int threads = 1; threads <= 2; threads++) {
            strata_algo_result *k = run(v, "kcore", selection_config(sels[i], NULL, threads));
            strata_algo_result *t = run(v, "triangles", selection_config(sels[i], NULL, threads));
            size_t rows = strata_algo_result_rows(k);
            assert_int_equal(rows, strata_algo_result_rows(t));
            size_t live = 0;
            for (size_t u = 0; u < NODES; u++)
                live += s.live[u];
            assert_int_equal(rows, live);
            for (size_t r = 0; r < rows; r++) {
                strata_id id = strata_algo_result_nodes(k)[r];
                assert_true(id < NODES && s.live[id]);
                assert_int_equal((uint64_t)strata_algo_result_values(k)[r], core[id]);
                assert_int_equal(strata_algo_result_nodes(t)[r], id);
                assert_int_equal((uint64_t)strata_algo_result_values(t)[2 * r], tri[id]);
                closed += tri[id];
            }
            strata_algo_result_free(&k);
            strata_algo_result_free(&t);
        }
        assert_true(closed > 0);   /* the graph has triangles to find */
        free(s.adj);
    }
    free(core);
    free(tri);
    strata_view_release(&v);
}

static void test_simple_rows_against_brute_force(void **state)
{
    (void)state;
    for (int holes = 0; holes <= 1; holes++) {
        strata_graph *g = test_graph(9000, 2, holes);
        check_simple_rows(g);
        strata_graph_free(&g);
    }
}

/* Fail the 1st, 2nd, ... allocation of each run until it succeeds: every
   failure is ENOMEM with no result and no byte leaked. */
static void test_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g = test_graph(1500, 3, false);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    const char *names[] = {"degree", "kcore", "triangles"};
    static const selection all = {"BOTH", {0}, 0, false}, labelled = {"IN", {"R"}, 1, true};
    const selection *sels[] = {&all, &labelled};
    for (size_t i = 0; i < 3; i++)
        for (size_t sel = 0; sel < 2; sel++) {
            strata_value *cfg = selection_config(sels[sel], NULL, 2);
            size_t base = mem_ctx_bytes(mem_scratch());
            for (long k = 1;; k++) {
                strata_algo_result *r = NULL;
                mem_fail_at(k);
                strata_status s = strata_algo_run(v, names[i], cfg, &r);
                bool failed = mem_fail_count() >= k;
                mem_fail_clear();
                if (failed) {
                    if (s != STRATA_ENOMEM)
                        fail_msg("%s, allocation %ld: status %d (%s)", names[i], k, s,
                                 strata_view_errmsg(v));
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
        cmocka_unit_test(test_degree_counted_equals_summed),
        cmocka_unit_test(test_simple_rows_against_brute_force),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
