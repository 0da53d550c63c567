/*
 * prepared — strata_stmt: a Cypher statement parsed and checked once, its
 * parameters bound one by one, run as often as wanted (include/strata.h).
 *
 * What a run of strata_query redoes each time and a prepared statement
 * does once:
 *   - finding the checked tree: the statement holds a reference to it (the
 *     plan cache's entry, or its own tree when the cache could not take
 *     it), so no text is hashed or compared per run;
 *   - the parameter map: each parameter named in the text has a slot
 *     (bound_param, exec.h) that strata_stmt_bind fills, read by name
 *     where the executor would read the map;
 *   - the result: one block, the statement's, handed out by every run
 *     and taken back by strata_result_free;
 *   - opening: a read-only statement whose final pipeline can run again
 *     (pipeline_parkable: MATCH stages the join would never take, plain
 *     projections) keeps it opened between runs (result_park), its
 *     stages, scopes, slots, columns and row buffer with it; the next
 *     run plans each MATCH's starts again on the state it reads
 *     (match_resume) and pulls.  Any other statement is opened afresh
 *     each run, inside the same block.
 * A run reads exactly what strata_query would and reports the same
 * errors: the access paths are chosen per run, as strata_query chooses
 * them.
 *
 * Ownership: the statement owns its result block.  While a run's result
 * is out (strata_result_free not yet called) the statement neither runs
 * nor binds: both fail with STRATA_EINVAL, so a result never sees its
 * parameters change under it.  strata_stmt_free with a result out frees
 * the statement when that result is freed.  One thread at a time uses a
 * statement and its result; the tree it shares with other statements
 * and queries is immutable.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/graph_handle.h"
#include "query/result.h"

struct strata_stmt {
    strata_graph *g;            /* prepared on the graph, or NULL (a view) */
    const catalog *cat;         /* the graph's: a view run on must share it */
    char *text;
    cached_plan *plan;          /* a reference */
    bound_param *params;        /* one per parameter name in the text */
    size_t nparams;
    strata_result *res;         /* every run's result */
    bool res_out;               /* handed out, not yet freed */
    bool freed;                 /* strata_stmt_free came while res_out */
    char err[ERRMSG_MAX];
};

