/*
 * Comparing a view with a reference model (support/model.h): what
 * "Equals" means for every model test (test_model.c, test_txn_model.c,
 * test_branch_model.c), parameterised by the token source, since a test's
 * model names labels, types and keys by their model numbers and the
 * tokens behind them are the run's (model.h) or a lineage's (branches).
 *
 * Compared always: counts, existence, labels (listed and has_label),
 * properties of the first T->nkeys keys (and that no other key is set),
 * relationship endpoints and types; every node's neighbours per direction
 * and type as sets, with degrees; label and type scans; and per index its
 * definition, entry count, depth (at most LSTACK_CAP), and a lookup of
 * every key value present plus an absent one.  On request (checks):
 *   COMPARE_ORDER   every node's neighbours per direction in iteration
 *                   order (by type, then by relationship id);
 *   COMPARE_RANGES  random integer ranges over single-key indices (drawn
 *                   from r->check_rng) and a range index's whole integer
 *                   scan in order.
 *
 * Include after support/model.h, once the test's run type is defined: it
 * needs the fields where, check_rng and views_compared, and
 *   static void mismatch(const run *r, const char *fmt, ...);
 * which stops the test with the seed, step and r->where.
 */
#ifndef STRATA_TESTS_MODEL_COMPARE_H
#define STRATA_TESTS_MODEL_COMPARE_H

#include "index/level_stack.h"

enum { COMPARE_ORDER = 1, COMPARE_RANGES = 2 };

/* The token of index d's label or type. */
static inline strata_token model_index_token(const model_tokens *T, const mindex *d)
{
    return d->on_rels ? T->type[d->token] : T->label[d->token];
}

/* Drains and frees an iterator; returns the count (ids past cap are
   counted, not stored).  A runaway iterator stops at 4 * cap. */
static inline size_t drain(strata_node_iter *it, strata_id *ids, size_t cap)
{
    size_t n = 0;
    strata_id id;
    while (n < 4 * cap && strata_node_iter_next(it, &id)) {
        if (n < cap)
            ids[n] = id;
        n++;
    }
    strata_node_iter_free(&it);
    return n;
}

static inline void ids_text(const strata_id *ids, size_t n, size_t cap, char *buf, size_t len)
{
    size_t w = (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < n && i < cap && w < len; i++)
        w += (size_t)snprintf(buf + w, len - w, "%s%" PRIu64, i ? " " : "", ids[i]);
    if (w < len)
        snprintf(buf + w, len - w, "%s]", n > cap ? " ..." : "");
}

/* got came from drain(..., MAX_IDS): ngot may exceed what it stores. */
static inline void expect_ids(run *r, const char *what, const strata_id *got, size_t ngot,
                              const strata_id *want, size_t nwant)
{
    if (ngot == nwant && memcmp(got, want, nwant * sizeof *want) == 0)
        return;
    char g[512], w[512];
    ids_text(got, ngot, MAX_IDS, g, sizeof g);
    ids_text(want, nwant, nwant, w, sizeof w);
    mismatch(r, "%s: got %zu ids %s, the model has %zu %s", what, ngot, g, nwant, w);
}

static inline void compare_props(run *r, strata_view *v, const model_tokens *T, bool rel,
                                 uint32_t id, const mval *props)
{
    const char *what = rel ? "relationship" : "node";
    strata_token keys[NKEYS + 4], want_keys[NKEYS];
    size_t n = 0, nwant = 0;
    for (uint32_t k = 0; k < NKEYS; k++)   /* model keys are in token order */
        if (props[k].kind != MV_NONE)
            want_keys[nwant++] = T->key[k];
    strata_status s = rel ? strata_rel_keys(v, id, keys, NKEYS + 4, &n)
                          : strata_node_keys(v, id, keys, NKEYS + 4, &n);
    if (s != STRATA_OK)
        mismatch(r, "%s %u keys: %s", what, id, strata_errstr(s));
    if (n != nwant || memcmp(keys, want_keys, n * sizeof *keys) != 0)
        mismatch(r, "%s %u has %zu property keys, the model %zu", what, id, n, nwant);
    for (uint32_t k = 0; k < T->nkeys; k++) {
        strata_value *got = NULL;
        s = rel ? strata_rel_get(v, id, T->key[k], &got) : strata_node_get(v, id, T->key[k], &got);
        if (s != STRATA_OK)
            mismatch(r, "%s %u get property %u: %s", what, id, k, strata_errstr(s));
        if (!api_matches(got, &props[k])) {
            char a[64], b[64];
            api_text(got, a, sizeof a);
            strata_value_free(&got);
            mismatch(r, "%s %u property %u is %s, the model has %s", what, id, k, a,
                     mval_text(&props[k], b, sizeof b));
        }
        strata_value_free(&got);
    }
}

