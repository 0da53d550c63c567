/*
 * op_shortest — shortestPath and allShortestPaths by breadth-first search.
 *
 * A shortest-path part `p = shortestPath((a)-[r:T*min..max]->(b))` is
 * searched breadth first when
 *   1. its minimum length is 0 or 1 (a longer minimum is not a
 *      shortest-path problem: the path may not be a shortest one between
 *      its ends),
 *   2. r is not bound before the part (a bound list is followed as is),
 *   3. every WHERE conjunct that names p or r is a universal path
 *      predicate, `all(x IN nodes(p) WHERE q)`, `none(x IN
 *      relationships(p) WHERE q)` (or `rels(p)`, or `x IN r`) with q
 *      naming only x: such a predicate holds for a path exactly when it
 *      holds for each of its nodes (relationships), so it filters them
 *      while searching and the result is the shortest paths among those
 *      that satisfy it — as if the search ran over the subgraph it keeps.
 * Otherwise op_match.c deepens a depth-first walk one length at a time and
 * checks WHERE on each path as it is found (the fallback; exponential in
 * the length on dense graphs).  Conjuncts that name neither p nor r are
 * checked after the search, which gives the same rows: they depend on the
 * ends, not on the path chosen between them.
 *
 * The search:
 *   - one end bound (or each start candidate in turn): one search from it,
 *     layer by layer; after each layer every newly reached node that
 *     passes the end node's pattern gets its paths emitted, so a LIMIT
 *     downstream stops the search;
 *   - both ends bound: a search from each end (the second against the
 *     relationships' direction), the one with the smaller frontier
 *     expanding a whole layer at a time, until a layer reaches nodes the
 *     other side has seen: the shortest length is then the least sum of
 *     the two distances over those nodes, and every shortest path passes
 *     through exactly one of them.
 * Each side keeps, per node seen, its distance and the list of
 * (relationship, predecessor) pairs one layer nearer its root — the
 * layered predecessor graph.  shortestPath emits its first chain;
 * allShortestPaths enumerates every chain (forward × backward), an
 * odometer over the predecessor lists, so memory is the nodes and
 * relationships visited and time the visits plus the paths emitted.
 * Relationships bound by other parts of the MATCH are skipped
 * (uniqueness); a shortest path never repeats a node, so it never
 * repeats a relationship.  Everything lives on the heap (walk_stack.h)
 * through the query's allocator, and the search checks strata_interrupt
 * every 1024 nodes expanded.
 */
#include <string.h>
#include <strings.h>

#include "query/match_walk.h"

/* ---- which parts qualify ---- */

typedef struct path_names {
    const cypher_ast_str *path, *rel;   /* either may be NULL */
} path_names;

static bool is_name(const cypher_ast_node *v, const cypher_ast_str *name)
{
    return name && v && v->kind == CYPHER_AST_VARIABLE && v->u.name.len == name->len &&
           memcmp(v->u.name.ptr, name->ptr, name->len) == 0;
}

typedef struct mention {
    const cypher_ast_str *a, *b;        /* names looked for */
    bool others;                        /* or: any variable but a and b */
    bool found;
} mention;

static int find_mention(const cypher_ast_node *n, void *ctx)
{
    mention *m = ctx;
    if (n->kind == CYPHER_AST_VARIABLE) {
        if ((is_name(n, m->a) || is_name(n, m->b)) != m->others)
            m->found = true;
    } else if (m->others && (n->kind == CYPHER_AST_EXISTS || n->kind == CYPHER_AST_PATH ||
                           n->kind == CYPHER_AST_PATTERN_COMPREHENSION)) {
        m->found = true;   /* patterns bind names of their own: not per element */
    }
    return m->found ? 1 : cypher_ast_each_child(n, find_mention, ctx);
}

static bool mentions_path(const cypher_ast_node *e, const path_names *pn)
{
    mention m = {pn->path, pn->rel, false, false};
    find_mention(e, &m);
    return m.found;
}

/* A universal path predicate over p's nodes or relationships (or r's),
   its test naming only its own variable; *on_nodes tells which. */
