/*
 * community — label propagation and Louvain.
 *
 * Both run on the undirected view (direction ignored; parallel
 * relationships add their weights, a self-loop counts twice at its node)
 * and name a community by the smallest node id in it.  Both are seeded:
 * the node order of every pass is a shuffle drawn from `seed`, so a seed
 * gives the same communities on every run and thread count (they are
 * sequential: each move reads the moves before it).
 *
 * labelPropagation  every node starts in its own community; a pass visits
 *     the nodes and moves each to the community of largest weight among
 *     its neighbours (keeping its own when it is among the heaviest, else
 *     drawing one of the heaviest with the seed); stops when a pass moves nothing or
 *     after `iterations` (100) passes.  O(iterations * m).
 * louvain  Blondel et al.: local moving (each node to the neighbouring
 *     community of best modularity gain; after a first visit of every
 *     node only the neighbours of nodes that moved are visited again,
 *     until no move gains, or `iterations` (100) visits per node), then aggregation (each community becomes
 *     a node, relationships between communities add up, those inside
 *     become a self-loop), repeated while a level raises modularity by
 *     more than `tolerance` (1e-7).  Reports each node's community and the
 *     final partition's modularity
 *        Q = sum over communities c of in(c) / 2m - (tot(c) / 2m)^2
 *     (in(c): weight of adjacency entries inside c, tot(c): the weighted
 *     degrees in c, 2m: the weighted degrees in all).  About O(m log n).
 * leiden  Traag, Waltman and van Eck: Louvain's local moving, then a
 *     refinement that splits each community into well-connected pieces
 *     (greedy: the randomness parameter at its limit 0), aggregation by
 *     the pieces with each aggregate node starting in its community;
 *     repeated until a level moves nothing and every community is one
 *     piece (at most `iterations` levels).  Communities are connected.
 *     Keys and columns as louvain's, but for tolerance.
 */
#include <string.h>

#include "algo/algo.h"

#ifdef STRATA_TESTING
uint64_t algo_test_community_reads;
#endif

/* A weighted undirected level graph (Louvain aggregates into new ones). */
typedef struct wgraph {
    size_t n;
    uint64_t m;
    uint64_t *off;
    uint32_t *adj;
    double *w;
} wgraph;

static void wgraph_free(algo_ctx *c, wgraph *g)
{
    algo_free(c, g->off, g->n + 1, sizeof *g->off);
    algo_free(c, g->adj, g->m, sizeof *g->adj);
    algo_free(c, g->w, g->m, sizeof *g->w);
    *g = (wgraph){0};
}

static algo_status wgraph_alloc(algo_ctx *c, wgraph *g, size_t n, uint64_t m)
{
    *g = (wgraph){.n = n, .m = m};
    if (!(g->off = algo_calloc(c, n + 1, sizeof *g->off)) ||
        !(g->adj = algo_alloc(c, m, sizeof *g->adj)) ||
        !(g->w = algo_alloc(c, m, sizeof *g->w))) {
        wgraph_free(c, g);
        return c->status;
    }
    return ALGO_OK;
}

/* The level-0 graph takes gr's rows (and weights) rather than copying
   them: 12 bytes per entry less at the peak.  gr keeps its ids. */
static algo_status wgraph_from(algo_ctx *c, algo_graph *gr, wgraph *g)
{
    *g = (wgraph){.n = gr->n, .m = gr->m, .off = gr->off, .adj = gr->adj, .w = gr->w};
    if (!g->w) {
        if (!(g->w = algo_alloc(c, gr->m, sizeof *g->w))) {
            *g = (wgraph){0};   /* gr still owns its rows */
            return c->status;
        }
        for (uint64_t k = 0; k < gr->m; k++)
            g->w[k] = 1.0;
    }
    gr->off = gr->rev_off = NULL;
    gr->adj = gr->rev_adj = NULL;
    gr->w = gr->rev_w = NULL;
    return ALGO_OK;
}

static void shuffle(uint32_t *order, size_t n, uint64_t *state)
{
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    for (size_t i = n; i > 1; i--) {
        size_t r = (size_t)(algo_random(state) % i);
        uint32_t tmp = order[i - 1];
        order[i - 1] = order[r];
        order[r] = tmp;
    }
}

/* Per-community weights of one node's neighbours: a dense array and the
   list of communities touched, cleared after each node. */
typedef struct neighbour_weights {
    double *w;
    uint32_t *touched;
    bool *seen;
    size_t ntouched;
} neighbour_weights;

