/*
 * op_project — WITH and RETURN: projection, aggregation, DISTINCT,
 * ORDER BY, SKIP, LIMIT and WITH's WHERE, in that order.
 *
 * Projection writes each item into a new slot and keeps the input's slots
 * until ORDER BY has run, so a sort key may name a variable the projection
 * dropped (openCypher allows it when there is no aggregation or
 * DISTINCT).  A sort key written exactly like a projected expression (same
 * canonical form) reads that item's value, which is what makes
 * `ORDER BY count(*)` work after an aggregation.
 *
 * Aggregation groups rows by the values of the items that hold no
 * aggregate (grouping uses value_equivalent: null groups with null, 1
 * with 1.0), keeps per group the first input row and one accumulator per
 * aggregate call, and evaluates each aggregating item once per group with
 * the accumulators' results substituted for the calls.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/pipeline.h"

/* ---- aggregate accumulators ---- */

/* X(kind, name, arguments) — the aggregate functions; is_aggregate_call
   and the accumulators read this one list. */
#define AGGREGATES(X)                                                    \
    X(COUNT, "count", 1) X(SUM, "sum", 1) X(AVG, "avg", 1)               \
    X(MIN, "min", 1) X(MAX, "max", 1) X(COLLECT, "collect", 1)           \
    X(STDEV, "stDev", 1) X(STDEVP, "stDevP", 1)                          \
    X(PERCENTILE_CONT, "percentileCont", 2)                              \
    X(PERCENTILE_DISC, "percentileDisc", 2)

typedef enum agg_kind {
#define X(kind, name, nargs) AGG_##kind,
    AGGREGATES(X)
#undef X
} agg_kind;

static const struct aggregate {
    const char *name;
    size_t nargs;
} aggregates[] = {
#define X(kind, name, nargs) {name, nargs},
    AGGREGATES(X)
#undef X
};

typedef struct acc {
    int64_t count;
    bool is_float;
    int64_t isum;
    double fsum;
    double mean, m2;        /* stDev: Welford's running mean and squared deviations */
    double percentile;      /* percentileCont / Disc: the second argument */
    value best;             /* min / max */
    value *items;           /* collect and the percentiles' values, DISTINCT's seen values */
    size_t nitems, capitems;
} acc;

/* The aggregate a call names, or -1. */
static int aggregate_of(const cypher_ast_node *e)
{
    if (e->kind == CYPHER_AST_COUNT_STAR)
        return AGG_COUNT;
    if (e->kind != CYPHER_AST_FUNCTION)
        return -1;
    for (size_t i = 0; i < sizeof aggregates / sizeof *aggregates; i++)
        if (strcasecmp(e->u.function.name.ptr, aggregates[i].name) == 0)
            return (int)i;
    return -1;
}

bool is_aggregate_call(const cypher_ast_node *e) { return aggregate_of(e) >= 0; }

static agg_kind agg_of(const cypher_ast_node *call) { return (agg_kind)aggregate_of(call); }

/* Whether the accumulator keeps every value (so DISTINCT needs no list of
   its own). */
static bool keeps_values(agg_kind k)
{
    return k == AGG_COLLECT || k == AGG_PERCENTILE_CONT || k == AGG_PERCENTILE_DISC;
}

static int acc_keep(exec *x, acc *a, value v)
{
    if (a->nitems == a->capitems) {
        size_t cap = a->capitems ? a->capitems * 2 : 8;
        value *it = mem_realloc(x->m, a->items, a->capitems * sizeof *it, cap * sizeof *it);
        if (!it) {
            value_release(&v);
            return exec_oom(x);
        }
        a->items = it;
        a->capitems = cap;
    }
    a->items[a->nitems++] = v;
    return 0;
}

static void acc_free(acc *a)
{
    value_release(&a->best);
    for (size_t i = 0; i < a->nitems; i++)
        value_release(&a->items[i]);
    if (a->items)
        mem_free(mem_scratch(), a->items, a->capitems * sizeof(value));
    memset(a, 0, sizeof *a);
}

/* The percentile argument: a number in [0, 1]. */
static int read_percentile(exec *x, const cypher_ast_node *call, const evalctx *c, double *out)
{
    value p;
    if (eval(c, call->u.function.args.items[1], &p) != 0)
        return -1;
    if (!value_is_number(&p)) {
        int rc = exec_fail(x, call, "TypeError", "InvalidArgumentType",
                           "%s() expects a number as the percentile, not %s",
                           call->u.function.name.ptr, value_type_name(&p));
        value_release(&p);
        return rc;
    }
    *out = value_kind(&p) == VAL_FLOAT ? p.u.f : (double)p.u.i;
    if (!(*out >= 0.0 && *out <= 1.0))
        return exec_fail(x, call, "ArgumentError", "NumberOutOfRange",
                         "%s(): the percentile must be between 0.0 and 1.0, not %g",
                         call->u.function.name.ptr, *out);
    return 0;
}