static bool universal_predicate(const cypher_ast_node *e, const path_names *pn, bool *on_nodes)
{
    if (e->kind != CYPHER_AST_QUANTIFIER || !e->u.comprehension.where ||
        (e->u.comprehension.quantifier != CYPHER_QUANT_ALL &&
         e->u.comprehension.quantifier != CYPHER_QUANT_NONE))
        return false;
    const cypher_ast_node *src = e->u.comprehension.source;
    if (is_name(src, pn->rel)) {
        *on_nodes = false;
    } else if (src->kind == CYPHER_AST_FUNCTION && src->u.function.args.count == 1 &&
               !src->u.function.distinct && is_name(src->u.function.args.items[0], pn->path)) {
        const cypher_ast_str *f = &src->u.function.name;
        if (f->len == 5 && strncasecmp(f->ptr, "nodes", 5) == 0)
            *on_nodes = true;
        else if ((f->len == 13 && strncasecmp(f->ptr, "relationships", 13) == 0) ||
                 (f->len == 4 && strncasecmp(f->ptr, "rels", 4) == 0))
            *on_nodes = false;
        else
            return false;
    } else {
        return false;
    }
    mention m = {&e->u.comprehension.variable->u.name, NULL, true, false};
    find_mention(e->u.comprehension.where, &m);
    return !m.found;
}

#define MAX_FILTERS 16

typedef struct path_filter {
    const cypher_ast_node *q;           /* the QUANTIFIER */
    bool on_nodes;
} path_filter;

/* Calls each conjunct of e (AND trees) until one returns false. */
static bool each_conjunct(const cypher_ast_node *e, const path_names *pn, path_filter *f,
                          size_t *nf)
{
    if (e->kind == CYPHER_AST_BINARY && e->u.binary.op == CYPHER_OP_AND)
        return each_conjunct(e->u.binary.lhs, pn, f, nf) &&
               each_conjunct(e->u.binary.rhs, pn, f, nf);
    if (!mentions_path(e, pn))
        return true;   /* checked after the search */
    bool on_nodes;
    if (*nf == MAX_FILTERS || !universal_predicate(e, pn, &on_nodes))
        return false;
    f[(*nf)++] = (path_filter){e, on_nodes};
    return true;
}

static bool bfs_static_ok(const cypher_ast_node *part, const cypher_ast_node *where,
                          path_filter *f, size_t *nf)
{
    *nf = 0;
    if (part->u.part.kind == CYPHER_PATH_PLAIN || part->u.part.path->u.list.count != 3)
        return false;
    const cypher_ast_node *r = part->u.part.path->u.list.items[1];
    if (!r->u.rel.var_length || (r->u.rel.has_min && r->u.rel.min > 1))
        return false;
    path_names pn = {part->u.part.variable ? &part->u.part.variable->u.name : NULL,
                     r->u.rel.variable ? &r->u.rel.variable->u.name : NULL};
    return !where || each_conjunct(where, &pn, f, nf);
}

/* The WHERE conjuncts that name no variable but the part's end nodes (at
   most MAX_FILTERS).  They filter the rows after the search anyway;
   checking them on each node reached before its paths are enumerated
   saves enumerating paths that would be dropped. */
static void end_conjuncts(const cypher_ast_node *e, const cypher_ast_str *a,
                          const cypher_ast_str *b, const cypher_ast_node **out, size_t *n)
{
    if (e->kind == CYPHER_AST_BINARY && e->u.binary.op == CYPHER_OP_AND) {
        end_conjuncts(e->u.binary.lhs, a, b, out, n);
        end_conjuncts(e->u.binary.rhs, a, b, out, n);
        return;
    }
    mention m = {a, b, true, false};
    find_mention(e, &m);
    if (!m.found && *n < MAX_FILTERS)
        out[(*n)++] = e;
}

bool shortest_bfs_applies(const walk *w)
{
    path_filter f[MAX_FILTERS];
    size_t nf;
    const cypher_ast_node *r = w->el[1];
    return bfs_static_ok(w->part, w->where, f, &nf) &&
           !walk_slot_bound(w, walk_var_slot(w, r, false));
}

const char *shortest_plan_name(const cypher_ast_node *part, const cypher_ast_node *where,
                               bool both_ends_bound, bool rel_bound)
{
    path_filter f[MAX_FILTERS];
    size_t nf;
    if (part->u.part.kind == CYPHER_PATH_PLAIN)
        return NULL;
    bool all = part->u.part.kind == CYPHER_PATH_ALL_SHORTEST;
    if (rel_bound || !bfs_static_ok(part, where, f, &nf))
        return all ? "AllShortestPaths (depth-first, deepening)"
                   : "ShortestPath (depth-first, deepening)";
    if (both_ends_bound)
        return all ? "AllShortestPaths (bidirectional BFS)" : "ShortestPath (bidirectional BFS)";
    return all ? "AllShortestPaths (BFS)" : "ShortestPath (BFS)";
}

