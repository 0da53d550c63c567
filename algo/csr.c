/*
 * csr — a view read once into compact adjacency.
 *
 * Build, in O(selected nodes + their relationships + ids up to the largest
 * selected id):
 *   1. the selected nodes: every node, or the union of the configured
 *      labels' nodes, in id order (dense index = position);
 *   2. an id -> dense index map (an array over ids up to the largest);
 *   3. the relationships leaving each selected node whose type is selected
 *      and whose other end is selected, as an edge list (with weights);
 *   4. counting sort of the edge list into rows by the configured
 *      direction (stable: a row lists its neighbours in relationship
 *      order, so every build of one view is the same), and the transpose
 *      when asked.
 * Reading through strata_neighbours makes a relationship count once from
 * its start node whatever the direction asked, so parallel relationships
 * and self-loops are kept: the graph is a multigraph.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "core/graph_impl.h"   /* strata_value, to read weights without allocating */

typedef struct edge_list {
    uint32_t *src, *dst;
    strata_id *rel;         /* weighted: the relationship, its weight read later */
    double *w;              /* NULL when unweighted */
    size_t n, cap;
    size_t cap_src, cap_dst, cap_rel;   /* each array's size, apart: one may
                                           grow and the next fail */
    strata_id max_rel;
} edge_list;

static int cmp_id(const void *a, const void *b)
{
    strata_id x = *(const strata_id *)a, y = *(const strata_id *)b;
    return x < y ? -1 : x > y;
}

/* Grows *p (n elements of size) to cap elements; false after ALGO_OOM. */
static bool grow(algo_ctx *c, void **p, size_t n, size_t cap, size_t size)
{
    void *q = mem_realloc(c->m, *p, n * size, mem_array_size(cap, size));
    if (!q) {
        algo_oom(c);
        return false;
    }
    *p = q;
    return true;
}

static algo_status drain_nodes(algo_ctx *c, strata_node_iter *it, strata_id **ids, size_t *n,
                               size_t *cap)
{
    strata_id id;
    algo_status s = ALGO_OK;
    while (s == ALGO_OK && strata_node_iter_next(it, &id)) {
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 1024;
            if (!grow(c, (void **)ids, *cap, nc, sizeof **ids))
                s = c->status;
            else
                *cap = nc;
        }
        if (s == ALGO_OK)
            (*ids)[(*n)++] = id;
        if (s == ALGO_OK && (*n % ALGO_INTERRUPT_STRIDE) == 0)
            s = algo_check_interrupt(c);
    }
    strata_node_iter_free(&it);
    return s;
}

static algo_status select_nodes(algo_ctx *c, algo_graph *gr)
{
    const algo_config *cfg = c->cfg;
    size_t n = 0, cap = 0;
    strata_id *ids = NULL;
    algo_status s = ALGO_OK;
    if (!cfg->labels_given) {
        strata_node_iter *it;
        if (strata_nodes(c->view, &it) != STRATA_OK)
            return algo_oom(c);
        s = drain_nodes(c, it, &ids, &n, &cap);
    }
    for (size_t l = 0; l < cfg->nlabels && s == ALGO_OK; l++) {
        strata_node_iter *it;
        strata_status st = strata_nodes_by_label(c->view, cfg->labels[l], &it);
        if (st == STRATA_ENOTFOUND)
            continue;
        if (st != STRATA_OK)
            s = algo_oom(c);
        else
            s = drain_nodes(c, it, &ids, &n, &cap);
    }
    if (s == ALGO_OK && cfg->nlabels > 1) {
        qsort(ids, n, sizeof *ids, cmp_id);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (k == 0 || ids[k - 1] != ids[i])
                ids[k++] = ids[i];
        n = k;
    }
    if (s == ALGO_OK && n >= UINT32_MAX)
        s = algo_fail(c, ALGO_ARGUMENT, "at most %u nodes per algorithm run", UINT32_MAX - 1);
    if (s == ALGO_OK && !grow(c, (void **)&ids, cap, n, sizeof *ids))
        s = c->status;   /* shrink to n, so the graph frees it by n */
    if (s != ALGO_OK) {
        algo_free(c, ids, cap, sizeof *ids);
        return s;
    }
    gr->ids = ids;
    gr->n = n;
    return ALGO_OK;
}