static int acc_number(exec *x, const cypher_ast_node *call, agg_kind k, acc *a, value *v)
{
    if (!value_is_number(v)) {
        int rc = exec_fail(x, call, "TypeError", "InvalidArgumentType",
                           "%s() expects numbers, not %s", call->u.function.name.ptr,
                           value_type_name(v));
        value_release(v);
        return rc;
    }
    a->count++;
    double d = value_kind(v) == VAL_FLOAT ? v->u.f : (double)v->u.i;
    if (k == AGG_STDEV || k == AGG_STDEVP) {
        double delta = d - a->mean;
        a->mean += delta / (double)a->count;
        a->m2 += delta * (d - a->mean);
    } else if (value_kind(v) == VAL_FLOAT || k == AGG_AVG) {
        if (!a->is_float) {
            a->fsum = (double)a->isum;
            a->is_float = true;
        }
        a->fsum += d;
    } else if (a->is_float) {
        a->fsum += d;
    } else if (__builtin_add_overflow(a->isum, v->u.i, &a->isum)) {
        return exec_fail(x, call, "ArgumentError", "IntegerOverflow",
                         "integer overflow in sum()");
    }
    value_release(v);
    return 0;
}

static int acc_add(exec *x, const cypher_ast_node *call, acc *a, const evalctx *c)
{
    agg_kind k = agg_of(call);
    if (call->kind == CYPHER_AST_COUNT_STAR) {
        a->count++;
        return 0;
    }
    size_t want = aggregates[k].nargs;
    if (call->u.function.args.count != want)
        return exec_fail(x, call, "SyntaxError", "InvalidNumberOfArguments",
                         "%s() takes %zu argument%s", call->u.function.name.ptr, want,
                         want == 1 ? "" : "s");
    if (want == 2 && read_percentile(x, call, c, &a->percentile) != 0)
        return -1;
    value v;
    if (eval(c, call->u.function.args.items[0], &v) != 0)
        return -1;
    if (value_is_null(&v))
        return 0;
    if (call->u.function.distinct) {
        for (size_t i = 0; i < a->nitems; i++)
            if (value_equivalent(&a->items[i], &v)) {
                value_release(&v);
                return 0;
            }
        if (!keeps_values(k) && acc_keep(x, a, value_retain(v)) != 0) {
            value_release(&v);
            return -1;
        }
    }
    switch (k) {
    case AGG_COUNT:
        a->count++;
        break;
    case AGG_SUM:
    case AGG_AVG:
    case AGG_STDEV:
    case AGG_STDEVP:
        return acc_number(x, call, k, a, &v);
    case AGG_MIN:
    case AGG_MAX:
        if (value_is_null(&a->best) ||
            (k == AGG_MIN ? value_order(&v, &a->best) < 0 : value_order(&v, &a->best) > 0)) {
            value_release(&a->best);
            a->best = v;
            return 0;
        }
        break;
    case AGG_PERCENTILE_CONT:
    case AGG_PERCENTILE_DISC:
        if (!value_is_number(&v))
            return acc_number(x, call, k, a, &v);   /* the type error */
        return acc_keep(x, a, v);
    case AGG_COLLECT:
        return acc_keep(x, a, v);
    }
    value_release(&v);
    return 0;
}

static int order_values(const void *a, const void *b) { return value_order(a, b); }

static double number_of(const value *v)
{
    return value_kind(v) == VAL_FLOAT ? v->u.f : (double)v->u.i;
}

/* Neo4j's percentiles over the sorted values: percentileDisc picks the
   value at rank ceil(p * n) (the first for p = 0); percentileCont
   interpolates linearly at position p * (n - 1). */
static value percentile_of(acc *a, agg_kind k)
{
    size_t n = a->nitems;
    if (n == 0)
        return value_null();
    qsort(a->items, n, sizeof *a->items, order_values);
    double p = a->percentile;
    if (k == AGG_PERCENTILE_DISC) {
        double rank = ceil(p * (double)n);
        size_t i = rank < 1.0 ? 0 : (size_t)rank - 1;
        return value_retain(a->items[i < n ? i : n - 1]);
    }
    double pos = p * (double)(n - 1);
    size_t lo = (size_t)floor(pos), hi = (size_t)ceil(pos);
    double vlo = number_of(&a->items[lo]), vhi = number_of(&a->items[hi]);
    return value_float(vlo + (vhi - vlo) * (pos - (double)lo));
}