static void gather(const wgraph *g, const uint32_t *comm, uint32_t v, neighbour_weights *nw)
{
    for (uint64_t k = g->off[v]; k < g->off[v + 1]; k++) {
        uint32_t u = g->adj[k];
        if (u == v)
            continue;
        uint32_t cu = comm[u];
        if (!nw->seen[cu]) {
            nw->seen[cu] = true;
            nw->touched[nw->ntouched++] = cu;
        }
        nw->w[cu] += g->w[k];
    }
}

static void clear(neighbour_weights *nw)
{
    for (size_t i = 0; i < nw->ntouched; i++) {
        nw->w[nw->touched[i]] = 0;
        nw->seen[nw->touched[i]] = false;
    }
    nw->ntouched = 0;
}

static algo_status nw_alloc(algo_ctx *c, neighbour_weights *nw, size_t n)
{
    *nw = (neighbour_weights){0};
    if ((nw->w = algo_calloc(c, n, sizeof *nw->w)) &&
        (nw->touched = algo_alloc(c, n, sizeof *nw->touched)) &&
        (nw->seen = algo_calloc(c, n, sizeof *nw->seen)))
        return ALGO_OK;
    algo_free(c, nw->w, n, sizeof *nw->w);
    algo_free(c, nw->touched, n, sizeof *nw->touched);
    *nw = (neighbour_weights){0};
    return c->status;
}

static void nw_free(algo_ctx *c, neighbour_weights *nw, size_t n)
{
    algo_free(c, nw->w, n, sizeof *nw->w);
    algo_free(c, nw->touched, n, sizeof *nw->touched);
    algo_free(c, nw->seen, n, sizeof *nw->seen);
}

/* Community labels (indices) to rows named by the smallest id in each. */
static algo_status emit_communities(algo_ctx *c, const algo_graph *gr, const uint32_t *comm,
                                    const double *extra, algo_table *t)
{
    uint32_t *smallest = algo_alloc(c, gr->n, sizeof *smallest);
    if (!smallest)
        return c->status;
    memset(smallest, 0xff, gr->n * sizeof *smallest);
    for (size_t v = 0; v < gr->n; v++)   /* v ascends: the first is the smallest */
        if (smallest[comm[v]] == UINT32_MAX)
            smallest[comm[v]] = (uint32_t)v;
    if (algo_table_init(c, t, extra ? 2 : 1, gr->n) == ALGO_OK)
        for (size_t v = 0; v < gr->n; v++) {
            double row[2] = {(double)gr->ids[smallest[comm[v]]], extra ? *extra : 0};
            if (algo_table_push(c, t, gr->ids[v], row) != ALGO_OK)
                break;
        }
    algo_free(c, smallest, gr->n, sizeof *smallest);
    return c->status;
}

/* ---- label propagation ---- */

static bool propagate_pass(const wgraph *g, uint32_t *label, const uint32_t *order,
                           neighbour_weights *nw, uint64_t *state)
{
    bool moved = false;
    for (size_t i = 0; i < g->n; i++) {
        uint32_t v = order[i];
        gather(g, label, v, nw);
        double bestw = -1;
        for (size_t k = 0; k < nw->ntouched; k++)
            if (nw->w[nw->touched[k]] > bestw)
                bestw = nw->w[nw->touched[k]];
        /* keep the own label when it is among the heaviest (so a pass that
           changes nothing ends the run), else draw among the heaviest */
        if (nw->ntouched > 0 && !(nw->seen[label[v]] && nw->w[label[v]] == bestw)) {
            uint32_t best = label[v];
            uint64_t ties = 0;
            for (size_t k = 0; k < nw->ntouched; k++) {
                uint32_t l = nw->touched[k];
                if (nw->w[l] == bestw && algo_random(state) % ++ties == 0)
                    best = l;
            }
            label[v] = best;
            moved = true;
        }
        clear(nw);
    }
    return moved;
}

