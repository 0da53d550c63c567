/*
 * op_call — CALL and the built-in procedures.
 *
 *   CALL db.labels()              label             labels carried by a node
 *   CALL db.relationshipTypes()   relationshipType  types of a relationship
 *   CALL db.propertyKeys()        propertyKey       every key ever used
 *   CALL db.indexes()             name, type, entityType, labelsOrTypes,
 *                                 properties, uniqueness, entries
 *   CALL db.constraints()         name, type, entityType, labelsOrTypes,
 *                                 properties
 *   CALL db.procedures()          name, signature, description: every
 *                                 procedure, these and algo.* (proc_algo.c)
 *   CALL db.stats()               label, relationshipType, direction, count:
 *                                 the relationship statistics the planner
 *                                 reads (storage/rel_stats.h), nonzero ones
 *
 * Names are listed in byte order.  A CALL that ends the query (standalone,
 * or the last clause) gives the result its columns: the fields yielded, or
 * all of them without YIELD.  Inside a query the fields are named with
 * YIELD (optionally renamed with AS and filtered with WHERE) and join each
 * input row.  Procedures only read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/exec.h"
#include "query/proc_algo.h"

#define MAX_YIELDS 16

/* Rows a procedure produced: nfields values each. */
typedef struct proc_rows {
    value *cells;
    size_t n, cap, width;
} proc_rows;

typedef struct procedure {
    const char *name;
    const char *const *fields;
    size_t nfields;
    int (*run)(exec *x, proc_rows *out);
} procedure;

static int push_row(exec *x, proc_rows *r, value *row)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        value *c = mem_realloc(x->m, r->cells, cap * r->width * sizeof(value));
        if (!c) {
            for (size_t i = 0; i < r->width; i++)
                value_release(&row[i]);
            return exec_oom(x);
        }
        r->cells = c;
        r->cap = cap;
    }
    memcpy(r->cells + r->n * r->width, row, r->width * sizeof(value));
    r->n++;
    return 0;
}

