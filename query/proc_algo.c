/*
 * proc_algo — the algo.* procedures: graph algorithms from Cypher.
 *
 *   CALL algo.NAME({config}) YIELD node, <columns>
 *   CALL algo.NAME.write({config, property: 'p'}) YIELD nodesWritten, property
 *
 * The algorithms and their columns are algo/'s table (algo_spec).  The
 * configuration is one map argument (or none); it is evaluated for every
 * input row, so `MATCH (s {name: 'a'}) CALL algo.bfs({source: s}) ...`
 * runs once per s.  A run reads the statement's state (its own writes
 * included) once, into its adjacency, before it produces any row.
 *
 * .write runs the algorithm, then sets the property of every reported
 * node to its first column's value, through the statement: a failure part
 * way (out of memory, an interrupt) rolls every write back with the
 * statement.  It yields one row: how many nodes were written and the
 * property name.  A write procedure makes the query a writing one (a view
 * refuses it, as it refuses SET).
 */
#include <stdio.h>
#include <string.h>

#include "algo/algo.h"
#include "query/exec.h"
#include "query/proc_algo.h"

#define MAX_FIELDS 4

static const char *const write_fields[] = {"nodesWritten", "property"};

typedef struct algo_proc {
    const algo_spec *spec;
    bool write;
} algo_proc;

static bool has_prefix(const cypher_ast_str *name)
{
    return name->len > 5 && memcmp(name->ptr, "algo.", 5) == 0;
}

/* algo.NAME or algo.NAME.write. */
static bool find_proc(const cypher_ast_str *name, algo_proc *out)
{
    if (!has_prefix(name))
        return false;
    const char *s = name->ptr + 5;
    size_t len = name->len - 5;
    out->write = len > 6 && memcmp(s + len - 6, ".write", 6) == 0;
    if (out->write)
        len -= 6;
    out->spec = algo_spec_find(s, len);
    return out->spec != NULL;
}

bool proc_algo_is(const cypher_ast_str *name)
{
    algo_proc p;
    return find_proc(name, &p);
}

bool proc_algo_writes(const cypher_ast_str *name)
{
    algo_proc p;
    return find_proc(name, &p) && p.write;
}

/* The fields p yields, in order, into names (room for MAX_FIELDS); their
   count. */
static size_t field_names(const algo_proc *p, const char *names[MAX_FIELDS])
{
    if (p->write) {
        names[0] = write_fields[0];
        names[1] = write_fields[1];
        return 2;
    }
    size_t n = 0;
    names[n++] = "node";
    /* every algorithm has at most MAX_FIELDS - 1 columns (algo/registry.c) */
    for (size_t i = 0; i < p->spec->ncols && n < MAX_FIELDS; i++)
        names[n++] = p->spec->cols[i].name;
    return n;
}

int proc_algo_check(exec *x, const cypher_ast_node *cl)
{
    algo_proc p;
    find_proc(&cl->u.call.proc, &p);
    if (cl->u.call.args.count > 1)
        return exec_fail(x, cl, "SyntaxError", "InvalidNumberOfArguments",
                         "%.*s takes one argument, a configuration map",
                         (int)cl->u.call.proc.len, cl->u.call.proc.ptr);
    for (size_t i = 0; i < cl->u.call.yields.count; i++) {
        const cypher_ast_node *y = cl->u.call.yields.items[i];
        const char *names[MAX_FIELDS];
        size_t nf = field_names(&p, names);
        if (call_field_index(names, nf, &y->u.alias.expr->u.name) < 0)
            return exec_fail(x, y, "SyntaxError", "UndefinedVariable", "%.*s yields no field %s",
                             (int)cl->u.call.proc.len, cl->u.call.proc.ptr,
                             y->u.alias.expr->u.name.ptr);
    }
    return 0;
}

static int run_failed(exec *x, const cypher_ast_node *cl, const algo_ctx *c)
{
    switch (c->status) {
    case ALGO_OOM: return exec_oom(x);
    case ALGO_INTERRUPTED: return exec_fail(x, cl, "Interrupted", NULL, "%s", c->err);
    case ALGO_NOT_FOUND:
        return exec_fail(x, cl, "EntityNotFound", NULL, "%.*s: %s", (int)cl->u.call.proc.len,
                         cl->u.call.proc.ptr, c->err);
    default:
        return exec_fail(x, cl, "ArgumentError", NULL, "%.*s: %s", (int)cl->u.call.proc.len,
                         cl->u.call.proc.ptr, c->err);
    }
}

/* Field i of table row r as a value. */
static value cell(const algo_proc *p, const algo_table *t, size_t r, size_t i)
{
    if (i == 0)
        return value_node(t->nodes[r]);
    double d = t->cells[r * t->ncols + i - 1];
    return p->spec->cols[i - 1].integer ? value_int((int64_t)d) : value_float(d);
}