algo_status algo_label_propagation(algo_ctx *c, algo_table *t)
{
    algo_graph gr;
    if (algo_graph_build(c, CSR_WEIGHTS | CSR_UNDIRECTED, &gr) != ALGO_OK)
        return c->status;
    wgraph g = {0};
    neighbour_weights nw = {0};
    uint32_t *label = NULL, *order = NULL;
    bool nw_ok = false;
    if (wgraph_from(c, &gr, &g) == ALGO_OK && (label = algo_alloc(c, gr.n, sizeof *label)) &&
        (order = algo_alloc(c, gr.n, sizeof *order)) &&
        (nw_ok = nw_alloc(c, &nw, gr.n) == ALGO_OK)) {
        uint64_t state = c->cfg->seed;
        int64_t passes = c->cfg->iterations ? c->cfg->iterations : 100;
        for (size_t v = 0; v < gr.n; v++)
            label[v] = (uint32_t)v;
        for (int64_t p = 0; p < passes && algo_check_interrupt(c) == ALGO_OK; p++) {
            shuffle(order, gr.n, &state);
            if (!propagate_pass(&g, label, order, &nw, &state))
                break;
        }
        if (c->status == ALGO_OK)
            emit_communities(c, &gr, label, NULL, t);
    }
    if (nw_ok)
        nw_free(c, &nw, gr.n);
    algo_free(c, order, gr.n, sizeof *order);
    algo_free(c, label, gr.n, sizeof *label);
    wgraph_free(c, &g);
    algo_graph_free(c, &gr);
    return c->status;
}

/* ---- Louvain ---- */

typedef struct louvain {
    double m2;               /* total weighted degree (2m) */
    double *k;               /* weighted degree per level node */
    double *tot;             /* per community */
    uint32_t *comm;          /* level node -> community */
    uint32_t *order;
    uint32_t *queue;         /* local moving: nodes to visit (a ring) */
    bool *inq;
    neighbour_weights nw;
    /* Leiden's refinement */
    uint32_t *refined;       /* level node -> refined community */
    uint32_t *rsize;         /* refined community -> members */
    double *kref;            /* refined community -> weighted degree */
    double *ext;             /* refined community -> weight to the rest of
                                its community */
    uint32_t *parent;        /* refined community -> community */
} louvain;

/* The best community for v (its own unless a move gains more than
   rounding); tot is updated, v's community set.  The gain of moving v from
   its community to c is (w(v,c) - tot(c) k(v)/2m) - (w(v,own) -
   tot(own) k(v)/2m), over m. */
static uint32_t best_move(const wgraph *g, louvain *L, uint32_t v)
{
    uint32_t cv = L->comm[v];
    double kv = L->k[v];
    gather(g, L->comm, v, &L->nw);
    ALGO_COUNT_READS(g->off[v + 1] - g->off[v]);
    L->tot[cv] -= kv;
    uint32_t best = cv;
    double bestgain = (L->nw.seen[cv] ? L->nw.w[cv] : 0) - L->tot[cv] * kv / L->m2;
    for (size_t t = 0; t < L->nw.ntouched; t++) {
        uint32_t cu = L->nw.touched[t];
        double gain = L->nw.w[cu] - L->tot[cu] * kv / L->m2;
        /* a move must win by more than rounding: every move then raises
           modularity, so the moving ends */
        if (gain > bestgain + 1e-12 * (bestgain < 0 ? -bestgain : bestgain) + 1e-15) {
            best = cu;
            bestgain = gain;
        }
    }
    L->tot[best] += kv;
    L->comm[v] = best;
    clear(&L->nw);
    return best;
}

/* Local moving on level graph g, by a queue (Leiden's fast local move):
   every node once in a seeded order, then only the neighbours of a node
   that moved (those not already queued, nor in its new community), until
   the queue is empty — no single move raises modularity — or
   `iterations` * n visits.  Work follows the moves: the passes over every
   node that plain Louvain repeats while a few nodes still move cost 78
   full passes on a 20k-node graph.  Returns whether any node moved. */
static bool local_moving(algo_ctx *c, const wgraph *g, louvain *L, int64_t passes,
                         uint64_t *state)
{
    size_t n = g->n, head = 0, queued = n;
    shuffle(L->queue, n, state);
    for (size_t v = 0; v < n; v++)
        L->inq[v] = true;
    bool any = false;
    uint64_t visits = 0, cap = (uint64_t)passes * n;
    while (queued > 0 && visits++ < cap) {
        if (visits % ALGO_INTERRUPT_STRIDE == 0 && algo_check_interrupt(c) != ALGO_OK)
            break;
        uint32_t v = L->queue[head];
        head = (head + 1) % n;
        queued--;
        L->inq[v] = false;
        uint32_t before = L->comm[v], after = best_move(g, L, v);
        if (after == before)
            continue;
        any = true;
        ALGO_COUNT_READS(g->off[v + 1] - g->off[v]);
        for (uint64_t e = g->off[v]; e < g->off[v + 1]; e++) {
            uint32_t u = g->adj[e];
            if (!L->inq[u] && L->comm[u] != after) {
                L->inq[u] = true;
                L->queue[(head + queued++) % n] = u;
            }
        }
    }
    return any;
}