static inline void compare_node(run *r, strata_view *v, const model_tokens *T, const model *m,
                                uint32_t id)
{
    bool alive = m->node[id].alive;
    if (strata_node_exists(v, id) != alive)
        mismatch(r, "node %u %s, the model says it %s", id,
                 alive ? "does not exist" : "exists", alive ? "does" : "does not");
    if (!alive)
        return;
    strata_token labels[NLABELS + 4], want[NLABELS];
    size_t n = 0, nwant = 0;
    for (uint32_t l = 0; l < NLABELS; l++)   /* model labels are in token order */
        if (m->node[id].labels >> l & 1)
            want[nwant++] = T->label[l];
    strata_status s = strata_node_labels(v, id, labels, NLABELS + 4, &n);
    if (s != STRATA_OK || n != nwant || memcmp(labels, want, n * sizeof *labels) != 0)
        mismatch(r, "node %u has %zu labels (%s), the model %zu (mask %#x)", id, n,
                 strata_errstr(s), nwant, m->node[id].labels);
    for (uint32_t l = 0; l < NLABELS; l++) {
        bool on = false;
        s = strata_node_has_label(v, id, T->label[l], &on);
        if (s != STRATA_OK || on != (bool)(m->node[id].labels >> l & 1))
            mismatch(r, "node %u has_label %u says %d (%s)", id, l, on, strata_errstr(s));
    }
    compare_props(r, v, T, false, id, m->node[id].props);
}

static inline void compare_rel(run *r, strata_view *v, const model_tokens *T, const model *m,
                               uint32_t id)
{
    const mrel *e = &m->rel[id];
    if (strata_rel_exists(v, id) != e->alive)
        mismatch(r, "relationship %u %s, the model says it %s", id,
                 e->alive ? "does not exist" : "exists", e->alive ? "does" : "does not");
    if (!e->alive)
        return;
    strata_id start = UINT64_MAX, end = UINT64_MAX;
    strata_token type = UINT32_MAX;
    strata_status s = strata_rel_info(v, id, &start, &end, &type);
    if (s != STRATA_OK || start != e->start || end != e->end || type != T->type[e->type])
        mismatch(r, "relationship %u is %" PRIu64 " -[%u]-> %" PRIu64 " (%s), the model has "
                 "%u -[%u]-> %u", id, start, type, end, strata_errstr(s), e->start,
                 T->type[e->type], e->end);
    compare_props(r, v, T, true, id, e->props);
}

static inline void compare_scans(run *r, strata_view *v, const model_tokens *T, const model *m)
{
    strata_id got[MAX_IDS], want[MAX_IDS];
    strata_node_iter *it = NULL;
    char what[64];
    size_t nwant = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (m->node[id].alive)
            want[nwant++] = id;
    if (strata_nodes(v, &it) != STRATA_OK)
        mismatch(r, "strata_nodes failed: %s", strata_view_errmsg(v));
    expect_ids(r, "strata_nodes", got, drain(it, got, MAX_IDS), want, nwant);
    for (uint32_t l = 0; l < NLABELS; l++) {
        nwant = 0;
        for (uint32_t id = 0; id < MAX_IDS; id++)
            if (m->node[id].alive && (m->node[id].labels >> l & 1))
                want[nwant++] = id;
        if (strata_nodes_by_label(v, T->label[l], &it) != STRATA_OK)
            mismatch(r, "strata_nodes_by_label failed: %s", strata_view_errmsg(v));
        snprintf(what, sizeof what, "nodes with label %u", l);
        expect_ids(r, what, got, drain(it, got, MAX_IDS), want, nwant);
    }
    for (uint32_t t = 0; t < NTYPES; t++) {
        nwant = 0;
        for (uint32_t id = 0; id < MAX_IDS; id++)
            if (m->rel[id].alive && m->rel[id].type == t)
                want[nwant++] = id;
        if (strata_rels_by_type(v, T->type[t], &it) != STRATA_OK)
            mismatch(r, "strata_rels_by_type failed: %s", strata_view_errmsg(v));
        snprintf(what, sizeof what, "relationships of type %u", t);
        expect_ids(r, what, got, drain(it, got, MAX_IDS), want, nwant);
    }
}

typedef struct edge {
    strata_id rel, other;
} edge;

static inline int edge_cmp(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->rel != y->rel)
        return x->rel < y->rel ? -1 : 1;
    return (x->other > y->other) - (x->other < y->other);
}

