/* join_plan — whether a run of MATCH clauses runs as a join, and in which
   order its vertices are bound (join.h). */
#include <math.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>

#include "query/aggregate.h"
#include "query/join.h"
#include "query/profile.h"

static atomic_bool join_off;
/* Below this many candidates for its cheapest start a pattern is a point
   query: its estimates are cheap reads of the statistics, but building the
   plan and ordering it per execution would still cost more than a better
   order saves over the walker's. */
static _Atomic uint64_t scan_min = 1000;

void join_set_enabled(bool on) { atomic_store(&join_off, !on); }

void join_set_scan_min(uint64_t n) { atomic_store(&scan_min, n); }

static atomic_int hash_mode;    /* join_hash_mode */

void join_set_hash(join_hash_mode mode) { atomic_store(&hash_mode, (int)mode); }

/* ---- names ---- */

#define MAX_NAMES 256

typedef struct names {
    const cypher_ast_str *v[MAX_NAMES];
    size_t n;
    bool overflow;          /* too many to list: treat every name as named */
} names;

static bool str_eq(const cypher_ast_str *a, const cypher_ast_str *b)
{
    return a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0;
}

static int collect_names(const cypher_ast_node *n, void *ctx)
{
    names *ns = ctx;
    if (n->kind == CYPHER_AST_VARIABLE) {
        if (ns->n == MAX_NAMES)
            ns->overflow = true;
        else
            ns->v[ns->n++] = &n->u.name;
    }
    return cypher_ast_each_child(n, collect_names, ctx);
}

static bool names_has(const names *ns, const cypher_ast_node *var)
{
    if (!var)
        return false;
    if (ns->overflow)
        return true;
    for (size_t i = 0; i < ns->n; i++)
        if (str_eq(ns->v[i], &var->u.name))
            return true;
    return false;
}

/* ---- the consumer ---- */

static int find_aggregates(const cypher_ast_node *n, void *ctx)
{
    int *state = ctx;   /* bit 0: an aggregate seen; bit 1: one that is not a plain count */
    int k = aggregate_kind(n);
    if (k >= 0) {
        *state |= 1;
        if (k != AGG_COUNT || (n->kind == CYPHER_AST_FUNCTION && n->u.function.distinct))
            *state |= 2;
        return 0;
    }
    return cypher_ast_each_child(n, find_aggregates, ctx);
}

static bool projection_only_counts(const cypher_ast_node *cl)
{
    if (!cl || (cl->kind != CYPHER_AST_RETURN && cl->kind != CYPHER_AST_WITH) ||
        cl->u.projection.star)
        return false;
    /* looked up once per tree (every point query asks) */
    _Atomic uint8_t *seen = (_Atomic uint8_t *)&cl->u.projection.aggregates_plus1;
    int state = atomic_load_explicit(seen, memory_order_relaxed);
    if (state)
        return state - 1 == 1;
    for (size_t i = 0; i < cl->u.projection.items.count; i++)
        find_aggregates(cl->u.projection.items.items[i], &state);
    for (size_t i = 0; i < cl->u.projection.order.count; i++)
        find_aggregates(cl->u.projection.order.items[i], &state);
    atomic_store_explicit(seen, (uint8_t)(state + 1), memory_order_relaxed);
    return state == 1;
}

/* ---- the query graph ---- */

typedef struct builder {
    exec *x;
    join_plan *p;
    const scope *sc;
    names clause_vars;      /* every variable the run declares */
    bool reject;
} builder;

static bool in_input(const builder *b, const cypher_ast_node *var)
{
    long slot = var ? scope_find(b->sc, var->u.name.ptr, var->u.name.len) : -1;
    return slot >= 0 && (size_t)slot < b->p->in_width;
}

/* A property map naming the run's own variables needs the walker's
   order of binding. */
static bool props_ok(builder *b, const cypher_ast_node *props)
{
    if (!props)
        return true;
    names ns = {0};
    collect_names(props, &ns);
    for (size_t i = 0; i < ns.n; i++)
        for (size_t k = 0; k < b->clause_vars.n; k++)
            if (str_eq(ns.v[i], b->clause_vars.v[k]))
                return false;
    return !ns.overflow;
}

static int resolve(builder *b, strata_token_kind kind, const cypher_ast_list *names_in,
                   strata_token *out, size_t *n, bool *none_known)
{
    strata_view *v = exec_view(b->x);
    *none_known = false;
    size_t known = 0;
    for (size_t i = 0; i < names_in->count; i++) {
        strata_token t;
        if (strata_token_lookup(v, kind, names_in->items[i]->u.name.ptr, &t) != STRATA_OK) {
            if (kind == STRATA_LABEL)
                *none_known = true;     /* every label must be carried */
            continue;
        }
        bool dup = false;
        for (size_t k = 0; k < *n; k++)
            dup |= out[k] == t;
        if (dup)
            continue;
        if (*n == JOIN_MAX_TYPES) {
            b->reject = true;
            return 0;
        }
        out[(*n)++] = t;
        known++;
    }
    if (kind == STRATA_RELTYPE && names_in->count && !known)
        *none_known = true;
    return 0;
}

static uint32_t add_vertex(builder *b, const cypher_ast_node *node)
{
    join_plan *p = b->p;
    const cypher_ast_node *var = node->u.node.variable;
    uint32_t i = 0;
    for (; var && i < p->nv; i++)
        if (p->v[i].var && str_eq(&p->v[i].var->u.name, &var->u.name))
            break;
    if (!var || i == p->nv) {
        if (p->nv == JOIN_MAX_VERTICES) {
            b->reject = true;
            return 0;
        }
        i = (uint32_t)p->nv++;
        p->v[i] = (jvertex){.var = var, .slot = -1, .node = node,
                            .in_bound = in_input(b, var)};
    }
    jvertex *jv = &p->v[i];
    bool none = false;
    if (node->u.node.labels_any)
        b->reject = true;   /* a disjunction: the walker's label check */
    if (node->u.node.labels.count > jv->node->u.node.labels.count ||
        (node->u.node.properties && !jv->node->u.node.properties))
        jv->node = node;
    resolve(b, STRATA_LABEL, &node->u.node.labels, jv->labels, &jv->nlabels, &none);
    p->impossible |= none;
    if (node->u.node.properties) {
        if (!props_ok(b, node->u.node.properties) || jv->nprops == JOIN_MAX_TYPES)
            b->reject = true;
        else
            jv->props[jv->nprops++] = node;
    }
    return i;
}

static void add_edge(builder *b, const cypher_ast_node *rel, uint32_t a, uint32_t c,
                     uint32_t group)
{
    join_plan *p = b->p;
    const cypher_ast_node *var = rel->u.rel.variable;
    if (p->ne == JOIN_MAX_EDGES || rel->u.rel.var_length || in_input(b, var) ||
        !props_ok(b, rel->u.rel.properties)) {
        b->reject = true;
        return;
    }
    for (size_t i = 0; var && i < p->ne; i++)
        if (p->e[i].rel->u.rel.variable && str_eq(&p->e[i].rel->u.rel.variable->u.name,
                                                   &var->u.name))
            b->reject = true;   /* one relationship twice: the walker's case */
    jedge *e = &p->e[p->ne++];
    *e = (jedge){.rel = rel, .a = a, .b = c, .dir = rel->u.rel.dir, .slot = -1, .group = group};
    bool none = false;
    resolve(b, STRATA_RELTYPE, &rel->u.rel.types, e->types, &e->ntypes, &none);
    p->impossible |= none;
}

