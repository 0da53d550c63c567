/*
 * query — strata_query: parse, check, plan and run one Cypher statement,
 * and the result cursor.
 *
 * The plan is the clause list itself.  Runs of reading clauses (MATCH,
 * UNWIND, WITH, RETURN, with their aggregation, DISTINCT, ORDER BY and
 * LIMIT) form pipelines whose stages push rows to the next
 * (pipeline.c); updating clauses, CALL and LOAD CSV map a whole row set
 * to the next (exec.h says why).  A statement that only reads runs its
 * final pipeline lazily as the result is read.  Access paths (scan,
 * label scan, index seek) are chosen per pattern when it opens
 * (plan_start.c).  A statement that writes runs between
 * strata_statement_begin and strata_statement_end, so any error rolls it
 * back completely, ids included.
 */
#include <stdio.h>
#include <string.h>

#include "query/exec.h"
#include "query/keyset.h"
#include "query/parser.h"
#include "query/pipeline.h"
#include "query/plan_cache.h"
#include "query/proc_algo.h"
#include "query/profile.h"
#include "query/regex.h"
#include "query/result.h"

/* Rows a lazy result's buffer holds in the arena before it grows from
   the allocator: a point lookup's one row, a short result's few. */
#define LAZY_ROOM 4
/* Rows pulled at a time by a result read as it goes. */
#define LAZY_BATCH 256

typedef struct query_out {
    scope cols;
    rowset rows;
    bool has_return;
    pipeline *pipe;     /* x->lazy or open_final: the final pipeline,
                           opened, not run */
    bool open_final;    /* a UNION's part: its rows are pulled in batches */
} query_out;

/* ---- streaming LOAD CSV ---- */

/* Rows a streaming LOAD CSV hands on at a time. */
#define LOAD_BATCH 8192

static int any_kind(const cypher_ast_node *n, void *ctx)
{
    const cypher_ast_kind *kind = ctx;
    return n->kind == *kind ? 1 : cypher_ast_each_child(n, any_kind, ctx);
}

/* Whether the tree n holds a node of kind k. */
static bool holds(const cypher_ast_node *n, cypher_ast_kind k)
{
    return n && any_kind(n, &k) != 0;
}

static int aggregates_in(const cypher_ast_node *n, void *ctx)
{
    (void)ctx;
    return is_aggregate_call(n) ? 1 : cypher_ast_each_child(n, aggregates_in, NULL);
}

/* A CREATE that only joins nodes bound before it: every node element a
   bare variable. */
static bool creates_relationships_only(const cypher_ast_node *cl)
{
    for (size_t i = 0; i < cl->u.list.count; i++) {
        const cypher_ast_list *el = &cl->u.list.items[i]->u.part.path->u.list;
        if (el->count == 1)
            return false;
        for (size_t k = 0; k < el->count; k += 2) {
            const cypher_ast_node *n = el->items[k];
            if (!n->u.node.variable || n->u.node.labels.count || n->u.node.properties)
                return false;
        }
    }
    return true;
}

/* Whether the clauses after the LOAD CSV at i give the same result when
   its rows are run through them a batch at a time as when they are all
   read first: nothing returns or aggregates, every write is a CREATE,
   and what a batch creates cannot change what a later batch reads — so
   reads are MATCHes of single nodes (no relationship, no pattern in an
   expression), and where there are any, CREATE only adds relationships
   between bound nodes (which no node match sees). */
static bool load_csv_streams(const exec *x, const cypher_ast_node *q, size_t i)
{
    if (x->prof || x->no_input)
        return false;
    bool matches = false, creates_nodes = false;
    for (size_t k = i + 1; k < q->u.list.count; k++) {
        const cypher_ast_node *cl = q->u.list.items[k];
        switch (cl->kind) {
        case CYPHER_AST_CREATE:
            creates_nodes |= !creates_relationships_only(cl);
            break;
        case CYPHER_AST_MATCH:
            for (size_t p = 0; p < cl->u.match.parts.count; p++)
                if (cl->u.match.parts.items[p]->u.part.path->u.list.count != 1)
                    return false;
            if (holds(cl->u.match.where, CYPHER_AST_REL))
                return false;
            matches = true;
            break;
        case CYPHER_AST_WITH:
            if (cl->u.projection.distinct || cl->u.projection.order.count ||
                cl->u.projection.skip || cl->u.projection.limit ||
                cypher_ast_each_child(cl, aggregates_in, NULL) || holds(cl, CYPHER_AST_REL))
                return false;
            break;
        case CYPHER_AST_UNWIND:
            if (holds(cl, CYPHER_AST_REL))
                return false;
            break;
        default:
            return false;
        }
    }
    return !(matches && creates_nodes);
}

static int run_clauses(exec *x, const cypher_ast_node *q, size_t from, scope *sc, rowset cur,
                       query_out *out);

typedef struct load_tail {
    const cypher_ast_node *q;
    size_t from;
    const scope *sc;
    query_out *out;
} load_tail;