/* ---- the search ---- */

#define NO_PRED UINT32_MAX
#define REJECTED UINT32_MAX             /* seen, failed a node filter */

typedef struct bfs_node {
    uint64_t id;
    uint32_t dist;
    uint32_t pred;                      /* first predecessor, or NO_PRED */
} bfs_node;

typedef struct bfs_pred {
    uint64_t rel;
    uint32_t from;                      /* node index, one layer nearer */
    uint32_t next;                      /* next predecessor, or NO_PRED */
} bfs_pred;

typedef struct bfs_side {
    strata_direction dir;
    id_index seen;                        /* node id -> index, or REJECTED */
    bfs_node *nodes;
    size_t n, cap;
    bfs_pred *preds;
    size_t npreds, cappreds;
    size_t layer;                       /* nodes[layer..n) are the frontier */
    uint32_t depth;                     /* their distance */
} bfs_side;

typedef struct search {
    walk *w;
    size_t i;                           /* the relationship element */
    const cypher_ast_node *r;
    bool all;
    int64_t min, max;
    bool has_max;
    path_filter f[MAX_FILTERS];
    size_t nf;
    const cypher_ast_node *endq[MAX_FILTERS];   /* end_conjuncts */
    size_t nendq;
    long end_slot;                      /* the end node's free slot, or -1 */
    size_t expanded;                    /* nodes expanded, for interrupts */
    bfs_side fw, bw;
    uint32_t *choice;                   /* odometer: fw then bw positions */
    size_t capchoice;
} search;

static void side_free(mem_ctx *m, bfs_side *s)
{
    id_index_free(m, &s->seen);
    if (s->nodes)
        mem_free(m, s->nodes, s->cap * sizeof *s->nodes);
    if (s->preds)
        mem_free(m, s->preds, s->cappreds * sizeof *s->preds);
    *s = (bfs_side){0};
}

static int grow(exec *x, void **p, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    if (c > UINT32_MAX)
        return exec_fail(x, NULL, "ArgumentError", NULL,
                         "a shortest-path search over more than %u nodes", UINT32_MAX);
    void *q = mem_realloc(x->m, *p, *cap * elem_size, c * elem_size);
    if (!q)
        return exec_oom(x);
    *p = q;
    *cap = c;
    return 0;
}

/* Whether the filters over one kind of path element pass id. */
static int filters_pass(search *s, bool nodes, uint64_t id, bool *ok)
{
    walk *w = s->w;
    *ok = true;
    for (size_t k = 0; k < s->nf && *ok; k++) {
        if (s->f[k].on_nodes != nodes)
            continue;
        const cypher_ast_node *q = s->f[k].q;
        local_var lv = {q->u.comprehension.variable->u.name.ptr,
                        q->u.comprehension.variable->u.name.len,
                        nodes ? value_node(id) : value_rel(id), NULL};
        evalctx c = {w->x, w->sc, w->row, &lv, NULL};
        tri t;
        if (eval_predicate(&c, q->u.comprehension.where, &t) != 0)
            return -1;
        *ok = t == (q->u.comprehension.quantifier == CYPHER_QUANT_ALL ? TRI_TRUE : TRI_FALSE);
    }
    return 0;
}

/* Adds node id to side s at distance dist (it passed the filters). */
static int side_add(search *s, bfs_side *sd, uint64_t id, uint32_t dist, uint32_t *idx)
{
    exec *x = s->w->x;
    if (grow(x, (void **)&sd->nodes, &sd->cap, sd->n + 1, sizeof *sd->nodes) != 0)
        return -1;
    if (id_index_put(x->m, &sd->seen, id, (uint32_t)sd->n) != 0)
        return exec_oom(x);
    sd->nodes[sd->n] = (bfs_node){id, dist, NO_PRED};
    *idx = (uint32_t)sd->n++;
    return 0;
}

static int pred_add(search *s, bfs_side *sd, uint32_t to, uint64_t rel, uint32_t from)
{
    exec *x = s->w->x;
    if (grow(x, (void **)&sd->preds, &sd->cappreds, sd->npreds + 1, sizeof *sd->preds) != 0)
        return -1;
    sd->preds[sd->npreds] = (bfs_pred){rel, from, sd->nodes[to].pred};
    sd->nodes[to].pred = (uint32_t)sd->npreds++;
    return 0;
}