static algo_status push_edge(algo_ctx *c, edge_list *e, bool weighted, uint32_t s, uint32_t d,
                             strata_id rel)
{
    if (e->n == e->cap) {
        size_t nc = e->cap ? e->cap * 2 : 4096;
        if (!grow(c, (void **)&e->src, e->cap_src, nc, sizeof *e->src))
            return c->status;
        e->cap_src = nc;
        if (!grow(c, (void **)&e->dst, e->cap_dst, nc, sizeof *e->dst))
            return c->status;
        e->cap_dst = nc;
        if (weighted && !grow(c, (void **)&e->rel, e->cap_rel, nc, sizeof *e->rel))
            return c->status;
        e->cap_rel = weighted ? nc : 0;
        e->cap = nc;
    }
    e->src[e->n] = s;
    e->dst[e->n] = d;
    if (weighted) {
        e->rel[e->n] = rel;
        if (rel > e->max_rel)
            e->max_rel = rel;
    }
    e->n++;
    return ALGO_OK;
}

static algo_status read_weight(algo_ctx *c, strata_id rel, strata_value *h, double *w)
{
    *w = 1;
    if (!c->cfg->weight_known)
        return ALGO_OK;
    if (strata_rel_read(c->view, rel, c->cfg->weight, h) != STRATA_OK)
        return algo_oom(c);
    if (value_kind(&h->v) == VAL_INT)
        *w = (double)h->v.u.i;
    else if (value_kind(&h->v) == VAL_FLOAT)
        *w = h->v.u.f;
    else if (!value_is_null(&h->v))
        return algo_fail(c, ALGO_ARGUMENT,
                         "relationship %llu: its weight is %s, not a number",
                         (unsigned long long)rel, value_type_name(&h->v));
    if (!isfinite(*w))
        return algo_fail(c, ALGO_ARGUMENT, "relationship %llu: its weight is not finite",
                         (unsigned long long)rel);
    return ALGO_OK;
}

/* The selected relationships leaving node i. */
static algo_status node_edges(algo_ctx *c, const algo_graph *gr, const uint32_t *map,
                              strata_id maxid, uint32_t i, strata_token type, bool weighted,
                              edge_list *e)
{
    strata_edge_iter *it;
    if (strata_neighbours(c->view, gr->ids[i], STRATA_OUT, type, &it) != STRATA_OK)
        return algo_oom(c);
    strata_id rel, other;
    algo_status s = ALGO_OK;
    while (s == ALGO_OK && strata_edge_iter_next(it, &rel, &other))
        if (other <= maxid && map[other] != UINT32_MAX)
            s = push_edge(c, e, weighted, i, map[other], rel);
    strata_edge_iter_free(&it);
    return s;
}

static algo_status collect_edges(algo_ctx *c, const algo_graph *gr, bool weighted, edge_list *e)
{
    const algo_config *cfg = c->cfg;
    if (gr->n == 0 || (cfg->types_given && cfg->ntypes == 0))
        return ALGO_OK;
    strata_id maxid = gr->ids[gr->n - 1];
    uint32_t *map = algo_alloc(c, maxid + 1, sizeof *map);
    if (!map)
        return c->status;
    memset(map, 0xff, (maxid + 1) * sizeof *map);
    for (size_t i = 0; i < gr->n; i++)
        map[gr->ids[i]] = (uint32_t)i;
    algo_status s = ALGO_OK;
    size_t ntypes = cfg->types_given ? cfg->ntypes : 1;
    for (size_t i = 0; i < gr->n && s == ALGO_OK; i++) {
        for (size_t t = 0; t < ntypes && s == ALGO_OK; t++)
            s = node_edges(c, gr, map, maxid, (uint32_t)i,
                           cfg->types_given ? cfg->types[t] : STRATA_ANY_TYPE, weighted, e);
        if (s == ALGO_OK && i % 1024 == 1023)
            s = algo_check_interrupt(c);
    }
    algo_free(c, map, maxid + 1, sizeof *map);
    return s;
}

