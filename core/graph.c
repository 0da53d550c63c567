/* The graph handle: lifecycle, versions, fork and fold-back, snapshots,
   errors.  The design is in graph_impl.h. */
#include <stdio.h>
#include <string.h>

#include "core/graph_impl.h"
#include "storage/utf8.h"

static const char *const status_names[] = {
    [STRATA_OK] = "ok",
    [STRATA_ENOMEM] = "out of memory",
    [STRATA_EINVAL] = "invalid argument",
    [STRATA_ENOTFOUND] = "not found",
    [STRATA_ETYPE] = "wrong type",
    [STRATA_ECONNECTED] = "node still has relationships",
    [STRATA_ECONSTRAINT] = "constraint violated",
    [STRATA_EFULL] = "id space exhausted",
    [STRATA_EIO] = "input/output error",
    [STRATA_ECORRUPT] = "not a strata file, or a damaged one",
};

const char *strata_errstr(strata_status s)
{
    if ((unsigned)s < sizeof status_names / sizeof status_names[0] && status_names[s])
        return status_names[s];
    return "unknown status";
}

static void vformat(char *buf, const char *fmt, va_list ap)
{
    vsnprintf(buf, ERRMSG_MAX, fmt, ap);
}

strata_status graph_fail(strata_graph *g, strata_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vformat(g->err, fmt, ap);
    va_end(ap);
    return s;
}

strata_status view_fail(strata_view *v, strata_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vformat(v->err, fmt, ap);
    va_end(ap);
    return s;
}

const char *strata_errmsg(const strata_graph *g)
{
    return g ? g->err : "no graph handle (NULL)";
}

const char *strata_view_errmsg(const strata_view *v)
{
    return v ? v->err : "no view handle (NULL)";
}

/* ---- catalog ------------------------------------------------------------ */

static void catalog_release(catalog **cp)
{
    catalog *c = *cp;
    *cp = NULL;
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    mem_ctx *m = c->m;
    struct plan_cache *plans = atomic_load(&c->plans);
    if (plans)
        c->plans_free(plans);
    for (int k = 0; k < 3; k++)
        intern_free(&c->tokens[k]);
    intern_free(&c->labelsets);
    mem_free(m, c, sizeof *c);
    mem_ctx_release(m);
}

static catalog *catalog_new(void)
{
    mem_ctx *m = mem_ctx_new();
    if (!m)
        return NULL;
    catalog *c = mem_calloc(m, sizeof *c);
    if (!c) {
        mem_ctx_release(m);
        return NULL;
    }
    atomic_init(&c->refs, 1);
    c->m = m;
    uint32_t empty;
    for (int k = 0; k < 3; k++)
        if (!(c->tokens[k] = intern_new(m)))
            goto fail;
    if (!(c->labelsets = intern_new(m)) || intern_add(c->labelsets, "", 0, &empty) != 0)
        goto fail;
    return c;
fail:
    catalog_release(&c);
    return NULL;
}

size_t labelset_len(const catalog *c, uint32_t ls)
{
    size_t len;
    intern_name(c->labelsets, ls, &len);
    return len / sizeof(uint32_t);
}

uint32_t labelset_at(const catalog *c, uint32_t ls, size_t i)
{
    uint32_t t;
    memcpy(&t, intern_name(c->labelsets, ls, NULL) + i * sizeof t, sizeof t);
    return t;
}

/* ---- versions ----------------------------------------------------------- */

void version_retain(version *v)
{
    atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
}

void version_release(version **vp)
{
    version *v = *vp;
    *vp = NULL;
    if (!v || atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) != 1)
        return;
    catalog *c = v->cat;
    store_release(&v->st, c->m);
    labelidx_release(c->m, &v->labels);
    labelidx_release(c->m, &v->rel_types);
    idxset_release(c->m, &v->indexes);
    mem_free(c->m, v, sizeof *v);
    catalog_release(&c);
}