/* .write: the first column into the property of every reported node. */
static int write_back(exec *x, const cypher_ast_node *cl, const algo_proc *p,
                      const algo_config *cfg, const algo_table *t, value *fields)
{
    if (!x->g)
        return exec_fail(x, cl, "SemanticError", NULL, "a query on a view only reads: %.*s writes",
                         (int)cl->u.call.proc.len, cl->u.call.proc.ptr);
    if (!cfg->property)
        return exec_fail(x, cl, "ArgumentError", NULL, "%.*s needs property: the key to write",
                         (int)cl->u.call.proc.len, cl->u.call.proc.ptr);
    char *key = mem_alloc(x->m, cfg->property_len + 1);
    if (!key)
        return exec_oom(x);
    memcpy(key, cfg->property, cfg->property_len);
    key[cfg->property_len] = '\0';
    strata_token tok;
    strata_status s = strata_token_intern(x->g, STRATA_KEY, key, &tok);
    int rc = s == STRATA_OK ? 0 : exec_status(x, cl, s);
    for (size_t r = 0; r < t->nrows && rc == 0; r++) {
        strata_value h = {cell(p, t, r, 1)};
        s = strata_node_set(x->g, t->nodes[r], tok, &h);
        if (s != STRATA_OK)
            rc = exec_status(x, cl, s);
        else
            x->stats.props_set++;
        if (rc == 0 && (r & 1023) == 1023)
            rc = exec_check_interrupt(x);
    }
    if (rc == 0) {
        fields[0] = value_int((int64_t)t->nrows);
        rc = make_string(x, key, cfg->property_len, &fields[1]);
    }
    mem_free(x->m, key);
    return rc;
}

/* One run for one input row: emits its rows into out. */
static int run_row(exec *x, const cypher_ast_node *cl, const algo_proc *p, scope *sc,
                   const value *in_row, size_t in_width, const long *field, const size_t *slot,
                   size_t n, value *row, rowset *out)
{
    value config = value_null();
    if (cl->u.call.args.count == 1) {
        evalctx ec = {x, sc, in_row, NULL, NULL};
        if (eval(&ec, cl->u.call.args.items[0], &config) != 0)
            return -1;
    }
    algo_ctx c = {.view = exec_view(x), .m = x->m, .interrupt = x->interrupt};
    algo_table t;
    int rc = 0;
    if (algo_run(&c, p->spec, &config, p->write ? CFG_PROPERTY : 0, &t) != ALGO_OK)
        rc = run_failed(x, cl, &c);
    value wf[2] = {value_null(), value_null()};
    if (rc == 0 && p->write)
        rc = write_back(x, cl, p, c.cfg, &t, wf);
    size_t nrows = p->write ? 1 : t.nrows;
    for (size_t r = 0; r < nrows && rc == 0; r++) {
        for (size_t i = 0; i < in_width; i++)
            row[i] = value_retain(in_row[i]);
        for (size_t i = 0; i < n; i++)
            row[slot[i]] = p->write ? value_retain(wf[field[i]]) : cell(p, &t, r, (size_t)field[i]);
        tri keep = TRI_TRUE;
        if (cl->u.call.where) {
            evalctx ec = {x, sc, row, NULL, NULL};
            rc = eval_predicate(&ec, cl->u.call.where, &keep);
        }
        if (rc == 0 && keep == TRI_TRUE)
            rc = rowset_push(x, out, row);
        for (size_t i = 0; i < x->width; i++)
            value_release(&row[i]);
        if (rc == 0 && (r & 1023) == 1023)
            rc = exec_check_interrupt(x);
    }
    value_release(&wf[0]);
    value_release(&wf[1]);
    if (c.cfg)
        algo_free(&c, (void *)c.cfg, 1, sizeof *c.cfg);
    algo_table_free(&c, &t);
    value_release(&config);
    return rc;
}

int proc_algo_op(exec *x, const cypher_ast_node *cl, scope *sc, rowset *in, rowset *out,
                 scope *cols)
{
    if (proc_algo_check(x, cl) != 0)
        return -1;
    algo_proc p;
    find_proc(&cl->u.call.proc, &p);
    size_t in_width = in->width, n;
    long field[MAX_FIELDS];
    size_t slot[MAX_FIELDS];
    const char *names[MAX_FIELDS];
    size_t nf = field_names(&p, names);
    if (call_bind_yields(x, cl, names, nf, MAX_FIELDS, sc, field, slot, &n) != 0)
        return -1;
    if (cols)
        for (size_t i = 0; i < n; i++)
            if (scope_push(x, cols, &sc->b[sc->n - n + i]) != 0)
                return -1;
    rowset_init(out, x->width);
    value *row = mem_calloc(x->m, (x->width ? x->width : 1) * sizeof(value));
    if (!row)
        return exec_oom(x);
    int rc = 0;
    for (size_t r = 0; r < in->nrows && rc == 0; r++)
        rc = run_row(x, cl, &p, sc, rowset_row(in, r), in_width, field, slot, n, row, out);
    mem_free(x->m, row);
    return rc;
}

/* db.procedures' rows for the algorithms: name, signature, description. */
int proc_algo_list(exec *x, int (*emit)(exec *x, const char *name, const char *signature,
                                        const char *description, void *ctx),
                   void *ctx)
{
    char name[96], sig[512];
    for (size_t i = 0; algo_spec_at(i); i++) {
        const algo_spec *s = algo_spec_at(i);
        for (int w = 0; w < 2; w++) {
            algo_proc p = {s, w == 1};
            snprintf(name, sizeof name, "algo.%s%s", s->name, w ? ".write" : "");
            int len = snprintf(sig, sizeof sig, "%s(config = {} :: MAP) :: (", name);
            const char *fields[MAX_FIELDS];
            size_t nf = field_names(&p, fields);
            for (size_t f = 0; f < nf && len < (int)sizeof sig; f++) {
                const char *type = w ? (f == 0 ? "INTEGER" : "STRING")
                                   : f == 0 ? "NODE"
                                   : s->cols[f - 1].integer ? "INTEGER" : "FLOAT";
                len += snprintf(sig + len, sizeof sig - (size_t)len, "%s%s :: %s",
                                f ? ", " : "", fields[f], type);
            }
            if (len < (int)sizeof sig)
                snprintf(sig + len, sizeof sig - (size_t)len, ")");
            if (emit(x, name, sig, s->summary, ctx) != 0)
                return -1;
        }
    }
    return 0;
}
