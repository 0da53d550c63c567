/*
 * centrality — degree, PageRank, betweenness, closeness.
 *
 * degree       the number of relationships at a node in the configured
 *              direction (BOTH counts a self-loop twice), or the sum of
 *              their weights.  Unweighted, the rows are counted and never
 *              filled: O(n + segments) when every node is selected, else
 *              O(n + m).  Parallel over nodes.
 * PageRank     power iteration, pulling over the transpose:
 *                x'(v) = d (sum over u->v of x(u) w(u,v) / W(u)
 *                           + D p(v)) + (1 - d) p(v)
 *              W(u) the weight leaving u, D the rank of the dangling nodes
 *              (W = 0), p uniform or, personalised, uniform over the
 *              sources.  Stops after `iterations` (100) or when the summed
 *              change is at most n * tolerance (1e-6).  O(iterations *
 *              (n + m)), parallel over nodes; partial sums are combined in
 *              chunk order, so every thread count gives the same bits.
 * betweenness  Brandes: one breadth-first search per source, dependencies
 *              accumulated backwards over each node's successors.  Exact (every source, O(n m)) or
 *              sampled (`sample` sources drawn with `seed`, scaled by
 *              n / sample).  Undirected views count each pair once.
 *              Parallel over sources with one accumulator per thread.
 * closeness    (r - 1) / (sum of hops to the r - 1 nodes reachable from
 *              the node), 0 when none is reachable.  O(n m), parallel over
 *              nodes.
 */
#include <math.h>
#include <string.h>

#include "algo/algo.h"

/* ---- degree ---- */

typedef struct degree_job {
    const algo_graph *gr;
    double *out;
} degree_job;

static void degree_chunk(void *arg, size_t chunk, int worker)
{
    (void)worker;
    degree_job *j = arg;
    const algo_graph *gr = j->gr;
    size_t end = (chunk + 1) * ALGO_CHUNK < gr->n ? (chunk + 1) * ALGO_CHUNK : gr->n;
    for (size_t i = chunk * ALGO_CHUNK; i < end; i++) {
        double d = 0;
        if (gr->w)
            for (uint64_t k = gr->off[i]; k < gr->off[i + 1]; k++)
                d += gr->w[k];
        else
            d = (double)(gr->off[i + 1] - gr->off[i]);
        j->out[i] = d;
    }
}

algo_status algo_degree(algo_ctx *c, algo_table *t)
{
    /* Without weights (none configured, or a key no relationship has: every
       weight 1) a degree is a row's length, which the build counts from
       the degrees kept per node (or the blocks' segment directories when
       types or labels are selected) without filling a row. */
    bool weighted = c->cfg->has_weight && c->cfg->weight_known;
    algo_graph gr;
    if (algo_graph_build(c, weighted ? CSR_WEIGHTS : CSR_COUNTS, &gr) != ALGO_OK)
        return c->status;
    if (!weighted && gr.n) {
        /* The lengths are the degrees: the result takes them and the ids
           as they are (allocated alike: n of each). */
        *t = (algo_table){.nrows = gr.n, .cap = gr.n, .ncols = 1, .nodes = gr.ids, .cells = gr.len};
        gr.ids = NULL;
        gr.len = NULL;
    } else if (algo_table_init(c, t, 1, gr.n) == ALGO_OK && gr.n) {
        degree_job j = {&gr, t->cells};
        if (algo_parallel(c, algo_nchunks(gr.n), degree_chunk, &j) == ALGO_OK) {
            memcpy(t->nodes, gr.ids, gr.n * sizeof *t->nodes);
            t->nrows = gr.n;
        }
    }
    algo_graph_free(c, &gr);
    return c->status;
}

/* ---- PageRank ---- */

typedef struct pagerank_job {
    const algo_graph *gr;
    double damping;
    const double *outw;      /* W(u) */
    const double *p;         /* personalisation, or NULL for uniform */
    double *x, *next, *contrib;
    double *partial;         /* per chunk: dangling rank, then change */
    double dangling;
} pagerank_job;

static size_t chunk_end(size_t chunk, size_t n)
{
    size_t e = (chunk + 1) * ALGO_CHUNK;
    return e < n ? e : n;
}

