/*
 * registry — the table of algorithms, a run from end to end, and the
 * public strata_algo_* calls.
 *
 * A run: read the configuration (config.c), check the source and target
 * nodes exist, start the worker pool (pool.c), run the algorithm (which
 * builds its adjacency, csr.c), stop the pool.  The result table is the
 * caller's; on failure it is left empty and nothing is leaked.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "algo/algo.h"
#include "core/version.h"

/* ---- errors and memory ---- */

algo_status algo_fail(algo_ctx *c, algo_status s, const char *fmt, ...)
{
    if (c->status == ALGO_OK) {   /* the first error is the one reported */
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, sizeof c->err, fmt, ap);
        va_end(ap);
        c->status = s;
    }
    return c->status;
}

algo_status algo_oom(algo_ctx *c)
{
    return algo_fail(c, ALGO_OOM, "out of memory running the algorithm");
}

algo_status algo_check_interrupt(algo_ctx *c)
{
    if (c->interrupt && atomic_load_explicit(c->interrupt, memory_order_relaxed))
        return algo_fail(c, ALGO_INTERRUPTED, "the algorithm was interrupted");
    return ALGO_OK;
}

/* An algorithm's arrays are written whole soon after they are made:
   large ones are mapped in at once (mem_prefault), not a fault per page. */
void *algo_alloc(algo_ctx *c, size_t n, size_t size)
{
    void *p = mem_alloc(c->m, mem_array_size(n, size));
    if (!p)
        algo_oom(c);
    else
        mem_prefault(p, n * size);
    return p;
}

void *algo_calloc(algo_ctx *c, size_t n, size_t size)
{
    void *p = mem_calloc(c->m, mem_array_size(n, size));
    if (!p)
        algo_oom(c);
    return p;
}

void algo_free(algo_ctx *c, void *p, size_t n, size_t size)
{
    if (p)
        mem_free_sized(c->m, p, n * size);
}

/* ---- result tables ---- */

algo_status algo_table_init(algo_ctx *c, algo_table *t, size_t ncols, size_t rows)
{
    *t = (algo_table){.ncols = ncols};
    if (rows == 0)
        return ALGO_OK;
    t->nodes = algo_alloc(c, rows, sizeof *t->nodes);
    t->cells = t->nodes && ncols ? algo_alloc(c, rows * ncols, sizeof *t->cells) : NULL;
    if (!t->nodes || (ncols && !t->cells)) {
        algo_free(c, t->nodes, rows, sizeof *t->nodes);
        *t = (algo_table){.ncols = ncols};
        return c->status;
    }
    t->cap = rows;
    return ALGO_OK;
}

algo_status algo_table_push(algo_ctx *c, algo_table *t, strata_id node, const double *values)
{
    /* tables are sized for every node of the graph at init: a run never
       reports more rows than that */
    if (t->nrows == t->cap)
        return algo_fail(c, ALGO_OOM, "result table full (%zu rows)", t->cap);
    t->nodes[t->nrows] = node;
    if (t->ncols)
        memcpy(t->cells + t->nrows * t->ncols, values, t->ncols * sizeof *values);
    t->nrows++;
    return ALGO_OK;
}

algo_status algo_table_column(algo_ctx *c, algo_table *t, const algo_graph *gr, const double *col)
{
    for (size_t i = 0; i < gr->n; i++)
        if (algo_table_push(c, t, gr->ids[i], &col[i]) != ALGO_OK)
            return c->status;
    return ALGO_OK;
}

void algo_table_free(algo_ctx *c, algo_table *t)
{
    algo_free(c, t->nodes, t->cap, sizeof *t->nodes);
    algo_free(c, t->cells, t->cap * t->ncols, sizeof *t->cells);
    *t = (algo_table){.ncols = t->ncols};
}

/* ---- the algorithms ---- */

static const algo_column c_score[] = {{"score", false}};
static const algo_column c_component[] = {{"component", true}};
static const algo_column c_core[] = {{"core", true}};
static const algo_column c_hops[] = {{"distance", true}};
static const algo_column c_distance[] = {{"distance", false}};
static const algo_column c_triangles[] = {{"triangles", true}, {"coefficient", false}};
static const algo_column c_community[] = {{"community", true}};
static const algo_column c_louvain[] = {{"community", true}, {"modularity", false}};