static int acc_result(exec *x, const cypher_ast_node *call, acc *a, value *out)
{
    *out = value_null();
    agg_kind k = agg_of(call);
    switch (k) {
    case AGG_COUNT:
        *out = value_int(a->count);
        return 0;
    case AGG_SUM:
        *out = a->is_float ? value_float(a->fsum) : value_int(a->isum);
        return 0;
    case AGG_AVG:
        if (a->count)
            *out = value_float(a->fsum / (double)a->count);
        return 0;
    case AGG_STDEV:
        /* the sample deviation; 0.0 below two values, as Neo4j */
        *out = value_float(a->count < 2 ? 0.0 : sqrt(a->m2 / (double)(a->count - 1)));
        return 0;
    case AGG_STDEVP:
        *out = value_float(a->count < 1 ? 0.0 : sqrt(a->m2 / (double)a->count));
        return 0;
    case AGG_MIN:
    case AGG_MAX:
        *out = value_retain(a->best);
        return 0;
    case AGG_PERCENTILE_CONT:
    case AGG_PERCENTILE_DISC:
        *out = percentile_of(a, k);
        return 0;
    case AGG_COLLECT: {
        value *copy = mem_alloc(x->m, (a->nitems ? a->nitems : 1) * sizeof(value));
        if (!copy)
            return exec_oom(x);
        for (size_t i = 0; i < a->nitems; i++)
            copy[i] = value_retain(a->items[i]);
        int rc = value_list_from(x->m, copy, a->nitems, out);
        mem_free(x->m, copy, (a->nitems ? a->nitems : 1) * sizeof(value));
        return rc == 0 ? 0 : exec_value_fail(x, call, rc);
    }
    }
    return 0;
}

/* ---- items ---- */

typedef struct item {
    const cypher_ast_node *expr;
    const char *name;
    size_t len;
    size_t slot;
    bool aggregating;
    size_t src_slot;                   /* `*` items: the variable's input slot */
} item;

typedef struct calls {
    const cypher_ast_node **v;
    size_t n, cap;
    exec *x;
    int err;
} calls;

static int collect_calls(const cypher_ast_node *e, void *ctx)
{
    calls *cs = ctx;
    if (is_aggregate_call(e)) {
        if (e->kind == CYPHER_AST_FUNCTION)
            for (size_t i = 0; i < e->u.function.args.count; i++)
                if (expr_has_aggregate(e->u.function.args.items[i])) {
                    cs->err = exec_fail(cs->x, e, "SyntaxError", "NestedAggregation",
                                        "aggregations cannot be nested");
                    return 1;
                }
        if (cs->n == cs->cap) {
            size_t cap = cs->cap ? cs->cap * 2 : 8;
            const cypher_ast_node **v = mem_realloc(cs->x->m, cs->v, cs->cap * sizeof *v,
                                                    cap * sizeof *v);
            if (!v) {
                cs->err = exec_oom(cs->x);
                return 1;
            }
            cs->v = v;
            cs->cap = cap;
        }
        cs->v[cs->n++] = e;
        return 0;
    }
    if (e->kind == CYPHER_AST_EXISTS)
        return 0;   /* the subquery's aggregates are its own */
    return cypher_ast_each_child(e, collect_calls, ctx);
}

static int name_cmp(const void *a, const void *b)
{
    const binding *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* ---- grouping ---- */

typedef struct group {
    uint64_t hash;
    value *keys;        /* nkeys */
    value *rep;         /* the first input row (in width) */
    acc *accs;          /* ncalls */
} group;

typedef struct grouping {
    group *g;
    size_t n, cap;
    size_t *table;      /* open addressing: group index + 1, 0 empty */
    size_t tcap;
} grouping;

static int grouping_find(exec *x, grouping *gr, value *keys, size_t nkeys, size_t ncalls,
                         const value *row, size_t width, group **out)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < nkeys; i++)
        h = (h ^ value_hash(&keys[i])) * 1099511628211ULL;
    if (gr->tcap) {
        for (size_t p = h & (gr->tcap - 1);; p = (p + 1) & (gr->tcap - 1)) {
            size_t gi = gr->table[p];
            if (!gi)
                break;
            group *g = &gr->g[gi - 1];
            if (g->hash != h)
                continue;
            bool same = true;
            for (size_t i = 0; i < nkeys && same; i++)
                same = value_equivalent(&g->keys[i], &keys[i]);
            if (same) {
                for (size_t i = 0; i < nkeys; i++)
                    value_release(&keys[i]);
                *out = g;
                return 0;
            }
        }
    }
    /* a new group */
    if ((gr->n + 1) * 2 > gr->tcap) {
        size_t tcap = gr->tcap ? gr->tcap * 2 : 64;
        size_t *t = mem_calloc(x->m, tcap * sizeof *t);
        if (!t)
            return exec_oom(x);
        for (size_t i = 0; i < gr->n; i++) {
            size_t p = gr->g[i].hash & (tcap - 1);
            while (t[p])
                p = (p + 1) & (tcap - 1);
            t[p] = i + 1;
        }
        if (gr->table)
            mem_free(x->m, gr->table, gr->tcap * sizeof *t);
        gr->table = t;
        gr->tcap = tcap;
    }
    if (gr->n == gr->cap) {
        size_t cap = gr->cap ? gr->cap * 2 : 16;
        group *g = mem_realloc(x->m, gr->g, gr->cap * sizeof *g, cap * sizeof *g);
        if (!g)
            return exec_oom(x);
        gr->g = g;
        gr->cap = cap;
    }
    group *g = &gr->g[gr->n];
    memset(g, 0, sizeof *g);
    g->hash = h;
    g->keys = mem_calloc(x->m, (nkeys ? nkeys : 1) * sizeof(value));
    g->rep = mem_calloc(x->m, (width ? width : 1) * sizeof(value));
    g->accs = mem_calloc(x->m, (ncalls ? ncalls : 1) * sizeof(acc));
    if (!g->keys || !g->rep || !g->accs) {
        if (g->keys) mem_free(x->m, g->keys, (nkeys ? nkeys : 1) * sizeof(value));
        if (g->rep) mem_free(x->m, g->rep, (width ? width : 1) * sizeof(value));
        if (g->accs) mem_free(x->m, g->accs, (ncalls ? ncalls : 1) * sizeof(acc));
        return exec_oom(x);
    }
    for (size_t i = 0; i < nkeys; i++) {
        g->keys[i] = keys[i];
        keys[i] = value_null();
    }
    for (size_t i = 0; i < width && row; i++)
        g->rep[i] = value_retain(row[i]);
    size_t p = h & (gr->tcap - 1);
    while (gr->table[p])
        p = (p + 1) & (gr->tcap - 1);
    gr->table[p] = ++gr->n;
    *out = g;
    return 0;
}