static void pagerank_contrib(void *arg, size_t chunk, int worker)
{
    (void)worker;
    pagerank_job *j = arg;
    double dangling = 0;
    for (size_t u = chunk * ALGO_CHUNK; u < chunk_end(chunk, j->gr->n); u++) {
        if (j->outw[u] > 0) {
            j->contrib[u] = j->x[u] / j->outw[u];
        } else {
            j->contrib[u] = 0;
            dangling += j->x[u];
        }
    }
    j->partial[chunk] = dangling;
}

static void pagerank_pull(void *arg, size_t chunk, int worker)
{
    (void)worker;
    pagerank_job *j = arg;
    const algo_graph *gr = j->gr;
    double uniform = 1.0 / (double)gr->n, change = 0;
    for (size_t v = chunk * ALGO_CHUNK; v < chunk_end(chunk, gr->n); v++) {
        double sum = 0;
        for (uint64_t k = gr->rev_off[v]; k < gr->rev_off[v + 1]; k++)
            sum += j->contrib[gr->rev_adj[k]] * (gr->rev_w ? gr->rev_w[k] : 1.0);
        double pv = j->p ? j->p[v] : uniform;
        double x = j->damping * (sum + j->dangling * pv) + (1 - j->damping) * pv;
        change += fabs(x - j->x[v]);
        j->next[v] = x;
    }
    j->partial[chunk] = change;
}

static double sum_partials(const double *partial, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += partial[i];
    return s;
}

static algo_status pagerank_iterate(algo_ctx *c, pagerank_job *j)
{
    const algo_config *cfg = c->cfg;
    size_t n = j->gr->n, nchunks = algo_nchunks(n);
    int64_t iterations = cfg->iterations ? cfg->iterations : 100;
    double tolerance = cfg->tolerance >= 0 ? cfg->tolerance : 1e-6;
    for (size_t i = 0; i < n; i++)
        j->x[i] = 1.0 / (double)n;
    for (int64_t it = 0; it < iterations; it++) {
        if (algo_parallel(c, nchunks, pagerank_contrib, j) != ALGO_OK)
            return c->status;
        j->dangling = sum_partials(j->partial, nchunks);
        if (algo_parallel(c, nchunks, pagerank_pull, j) != ALGO_OK)
            return c->status;
        double change = sum_partials(j->partial, nchunks);
        double *swap = j->x;
        j->x = j->next;
        j->next = swap;
        if (change <= (double)n * tolerance)
            break;
    }
    return ALGO_OK;
}

/* Uniform over the configured sources (that are in the view); NULL p
   stands for uniform over every node. */
static algo_status personalisation(algo_ctx *c, const algo_graph *gr, double **p)
{
    *p = NULL;
    if (c->cfg->nsources == 0)
        return ALGO_OK;
    double *v = algo_calloc(c, gr->n, sizeof *v);
    if (!v)
        return c->status;
    size_t k = 0;
    for (size_t i = 0; i < c->cfg->nsources; i++) {
        int64_t at = algo_graph_index(gr, c->cfg->sources[i]);
        if (at >= 0 && v[at] == 0) {
            v[at] = 1;
            k++;
        }
    }
    if (k == 0) {
        algo_free(c, v, gr->n, sizeof *v);
        return algo_fail(c, ALGO_ARGUMENT, "source: no source node is in the selected labels");
    }
    for (size_t i = 0; i < gr->n; i++)
        v[i] /= (double)k;
    *p = v;
    return ALGO_OK;
}

algo_status algo_pagerank(algo_ctx *c, algo_table *t)
{
    algo_graph gr;
    if (algo_graph_build(c, CSR_WEIGHTS | CSR_REVERSE, &gr) != ALGO_OK)
        return c->status;
    size_t n = gr.n, nchunks = algo_nchunks(n);
    pagerank_job j = {.gr = &gr, .damping = c->cfg->damping};
    double *outw = algo_alloc(c, n, sizeof *outw);
    j.x = outw ? algo_alloc(c, n, sizeof *j.x) : NULL;
    j.next = j.x ? algo_alloc(c, n, sizeof *j.next) : NULL;
    j.contrib = j.next ? algo_alloc(c, n, sizeof *j.contrib) : NULL;
    j.partial = j.contrib ? algo_alloc(c, nchunks, sizeof *j.partial) : NULL;
    double *p = NULL;
    if (j.partial && personalisation(c, &gr, &p) == ALGO_OK) {
        j.p = p;
        j.outw = outw;
        degree_job dj = {&gr, outw};
        if (algo_parallel(c, nchunks, degree_chunk, &dj) == ALGO_OK &&
            pagerank_iterate(c, &j) == ALGO_OK && algo_table_init(c, t, 1, n) == ALGO_OK)
            algo_table_column(c, t, &gr, j.x);
    }
    algo_free(c, p, n, sizeof *p);
    algo_free(c, j.partial, nchunks, sizeof *j.partial);
    algo_free(c, j.contrib, n, sizeof *j.contrib);
    algo_free(c, j.next, n, sizeof *j.next);
    algo_free(c, j.x, n, sizeof *j.x);
    algo_free(c, outw, n, sizeof *outw);
    algo_graph_free(c, &gr);
    return c->status;
}