/* Seeds side sd with its root; *ok false when the root fails a filter. */
static int side_seed(search *s, bfs_side *sd, strata_direction dir, uint64_t root, bool *ok)
{
    sd->dir = dir;
    if (filters_pass(s, true, root, ok) != 0)
        return -1;
    if (!*ok)
        return 0;
    uint32_t idx;
    return side_add(s, sd, root, 0, &idx);
}

/* Expands the frontier of sd by one layer; *hit is set when a relationship
   that passes leads to node watch (UINT64_MAX: none). */
static int side_expand_watch(search *s, bfs_side *sd, uint64_t watch, bool *hit)
{
    walk *w = s->w;
    size_t lo = sd->layer, hi = sd->n;
    uint32_t next = sd->depth + 1;
    for (size_t u = lo; u < hi; u++) {
        if ((++s->expanded & 1023) == 0 && exec_check_interrupt(w->x) != 0)
            return -1;
        size_t off = w->pool.n, n;
        if (walk_drain(w, s->r, sd->dir, sd->nodes[u].id, &n) != 0)
            return -1;
        int rc = 0;
        for (size_t k = 0; k < n && rc == 0; k++) {
            uint64_t rid = w->pool.v[off + 2 * k], v = w->pool.v[off + 2 * k + 1];
            uint32_t idx;
            bool seen = id_index_get(&sd->seen, v, &idx), ok, used;
            bool no_use = seen && (idx == REJECTED || sd->nodes[idx].dist != next ||
                                   (!s->all && sd->nodes[idx].pred != NO_PRED));
            if (no_use && v != watch)
                continue;
            if ((rc = walk_rel_used(w, rid, &used)) != 0 || used)
                continue;
            if ((rc = pattern_entity_ok(w->x, s->r, w->sc, w->row, false, rid, &ok)) != 0 || !ok)
                continue;
            if ((rc = filters_pass(s, false, rid, &ok)) != 0 || !ok)
                continue;
            if (v == watch)
                *hit = true;
            if (no_use)
                continue;
            if (!seen) {
                if ((rc = filters_pass(s, true, v, &ok)) != 0)
                    break;
                if (!ok) {
                    if (id_index_put(w->x->m, &sd->seen, v, REJECTED) != 0)
                        rc = exec_oom(w->x);
                    continue;
                }
                if ((rc = side_add(s, sd, v, next, &idx)) != 0)
                    break;
            }
            rc = pred_add(s, sd, idx, rid, (uint32_t)u);
        }
        w->pool.n = off;
        if (rc != 0)
            return rc;
    }
    sd->layer = hi;
    sd->depth = next;
    return 0;
}

static int side_expand(search *s, bfs_side *sd)
{
    bool hit;
    return side_expand_watch(s, sd, UINT64_MAX, &hit);
}

/* ---- emitting paths ---- */

/* The first chain of predecessors from node idx (at distance len) back to
   the root: c[k] is the predecessor entry into the node at distance k. */
static void chain_first(const bfs_side *sd, uint32_t idx, uint32_t len, uint32_t *c)
{
    for (uint32_t k = len; k >= 1; k--) {
        c[k] = sd->nodes[idx].pred;
        idx = sd->preds[c[k]].from;
    }
}

/* The next chain (odometer, nearest the root turning fastest); false when
   every chain has been seen. */
static bool chain_next(const bfs_side *sd, uint32_t len, uint32_t *c)
{
    for (uint32_t k = 1; k <= len; k++) {
        uint32_t nx = sd->preds[c[k]].next;
        if (nx == NO_PRED)
            continue;
        c[k] = nx;
        uint32_t idx = sd->preds[nx].from;
        for (uint32_t j = k - 1; j >= 1; j--) {
            c[j] = sd->nodes[idx].pred;
            idx = sd->preds[c[j]].from;
        }
        return true;
    }
    return false;
}

/* Lays the path given by the chains on the step stack, binds its
   relationships (uniqueness for the parts after this one) and goes on
   with the walk. */