static void add_clause(builder *b, const cypher_ast_node *cl, uint32_t group)
{
    if (cl->kind != CYPHER_AST_MATCH || cl->u.match.optional) {
        b->reject = true;
        return;
    }
    for (size_t i = 0; i < cl->u.match.parts.count && !b->reject; i++) {
        const cypher_ast_node *part = cl->u.match.parts.items[i];
        if (part->u.part.kind != CYPHER_PATH_PLAIN || part->u.part.variable) {
            b->reject = true;
            return;
        }
        const cypher_ast_list *el = &part->u.part.path->u.list;
        uint32_t prev = add_vertex(b, el->items[0]);
        for (size_t k = 1; k + 1 < el->count && !b->reject; k += 2) {
            uint32_t next = add_vertex(b, el->items[k + 1]);
            add_edge(b, el->items[k], prev, next, group);
            prev = next;
        }
    }
}

/* Every variable the run names, in the order written (the order the
   walker declares them in). */
static void declare_names(builder *b)
{
    join_plan *p = b->p;
    for (size_t c = 0; c < p->nclauses; c++) {
        const cypher_ast_node *cl = p->clauses[c];
        for (size_t i = 0; i < cl->u.match.parts.count; i++) {
            const cypher_ast_list *el = &cl->u.match.parts.items[i]->u.part.path->u.list;
            for (size_t k = 0; k < el->count; k++) {
                const cypher_ast_node *e = el->items[k];
                const cypher_ast_node *v = e->kind == CYPHER_AST_NODE ? e->u.node.variable
                                                                      : e->u.rel.variable;
                if (!v)
                    continue;
                if (b->clause_vars.n == MAX_NAMES) {
                    b->reject = true;
                    return;
                }
                b->clause_vars.v[b->clause_vars.n++] = &v->u.name;
            }
        }
    }
}

/* ---- WHERE ---- */

static int count_conjuncts(const cypher_ast_node *w, const cypher_ast_node **out, size_t *n)
{
    if (!w)
        return 0;
    if (w->kind == CYPHER_AST_BINARY && w->u.binary.op == CYPHER_OP_AND) {
        count_conjuncts(w->u.binary.lhs, out, n);
        return count_conjuncts(w->u.binary.rhs, out, n);
    }
    if (w->kind == CYPHER_AST_BINARY_CHAIN && w->u.fold.ops[0] == CYPHER_OP_AND) {
        for (size_t i = 0; i < w->u.fold.operands.count; i++)
            count_conjuncts(w->u.fold.operands.items[i], out, n);
        return 0;
    }
    if (out)
        out[*n] = w;
    (*n)++;
    return 0;
}

static int split_where(exec *x, join_plan *p)
{
    size_t n = 0;
    for (size_t c = 0; c < p->nclauses; c++)
        count_conjuncts(p->clauses[c]->u.match.where, NULL, &n);
    if (!n)
        return 0;
    p->conj = mem_alloc(x->m, n * sizeof *p->conj);
    p->by_step = mem_alloc(x->m, n * sizeof *p->by_step);
    if (!p->conj || !p->by_step) {
        if (p->conj)
            mem_free(x->m, p->conj);
        if (p->by_step)
            mem_free(x->m, p->by_step);
        p->conj = NULL;
        p->by_step = NULL;
        return exec_oom(x);
    }
    for (size_t c = 0; c < p->nclauses; c++)
        count_conjuncts(p->clauses[c]->u.match.where, p->conj, &p->nconj);
    return 0;
}

/* Marks what the conjunct names; *needs: the vertices it waits for. */
static void conjunct_needs(join_plan *p, const cypher_ast_node *c, uint64_t *needs)
{
    names ns = {0};
    collect_names(c, &ns);
    *needs = 0;
    for (size_t i = 0; i < p->nv; i++)
        if (names_has(&ns, p->v[i].var)) {
            p->v[i].referenced = true;
            *needs |= 1ull << i;
        }
    for (size_t i = 0; i < p->ne; i++)
        if (names_has(&ns, p->e[i].rel->u.rel.variable)) {
            p->e[i].referenced = true;
            *needs |= 1ull << p->e[i].a | 1ull << p->e[i].b;
        }
}

/* ---- estimates ---- */

static strata_direction edge_dir(const jedge *e, bool from_a)
{
    switch (e->dir) {
    case CYPHER_DIR_RIGHT: return from_a ? STRATA_OUT : STRATA_IN;
    case CYPHER_DIR_LEFT: return from_a ? STRATA_IN : STRATA_OUT;
    default: return STRATA_BOTH;
    }
}

strata_direction join_edge_dir(const jedge *e, uint32_t from)
{
    return edge_dir(e, e->a == from);
}

/* The relationships of type t whose dir-end (ADJ_OUT: start, ADJ_IN: end)
   may be jv's node, from the statistics maintained on write
   (storage/rel_stats.h): exactly those at its label's nodes when it has
   one, at the least populated of its labels' when it has several (an
   upper bound), every relationship of the type when it has none. */
static uint64_t end_count(const version *ver, const jvertex *jv, uint32_t t, int dir)
{
    uint64_t n = labelidx_count(ver->rel_types, t);
    for (size_t i = 0; i < jv->nlabels; i++) {
        uint64_t c = relstats_get(&ver->stats, jv->labels[i], t, dir);
        n = c < n ? c : n;
    }
    return n;
}

/* The mean number of e's relationships from a node of vertex `from` whose
   other end may be the vertex at e's other end: per type and direction,
   the relationships at from's nodes divided by their count — exact for a
   labelled or unlabelled end, no sampling — times the share of that
   type's relationships whose other end may be the other vertex (taken as
   independent of the first end). */
static double stats_fan(exec *x, const join_plan *p, const jedge *e, bool from_a)
{
    const version *ver = exec_view(x)->ver;
    const jvertex *u = &p->v[from_a ? e->a : e->b], *w = &p->v[from_a ? e->b : e->a];
    strata_direction dir = edge_dir(e, from_a);
    size_t ntypes = e->ntypes ? e->ntypes : labelidx_labels(ver->rel_types);
    double rels = 0;
    for (size_t k = 0; k < ntypes; k++) {
        uint32_t t = e->ntypes ? e->types[k] : (uint32_t)k;
        uint64_t all = labelidx_count(ver->rel_types, t);
        if (!all)
            continue;
        for (int d = ADJ_OUT; d <= ADJ_IN; d++)
            if (dir & (d == ADJ_OUT ? STRATA_OUT : STRATA_IN))
                rels += (double)end_count(ver, u, t, d) *
                        ((double)end_count(ver, w, t, 1 - d) / (double)all);
    }
    return u->card ? rels / (double)u->card : 0.0;
}

/* ---- order ---- */

static bool bound_in_input(const cypher_ast_str *name, void *ctx)
{
    const builder *b = ctx;
    long slot = scope_find(b->sc, name->ptr, name->len);
    return slot >= 0 && (size_t)slot < b->p->in_width;
}

