/*
 * op_project — WITH and RETURN: projection, aggregation, DISTINCT,
 * ORDER BY, SKIP, LIMIT and WITH's WHERE, in that order, as one pipeline
 * stage made of steps (project.h draws the chain).  This file holds the
 * items, the map and window steps, and the assembly.
 *
 * Projection writes each item into a new slot and keeps the input's slots
 * until ORDER BY has run, so a sort key may name a variable the projection
 * dropped (openCypher allows it when there is no aggregation or
 * DISTINCT).  A sort key written exactly like a projected expression (same
 * canonical form) reads that item's value, which is what makes
 * `ORDER BY count(*)` work after an aggregation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/project.h"

/* ---- items ---- */

/* The aggregate calls of the items, outermost first. */
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
            const cypher_ast_node **v = mem_realloc(cs->x->m, cs->v, cap * sizeof *v);
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
                         proj_item **itemsp, size_t *nitemsp, size_t *capp, calls *cs, scope *nsc)
{
    const cypher_ast_list *its = &clause->u.projection.items;
    size_t nstars = clause->u.projection.star ? sc->n : 0;
    size_t capitems = nstars + its->count + 1, nitems = 0;
    proj_item *items = exec_calloc(x, capitems * sizeof *items);
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
        mem_free(x->m, stars);
    } else if (clause->u.projection.star && clause->kind == CYPHER_AST_RETURN) {
        /* WITH * over no variables passes the rows on; RETURN * has no
           columns to return */
        return exec_fail(x, clause, "SyntaxError", "NoVariablesInScope",
                         "RETURN * is not allowed when there are no variables in scope");
    }
    for (size_t i = 0; i < its->count; i++) {
        const cypher_ast_node *pi = its->items[i];
        proj_item *it = &items[nitems++];
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


/* ---- map: the items of a projection without aggregates ---- */

typedef struct map_state {
    const projection *p;
    value *proj;                /* width: the input's cells, then the items */
    size_t width;
} map_state;

static int map_row(exec *x, stage *st, const value *in)
{
    map_state *ms = st->state;
    const projection *p = ms->p;
    if (!ms->proj) {
        ms->width = x->width;
        ms->proj = exec_calloc(x, (ms->width ? ms->width : 1) * sizeof(value));
        if (!ms->proj)
            return exec_oom(x);
    }
    /* the input's cells (borrowed), then the items (owned) */
    memcpy(ms->proj, in, ms->width * sizeof(value));
    evalctx c = {x, &p->in, in, NULL, NULL};
    int rc = 0;
    size_t done = 0;
    for (; done < p->nitems && rc == 0; done++) {
        const proj_item *it = &p->items[done];
        if (!it->expr)
            ms->proj[it->slot] = value_retain(in[it->src_slot]);
        else
            rc = eval(&c, it->expr, &ms->proj[it->slot]);
    }
    if (rc == 0)
        rc = stage_emit(x, st, ms->proj);
    for (size_t i = 0; i < done; i++)
        value_release(&ms->proj[p->items[i].slot]);
    return rc;
}

static void map_close(exec *x, stage *st)
{
    map_state *ms = st->state;
    if (!ms)
        return;
    exec_free(x, ms->proj);
    exec_free(x, ms);
    st->state = NULL;
}

static int map_step_open(exec *x, const projection *p, stage *st)
{
    map_state *ms = exec_calloc(x, sizeof *ms);
    if (!ms)
        return exec_oom(x);
    ms->p = p;
    st->state = ms;
    st->row = map_row;
    st->close = map_close;
    return 0;
}

/* ---- window: SKIP, LIMIT, WITH's WHERE, the projection's slots ---- */

typedef struct window_state {
    const projection *p;
    const scope *where_scope;
    int64_t seen;
    value *out;                 /* width: the projected slots (borrowed) */
    size_t width;
} window_state;

/* SKIP and LIMIT count the rows before WITH's WHERE, as they always did. */
static int window_row(exec *x, stage *st, const value *row)
{
    window_state *ws = st->state;
    const projection *p = ws->p;
    if (ws->seen - p->skip >= p->limit)
        return EXEC_STOP;
    if (!ws->out) {
        ws->width = x->width;
        ws->out = exec_calloc(x, (ws->width ? ws->width : 1) * sizeof(value));
        if (!ws->out)
            return exec_oom(x);
    }
    int rc = 0;
    bool keep = ws->seen++ >= p->skip;
    if (keep && p->clause->u.projection.where) {
        /* Without aggregation the WHERE also sees the variables bound
           before the WITH: the row still holds them (for DISTINCT, those
           of the first row of each group). */
        evalctx w = {x, ws->where_scope, row, NULL, NULL};
        tri t;
        rc = eval_predicate(&w, p->clause->u.projection.where, &t);
        keep = rc == 0 && t == TRI_TRUE;
    }
    if (keep) {
        for (size_t i = 0; i < p->nitems; i++)
            ws->out[p->items[i].slot] = row[p->items[i].slot];   /* borrowed */
        rc = stage_emit(x, st, ws->out);
    }
    if (rc == 0 && ws->seen - p->skip >= p->limit)
        rc = EXEC_STOP;
    return rc;
}

static void window_close(exec *x, stage *st)
{
    window_state *ws = st->state;
    if (!ws)
        return;
    exec_free(x, ws->out);
    exec_free(x, ws);
    st->state = NULL;
}

static int window_step_open(exec *x, const projection *p, bool aggregating, stage *st)
{
    window_state *ws = exec_calloc(x, sizeof *ws);
    if (!ws)
        return exec_oom(x);
    ws->p = p;
    ws->where_scope = aggregating ? &p->out : &p->both;
    st->state = ws;
    st->row = window_row;
    st->close = window_close;
    return 0;
}

/* ---- the clause's stage: its steps in a chain ---- */

enum { MAX_STEPS = 4 };   /* map or grouping, DISTINCT, sort, window */

typedef struct project_state {
    projection p;
    stage steps[MAX_STEPS];
    size_t nsteps;
    size_t finished;            /* steps [0, finished) have finished */
} project_state;

static int project_row(exec *x, stage *s, const value *row)
{
    project_state *ps = s->state;
    return ps->steps[0].row(x, &ps->steps[0], row);
}

static int project_row_times(exec *x, stage *s, const value *row, uint64_t n)
{
    project_state *ps = s->state;
    return ps->steps[0].row_times(x, &ps->steps[0], row, n);
}

/* Each step in order produces what it holds, into the steps after it, a
   batch a call. */
static int project_finish(exec *x, stage *s)
{
    project_state *ps = s->state;
    for (; ps->finished < ps->nsteps; ps->finished++) {
        stage *st = &ps->steps[ps->finished];
        int rc = st->finish ? st->finish(x, st) : 0;
        if (rc != 0)
            return rc;      /* -1, or EXEC_MORE: this step again next call */
    }
    return 0;
}

static void project_close(exec *x, stage *s)
{
    project_state *ps = s->state;
    if (!ps)
        return;
    for (size_t i = 0; i < ps->nsteps; i++)
        if (ps->steps[i].close)
            ps->steps[i].close(x, &ps->steps[i]);
    projection *p = &ps->p;
    exec_free(x, p->items);
    if (p->calls)
        mem_free(x->m, p->calls);
    scope_free(&p->in);
    scope_free(&p->out);
    scope_free(&p->both);
    exec_free(x, ps);
    s->state = NULL;
}

/* The run is over: the window counts afresh.  Only a projection that
   holds no rows and whose SKIP and LIMIT (which may name parameters) are
   absent is parked (project_open); its map keeps nothing between rows. */
static void project_park(exec *x, stage *s)
{
    (void)x;
    project_state *ps = s->state;
    for (size_t i = 0; i < ps->nsteps; i++)
        if (ps->steps[i].row == window_row)
            ((window_state *)ps->steps[i].state)->seen = 0;
}

/* Opens the steps the clause needs, chained; the last one's rows leave
   through s. */
static int open_steps(exec *x, project_state *ps, stage *s)
{
    const projection *p = &ps->p;
    const cypher_ast_node *cl = p->clause;
    bool aggregating = p->ncalls > 0;
    int rc = aggregating ? aggregate_step_open(x, p, &ps->steps[ps->nsteps])
                         : map_step_open(x, p, &ps->steps[ps->nsteps]);
    ps->nsteps++;
    if (rc == 0 && cl->u.projection.distinct)
        rc = distinct_step_open(x, p, &ps->steps[ps->nsteps++]);
    if (rc == 0 && cl->u.projection.order.count)
        rc = sort_step_open(x, p, &ps->steps[ps->nsteps++]);
    /* A RETURN's rows are read by their columns' slots only, so a plain
       one (no SKIP, LIMIT, DISTINCT, ORDER BY or aggregate) needs no
       window: the map's rows, the input's cells beside the items, go out
       as they are. */
    bool plain_return = cl->kind == CYPHER_AST_RETURN && !aggregating &&
                        !cl->u.projection.distinct && !cl->u.projection.order.count &&
                        !cl->u.projection.skip && !cl->u.projection.limit;
    if (rc == 0 && !plain_return)
        rc = window_step_open(x, p, aggregating, &ps->steps[ps->nsteps++]);
    for (size_t i = 0; i < ps->nsteps; i++) {
        ps->steps[i].clause = cl;
        ps->steps[i].next = i + 1 < ps->nsteps ? &ps->steps[i + 1] : NULL;
        ps->steps[i].parent = i + 1 < ps->nsteps ? NULL : s;
    }
    return rc;
}

int project_open(exec *x, const cypher_ast_node *clause, scope *sc, stage *s,
                 scope *result_cols)
{
    project_state *ps = exec_calloc(x, sizeof *ps);
    if (!ps)
        return exec_oom(x);
    s->state = ps;
    s->row = project_row;
    s->finish = project_finish;
    s->close = project_close;
    projection *p = &ps->p;
    p->clause = clause;
    p->limit = INT64_MAX;
    calls cs = {.x = x};
    int rc = project_items(x, clause, sc, &p->items, &p->nitems, &p->capitems, &cs, &p->out);
    p->calls = cs.v;
    p->ncalls = cs.n;
    p->capcalls = cs.cap;
    if (rc == 0 && clause->u.projection.skip)
        rc = eval_count(x, clause->u.projection.skip, "SKIP", &p->skip);
    if (rc == 0 && clause->u.projection.limit)
        rc = eval_count(x, clause->u.projection.limit, "LIMIT", &p->limit);
    /* LIMIT 0 needs no input, but a clause that aggregates, de-duplicates
       or sorts still reads all of it (and reports its errors), as it did
       before it streamed */
    s->wants_none = p->limit == 0 && p->ncalls == 0 && !clause->u.projection.distinct &&
                    !clause->u.projection.order.count;
    if (rc == 0)
        rc = scope_copy(x, sc, &p->both);
    for (size_t i = 0; i < p->out.n && rc == 0; i++)
        rc = scope_push(x, &p->both, &p->out.b[i]);
    /* the input's scope is the first bindings of both, borrowed (not
       freed with it: m stays NULL) */
    if (rc == 0)
        p->in = (scope){.b = p->both.b, .n = sc->n};
    if (rc == 0)
        rc = open_steps(x, ps, s);
    if (rc == 0 && ps->steps[0].row_times)
        s->row_times = project_row_times;
    if (p->ncalls == 0 && !clause->u.projection.distinct && !clause->u.projection.order.count &&
        !clause->u.projection.skip && !clause->u.projection.limit)
        s->park = project_park;
    if (rc == 0 && result_cols)
        rc = scope_copy(x, &p->out, result_cols);
    /* the clause's scope becomes the projection's */
    if (rc == 0)
        rc = scope_copy(x, &p->out, sc);
    return rc;
}

int op_project(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out,
               scope *result_cols)
{
    return pipeline_run(x, &clause, 1, sc, in, out, result_cols);
}

/* ---- partial states (project.h) ---- */

bool project_partial_step(stage *s, partial_kind *kind, stage **step)
{
    project_state *ps = s->state;
    const projection *p = &ps->p;
    const cypher_ast_node *cl = p->clause;
    *kind = PARTIAL_NONE;
    *step = NULL;
    if (p->ncalls > 0) {
        *kind = PARTIAL_AGGREGATE;
        *step = &ps->steps[0];
    } else if (cl->u.projection.distinct) {
        *kind = PARTIAL_DISTINCT;
        *step = &ps->steps[1];
    } else if (cl->u.projection.order.count) {
        if (!sort_is_top(&ps->steps[1]))
            return false;   /* a full sort: every row would be held twice */
        *kind = PARTIAL_TOP;
        *step = &ps->steps[1];
    } else if (cl->u.projection.skip || cl->u.projection.limit) {
        return false;       /* rows cut in input order */
    }
    return true;
}

void step_partial_collect(stage *st, partial_kind k)
{
    if (k == PARTIAL_AGGREGATE)
        aggregate_partial_collect(st);
    else if (k == PARTIAL_DISTINCT)
        distinct_partial_collect(st);
}

void step_partial_unordered(stage *st, partial_kind k)
{
    if (k == PARTIAL_AGGREGATE)
        aggregate_partial_unordered(st);
    else if (k == PARTIAL_DISTINCT)
        distinct_partial_unordered(st);
}

void step_partial_morsel(stage *st, partial_kind k, uint64_t morsel)
{
    if (k == PARTIAL_AGGREGATE)
        aggregate_partial_morsel(st, morsel);
    else if (k == PARTIAL_DISTINCT)
        distinct_partial_morsel(st, morsel);
}

int step_partial_gather(exec *x, stage *st, partial_kind k, stage *const *parts, size_t nparts,
                        bool *again)
{
    *again = false;
    if (k == PARTIAL_DISTINCT)
        return distinct_partial_gather(x, st, parts, nparts);
    int rc = aggregate_partial_gather(x, st, parts, nparts);
    *again = rc == 1;
    return rc == 1 ? 0 : rc;
}

void *step_partial_take(exec *x, stage *st, partial_kind k)
{
    switch (k) {
    case PARTIAL_AGGREGATE: return aggregate_partial_take(x, st);
    case PARTIAL_DISTINCT: return distinct_partial_take(x, st);
    case PARTIAL_TOP: return sort_partial_take(x, st);
    case PARTIAL_NONE: break;
    }
    return NULL;
}

int step_partial_merge(exec *x, stage *st, partial_kind k, void *partial)
{
    switch (k) {
    case PARTIAL_AGGREGATE: return aggregate_partial_merge(x, st, partial);
    case PARTIAL_DISTINCT: return distinct_partial_merge(x, st, partial);
    case PARTIAL_TOP: return sort_partial_merge(x, st, partial);
    case PARTIAL_NONE: break;
    }
    return 0;
}

void step_partial_free(exec *x, partial_kind k, void *partial)
{
    if (!partial)
        return;
    if (k == PARTIAL_AGGREGATE)
        aggregate_partial_free(x, partial);
    else if (k == PARTIAL_DISTINCT)
        distinct_partial_free(x, partial);
    else if (k == PARTIAL_TOP)
        sort_partial_free(x, partial);
}
