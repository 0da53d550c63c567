/*
 * The graph handle: lifecycle, versions, the write bracket with its fork
 * and fold-back, views, errors, tokens.  The design is in graph_impl.h.
 *
 * What this file owns: the versions the handle holds and the role each
 * plays — current, tx, published, bases — and moving references between
 * them.  What it does not: why.  Which state a reader gets, where a fork
 * puts the version it replaced, and everything about statements and
 * transactions is core/txn.c's, which calls this file; this file calls
 * nothing of txn.c's (it reads graph_writer_slot, the one accessor that
 * names the writer's version, and frees the journal with the handle).
 */
#include <stdio.h>
#include <string.h>

#include "core/graph_impl.h"
#include "core/wal.h"
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
    [STRATA_EINTERRUPTED] = "interrupted",
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

static void lineage_release(lineage *l)
{
    if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) != 1)
        return;
    mem_ctx *m = l->m;
    for (int k = 0; k < 3; k++)
        intern_free(&l->tokens[k]);
    intern_free(&l->labelsets);
    pbtree_pool_free(&l->spare, m);
    pthread_mutex_destroy(&l->pool_lock);
    mem_free_sized(m, l, sizeof *l);
    mem_ctx_release(m);
}

static lineage *lineage_new(void)
{
    mem_ctx *m = mem_ctx_new();
    if (!m)
        return NULL;
    lineage *l = mem_calloc(m, sizeof *l);
    if (!l) {
        mem_ctx_release(m);
        return NULL;
    }
    atomic_init(&l->refs, 1);
    atomic_init(&l->graphs, 0);
    pthread_mutex_init(&l->pool_lock, NULL);
    l->m = m;
    uint32_t empty;
    for (int k = 0; k < 3; k++)
        if (!(l->tokens[k] = intern_new(m)))
            goto fail;
    if (!(l->labelsets = intern_new(m)) || intern_add(l->labelsets, "", 0, &empty) != 0)
        goto fail;
    return l;
fail:
    lineage_release(l);
    return NULL;
}

static void catalog_release(catalog **cp)
{
    catalog *c = *cp;
    *cp = NULL;
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    struct plan_cache *plans = atomic_load(&c->plans);
    if (plans)
        c->plans_free(plans);
    if (c->import_dir)
        mem_free_sized(c->m, c->import_dir, c->import_dir_size);
    lineage *l = c->lin;
    mem_free_sized(c->m, c, sizeof *c);
    lineage_release(l);
}

/* A catalog of lineage l (taking a reference on it), with the LOAD CSV
   settings of from (NULL: the defaults). */
static catalog *catalog_new(lineage *l, const catalog *from)
{
    catalog *c = mem_calloc(l->m, sizeof *c);
    if (!c)
        return NULL;
    if (from && from->import_dir) {
        c->import_dir = mem_alloc(l->m, from->import_dir_size);
        if (!c->import_dir) {
            mem_free_sized(l->m, c, sizeof *c);
            return NULL;
        }
        memcpy(c->import_dir, from->import_dir, from->import_dir_size);
        c->import_dir_size = from->import_dir_size;
    }
    atomic_init(&c->refs, 1);
    atomic_fetch_add_explicit(&l->refs, 1, memory_order_relaxed);
    c->lin = l;
    c->m = l->m;
    for (int k = 0; k < 3; k++)
        c->tokens[k] = l->tokens[k];
    c->labelsets = l->labelsets;
    c->csv_disabled = from ? from->csv_disabled : false;
    c->csv_field_max = from ? from->csv_field_max : STRATA_CSV_FIELD_MAX;
    atomic_init(&c->query_threads, from ? atomic_load(&from->query_threads) : 0);
    return c;
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

void version_release(version **vp) { version_release_into(vp, NULL); }

void version_release_into(version **vp, const version *succ)
{
    version *v = *vp;
    *vp = NULL;
    if (!v || atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) != 1)
        return;
    catalog *c = v->cat;
    store_release_into(&v->st, succ ? &succ->st : NULL, c->m);
    labelidx_release_into(c->m, &v->labels, succ ? succ->labels : NULL);
    labelidx_release_into(c->m, &v->rel_types, succ ? succ->rel_types : NULL);
    relstats_release_into(&v->stats, succ ? &succ->stats : NULL, c->m);
    idxset_release(c->m, &v->indexes);
    mem_free_sized(c->m, v, sizeof *v);
    catalog_release(&c);
}

/* A new version of catalog cat sharing every structure with src: O(1). */
static version *version_share(const version *src, catalog *cat)
{
    version *v = mem_alloc(cat->m, sizeof *v);
    if (!v)
        return NULL;
    atomic_init(&v->refs, 1);
    v->cat = cat;
    atomic_fetch_add_explicit(&cat->refs, 1, memory_order_relaxed);
    store_share(&src->st, &v->st);
    v->labels = src->labels;
    labelidx_retain(v->labels);
    v->rel_types = src->rel_types;
    labelidx_retain(v->rel_types);
    relstats_share(&src->stats, &v->stats);
    v->indexes = src->indexes;
    idxset_retain(v->indexes);
    return v;
}