static const cypher_ast_node *where_of(const join_plan *p, const cypher_ast_node *node)
{
    for (size_t c = 0; c < p->nclauses; c++) {
        const cypher_ast_node *cl = p->clauses[c];
        for (size_t i = 0; i < cl->u.match.parts.count; i++) {
            const cypher_ast_list *el = &cl->u.match.parts.items[i]->u.part.path->u.list;
            for (size_t k = 0; k < el->count; k += 2)
                if (el->items[k] == node)
                    return cl->u.match.where;
        }
    }
    return NULL;
}

/* Reaching a node by a relationship lands at a random place in its
   label's storage; a scan walks it in order.  Once the label's nodes
   outgrow the cache (about this many: a node's slot and adjacency are a
   few cache lines), most arrivals are misses, each costing about what
   JOIN_MISS_COST candidates cost to read.  Measured on LSQB q8: the order
   from its tags reads fewer candidates than the order from its comments
   but takes 1.6x its time from twice the arrivals at random messages and
   comments. */
#define JOIN_CACHE_NODES 32768.0
#define JOIN_MISS_COST 2.0

static double miss_share(uint64_t card)
{
    return (double)card > JOIN_CACHE_NODES ? 1.0 - JOIN_CACHE_NODES / (double)card : 0.0;
}

/* Rows after binding w to each of `rows` rows with `bound` bound, by
   its edge from a bound vertex with the fewest relationships per row (or
   a scan when it has none); each further edge to a bound vertex keeps
   its share.  *work: the candidates read, each with the adjacency every
   closing edge probes (the smaller side's, as op_join reads it), and the
   arrivals' misses.  at[z], where given, is the rows there were once the
   bound vertex z was bound: a closing edge whose earlier end holds one
   node over many consecutive candidates is probed through that end's
   sorted set (op_join.c), a binary search plus the set's share. */
static double extend(const join_plan *p, uint64_t bound, uint32_t w, double rows,
                     const uint64_t *scan_est, const double *at, uint32_t *driver,
                     double *work)
{
    double best = -1;
    *driver = JOIN_NONE;
    for (uint32_t i = 0; i < p->ne; i++) {
        const jedge *e = &p->e[i];
        if (e->a == e->b || (e->a != w && e->b != w))
            continue;
        uint32_t u = e->a == w ? e->b : e->a;
        if (!(bound >> u & 1))
            continue;
        double fan = e->fan[e->a == u ? 0 : 1];
        if (best < 0 || fan < best) {
            best = fan;
            *driver = i;
        }
    }
    double cand = *driver == JOIN_NONE ? rows * (double)scan_est[w] : rows * best;
    double r = cand, probe = 0;
    for (uint32_t i = 0; i < p->ne; i++) {
        const jedge *e = &p->e[i];
        if (i == *driver || (e->a != w && e->b != w))
            continue;
        uint32_t z = e->a == w ? e->b : e->a;
        if (!(bound >> z & 1) && z != w)
            continue;
        double card = p->v[w].card ? (double)p->v[w].card : 1.0;
        double sel = z == w ? 0.5 : e->fan[e->a == z ? 0 : 1] / card;
        r *= sel < 1.0 ? sel : 1.0;
        double each = e->fan[0] < e->fan[1] ? e->fan[0] : e->fan[1];
        if (at && z != w && cand >= 2 * at[z]) {
            double fz = e->fan[e->a == z ? 0 : 1];
            double by_set = log2(fz + 2) + fz * at[z] / cand;
            each = by_set < each ? by_set : each;
        }
        probe += each;
    }
    *work = cand * (1 + probe);
    if (*driver != JOIN_NONE)
        *work += cand * JOIN_MISS_COST * miss_share(p->v[w].card);
    return r;
}

/* at[] before any vertex is bound by the order: a vertex bound by the
   input row holds one node per input row. */
static void rows_at_start(const join_plan *p, double *at)
{
    for (uint32_t w = 0; w < p->nv; w++)
        at[w] = 1;
}

/* The greedy order from the bound set (and start, unless JOIN_NONE) over
   the core vertices; its cost, the order in order[]. */
static double greedy(const join_plan *p, uint64_t core, uint64_t bound, uint32_t start,
                     const uint64_t *scan_est, uint32_t *order, size_t *n)
{
    double rows = 1, cost = 0, at[JOIN_MAX_VERTICES];
    rows_at_start(p, at);
    if (start != JOIN_NONE) {
        rows = (double)scan_est[start];
        cost = rows;
        at[start] = rows;
        bound |= 1ull << start;
        order[(*n)++] = start;
    }
    for (;;) {
        uint32_t best = JOIN_NONE, drv;
        double best_rows = 0, best_work = 0;
        bool best_scan = true;
        for (uint32_t w = 0; w < p->nv; w++) {
            if (!(core >> w & 1) || bound >> w & 1)
                continue;
            double work;
            double r = extend(p, bound, w, rows, scan_est, at, &drv, &work);
            bool scan = drv == JOIN_NONE;
            /* a scan (a cartesian product) only when nothing connected is left */
            if (best == JOIN_NONE || (best_scan && !scan) ||
                (best_scan == scan && r < best_rows)) {
                best = w;
                best_rows = r;
                best_work = work;
                best_scan = scan;
            }
        }
        if (best == JOIN_NONE)
            return cost;
        rows = best_rows;
        at[best] = rows;
        cost += best_work;
        bound |= 1ull << best;
        order[(*n)++] = best;
    }
}

/* ---- counting ---- */

static bool types_overlap(const jedge *a, const jedge *b)
{
    if (!a->ntypes || !b->ntypes)
        return true;
    for (size_t i = 0; i < a->ntypes; i++)
        for (size_t k = 0; k < b->ntypes; k++)
            if (a->types[i] == b->types[k])
                return true;
    return false;
}

static bool edge_countable(const join_plan *p, uint32_t i)
{
    const jedge *e = &p->e[i];
    if (e->a == e->b || e->referenced || e->rel->u.rel.properties || !e->ntypes)
        return false;
    for (uint32_t k = 0; k < p->ne; k++)
        if (k != i && p->e[k].group == e->group && types_overlap(e, &p->e[k]))
            return false;
    return true;
}

/* Whether w can be counted rather than enumerated once the core is
   `core`: nothing names it, and it hangs off the core by one countable
   relationship (*edge).  A pinned vertex stays in the core: a pair's
   count reads it (jpair). */
static bool peelable(const join_plan *p, uint64_t core, uint64_t pinned, uint32_t w,
                     uint32_t *edge)
{
    const jvertex *jv = &p->v[w];
    if (!(core >> w & 1) || pinned >> w & 1 || jv->referenced || jv->in_bound || jv->nprops)
        return false;
    uint32_t incident = 0;
    for (uint32_t i = 0; i < p->ne; i++) {
        const jedge *e = &p->e[i];
        if ((e->a == w && core >> e->b & 1) || (e->b == w && core >> e->a & 1)) {
            incident++;
            *edge = i;
        }
    }
    return incident == 1 && edge_countable(p, *edge);
}

/* Peels countable leaves off the query graph, the most populated first,
   while more than one vertex is left (so the core left to enumerate is
   small); parent_edge[] is each peeled vertex's edge.  Returns the core. */
