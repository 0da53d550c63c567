/*
 * triangles — triangles at each node and the local clustering coefficient.
 *
 * On the simple undirected graph (direction ignored, self-loops and
 * parallel relationships dropped): each triangle is found once, from its
 * lowest-ranked corner, by orienting every edge from the lower to the
 * higher rank (rank: degree, then index) and intersecting sorted
 * out-lists, so a node of degree d costs O(d * sqrt(m)) at most and the
 * whole count O(m sqrt(m)).  The three corners' counters are incremented
 * atomically; integer sums do not depend on the order, so any thread count
 * gives the same counts.
 *
 *   coefficient(v) = 2 T(v) / (d(v) (d(v) - 1)), 0 when d(v) < 2
 */
#include <stdlib.h>

#include "algo/algo.h"

typedef struct triangle_job {
    const algo_graph *s;     /* simple, sorted neighbour lists */
    uint64_t *count;         /* per node, incremented atomically */
} triangle_job;

static bool ranks_below(const algo_graph *s, uint32_t a, uint32_t b)
{
    uint64_t da = s->off[a + 1] - s->off[a], db = s->off[b + 1] - s->off[b];
    return da < db || (da == db && a < b);
}

static void triangle_chunk(void *arg, size_t chunk, int worker)
{
    (void)worker;
    triangle_job *j = arg;
    const algo_graph *s = j->s;
    size_t end = (chunk + 1) * ALGO_CHUNK < s->n ? (chunk + 1) * ALGO_CHUNK : s->n;
    for (size_t u = chunk * ALGO_CHUNK; u < end; u++) {
        for (uint64_t a = s->off[u]; a < s->off[u + 1]; a++) {
            uint32_t v = s->adj[a];
            if (!ranks_below(s, (uint32_t)u, v))
                continue;
            /* w above v in rank and adjacent to both: merge the sorted
               lists of u and v */
            uint64_t p = s->off[u], q = s->off[v];
            while (p < s->off[u + 1] && q < s->off[v + 1]) {
                uint32_t x = s->adj[p], y = s->adj[q];
                if (x < y) {
                    p++;
                } else if (y < x) {
                    q++;
                } else {
                    if (ranks_below(s, v, x)) {
                        __atomic_fetch_add(&j->count[u], 1, __ATOMIC_RELAXED);
                        __atomic_fetch_add(&j->count[v], 1, __ATOMIC_RELAXED);
                        __atomic_fetch_add(&j->count[x], 1, __ATOMIC_RELAXED);
                    }
                    p++;
                    q++;
                }
            }
        }
    }
}

algo_status algo_triangles(algo_ctx *c, algo_table *t)
{
    algo_graph gr, s = {0};
    if (algo_graph_build(c, CSR_UNDIRECTED, &gr) != ALGO_OK)
        return c->status;
    uint64_t *count = NULL;
    if (algo_graph_simple(c, &gr, &s) == ALGO_OK &&
        (count = algo_calloc(c, gr.n, sizeof *count)) &&
        algo_table_init(c, t, 2, gr.n) == ALGO_OK) {
        triangle_job j = {&s, count};
        if (algo_parallel(c, algo_nchunks(s.n), triangle_chunk, &j) == ALGO_OK) {
            for (size_t v = 0; v < s.n; v++) {
                double d = (double)(s.off[v + 1] - s.off[v]);
                double row[2] = {(double)count[v], d < 2 ? 0 : 2.0 * (double)count[v] / (d * (d - 1))};
                if (algo_table_push(c, t, s.ids[v], row) != ALGO_OK)
                    break;
            }
        }
    }
    algo_free(c, count, gr.n, sizeof *count);
    algo_graph_free(c, &s);
    algo_graph_free(c, &gr);
    return c->status;
}