static void grouping_free(grouping *gr, size_t nkeys, size_t ncalls, size_t width)
{
    mem_ctx *m = mem_scratch();
    for (size_t i = 0; i < gr->n; i++) {
        group *g = &gr->g[i];
        for (size_t k = 0; k < nkeys; k++)
            value_release(&g->keys[k]);
        for (size_t k = 0; k < width; k++)
            value_release(&g->rep[k]);
        for (size_t k = 0; k < ncalls; k++)
            acc_free(&g->accs[k]);
        mem_free(m, g->keys, (nkeys ? nkeys : 1) * sizeof(value));
        mem_free(m, g->rep, (width ? width : 1) * sizeof(value));
        mem_free(m, g->accs, (ncalls ? ncalls : 1) * sizeof(acc));
    }
    if (gr->g)
        mem_free(m, gr->g, gr->cap * sizeof *gr->g);
    if (gr->table)
        mem_free(m, gr->table, gr->tcap * sizeof *gr->table);
}

/* ---- sorting ---- */

typedef struct sort_ctx {
    value *keys;        /* nrows * nkeys */
    size_t nkeys;
    const bool *desc;
} sort_ctx;

static int sort_cmp(const void *a, const void *b, void *arg)
{
    const sort_ctx *s = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    for (size_t k = 0; k < s->nkeys; k++) {
        int c = value_order(&s->keys[i * s->nkeys + k], &s->keys[j * s->nkeys + k]);
        if (c)
            return s->desc[k] ? -c : c;
    }
    return (i > j) - (i < j);   /* stable */
}

/* Parts of the sort keys written like a projected item read that item's
   value: after aggregation or DISTINCT the input variables are gone from
   the rows, and this is how `ORDER BY a.name` still works after
   `WITH a.name AS name, count(*) AS c` (the semantic pass allowed only
   such parts).  Outermost parts first; one stand-in per part. */
typedef struct stand_ins {
    exec *x;
    const item *items;
    size_t nitems;
    const cypher_ast_node **parts;
    size_t *item_of;            /* the item each part reads */
    size_t n, cap;
    int err;
} stand_ins;

static int find_stand_ins(const cypher_ast_node *e, void *ctx)
{
    stand_ins *si = ctx;
    for (size_t i = 0; i < si->nitems; i++) {
        if (!si->items[i].expr || !expr_same(si->x, si->items[i].expr, e))
            continue;
        if (si->n == si->cap) {
            size_t cap = si->cap ? si->cap * 2 : 8;
            const cypher_ast_node **p = mem_realloc(si->x->m, si->parts,
                                                    si->cap * sizeof *p, cap * sizeof *p);
            if (p)
                si->parts = p;
            size_t *it = p ? mem_realloc(si->x->m, si->item_of, si->cap * sizeof *it,
                                         cap * sizeof *it) : NULL;
            if (!p || !it) {
                si->err = exec_oom(si->x);
                return 1;
            }
            si->item_of = it;
            si->cap = cap;
        }
        si->parts[si->n] = e;
        si->item_of[si->n++] = i;
        return 0;
    }
    return cypher_ast_each_child(e, find_stand_ins, ctx);
}

static void stand_ins_free(stand_ins *si)
{
    if (si->parts)
        mem_free(si->x->m, si->parts, si->cap * sizeof *si->parts);
    if (si->item_of)
        mem_free(si->x->m, si->item_of, si->cap * sizeof *si->item_of);
}