/* A new version sharing everything with src: O(1). */
version *version_fork(const version *src)
{
    version *v = mem_alloc(src->cat->m, sizeof *v);
    if (!v)
        return NULL;
    atomic_init(&v->refs, 1);
    v->cat = src->cat;
    atomic_fetch_add_explicit(&v->cat->refs, 1, memory_order_relaxed);
    store_share(&src->st, &v->st);
    v->labels = src->labels;
    labelidx_retain(v->labels);
    v->rel_types = src->rel_types;
    labelidx_retain(v->rel_types);
    v->indexes = src->indexes;
    idxset_retain(v->indexes);
    return v;
}

/* ---- the graph ---------------------------------------------------------- */

strata_status strata_graph_new(strata_graph **out)
{
    if (!out)
        return STRATA_EINVAL;
    *out = NULL;
    catalog *c = catalog_new();
    if (!c)
        return STRATA_ENOMEM;
    strata_graph *g = mem_calloc(c->m, sizeof *g);
    version *v = g ? mem_alloc(c->m, sizeof *v) : NULL;
    if (!v) {
        if (g)
            mem_free(c->m, g, sizeof *g);
        catalog_release(&c);
        return STRATA_ENOMEM;
    }
    atomic_init(&v->refs, 1);
    v->cat = c;   /* the version takes the catalog's first reference */
    store_init(&v->st);
    v->labels = NULL;
    v->rel_types = NULL;
    v->indexes = NULL;
    pthread_mutex_init(&g->lock, NULL);
    g->cat = c;
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    g->m = c->m;
    g->current = v;
    *out = g;
    return STRATA_OK;
}

void strata_graph_free(strata_graph **gp)
{
    if (!gp || !*gp)
        return;
    strata_graph *g = *gp;
    *gp = NULL;
    catalog *c = g->cat;
    version_release(&g->current);
    version_release(&g->tx);
    version_release(&g->published);
    journal_free(&g->j, c->m);
    for (size_t i = 0; i < g->nbases; i++)
        version_release(&g->bases[i]);
    mem_free(c->m, g->bases, g->capbases * sizeof *g->bases);
    pbtree_pool_free(&g->pool, c->m);
    pthread_mutex_destroy(&g->lock);
    mem_free(c->m, g, sizeof *g);
    catalog_release(&c);
}

/* Step 1 of write entry: release the bases no view holds any more. */
static void fold_back(strata_graph *g)
{
    size_t keep = 0;
    for (size_t i = 0; i < g->nbases; i++) {
        version *b = g->bases[i];
        /* A base that is current again (a rolled-back statement swapped
           back to it) shares nothing with a view through us either. */
        if (atomic_load_explicit(&b->refs, memory_order_acquire) == 1 || b == g->current ||
            b == g->tx)
            version_release(&b);
        else
            g->bases[keep++] = b;
    }
    g->nbases = keep;
}

version *graph_write_begin(strata_graph *g)
{
    pthread_mutex_lock(&g->lock);
    fold_back(g);
    return g->in_txn ? g->tx : g->current;
}

void graph_keep_base(strata_graph *g, version **vp)
{
    version *v = *vp;
    *vp = NULL;
    if (atomic_load_explicit(&v->refs, memory_order_acquire) != 1) {
        if (g->nbases == g->capbases) {
            size_t cap = g->capbases ? g->capbases * 2 : 4;
            version **b = mem_realloc(g->m, g->bases, g->capbases * sizeof *b, cap * sizeof *b);
            if (b) {
                g->bases = b;
                g->capbases = cap;
            }
        }
        if (g->nbases < g->capbases) {
            g->bases[g->nbases++] = v;
            return;
        }
    }
    /* Unshared, or no room to remember it (then is_forked under-reports,
       and nothing else changes: the views keep the version alive). */
    version_release(&v);
}