static inline void edges_text(const edge *e, size_t n, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0, o = 0; i < n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, " (r%" PRIu64 ",n%" PRIu64 ")", e[i].rel,
                              e[i].other);
}

/* The model's neighbours of n as a sorted set: BOTH reports a self-loop
   once. */
static inline size_t model_edges(const model *m, uint32_t n, strata_direction dir, int type,
                                 edge *out)
{
    size_t k = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        const mrel *e = &m->rel[id];
        if (!e->alive || (type >= 0 && e->type != (uint32_t)type))
            continue;
        if ((dir & STRATA_OUT) && e->start == n)
            out[k++] = (edge){ id, e->end };
        else if ((dir & STRATA_IN) && e->end == n)
            out[k++] = (edge){ id, e->start };
    }
    qsort(out, k, sizeof *out, edge_cmp);
    return k;
}

/* The neighbours v reports for node n, in iteration order (at most
   MAX_EDGES: a runaway iterator shows as a count the model cannot have). */
static inline size_t view_edges(run *r, strata_view *v, uint32_t n, strata_direction dir,
                                strata_token type, edge *out)
{
    strata_edge_iter *it = NULL;
    if (strata_neighbours(v, n, dir, type, &it) != STRATA_OK)
        mismatch(r, "strata_neighbours of node %u: %s", n, strata_view_errmsg(v));
    size_t k = 0;
    edge e;
    while (k < MAX_EDGES && strata_edge_iter_next(it, &e.rel, &e.other))
        out[k++] = e;
    strata_edge_iter_free(&it);
    return k;
}

/* The message's subject (fmt) is formatted only on a mismatch: this runs
   for every node of every view compared. */