static int eval_count(exec *x, const cypher_ast_node *e, const char *what, int64_t *out)
{
    evalctx c = {x, NULL, NULL, NULL, NULL};
    value v;
    if (eval(&c, e, &v) != 0)
        return -1;
    if (value_kind(&v) == VAL_FLOAT && v.u.f == floor(v.u.f) && v.u.f >= 0)
        v = value_int((int64_t)v.u.f);
    if (value_kind(&v) != VAL_INT) {
        value_release(&v);
        return exec_fail(x, e, "SyntaxError", "InvalidArgumentType",
                         "%s expects a non-negative integer", what);
    }
    if (v.u.i < 0)
        return exec_fail(x, e, "SyntaxError", "NegativeIntegerArgument",
                         "%s must not be negative", what);
    *out = v.u.i;
    return 0;
}

/* The items of a projection: `*` first (variables sorted by name), then
   the list, each with a new slot in nsc; the aggregate calls go to cs. */
static int project_items(exec *x, const cypher_ast_node *clause, const scope *sc,
                         item **itemsp, size_t *nitemsp, size_t *capp, calls *cs, scope *nsc)
{
    const cypher_ast_list *its = &clause->u.projection.items;
    size_t nstars = clause->u.projection.star ? sc->n : 0;
    size_t capitems = nstars + its->count + 1, nitems = 0;
    item *items = mem_calloc(x->m, capitems * sizeof *items);
    if (!items)
        return exec_oom(x);
    *itemsp = items;
    *capp = capitems;
    if (nstars) {
        binding *stars = mem_alloc(x->m, nstars * sizeof *stars);
        if (!stars)
            return exec_oom(x);
        memcpy(stars, sc->b, nstars * sizeof *stars);
        qsort(stars, nstars, sizeof *stars, name_cmp);
        for (size_t i = 0; i < nstars; i++) {
            if (scope_name_hidden(stars[i].name, stars[i].len))
                continue;
            /* skip shadowed duplicates: scope_add never duplicates names */
            items[nitems].name = stars[i].name;
            items[nitems].len = stars[i].len;
            items[nitems].src_slot = stars[i].slot;
            nitems++;
        }
        mem_free(x->m, stars, nstars * sizeof *stars);
    } else if (clause->u.projection.star && clause->kind == CYPHER_AST_RETURN) {
        /* WITH * over no variables passes the rows on; RETURN * has no
           columns to return */
        return exec_fail(x, clause, "SyntaxError", "NoVariablesInScope",
                         "RETURN * is not allowed when there are no variables in scope");
    }
    for (size_t i = 0; i < its->count; i++) {
        const cypher_ast_node *pi = its->items[i];
        item *it = &items[nitems++];
        it->expr = pi->u.alias.expr;
        if (pi->u.alias.alias) {
            it->name = pi->u.alias.alias->u.name.ptr;
            it->len = pi->u.alias.alias->u.name.len;
        } else {
            it->name = pi->u.alias.text.ptr;
            it->len = pi->u.alias.text.len;
        }
        it->aggregating = expr_has_aggregate(it->expr);
        if (it->aggregating)
            collect_calls(it->expr, cs);
        if (cs->err)
            return -1;
    }
    *nitemsp = nitems;
    for (size_t i = 0; i < nitems; i++)
        for (size_t j = 0; j < i; j++)
            if (items[i].len == items[j].len && memcmp(items[i].name, items[j].name,
                                                       items[i].len) == 0)
                return exec_fail(x, its->count ? its->items[0] : clause, "SyntaxError",
                                 "ColumnNameConflict", "column `%.*s` is returned twice",
                                 (int)items[i].len, items[i].name);
    /* new slots */
    for (size_t i = 0; i < nitems; i++)
        if (scope_add(x, nsc, items[i].name, items[i].len, &items[i].slot) != 0)
            return -1;
    return 0;
}