static strata_status stmt_fail(strata_stmt *s, strata_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static strata_status stmt_fail(strata_stmt *s, strata_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return st;
}

/* ---- the parameters named in the text ---- */

typedef struct param_walk {
    bound_param *v;
    size_t n, cap;
    bool oom;
} param_walk;

static int collect_params(const cypher_ast_node *n, void *ctx)
{
    param_walk *w = ctx;
    if (n->kind == CYPHER_AST_PARAMETER) {
        for (size_t i = 0; i < w->n; i++)
            if (w->v[i].len == n->u.name.len &&
                memcmp(w->v[i].name, n->u.name.ptr, n->u.name.len) == 0)
                return 0;
        if (w->n == w->cap) {
            size_t cap = w->cap ? 2 * w->cap : 4;
            bound_param *v = mem_realloc(mem_scratch(), w->v, cap * sizeof *v);
            if (!v) {
                w->oom = true;
                return 1;
            }
            w->v = v;
            w->cap = cap;
        }
        w->v[w->n++] = (bound_param){.name = n->u.name.ptr, .len = n->u.name.len,
                                     .v = value_null()};
        return 0;
    }
    return cypher_ast_each_child(n, collect_params, ctx);
}

/* ---- preparing ---- */

static void stmt_destroy(strata_stmt *s)
{
    mem_ctx *m = mem_scratch();
    if (s->res) {
        result_release(s->res);
        mem_free(m, s->res);
    }
    for (size_t i = 0; i < s->nparams; i++)
        value_release(&s->params[i].v);
    if (s->params)
        mem_free(m, s->params);
    plan_release(&s->plan);
    if (s->text)
        mem_free(m, s->text);
    mem_free(m, s);
}

/* Parses and checks text on x's graph or view: the plan, or NULL with
   the error written to msg (its status in *st). */
static cached_plan *prepare_plan(exec *x, const char *text, size_t len, strata_status *st,
                                 char *msg, size_t size)
{
    cypher_error perr;
    cached_plan *plan = query_checked_plan(x, text, len, &perr);
    if (plan)
        return plan;
    const char *code = x->err.category ? x->err.category : perr.category;
    const char *what = x->err.category ? x->err.message : perr.message;
    uint32_t line = x->err.category ? x->err.line : perr.line;
    uint32_t column = x->err.category ? x->err.column : perr.column;
    *st = strcmp(code, "OutOfMemory") == 0 ? STRATA_ENOMEM : STRATA_EINVAL;
    snprintf(msg, size, "%s: %s (line %u, column %u)", code, what, line, column);
    return NULL;
}

/* strata_prepare and strata_view_prepare: exactly one of g and v. */
static strata_status prepare(strata_graph *g, strata_view *v, const char *text,
                             strata_stmt **out)
{
    mem_ctx *m = mem_scratch();
    size_t len = strlen(text);
    strata_stmt *s = mem_calloc(m, sizeof *s);
    strata_status st = STRATA_ENOMEM;
    /* a code, a parser's or checker's message and a position */
    char msg[2 * ERRMSG_MAX] = "out of memory preparing a statement";
    if (!s)
        goto fail;
    s->g = g;
    s->text = mem_alloc(m, len + 1);
    s->res = mem_alloc(m, sizeof *s->res);
    if (!s->text || !s->res)
        goto fail;
    memcpy(s->text, text, len + 1);
    s->res->stmt = s;   /* result_clear keeps it */
    result_clear(s->res);
    /* an executor for parsing and checking only: the plan cache of the
       state read, errors */
    exec x = {.g = g, .m = m};
    if (v)
        x.view.ver = v->ver;
    s->cat = exec_view(&x)->ver->cat;
    s->plan = prepare_plan(&x, s->text, len, &st, msg, sizeof msg);
    if (!s->plan)
        goto fail;
    param_walk w = {0};
    cypher_ast_each_child(cypher_ast_root(plan_ast(s->plan)), collect_params, &w);
    s->params = w.v;
    s->nparams = w.n;
    if (w.oom) {
        st = STRATA_ENOMEM;
        snprintf(msg, sizeof msg, "out of memory preparing a statement");
        goto fail;
    }
    *out = s;
    return STRATA_OK;
fail:
    if (s)
        stmt_destroy(s);
    return g ? graph_fail(g, st, "%s", msg) : view_fail(v, st, "%s", msg);
}

strata_status strata_prepare(strata_graph *g, const char *text, strata_stmt **out)
{
    if (!out)
        return g ? graph_fail(g, STRATA_EINVAL, "strata_prepare: out is NULL") : STRATA_EINVAL;
    *out = NULL;
    if (!g || !text)
        return g ? graph_fail(g, STRATA_EINVAL, "strata_prepare: text is NULL") : STRATA_EINVAL;
    return prepare(g, NULL, text, out);
}

strata_status strata_view_prepare(strata_view *v, const char *text, strata_stmt **out)
{
    if (!out)
        return v ? view_fail(v, STRATA_EINVAL, "strata_view_prepare: out is NULL")
                 : STRATA_EINVAL;
    *out = NULL;
    if (!v || !text)
        return v ? view_fail(v, STRATA_EINVAL, "strata_view_prepare: text is NULL")
                 : STRATA_EINVAL;
    return prepare(NULL, v, text, out);
}

/* ---- binding ---- */

/* The slot of parameter name, or NULL with the error recorded. */
static bound_param *param_slot(strata_stmt *s, const char *name, strata_status *st)
{
    *st = STRATA_EINVAL;
    if (!name) {
        stmt_fail(s, STRATA_EINVAL, "strata_stmt_bind: name is NULL");
        return NULL;
    }
    if (s->res_out) {
        stmt_fail(s, STRATA_EINVAL,
                  "cannot bind $%s while the statement's result is open: free it first", name);
        return NULL;
    }
    size_t len = strlen(name);
    for (size_t i = 0; i < s->nparams; i++)
        if (s->params[i].len == len && memcmp(s->params[i].name, name, len) == 0)
            return &s->params[i];
    stmt_fail(s, STRATA_EINVAL, "the statement has no parameter $%s", name);
    return NULL;
}

static strata_status bind_value(strata_stmt *s, const char *name, value v)
{
    strata_status st;
    bound_param *p = param_slot(s, name, &st);
    if (!p) {
        value_release(&v);
        return st;
    }
    value_release(&p->v);
    p->v = v;
    p->set = true;
    return STRATA_OK;
}

strata_status strata_stmt_bind(strata_stmt *s, const char *name, const strata_value *val)
{
    if (!s)
        return STRATA_EINVAL;
    if (!val)
        return stmt_fail(s, STRATA_EINVAL, "strata_stmt_bind: value is NULL");
    return bind_value(s, name, value_retain(val->v));
}

strata_status strata_stmt_bind_int(strata_stmt *s, const char *name, int64_t v)
{
    return s ? bind_value(s, name, value_int(v)) : STRATA_EINVAL;
}

strata_status strata_stmt_clear_bindings(strata_stmt *s)
{
    if (!s)
        return STRATA_EINVAL;
    if (s->res_out)
        return stmt_fail(s, STRATA_EINVAL,
                         "cannot clear the bindings while the statement's result is open");
    for (size_t i = 0; i < s->nparams; i++) {
        value_release(&s->params[i].v);
        s->params[i].set = false;
    }
    return STRATA_OK;
}

/* ---- running ---- */

static strata_status run(strata_stmt *s, strata_graph *g, strata_view *v, strata_result **out)
{
    if (s->res_out)
        return stmt_fail(s, STRATA_EINVAL,
                         "the statement's previous result is still open: free it first");
    strata_result *r = s->res;
    run_args a = {.g = g, .v = v, .text = s->text, .plan = s->plan, .bound = s->params,
                  .nbound = s->nparams};
    s->res_out = true;
    *out = r;
    if (r->pipe) {
        strata_status st;
        if (result_resume(r, &a, &st))
            return st;
        result_release(r);   /* it cannot run lazily now: opened afresh */
        result_clear(r);
    }
    return result_run(r, &a);
}

strata_status strata_stmt_execute(strata_stmt *s, strata_result **out)
{
    if (out)
        *out = NULL;
    if (!s)
        return STRATA_EINVAL;
    if (!out)
        return stmt_fail(s, STRATA_EINVAL, "strata_stmt_execute: out is NULL");
    if (!s->g)
        return stmt_fail(s, STRATA_EINVAL,
                         "the statement was prepared on a view: run it with "
                         "strata_stmt_execute_view");
    return run(s, s->g, NULL, out);
}

strata_status strata_stmt_execute_view(strata_stmt *s, strata_view *v, strata_result **out)
{
    if (out)
        *out = NULL;
    if (!s)
        return STRATA_EINVAL;
    if (!out || !v)
        return stmt_fail(s, STRATA_EINVAL, "strata_stmt_execute_view: %s is NULL",
                         out ? "the view" : "out");
    if (v->ver->cat != s->cat)
        return stmt_fail(s, STRATA_EINVAL,
                         "the view is of another graph than the statement was prepared on");
    return run(s, NULL, v, out);
}

void stmt_result_done(strata_result *r)
{
    strata_stmt *s = r->stmt;
    if (result_parkable(r)) {
        result_park(r);
    } else {
        result_release(r);
        result_clear(r);
    }
    s->res_out = false;
    if (s->freed)
        stmt_destroy(s);
}

const char *strata_stmt_errmsg(const strata_stmt *s)
{
    return s ? s->err : "no statement (NULL)";
}

void strata_stmt_free(strata_stmt **sp)
{
    if (!sp || !*sp)
        return;
    strata_stmt *s = *sp;
    *sp = NULL;
    if (s->res_out)
        s->freed = true;   /* freed with its result */
    else
        stmt_destroy(s);
}