static inline void expect_edges(run *r, const edge *got, size_t ngot, const edge *want,
                                size_t nwant, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static inline void expect_edges(run *r, const edge *got, size_t ngot, const edge *want,
                                size_t nwant, const char *fmt, ...)
{
    if (ngot == nwant && memcmp(got, want, nwant * sizeof *want) == 0)
        return;
    char what[128], g[512], w[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    edges_text(got, ngot, g, sizeof g);
    edges_text(want, nwant, w, sizeof w);
    mismatch(r, "%s:%s; the model has%s", what, g, w);
}

/* The neighbours of n per direction (out, in, both) and type (any, each),
   as sets, and the degree of each. */
static inline void compare_neighbour_sets(run *r, strata_view *v, const model_tokens *T,
                                          const model *m, uint32_t n)
{
    static const strata_direction dirs[] = { STRATA_OUT, STRATA_IN, STRATA_BOTH };
    static const char *const dir_names[] = { "", "out", "in", "both" };
    for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++)
        for (int t = -1; t < NTYPES; t++) {
            strata_token tok = t < 0 ? STRATA_ANY_TYPE : T->type[t];
            edge got[MAX_EDGES], want[MAX_EDGES];
            size_t nwant = model_edges(m, n, dirs[d], t, want);
            size_t ngot = view_edges(r, v, n, dirs[d], tok, got);
            qsort(got, ngot, sizeof *got, edge_cmp);
            expect_edges(r, got, ngot, want, nwant, "neighbours of node %u, direction %s, type %d",
                         n, dir_names[dirs[d]], t);
            uint64_t deg = UINT64_MAX;
            if (strata_node_degree(v, n, dirs[d], tok, &deg) != STRATA_OK || deg != nwant)
                mismatch(r, "degree of node %u, direction %s, type %d is %" PRIu64
                         ", the model %zu", n, dir_names[dirs[d]], t, deg, nwant);
        }
}

/* The neighbours of n in one direction in iteration order: segments by
   type, each by relationship id (whether the node's block is flat or
   trees; a rollback must restore them exactly). */
static inline void compare_neighbour_order(run *r, strata_view *v, const model *m, uint32_t n,
                                           bool out)
{
    edge want[MAX_EDGES], got[MAX_EDGES];
    size_t nwant = 0;
    for (uint32_t t = 0; t < NTYPES; t++) {
        uint32_t ids[MAX_IDS];
        uint32_t k = segment_rels(m, n, t, out, false, ids);
        for (uint32_t i = 0; i < k; i++)
            want[nwant++] = (edge){ ids[i], out ? m->rel[ids[i]].end : m->rel[ids[i]].start };
    }
    size_t ngot = view_edges(r, v, n, out ? STRATA_OUT : STRATA_IN, STRATA_ANY_TYPE, got);
    expect_edges(r, got, ngot, want, nwant, "%s neighbours of node %u in iteration order",
                 out ? "outgoing" : "incoming", n);
}

static inline void key_text(const mindex *d, const mval *key, char *buf, size_t n)
{
    char a[64], b[64];
    if (d->nkeys == 1)
        snprintf(buf, n, "%s", mval_text(&key[0], a, sizeof a));
    else
        snprintf(buf, n, "[%s, %s]", mval_text(&key[0], a, sizeof a),
                 mval_text(&key[1], b, sizeof b));
}

/* strata_index_lookup of key must return exactly the model's holders, in
   id order. */
static inline void compare_lookup(run *r, strata_view *v, const model *m, const mindex *d,
                                  const mval *key)
{
    strata_id want[MAX_IDS], got[MAX_IDS];
    size_t nwant = 0;
    mval k[MAX_PARTS];
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (model_key(m, d, id, k) && keys_eq(d, k, key))
            want[nwant++] = id;
    strata_value *parts[MAX_PARTS] = { NULL, NULL };
    for (uint32_t i = 0; i < d->nkeys; i++)
        parts[i] = mval_to_api(&key[i]);
    strata_node_iter *it = NULL;
    strata_status s =
        strata_index_lookup(v, d->id, (const strata_value *const *)parts, d->nkeys, &it);
    /* The key is borrowed for the call only: free it before iterating. */
    for (uint32_t i = 0; i < d->nkeys; i++)
        strata_value_free(&parts[i]);
    char kt[160], what[256];
    key_text(d, key, kt, sizeof kt);
    snprintf(what, sizeof what, "lookup of %s in index %u", kt, d->id);
    if (s != STRATA_OK)
        mismatch(r, "%s: %s (%s)", what, strata_errstr(s), strata_view_errmsg(v));
    expect_ids(r, what, got, drain(it, got, MAX_IDS), want, nwant);
}

/* An integer range: has_lo or has_hi false leaves that end open. */
typedef struct int_range {
    bool has_lo, lo_incl, has_hi, hi_incl;
    int64_t lo, hi;
} int_range;

/* Range q over a single-key index must return the model's entities with an
   integer key inside it, in (value, id) order; strings are never in an
   integer range. */
static inline void compare_range(run *r, strata_view *v, const model *m, const mindex *d,
                                 int_range q)
{
    strata_id want[MAX_IDS], got[MAX_IDS];
    size_t nwant = 0;
    for (int64_t val = -1; val <= INT_RANGE; val++)   /* ascending value, then id */
        for (uint32_t id = 0; id < MAX_IDS; id++) {
            mval k[MAX_PARTS];
            if (!model_key(m, d, id, k) || k[0].kind != MV_INT || k[0].i != val)
                continue;
            if (q.has_lo && (val < q.lo || (val == q.lo && !q.lo_incl)))
                continue;
            if (q.has_hi && (val > q.hi || (val == q.hi && !q.hi_incl)))
                continue;
            want[nwant++] = id;
        }
    strata_value *lov = q.has_lo ? strata_value_int(q.lo) : NULL;
    strata_value *hiv = q.has_hi ? strata_value_int(q.hi) : NULL;
    strata_node_iter *it = NULL;
    strata_status s = strata_index_range(v, d->id, lov, q.lo_incl, hiv, q.hi_incl, &it);
    strata_value_free(&lov);
    strata_value_free(&hiv);
    char what[160];
    snprintf(what, sizeof what, "range %s%s%" PRId64 ", %" PRId64 "%s%s in index %u",
             q.has_lo ? "" : "(open) ", q.lo_incl ? "[" : "(", q.lo, q.hi, q.hi_incl ? "]" : ")",
             q.has_hi ? "" : " (open)", d->id);
    if (s != STRATA_OK)
        mismatch(r, "%s: %s (%s)", what, strata_errstr(s), strata_view_errmsg(v));
    expect_ids(r, what, got, drain(it, got, MAX_IDS), want, nwant);
}

static inline int64_t random_bound(run *r)
{
    return (int64_t)below(&r->check_rng, INT_RANGE + 2) - 1;
}

static inline int_range random_range(run *r)
{
    int_range q;
    q.has_lo = chance(&r->check_rng, 75);
    q.has_hi = !q.has_lo || chance(&r->check_rng, 75);
    q.lo = random_bound(r);
    q.hi = random_bound(r);
    q.lo_incl = chance(&r->check_rng, 50);
    q.hi_incl = chance(&r->check_rng, 50);
    return q;
}

/* Compares index d; returns its depth. */
static inline uint32_t compare_index(run *r, strata_view *v, const model_tokens *T,
                                     const model *m, const mindex *d, unsigned checks)
{
    strata_index_info info;
    strata_status s = strata_index_info_get(v, d->id, &info);
    if (s != STRATA_OK)
        mismatch(r, "index %u info: %s (%s)", d->id, strata_errstr(s), strata_view_errmsg(v));
    mval keys[MAX_IDS][MAX_PARTS];
    uint32_t nkeys = 0, entries = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        if (!model_key(m, d, id, keys[nkeys]))
            continue;
        entries++;
        bool seen = false;
        for (uint32_t j = 0; j < nkeys && !seen; j++)
            seen = keys_eq(d, keys[j], keys[nkeys]);
        nkeys += !seen;
    }
    bool keys_ok = info.nkeys == d->nkeys;
    for (uint32_t k = 0; keys_ok && k < d->nkeys; k++)
        keys_ok = info.keys[k] == T->key[d->keys[k]];
    if (info.kind != d->kind || info.relationships != d->on_rels ||
        info.token != model_index_token(T, d) || !keys_ok)
        mismatch(r, "index %u is a %d index on %s token %u with %zu keys, not the model's",
                 d->id, (int)info.kind, info.relationships ? "type" : "label", info.token,
                 info.nkeys);
    if (info.entries != entries)
        mismatch(r, "index %u holds %" PRIu64 " entries, the model %u", d->id, info.entries,
                 entries);
    if (info.depth > LSTACK_CAP)
        mismatch(r, "index %u has depth %u, above the cap %d", d->id, info.depth, LSTACK_CAP);
    for (uint32_t j = 0; j < nkeys; j++)
        compare_lookup(r, v, m, d, keys[j]);
    mval absent[MAX_PARTS] = { mv_int(ABSENT_INT), mv_int(ABSENT_INT) };
    compare_lookup(r, v, m, d, absent);
    if (d->nkeys == 1 && (checks & COMPARE_RANGES)) {
        for (int i = 0; i < 2; i++)
            compare_range(r, v, m, d, random_range(r));
        if (d->kind == STRATA_INDEX_RANGE)   /* every integer key, in order */
            compare_range(r, v, m, d, (int_range){ .has_lo = true, .lo = -1, .lo_incl = true });
    }
    return info.depth;
}