static uint64_t peel(const join_plan *p, uint64_t core, uint64_t pinned, uint32_t *parent_edge,
                     uint32_t *peeled, size_t *npeeled)
{
    while (__builtin_popcountll(core) > 1) {
        uint32_t best = JOIN_NONE, edge = 0;
        for (uint32_t w = 0; w < p->nv; w++)
            if (peelable(p, core, pinned, w, &edge) &&
                (best == JOIN_NONE || p->v[w].card > p->v[best].card))
                best = w;
        if (best == JOIN_NONE)
            break;
        peelable(p, core, pinned, best, &edge);
        core &= ~(1ull << best);
        parent_edge[best] = edge;
        peeled[(*npeeled)++] = best;
    }
    return core;
}

/* The vertex a VARIABLE operand names, or JOIN_NONE. */
static uint32_t vertex_named(const join_plan *p, const cypher_ast_node *e)
{
    if (e->kind != CYPHER_AST_VARIABLE)
        return JOIN_NONE;
    for (uint32_t w = 0; w < p->nv; w++)
        if (p->v[w].var && str_eq(&p->v[w].var->u.name, &e->u.name))
            return w;
    return JOIN_NONE;
}

/* e as a conjunct: `a = b` / `a <> b` over two of the join's nodes
   compare ids (both are bound nodes when it runs), the rest evaluates. */
static jconj conjunct(const join_plan *p, const cypher_ast_node *e)
{
    jconj c = {.expr = e, .kind = JCONJ_EXPR};
    if (e->kind != CYPHER_AST_BINARY ||
        (e->u.binary.op != CYPHER_OP_EQ && e->u.binary.op != CYPHER_OP_NE))
        return c;
    uint32_t a = vertex_named(p, e->u.binary.lhs), b = vertex_named(p, e->u.binary.rhs);
    if (a == JOIN_NONE || b == JOIN_NONE)
        return c;
    return (jconj){.expr = e, .kind = e->u.binary.op == CYPHER_OP_EQ ? JCONJ_SAME : JCONJ_OTHER,
                   .a = a, .b = b};
}

/* ---- inequalities between counted leaves (jpair) ---- */

static uint32_t other_end(const jedge *e, uint32_t w) { return e->a == w ? e->b : e->a; }

/* Whether vertex w of edge e stands for the relationship's end node
   (else its start); *directed false when e has no direction. */
static bool leaf_is_end(const jedge *e, uint32_t w, bool *directed)
{
    *directed = e->dir == CYPHER_DIR_RIGHT || e->dir == CYPHER_DIR_LEFT;
    return (e->dir == CYPHER_DIR_RIGHT) == (e->b == w);
}

/* Whether one relationship matched both by e (at the leaf x) and by f
   (which y is an end of) would make x and y one node, so that `x <> y`
   already keeps such matches out: f joins x's neighbour to y, or both
   edges are directed with x and y at the same end of the relationship. */
static bool inequality_separates(const jedge *e, uint32_t x, const jedge *f, uint32_t y)
{
    uint32_t u = other_end(e, x);
    if ((f->a == u && f->b == y) || (f->a == y && f->b == u))
        return true;
    if (f->a != y && f->b != y)
        return false;
    bool de, df;
    bool xe = leaf_is_end(e, x, &de), ye = leaf_is_end(f, y, &df);
    return de && df && xe == ye;
}

/* Whether leaf x's edge i can be counted under `x <> y`: as
   edge_countable, except that an edge sharing a type with it may remain
   where the inequality separates them. */
static bool pair_edge_countable(const join_plan *p, uint32_t i, uint32_t x, uint32_t y)
{
    const jedge *e = &p->e[i];
    if (e->a == e->b || e->referenced || e->rel->u.rel.properties || !e->ntypes)
        return false;
    for (uint32_t k = 0; k < p->ne; k++)
        if (k != i && p->e[k].group == e->group && types_overlap(e, &p->e[k]) &&
            !inequality_separates(e, x, &p->e[k], y))
            return false;
    return true;
}

/* Whether w is a leaf that conjunct c alone names: one relationship
   (*edge) joins it to the rest; nothing downstream names it. */
static bool free_leaf(const join_plan *p, const uint64_t *needs, size_t c, uint64_t down,
                      uint32_t w, uint32_t *edge)
{
    const jvertex *jv = &p->v[w];
    if (jv->in_bound || jv->nprops || down >> w & 1)
        return false;
    for (size_t k = 0; k < p->nconj; k++)
        if (k != c && needs[k] >> w & 1)
            return false;
    uint32_t incident = 0;
    for (uint32_t i = 0; i < p->ne; i++)
        if (p->e[i].a == w || p->e[i].b == w) {
            incident++;
            *edge = i;
        }
    return incident == 1;
}

typedef struct pairing {
    uint64_t taken;         /* leaves counted by a pair */
    uint64_t pinned;        /* vertices a pair reads: kept in the core */
    uint32_t x[JOIN_MAX_VERTICES], y[JOIN_MAX_VERTICES];
    bool y_leaf[JOIN_MAX_VERTICES];
    size_t n;
} pairing;

/* Tries conjunct c as a pair with x the leaf (and y a leaf as well, or
   kept in the core). */
static bool try_pair(const join_plan *p, const uint64_t *needs, size_t c, uint64_t down,
                     uint32_t x, uint32_t y, pairing *pr)
{
    uint64_t used = pr->taken | pr->pinned;
    uint32_t ex, ey;
    if (used >> x & 1 || pr->taken >> y & 1 || !free_leaf(p, needs, c, down, x, &ex))
        return false;
    uint32_t u = other_end(&p->e[ex], x);
    if (pr->taken >> u & 1 || !pair_edge_countable(p, ex, x, y))
        return false;
    bool y_leaf = !(used >> y & 1) && u != y && free_leaf(p, needs, c, down, y, &ey);
    if (y_leaf) {
        uint32_t w = other_end(&p->e[ey], y);
        if (w == x || pr->taken >> w & 1 || !pair_edge_countable(p, ey, y, x))
            y_leaf = false;
        else
            pr->pinned |= 1ull << w;
    }
    pr->taken |= 1ull << x | (y_leaf ? 1ull << y : 0);
    pr->pinned |= 1ull << u | (y_leaf ? 0 : 1ull << y);
    pr->x[pr->n] = x;
    pr->y[pr->n] = y;
    pr->y_leaf[pr->n++] = y_leaf;
    return true;
}

/* Finds the pairs: each `x <> y` conjunct over two of the join's nodes
   where one or both are leaves nothing else names.  Counting only. */
static void find_pairs(const join_plan *p, const uint64_t *needs, uint64_t down, pairing *pr)
{
    memset(pr, 0, sizeof *pr);
    if (!p->counting)
        return;
    for (size_t c = 0; c < p->nconj; c++) {
        jconj cj = conjunct(p, p->conj[c]);
        if (cj.kind != JCONJ_OTHER || cj.a == cj.b || needs[c] != (1ull << cj.a | 1ull << cj.b))
            continue;
        if (!try_pair(p, needs, c, down, cj.a, cj.b, pr))
            try_pair(p, needs, c, down, cj.b, cj.a, pr);
    }
}

/* ---- building ---- */

static bool edge_has_cycle(const join_plan *p)
{
    uint32_t root[JOIN_MAX_VERTICES];
    for (uint32_t i = 0; i < p->nv; i++)
        root[i] = i;
    for (uint32_t i = 0; i < p->ne; i++) {
        uint32_t a = p->e[i].a, b = p->e[i].b;
        while (root[a] != a)
            a = root[a];
        while (root[b] != b)
            b = root[b];
        if (a == b)
            return true;
        root[a] = b;
    }
    return false;
}