/* One batch of a streaming LOAD CSV through the clauses after it, planned
   afresh from the scope after the LOAD CSV. */
static int run_load_batch(exec *x, rowset *rows, void *ctx)
{
    load_tail *t = ctx;
    size_t width = x->width;
    scope sc = {0};
    x->no_arena++;      /* once per batch: what it opens is freed after it */
    int rc = scope_copy(x, t->sc, &sc);
    if (rc == 0)
        rc = run_clauses(x, t->q, t->from, &sc, *rows, t->out);
    else
        rowset_free(rows);
    scope_free(&sc);
    x->no_arena--;
    x->width = width;
    return rc;
}

static int run_query(exec *x, const cypher_ast_node *q, query_out *out)
{
    scope sc = {0};
    rowset cur;
    rowset_init(&cur, 0);
    value none = value_null();
    int rc = x->no_input ? 0 : rowset_reserve(x, &cur, 1);
    if (rc == 0 && !x->no_input)
        rc = rowset_push(x, &cur, &none);   /* one empty row */
    if (rc == 0)
        rc = run_clauses(x, q, 0, &sc, cur, out);
    else
        rowset_free(&cur);
    scope_free(&sc);
    return rc;
}

/* Runs q's clauses from `from` over cur (taken). */
static int run_clauses(exec *x, const cypher_ast_node *q, size_t from, scope *sc, rowset cur,
                       query_out *out)
{
    int rc = 0;
    for (size_t i = from; i < q->u.list.count && rc == 0; i++) {
        const cypher_ast_node *cl = q->u.list.items[i];
        rowset next;
        if (cl->kind == CYPHER_AST_LOAD_CSV && load_csv_streams(x, q, i)) {
            load_tail t = {q, i + 1, sc, out};
            rc = op_load_csv_stream(x, q, i, sc, &cur, LOAD_BATCH, run_load_batch, &t);
            rowset_free(&cur);
            rowset_init(&cur, 0);
            break;   /* the clauses after it ran with each batch */
        }
        if (stage_streams(cl)) {
            /* the longest run of streaming clauses, as one pipeline */
            size_t j = i + 1;
            while (j < q->u.list.count && stage_streams(q->u.list.items[j]))
                j++;
            bool ends = q->u.list.items[j - 1]->kind == CYPHER_AST_RETURN;
            const cypher_ast_node *const *run = (const cypher_ast_node *const *)&q->u.list.items[i];
            const cypher_ast_node *last = x->run_last, *after = x->run_next;
            x->run_last = q->u.list.items[j - 1];
            x->run_next = j < q->u.list.count ? q->u.list.items[j] : NULL;
            if (ends && (x->lazy || out->open_final)) {
                /* the rows are produced as the result is read */
                out->pipe = pipeline_open(x, run, j - i, sc, &cur, &out->cols);
                x->run_last = last;
                x->run_next = after;
                out->has_return = true;
                rc = out->pipe ? 0 : -1;
                break;
            }
            rc = pipeline_run(x, run, j - i, sc, &cur, &next, ends ? &out->cols : NULL);
            x->run_last = last;
            x->run_next = after;
            out->has_return |= ends;
            rowset_free(&cur);
            cur = next;
            i = j - 1;
            continue;
        }
        if (x->prof)
            profile_clause_begin(x);
        rowset_init(&next, cur.width);
        bool replaced = true;
        switch (cl->kind) {
        case CYPHER_AST_LOAD_CSV: rc = op_load_csv(x, cl, sc, &cur, &next); break;
        case CYPHER_AST_WITH: rc = op_project(x, cl, sc, &cur, &next, NULL); break;
        case CYPHER_AST_RETURN:
            rc = op_project(x, cl, sc, &cur, &next, &out->cols);
            out->has_return = true;
            break;
        case CYPHER_AST_CREATE: rc = op_create(x, cl, sc, &cur, &next); break;
        case CYPHER_AST_MERGE: rc = op_merge(x, cl, sc, &cur, &next); break;
        case CYPHER_AST_SET: rc = op_set(x, cl, sc, &cur); replaced = false; break;
        case CYPHER_AST_REMOVE: rc = op_remove(x, cl, sc, &cur); replaced = false; break;
        case CYPHER_AST_DELETE: rc = op_delete(x, cl, sc, &cur); replaced = false; break;
        case CYPHER_AST_CALL: {
            bool last = i + 1 == q->u.list.count;
            rc = op_call(x, cl, sc, &cur, &next, last ? &out->cols : NULL);
            out->has_return |= last;
            break;
        }
        default:
            rc = exec_fail(x, cl, "SyntaxError", NULL, "%s is not supported yet",
                           cypher_ast_kind_name(cl->kind));
            replaced = false;
            break;
        }
        if (replaced) {
            rowset_free(&cur);
            cur = next;
        } else {
            rowset_free(&next);
        }
        if (rc == 0 && x->prof)
            rc = profile_clause_end(x, cl, cur.nrows);
    }
    if (rc == 0 && out->has_return)
        out->rows = cur;
    else
        rowset_free(&cur);
    return rc;
}

