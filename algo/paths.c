/*
 * paths — breadth-first search and Dijkstra's shortest paths.
 *
 * bfs       hops from the source to every node it reaches in the
 *           configured direction, one row per reached node in the order
 *           reached.  O(n + m).
 * dijkstra  weighted distances from the source (weights from the
 *           `weight` property, 1 where a relationship has none; a
 *           negative weight is an ArgumentError), one row per reached node
 *           in the order settled.  With a target: the rows are the nodes of
 *           one shortest path from source to target, in order, each with
 *           its distance from the source (no rows when the target is not
 *           reachable).  A binary heap with lazy deletion: O((n + m) log m).
 */
#include <math.h>

#include "algo/algo.h"

static algo_status source_index(algo_ctx *c, const algo_graph *gr, strata_id id, const char *key,
                                uint32_t *out)
{
    int64_t at = algo_graph_index(gr, id);
    if (at < 0)
        return algo_fail(c, ALGO_ARGUMENT, "%s: node %llu is not among the selected labels", key,
                         (unsigned long long)id);
    *out = (uint32_t)at;
    return ALGO_OK;
}

algo_status algo_bfs(algo_ctx *c, algo_table *t)
{
    algo_graph gr;
    if (algo_graph_build(c, 0, &gr) != ALGO_OK)
        return c->status;
    uint32_t s = 0;
    int64_t *dist = NULL;
    uint32_t *queue = NULL;
    if (source_index(c, &gr, c->cfg->sources[0], "source", &s) == ALGO_OK &&
        (dist = algo_alloc(c, gr.n, sizeof *dist)) &&
        (queue = algo_alloc(c, gr.n, sizeof *queue)) &&
        algo_table_init(c, t, 1, gr.n) == ALGO_OK) {
        for (size_t i = 0; i < gr.n; i++)
            dist[i] = -1;
        size_t head = 0, tail = 0;
        dist[s] = 0;
        queue[tail++] = s;
        while (head < tail && c->status == ALGO_OK) {
            uint32_t v = queue[head++];
            double d = (double)dist[v];
            algo_table_push(c, t, gr.ids[v], &d);
            for (uint64_t k = gr.off[v]; k < gr.off[v + 1]; k++)
                if (dist[gr.adj[k]] < 0) {
                    dist[gr.adj[k]] = dist[v] + 1;
                    queue[tail++] = gr.adj[k];
                }
            if (head % ALGO_INTERRUPT_STRIDE == 0)
                algo_check_interrupt(c);
        }
    }
    algo_free(c, queue, gr.n, sizeof *queue);
    algo_free(c, dist, gr.n, sizeof *dist);
    algo_graph_free(c, &gr);
    return c->status;
}

typedef struct heap_entry {
    double dist;
    uint32_t node;
} heap_entry;

static void heap_push(heap_entry *h, size_t *n, heap_entry e)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].dist > e.dist) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static heap_entry heap_pop(heap_entry *h, size_t *n)
{
    heap_entry top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= *n)
            break;
        if (child + 1 < *n && h[child + 1].dist < h[child].dist)
            child++;
        if (h[child].dist >= last.dist)
            break;
        h[i] = h[child];
        i = child;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

static algo_status check_weights(algo_ctx *c, const algo_graph *gr)
{
    if (!gr->w)
        return ALGO_OK;
    for (size_t v = 0; v < gr->n; v++)
        for (uint64_t k = gr->off[v]; k < gr->off[v + 1]; k++)
            if (gr->w[k] < 0)
                return algo_fail(c, ALGO_ARGUMENT,
                                 "a relationship between nodes %llu and %llu has the negative "
                                 "weight %g; Dijkstra needs weights >= 0",
                                 (unsigned long long)gr->ids[v],
                                 (unsigned long long)gr->ids[gr->adj[k]], gr->w[k]);
    return ALGO_OK;
}

