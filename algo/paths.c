/*
 * paths — breadth-first search and Dijkstra's shortest paths.
 *
 * bfs       hops from the source to every node it reaches in the
 *           configured direction, one row per reached node in the order
 *           reached.  O(n + m).  Outgoing (the default) it reads each
 *           reached node's adjacency block in place instead of building
 *           rows: one pass over the reached part of the graph instead of
 *           two over all of it and a third over the rows, in the same
 *           order (a row lists a block's out segments as they are
 *           stored).  IN and BOTH build rows, whose order (in entries by
 *           start node) the blocks do not have.
 * dijkstra  weighted distances from the source (weights from the
 *           `weight` property, 1 where a relationship has none; a
 *           negative weight is an ArgumentError), one row per reached node
 *           in the order settled.  With a target: the rows are the nodes of
 *           one shortest path from source to target, in order, each with
 *           its distance from the source (no rows when the target is not
 *           reachable).  A binary heap with lazy deletion: O((n + m) log m).
 */
#include <math.h>
#include <string.h>

#include "algo/algo.h"
#include "core/view_bulk.h"   /* adjacency blocks, read in place */

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

/* ---- bfs over the view's blocks (OUT) ---- */

/* selected[id] for ids below bound when labels are configured; NULL (every
   live node) otherwise. */
static algo_status select_ids(algo_ctx *c, uint64_t bound, uint8_t **selected)
{
    *selected = NULL;
    if (!c->cfg->labels_given)
        return ALGO_OK;
    if (!(*selected = algo_calloc(c, bound, 1)))
        return c->status;
    for (size_t l = 0; l < c->cfg->nlabels; l++) {
        strata_node_iter *it;
        strata_status st = strata_nodes_by_label(c->view, c->cfg->labels[l], &it);
        if (st == STRATA_ENOTFOUND)
            continue;
        if (st != STRATA_OK)
            return algo_oom(c);
        strata_id id;
        while (strata_node_iter_next(it, &id))
            (*selected)[id] = 1;
        strata_node_iter_free(&it);
    }
    return ALGO_OK;
}

static bool type_wanted(const algo_config *cfg, uint32_t type)
{
    if (!cfg->types_given)
        return true;
    for (size_t t = 0; t < cfg->ntypes; t++)
        if (cfg->types[t] == type)
            return true;
    return false;   /* types named but none interned: none wanted */
}

/* Blocks of the queued nodes are looked up and prefetched BFS_AHEAD
   places before they are read (a power of two: the ring's size). */
#define BFS_AHEAD 16

typedef struct bfs_state {
    strata_view *view;
    const algo_config *cfg;
    const uint8_t *selected;  /* or NULL */
    uint32_t *dist;           /* by id; UINT32_MAX: not reached (hops are
                                 below the node count, below ids' bound) */
    uint32_t *queue;          /* ids, in the order reached */
    size_t head, tail, looked;
    const adj_block *ring[BFS_AHEAD];
} bfs_state;

/* The block of queue[head], after looking up (and prefetching) the blocks
   of the queued nodes up to BFS_AHEAD places on. */
static const adj_block *bfs_next_block(bfs_state *b)
{
    for (; b->looked < b->tail && b->looked < b->head + BFS_AHEAD; b->looked++) {
        const adj_block *blk = view_node_adj(b->view, b->queue[b->looked]);
        if (blk)
            __builtin_prefetch(blk);
        b->ring[b->looked % BFS_AHEAD] = blk;
    }
    return b->ring[b->head % BFS_AHEAD];
}

static void bfs_expand(bfs_state *b, const adj_block *blk, uint32_t next)
{
    for (uint32_t s = 0; s < adj_nsegments(blk); s++) {
        int dir;
        uint32_t type;
        adj_segment_info(blk, s, &dir, &type);
        if (dir != ADJ_OUT || !type_wanted(b->cfg, type))
            continue;
        for (adj_run r = adj_run_first(blk, s); r.n; r = adj_run_next(blk, s, r))
            for (uint32_t k = 0; k < r.n; k++) {
                uint32_t x = r.e[k].other;
                if (b->dist[x] == UINT32_MAX && (!b->selected || b->selected[x])) {
                    b->dist[x] = next;
                    b->queue[b->tail++] = x;
                }
            }
    }
}

static algo_status bfs_blocks(algo_ctx *c, algo_table *t)
{
    uint64_t bound = view_node_bound(c->view);
    strata_id source = c->cfg->sources[0];
    bfs_state b = {.view = c->view, .cfg = c->cfg};
    uint8_t *selected = NULL;
    size_t rows = 0;
    if (select_ids(c, bound, &selected) == ALGO_OK) {
        b.selected = selected;
        if (selected && !selected[source])
            algo_fail(c, ALGO_ARGUMENT, "source: node %llu is not among the selected labels",
                      (unsigned long long)source);
        else if ((b.dist = algo_alloc(c, bound, sizeof *b.dist)) &&
                 (b.queue = algo_alloc(c, bound, sizeof *b.queue))) {
            memset(b.dist, 0xff, bound * sizeof *b.dist);   /* UINT32_MAX */
            b.dist[source] = 0;
            b.queue[b.tail++] = (uint32_t)source;
            while (b.head < b.tail && c->status == ALGO_OK) {
                const adj_block *blk = bfs_next_block(&b);
                uint32_t v = b.queue[b.head++];
                if (blk)
                    bfs_expand(&b, blk, b.dist[v] + 1);
                if (b.head % ALGO_INTERRUPT_STRIDE == 0)
                    algo_check_interrupt(c);
            }
            rows = b.tail;
        }
    }
    /* rows in the order reached, sized to them */
    if (c->status == ALGO_OK && algo_table_init(c, t, 1, rows) == ALGO_OK)
        for (size_t i = 0; i < rows; i++) {
            double d = b.dist[b.queue[i]];
            algo_table_push(c, t, b.queue[i], &d);
        }
    algo_free(c, b.queue, bound, sizeof *b.queue);
    algo_free(c, b.dist, bound, sizeof *b.dist);
    algo_free(c, selected, bound, 1);
    return c->status;
}

/* ---- bfs over built rows (IN, BOTH) ---- */

algo_status algo_bfs(algo_ctx *c, algo_table *t)
{
    if (c->cfg->direction == STRATA_OUT)
        return bfs_blocks(c, t);
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