version *graph_writable(strata_graph *g)
{
    version **slot = g->in_txn ? &g->tx : &g->current;
    version *cur = *slot;
    if (atomic_load_explicit(&cur->refs, memory_order_acquire) == 1)
        return cur;
    if (g->nbases == g->capbases) {
        size_t cap = g->capbases ? g->capbases * 2 : 4;
        version **b = mem_realloc(g->m, g->bases, g->capbases * sizeof *b, cap * sizeof *b);
        if (!b)
            goto nomem;
        g->bases = b;
        g->capbases = cap;
    }
    version *v = version_fork(cur);
    if (!v)
        goto nomem;
    if (!g->in_txn && g->in_stmt && g->j.n == g->stmt_mark && !g->published) {
        /* The statement's first write, and a view holds the state before
           it: that state is what readers get until the statement ends (the
           graph's reference moves to published, and from there to bases
           or back to current when the statement ends). */
        g->published = cur;
    } else {
        /* The slot's reference to the old version moves to bases. */
        g->bases[g->nbases++] = cur;
    }
    *slot = v;
    return v;
nomem:
    graph_fail(g, STRATA_ENOMEM, "out of memory forking the graph for a write");
    return NULL;
}

void graph_write_end(strata_graph *g) { pthread_mutex_unlock(&g->lock); }

bool strata_is_forked(strata_graph *g)
{
    if (!g)
        return false;
    pthread_mutex_lock(&g->lock);
    bool forked = g->nbases > 0 || g->published;
    pthread_mutex_unlock(&g->lock);
    return forked;
}

void strata_interrupt(strata_graph *g)
{
    if (g)
        atomic_store(&g->cat->interrupt, true);
}

void strata_view_interrupt(strata_view *v)
{
    if (v)
        atomic_store(&v->interrupt, true);
}

strata_status strata_snapshot(strata_graph *g, strata_view **out)
{
    if (!g || !out)
        return g ? graph_fail(g, STRATA_EINVAL, "strata_snapshot: out is NULL")
                 : STRATA_EINVAL;
    strata_view *v = mem_alloc(mem_scratch(), sizeof *v);
    if (!v)
        return graph_fail(g, STRATA_ENOMEM, "out of memory taking a snapshot");
    v->err[0] = '\0';
    atomic_init(&v->interrupt, false);
    pthread_mutex_lock(&g->lock);
    /* Outside a transaction, current holds an open statement's writes once
       it has made some: readers need the state before it (NULL when
       building that ran out of memory). */
    bool mid_statement = g->in_stmt && !g->in_txn && g->j.n > g->stmt_mark;
    if (mid_statement && !g->published)
        g->published = stmt_materialize(g);
    v->ver = g->published ? g->published : mid_statement ? NULL : g->current;
    if (v->ver)
        version_retain(v->ver);
    pthread_mutex_unlock(&g->lock);
    if (!v->ver) {
        mem_free(mem_scratch(), v, sizeof *v);
        return graph_fail(g, STRATA_ENOMEM, "out of memory taking a snapshot during a statement");
    }
    *out = v;
    return STRATA_OK;
}

strata_status strata_view_clone(strata_view *v, strata_view **out)
{
    if (!v || !out)
        return STRATA_EINVAL;
    strata_view *c = mem_alloc(mem_scratch(), sizeof *c);
    if (!c) {
        snprintf(v->err, sizeof v->err, "out of memory cloning a view");
        return STRATA_ENOMEM;
    }
    c->err[0] = '\0';
    atomic_init(&c->interrupt, false);
    c->ver = v->ver;
    version_retain(c->ver);
    *out = c;
    return STRATA_OK;
}

void strata_view_release(strata_view **vp)
{
    if (!vp || !*vp)
        return;
    version_release(&(*vp)->ver);
    mem_free(mem_scratch(), *vp, sizeof **vp);
    *vp = NULL;
}