/* ---- breadth-first searches from every node (betweenness, closeness) ---- */

/* Hop distances fit 32 bits: a run has at most 2^32 - 2 nodes
   (algo_graph_build), so a distance is at most 2^32 - 3 and one more
   than it never reaches the mark of an unreached node. */
#define UNREACHED UINT32_MAX

/* One thread's scratch for a search over n nodes. */
typedef struct bfs_scratch {
    uint32_t *dist;
    double *sigma;                 /* shortest paths from the source */
    double *coef;                  /* (1 + dependency) / sigma, once accumulated */
    double *acc;                   /* this thread's betweenness sums */
    uint32_t *order;               /* nodes in the order reached */
} bfs_scratch;

typedef struct sweep_job {
    const algo_graph *gr;
    bfs_scratch *scratch;          /* one per thread */
    const uint32_t *sources;       /* NULL: every node, in order */
    size_t nsources;
    double *out;                   /* closeness: one value per node */
    bool betweenness;
} sweep_job;

/* Hop distances from s; returns how many nodes were reached (s included)
   and their hop sum.  With counting, sigma counts shortest paths (each
   relationship a path of its own, so parallel ones count apart). */
static size_t bfs_from(const algo_graph *gr, bfs_scratch *b, uint32_t s, bool counting,
                       double *sum)
{
    size_t head = 0, tail = 0;
    b->dist[s] = 0;
    if (counting)
        b->sigma[s] = 1;
    b->order[tail++] = s;
    *sum = 0;
    while (head < tail) {
        uint32_t v = b->order[head++], next = b->dist[v] + 1;
        *sum += (double)b->dist[v];
        for (uint64_t k = gr->off[v]; k < gr->off[v + 1]; k++) {
            uint32_t w = gr->adj[k];
            if (b->dist[w] == UNREACHED) {
                b->dist[w] = next;
                b->order[tail++] = w;
            }
            if (counting && b->dist[w] == next)
                b->sigma[w] += b->sigma[v];
        }
    }
    return tail;
}

/* Dependencies, farthest nodes first: delta(v) = sigma(v) * the sum over
   v's successors w (one hop farther) of (1 + delta(w)) / sigma(w).  The
   successors are read from v's own row, the entries the search read, so
   no transpose is built, and each w's quotient is computed once (coef)
   rather than once per relationship into it. */
static void brandes_accumulate(const algo_graph *gr, bfs_scratch *b, size_t reached, uint32_t s)
{
    for (size_t i = reached; i-- > 0;) {
        uint32_t v = b->order[i], next = b->dist[v] + 1;
        double sum = 0;
        for (uint64_t k = gr->off[v]; k < gr->off[v + 1]; k++) {
            uint32_t w = gr->adj[k];
            if (b->dist[w] == next)
                sum += b->coef[w];
        }
        double delta = b->sigma[v] * sum;
        b->coef[v] = (1 + delta) / b->sigma[v];
        if (v != s)
            b->acc[v] += delta;
    }
}

static void sweep_chunk(void *arg, size_t chunk, int worker)
{
    sweep_job *j = arg;
    const algo_graph *gr = j->gr;
    bfs_scratch *b = &j->scratch[worker];
    size_t total = j->sources ? j->nsources : gr->n;
    for (size_t i = chunk * ALGO_CHUNK; i < chunk_end(chunk, total); i++) {
        uint32_t s = j->sources ? j->sources[i] : (uint32_t)i;
        double sum;
        size_t reached = bfs_from(gr, b, s, j->betweenness, &sum);
        if (j->betweenness)
            brandes_accumulate(gr, b, reached, s);
        else
            j->out[s] = sum > 0 ? (double)(reached - 1) / sum : 0;
        /* coef needs no reset: a node's is written before any read of it */
        for (size_t r = 0; r < reached; r++) {
            uint32_t v = b->order[r];
            b->dist[v] = UNREACHED;
            if (j->betweenness)
                b->sigma[v] = 0;
        }
    }
}