#define COLS(a) a, sizeof a / sizeof *a

static const algo_spec specs[] = {
    {"degree", COLS(c_score), CFG_VIEW | CFG_WEIGHT, false, algo_degree,
     "relationships (or their weights) at each node"},
    {"wcc", COLS(c_component), CFG_VIEW, false, algo_wcc,
     "weakly connected components"},
    {"scc", COLS(c_component), CFG_VIEW, false, algo_scc,
     "strongly connected components"},
    {"pagerank", COLS(c_score),
     CFG_VIEW | CFG_WEIGHT | CFG_ITERATIONS | CFG_TOLERANCE | CFG_DAMPING | CFG_SOURCE, false,
     algo_pagerank, "PageRank; personalised with source"},
    {"bfs", COLS(c_hops), CFG_VIEW | CFG_SOURCE, true, algo_bfs,
     "breadth-first search: hops from source"},
    {"dijkstra", COLS(c_distance), CFG_VIEW | CFG_WEIGHT | CFG_SOURCE | CFG_TARGET, true,
     algo_dijkstra, "weighted shortest paths from source (to target: the path)"},
    {"triangles", COLS(c_triangles), CFG_VIEW, false, algo_triangles,
     "triangles at each node and its local clustering coefficient"},
    {"kcore", COLS(c_core), CFG_VIEW, false, algo_kcore, "k-core decomposition"},
    {"labelPropagation", COLS(c_community),
     CFG_VIEW | CFG_WEIGHT | CFG_ITERATIONS | CFG_SEED, false, algo_label_propagation,
     "communities by label propagation"},
    {"louvain", COLS(c_louvain),
     CFG_VIEW | CFG_WEIGHT | CFG_ITERATIONS | CFG_TOLERANCE | CFG_SEED, false, algo_louvain,
     "Louvain communities and their modularity"},
    {"leiden", COLS(c_louvain), CFG_VIEW | CFG_WEIGHT | CFG_ITERATIONS | CFG_SEED, false, algo_leiden,
     "Leiden communities (connected) and their modularity"},
    {"betweenness", COLS(c_score), CFG_VIEW | CFG_SAMPLE | CFG_SEED, false, algo_betweenness,
     "betweenness centrality, exact or sampled"},
    {"closeness", COLS(c_score), CFG_VIEW, false, algo_closeness, "closeness centrality"},
};

const algo_spec *algo_spec_find(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
        if (strlen(specs[i].name) == len && memcmp(specs[i].name, name, len) == 0)
            return &specs[i];
    return NULL;
}

const algo_spec *algo_spec_at(size_t i)
{
    return i < sizeof specs / sizeof *specs ? &specs[i] : NULL;
}

static algo_status check_nodes(algo_ctx *c, const algo_spec *spec)
{
    const algo_config *cfg = c->cfg;
    if (spec->needs_source && cfg->nsources != 1)
        return algo_fail(c, ALGO_ARGUMENT, "algo.%s needs one source node", spec->name);
    for (size_t i = 0; i < cfg->nsources; i++)
        if (!strata_node_exists(c->view, cfg->sources[i]))
            return algo_fail(c, ALGO_NOT_FOUND, "source: there is no node %llu",
                             (unsigned long long)cfg->sources[i]);
    if (cfg->has_target && !strata_node_exists(c->view, cfg->target))
        return algo_fail(c, ALGO_NOT_FOUND, "target: there is no node %llu",
                         (unsigned long long)cfg->target);
    return ALGO_OK;
}

algo_status algo_run(algo_ctx *c, const algo_spec *spec, const value *config, unsigned extra_keys,
                     algo_table *t)
{
    *t = (algo_table){.ncols = spec->ncols};
    algo_config *cfg = algo_alloc(c, 1, sizeof *cfg);
    if (!cfg)
        return c->status;
    c->cfg = cfg;
    if (algo_config_read(c, config, spec->keys | extra_keys, cfg) == ALGO_OK &&
        check_nodes(c, spec) == ALGO_OK &&
        algo_pool_new(c, cfg->threads, &c->pool) == ALGO_OK) {
        if (spec->run(c, t) != ALGO_OK || c->status != ALGO_OK)
            algo_table_free(c, t);
        algo_pool_free(c, &c->pool);
    }
    return c->status;
}