typedef struct dijkstra_state {
    double *dist;            /* INFINITY: not reached */
    uint32_t *pred;          /* UINT32_MAX: none */
    bool *done;
    heap_entry *heap;
    size_t nheap;
} dijkstra_state;

/* Settles nodes from s until the heap is empty or target (if not
   UINT32_MAX) is settled; emits each settled node when t is given. */
static algo_status settle(algo_ctx *c, const algo_graph *gr, dijkstra_state *d, uint32_t s,
                          uint32_t target, algo_table *t)
{
    for (size_t i = 0; i < gr->n; i++) {
        d->dist[i] = INFINITY;
        d->pred[i] = UINT32_MAX;
    }
    d->dist[s] = 0;
    heap_push(d->heap, &d->nheap, (heap_entry){0, s});
    size_t steps = 0;
    while (d->nheap > 0) {
        heap_entry e = heap_pop(d->heap, &d->nheap);
        if (d->done[e.node])
            continue;
        d->done[e.node] = true;
        if (t && algo_table_push(c, t, gr->ids[e.node], &e.dist) != ALGO_OK)
            return c->status;
        if (e.node == target)
            break;
        for (uint64_t k = gr->off[e.node]; k < gr->off[e.node + 1]; k++) {
            uint32_t w = gr->adj[k];
            double nd = e.dist + (gr->w ? gr->w[k] : 1.0);
            if (nd < d->dist[w]) {
                d->dist[w] = nd;
                d->pred[w] = e.node;
                heap_push(d->heap, &d->nheap, (heap_entry){nd, w});
            }
        }
        if (++steps % ALGO_INTERRUPT_STRIDE == 0 && algo_check_interrupt(c) != ALGO_OK)
            return c->status;
    }
    return ALGO_OK;
}

/* The path to target, source first, from the predecessors. */
static algo_status emit_path(algo_ctx *c, const algo_graph *gr, const dijkstra_state *d,
                             uint32_t target, algo_table *t)
{
    if (d->dist[target] == INFINITY)
        return ALGO_OK;
    size_t len = 0;
    for (uint32_t v = target; v != UINT32_MAX; v = d->pred[v])
        len++;
    /* filled from the end: the table has room for every node */
    t->nrows = len;
    size_t i = len;
    for (uint32_t v = target; v != UINT32_MAX; v = d->pred[v]) {
        i--;
        t->nodes[i] = gr->ids[v];
        t->cells[i] = d->dist[v];
    }
    (void)c;
    return ALGO_OK;
}

algo_status algo_dijkstra(algo_ctx *c, algo_table *t)
{
    algo_graph gr;
    if (algo_graph_build(c, CSR_WEIGHTS, &gr) != ALGO_OK)
        return c->status;
    uint32_t s = 0, target = UINT32_MAX;
    dijkstra_state d = {0};
    if (check_weights(c, &gr) == ALGO_OK &&
        source_index(c, &gr, c->cfg->sources[0], "source", &s) == ALGO_OK &&
        (!c->cfg->has_target ||
         source_index(c, &gr, c->cfg->target, "target", &target) == ALGO_OK) &&
        (d.dist = algo_alloc(c, gr.n, sizeof *d.dist)) &&
        (d.pred = algo_alloc(c, gr.n, sizeof *d.pred)) &&
        (d.done = algo_calloc(c, gr.n, sizeof *d.done)) &&
        (d.heap = algo_alloc(c, gr.m + 1, sizeof *d.heap)) &&
        algo_table_init(c, t, 1, gr.n) == ALGO_OK &&
        settle(c, &gr, &d, s, target, c->cfg->has_target ? NULL : t) == ALGO_OK &&
        c->cfg->has_target)
        emit_path(c, &gr, &d, target, t);
    algo_free(c, d.heap, gr.m + 1, sizeof *d.heap);
    algo_free(c, d.done, gr.n, sizeof *d.done);
    algo_free(c, d.pred, gr.n, sizeof *d.pred);
    algo_free(c, d.dist, gr.n, sizeof *d.dist);
    algo_graph_free(c, &gr);
    return c->status;
}