static void add_step(join_plan *p, uint32_t w, uint64_t bound, jstep_kind kind, uint32_t driver)
{
    jstep *s = &p->steps[p->nsteps++];
    memset(s, 0, sizeof *s);
    s->vertex = w;
    s->kind = kind;
    s->driver = driver;
    s->from = JOIN_NONE;
    if (driver != JOIN_NONE)
        s->from = p->e[driver].a == w ? p->e[driver].b : p->e[driver].a;
    for (uint32_t i = 0; i < p->ne; i++) {
        const jedge *e = &p->e[i];
        if (i == driver || (e->a != w && e->b != w))
            continue;
        uint32_t z = e->a == w ? e->b : e->a;
        if (z == w || bound >> z & 1)
            s->checks[s->nchecks++] = i;
    }
}

/* Places each conjunct after the first step that binds all it names
   (one naming nothing of the join's after the first). */
static void place_conjuncts(join_plan *p, const uint64_t *needs)
{
    size_t first[JOIN_MAX_EDGES * 4], k = 0;
    uint64_t bound = 0;
    for (size_t c = 0; c < p->nconj; c++)
        first[c] = p->ncore;
    for (size_t s = 0; s < p->ncore; s++) {
        bound |= 1ull << p->steps[s].vertex;
        for (size_t c = 0; c < p->nconj; c++)
            if (first[c] == p->ncore && (needs[c] & ~bound) == 0)
                first[c] = s;
    }
    for (size_t s = 0; s < p->ncore; s++) {
        size_t from = k;
        for (size_t c = 0; c < p->nconj; c++)
            if (first[c] == s)
                p->by_step[k++] = conjunct(p, p->conj[c]);
        /* by_step is NULL without conjuncts: no pointer arithmetic on it */
        p->steps[s].conj = k > from ? p->by_step + from : NULL;
        p->steps[s].nconj = k - from;
    }
}

/* Each vertex's candidates by its labels alone. */
static void cardinalities(exec *x, join_plan *p)
{
    for (uint32_t w = 0; w < p->nv; w++) {
        jvertex *jv = &p->v[w];
        jv->card = exec_view(x)->ver->st.node_live;
        for (size_t i = 0; i < jv->nlabels; i++) {
            uint64_t c = plan_label_count(x, jv->labels[i]);
            jv->card = c < jv->card ? c : jv->card;
        }
    }
}

static void estimate(builder *b, uint64_t *scan_est)
{
    join_plan *p = b->p;
    exec *x = b->x;
    for (uint32_t w = 0; w < p->nv; w++)
        scan_est[w] = p->v[w].in_bound ? 1 : p->v[w].card;
    for (uint32_t i = 0; i < p->ne; i++) {
        p->e[i].fan[0] = stats_fan(x, p, &p->e[i], true);
        p->e[i].fan[1] = stats_fan(x, p, &p->e[i], false);
    }
}

/* Cores of up to this many vertices to bind are ordered exactly (2^n
   subsets); larger ones greedily. */
#define JOIN_DP_MAX 10

/* Partial orders the search below may extend before it keeps the best
   found: about twice the dynamic program's work at ten vertices. */
#define JOIN_SEARCH_BUDGET 2048

/* A depth-first search over the orders of vs[], pruned by the cheapest
   order found so far.  The dynamic program keeps one sequence per set, the
   cheapest to bind that set; but what a closing probe costs depends on
   when its earlier end was bound (extend's at[]), so a dearer way to a set
   can end cheaper.  Seeded with the program's order, it only improves it. */
typedef struct order_search {
    const join_plan *p;
    const uint64_t *scan_est;
    const uint32_t *vs;
    size_t k;
    double at[JOIN_MAX_VERTICES];
    uint32_t seq[JOIN_DP_MAX], best_seq[JOIN_DP_MAX];
    double best;
    long budget;
} order_search;

static void search_orders(order_search *o, uint64_t bound, size_t placed, double rows,
                          double cost)
{
    if (cost >= o->best || o->budget <= 0)
        return;
    if (placed == o->k) {
        o->best = cost;
        memcpy(o->best_seq, o->seq, sizeof o->seq);
        return;
    }
    o->budget--;
    double r[JOIN_DP_MAX], work[JOIN_DP_MAX];
    bool scan[JOIN_DP_MAX], connected = false;
    for (size_t i = 0; i < o->k; i++) {
        if (bound >> o->vs[i] & 1)
            continue;
        uint32_t drv;
        r[i] = extend(o->p, bound, o->vs[i], rows, o->scan_est, o->at, &drv, &work[i]);
        scan[i] = drv == JOIN_NONE;
        connected |= !scan[i];
    }
    for (size_t i = 0; i < o->k; i++) {
        uint32_t w = o->vs[i];
        if (bound >> w & 1 || (scan[i] && connected))
            continue;
        o->seq[placed] = w;
        o->at[w] = r[i];
        search_orders(o, bound | 1ull << w, placed + 1, r[i], cost + work[i]);
    }
}

/* The order of the core's unbound vertices with the least work over
   every order: a dynamic program over the sets bound so far, each set's
   cost that of its cheapest sequence (and its rows that sequence's).  A
   vertex no edge reaches is scanned only once nothing connected is
   left.  False when the core is too large. */
static bool best_order(const join_plan *p, uint64_t core, uint64_t bound,
                       const uint64_t *scan_est, uint32_t *order, size_t *n)
{
    uint32_t vs[JOIN_DP_MAX];
    size_t k = 0;
    for (uint32_t w = 0; w < p->nv; w++)
        if (core >> w & 1 && !(bound >> w & 1)) {
            if (k == JOIN_DP_MAX)
                return false;
            vs[k++] = w;
        }
    size_t nsets = (size_t)1 << k;
    double cost[1 << JOIN_DP_MAX], rows[1 << JOIN_DP_MAX];
    uint8_t last[1 << JOIN_DP_MAX];
    cost[0] = 0;
    rows[0] = 1;
    for (size_t t = 1; t < nsets; t++)
        cost[t] = -1;
    for (size_t set = 0; set < nsets; set++) {
        if (cost[set] < 0)
            continue;
        uint64_t b = bound;
        for (size_t i = 0; i < k; i++)
            if (set >> i & 1)
                b |= 1ull << vs[i];
        /* the rows once each vertex was bound, along this set's sequence */
        double at[JOIN_MAX_VERTICES];
        rows_at_start(p, at);
        for (size_t t = set; t; t &= ~((size_t)1 << last[t]))
            at[vs[last[t]]] = rows[t];
        double r[JOIN_DP_MAX], work[JOIN_DP_MAX];
        bool scan[JOIN_DP_MAX], connected = false;
        for (size_t i = 0; i < k; i++) {
            if (set >> i & 1)
                continue;
            uint32_t drv;
            r[i] = extend(p, b, vs[i], rows[set], scan_est, at, &drv, &work[i]);
            scan[i] = drv == JOIN_NONE;
            connected |= !scan[i];
        }
        for (size_t i = 0; i < k; i++) {
            if (set >> i & 1 || (scan[i] && connected))
                continue;
            size_t next = set | (size_t)1 << i;
            double c = cost[set] + work[i];
            if (cost[next] < 0 || c < cost[next]) {
                cost[next] = c;
                rows[next] = r[i];
                last[next] = (uint8_t)i;
            }
        }
    }
    order_search o = {.p = p, .scan_est = scan_est, .vs = vs, .k = k,
                      .best = cost[nsets - 1] * (1 + 1e-9), .budget = JOIN_SEARCH_BUDGET};
    for (size_t set = nsets - 1, j = k; set; set &= ~((size_t)1 << last[set]))
        o.best_seq[--j] = vs[last[set]];
    rows_at_start(p, o.at);
    search_orders(&o, bound, 0, 1, 0);
    memcpy(order + *n, o.best_seq, k * sizeof *order);
    *n += k;
    return true;
}