/* ---- the public API ---- */

struct strata_algo_result {
    algo_table t;
    const algo_spec *spec;
    size_t cursor;
};

static strata_status to_status(algo_status s)
{
    switch (s) {
    case ALGO_OK: return STRATA_OK;
    case ALGO_ARGUMENT: return STRATA_EINVAL;
    case ALGO_NOT_FOUND: return STRATA_ENOTFOUND;
    case ALGO_OOM: return STRATA_ENOMEM;
    case ALGO_INTERRUPTED: return STRATA_EINTERRUPTED;
    }
    return STRATA_EINVAL;
}

strata_status strata_algo_run(strata_view *v, const char *name, const strata_value *config,
                              strata_algo_result **out)
{
    if (!out)
        return v ? view_fail(v, STRATA_EINVAL, "strata_algo_run: out is NULL") : STRATA_EINVAL;
    *out = NULL;
    if (!v || !name)
        return v ? view_fail(v, STRATA_EINVAL, "strata_algo_run: name is NULL") : STRATA_EINVAL;
    const algo_spec *spec = algo_spec_find(name, strlen(name));
    if (!spec)
        return view_fail(v, STRATA_EINVAL, "there is no algorithm %s", name);
    algo_ctx c = {.view = v, .m = mem_scratch(), .interrupt = &v->ver->cat->interrupt};
    /* as a query does, the run answers interrupts made after it starts */
    atomic_store(c.interrupt, false);
    strata_algo_result *r = algo_calloc(&c, 1, sizeof *r);
    if (!r)
        return view_fail(v, STRATA_ENOMEM, "%s", c.err);
    r->spec = spec;
    algo_status s = algo_run(&c, spec, config ? &config->v : NULL, 0, &r->t);
    if (c.cfg)
        algo_free(&c, (void *)c.cfg, 1, sizeof *c.cfg);
    if (s != ALGO_OK) {
        algo_free(&c, r, 1, sizeof *r);
        return view_fail(v, to_status(s), "algo.%s: %s", name, c.err);
    }
    *out = r;
    return STRATA_OK;
}

size_t strata_algo_result_rows(const strata_algo_result *r) { return r ? r->t.nrows : 0; }

size_t strata_algo_result_columns(const strata_algo_result *r)
{
    return r ? r->spec->ncols : 0;
}

const char *strata_algo_result_column(const strata_algo_result *r, size_t col)
{
    return r && col < r->spec->ncols ? r->spec->cols[col].name : NULL;
}

bool strata_algo_result_column_integer(const strata_algo_result *r, size_t col)
{
    return r && col < r->spec->ncols && r->spec->cols[col].integer;
}

const strata_id *strata_algo_result_nodes(const strata_algo_result *r)
{
    return r ? r->t.nodes : NULL;
}

const double *strata_algo_result_values(const strata_algo_result *r)
{
    return r ? r->t.cells : NULL;
}

bool strata_algo_result_next(strata_algo_result *r, strata_id *node, double *values)
{
    if (!r || r->cursor >= r->t.nrows)
        return false;
    if (node)
        *node = r->t.nodes[r->cursor];
    if (values && r->t.ncols)
        memcpy(values, r->t.cells + r->cursor * r->t.ncols, r->t.ncols * sizeof *values);
    r->cursor++;
    return true;
}

void strata_algo_result_free(strata_algo_result **rp)
{
    if (!rp || !*rp)
        return;
    algo_ctx c = {.m = mem_scratch()};
    algo_table_free(&c, &(*rp)->t);
    algo_free(&c, *rp, 1, sizeof **rp);
    *rp = NULL;
}

const char *strata_algo_name(size_t i)
{
    const algo_spec *s = algo_spec_at(i);
    return s ? s->name : NULL;
}