/* Compares every index; returns the depth of the deepest. */
static inline uint32_t compare_indexes(run *r, strata_view *v, const model_tokens *T,
                                       const model *m, unsigned checks)
{
    strata_index ids[MAX_INDEXES + 4];
    size_t n = 0;
    strata_status s = strata_indexes(v, ids, MAX_INDEXES + 4, &n);
    if (s != STRATA_OK || n != m->nidx)
        mismatch(r, "the view lists %zu indices (%s), the model %u", n, strata_errstr(s),
                 m->nidx);
    for (uint32_t i = 0; i < m->nidx; i++) {
        bool listed = false;
        for (size_t j = 0; j < n && !listed; j++)
            listed = ids[j] == m->idx[i].id;
        if (!listed)
            mismatch(r, "index %u is not listed by strata_indexes", m->idx[i].id);
    }
    uint32_t deepest = 0;
    for (uint32_t i = 0; i < m->nidx; i++) {
        uint32_t depth = compare_index(r, v, T, m, &m->idx[i], checks);
        if (depth > deepest)
            deepest = depth;
    }
    return deepest;
}

/* Checks that v shows exactly m, its tokens T (see "Equals" above), and
   that strata_integrity_check passes on it; returns the depth of its
   deepest index.  checks adds COMPARE_ORDER and COMPARE_RANGES.  r->where
   names v in the messages. */
static inline uint32_t model_compare_view(run *r, strata_view *v, const model_tokens *T,
                                          const model *m, unsigned checks)
{
    strata_status s = strata_integrity_check(v);
    if (s != STRATA_OK)
        mismatch(r, "strata_integrity_check: %s (%s)", strata_errstr(s), strata_view_errmsg(v));
    if (strata_node_count(v) != m->nodes.live || strata_rel_count(v) != m->rels.live)
        mismatch(r, "%" PRIu64 " nodes and %" PRIu64 " relationships, the model has %u and %u",
                 strata_node_count(v), strata_rel_count(v), m->nodes.live, m->rels.live);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        compare_node(r, v, T, m, id);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        compare_rel(r, v, T, m, id);
    compare_scans(r, v, T, m);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (m->node[id].alive) {
            compare_neighbour_sets(r, v, T, m, id);
            if (checks & COMPARE_ORDER) {
                compare_neighbour_order(r, v, m, id, true);
                compare_neighbour_order(r, v, m, id, false);
            }
        }
    uint32_t deepest = compare_indexes(r, v, T, m, checks);
    r->views_compared++;
    return deepest;
}

#endif
