/*
 * triangles — triangles at each node and the local clustering coefficient.
 *
 * On the simple undirected graph (direction ignored, self-loops and
 * parallel relationships dropped): each triangle is found once, from its
 * lowest-ranked corner, by orienting every edge from the lower to the
 * higher rank (rank: degree, then index) and intersecting upper lists
 * only (intersecting whole lists made every edge at a hub cost the hub's
 * degree: 4x igraph's time on a skewed graph), so an upper list holds
 * O(sqrt(m)) nodes and the whole count is O(m sqrt(m)).  The intersection
 * marks u's list in a per-thread array and reads v's.  The three corners' counters are incremented
 * atomically; integer sums do not depend on the order, so any thread count
 * gives the same counts.
 *
 *   coefficient(v) = 2 T(v) / (d(v) (d(v) - 1)), 0 when d(v) < 2
 */
#include <stdlib.h>

#include "algo/algo.h"

typedef struct triangle_job {
    const uint64_t *off;     /* each node's neighbours of higher rank, */
    const uint32_t *adj;     /* in any order */
    size_t n;
    uint64_t *count;         /* per node, incremented atomically */
    uint8_t *marks;          /* n per worker, all clear between nodes */
} triangle_job;

static bool ranks_below(const algo_graph *s, uint32_t a, uint32_t b)
{
    uint64_t da = s->off[a + 1] - s->off[a], db = s->off[b + 1] - s->off[b];
    return da < db || (da == db && a < b);
}

/* For each u: mark u's upper list, then for each v in it, the marked
   nodes of v's upper list close a triangle u < v < w.  Cheaper than
   merging the two lists per edge: v's list is read, u's is not read again,
   and the test is one load from an array that stays in the cache. */
static void triangle_chunk(void *arg, size_t chunk, int worker)
{
    triangle_job *j = arg;
    uint8_t *mark = j->marks + (size_t)worker * j->n;
    size_t end = (chunk + 1) * ALGO_CHUNK < j->n ? (chunk + 1) * ALGO_CHUNK : j->n;
    for (size_t u = chunk * ALGO_CHUNK; u < end; u++) {
        uint64_t lo = j->off[u], hi = j->off[u + 1];
        if (hi - lo < 2)
            continue;
        for (uint64_t a = lo; a < hi; a++)
            mark[j->adj[a]] = 1;
        uint64_t at_u = 0;
        for (uint64_t a = lo; a < hi; a++) {
            uint32_t v = j->adj[a];
            uint64_t at_v = 0;
            for (uint64_t q = j->off[v]; q < j->off[v + 1]; q++) {
                uint32_t w = j->adj[q];
                if (mark[w]) {
                    at_v++;
                    __atomic_fetch_add(&j->count[w], 1, __ATOMIC_RELAXED);
                }
            }
            if (at_v) {
                at_u += at_v;
                __atomic_fetch_add(&j->count[v], at_v, __ATOMIC_RELAXED);
            }
        }
        if (at_u)
            __atomic_fetch_add(&j->count[u], at_u, __ATOMIC_RELAXED);
        for (uint64_t a = lo; a < hi; a++)
            mark[j->adj[a]] = 0;
    }
}

/* The upper lists: each edge kept at its lower-ranked end. */
static algo_status orient(algo_ctx *c, const algo_graph *s, uint64_t **off, uint32_t **adj)
{
    uint64_t m = s->off[s->n];
    *off = algo_alloc(c, s->n + 1, sizeof **off);
    *adj = *off ? algo_alloc(c, m / 2, sizeof **adj) : NULL;
    if (!*adj) {
        algo_free(c, *off, s->n + 1, sizeof **off);
        *off = NULL;
        return c->status;
    }
    uint64_t at = 0;
    for (size_t u = 0; u < s->n; u++) {
        (*off)[u] = at;
        for (uint64_t k = s->off[u]; k < s->off[u + 1]; k++)
            if (ranks_below(s, (uint32_t)u, s->adj[k]))
                (*adj)[at++] = s->adj[k];
    }
    (*off)[s->n] = at;
    return ALGO_OK;
}

static void count_and_emit(algo_ctx *c, algo_table *t, const algo_graph *s, const uint64_t *off,
                           const uint32_t *adj, uint64_t *count)
{
    size_t threads = (size_t)algo_pool_threads(c->pool);
    triangle_job j = {off, adj, s->n, count, algo_calloc(c, threads * s->n, 1)};
    algo_status st = j.marks ? algo_parallel(c, algo_nchunks(s->n), triangle_chunk, &j) : c->status;
    algo_free(c, j.marks, threads * s->n, 1);
    if (st != ALGO_OK)
        return;
    for (size_t v = 0; v < s->n; v++) {
        double d = (double)(s->off[v + 1] - s->off[v]);
        double row[2] = {(double)count[v], d < 2 ? 0 : 2.0 * (double)count[v] / (d * (d - 1))};
        if (algo_table_push(c, t, s->ids[v], row) != ALGO_OK)
            return;
    }
}

algo_status algo_triangles(algo_ctx *c, algo_table *t)
{
    algo_graph s;
    if (algo_graph_build(c, CSR_SIMPLE, &s) != ALGO_OK)
        return c->status;
    uint64_t *count = NULL, *up_off = NULL;
    uint32_t *up_adj = NULL;
    uint64_t half = s.off[s.n] / 2;
    if (orient(c, &s, &up_off, &up_adj) == ALGO_OK &&
        (count = algo_calloc(c, s.n, sizeof *count)) && algo_table_init(c, t, 2, s.n) == ALGO_OK)
        count_and_emit(c, t, &s, up_off, up_adj, count);
    algo_free(c, count, s.n, sizeof *count);
    if (up_off) {
        algo_free(c, up_adj, half, sizeof *up_adj);
        algo_free(c, up_off, s.n + 1, sizeof *up_off);
    }
    algo_graph_free(c, &s);
    return c->status;
}