static int emit_path(search *s, uint32_t meet, uint32_t lf, const uint32_t *cf, uint32_t lb,
                     const uint32_t *cb)
{
    walk *w = s->w;
    const bfs_side *f = &s->fw, *b = &s->bw;
    size_t base = w->seg_off[s->i];
    w->nstk = base;
    int rc = 0;
    for (uint32_t k = 1; k <= lf && rc == 0; k++) {
        uint64_t node = k == lf ? f->nodes[meet].id : f->nodes[f->preds[cf[k + 1]].from].id;
        rc = walk_stk_push(w, f->preds[cf[k]].rel, node);
    }
    for (uint32_t k = lb; k >= 1 && rc == 0; k--)
        rc = walk_stk_push(w, b->preds[cb[k]].rel, b->nodes[b->preds[cb[k]].from].id);
    size_t pushed = 0;
    for (size_t k = base; k < w->nstk && rc == 0; k++, pushed++)
        rc = walk_rel_push(w, w->stk[2 * k]);
    uint64_t end = w->nstk > base ? w->stk[2 * (w->nstk - 1) + 1] : f->nodes[meet].id;
    if (rc == 0)
        rc = walk_var_done(w, s->i, end);
    while (pushed--)
        walk_rel_pop(w);
    w->nstk = base;
    return rc;
}

/* Every shortest path through meet (one for shortestPath): forward chains
   times backward ones. */
static int emit_through(search *s, uint32_t meet, uint32_t lf, uint32_t lb)
{
    walk *w = s->w;
    size_t need = (size_t)lf + lb + 2;
    if (need > s->capchoice) {
        uint32_t *c = mem_realloc(w->x->m, s->choice, s->capchoice * sizeof *c, need * sizeof *c);
        if (!c)
            return exec_oom(w->x);
        s->choice = c;
        s->capchoice = need;
    }
    uint32_t *cf = s->choice, *cb = s->choice + lf + 1;
    uint32_t bmeet = 0;
    if (lb && !id_index_get(&s->bw.seen, s->fw.nodes[meet].id, &bmeet))
        return 0;   /* cannot happen: meet was seen by both sides */
    chain_first(&s->fw, meet, lf, cf);
    int rc;
    do {
        if (lb)
            chain_first(&s->bw, bmeet, lb, cb);
        do
            rc = emit_path(s, meet, lf, cf, lb, cb);
        while (rc == 0 && s->all && lb && chain_next(&s->bw, lb, cb));
    } while (rc == 0 && s->all && chain_next(&s->fw, lf, cf));
    return rc;
}

/* Whether node e may end a path: the end node's pattern and the WHERE
   conjuncts about the ends alone. */
static int end_ok(search *s, uint64_t e, bool *ok)
{
    walk *w = s->w;
    if (pattern_entity_ok(w->x, walk_elem(w, s->i + 1), w->sc, w->row, true, e, ok) != 0)
        return -1;
    if (!*ok)
        return 0;
    if (s->end_slot >= 0)
        w->row[s->end_slot] = value_node(e);
    evalctx c = {w->x, w->sc, w->row, NULL, NULL};
    int rc = 0;
    for (size_t k = 0; k < s->nendq && rc == 0 && *ok; k++) {
        tri t;
        rc = eval_predicate(&c, s->endq[k], &t);
        *ok = t == TRI_TRUE;
    }
    if (s->end_slot >= 0)
        w->row[s->end_slot] = value_null();
    return rc;
}

/* Single source: after each layer, the paths to the nodes it reached. */
static int search_from(search *s, uint64_t from)
{
    walk *w = s->w;
    bool ok;
    int rc = side_seed(s, &s->fw, walk_rel_dir(w, s->r), from, &ok);
    if (rc != 0 || !ok)
        return rc;
    if (s->min == 0 && (rc = end_ok(s, from, &ok)) == 0 && ok)
        rc = emit_through(s, 0, 0, 0);
    while (rc == 0 && s->fw.layer < s->fw.n && (!s->has_max || s->fw.depth < s->max)) {
        size_t lo = s->fw.n;
        if ((rc = side_expand(s, &s->fw)) != 0)
            break;
        for (size_t e = lo; e < s->fw.n && rc == 0; e++) {
            if ((rc = end_ok(s, s->fw.nodes[e].id, &ok)) == 0 && ok)
                rc = emit_through(s, (uint32_t)e, s->fw.depth, 0);
        }
    }
    return rc;
}