version *version_fork(const version *src) { return version_share(src, src->cat); }

size_t version_private_bytes(const version *v)
{
    return sizeof *v + store_private_bytes(&v->st) + labelidx_private_bytes(v->labels) +
           labelidx_private_bytes(v->rel_types) + relstats_private_bytes(&v->stats) +
           idxset_private_bytes(v->indexes);
}

/* A graph whose current version is v, of catalog c; takes a reference on
   c (v holds its own). */
static strata_graph *graph_make(catalog *c, version *v)
{
    strata_graph *g = mem_calloc(c->m, sizeof *g);
    if (!g)
        return NULL;
    pthread_mutex_init(&g->lock, NULL);
    g->cat = c;
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->lin->graphs, 1, memory_order_relaxed);
    g->m = c->m;
    g->current = v;
    mem_cache_init(&g->cache, g->m);
    return g;
}

/* ---- the graph ---------------------------------------------------------- */

strata_status strata_graph_new(strata_graph **out)
{
    if (!out)
        return STRATA_EINVAL;
    *out = NULL;
    lineage *l = lineage_new();
    catalog *c = l ? catalog_new(l, NULL) : NULL;
    if (l)
        lineage_release(l);   /* the catalog holds it now */
    if (!c)
        return STRATA_ENOMEM;
    version *v = mem_alloc(c->m, sizeof *v);
    strata_graph *g = v ? graph_make(c, v) : NULL;
    if (!g) {
        if (v)
            mem_free_sized(c->m, v, sizeof *v);
        catalog_release(&c);
        return STRATA_ENOMEM;
    }
    atomic_init(&v->refs, 1);
    v->cat = c;   /* the version takes the catalog's first reference */
    store_init(&v->st);
    v->labels = NULL;
    v->rel_types = NULL;
    relstats_init(&v->stats);
    v->indexes = NULL;
    *out = g;
    return STRATA_OK;
}

strata_status strata_branch(strata_view *from, strata_graph **out)
{
    if (!from || !out)
        return from ? view_fail(from, STRATA_EINVAL, "strata_branch: out is NULL")
                    : STRATA_EINVAL;
    *out = NULL;
    const catalog *src = from->ver->cat;
    catalog *c = catalog_new(src->lin, src);
    version *v = c ? version_share(from->ver, c) : NULL;
    strata_graph *g = v ? graph_make(c, v) : NULL;
    if (c)
        catalog_release(&c);   /* v and g hold it */
    if (!g) {
        version_release(&v);
        return view_fail(from, STRATA_ENOMEM, "out of memory making a branch");
    }
    *out = g;
    return STRATA_OK;
}

void strata_graph_free(strata_graph **gp)
{
    if (!gp || !*gp)
        return;
    strata_graph *g = *gp;
    *gp = NULL;
    wal_close(g);
    catalog *c = g->cat;
    version_release(&g->current);
    version_release(&g->tx);
    version_release(&g->published);
    journal_free(&g->j, c->m);
    for (size_t i = 0; i < g->nbases; i++)
        version_release(&g->bases[i]);
    mem_free_sized(c->m, g->bases, g->capbases * sizeof *g->bases);
    pbtree_pool_free(&g->pool, c->m);
    mem_cache_drain(&g->cache);
    atomic_fetch_sub_explicit(&c->lin->graphs, 1, memory_order_relaxed);
    pthread_mutex_destroy(&g->lock);
    mem_free_sized(c->m, g, sizeof *g);
    catalog_release(&c);
}

/* Step 1 of write entry: release the bases no view holds any more. */
static void fold_back(strata_graph *g)
{
    size_t keep = 0;
    for (size_t i = 0; i < g->nbases; i++) {
        version *b = g->bases[i];
        /* A base that is current again (a rolled-back statement swapped
           back to it) shares nothing with a view through us either.  The
           version written from a base is the next one in bases (itself
           released into its own successor, if going too), else the
           writer's: its copies take the base's chunks over. */
        if (atomic_load_explicit(&b->refs, memory_order_acquire) == 1 || b == g->current ||
            b == g->tx)
            version_release_into(&b, i + 1 < g->nbases ? g->bases[i + 1]
                                                       : graph_writer_version(g));
        else
            g->bases[keep++] = b;
    }
    g->nbases = keep;
}

/* The lineage's reserve of index nodes moves into this writer's pool for
   the call, and back at its end (lineage in graph_impl.h). */
static void pool_borrow(strata_graph *g)
{
    lineage *l = g->cat->lin;
    if (atomic_load_explicit(&l->graphs, memory_order_relaxed) < 2)
        return;
    pthread_mutex_lock(&l->pool_lock);
    pbtree_pool_move(&g->pool, &l->spare, PBTREE_POOL_KEEP, g->m);
    pthread_mutex_unlock(&l->pool_lock);
}