static void free_rows(exec *x, proc_rows *r)
{
    for (size_t i = 0; i < r->n * r->width; i++)
        value_release(&r->cells[i]);
    if (r->cells)
        mem_free(x->m, r->cells);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The tokens of a kind (used ones only when in_use is given), sorted,
   one row each. */
static int token_rows(exec *x, strata_token_kind kind, const label_index *in_use,
                      proc_rows *out)
{
    const interner *t = exec_view(x)->ver->cat->tokens[kind];
    uint32_t n = intern_count(t);
    const char **names = mem_alloc(x->m, n * sizeof *names);
    if (!names)
        return exec_oom(x);
    size_t k = 0;
    for (uint32_t id = 0; id < n; id++)
        if (!in_use || labelidx_count(in_use, id) > 0)
            names[k++] = intern_name(t, id, NULL);
    qsort(names, k, sizeof *names, cmp_names);
    int rc = 0;
    for (size_t i = 0; i < k && rc == 0; i++) {
        value v;
        rc = make_string(x, names[i], strlen(names[i]), &v);
        if (rc == 0)
            rc = push_row(x, out, &v);
    }
    mem_free(x->m, names);
    return rc;
}

static int db_labels(exec *x, proc_rows *out)
{
    return token_rows(x, STRATA_LABEL, exec_view(x)->ver->labels, out);
}

static int db_relationship_types(exec *x, proc_rows *out)
{
    return token_rows(x, STRATA_RELTYPE, exec_view(x)->ver->rel_types, out);
}

static int db_property_keys(exec *x, proc_rows *out)
{
    return token_rows(x, STRATA_KEY, NULL, out);
}

static int string_value(exec *x, const char *s, value *out)
{
    return make_string(x, s, strlen(s), out);
}

/* name, type, entityType, labelsOrTypes, properties (the first five
   fields of both db.indexes and db.constraints). */
static int schema_fields(exec *x, const strata_index_info *info, const char *type, value *row)
{
    strata_view *v = exec_view(x);
    const char *token = "";
    strata_token_name(v, info->relationships ? STRATA_RELTYPE : STRATA_LABEL, info->token,
                      &token);
    value keys[8];
    size_t nk = 0;
    int rc = string_value(x, info->name, &row[0]);
    if (rc == 0)
        rc = string_value(x, type, &row[1]);
    if (rc == 0)
        rc = string_value(x, info->relationships ? "RELATIONSHIP" : "NODE", &row[2]);
    value tok = value_null();
    if (rc == 0 && (rc = string_value(x, token, &tok)) == 0 &&
        value_list_from(x->m, &tok, 1, &row[3]) != 0)
        rc = exec_oom(x);
    for (; rc == 0 && nk < info->nkeys; nk++) {
        const char *key = "";
        strata_token_name(v, STRATA_KEY, info->keys[nk], &key);
        rc = string_value(x, key, &keys[nk]);
    }
    if (rc == 0 && value_list_from(x->m, keys, nk, &row[4]) != 0)
        rc = exec_oom(x);
    if (rc != 0)
        for (size_t i = 0; i < nk; i++)
            value_release(&keys[i]);
    return rc;
}

static int rows_of_indexes(exec *x, strata_view *v, const strata_index *buf, size_t n,
                           bool constraints, proc_rows *out);

static int schema_rows(exec *x, bool constraints, proc_rows *out)
{
    strata_view *v = exec_view(x);
    strata_index *buf;
    size_t n = 0;
    if (exec_index_list(x, &buf, &n) != 0)
        return exec_oom(x);
    int rc = rows_of_indexes(x, v, buf, n, constraints, out);
    exec_index_list_free(x, &buf);
    return rc;
}

static int rows_of_indexes(exec *x, strata_view *v, const strata_index *buf, size_t n,
                           bool constraints, proc_rows *out)
{
    for (size_t i = 0; i < n; i++) {
        strata_index_info info;
        if (strata_index_info_get(v, buf[i], &info) != STRATA_OK)
            continue;
        bool unique = info.kind == STRATA_INDEX_UNIQUE;
        if (constraints && !unique)
            continue;
        value row[7];
        for (size_t c = 0; c < 7; c++)
            row[c] = value_null();
        const char *type = constraints ? "UNIQUENESS"
                           : info.kind == STRATA_INDEX_HASH ? "HASH" : "RANGE";
        int rc = schema_fields(x, &info, type, row);
        if (rc == 0 && !constraints) {
            rc = string_value(x, unique ? "UNIQUE" : "NONUNIQUE", &row[5]);
            row[6] = value_int((int64_t)info.entries);
        }
        if (rc == 0)
            rc = push_row(x, out, row);
        if (rc != 0) {
            for (size_t c = 0; c < 7; c++)
                value_release(&row[c]);
            return -1;
        }
    }
    return 0;
}

static int db_indexes(exec *x, proc_rows *out) { return schema_rows(x, false, out); }
static int db_constraints(exec *x, proc_rows *out) { return schema_rows(x, true, out); }

/* db.stats: one row per (label, type, direction) with a count, sorted by
   label and type name, outgoing first. */
typedef struct stat_row {
    const char *label, *type;
    uint64_t n[2];
} stat_row;

typedef struct stat_rows {
    exec *x;
    const catalog *cat;
    stat_row *v;
    size_t n, cap;
} stat_rows;

static int gather_stat(uint32_t label, uint32_t type, uint64_t out, uint64_t in, void *arg)
{
    stat_rows *r = arg;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        stat_row *v = mem_realloc(r->x->m, r->v, cap * sizeof *v);
        if (!v)
            return -1;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (stat_row){ intern_name(r->cat->tokens[STRATA_LABEL], label, NULL),
                               intern_name(r->cat->tokens[STRATA_RELTYPE], type, NULL),
                               { out, in } };
    return 0;
}

static int cmp_stat_rows(const void *a, const void *b)
{
    const stat_row *x = a, *y = b;
    int c = strcmp(x->label, y->label);
    return c ? c : strcmp(x->type, y->type);
}

static int db_stats(exec *x, proc_rows *out)
{
    const version *ver = exec_view(x)->ver;
    stat_rows r = { x, ver->cat, NULL, 0, 0 };
    int rc = relstats_each(&ver->stats, gather_stat, &r) ? exec_oom(x) : 0;
    if (rc == 0 && r.n > 1)   /* r.v is NULL without rows */
        qsort(r.v, r.n, sizeof *r.v, cmp_stat_rows);
    static const char *const dir_name[2] = { "OUTGOING", "INCOMING" };
    for (size_t i = 0; i < r.n && rc == 0; i++)
        for (int d = 0; d < 2 && rc == 0; d++) {
            if (!r.v[i].n[d])
                continue;
            value row[4] = { value_null(), value_null(), value_null(),
                             value_int((int64_t)r.v[i].n[d]) };
            rc = string_value(x, r.v[i].label, &row[0]);
            if (rc == 0)
                rc = string_value(x, r.v[i].type, &row[1]);
            if (rc == 0)
                rc = string_value(x, dir_name[d], &row[2]);
            if (rc == 0)
                rc = push_row(x, out, row);
            else
                for (int k = 0; k < 4; k++)
                    value_release(&row[k]);
        }
    if (r.v)
        mem_free(x->m, r.v);
    return rc;
}

static int db_procedures(exec *x, proc_rows *out);

static const char *const f_label[] = {"label"};
static const char *const f_type[] = {"relationshipType"};
static const char *const f_key[] = {"propertyKey"};
static const char *const f_index[] = {"name", "type", "entityType", "labelsOrTypes",
                                      "properties", "uniqueness", "entries"};
static const char *const f_constraint[] = {"name", "type", "entityType", "labelsOrTypes",
                                           "properties"};
static const char *const f_procedure[] = {"name", "signature", "description"};
static const char *const f_stats[] = {"label", "relationshipType", "direction", "count"};

static const procedure procedures[] = {
    {"db.labels", f_label, 1, db_labels},
    {"db.relationshipTypes", f_type, 1, db_relationship_types},
    {"db.propertyKeys", f_key, 1, db_property_keys},
    {"db.indexes", f_index, 7, db_indexes},
    {"db.constraints", f_constraint, 5, db_constraints},
    {"db.procedures", f_procedure, 3, db_procedures},
    {"db.stats", f_stats, 4, db_stats},
};

static int procedure_row(exec *x, const char *name, const char *signature,
                         const char *description, void *ctx)
{
    value row[3] = {value_null(), value_null(), value_null()};
    int rc = string_value(x, name, &row[0]);
    if (rc == 0)
        rc = string_value(x, signature, &row[1]);
    if (rc == 0)
        rc = string_value(x, description, &row[2]);
    if (rc == 0)
        return push_row(x, ctx, row);
    for (size_t i = 0; i < 3; i++)
        value_release(&row[i]);
    return -1;
}

/* The procedures above (signature: their fields) and the algorithms. */
static int db_procedures(exec *x, proc_rows *out)
{
    for (size_t i = 0; i < sizeof procedures / sizeof *procedures; i++) {
        const procedure *p = &procedures[i];
        char sig[256];
        int len = snprintf(sig, sizeof sig, "%s() :: (", p->name);
        for (size_t f = 0; f < p->nfields && len < (int)sizeof sig; f++)
            len += snprintf(sig + len, sizeof sig - (size_t)len, "%s%s", f ? ", " : "",
                            p->fields[f]);
        if (len < (int)sizeof sig)
            snprintf(sig + len, sizeof sig - (size_t)len, ")");
        if (procedure_row(x, p->name, sig, "built-in", out) != 0)
            return -1;
    }
    return proc_algo_list(x, procedure_row, out);
}

static const procedure *find_procedure(const cypher_ast_str *name)
{
    for (size_t i = 0; i < sizeof procedures / sizeof *procedures; i++)
        if (strlen(procedures[i].name) == name->len &&
            memcmp(procedures[i].name, name->ptr, name->len) == 0)
            return &procedures[i];
    return NULL;
}

long call_field_index(const char *const *fields, size_t nfields, const cypher_ast_str *name)
{
    for (size_t i = 0; i < nfields; i++)
        if (strlen(fields[i]) == name->len && memcmp(fields[i], name->ptr, name->len) == 0)
            return (long)i;
    return -1;
}

int call_check(exec *x, const cypher_ast_node *cl)
{
    if (proc_algo_is(&cl->u.call.proc))
        return proc_algo_check(x, cl);
    const procedure *p = find_procedure(&cl->u.call.proc);
    if (!p)
        return exec_fail(x, cl, "ProcedureError", "ProcedureNotFound",
                         "there is no procedure %.*s", (int)cl->u.call.proc.len,
                         cl->u.call.proc.ptr);
    if (cl->u.call.args.count != 0)
        return exec_fail(x, cl, "SyntaxError", "InvalidNumberOfArguments",
                         "%s takes no arguments", p->name);
    for (size_t i = 0; i < cl->u.call.yields.count; i++) {
        const cypher_ast_node *y = cl->u.call.yields.items[i];
        if (call_field_index(p->fields, p->nfields, &y->u.alias.expr->u.name) < 0)
            return exec_fail(x, y, "SyntaxError", "UndefinedVariable",
                             "%s yields no field %s", p->name, y->u.alias.expr->u.name.ptr);
    }
    return 0;
}

/* The yielded fields: their indices into the procedure's row and the
   names they take in the query. */
int call_bind_yields(exec *x, const cypher_ast_node *cl, const char *const *fields,
                     size_t nfields, size_t max, scope *sc, long *field, size_t *slot, size_t *n)
{
    bool all = !cl->u.call.has_yield || cl->u.call.yield_star;
    *n = all ? nfields : cl->u.call.yields.count;
    if (*n > max)
        return exec_fail(x, cl, "SyntaxError", NULL, "%.*s yields at most %zu fields",
                         (int)cl->u.call.proc.len, cl->u.call.proc.ptr, max);
    for (size_t i = 0; i < *n; i++) {
        const char *name;
        size_t len;
        if (all) {
            field[i] = (long)i;
            name = fields[i];
            len = strlen(name);
        } else {
            const cypher_ast_node *y = cl->u.call.yields.items[i];
            const cypher_ast_node *v = y->u.alias.alias ? y->u.alias.alias : y->u.alias.expr;
            field[i] = call_field_index(fields, nfields, &y->u.alias.expr->u.name);
            name = v->u.name.ptr;
            len = v->u.name.len;
        }
        if (scope_add(x, sc, name, len, &slot[i]) != 0)
            return -1;
    }
    return 0;
}

int op_call(exec *x, const cypher_ast_node *cl, scope *sc, rowset *in, rowset *out,
            scope *cols)
{
    if (proc_algo_is(&cl->u.call.proc))
        return proc_algo_op(x, cl, sc, in, out, cols);
    if (call_check(x, cl) != 0)
        return -1;
    const procedure *p = find_procedure(&cl->u.call.proc);
    size_t in_width = in->width, n;
    long field[MAX_YIELDS];
    size_t slot[MAX_YIELDS];
    if (call_bind_yields(x, cl, p->fields, p->nfields, MAX_YIELDS, sc, field, slot, &n) != 0)
        return -1;
    if (cols)
        for (size_t i = 0; i < n; i++)
            if (scope_push(x, cols, &sc->b[sc->n - n + i]) != 0)
                return -1;
    rowset_init(out, x->width);
    proc_rows pr = {.width = p->nfields};
    int rc = in->nrows ? p->run(x, &pr) : 0;   /* procedures only read: once for all rows */
    value *row = mem_calloc(x->m, (x->width ? x->width : 1) * sizeof(value));
    if (!row)
        rc = exec_oom(x);
    for (size_t r = 0; r < in->nrows && rc == 0; r++) {
        for (size_t k = 0; k < pr.n && rc == 0; k++) {
            const value *src = rowset_row(in, r);
            for (size_t i = 0; i < in_width; i++)
                row[i] = value_retain(src[i]);
            for (size_t i = 0; i < n; i++)
                row[slot[i]] = value_retain(pr.cells[k * pr.width + (size_t)field[i]]);
            tri keep = TRI_TRUE;
            if (cl->u.call.where) {
                evalctx c = {x, sc, row, NULL, NULL};
                rc = eval_predicate(&c, cl->u.call.where, &keep);
            }
            if (rc == 0 && keep == TRI_TRUE)
                rc = rowset_push(x, out, row);
            for (size_t i = 0; i < x->width; i++)
                value_release(&row[i]);
        }
    }
    if (row)
        mem_free(x->m, row);
    free_rows(x, &pr);
    return rc;
}