static bool same_columns(const scope *a, const scope *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (a->b[i].len != b->b[i].len || memcmp(a->b[i].name, b->b[i].name, a->b[i].len))
            return false;
    return true;
}

/* Copies the columns cols of rows into the result (rows as ncols
   values); with seen (UNION), only rows not equivalent to one seen
   before. */
static int take_rows(exec *x, strata_result *r, const scope *cols, const rowset *rows,
                     keyset *seen)
{
    size_t n = cols->n;
    value tuple[n ? n : 1];
    for (size_t i = 0; i < rows->nrows; i++) {
        const value *src = rowset_row(rows, i);
        if (seen) {
            for (size_t c = 0; c < n; c++)
                tuple[c] = src[cols->b[c].slot];   /* borrowed */
            int added = keyset_insert(seen, tuple, NULL);
            if (added < 0)
                return exec_oom(x);
            if (!added)
                continue;
        }
        value *cells = mem_realloc(x->m, r->cells, (r->nrows + 1) * n * sizeof(value));
        if (!cells)
            return exec_oom(x);
        r->cells = cells;
        for (size_t c = 0; c < n; c++)
            r->cells[r->nrows * n + c] = value_retain(src[cols->b[c].slot]);
        r->nrows++;
    }
    return 0;
}

/* The column names and the row handles, in one block: handles, the row's
   pointers to them, the name pointers, then the names. */
static int set_columns(exec *x, strata_result *r, const scope *cols)
{
    size_t n = cols->n, names = 0;
    for (size_t i = 0; i < n; i++)
        names += cols->b[i].len + 1;
    size_t size = n * (sizeof *r->handles + sizeof *r->row + sizeof *r->cols) + names;
    char *block = exec_alloc(x, size, &r->colblock_m);
    if (!block)
        return exec_oom(x);
    r->ncols = n;
    r->colblock = block;
    r->handles = (strata_value *)block;
    r->row = (const strata_value **)(r->handles + n);
    r->cols = (char **)(r->row + n);
    char *text = (char *)(r->cols + n);
    for (size_t i = 0; i < n; i++) {
        r->handles[i].v = value_null();
        r->row[i] = &r->handles[i];
        r->cols[i] = text;
        memcpy(text, cols->b[i].name, cols->b[i].len);
        text[cols->b[i].len] = '\0';
        text += cols->b[i].len + 1;
    }
    return 0;
}

static void exec_release(exec *x)
{
    if (x->used_rels)
        mem_free(x->m, x->used_rels);
    x->used_rels = NULL;
    x->capused = x->nused = 0;
    regex_cache_free(x);
}

/* What a result read as it goes holds besides its rows and view. */
static void lazy_free(strata_result *r)
{
    if (r->pipe)
        pipeline_close(&r->xs, &r->pipe);
    rowset_free(&r->buf);
    if (r->slots)
        exec_free(&r->xs, r->slots);   /* lazy_start's x is &r->xs */
    r->slots = NULL;
    exec_release(&r->xs);
    plan_release(&r->plan);
    value_release(&r->params);
}

/* The result takes the opened final pipeline and pulls its first rows,
   so most statements' errors still come from strata_query itself. */
static int lazy_start(exec *x, strata_result *r, query_out *out)
{
    r->slots = exec_alloc(x, out->cols.n * sizeof *r->slots, NULL);
    if (!r->slots)
        return exec_oom(x);
    for (size_t c = 0; c < out->cols.n; c++)
        r->slots[c] = out->cols.b[c].slot;
    r->pipe = out->pipe;
    out->pipe = NULL;
    /* the buffer is kept for every batch: its room is taken once */
    rowset_init(&r->buf, x->width);
    if (rowset_reserve(x, &r->buf, LAZY_ROOM) != 0)
        return -1;
    int rc = pipeline_pull(x, r->pipe, &r->buf, LAZY_BATCH);
    r->pipe_done = rc == 1;
    return rc < 0 ? -1 : 0;
}