static void pool_return(strata_graph *g)
{
    lineage *l = g->cat->lin;
    if (atomic_load_explicit(&l->graphs, memory_order_relaxed) < 2)
        return;
    pthread_mutex_lock(&l->pool_lock);
    pbtree_pool_move(&l->spare, &g->pool, PBTREE_POOL_KEEP, g->m);
    pthread_mutex_unlock(&l->pool_lock);
}

version *graph_write_begin(strata_graph *g)
{
    pthread_mutex_lock(&g->lock);
    g->cache_outer = mem_cache_bind(&g->cache);
    pool_borrow(g);
    fold_back(g);
    g->fork_old = NULL;
    return graph_writer_version(g);
}

void graph_keep_base(strata_graph *g, version **vp)
{
    version *v = *vp;
    *vp = NULL;
    if (atomic_load_explicit(&v->refs, memory_order_acquire) != 1) {
        if (g->nbases == g->capbases) {
            size_t cap = g->capbases ? g->capbases * 2 : 4;
            version **b = mem_realloc_sized(g->m, g->bases, g->capbases * sizeof *b,
                                            cap * sizeof *b);
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

/* The fork itself, kept out of line so that the common case, an unshared
   version written in place, costs its caller a load and a compare (no
   register saves for a path it does not take: bench/fork_cost). */
static __attribute__((noinline)) version *fork_shared(strata_graph *g, bool to_published)
{
    version **slot = graph_writer_slot(g);
    version *cur = *slot;
    if (g->nbases == g->capbases) {
        size_t cap = g->capbases ? g->capbases * 2 : 4;
        version **b = mem_realloc_sized(g->m, g->bases, g->capbases * sizeof *b, cap * sizeof *b);
        if (!b)
            goto nomem;
        g->bases = b;
        g->capbases = cap;
    }
    version *v = version_fork(cur);
    if (!v)
        goto nomem;
    if (to_published) {
        /* The slot's reference moves to published (txn.c hands it on to
           bases or back to current when the statement ends). */
        g->published = cur;
        g->fork_published = true;
    } else {
        /* The slot's reference to the old version moves to bases. */
        g->bases[g->nbases++] = cur;
        g->fork_published = false;
    }
    g->fork_old = cur;
    *slot = v;
    return v;
nomem:
    graph_fail(g, STRATA_ENOMEM, "out of memory forking the graph for a write");
    return NULL;
}

version *graph_fork_writer(strata_graph *g, bool to_published)
{
    version *cur = graph_writer_version(g);
    if (atomic_load_explicit(&cur->refs, memory_order_acquire) == 1)
        return cur;
    return fork_shared(g, to_published);
}

version *graph_writable(strata_graph *g) { return graph_fork_writer(g, false); }

void graph_write_end(strata_graph *g)
{
    pool_return(g);
    g->fork_old = NULL;
    mem_cache_bind(g->cache_outer);
    pthread_mutex_unlock(&g->lock);
}

/* Puts back the version the failed call's fork replaced.  The fork is
   unshared (no view can be taken while the call holds the lock) and the
   old version was never written, so dropping the fork is the whole undo
   (of the graph: txn_write_finish drops the journal entries that went
   with the fork). */
static void unfork(strata_graph *g)
{
    version **slot = graph_writer_slot(g);
    version_release(slot);
    *slot = g->fork_old;
    if (g->fork_published) {
        g->published = NULL;
    } else {
        /* the call added it last: nothing else adds bases within a call */
        g->nbases--;
    }
}

void graph_write_finish(strata_graph *g, strata_status s)
{
    if (s != STRATA_OK && g->fork_old)
        unfork(g);
    graph_write_end(g);
}

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

void strata_set_query_threads(strata_graph *g, unsigned threads)
{
    if (g)
        atomic_store(&g->cat->query_threads, threads);
}

strata_status strata_cancel_new(strata_cancel **out)
{
    if (!out)
        return STRATA_EINVAL;
    strata_cancel *c = mem_alloc(mem_scratch(), sizeof *c);
    *out = c;
    if (!c)
        return STRATA_ENOMEM;
    atomic_init(&c->refs, 1);
    atomic_init(&c->requested, false);
    return STRATA_OK;
}

void strata_cancel_request(strata_cancel *c)
{
    if (c)
        atomic_store(&c->requested, true);
}

void strata_cancel_reset(strata_cancel *c)
{
    if (c)
        atomic_store(&c->requested, false);
}

bool strata_cancel_requested(const strata_cancel *c)
{
    return c && atomic_load(&c->requested);
}

strata_cancel *cancel_retain(strata_cancel *c)
{
    if (c)
        atomic_fetch_add(&c->refs, 1);
    return c;
}

void cancel_release(strata_cancel **cp)
{
    if (!cp || !*cp)
        return;
    /* acq_rel: the last owner sees every other owner's use before freeing */
    if (atomic_fetch_sub_explicit(&(*cp)->refs, 1, memory_order_acq_rel) == 1)
        mem_free_sized(mem_scratch(), *cp, sizeof **cp);
    *cp = NULL;
}

void strata_cancel_free(strata_cancel **c) { cancel_release(c); }

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
    mem_free_sized(mem_scratch(), *vp, sizeof **vp);
    *vp = NULL;
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