/* Renumbers comm densely (0..k-1, in order of first appearance by node)
   and returns k; map is scratch of n. */
static size_t renumber(uint32_t *comm, size_t n, uint32_t *map)
{
    memset(map, 0xff, n * sizeof *map);
    size_t k = 0;
    for (size_t v = 0; v < n; v++) {
        if (map[comm[v]] == UINT32_MAX)
            map[comm[v]] = (uint32_t)k++;
        comm[v] = map[comm[v]];
    }
    return k;
}

/* The graph of communities: entries between communities add up; those
   inside one become its self-entry. */
static algo_status aggregate(algo_ctx *c, const wgraph *g, const uint32_t *comm, size_t k,
                             louvain *L, wgraph *out)
{
    /* members of each community, by counting sort */
    uint64_t *start = algo_calloc(c, k + 1, sizeof *start);
    uint32_t *members = start ? algo_alloc(c, g->n, sizeof *members) : NULL;
    if (!members || wgraph_alloc(c, out, k, g->m) != ALGO_OK) {
        algo_free(c, start, k + 1, sizeof *start);
        algo_free(c, members, g->n, sizeof *members);
        return c->status;
    }
    for (size_t v = 0; v < g->n; v++)
        start[comm[v] + 1]++;
    for (size_t i = 0; i < k; i++)
        start[i + 1] += start[i];
    for (size_t v = 0; v < g->n; v++)
        members[start[comm[v]]++] = (uint32_t)v;
    for (size_t i = k; i > 0; i--)
        start[i] = start[i - 1];
    start[0] = 0;
    uint64_t at = 0;
    for (size_t cc = 0; cc < k; cc++) {
        for (uint64_t i = start[cc]; i < start[cc + 1]; i++) {
            uint32_t v = members[i];
            ALGO_COUNT_READS(g->off[v + 1] - g->off[v]);
            for (uint64_t e = g->off[v]; e < g->off[v + 1]; e++) {
                uint32_t cu = comm[g->adj[e]];
                if (!L->nw.seen[cu]) {
                    L->nw.seen[cu] = true;
                    L->nw.touched[L->nw.ntouched++] = cu;
                }
                L->nw.w[cu] += g->w[e];
            }
        }
        for (size_t t = 0; t < L->nw.ntouched; t++) {
            out->adj[at] = L->nw.touched[t];
            out->w[at++] = L->nw.w[L->nw.touched[t]];
        }
        clear(&L->nw);
        out->off[cc + 1] = at;
    }
    algo_free(c, start, k + 1, sizeof *start);
    algo_free(c, members, g->n, sizeof *members);
    return ALGO_OK;
}

static double modularity(const wgraph *g, const uint32_t *comm, double *in, double *tot)
{
    double m2 = 0;
    for (size_t v = 0; v < g->n; v++)
        in[v] = tot[v] = 0;
    ALGO_COUNT_READS(g->off[g->n]);
    for (size_t v = 0; v < g->n; v++)
        for (uint64_t k = g->off[v]; k < g->off[v + 1]; k++) {
            tot[comm[v]] += g->w[k];
            m2 += g->w[k];
            if (comm[g->adj[k]] == comm[v])
                in[comm[v]] += g->w[k];
        }
    if (m2 == 0)
        return 0;
    double q = 0;
    for (size_t v = 0; v < g->n; v++)
        q += in[v] / m2 - (tot[v] / m2) * (tot[v] / m2);
    return q;
}

static void louvain_free(algo_ctx *c, louvain *L, size_t n)
{
    algo_free(c, L->queue, n, sizeof *L->queue);
    algo_free(c, L->inq, n, sizeof *L->inq);
    algo_free(c, L->refined, n, sizeof *L->refined);
    algo_free(c, L->rsize, n, sizeof *L->rsize);
    algo_free(c, L->kref, n, sizeof *L->kref);
    algo_free(c, L->ext, n, sizeof *L->ext);
    algo_free(c, L->parent, n, sizeof *L->parent);
    algo_free(c, L->k, n, sizeof *L->k);
    algo_free(c, L->tot, n, sizeof *L->tot);
    algo_free(c, L->comm, n, sizeof *L->comm);
    algo_free(c, L->order, n, sizeof *L->order);
    if (L->nw.w)
        nw_free(c, &L->nw, n);
}

/* Levels of local moving and aggregation; final[v] is original node v's
   community. */