static void order_core(builder *b, uint64_t core, const uint64_t *scan_est, uint32_t *order,
                       size_t *n)
{
    join_plan *p = b->p;
    uint64_t inbound = 0;
    for (uint32_t w = 0; w < p->nv; w++)
        if (core >> w & 1 && p->v[w].in_bound) {
            inbound |= 1ull << w;
            order[(*n)++] = w;
        }
    size_t base = *n;
    if (best_order(p, core, inbound, scan_est, order, n))
        return;
    if (inbound) {
        greedy(p, core, inbound, JOIN_NONE, scan_est, order, n);
        return;
    }
    double best = -1;
    uint32_t best_start = JOIN_NONE, tmp[JOIN_MAX_VERTICES];
    for (uint32_t s = 0; s < p->nv; s++) {
        if (!(core >> s & 1))
            continue;
        size_t m = 0;
        double c = greedy(p, core, 0, s, scan_est, tmp, &m);
        if (best < 0 || c < best) {
            best = c;
            best_start = s;
        }
    }
    *n = base;
    greedy(p, core, 0, best_start, scan_est, order, n);
}

/* A leaf's estimated ways per node of its neighbour. */
static double leaf_fan(const join_plan *p, uint32_t w)
{
    for (uint32_t i = 0; i < p->ne; i++)
        if (p->e[i].a == w || p->e[i].b == w)
            return p->e[i].fan[p->e[i].a == w ? 1 : 0];
    return 0;
}

/* A pair's leaf w as a counted step along its one edge. */
static size_t add_leaf_step(join_plan *p, uint32_t w)
{
    uint32_t edge = 0;
    for (uint32_t i = 0; i < p->ne; i++)
        if (p->e[i].a == w || p->e[i].b == w)
            edge = i;
    add_step(p, w, 0, JSTEP_EXPAND, edge);
    p->steps[p->nsteps - 1].paired = true;
    return p->nsteps - 1;
}

/* The steps: the core in order (each by the input row, a scan, or its
   driver edge), then the counted vertices. */
static void make_steps(builder *b, const uint32_t *order, size_t n, const uint32_t *parent_edge,
                       const uint32_t *peeled, size_t npeeled, const pairing *pr)
{
    join_plan *p = b->p;
    uint64_t bound = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t w = order[k];
        uint32_t drv = JOIN_NONE;
        jstep_kind kind = JSTEP_BOUND;
        if (!p->v[w].in_bound) {
            double work;
            extend(p, bound, w, 1, (uint64_t[JOIN_MAX_VERTICES]){0}, NULL, &drv, &work);
            kind = drv == JOIN_NONE ? JSTEP_SCAN : JSTEP_EXPAND;
        }
        add_step(p, w, bound, kind, drv);
        if (kind == JSTEP_SCAN)
            plan_node_start(b->x, p->v[w].node, where_of(p, p->v[w].node), bound_in_input, b,
                            &p->steps[p->nsteps - 1].plan);
        bound |= 1ull << w;
    }
    p->ncore = p->nsteps;
    /* the pairs' leaves, each off a vertex of the core */
    for (size_t i = 0; i < pr->n; i++) {
        jpair *jp = &p->pairs[p->npairs++];
        uint32_t x = pr->x[i], y = pr->y[i];
        if (pr->y_leaf[i] && leaf_fan(p, y) < leaf_fan(p, x)) {
            x = y;      /* the leaf with fewer ways is the one sorted */
            y = pr->x[i];
        }
        jp->step = add_leaf_step(p, x);
        jp->vertex = y;
        jp->partner = pr->y_leaf[i] ? add_leaf_step(p, y) : SIZE_MAX;
    }
    /* counted vertices: outwards from the core, the reverse of peeling */
    for (size_t k = npeeled; k-- > 0;)
        add_step(p, peeled[k], 0, JSTEP_EXPAND, parent_edge[peeled[k]]);
}

/* ---- hash join ---- */

/* The join's vertices a conjunct or map names (no side effects, unlike
   conjunct_needs); *outside: it names something else too (the input row,
   a local of its own). */
static uint64_t names_mask(const join_plan *p, const cypher_ast_node *n, bool *outside)
{
    names ns = {0};
    collect_names(n, &ns);
    uint64_t mask = 0;
    *outside = ns.overflow;
    for (size_t i = 0; i < ns.n; i++) {
        bool ours = false;
        for (uint32_t w = 0; w < p->nv; w++)
            if (p->v[w].var && str_eq(ns.v[i], &p->v[w].var->u.name)) {
                mask |= 1ull << w;
                ours = true;
            }
        for (uint32_t k = 0; k < p->ne; k++) {
            const cypher_ast_node *var = p->e[k].rel->u.rel.variable;
            if (var && str_eq(ns.v[i], &var->u.name)) {
                mask |= 1ull << p->e[k].a | 1ull << p->e[k].b;
                ours = true;
            }
        }
        *outside |= !ours;
    }
    return mask;
}

/* What core step s depends on, for a block holding it: the vertices its
   edges and conjuncts name (*named) and whether a map or conjunct names
   anything outside the join (*outside: the input row). */
static void step_needs(const join_plan *p, size_t s, uint64_t *named, bool *outside)
{
    const jstep *st = &p->steps[s];
    const jvertex *jv = &p->v[st->vertex];
    bool out;
    *named = 1ull << st->from;
    *outside = false;
    for (size_t c = 0; c < st->nchecks; c++)
        *named |= 1ull << p->e[st->checks[c]].a | 1ull << p->e[st->checks[c]].b;
    for (size_t c = 0; c < st->nconj; c++) {
        *named |= names_mask(p, st->conj[c].expr, &out);
        *outside |= out;
    }
    for (size_t c = 0; c < jv->nprops; c++) {
        names_mask(p, jv->props[c]->u.node.properties, &out);
        *outside |= out;
    }
    for (size_t c = 0; c <= st->nchecks; c++) {
        const jedge *e = &p->e[c ? st->checks[c - 1] : st->driver];
        if (e->rel->u.rel.properties) {
            names_mask(p, e->rel->u.rel.properties, &out);
            *outside |= out;
        }
    }
}

/* Whether the core's steps [i, j) can be hash-joined — each an
   expansion (the caller checks), reaching the vertices bound before i
   (edges and conjuncts alike) only through at most JOIN_HASH_MAX_KEY of
   them, the key — given each step's needs; fills h's block. */