static int run_body(exec *x, const cypher_ast_node *body, strata_result *r)
{
    if (body->kind == CYPHER_AST_QUERY) {
        query_out out = {0};
        int rc = run_query(x, body, &out);
        if (rc == 0)
            rc = set_columns(x, r, &out.cols);
        if (rc == 0 && out.pipe)
            rc = lazy_start(x, r, &out);
        else if (rc == 0)
            rc = take_rows(x, r, &out.cols, &out.rows, NULL);
        pipeline_close(x, &out.pipe);   /* unless the result took it */
        scope_free(&out.cols);
        rowset_free(&out.rows);
        return rc;
    }
    /* UNION [ALL]: the parts run in order, with the same columns; each
       part's final pipeline is pulled in batches, so UNION holds its
       distinct rows (the result), never a part's rows all at once */
    int rc = 0;
    scope first = {0};
    keyset seen;            /* UNION: the rows so far, de-duplicated */
    keyset_init(&seen, x->m, 0);
    for (size_t i = 0; i < body->u.union_.queries.count && rc == 0; i++) {
        query_out out = {.open_final = true};
        x->width = 0;
        rc = run_query(x, body->u.union_.queries.items[i], &out);
        if (rc == 0 && i == 0) {
            rc = set_columns(x, r, &out.cols);
            if (rc == 0)
                rc = scope_copy(x, &out.cols, &first);
            keyset_init(&seen, x->m, out.cols.n);
        } else if (rc == 0 && !same_columns(&first, &out.cols)) {
            rc = exec_fail(x, body->u.union_.queries.items[i], "SyntaxError",
                           "DifferentColumnsInUnion",
                           "all parts of a UNION must return the same columns");
        }
        keyset *dedup = body->u.union_.all ? NULL : &seen;
        if (rc == 0 && !out.pipe)
            rc = take_rows(x, r, &out.cols, &out.rows, dedup);
        for (int pulled = 0; rc == 0 && out.pipe && pulled != 1;) {
            rowset batch;
            rowset_init(&batch, x->width);
            pulled = pipeline_pull(x, out.pipe, &batch, LAZY_BATCH);
            rc = pulled < 0 ? -1 : take_rows(x, r, &out.cols, &batch, dedup);
            rowset_free(&batch);
        }
        pipeline_close(x, &out.pipe);
        scope_free(&out.cols);
        rowset_free(&out.rows);
    }
    keyset_free(&seen);
    scope_free(&first);
    return rc;
}

strata_status result_fail(strata_graph *g, strata_result *r, const char *code,
                          const char *detail, const char *message, uint32_t line,
                          uint32_t column)
{
    r->failed = true;
    snprintf(r->code, sizeof r->code, "%s", code);
    snprintf(r->detail, sizeof r->detail, "%s", detail ? detail : "");
    snprintf(r->message, sizeof r->message, "%s", message);
    r->err.code = r->code;
    r->err.detail = detail ? r->detail : NULL;
    r->err.message = r->message;
    r->err.line = line;
    r->err.column = column;
    strata_status s = strcmp(code, "OutOfMemory") == 0                    ? STRATA_ENOMEM
                      : strcmp(code, "ConstraintVerificationFailed") == 0 ? STRATA_ECONSTRAINT
                                                                          : STRATA_EINVAL;
    if (!g)
        return s;
    return graph_fail(g, s, "%s: %s (line %u, column %u)", code, message, line, column);
}

static bool is_schema_command(cypher_ast_kind k)
{
    return k == CYPHER_AST_CREATE_INDEX || k == CYPHER_AST_DROP_INDEX ||
           k == CYPHER_AST_CREATE_CONSTRAINT || k == CYPHER_AST_DROP_CONSTRAINT;
}

/* The first updating clause of a query or union, or NULL. */
static const cypher_ast_node *first_update(const cypher_ast_node *body)
{
    if (body->kind == CYPHER_AST_UNION) {
        for (size_t i = 0; i < body->u.union_.queries.count; i++) {
            const cypher_ast_node *u = first_update(body->u.union_.queries.items[i]);
            if (u)
                return u;
        }
        return NULL;
    }
    if (body->kind != CYPHER_AST_QUERY)
        return is_schema_command(body->kind) ? body : NULL;
    for (size_t i = 0; i < body->u.list.count; i++) {
        const cypher_ast_node *cl = body->u.list.items[i];
        switch (cl->kind) {
        case CYPHER_AST_CREATE: case CYPHER_AST_MERGE: case CYPHER_AST_SET:
        case CYPHER_AST_REMOVE: case CYPHER_AST_DELETE:
            return cl;
        case CYPHER_AST_CALL:
            if (proc_algo_writes(&cl->u.call.proc))
                return cl;
            break;
        default:
            break;
        }
    }
    return NULL;
}

strata_status strata_query_writes(strata_graph *g, const char *text, bool *writes)
{
    if (!g || !text || !writes)
        return STRATA_EINVAL;
    size_t len = strlen(text);
    plan_cache *cache = plan_cache_for(graph_catalog(g));
    cached_plan *plan = cache ? plan_cache_get(cache, text, len) : NULL;
    cypher_ast *ast = NULL;
    if (!plan) {
        cypher_error perr;
        if (cypher_parse(text, len, mem_scratch(), &ast, &perr) != 0)
            return perr.category && strcmp(perr.category, "OutOfMemory") == 0 ? STRATA_ENOMEM
                                                                              : STRATA_EINVAL;
    }
    const cypher_ast *a = plan ? plan_ast(plan) : ast;
    *writes = first_update(cypher_ast_root(a)->u.statement.body) != NULL;
    if (plan)
        plan_release(&plan);
    else
        cypher_ast_free(&ast);
    return STRATA_OK;
}

/* The checked tree for text: from the plan cache, or parsed and checked
   now and cached.  Errors go to x (semantic) or perr (syntax). */