static void scratch_free(algo_ctx *c, bfs_scratch *s, int threads, size_t n)
{
    for (int i = 0; s && i < threads; i++) {
        algo_free(c, s[i].dist, n, sizeof *s[i].dist);
        algo_free(c, s[i].sigma, n, sizeof *s[i].sigma);
        algo_free(c, s[i].coef, n, sizeof *s[i].coef);
        algo_free(c, s[i].acc, n, sizeof *s[i].acc);
        algo_free(c, s[i].order, n, sizeof *s[i].order);
    }
    algo_free(c, s, (size_t)threads, sizeof *s);
}

static bfs_scratch *scratch_new(algo_ctx *c, int threads, size_t n, bool betweenness)
{
    bfs_scratch *s = algo_calloc(c, (size_t)threads, sizeof *s);
    for (int i = 0; s && i < threads; i++) {
        bool ok = (s[i].dist = algo_alloc(c, n, sizeof *s[i].dist)) &&
                  (s[i].order = algo_alloc(c, n, sizeof *s[i].order)) &&
                  (!betweenness || ((s[i].sigma = algo_calloc(c, n, sizeof *s[i].sigma)) &&
                                    (s[i].coef = algo_alloc(c, n, sizeof *s[i].coef)) &&
                                    (s[i].acc = algo_calloc(c, n, sizeof *s[i].acc))));
        if (!ok) {
            scratch_free(c, s, threads, n);
            return NULL;
        }
        for (size_t v = 0; v < n; v++)
            s[i].dist[v] = UNREACHED;
    }
    return s;
}

/* `sample` distinct sources drawn with the seed (a partial Fisher-Yates
   shuffle), or NULL for every node. */
static algo_status draw_sources(algo_ctx *c, size_t n, uint32_t **out, size_t *k)
{
    *out = NULL;
    *k = n;
    if (c->cfg->sample == 0 || (uint64_t)c->cfg->sample >= n)
        return ALGO_OK;
    uint32_t *all = algo_alloc(c, n, sizeof *all);
    if (!all)
        return c->status;
    for (size_t i = 0; i < n; i++)
        all[i] = (uint32_t)i;
    uint64_t state = c->cfg->seed;
    *k = (size_t)c->cfg->sample;
    for (size_t i = 0; i < *k; i++) {
        size_t r = i + (size_t)(algo_random(&state) % (n - i));
        uint32_t tmp = all[i];
        all[i] = all[r];
        all[r] = tmp;
    }
    *out = all;
    return ALGO_OK;
}

static algo_status sweep(algo_ctx *c, bool betweenness, algo_table *t)
{
    /* both walk the forward rows alone: no transpose */
    algo_graph gr;
    if (algo_graph_build(c, 0, &gr) != ALGO_OK)
        return c->status;
    int threads = algo_pool_threads(c->pool);
    size_t n = gr.n, nsources = n;
    uint32_t *sources = NULL;
    double *out = algo_calloc(c, n, sizeof *out);
    bfs_scratch *s = out ? scratch_new(c, threads, n, betweenness) : NULL;
    if (s && (!betweenness || draw_sources(c, n, &sources, &nsources) == ALGO_OK)) {
        sweep_job j = {&gr, s, sources, nsources, out, betweenness};
        if (algo_parallel(c, algo_nchunks(nsources), sweep_chunk, &j) == ALGO_OK &&
            betweenness) {
            /* threads' sums in thread order; exact runs scale by 1 */
            double scale = (double)n / (double)(nsources ? nsources : 1);
            if (gr.undirected)
                scale /= 2;   /* each pair was counted from both ends */
            for (size_t v = 0; v < n; v++) {
                double sum = 0;
                for (int i = 0; i < threads; i++)
                    sum += s[i].acc[v];
                out[v] = sum * scale;
            }
        }
    }
    if (c->status == ALGO_OK && algo_table_init(c, t, 1, n) == ALGO_OK)
        algo_table_column(c, t, &gr, out);
    algo_free(c, sources, n, sizeof *sources);
    scratch_free(c, s, threads, n);
    algo_free(c, out, n, sizeof *out);
    algo_graph_free(c, &gr);
    return c->status;
}

algo_status algo_betweenness(algo_ctx *c, algo_table *t) { return sweep(c, true, t); }
algo_status algo_closeness(algo_ctx *c, algo_table *t) { return sweep(c, false, t); }
