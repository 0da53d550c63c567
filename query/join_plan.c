/* join_plan — whether a run of MATCH clauses runs as a join, and in which
   order its vertices are bound (join.h). */
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>

#include "query/aggregate.h"
#include "query/join.h"
#include "query/profile.h"

static atomic_bool join_off;
/* Below this many candidates for its cheapest start a pattern is a point
   query, where sampling fan-outs would cost more than a better order
   saves. */
static _Atomic uint64_t scan_min = 1000;

void join_set_enabled(bool on) { atomic_store(&join_off, !on); }

void join_set_scan_min(uint64_t n) { atomic_store(&scan_min, n); }

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
    int state = 0;
    for (size_t i = 0; i < cl->u.projection.items.count; i++)
        find_aggregates(cl->u.projection.items.items[i], &state);
    for (size_t i = 0; i < cl->u.projection.order.count; i++)
        find_aggregates(cl->u.projection.order.items[i], &state);
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

static bool has_labels(strata_view *v, uint64_t id, const jvertex *jv)
{
    for (size_t i = 0; i < jv->nlabels; i++) {
        bool has = false;
        if (strata_node_has_label(v, id, jv->labels[i], &has) != STRATA_OK || !has)
            return false;
    }
    return true;
}

#define SAMPLE_NODES 32
#define SAMPLE_EDGES_MAX 4096

/* The mean number of e's relationships from a node of vertex `from` whose
   other end may be the vertex at e's other end, over the first nodes that
   may be `from`. */
static double sample_fan(exec *x, join_plan *p, const jedge *e, bool from_a)
{
    strata_view *v = exec_view(x);
    const jvertex *u = &p->v[from_a ? e->a : e->b], *w = &p->v[from_a ? e->b : e->a];
    strata_node_iter *it = NULL;
    strata_token best = 0;
    uint64_t best_count = UINT64_MAX;
    for (size_t i = 0; i < u->nlabels; i++) {
        uint64_t c = plan_label_count(x, u->labels[i]);
        if (c < best_count) {
            best_count = c;
            best = u->labels[i];
        }
    }
    if ((u->nlabels ? strata_nodes_by_label(v, best, &it) : strata_nodes(v, &it)) != STRATA_OK)
        return 1.0;
    strata_direction dir = edge_dir(e, from_a);
    uint64_t nodes = 0, rels = 0, seen = 0;
    strata_id id;
    while (nodes < SAMPLE_NODES && seen < SAMPLE_EDGES_MAX && strata_node_iter_next(it, &id)) {
        if (!has_labels(v, id, u))
            continue;
        nodes++;
        for (size_t t = 0; t < (e->ntypes ? e->ntypes : 1); t++) {
            strata_edge_iter *ei;
            if (strata_neighbours(v, id, dir, e->ntypes ? e->types[t] : STRATA_ANY_TYPE, &ei) !=
                STRATA_OK)
                continue;
            strata_id rid, other;
            while (seen < SAMPLE_EDGES_MAX && strata_edge_iter_next(ei, &rid, &other)) {
                seen++;
                rels += has_labels(v, other, w);
            }
            strata_edge_iter_free(&ei);
        }
    }
    strata_node_iter_free(&it);
    return nodes ? (double)rels / (double)nodes : 0.0;
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

/* The rows expected after binding w, given the bound set and rows so far;
   *driver the edge to reach it by (JOIN_NONE: a scan). */
static double extend(const join_plan *p, uint64_t bound, uint32_t w, double rows,
                     const uint64_t *scan_est, uint32_t *driver)
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
    double r = *driver == JOIN_NONE ? rows * (double)scan_est[w] : rows * best;
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
    }
    return r;
}

/* The greedy order from the bound set (and start, unless JOIN_NONE) over
   the core vertices; its cost, the order in order[]. */