static bool block_fits(const join_plan *p, size_t i, size_t j, const uint64_t *needs,
                       const bool *outside, jhash *h)
{
    uint64_t before = 0, key = 0;
    for (size_t s = 0; s < i; s++)
        before |= 1ull << p->steps[s].vertex;
    h->nvert = h->nedge = 0;
    h->per_input = false;
    for (size_t s = i; s < j; s++) {
        const jstep *st = &p->steps[s];
        h->vert[h->nvert++] = st->vertex;
        h->edge[h->nedge++] = st->driver;
        for (size_t c = 0; c < st->nchecks; c++)
            h->edge[h->nedge++] = st->checks[c];
        key |= needs[s] & before;
        h->per_input |= outside[s];
    }
    int nkey = __builtin_popcountll(key);
    if (nkey < 1 || nkey > JOIN_HASH_MAX_KEY)
        return false;
    h->first = i;
    h->end = j;
    h->nkey = 0;
    for (uint32_t w = 0; w < p->nv; w++)
        if (key >> w & 1)
            h->key[h->nkey++] = w;
    return true;
}

/* Whether an edge of the block and one outside it, in one clause, may
   take the same relationship: then a row checks each match it probes. */
static bool block_may_share(const join_plan *p, const jhash *h)
{
    uint64_t in = 0;
    for (size_t k = 0; k < h->nedge; k++)
        in |= 1ull << h->edge[k];
    for (size_t k = 0; k < h->nedge; k++)
        for (uint32_t f = 0; f < p->ne; f++)
            if (!(in >> f & 1) && p->e[f].group == p->e[h->edge[k]].group &&
                types_overlap(&p->e[h->edge[k]], &p->e[f]))
                return true;
    return false;
}

/* Matches above this many, estimated, are not held in a table. */
#define HASH_MAX_MATCHES (1ull << 24)

/* Picks the block to hash-join, if any.  The walk expands a block for
   every row reaching it: rows * work, the work per row from the block's
   estimates (candidates read and closing probes, as `extend` counts
   them, plus one per conjunct or map checked on a candidate).  The hash
   join expands it once per distinct key — about C (1 - e^(-rows/C)) of
   them for a key of C possible nodes (label counts) — storing its
   matches, then each row looks its key up and binds its matches: keys *
   (work + matches) + rows * (1 + matches).  Chosen where that saves a
   quarter of the walk's cost and rows repeat keys at least twice over:
   blocks of one plain expansion never qualify (reading a cached match
   costs what reading the relationship did). */
static void choose_hash(join_plan *p, const uint64_t *scan_est)
{
    int mode = atomic_load(&hash_mode);
    if (mode == JOIN_HASH_NEVER || p->ncore < 2)
        return;
    double rows[JOIN_MAX_VERTICES + 1];
    uint64_t bound[JOIN_MAX_VERTICES + 1];
    rows[0] = 1;
    bound[0] = 0;
    for (size_t k = 0; k < p->ncore; k++) {
        uint32_t w = p->steps[k].vertex, drv;
        double work;
        rows[k + 1] = p->steps[k].kind == JSTEP_BOUND
                          ? rows[k] : extend(p, bound[k], w, rows[k], scan_est, NULL, &drv, &work);
        bound[k + 1] = bound[k] | 1ull << w;
    }
    uint64_t needs[JOIN_MAX_VERTICES];
    bool outside[JOIN_MAX_VERTICES];
    for (size_t k = 1; k < p->ncore; k++)
        if (p->steps[k].kind == JSTEP_EXPAND)
            step_needs(p, k, &needs[k], &outside[k]);
    double best_gain = 0;
    bool found = false;
    jhash h;
    for (size_t i = 1; i < p->ncore; i++) {
        /* the block [i, j)'s matches and work per key, step by step */
        double per_key = 1, work = 0;
        for (size_t j = i + 1; j <= p->ncore && p->steps[j - 1].kind == JSTEP_EXPAND; j++) {
            const jstep *st = &p->steps[j - 1];
            uint32_t drv;
            double w, keyspace = 1;
            per_key = extend(p, bound[j - 1], st->vertex, per_key, scan_est, NULL, &drv, &w);
            work += w + per_key * (double)(st->nconj + p->v[st->vertex].nprops);
            if (!block_fits(p, i, j, needs, outside, &h))
                continue;
            for (size_t k = 0; k < h.nkey; k++) {
                const jvertex *kv = &p->v[h.key[k]];
                keyspace *= kv->in_bound ? 1.0 : kv->card ? (double)kv->card : 1.0;
            }
            double r = rows[i];
            double keys = keyspace * -expm1(-r / keyspace);
            keys = keys < 1 ? 1 : keys;
            double walk = r * work, hashed = keys * (work + per_key) + r * (1 + per_key);
            double gain = walk - hashed;
            bool pays = gain > 0.25 * walk && r >= 2 * keys &&
                        keys * per_key <= (double)HASH_MAX_MATCHES;
            if ((mode == JOIN_HASH_ALWAYS || pays) && (!found || gain > best_gain)) {
                found = true;
                best_gain = gain;
                h.rows = r;
                h.keys = keys;
                h.per_key = per_key;
                p->hash = h;
            }
        }
    }
    if (!found)
        return;
    p->hashed = true;
    p->hash.check_unique = block_may_share(p, &p->hash);
}

/* "(a, b)": the names of vertices vs[0..n), into buf. */
static void vertex_list(const join_plan *p, const uint32_t *vs, size_t n, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "(");
    for (size_t i = 0; i < n && used < size; i++) {
        const jvertex *jv = &p->v[vs[i]];
        used += (size_t)snprintf(buf + used, size - used, "%s%.*s", i ? ", " : "",
                                 jv->var ? (int)jv->var->u.name.len : 1,
                                 jv->var ? jv->var->u.name.ptr : "_");
    }
    if (used < size)
        snprintf(buf + used, size - used, ")");
}

static void describe_hash(exec *x, const join_plan *p)
{
    char key[64], block[96], buf[256];
    vertex_list(p, p->hash.key, p->hash.nkey, key, sizeof key);
    vertex_list(p, p->hash.vert, p->hash.nvert, block, sizeof block);
    snprintf(buf, sizeof buf, "HashJoin %s build %s est %.3g per key over %.3g keys, "
             "probe est %.3g rows", key, block, p->hash.per_key, p->hash.keys, p->hash.rows);
    profile_note(x, buf);
}

static void describe(exec *x, const join_plan *p)
{
    char buf[192];
    snprintf(buf, sizeof buf, "Join (%zu clause%s, %zu nodes, %zu relationships)",
             p->nclauses, p->nclauses == 1 ? "" : "s", p->nv, p->ne);
    profile_note(x, buf);
    for (size_t s = 0; s < p->nsteps; s++) {
        const jstep *st = &p->steps[s];
        const jvertex *jv = &p->v[st->vertex];
        const char *name = jv->var ? jv->var->u.name.ptr : "";
        int len = jv->var ? (int)jv->var->u.name.len : 0;
        if (p->hashed && s == p->hash.first)
            describe_hash(x, p);
        if (st->kind == JSTEP_SCAN) {
            profile_note_start(x, &st->plan);
            continue;
        }
        if (st->kind == JSTEP_BOUND)
            snprintf(buf, sizeof buf, "Argument (%.*s)", len, name);
        else
            snprintf(buf, sizeof buf, "%s (%.*s) est %.3g per row%s", s < p->ncore ? "Expand"
                     : "CountExpand", len, name,
                     p->e[st->driver].fan[p->e[st->driver].a == st->from ? 0 : 1],
                     st->nchecks ? ", closing a cycle (adjacency probe)"
                     : st->paired ? ", less the ways to the node it must differ from" : "");
        profile_note(x, buf);
    }
}