cached_plan *query_checked_plan(exec *x, const char *text, size_t len, cypher_error *perr)
{
    plan_cache *cache = plan_cache_for(exec_view(x)->ver->cat);
    cached_plan *plan = plan_cache_get(cache, text, len);
    if (plan)
        return plan;
    cypher_ast *ast = NULL;
    if (cypher_parse(text, len, x->m, &ast, perr) != 0)
        return NULL;
    const cypher_ast_node *body = cypher_ast_root(ast)->u.statement.body;
    if (!is_schema_command(body->kind) && semantic_check(x, body) != 0) {
        cypher_ast_free(&ast);
        return NULL;
    }
    plan = plan_cache_put(cache, text, len, ast);
    if (!plan)
        exec_oom(x);
    return plan;
}

/* Adds "; note" to the error already recorded, as room allows. */
static void append_note(exec *x, const char *note)
{
    size_t len = strlen(x->err.message);
    if (len + 2 < sizeof x->err.message)
        snprintf(x->err.message + len, sizeof x->err.message - len, "; %s", note);
}

/* EXPLAIN / PROFILE: the plan, as the rows of the result out. */
static int profile_output(exec *x, strata_result *out)
{
    query_out po = {0};
    int rc = profile_rows(x, &po.cols, &po.rows);
    if (rc == 0)
        rc = set_columns(x, out, &po.cols);
    if (rc == 0)
        rc = take_rows(x, out, &po.cols, &po.rows, NULL);
    scope_free(&po.cols);
    rowset_free(&po.rows);
    return rc;
}

/* Runs the statement's body: on the writer inside a statement, or on a
   view (read-only).  With profile_into (EXPLAIN / PROFILE), the plan's
   rows go there before the statement ends, so that a failure to make them
   rolls the statement back rather than being reported after it
   committed. */
static void run_statement(exec *x, const cypher_ast_node *root, strata_result *r,
                          strata_result *profile_into)
{
    const cypher_ast_node *body = root->u.statement.body;
    if (x->prof && is_schema_command(body->kind)) {
        exec_fail(x, root, "SyntaxError", NULL,
                  "EXPLAIN and PROFILE apply to queries, not to schema commands");
        return;
    }
    if (!x->g) {
        /* a lazy statement was found to only read (reads_lazily) */
        const cypher_ast_node *u = x->lazy ? NULL : first_update(body);
        if (u)
            exec_fail(x, u, "SemanticError", NULL,
                      "a query on a view only reads: %s writes",
                      cypher_ast_kind_name(u->kind));
        else if (run_body(x, body, r) == 0 && profile_into)
            profile_output(x, profile_into);
        return;
    }
    if (is_schema_command(body->kind)) {
        run_schema(x, body);
        return;
    }
    strata_status st = strata_statement_begin(x->g);
    if (st != STRATA_OK) {
        exec_status(x, root, st);
        return;
    }
    int rc = run_body(x, body, r);
    if (rc == 0 && profile_into)
        rc = profile_output(x, profile_into);
    /* EXPLAIN writes nothing: whatever planning over no rows did is undone */
    st = strata_statement_end(x->g, rc == 0 && !x->no_input);
    /* Ending can fail in a rollback that could not finish (the transaction
       around the statement was then dropped), or in a commit the log could
       not keep (rolled back instead): the caller must
       hear of it, after the error that caused the rollback if there was
       one (exec_fail keeps the first error). */
    if (st != STRATA_OK && !x->err.category)
        exec_status(x, root, st);
    else if (st != STRATA_OK)
        append_note(x, strata_errmsg(x->g));
}

/* EXPLAIN / PROFILE: the statement runs as above, then the result holds
   the plan instead of the rows. */
static void run_profiled(exec *x, const cypher_ast_node *root, const char *text,
                         strata_result *r)
{
    profile pr = {.text = text, .timed = root->u.statement.mode == CYPHER_MODE_PROFILE};
    x->prof = &pr;
    x->no_input = !pr.timed;
    strata_result *scratch = mem_calloc(x->m, sizeof *scratch);
    if (!scratch) {
        exec_oom(x);
    } else {
        run_statement(x, root, scratch, r);
        strata_result_free(&scratch);
    }
    if (x->no_input)
        x->stats = (qstats){0};
    profile_free(x);
    x->prof = NULL;
}

/* Whether body neither writes nor loads a file (parallel.h). */
static bool reads_only(const cypher_ast_node *body)
{
    if (first_update(body))
        return false;
    if (body->kind == CYPHER_AST_UNION) {
        for (size_t i = 0; i < body->u.union_.queries.count; i++)
            if (!reads_only(body->u.union_.queries.items[i]))
                return false;
        return true;
    }
    if (body->kind != CYPHER_AST_QUERY)
        return false;
    for (size_t i = 0; i < body->u.list.count; i++)
        if (body->u.list.items[i]->kind == CYPHER_AST_LOAD_CSV)
            return false;
    return true;
}