static algo_status louvain_levels(algo_ctx *c, const wgraph *g0, louvain *L, uint32_t *final,
                                  uint32_t *map, double *q)
{
    size_t n = g0->n;
    wgraph level = {0};
    const wgraph *g = g0;
    uint64_t state = c->cfg->seed;
    int64_t passes = c->cfg->iterations ? c->cfg->iterations : 100;
    double tolerance = c->cfg->tolerance >= 0 ? c->cfg->tolerance : 1e-7;
    for (size_t v = 0; v < n; v++)
        final[v] = (uint32_t)v;
    *q = modularity(g0, final, L->tot, L->k);
    while (c->status == ALGO_OK) {
        L->m2 = 0;
        for (size_t v = 0; v < g->n; v++) {
            L->k[v] = 0;
            for (uint64_t e = g->off[v]; e < g->off[v + 1]; e++)
                L->k[v] += g->w[e];
            L->tot[v] = L->k[v];
            L->comm[v] = (uint32_t)v;
            L->m2 += L->k[v];
        }
        if (L->m2 == 0 || !local_moving(c, g, L, passes, &state))
            break;
        size_t k = renumber(L->comm, g->n, map);
        for (size_t v = 0; v < n; v++)
            final[v] = L->comm[final[v]];
        double nq = modularity(g0, final, L->tot, L->k);
        wgraph next;
        if (aggregate(c, g, L->comm, k, L, &next) != ALGO_OK)
            break;
        wgraph_free(c, &level);
        level = next;
        g = &level;
        bool better = nq - *q > tolerance;
        *q = nq;
        if (!better || k == 1)
            break;
    }
    wgraph_free(c, &level);
    return c->status;
}

/* ---- Leiden ---- */

/* Weighted degree per level node, the total, and tot per community of
   L->comm. */
static void level_degrees(const wgraph *g, louvain *L)
{
    L->m2 = 0;
    for (size_t v = 0; v < g->n; v++) {
        L->k[v] = 0;
        for (uint64_t e = g->off[v]; e < g->off[v + 1]; e++)
            L->k[v] += g->w[e];
        L->m2 += L->k[v];
        L->tot[v] = 0;
    }
    for (size_t v = 0; v < g->n; v++)
        L->tot[L->comm[v]] += L->k[v];
}

/* Leiden's refinement, greedy (the randomness parameter at its limit 0):
   inside each community every node starts alone; in a seeded order, a
   node still alone and well connected to its community (its weight to the
   rest at least k(v) (K - k(v)) / 2m) joins the well-connected refined
   community inside the same community of best positive gain.  Refined
   communities are thus connected subsets of one community. */
static void refine(const wgraph *g, louvain *L, uint64_t *state)
{
    for (size_t v = 0; v < g->n; v++) {
        L->refined[v] = (uint32_t)v;
        L->rsize[v] = 1;
        L->kref[v] = L->k[v];
        L->ext[v] = 0;
        ALGO_COUNT_READS(g->off[v + 1] - g->off[v]);
        for (uint64_t e = g->off[v]; e < g->off[v + 1]; e++)
            if (g->adj[e] != v && L->comm[g->adj[e]] == L->comm[v])
                L->ext[v] += g->w[e];
    }
    shuffle(L->order, g->n, state);
    for (size_t i = 0; i < g->n; i++) {
        uint32_t v = L->order[i], cv = L->comm[v];
        double kv = L->k[v], K = L->tot[cv];
        if (L->refined[v] != v || L->rsize[v] != 1 || L->ext[v] < kv * (K - kv) / L->m2)
            continue;
        neighbour_weights *nw = &L->nw;
        ALGO_COUNT_READS(g->off[v + 1] - g->off[v]);
        for (uint64_t e = g->off[v]; e < g->off[v + 1]; e++) {
            uint32_t u = g->adj[e];
            if (u == v || L->comm[u] != cv)
                continue;
            uint32_t r = L->refined[u];
            if (!nw->seen[r]) {
                nw->seen[r] = true;
                nw->touched[nw->ntouched++] = r;
            }
            nw->w[r] += g->w[e];
        }
        uint32_t best = UINT32_MAX;
        double bestgain = 0;
        for (size_t t = 0; t < nw->ntouched; t++) {
            uint32_t r = nw->touched[t];
            if (L->ext[r] < L->kref[r] * (K - L->kref[r]) / L->m2)
                continue;   /* not well connected */
            double gain = nw->w[r] - L->kref[r] * kv / L->m2;
            if (gain > bestgain) {
                best = r;
                bestgain = gain;
            }
        }
        if (best != UINT32_MAX) {
            L->ext[best] += L->ext[v] - 2 * nw->w[best];
            L->kref[best] += kv;
            L->rsize[best]++;
            L->rsize[v] = 0;
            L->refined[v] = best;
        }
        clear(nw);
    }
}

