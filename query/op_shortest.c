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

#include "query/path_search.h"

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


/* A run of ANDs, which the parser makes one node (ast.h, BINARY_CHAIN). */
static bool is_and_chain(const cypher_ast_node *e)
{
    return e->kind == CYPHER_AST_BINARY_CHAIN && e->u.fold.ops[0] == CYPHER_OP_AND;
}

/* Calls each conjunct of e (AND trees and chains) until one returns false. */
static bool each_conjunct(const cypher_ast_node *e, const path_names *pn, path_filter *f,
                          size_t *nf)
{
    if (e->kind == CYPHER_AST_BINARY && e->u.binary.op == CYPHER_OP_AND)
        return each_conjunct(e->u.binary.lhs, pn, f, nf) &&
               each_conjunct(e->u.binary.rhs, pn, f, nf);
    if (is_and_chain(e)) {
        for (size_t i = 0; i < e->u.fold.operands.count; i++)
            if (!each_conjunct(e->u.fold.operands.items[i], pn, f, nf))
                return false;
        return true;
    }
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
    if (is_and_chain(e)) {
        for (size_t i = 0; i < e->u.fold.operands.count; i++)
            end_conjuncts(e->u.fold.operands.items[i], a, b, out, n);
        return;
    }
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
        uint32_t *c = mem_realloc(w->x->m, s->choice, need * sizeof *c);
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
    int rc = bfs_side_seed(s, &s->fw, walk_rel_dir(w, s->r), from, &ok);
    if (rc != 0 || !ok)
        return rc;
    if (s->min == 0 && (rc = end_ok(s, from, &ok)) == 0 && ok)
        rc = emit_through(s, 0, 0, 0);
    while (rc == 0 && s->fw.layer < s->fw.n && (!s->has_max || s->fw.depth < s->max)) {
        size_t lo = s->fw.n;
        if ((rc = bfs_side_expand(s, &s->fw)) != 0)
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
    int rc = bfs_side_seed(s, &s->fw, dir, from, &ok);
    if (rc != 0 || !ok)
        return rc;
    if (from == to)   /* longer paths back to the start repeat a node */
        return s->min == 0 ? emit_through(s, 0, 0, 0) : 0;
    if ((rc = bfs_side_seed(s, &s->bw, back, to, &ok)) != 0 || !ok)
        return rc;
    while (s->fw.layer < s->fw.n && s->bw.layer < s->bw.n &&
           (!s->has_max || (int64_t)s->fw.depth + s->bw.depth < s->max)) {
        bool forward = s->fw.n - s->fw.layer <= s->bw.n - s->bw.layer;
        bfs_side *sd = forward ? &s->fw : &s->bw, *other = forward ? &s->bw : &s->fw;
        size_t lo = sd->n;
        if ((rc = bfs_side_expand(s, sd)) != 0)
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
    bfs_side_free(w->x->m, &s.fw);
    bfs_side_free(w->x->m, &s.bw);
    if (s.choice)
        mem_free(w->x->m, s.choice);
    return rc;
}