int op_project(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out,
               scope *result_cols)
{
    const bool is_return = clause->kind == CYPHER_AST_RETURN;
    size_t in_width = in->width;
    int rc = -1;
    scope nsc = {0};
    scope both = {0};
    item *items = NULL;
    size_t nitems = 0, capitems = 0;
    calls cs = {.x = x};
    grouping gr = {0};
    size_t *order = NULL;
    sort_ctx sctx = {0};
    rowset proj = {0};
    value *row = NULL;
    size_t rowsz = 0;

    if (project_items(x, clause, sc, &items, &nitems, &capitems, &cs, &nsc) != 0)
        goto done;
    bool aggregating = cs.n > 0;
    size_t width = x->width;
    rowset_init(&proj, width);
    rowsz = (width ? width : 1) * sizeof(value);
    row = mem_calloc(x->m, rowsz);
    if (!row)
        goto oom;

    if (!aggregating) {
        for (size_t r = 0; r < in->nrows; r++) {
            const value *src = rowset_row(in, r);
            evalctx c = {x, sc, src, NULL, NULL};
            for (size_t i = 0; i < in_width; i++)
                row[i] = value_retain(src[i]);
            for (size_t i = 0; i < nitems; i++) {
                if (!items[i].expr)
                    row[items[i].slot] = value_retain(src[items[i].src_slot]);
                else if (eval(&c, items[i].expr, &row[items[i].slot]) != 0)
                    goto fail_row;
            }
            if (rowset_push(x, &proj, row) != 0)
                goto done;
        }
    } else {
        size_t nkeys = 0;
        for (size_t i = 0; i < nitems; i++)
            nkeys += !items[i].aggregating;
        value keys[nkeys + 1];
        for (size_t r = 0; r < in->nrows; r++) {
            const value *src = rowset_row(in, r);
            evalctx c = {x, sc, src, NULL, NULL};
            size_t k = 0;
            for (size_t i = 0; i < nitems; i++) {
                if (items[i].aggregating)
                    continue;
                int e2 = items[i].expr ? eval(&c, items[i].expr, &keys[k])
                                       : (keys[k] = value_retain(src[items[i].src_slot]), 0);
                if (e2 != 0) {
                    for (size_t j = 0; j < k; j++)
                        value_release(&keys[j]);
                    goto done_groups;
                }
                k++;
            }
            group *g;
            if (grouping_find(x, &gr, keys, nkeys, cs.n, src, in_width, &g) != 0) {
                for (size_t j = 0; j < nkeys; j++)
                    value_release(&keys[j]);
                goto done_groups;
            }
            for (size_t a = 0; a < cs.n; a++)
                if (acc_add(x, cs.v[a], &g->accs[a], &c) != 0)
                    goto done_groups;
        }
        if (gr.n == 0 && nkeys == 0) {
            group *g;
            if (grouping_find(x, &gr, keys, 0, cs.n, NULL, in_width, &g) != 0)
                goto done_groups;
        }
        for (size_t gi = 0; gi < gr.n; gi++) {
            group *g = &gr.g[gi];
            value vals[cs.n + 1];
            size_t got = 0;
            for (; got < cs.n; got++)
                if (acc_result(x, cs.v[got], &g->accs[got], &vals[got]) != 0)
                    break;
            int e2 = got < cs.n ? -1 : 0;
            agg_values av = {cs.v, vals, cs.n};
            evalctx c = {x, sc, g->rep, NULL, &av};
            size_t k = 0;
            for (size_t i = 0; i < nitems && e2 == 0; i++) {
                if (!items[i].aggregating)
                    row[items[i].slot] = value_retain(g->keys[k++]);
                else
                    e2 = eval(&c, items[i].expr, &row[items[i].slot]);
            }
            for (size_t a = 0; a < got; a++)
                value_release(&vals[a]);
            if (e2 != 0 || rowset_push(x, &proj, row) != 0)
                goto done_groups;
        }
        grouping_free(&gr, nkeys, cs.n, in_width);
        memset(&gr, 0, sizeof gr);
        goto grouped;
    done_groups:
        grouping_free(&gr, nkeys, cs.n, in_width);
        memset(&gr, 0, sizeof gr);
        goto done;
    }
grouped:

    /* DISTINCT: keep the first row of each set of equivalent projections */
    if (clause->u.projection.distinct && proj.nrows > 1) {
        size_t keep = 0;
        for (size_t r = 0; r < proj.nrows; r++) {
            value *cur = rowset_row(&proj, r);
            bool dup = false;
            for (size_t q = 0; q < keep && !dup; q++) {
                value *prev = rowset_row(&proj, q);
                dup = true;
                for (size_t i = 0; i < nitems && dup; i++)
                    dup = value_equivalent(&prev[items[i].slot], &cur[items[i].slot]);
            }
            if (dup) {
                for (size_t i = 0; i < width; i++)
                    value_release(&cur[i]);
            } else {
                if (keep != r)
                    memcpy(rowset_row(&proj, keep), cur, width * sizeof(value));
                keep++;
            }
        }
        proj.nrows = keep;
    }

    /* ORDER BY over the projection, then the input's variables */
    const cypher_ast_list *ord = &clause->u.projection.order;
    if (ord->count && proj.nrows > 1) {
        /* the projection's names shadow the input's (scope_find searches
           from the end) */
        if (scope_copy(x, sc, &both) != 0)
            goto done;
        for (size_t i = 0; i < nsc.n; i++)
            if (scope_push(x, &both, &nsc.b[i]) != 0)
                goto done;
        sctx.nkeys = ord->count;
        sctx.keys = mem_calloc(x->m, proj.nrows * ord->count * sizeof(value));
        bool *desc = mem_alloc(x->m, ord->count * sizeof *desc);
        order = mem_alloc(x->m, proj.nrows * sizeof *order);
        if (!sctx.keys || !desc || !order) {
            if (desc)
                mem_free(x->m, desc, ord->count * sizeof *desc);
            goto oom;
        }
        sctx.desc = desc;
        stand_ins si = {.x = x, .items = items, .nitems = nitems};
        for (size_t k = 0; k < ord->count && !si.err; k++) {
            desc[k] = ord->items[k]->u.sort.descending;
            find_stand_ins(ord->items[k]->u.sort.expr, &si);
        }
        value *vals = si.err ? NULL : mem_alloc(x->m, (si.n ? si.n : 1) * sizeof *vals);
        int e2 = si.err ? -1 : vals ? 0 : exec_oom(x);
        for (size_t r = 0; r < proj.nrows && e2 == 0; r++) {
            order[r] = r;
            const value *pr = rowset_row(&proj, r);
            for (size_t k = 0; k < si.n; k++)
                vals[k] = pr[items[si.item_of[k]].slot];   /* borrowed */
            agg_values av = {si.parts, vals, si.n};
            evalctx c = {x, &both, pr, NULL, &av};
            for (size_t k = 0; k < ord->count && e2 == 0; k++)
                e2 = eval(&c, ord->items[k]->u.sort.expr, &sctx.keys[r * ord->count + k]);
        }
        if (vals)
            mem_free(x->m, vals, (si.n ? si.n : 1) * sizeof *vals);
        stand_ins_free(&si);
        if (e2 == 0)
            qsort_r(order, proj.nrows, sizeof *order, sort_cmp, &sctx);
        for (size_t i = 0; i < proj.nrows * ord->count; i++)
            value_release(&sctx.keys[i]);
        mem_free(x->m, sctx.keys, proj.nrows * ord->count * sizeof(value));
        sctx.keys = NULL;
        mem_free(x->m, desc, ord->count * sizeof *desc);
        if (e2 != 0)
            goto done;
    } else if (ord->count && proj.nrows == 1) {
        /* still check the sort keys evaluate (undefined variables...) */
    }

    int64_t skip = 0, limit = INT64_MAX;
    if (clause->u.projection.skip && eval_count(x, clause->u.projection.skip, "SKIP", &skip) != 0)
        goto done;
    if (clause->u.projection.limit &&
        eval_count(x, clause->u.projection.limit, "LIMIT", &limit) != 0)
        goto done;

    /* the output: projected slots only, in order, after SKIP / LIMIT */
    rowset_init(out, width);
    for (size_t r = 0; r < proj.nrows; r++) {
        if ((int64_t)r < skip || (int64_t)r - skip >= limit)
            continue;
        value *src = rowset_row(&proj, order ? order[r] : r);
        for (size_t i = 0; i < width; i++)
            row[i] = value_null();
        for (size_t i = 0; i < nitems; i++)
            row[items[i].slot] = value_retain(src[items[i].slot]);
        if (!is_return && clause->u.projection.where) {
            /* Without aggregation the WHERE also sees the variables bound
               before the WITH: the projected row still holds them (for
               DISTINCT, those of the first row of each group). */
            if (!aggregating && !both.n) {
                if (scope_copy(x, sc, &both) != 0)
                    goto fail_out;
                for (size_t i = 0; i < nsc.n; i++)
                    if (scope_push(x, &both, &nsc.b[i]) != 0)
                        goto fail_out;
            }
            evalctx c = aggregating ? (evalctx){x, &nsc, row, NULL, NULL}
                                    : (evalctx){x, &both, src, NULL, NULL};
            tri t;
            if (eval_predicate(&c, clause->u.projection.where, &t) != 0)
                goto fail_out;
            if (t != TRI_TRUE) {
                for (size_t i = 0; i < width; i++)
                    value_release(&row[i]);
                continue;
            }
        }
        if (rowset_push(x, out, row) != 0)
            goto fail_out;
    }
    if (result_cols && scope_copy(x, &nsc, result_cols) != 0)
        goto fail_out;
    /* the clause's scope becomes the projection's */
    if (scope_copy(x, &nsc, sc) != 0)
        goto fail_out;
    rc = 0;
    goto done;

fail_out:
    for (size_t i = 0; i < width; i++)
        value_release(&row[i]);
    rowset_free(out);
    goto done;
fail_row:
    for (size_t i = 0; i < width; i++)
        value_release(&row[i]);
    goto done;
oom:
    rc = exec_oom(x);
done:
    if (row)
        mem_free(x->m, row, rowsz);
    if (order)
        mem_free(x->m, order, proj.nrows * sizeof *order);
    rowset_free(&proj);
    if (items)
        mem_free(x->m, items, capitems * sizeof *items);
    if (cs.v)
        mem_free(x->m, cs.v, cs.cap * sizeof *cs.v);
    scope_free(&nsc);
    scope_free(&both);
    return rc;
}