/* Whether root is computed as its result is read: a query that only reads
   (no update, no schema command, no UNION, not EXPLAIN or PROFILE). */
static bool reads_lazily(const cypher_ast_node *root)
{
    const cypher_ast_node *body = root->u.statement.body;
    return root->u.statement.mode == CYPHER_MODE_RUN && body->kind == CYPHER_AST_QUERY &&
           !first_update(body);
}

/* What a run asks of the tree before it starts, worked out once per
   cached plan (plan_traits). */
#define TRAIT_READS_ONLY (PLAN_TRAITS_KNOWN << 1)
#define TRAIT_LAZY (PLAN_TRAITS_KNOWN << 2)

static unsigned statement_traits(cached_plan *plan)
{
    unsigned t = plan_traits(plan);
    if (t & PLAN_TRAITS_KNOWN)
        return t;
    const cypher_ast_node *root = cypher_ast_root(plan_ast(plan));
    t = PLAN_TRAITS_KNOWN;
    if (reads_only(root->u.statement.body))
        t |= TRAIT_READS_ONLY;
    if (reads_lazily(root))
        t |= TRAIT_LAZY;
    plan_set_traits(plan, t);
    return t;
}

/* The result's own view of v's version: a reference, no allocation. */
static void view_retain_into(const strata_view *v, strata_view *into)
{
    into->err[0] = '\0';
    into->ver = v->ver;
    version_retain(into->ver);
}

/* Drops the result's view (r->view is NULL or its own). */
static void result_view_release(strata_result *r)
{
    if (r->view)
        version_release(&r->own_view.ver);
    r->view = NULL;
}

/* A lazy statement reads a view the result holds: a graph's own state (its
   open transaction's writes included) or the view queried.  The executor
   then borrows nothing from the writer and may run after strata_query has
   returned.  Inside an open statement a graph has no view to give: the
   statement then runs at once. */
static bool go_lazy(strata_graph *g, strata_view *v, exec *x, strata_result *r,
                    const strata_value *params)
{
    if (g) {
        if (graph_snapshot_own_into(g, &r->own_view) != STRATA_OK)
            return false;
    } else {
        view_retain_into(v, &r->own_view);
    }
    r->view = &r->own_view;
    x->g = NULL;
    x->view.ver = r->view->ver;
    x->lazy = true;
    /* the caller may free its parameters once strata_query returns */
    if (params) {
        r->params = value_retain(params->v);
        x->params = &r->params;
    }
    return true;
}

void result_clear(strata_result *r)
{
    strata_stmt *stmt = r->stmt;
    memset(r, 0, offsetof(strata_result, arena_room));
    exec_arena_init(&r->arena, r->arena_room, sizeof r->arena_room);
    r->stmt = stmt;
    atomic_init(&r->interrupted, false);
    /* what result_release reads of an executor that never ran */
    r->xs.used_rels = NULL;
    r->xs.regexes = NULL;
}

strata_status result_run(strata_result *r, const run_args *a)
{
    strata_graph *g = a->g;
    strata_view *v = a->v;
    mem_ctx *m = mem_scratch();
    r->cancel = cancel_retain(a->cancel);
    exec *x = &r->xs;
    *x = (exec){.g = g, .m = m, .params = a->params ? &a->params->v : NULL,
                .bound = a->bound, .nbound = a->nbound,
                .interrupt = g ? &graph_catalog(g)->interrupt : NULL,
                .result_interrupt = &r->interrupted,
                .cancel = a->cancel ? &a->cancel->requested : NULL,
                .arena = &r->arena};
    if (a->params && value_kind(&a->params->v) != VAL_MAP)
        return result_fail(g, r, "ArgumentError", NULL, "parameters must be a map", 1, 1);
    if (v)
        x->view.ver = v->ver;
    else
        atomic_store(&graph_catalog(g)->interrupt, false);
    cypher_error perr;
    /* a prepared statement's plan is its own: the result takes no
       reference to it */
    cached_plan *plan = a->plan ? a->plan
                                : query_checked_plan(x, a->text, strlen(a->text), &perr);
    cached_plan *owned = a->plan ? NULL : plan;
    if (!plan && !x->err.category) {
        exec_release(x);
        return result_fail(g, r, perr.category, perr.detail, perr.message, perr.line,
                           perr.column);
    }
    const cypher_ast_node *root = plan ? cypher_ast_root(plan_ast(plan)) : NULL;
    unsigned traits = plan ? statement_traits(plan) : 0;
    x->reads_only = traits & TRAIT_READS_ONLY;
    if (root && root->u.statement.mode != CYPHER_MODE_RUN)
        run_profiled(x, root, a->text, r);
    else if (root && (traits & TRAIT_LAZY) && go_lazy(g, v, x, r, a->params))
        run_statement(x, root, r, NULL);
    else if (root)
        run_statement(x, root, r, NULL);
    if (x->err.category) {
        for (size_t i = 0; i < r->nrows * r->ncols; i++)
            value_release(&r->cells[i]);
        if (r->cells)
            mem_free(m, r->cells);
        r->cells = NULL;
        r->nrows = 0;
        strata_status st = result_fail(g, r, x->err.category, x->err.detail, x->err.message,
                                       x->err.line, x->err.column);
        r->plan = owned;    /* lazy_free releases it with the pipeline */
        lazy_free(r);
        return st;
    }
    r->stats = (strata_query_stats){x->stats.nodes_created, x->stats.nodes_deleted,
                                    x->stats.rels_created, x->stats.rels_deleted,
                                    x->stats.props_set, x->stats.labels_added,
                                    x->stats.labels_removed};
    if (r->pipe) {
        /* the rows come as they are read: the executor and the plan stay */
        r->plan = owned;
        return STRATA_OK;
    }
    plan_release(&owned);
    exec_release(x);
    if (r->view)
        return STRATA_OK;   /* taken for a lazy statement, which wrote nothing */
    if (!g) {
        view_retain_into(v, &r->own_view);
        r->view = &r->own_view;
        return STRATA_OK;
    }
    /* The view of the graph's state is the result's own (nothing to
       allocate), so once a statement has committed its result cannot
       fail; and no statement is open once strata_query's has ended. */
    strata_status st = graph_snapshot_own_into(g, &r->own_view);
    if (st != STRATA_OK)
        return result_fail(g, r, "ArgumentError", NULL, strata_errmsg(g), 1, 1);
    r->view = &r->own_view;
    return STRATA_OK;
}