/* Both ends bound: the smaller frontier expands until the sides meet. */
static int search_between(search *s, uint64_t from, uint64_t to)
{
    walk *w = s->w;
    bool ok;
    strata_direction dir = walk_rel_dir(w, s->r);
    strata_direction back = dir == STRATA_OUT ? STRATA_IN : dir == STRATA_IN ? STRATA_OUT : dir;
    int rc = side_seed(s, &s->fw, dir, from, &ok);
    if (rc != 0 || !ok)
        return rc;
    if (from == to)   /* longer paths back to the start repeat a node */
        return s->min == 0 ? emit_through(s, 0, 0, 0) : 0;
    if ((rc = side_seed(s, &s->bw, back, to, &ok)) != 0 || !ok)
        return rc;
    while (s->fw.layer < s->fw.n && s->bw.layer < s->bw.n &&
           (!s->has_max || (int64_t)s->fw.depth + s->bw.depth < s->max)) {
        bool forward = s->fw.n - s->fw.layer <= s->bw.n - s->bw.layer;
        bfs_side *sd = forward ? &s->fw : &s->bw, *other = forward ? &s->bw : &s->fw;
        size_t lo = sd->n;
        if ((rc = side_expand(s, sd)) != 0)
            return rc;
        uint32_t best = UINT32_MAX;
        for (size_t e = lo; e < sd->n; e++) {
            uint32_t o;
            if (id_index_get(&other->seen, sd->nodes[e].id, &o) && o != REJECTED &&
                other->nodes[o].dist < best)
                best = other->nodes[o].dist;
        }
        if (best == UINT32_MAX)
            continue;
        for (size_t e = lo; e < sd->n && rc == 0; e++) {
            uint32_t o;
            if (!id_index_get(&other->seen, sd->nodes[e].id, &o) || o == REJECTED ||
                other->nodes[o].dist != best)
                continue;
            uint32_t fi = forward ? (uint32_t)e : o;
            rc = emit_through(s, fi, s->fw.nodes[fi].dist, forward ? best : sd->depth);
            if (!s->all)
                break;
        }
        return rc;
    }
    return 0;
}

int shortest_bfs(walk *w, size_t i, uint64_t from)
{
    search s;
    memset(&s, 0, sizeof s);
    s.w = w;
    s.i = i;
    s.r = walk_elem(w, i);
    s.all = w->kind == CYPHER_PATH_ALL_SHORTEST;
    s.min = s.r->u.rel.has_min ? s.r->u.rel.min : 1;
    s.has_max = s.r->u.rel.has_max;
    s.max = s.r->u.rel.max;
    bfs_static_ok(w->part, w->where, s.f, &s.nf);
    w->seg_off[i] = w->nstk;
    const cypher_ast_node *end = walk_elem(w, i + 1);
    long slot = walk_var_slot(w, end, true);
    int rc;
    if (walk_slot_bound(w, slot)) {
        bool ok = false;
        if (value_kind(&w->row[slot]) != VAL_NODE)
            return 0;
        uint64_t to = w->row[slot].u.id;
        rc = pattern_entity_ok(w->x, end, w->sc, w->row, true, to, &ok);
        if (rc == 0 && ok)
            rc = search_between(&s, from, to);
    } else {
        const cypher_ast_node *a = walk_elem(w, 0)->u.node.variable, *b = end->u.node.variable;
        if (w->where)
            end_conjuncts(w->where, a ? &a->u.name : NULL, b ? &b->u.name : NULL, s.endq,
                          &s.nendq);
        s.end_slot = slot;
        rc = search_from(&s, from);
    }
    side_free(w->x->m, &s.fw);
    side_free(w->x->m, &s.bw);
    if (s.choice)
        mem_free(w->x->m, s.choice, s.capchoice * sizeof *s.choice);
    return rc;
}

/* ---- reachability: pattern predicates ---- */

/*
 * `WHERE (a)-[:T*min..max]->(b)` only asks whether some path exists.  With
 * one variable-length relationship, no relationship or path variable and
 * a minimum of 0 or 1, a path of length d in [min, max] from a to b exists
 * exactly when b is at distance d' <= max with d' >= min (a shortest walk
 * is a simple path, so it repeats no relationship), except for b = a with
 * minimum 1: then a directed pattern needs a cycle through a, which the
 * search sees as an edge back into a from a node at distance < max, and an
 * undirected one is left to the depth-first walk (going out and back over
 * one relationship is no path).  So the check is one breadth-first search
 * with a visited set, never an enumeration of paths.
 */
