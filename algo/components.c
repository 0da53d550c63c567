/*
 * components — weakly and strongly connected components, k-core.
 *
 * A component is named by the smallest node id in it, so the answer does
 * not depend on the order of the work (nor on the thread count).
 *
 * wcc    union-find over the relationships, direction ignored (each read
 *        once, from its start node's row); union by the smaller root,
 *        path halving.  O(n + m alpha(n)).
 * scc    Tarjan's algorithm, iterative (an explicit stack of (node, next
 *        edge) frames: no recursion depth to overflow), over the configured
 *        direction.  O(n + m).
 * kcore  Batagelj and Zaversnik's bucket algorithm on the simple
 *        undirected graph (self-loops and parallel relationships dropped,
 *        direction ignored): a node's core number is the largest k such
 *        that it belongs to a subgraph where every node has degree >= k.
 *        O(n + m).
 */
#include <string.h>

#include "algo/algo.h"

/* ---- weakly connected components ---- */

static uint32_t find_root(uint32_t *parent, uint32_t v)
{
    while (parent[v] != v) {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    return v;
}

algo_status algo_wcc(algo_ctx *c, algo_table *t)
{
    algo_graph gr;
    if (algo_graph_build(c, CSR_ONCE, &gr) != ALGO_OK)
        return c->status;
    uint32_t *parent = algo_alloc(c, gr.n, sizeof *parent);
    double *comp = parent ? algo_alloc(c, gr.n, sizeof *comp) : NULL;
    if (comp) {
        for (size_t i = 0; i < gr.n; i++)
            parent[i] = (uint32_t)i;
        for (size_t v = 0; v < gr.n && c->status == ALGO_OK; v++) {
            for (uint64_t k = gr.off[v]; k < gr.off[v + 1]; k++) {
                uint32_t a = find_root(parent, (uint32_t)v), b = find_root(parent, gr.adj[k]);
                if (a < b)
                    parent[b] = a;
                else if (b < a)
                    parent[a] = b;
            }
            if (v % ALGO_INTERRUPT_STRIDE == 0)
                algo_check_interrupt(c);
        }
        for (size_t i = 0; i < gr.n; i++)
            comp[i] = (double)gr.ids[find_root(parent, (uint32_t)i)];
        if (c->status == ALGO_OK && algo_table_init(c, t, 1, gr.n) == ALGO_OK)
            algo_table_column(c, t, &gr, comp);
    }
    algo_free(c, comp, gr.n, sizeof *comp);
    algo_free(c, parent, gr.n, sizeof *parent);
    algo_graph_free(c, &gr);
    return c->status;
}

/* ---- strongly connected components ---- */

typedef struct tarjan {
    const algo_graph *gr;
    uint32_t *index, *low;      /* UINT32_MAX: not visited */
    bool *on_stack;
    uint32_t *stack;            /* Tarjan's node stack */
    size_t sp;
    uint32_t *frame_node;       /* the explicit call stack */
    uint64_t *frame_edge;
    size_t fp;
    uint32_t next_index;
    double *comp;
} tarjan;

static void pop_component(tarjan *tj, uint32_t root)
{
    size_t start = tj->sp;
    uint32_t smallest = root;
    do {
        start--;
        if (tj->stack[start] < smallest)
            smallest = tj->stack[start];
    } while (tj->stack[start] != root);
    for (size_t i = start; i < tj->sp; i++) {
        tj->on_stack[tj->stack[i]] = false;
        tj->comp[tj->stack[i]] = (double)tj->gr->ids[smallest];
    }
    tj->sp = start;
}

static void visit(tarjan *tj, uint32_t v)
{
    tj->index[v] = tj->low[v] = tj->next_index++;
    tj->stack[tj->sp++] = v;
    tj->on_stack[v] = true;
    tj->frame_node[tj->fp] = v;
    tj->frame_edge[tj->fp++] = tj->gr->off[v];
}

static void strongconnect(tarjan *tj, uint32_t start)
{
    const algo_graph *gr = tj->gr;
    visit(tj, start);
    while (tj->fp > 0) {
        uint32_t v = tj->frame_node[tj->fp - 1];
        uint64_t *k = &tj->frame_edge[tj->fp - 1];
        if (*k < gr->off[v + 1]) {
            uint32_t w = gr->adj[(*k)++];
            if (tj->index[w] == UINT32_MAX)
                visit(tj, w);
            else if (tj->on_stack[w] && tj->index[w] < tj->low[v])
                tj->low[v] = tj->index[w];
            continue;
        }
        tj->fp--;
        if (tj->low[v] == tj->index[v])
            pop_component(tj, v);
        if (tj->fp > 0) {
            uint32_t parent = tj->frame_node[tj->fp - 1];
            if (tj->low[v] < tj->low[parent])
                tj->low[parent] = tj->low[v];
        }
    }
}

algo_status algo_scc(algo_ctx *c, algo_table *t)
{
    algo_graph gr;
    if (algo_graph_build(c, 0, &gr) != ALGO_OK)
        return c->status;
    size_t n = gr.n;
    tarjan tj = {.gr = &gr};
    bool ok = (tj.index = algo_alloc(c, n, sizeof *tj.index)) &&
              (tj.low = algo_alloc(c, n, sizeof *tj.low)) &&
              (tj.on_stack = algo_calloc(c, n, sizeof *tj.on_stack)) &&
              (tj.stack = algo_alloc(c, n, sizeof *tj.stack)) &&
              (tj.frame_node = algo_alloc(c, n, sizeof *tj.frame_node)) &&
              (tj.frame_edge = algo_alloc(c, n, sizeof *tj.frame_edge)) &&
              (tj.comp = algo_alloc(c, n, sizeof *tj.comp));
    if (ok) {
        memset(tj.index, 0xff, n * sizeof *tj.index);
        for (size_t v = 0; v < n && c->status == ALGO_OK; v++) {
            if (tj.index[v] == UINT32_MAX)
                strongconnect(&tj, (uint32_t)v);
            if (v % ALGO_INTERRUPT_STRIDE == 0)
                algo_check_interrupt(c);
        }
        if (c->status == ALGO_OK && algo_table_init(c, t, 1, n) == ALGO_OK)
            algo_table_column(c, t, &gr, tj.comp);
    }
    algo_free(c, tj.comp, n, sizeof *tj.comp);
    algo_free(c, tj.frame_edge, n, sizeof *tj.frame_edge);
    algo_free(c, tj.frame_node, n, sizeof *tj.frame_node);
    algo_free(c, tj.stack, n, sizeof *tj.stack);
    algo_free(c, tj.on_stack, n, sizeof *tj.on_stack);
    algo_free(c, tj.low, n, sizeof *tj.low);
    algo_free(c, tj.index, n, sizeof *tj.index);
    algo_graph_free(c, &gr);
    return c->status;
}

/* ---- k-core ---- */

/* A node's degree and its place in vert, side by side: the peeling reads
   both for every neighbour it lowers, so one cache line serves both. */
typedef struct core_node {
    uint32_t deg, pos;
} core_node;

/* Rows are visited in peeling order, so each row's first entry is a miss:
   the offsets of the node CORE_AHEAD_OFF places on and the row of the one
   CORE_AHEAD_ROW places on are asked for early.  vert may still change
   there (a hint only).  About 9% less CPU on 1M nodes / 10M relationships
   (bench/algo --only kcore --repeat 8, interleaved with and without). */
#define CORE_AHEAD_OFF 16
#define CORE_AHEAD_ROW 8

static inline void core_prefetch(const algo_graph *s, const uint32_t *vert, size_t i)
{
    if (i + CORE_AHEAD_OFF < s->n)
        __builtin_prefetch(&s->off[vert[i + CORE_AHEAD_OFF]]);
    if (i + CORE_AHEAD_ROW < s->n)
        __builtin_prefetch(&s->adj[s->off[vert[i + CORE_AHEAD_ROW]]]);
}

/* Batagelj-Zaversnik: nodes sorted by degree in buckets; take the lowest,
   fix its core, lower its unprocessed neighbours' degrees by one (moving
   each to the front of its bucket's range). */
static void core_numbers(const algo_graph *s, core_node *node, uint32_t *bin, uint32_t *vert,
                         uint32_t maxdeg)
{
    size_t n = s->n;
    memset(bin, 0, (maxdeg + 1) * sizeof *bin);
    for (size_t v = 0; v < n; v++)
        bin[node[v].deg]++;
    uint32_t start = 0;
    for (uint32_t d = 0; d <= maxdeg; d++) {
        uint32_t num = bin[d];
        bin[d] = start;
        start += num;
    }
    for (size_t v = 0; v < n; v++) {
        node[v].pos = bin[node[v].deg]++;
        vert[node[v].pos] = (uint32_t)v;
    }
    for (uint32_t d = maxdeg; d > 0; d--)
        bin[d] = bin[d - 1];
    bin[0] = 0;
    for (size_t i = 0; i < n; i++) {
        core_prefetch(s, vert, i);
        uint32_t v = vert[i], dv = node[v].deg;
        for (uint64_t k = s->off[v]; k < s->off[v + 1]; k++) {
            uint32_t u = s->adj[k], du = node[u].deg;
            if (du > dv) {
                uint32_t pu = node[u].pos, pw = bin[du], w = vert[pw];
                if (u != w) {
                    node[u].pos = pw;
                    vert[pu] = w;
                    node[w].pos = pu;
                    vert[pw] = u;
                }
                bin[du]++;
                node[u].deg = du - 1;
            }
        }
    }
}

algo_status algo_kcore(algo_ctx *c, algo_table *t)
{
    algo_graph s;
    if (algo_graph_build(c, CSR_SIMPLE, &s) != ALGO_OK)
        return c->status;
    size_t n = s.n;
    core_node *node = NULL;
    uint32_t *bin = NULL, *vert = NULL;
    double *core = NULL;
    uint32_t maxdeg = 0;
    if ((node = algo_alloc(c, n, sizeof *node))) {
        for (size_t v = 0; v < n; v++) {
            node[v].deg = (uint32_t)(s.off[v + 1] - s.off[v]);
            if (node[v].deg > maxdeg)
                maxdeg = node[v].deg;
        }
        if ((bin = algo_alloc(c, (size_t)maxdeg + 1, sizeof *bin)) &&
            (vert = algo_alloc(c, n, sizeof *vert)) &&
            (core = algo_alloc(c, n, sizeof *core)) && algo_check_interrupt(c) == ALGO_OK) {
            core_numbers(&s, node, bin, vert, maxdeg);
            for (size_t v = 0; v < n; v++)
                core[v] = node[v].deg;
            if (algo_table_init(c, t, 1, n) == ALGO_OK)
                algo_table_column(c, t, &s, core);
        }
    }
    algo_free(c, core, n, sizeof *core);
    algo_free(c, vert, n, sizeof *vert);
    algo_free(c, bin, (size_t)maxdeg + 1, sizeof *bin);
    algo_free(c, node, n, sizeof *node);
    algo_graph_free(c, &s);
    return c->status;
}