bool result_parkable(const strata_result *r)
{
    return r->pipe && !r->failed && pipeline_parkable(r->pipe);
}

/* The rows read are let go, the stages parked, the view released: what
   is left is what the statement's text alone decided (stages, scopes,
   slots, columns, the row buffer's room). */
void result_park(strata_result *r)
{
    rowset_clear(&r->buf);
    r->buf_next = 0;
    for (size_t c = 0; c < r->ncols; c++)
        r->handles[c].v = value_null();
    pipeline_park(&r->xs, r->pipe);
    result_view_release(r);
    cancel_release(&r->cancel);
}

bool result_resume(strata_result *r, const run_args *a, strata_status *st)
{
    strata_graph *g = a->g;
    if (g) {
        if (graph_snapshot_own_into(g, &r->own_view) != STRATA_OK)
            return false;
        atomic_store(&graph_catalog(g)->interrupt, false);
    } else {
        view_retain_into(a->v, &r->own_view);
    }
    r->view = &r->own_view;
    r->cancel = cancel_retain(a->cancel);
    atomic_store(&r->interrupted, false);
    r->failed = false;
    r->pipe_done = false;
    r->stats = (strata_query_stats){0};
    /* the executor as result_run left it after opening, less what the
       last run changed */
    exec *x = &r->xs;
    x->view.ver = r->view->ver;
    x->err.category = x->err.detail = NULL;
    x->err.message[0] = '\0';
    x->err.line = x->err.column = 0;
    x->stats = (qstats){0};
    x->clock_read = false;
    x->ticks = 0;
    x->nused = x->used_base = 0;
    x->bound = a->bound;
    x->nbound = a->nbound;
    x->interrupt = g ? &graph_catalog(g)->interrupt : NULL;
    x->cancel = a->cancel ? &a->cancel->requested : NULL;
    int rc = pipeline_resume(x, r->pipe);
    if (rc == 0) {
        rc = pipeline_pull(x, r->pipe, &r->buf, LAZY_BATCH);
        r->pipe_done = rc == 1;
    }
    *st = rc < 0 ? result_fail(g, r, x->err.category, x->err.detail, x->err.message,
                               x->err.line, x->err.column)
                 : STRATA_OK;
    return true;
}

void result_release(strata_result *r)
{
    mem_ctx *m = mem_scratch();
    lazy_free(r);
    for (size_t i = 0; i < r->nrows * r->ncols; i++)
        value_release(&r->cells[i]);
    if (r->cells)
        mem_free(m, r->cells);
    r->cells = NULL;
    r->nrows = 0;
    if (r->colblock && r->colblock_m)
        mem_free(r->colblock_m, r->colblock);
    r->colblock = NULL;
    result_view_release(r);
    cancel_release(&r->cancel);
    exec_arena_free(&r->arena, m);
}

/* strata_query and strata_view_query: exactly one of g and v is set;
   cancel may be NULL. */
static strata_status query_run(strata_graph *g, strata_view *v, const char *text,
                               const strata_value *params, strata_cancel *cancel,
                               strata_result **out)
{
    /* one block: everything but the arena's room is cleared */
    strata_result *r = mem_alloc(mem_scratch(), sizeof *r);
    if (!r)
        return g ? graph_fail(g, STRATA_ENOMEM, "out of memory starting a query")
                 : STRATA_ENOMEM;
    memset(r, 0, offsetof(strata_result, arena_room));
    exec_arena_init(&r->arena, r->arena_room, sizeof r->arena_room);
    atomic_init(&r->interrupted, false);
    *out = r;
    run_args a = {.g = g, .v = v, .text = text, .params = params, .cancel = cancel};
    return result_run(r, &a);
}