static double greedy(const join_plan *p, uint64_t core, uint64_t bound, uint32_t start,
                     const uint64_t *scan_est, uint32_t *order, size_t *n)
{
    double rows = 1, cost = 0;
    if (start != JOIN_NONE) {
        rows = (double)scan_est[start];
        cost = rows;
        bound |= 1ull << start;
        order[(*n)++] = start;
    }
    for (;;) {
        uint32_t best = JOIN_NONE, drv;
        double best_rows = 0;
        bool best_scan = true;
        for (uint32_t w = 0; w < p->nv; w++) {
            if (!(core >> w & 1) || bound >> w & 1)
                continue;
            double r = extend(p, bound, w, rows, scan_est, &drv);
            bool scan = drv == JOIN_NONE;
            /* a scan (a cartesian product) only when nothing connected is left */
            if (best == JOIN_NONE || (best_scan && !scan) ||
                (best_scan == scan && r < best_rows)) {
                best = w;
                best_rows = r;
                best_scan = scan;
            }
        }
        if (best == JOIN_NONE)
            return cost;
        rows = best_rows;
        cost += rows;
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
   relationship (*edge). */
static bool peelable(const join_plan *p, uint64_t core, uint32_t w, uint32_t *edge)
{
    const jvertex *jv = &p->v[w];
    if (!(core >> w & 1) || jv->referenced || jv->in_bound || jv->nprops)
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
static uint64_t peel(const join_plan *p, uint32_t *parent_edge, uint32_t *peeled, size_t *npeeled)
{
    uint64_t core = p->nv == 64 ? ~0ull : (1ull << p->nv) - 1;
    while (__builtin_popcountll(core) > 1) {
        uint32_t best = JOIN_NONE, edge;
        for (uint32_t w = 0; w < p->nv; w++)
            if (peelable(p, core, w, &edge) && (best == JOIN_NONE || p->v[w].card > p->v[best].card))
                best = w;
        if (best == JOIN_NONE)
            break;
        peelable(p, core, best, &edge);
        core &= ~(1ull << best);
        parent_edge[best] = edge;
        peeled[(*npeeled)++] = best;
    }
    return core;
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
        p->steps[s].conj = p->by_step + k;
        for (size_t c = 0; c < p->nconj; c++)
            if (first[c] == s)
                p->by_step[k++] = conjunct(p, p->conj[c]);
        p->steps[s].nconj = (size_t)(p->by_step + k - p->steps[s].conj);
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
        p->e[i].fan[0] = sample_fan(x, p, &p->e[i], true);
        p->e[i].fan[1] = sample_fan(x, p, &p->e[i], false);
    }
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

/* The steps: the core in order (each by the input row, a scan, or its
   driver edge), then the counted vertices. */
static void make_steps(builder *b, const uint32_t *order, size_t n, const uint32_t *parent_edge,
                       const uint32_t *peeled, size_t npeeled)
{
    join_plan *p = b->p;
    uint64_t bound = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t w = order[k];
        uint32_t drv = JOIN_NONE;
        jstep_kind kind = JSTEP_BOUND;
        if (!p->v[w].in_bound) {
            extend(p, bound, w, 1, (uint64_t[JOIN_MAX_VERTICES]){0}, &drv);
            kind = drv == JOIN_NONE ? JSTEP_SCAN : JSTEP_EXPAND;
        }
        add_step(p, w, bound, kind, drv);
        if (kind == JSTEP_SCAN)
            plan_node_start(b->x, p->v[w].node, where_of(p, p->v[w].node), bound_in_input, b,
                            &p->steps[p->nsteps - 1].plan);
        bound |= 1ull << w;
    }
    p->ncore = p->nsteps;
    /* counted vertices: outwards from the core, the reverse of peeling */
    for (size_t k = npeeled; k-- > 0;) {
        add_step(p, peeled[k], 0, JSTEP_EXPAND, parent_edge[peeled[k]]);
    }
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
                     st->nchecks ? ", closing a cycle (adjacency probe)" : "");
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

/* Whether every start of the pattern is a scan of at least scan_min
   nodes (no seek, nothing bound before): an analytic pattern, where the
   order and WHERE placed early matter. */
static bool scans_only(builder *b)
{
    const join_plan *p = b->p;
    uint64_t min = atomic_load(&scan_min);
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
           (p->ne >= 2 && scans_only(b));
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
    for (uint32_t w = 0; w < p->nv; w++) {
        bool named = !p->counting || names_has(&down, p->v[w].var);
        p->v[w].referenced |= named;
        p->sum_only &= !named;
    }
    for (uint32_t i = 0; i < p->ne; i++) {
        bool named = !p->counting || names_has(&down, p->e[i].rel->u.rel.variable);
        p->e[i].referenced |= named;
        p->sum_only &= !named;
    }
    uint32_t parent_edge[JOIN_MAX_VERTICES], peeled[JOIN_MAX_VERTICES];
    size_t npeeled = 0;
    cardinalities(x, p);
    uint64_t core = peel(p, parent_edge, peeled, &npeeled);
    if (!worth_it(b, npeeled)) {
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
    uint64_t scan_est[JOIN_MAX_VERTICES];
    estimate(b, scan_est);
    uint32_t order[JOIN_MAX_VERTICES];
    size_t n = 0;
    order_core(b, core, scan_est, order, &n);
    make_steps(b, order, n, parent_edge, peeled, npeeled);
    place_conjuncts(p, needs);
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

int join_plan_build(exec *x, const cypher_ast_node *const *clauses, size_t n,
                    const cypher_ast_node *next, scope *sc, join_plan **out, size_t *absorbed)
{
    *out = NULL;
    *absorbed = 0;
    if (atomic_load(&join_off) || !n)
        return 0;
    /* one clause of at most one relationship, its rows not only counted:
       nothing the join could do better (worth_it), so a point query pays
       no plan */
    if (n == 1 && relationships_in(clauses[0]) < 2 && !projection_only_counts(next))
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