/* The weights, read in relationship id order (the order relationships
   sit in storage: reading them in adjacency order instead missed the
   cache on every one, 1.5 s of a 2.2 s Dijkstra over 1M relationships),
   through an array over ids up to the largest selected one. */
static algo_status read_weights(algo_ctx *c, edge_list *e)
{
    if (!(e->w = algo_alloc(c, e->n, sizeof *e->w)))
        return c->status;
    if (!c->cfg->weight_known) {
        for (size_t k = 0; k < e->n; k++)
            e->w[k] = 1;
        return ALGO_OK;
    }
    size_t nrel = e->n ? (size_t)e->max_rel + 1 : 0;
    double *by_rel = algo_alloc(c, nrel, sizeof *by_rel);
    if (!by_rel)
        return c->status;
    for (size_t r = 0; r < nrel; r++)
        by_rel[r] = NAN;   /* not selected */
    for (size_t k = 0; k < e->n; k++)
        by_rel[e->rel[k]] = 0;
    strata_value h = {value_null()};
    algo_status s = ALGO_OK;
    for (size_t r = 0; r < nrel && s == ALGO_OK; r++) {
        if (!isnan(by_rel[r]))
            s = read_weight(c, r, &h, &by_rel[r]);
        if (s == ALGO_OK && r % ALGO_INTERRUPT_STRIDE == ALGO_INTERRUPT_STRIDE - 1)
            s = algo_check_interrupt(c);
    }
    value_release(&h.v);
    for (size_t k = 0; k < e->n && s == ALGO_OK; k++)
        e->w[k] = by_rel[e->rel[k]];
    algo_free(c, by_rel, nrel, sizeof *by_rel);
    return s;
}

/* Rows by counting sort: entry k of the list goes to row from[k] with
   neighbour to[k]. */
static algo_status fill_rows(algo_ctx *c, size_t n, const edge_list *e, bool weighted,
                             bool both, bool reverse,
                             uint64_t **off_out, uint32_t **adj_out, double **w_out, uint64_t *m)
{
    *m = both ? 2 * (uint64_t)e->n : e->n;
    uint64_t *off = algo_calloc(c, n + 1, sizeof *off);
    uint32_t *adj = off ? algo_alloc(c, *m, sizeof *adj) : NULL;
    double *w = adj && weighted ? algo_alloc(c, *m, sizeof *w) : NULL;
    if (!off || !adj || (weighted && !w)) {
        algo_free(c, off, n + 1, sizeof *off);
        algo_free(c, adj, *m, sizeof *adj);
        return c->status;
    }
    for (size_t k = 0; k < e->n; k++) {
        off[(reverse ? e->dst : e->src)[k] + 1]++;
        if (both)
            off[(reverse ? e->src : e->dst)[k] + 1]++;
    }
    for (size_t i = 0; i < n; i++)
        off[i + 1] += off[i];
    /* off[i] is the next free place of row i while filling; restored after */
    for (size_t k = 0; k < e->n; k++) {
        for (int side = 0; side < (both ? 2 : 1); side++) {
            bool flip = reverse != (side == 1);
            uint32_t from = flip ? e->dst[k] : e->src[k], to = flip ? e->src[k] : e->dst[k];
            uint64_t at = off[from]++;
            adj[at] = to;
            if (weighted)
                w[at] = e->w[k];
        }
    }
    for (size_t i = n; i > 0; i--)
        off[i] = off[i - 1];
    off[0] = 0;
    *off_out = off;
    *adj_out = adj;
    *w_out = w;
    return ALGO_OK;
}

static void free_edges(algo_ctx *c, edge_list *e)
{
    algo_free(c, e->src, e->cap_src, sizeof *e->src);
    algo_free(c, e->dst, e->cap_dst, sizeof *e->dst);
    algo_free(c, e->rel, e->cap_rel, sizeof *e->rel);
    algo_free(c, e->w, e->n, sizeof *e->w);
}