/* ---- the streaming projection (pipeline.h) ----
   Without aggregation, DISTINCT or ORDER BY a projection maps each row on
   its own: the items are evaluated, SKIP and LIMIT count the rows, and
   WITH's WHERE sees the projected row together with the input's
   variables, as above. */

typedef struct project_state {
    scope sc;                   /* the input's scope */
    scope both;                 /* input then projection: WITH's WHERE */
    item *items;
    size_t nitems, capitems;
    int64_t skip, limit, seen;
    value *proj, *out;          /* x->width each, taken at the first row */
    size_t width;
} project_state;

static int project_row(exec *x, stage *s, const value *in)
{
    project_state *ps = s->state;
    if (ps->seen - ps->skip >= ps->limit)
        return EXEC_STOP;
    if (!ps->proj) {
        ps->width = x->width;
        ps->proj = mem_calloc(x->m, 2 * (ps->width ? ps->width : 1) * sizeof(value));
        if (!ps->proj)
            return exec_oom(x);
        ps->out = ps->proj + (ps->width ? ps->width : 1);
    }
    /* the input's cells (borrowed), then the items (owned) */
    memcpy(ps->proj, in, ps->width * sizeof(value));
    evalctx c = {x, &ps->sc, in, NULL, NULL};
    int rc = 0;
    size_t done = 0;
    for (; done < ps->nitems && rc == 0; done++) {
        const item *it = &ps->items[done];
        if (!it->expr)
            ps->proj[it->slot] = value_retain(in[it->src_slot]);
        else
            rc = eval(&c, it->expr, &ps->proj[it->slot]);
    }
    bool keep = rc == 0 && ps->seen++ >= ps->skip;
    if (keep && s->clause->u.projection.where) {
        evalctx w = {x, &ps->both, ps->proj, NULL, NULL};
        tri t;
        rc = eval_predicate(&w, s->clause->u.projection.where, &t);
        keep = rc == 0 && t == TRI_TRUE;
    }
    if (keep) {
        for (size_t i = 0; i < ps->width; i++)
            ps->out[i] = value_null();
        for (size_t i = 0; i < ps->nitems; i++)
            ps->out[ps->items[i].slot] = ps->proj[ps->items[i].slot];   /* borrowed */
        rc = stage_emit(x, s, ps->out);
    }
    for (size_t i = 0; i < done; i++)
        value_release(&ps->proj[ps->items[i].slot]);
    if (rc == 0 && ps->seen - ps->skip >= ps->limit)
        rc = EXEC_STOP;
    return rc;
}