strata_status strata_query(strata_graph *g, const char *text, const strata_value *params,
                           strata_result **out)
{
    if (!out)
        return g ? graph_fail(g, STRATA_EINVAL, "strata_query: out is NULL") : STRATA_EINVAL;
    *out = NULL;
    if (!g || !text)
        return g ? graph_fail(g, STRATA_EINVAL, "strata_query: text is NULL") : STRATA_EINVAL;
    return query_run(g, NULL, text, params, NULL, out);
}

strata_status strata_view_query(strata_view *v, const char *text, const strata_value *params,
                                strata_result **out)
{
    return strata_view_query_cancellable(v, text, params, NULL, out);
}

strata_status strata_view_query_cancellable(strata_view *v, const char *text,
                                            const strata_value *params, strata_cancel *cancel,
                                            strata_result **out)
{
    if (!out)
        return STRATA_EINVAL;
    *out = NULL;
    if (!v || !text)
        return STRATA_EINVAL;
    return query_run(NULL, v, text, params, cancel, out);
}

void strata_result_interrupt(strata_result *r)
{
    if (r)
        atomic_store(&r->interrupted, true);
}

/* The expression is checked alone, then run as a read-only RETURN on its
   own lines, so its positions are the statement's, one line down. */
strata_status strata_view_eval(strata_view *v, const char *text, const strata_value *params,
                               strata_result **out)
{
    if (!out)
        return STRATA_EINVAL;
    *out = NULL;
    if (!v || !text)
        return STRATA_EINVAL;
    mem_ctx *m = mem_scratch();
    cypher_ast *ast = NULL;
    cypher_error perr;
    size_t len = strlen(text);
    if (cypher_parse_expression(text, len, m, &ast, &perr) != 0) {
        strata_result *r = mem_calloc(m, sizeof *r);
        if (!r)
            return STRATA_ENOMEM;
        *out = r;
        return result_fail(NULL, r, perr.category, perr.detail, perr.message, perr.line,
                           perr.column);
    }
    cypher_ast_free(&ast);
    static const char head[] = "RETURN\n", tail[] = "\nAS value";
    size_t cap = sizeof head + len + sizeof tail;
    char *q = mem_alloc(m, cap);
    if (!q)
        return STRATA_ENOMEM;
    snprintf(q, cap, "%s%s%s", head, text, tail);
    strata_status st = query_run(NULL, v, q, params, NULL, out);
    mem_free(m, q);
    if (*out && (*out)->failed && (*out)->err.line > 1)
        (*out)->err.line--;
    return st;
}

size_t strata_result_columns(const strata_result *r, const char *const **names)
{
    if (!r)
        return 0;
    if (names)
        *names = (const char *const *)r->cols;
    return r->ncols;
}

/* The next row of a result read as it goes: pulled in batches. */
static bool lazy_next(strata_result *r, const strata_value *const **row)
{
    if (r->buf_next == r->buf.nrows) {
        if (r->pipe_done || r->failed)
            return false;
        exec *x = &r->xs;
        rowset_clear(&r->buf);
        r->buf_next = 0;
        int rc = pipeline_pull(x, r->pipe, &r->buf, LAZY_BATCH);
        r->pipe_done = rc != 0;
        /* the rows made before the error are still read, then it shows */
        if (rc < 0)
            result_fail(NULL, r, x->err.category, x->err.detail, x->err.message, x->err.line,
                        x->err.column);
        if (r->buf.nrows == 0)
            return false;
    }
    const value *cells = rowset_row(&r->buf, r->buf_next++);
    for (size_t c = 0; c < r->ncols; c++)
        r->handles[c].v = cells[r->slots[c]];   /* borrowed */
    if (row)
        *row = (const strata_value *const *)r->row;
    return true;
}

bool strata_result_next(strata_result *r, const strata_value *const **row)
{
    if (r && r->pipe)
        return lazy_next(r, row);
    if (!r || r->next >= r->nrows)
        return false;
    for (size_t c = 0; c < r->ncols; c++)
        r->handles[c].v = r->cells[r->next * r->ncols + c];   /* borrowed */
    r->next++;
    if (row)
        *row = (const strata_value *const *)r->row;
    return true;
}

void strata_result_stats(const strata_result *r, strata_query_stats *out)
{
    if (r && out)
        *out = r->stats;
}

const strata_query_error *strata_result_error(const strata_result *r)
{
    return r && r->failed ? &r->err : NULL;
}

strata_view *strata_result_view(const strata_result *r) { return r ? r->view : NULL; }

void strata_result_free(strata_result **rp)
{
    if (!rp || !*rp)
        return;
    strata_result *r = *rp;
    *rp = NULL;
    if (r->stmt) {
        stmt_result_done(r);   /* the block is the statement's */
        return;
    }
    result_release(r);
    mem_free(mem_scratch(), r);
}