algo_status algo_graph_build(algo_ctx *c, unsigned flags, algo_graph *gr)
{
    *gr = (algo_graph){0};
    bool weighted = (flags & CSR_WEIGHTS) && c->cfg->has_weight;
    bool both = (flags & CSR_UNDIRECTED) || c->cfg->direction == STRATA_BOTH;
    bool in = !both && c->cfg->direction == STRATA_IN;
    edge_list e = {0};
    algo_status s = select_nodes(c, gr);
    if (s == ALGO_OK)
        s = collect_edges(c, gr, weighted, &e);
    if (s == ALGO_OK && weighted)
        s = read_weights(c, &e);
    gr->undirected = both;
    if (s == ALGO_OK)
        s = fill_rows(c, gr->n, &e, weighted, both, in, &gr->off, &gr->adj, &gr->w, &gr->m);
    if (s == ALGO_OK && (flags & CSR_REVERSE) && !both) {
        uint64_t m;
        s = fill_rows(c, gr->n, &e, weighted, false, !in, &gr->rev_off, &gr->rev_adj, &gr->rev_w, &m);
    } else if (s == ALGO_OK && (flags & CSR_REVERSE)) {
        gr->rev_off = gr->off;   /* undirected: the transpose is itself */
        gr->rev_adj = gr->adj;
        gr->rev_w = gr->w;
    }
    free_edges(c, &e);
    if (s != ALGO_OK)
        algo_graph_free(c, gr);
    return s;
}

void algo_graph_free(algo_ctx *c, algo_graph *gr)
{
    if (gr->rev_off && gr->rev_off != gr->off) {
        algo_free(c, gr->rev_off, gr->n + 1, sizeof *gr->rev_off);
        algo_free(c, gr->rev_adj, gr->m, sizeof *gr->rev_adj);
        algo_free(c, gr->rev_w, gr->m, sizeof *gr->rev_w);
    }
    if (gr->off) {
        algo_free(c, gr->off, gr->n + 1, sizeof *gr->off);
        algo_free(c, gr->adj, gr->m, sizeof *gr->adj);
        algo_free(c, gr->w, gr->m, sizeof *gr->w);
    }
    algo_free(c, gr->ids, gr->n, sizeof *gr->ids);
    *gr = (algo_graph){0};
}

int64_t algo_graph_index(const algo_graph *gr, strata_id id)
{
    size_t lo = 0, hi = gr->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (gr->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < gr->n && gr->ids[lo] == id ? (int64_t)lo : -1;
}

algo_status algo_graph_simple(algo_ctx *c, const algo_graph *gr, algo_graph *out)
{
    *out = (algo_graph){.n = gr->n, .undirected = true};
    uint64_t *pos = algo_alloc(c, gr->n, sizeof *pos);
    out->ids = pos ? algo_alloc(c, gr->n, sizeof *out->ids) : NULL;
    out->off = out->ids ? algo_calloc(c, gr->n + 1, sizeof *out->off) : NULL;
    out->adj = out->off ? algo_alloc(c, gr->m, sizeof *out->adj) : NULL;
    out->m = gr->m;
    if (!out->adj) {
        algo_free(c, pos, gr->n, sizeof *pos);
        algo_graph_free(c, out);
        return c->status;
    }
    memcpy(out->ids, gr->ids, gr->n * sizeof *gr->ids);
    /* The undirected adjacency is symmetric: j lists i as often as i lists
       j.  Walking j upwards and appending j to each row i it lists fills
       every row in ascending order, so duplicates are adjacent and no row
       needs sorting: O(n + m). */
    for (size_t i = 0; i < gr->n; i++)
        pos[i] = gr->off[i];
    for (size_t j = 0; j < gr->n; j++)
        for (uint64_t k = gr->off[j]; k < gr->off[j + 1]; k++) {
            uint32_t i = gr->adj[k];
            if (i == j || (pos[i] > gr->off[i] && out->adj[pos[i] - 1] == j))
                continue;
            out->adj[pos[i]++] = (uint32_t)j;
        }
    uint64_t at = 0;
    for (size_t i = 0; i < gr->n; i++) {
        uint64_t len = pos[i] - gr->off[i];
        memmove(out->adj + at, out->adj + gr->off[i], len * sizeof *out->adj);
        out->off[i] = at;
        at += len;
    }
    out->off[gr->n] = at;
    algo_free(c, pos, gr->n, sizeof *pos);
    return ALGO_OK;
}