void join_plan_free(exec *x, join_plan **pp)
{
    join_plan *p = *pp;
    if (!p)
        return;
    if (p->conj) {
        mem_free(x->m, p->conj);
        mem_free(x->m, p->by_step);
    }
    mem_free(x->m, p);
    *pp = NULL;
}

/* Whether every start of the pattern is a scan of at least min nodes (no
   seek, nothing bound before): an analytic pattern, where the order and
   WHERE placed early matter. */
static bool scans_only(builder *b, uint64_t min)
{
    const join_plan *p = b->p;
    /* the label counts first: a seek is never above them, and planning a
       seek lists the indices */
    for (uint32_t w = 0; w < p->nv; w++)
        if (p->v[w].in_bound || p->v[w].card < min)
            return false;
    for (uint32_t w = 0; w < p->nv; w++) {
        start_plan sp;
        plan_node_start(b->x, p->v[w].node, where_of(p, p->v[w].node), bound_in_input, b, &sp);
        if (sp.estimate < min)
            return false;
    }
    return true;
}

/* Whether the join pays for this graph: a cycle, clauses to join, a count
   it can take without enumerating, or a longer analytic pattern. */
static bool worth_it(builder *b, size_t npeeled)
{
    const join_plan *p = b->p;
    return p->nclauses > 1 || npeeled > 0 || edge_has_cycle(p) ||
           (p->ne >= 2 && scans_only(b, atomic_load(&scan_min)));
}

/* Below this many candidates for any start a pattern is left to the
   walker even where a hash join might pay: its rows are too few to
   repeat a key often. */
#define HASH_SCAN_MIN 16

/* Whether a hash join may pay where nothing else would: a pattern of two
   relationships or more with no start below HASH_SCAN_MIN candidates
   (the plan then decides, from the estimates). */
static bool hash_may_pay(builder *b)
{
    uint64_t min = atomic_load(&scan_min);
    return atomic_load(&hash_mode) != JOIN_HASH_NEVER && b->p->ne >= 2 &&
           scans_only(b, min < HASH_SCAN_MIN ? min : HASH_SCAN_MIN);
}

static int build(builder *b, const cypher_ast_node *next, scope *sc)
{
    join_plan *p = b->p;
    exec *x = b->x;
    uint64_t needs[JOIN_MAX_EDGES * 4];
    if (split_where(x, p) != 0)
        return -1;
    if (p->nconj > sizeof needs / sizeof *needs) {
        b->reject = true;
        return 0;
    }
    for (size_t c = 0; c < p->nconj; c++)
        conjunct_needs(p, p->conj[c], &needs[c]);
    p->counting = projection_only_counts(next);
    names down = {0};
    if (p->counting)
        collect_names(next, &down);
    p->sum_only = p->counting;
    uint64_t down_mask = 0;
    for (uint32_t w = 0; w < p->nv; w++) {
        bool named = !p->counting || names_has(&down, p->v[w].var);
        p->v[w].referenced |= named;
        p->sum_only &= !named;
        down_mask |= (uint64_t)named << w;
    }
    for (uint32_t i = 0; i < p->ne; i++) {
        bool named = !p->counting || names_has(&down, p->e[i].rel->u.rel.variable);
        p->e[i].referenced |= named;
        p->sum_only &= !named;
    }
    uint32_t parent_edge[JOIN_MAX_VERTICES], peeled[JOIN_MAX_VERTICES];
    size_t npeeled = 0;
    cardinalities(x, p);
    pairing pr;
    find_pairs(p, needs, down_mask, &pr);
    uint64_t all = p->nv == 64 ? ~0ull : (1ull << p->nv) - 1;
    uint64_t core = peel(p, all & ~pr.taken, pr.pinned, parent_edge, peeled, &npeeled);
    bool worth = worth_it(b, npeeled + pr.n);
    if (!worth && !hash_may_pay(b)) {
        b->reject = true;
        return 0;
    }
    uint64_t scan_est[JOIN_MAX_VERTICES];
    estimate(b, scan_est);
    uint32_t order[JOIN_MAX_VERTICES];
    size_t n = 0;
    order_core(b, core, scan_est, order, &n);
    make_steps(b, order, n, parent_edge, peeled, npeeled, &pr);
    place_conjuncts(p, needs);
    choose_hash(p, scan_est);
    if (!worth && !p->hashed) {
        b->reject = true;
        return 0;
    }
    /* from here the run is the join's: its names are declared, in the
       walker's order */
    for (size_t i = 0; i < b->clause_vars.n; i++)
        if (scope_add(x, sc, b->clause_vars.v[i]->ptr, b->clause_vars.v[i]->len, NULL) != 0)
            return -1;
    for (uint32_t w = 0; w < p->nv; w++)
        if (p->v[w].var)
            p->v[w].slot = scope_find(sc, p->v[w].var->u.name.ptr, p->v[w].var->u.name.len);
    for (uint32_t i = 0; i < p->ne; i++)
        if (p->e[i].rel->u.rel.variable)
            p->e[i].slot = scope_find(sc, p->e[i].rel->u.rel.variable->u.name.ptr,
                                      p->e[i].rel->u.rel.variable->u.name.len);
    if (x->prof)
        describe(x, p);
    return 0;
}

/* How many relationship patterns clause has. */
static size_t relationships_in(const cypher_ast_node *clause)
{
    size_t n = 0;
    for (size_t i = 0; i < clause->u.match.parts.count; i++)
        n += clause->u.match.parts.items[i]->u.part.path->u.list.count / 2;
    return n;
}

/* One clause of at most one relationship, its rows not only counted:
   nothing the join could do better (worth_it), so a point query pays no
   plan. */
bool join_shape_refuses(const cypher_ast_node *const *clauses, size_t n,
                        const cypher_ast_node *next)
{
    return n == 1 && relationships_in(clauses[0]) < 2 && !projection_only_counts(next);
}

int join_plan_build(exec *x, const cypher_ast_node *const *clauses, size_t n,
                    const cypher_ast_node *next, scope *sc, join_plan **out, size_t *absorbed)
{
    *out = NULL;
    *absorbed = 0;
    if (atomic_load(&join_off) || !n || join_shape_refuses(clauses, n, next))
        return 0;
    /* the longest prefix of the run the join takes whole, at least one */
    for (size_t take = n; take > 0; take--) {
        join_plan *p = mem_alloc(x->m, sizeof *p);
        if (!p)
            return exec_oom(x);
        memset(p, 0, offsetof(join_plan, v));
        p->clauses = clauses;
        p->nclauses = take;
        p->in_width = x->width;
        builder b = {.x = x, .p = p, .sc = sc};
        declare_names(&b);
        for (size_t c = 0; c < take && !b.reject; c++)
            add_clause(&b, clauses[c], (uint32_t)c);
        size_t width = x->width;
        int rc = b.reject ? 0 : build(&b, take < n ? clauses[take] : next, sc);
        if (rc == 0 && !b.reject) {
            *out = p;
            *absorbed = take;
            return 0;
        }
        join_plan_free(x, &p);
        if (rc != 0)
            return -1;
        if (x->width != width)
            return 0;   /* cannot happen: names are declared only once accepted */
    }
    return 0;
}