int reach_exists(walk *w, uint64_t from, bool *handled, bool *found)
{
    *handled = *found = false;
    const cypher_ast_node *r = walk_elem(w, 1), *end = walk_elem(w, 2);
    if (w->kind != CYPHER_PATH_PLAIN || w->nel != 3 || w->part->u.part.variable ||
        !r->u.rel.var_length || r->u.rel.variable || (r->u.rel.has_min && r->u.rel.min > 1))
        return 0;
    bool directed = walk_rel_dir(w, r) != STRATA_BOTH;
    int64_t min = r->u.rel.has_min ? r->u.rel.min : 1;
    long slot = walk_var_slot(w, end, true);
    bool end_bound = walk_slot_bound(w, slot);
    uint64_t target = 0;
    if (end_bound) {
        if (value_kind(&w->row[slot]) != VAL_NODE) {
            *handled = true;
            return 0;
        }
        target = w->row[slot].u.id;
    }
    bool ok, end_ok = true;
    if (pattern_entity_ok(w->x, walk_elem(w, 0), w->sc, w->row, true, from, &ok) != 0 ||
        (end_bound &&
         pattern_entity_ok(w->x, end, w->sc, w->row, true, target, &end_ok) != 0))
        return -1;
    if (!ok || !end_ok) {   /* a bound end must still carry its labels and properties */
        *handled = true;
        return 0;
    }
    /* the start as its own end */
    bool self = false;
    if (!end_bound || target == from) {
        if (pattern_entity_ok(w->x, end, w->sc, w->row, true, from, &self) != 0)
            return -1;
        if (self && min == 0) {
            *handled = *found = true;
            return 0;
        }
        if (self && !directed)
            return 0;   /* needs a path that does not go back its own way */
    }
    if (end_bound && target == from && !self) {
        *handled = true;
        return 0;
    }
    search s;
    memset(&s, 0, sizeof s);
    s.w = w;
    s.i = 1;
    s.r = r;
    s.has_max = r->u.rel.has_max;
    s.max = r->u.rel.max;
    int rc = 0;
    uint32_t idx;
    s.fw.dir = walk_rel_dir(w, r);
    if ((rc = side_add(&s, &s.fw, from, 0, &idx)) != 0)
        goto done;
    while (!*found && s.fw.layer < s.fw.n && (!s.has_max || s.fw.depth < s.max)) {
        size_t lo = s.fw.n;
        /* an edge back into the start closes a cycle of length depth + 1 */
        if ((rc = side_expand_watch(&s, &s.fw, self ? from : UINT64_MAX, found)) != 0)
            break;
        for (size_t e = lo; e < s.fw.n && !*found && rc == 0; e++) {
            uint64_t v = s.fw.nodes[e].id;
            if (end_bound)
                *found = v == target;
            else if ((rc = pattern_entity_ok(w->x, end, w->sc, w->row, true, v, &ok)) == 0)
                *found = ok;
        }
    }
    *handled = rc == 0;
done:
    side_free(w->x->m, &s.fw);
    return rc;
}

/* ---- reachability: distinct ends ---- */

/*
 * `MATCH (a)-[:T*min..max]->(b) RETURN DISTINCT a, b.name` (or WITH
 * DISTINCT, or aggregates that are all DISTINCT) only needs the set of
 * (a, b) rows, not one row per path: with a single pattern part, one
 * variable-length relationship, no relationship or path variable, and a
 * minimum of 0 or 1, that set is {b : dist(a, b) <= max} (plus a itself
 * for a minimum of 0), a shortest walk being a path that repeats no
 * relationship.  The start node a reached again needs a cycle through a of
 * length <= max: directed, an edge back into a; undirected, the shortest
 * cycle through a from the same search, as the least dist(x) + dist(y) + 1
 * over the relationships between nodes first reached through different
 * relationships of a (a relationship of a taken out and back is no
 * cycle).  Emitting each end once gives the same rows after DISTINCT.
 */

static bool aggregates_distinct(const cypher_ast_node *n, void *ctx);

static int all_distinct_child(const cypher_ast_node *c, void *ctx)
{
    return aggregates_distinct(c, ctx) ? 0 : 1;
}

/* Whether every aggregate call under n is DISTINCT (count(*) is not). */
static bool aggregates_distinct(const cypher_ast_node *n, void *ctx)
{
    if (n->kind == CYPHER_AST_COUNT_STAR)
        return false;
    if (is_aggregate_call(n))
        return n->u.function.distinct;
    return cypher_ast_each_child(n, all_distinct_child, ctx) == 0;
}