static void project_close(exec *x, stage *s)
{
    project_state *ps = s->state;
    if (!ps)
        return;
    if (ps->proj)
        mem_free(x->m, ps->proj, 2 * (ps->width ? ps->width : 1) * sizeof(value));
    if (ps->items)
        mem_free(x->m, ps->items, ps->capitems * sizeof *ps->items);
    scope_free(&ps->sc);
    scope_free(&ps->both);
    mem_free(x->m, ps, sizeof *ps);
    s->state = NULL;
}

int project_open(exec *x, const cypher_ast_node *clause, scope *sc, stage *s,
                 scope *result_cols)
{
    project_state *ps = mem_calloc(x->m, sizeof *ps);
    if (!ps)
        return exec_oom(x);
    s->state = ps;
    s->row = project_row;
    s->close = project_close;
    ps->limit = INT64_MAX;
    calls cs = {.x = x};
    scope nsc = {0};
    int rc = project_items(x, clause, sc, &ps->items, &ps->nitems, &ps->capitems, &cs, &nsc);
    if (cs.v)
        mem_free(x->m, cs.v, cs.cap * sizeof *cs.v);
    if (rc == 0 && clause->u.projection.skip)
        rc = eval_count(x, clause->u.projection.skip, "SKIP", &ps->skip);
    if (rc == 0 && clause->u.projection.limit)
        rc = eval_count(x, clause->u.projection.limit, "LIMIT", &ps->limit);
    s->wants_none = ps->limit == 0;
    if (rc == 0)
        rc = scope_copy(x, sc, &ps->sc);
    if (rc == 0)
        rc = scope_copy(x, sc, &ps->both);
    for (size_t i = 0; i < nsc.n && rc == 0; i++)
        rc = scope_push(x, &ps->both, &nsc.b[i]);
    if (rc == 0 && result_cols)
        rc = scope_copy(x, &nsc, result_cols);
    /* the clause's scope becomes the projection's */
    if (rc == 0)
        rc = scope_copy(x, &nsc, sc);
    scope_free(&nsc);
    return rc;
}

bool project_streams(const cypher_ast_node *clause)
{
    if (clause->u.projection.distinct || clause->u.projection.order.count)
        return false;
    for (size_t i = 0; i < clause->u.projection.items.count; i++)
        if (expr_has_aggregate(clause->u.projection.items.items[i]->u.alias.expr))
            return false;
    return true;
}