/* Levels of local moving, refinement and aggregation by the refined
   partition (each aggregate node starting in its community), until a
   level moves nothing and refines nothing. */
static algo_status leiden_levels(algo_ctx *c, const wgraph *g0, louvain *L, uint32_t *final,
                                 uint32_t *map, double *q)
{
    size_t n = g0->n;
    wgraph level = {0};
    const wgraph *g = g0;
    uint64_t state = c->cfg->seed;
    int64_t passes = c->cfg->iterations ? c->cfg->iterations : 100;
    for (size_t v = 0; v < n; v++)
        final[v] = L->comm[v] = (uint32_t)v;
    for (int64_t lv = 0; lv < passes && c->status == ALGO_OK; lv++) {
        level_degrees(g, L);
        if (L->m2 == 0)
            break;
        bool moved = local_moving(c, g, L, passes, &state);
        if (c->status != ALGO_OK)
            break;
        refine(g, L, &state);
        size_t kref = renumber(L->refined, g->n, map);
        size_t kcomm = renumber(L->comm, g->n, map);
        if (!moved && kref == kcomm)
            break;   /* stable: nothing moved, every community is one piece */
        for (size_t v = 0; v < g->n; v++)
            L->parent[L->refined[v]] = L->comm[v];
        for (size_t v = 0; v < n; v++)
            final[v] = L->refined[final[v]];
        wgraph next;
        if (aggregate(c, g, L->refined, kref, L, &next) != ALGO_OK)
            break;
        wgraph_free(c, &level);
        level = next;
        g = &level;
        for (size_t r = 0; r < kref; r++)
            L->comm[r] = L->parent[r];
    }
    if (c->status == ALGO_OK) {
        for (size_t v = 0; v < n; v++)
            final[v] = L->comm[final[v]];
        *q = modularity(g0, final, L->tot, L->k);
    }
    wgraph_free(c, &level);
    return c->status;
}

static algo_status communities(algo_ctx *c, algo_table *t, bool leiden)
{
    algo_graph gr;
    if (algo_graph_build(c, CSR_WEIGHTS | CSR_UNDIRECTED, &gr) != ALGO_OK)
        return c->status;
    size_t n = gr.n;
    wgraph g = {0};
    louvain L = {0};
    uint32_t *final = NULL, *map = NULL;
    if (wgraph_from(c, &gr, &g) == ALGO_OK && (L.k = algo_alloc(c, n, sizeof *L.k)) &&
        (L.tot = algo_alloc(c, n, sizeof *L.tot)) && (L.comm = algo_alloc(c, n, sizeof *L.comm)) &&
        (L.order = algo_alloc(c, n, sizeof *L.order)) && nw_alloc(c, &L.nw, n) == ALGO_OK &&
        (final = algo_alloc(c, n, sizeof *final)) && (map = algo_alloc(c, n, sizeof *map)) &&
        (L.queue = algo_alloc(c, n, sizeof *L.queue)) &&
        (L.inq = algo_alloc(c, n, sizeof *L.inq)) &&
        (!leiden || ((L.refined = algo_alloc(c, n, sizeof *L.refined)) &&
                     (L.rsize = algo_alloc(c, n, sizeof *L.rsize)) &&
                     (L.kref = algo_alloc(c, n, sizeof *L.kref)) &&
                     (L.ext = algo_alloc(c, n, sizeof *L.ext)) &&
                     (L.parent = algo_alloc(c, n, sizeof *L.parent))))) {
        double q;
        if ((leiden ? leiden_levels : louvain_levels)(c, &g, &L, final, map, &q) == ALGO_OK)
            emit_communities(c, &gr, final, &q, t);
    }
    algo_free(c, map, n, sizeof *map);
    algo_free(c, final, n, sizeof *final);
    louvain_free(c, &L, n);
    wgraph_free(c, &g);
    algo_graph_free(c, &gr);
    return c->status;
}

algo_status algo_louvain(algo_ctx *c, algo_table *t) { return communities(c, t, false); }
algo_status algo_leiden(algo_ctx *c, algo_table *t) { return communities(c, t, true); }