bool reach_distinct_ok(const cypher_ast_node *match, const cypher_ast_node *next)
{
    if (!match || !next || match->kind != CYPHER_AST_MATCH || match->u.match.optional ||
        match->u.match.parts.count != 1)
        return false;
    const cypher_ast_node *part = match->u.match.parts.items[0];
    const cypher_ast_list *el = &part->u.part.path->u.list;
    if (part->u.part.kind != CYPHER_PATH_PLAIN || part->u.part.variable || el->count != 3)
        return false;
    const cypher_ast_node *r = el->items[1];
    if (!r->u.rel.var_length || r->u.rel.variable || (r->u.rel.has_min && r->u.rel.min > 1))
        return false;
    if (next->kind != CYPHER_AST_WITH && next->kind != CYPHER_AST_RETURN)
        return false;
    bool agg = false;
    for (size_t k = 0; k < next->u.projection.items.count; k++) {
        const cypher_ast_node *item = next->u.projection.items.items[k];
        if (expr_has_aggregate(item)) {
            agg = true;
            if (!aggregates_distinct(item, NULL))
                return false;
        }
    }
    for (size_t k = 0; k < next->u.projection.order.count; k++)
        if (expr_has_aggregate(next->u.projection.order.items[k]) &&
            !aggregates_distinct(next->u.projection.order.items[k], NULL))
            return false;
    return agg || next->u.projection.distinct;
}

int reach_emit(walk *w, size_t i, uint64_t from)
{
    search s;
    memset(&s, 0, sizeof s);
    s.w = w;
    s.i = i;
    s.r = walk_elem(w, i);
    int64_t min = s.r->u.rel.has_min ? s.r->u.rel.min : 1;
    bool has_max = s.r->u.rel.has_max;
    int64_t max = s.r->u.rel.max;
    strata_direction dir = walk_rel_dir(w, s.r);
    bool directed = dir != STRATA_BOTH;
    bfs_side *sd = &s.fw;
    sd->dir = dir;
    w->seg_off[i] = w->nstk;
    /* branch[k]: the relationship of `from` through which node k was
       first reached (undirected cycles) */
    u64_stack branch = {0};
    uint32_t idx;
    int rc = side_add(&s, sd, from, 0, &idx);
    if (rc == 0 && u64_stack_push2(w->x->m, &branch, 0, 0) != 0)
        rc = exec_oom(w->x);
    bool self_done = false;
    uint64_t cycle = UINT64_MAX;        /* shortest closed path through from */
    if (rc == 0 && min == 0) {
        self_done = true;
        rc = walk_var_done(w, i, from);
    }
    while (rc == 0 && sd->layer < sd->n && (!has_max || (int64_t)sd->depth < max)) {
        size_t lo = sd->layer, hi = sd->n;
        uint32_t next = sd->depth + 1;
        for (size_t u = lo; u < hi && rc == 0; u++) {
            if ((++s.expanded & 1023) == 0 && exec_check_interrupt(w->x) != 0) {
                rc = -1;
                break;
            }
            size_t off = w->pool.n, n;
            if ((rc = walk_drain(w, s.r, dir, sd->nodes[u].id, &n)) != 0)
                break;
            for (size_t k = 0; k < n && rc == 0; k++) {
                uint64_t rid = w->pool.v[off + 2 * k], v = w->pool.v[off + 2 * k + 1];
                uint64_t bu = u ? branch.v[2 * u] : rid;
                bool ok, used;
                if ((rc = walk_rel_used(w, rid, &used)) != 0 || used)
                    continue;
                if ((rc = pattern_entity_ok(w->x, s.r, w->sc, w->row, false, rid, &ok)) != 0 ||
                    !ok)
                    continue;
                if (v == from) {
                    if (directed || u == 0 || rid != bu)   /* not out and back */
                        cycle = next < cycle ? next : cycle;
                } else if (id_index_get(&sd->seen, v, &idx)) {
                    uint64_t len = (uint64_t)sd->nodes[u].dist + sd->nodes[idx].dist + 1;
                    if (!directed && branch.v[2 * idx] != bu && len < cycle)
                        cycle = len;
                } else {
                    if ((rc = side_add(&s, sd, v, next, &idx)) != 0)
                        break;
                    if (u64_stack_push2(w->x->m, &branch, bu, 0) != 0)
                        rc = exec_oom(w->x);
                }
            }
            w->pool.n = off;
        }
        if (rc != 0)
            break;
        sd->layer = hi;
        sd->depth = next;
        for (size_t e = hi; e < sd->n && rc == 0; e++)
            rc = walk_var_done(w, i, sd->nodes[e].id);
        if (rc == 0 && !self_done && (!has_max || cycle <= (uint64_t)max) &&
            cycle != UINT64_MAX) {
            self_done = true;
            rc = walk_var_done(w, i, from);
        }
    }
    u64_stack_free(w->x->m, &branch);
    side_free(w->x->m, &s.fw);
    return rc;
}