strata_status strata_memory_stats(strata_graph *g, strata_memstats *out)
{
    if (!g || !out)
        return g ? graph_fail(g, STRATA_EINVAL, "strata_memory_stats: out is NULL")
                 : STRATA_EINVAL;
    pthread_mutex_lock(&g->lock);
    /* Counts describe the last committed state, as a snapshot would. */
    const store *s = g->published ? &g->published->st : &g->current->st;
    out->graph_bytes = mem_ctx_bytes(g->m);
    out->nodes = s->node_live;
    out->relationships = s->rel_live;
    out->node_slots = store_node_slots(s);
    out->rel_slots = store_rel_slots(s);
    if (!g->published && g->in_stmt && !g->in_txn)
        *out = (strata_memstats){ out->graph_bytes, g->stmt_counts[0], g->stmt_counts[1],
                                  g->stmt_counts[2], g->stmt_counts[3] };
    pthread_mutex_unlock(&g->lock);
    return STRATA_OK;
}

/* ---- tokens -------------------------------------------------------------- */

static const char *const kind_names[] = { "label", "relationship type", "property key" };

static int valid_kind(strata_token_kind k) { return k >= STRATA_LABEL && k <= STRATA_KEY; }

strata_status strata_token_intern(strata_graph *g, strata_token_kind kind, const char *name,
                                  strata_token *out)
{
    if (!g)
        return STRATA_EINVAL;
    if (!name || !out || !valid_kind(kind))
        return graph_fail(g, STRATA_EINVAL, "strata_token_intern: %s",
                          !valid_kind(kind) ? "unknown token kind" : "name or out is NULL");
    size_t len = strlen(name);
    if (len == 0 || len > 65535)
        return graph_fail(g, STRATA_EINVAL, "a %s name must be 1 to 65535 bytes, not %zu",
                          kind_names[kind], len);
    size_t bad;
    if (!utf8_check(name, len, &bad))
        return graph_fail(g, STRATA_EINVAL,
                          "strata_token_intern: a %s name must be valid UTF-8 (byte %zu is not)",
                          kind_names[kind], bad + 1);
    if (intern_add(g->cat->tokens[kind], name, len, out) != 0)
        return graph_fail(g, STRATA_ENOMEM, "out of memory interning %s '%s'",
                          kind_names[kind], name);
    return STRATA_OK;
}

strata_status strata_token_lookup(strata_view *v, strata_token_kind kind, const char *name,
                                  strata_token *out)
{
    if (!v)
        return STRATA_EINVAL;
    if (!name || !out || !valid_kind(kind))
        return view_fail(v, STRATA_EINVAL, "strata_token_lookup: %s",
                         !valid_kind(kind) ? "unknown token kind" : "name or out is NULL");
    size_t bad;
    if (!utf8_check(name, strlen(name), &bad))
        return view_fail(v, STRATA_EINVAL,
                         "strata_token_lookup: a %s name must be valid UTF-8 (byte %zu is not)",
                         kind_names[kind], bad + 1);
    if (intern_find(v->ver->cat->tokens[kind], name, strlen(name), out) != 0)
        return view_fail(v, STRATA_ENOTFOUND, "no %s named '%s'", kind_names[kind], name);
    return STRATA_OK;
}

strata_status strata_token_name(strata_view *v, strata_token_kind kind, strata_token tok,
                                const char **name)
{
    if (!v)
        return STRATA_EINVAL;
    if (!name || !valid_kind(kind))
        return view_fail(v, STRATA_EINVAL, "strata_token_name: %s",
                         !valid_kind(kind) ? "unknown token kind" : "name is NULL");
    *name = intern_name(v->ver->cat->tokens[kind], tok, NULL);
    if (!*name)
        return view_fail(v, STRATA_ENOTFOUND, "no %s with token %u", kind_names[kind], tok);
    return STRATA_OK;
}

uint32_t strata_token_count(strata_view *v, strata_token_kind kind)
{
    if (!v || !valid_kind(kind))
        return 0;
    return intern_count(v->ver->cat->tokens[kind]);
}
