/* profile — EXPLAIN and PROFILE rows (see profile.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "query/plan_start.h"
#include "query/profile.h"

double profile_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void profile_pipelined(exec *x, size_t i, uint64_t rows, double started)
{
    profile_step *st = &x->prof->steps[i];
    st->rows = rows;
    st->ms = started >= 0 ? profile_now() - started : 0;
}

/* Appends text to the running clause's plan after sep (none when it is
   the first); a plan past PROFILE_PLAN_MAX ends in "..." rather than
   stopping mid-word with no sign of it. */
static void append_plan(profile *pr, const char *sep, const char *text)
{
    size_t used = strlen(pr->pending), room = sizeof pr->pending - used;
    int n = snprintf(pr->pending + used, room, "%s%s", used ? sep : "", text);
    if (n >= 0 && (size_t)n >= room)
        memcpy(pr->pending + sizeof pr->pending - 4, "...", 4);
}

void profile_note_start(exec *x, const struct start_plan *p)
{
    char d[200];
    start_describe(x, p, d, sizeof d);
    append_plan(x->prof, "; ", d);
}

void profile_note(exec *x, const char *text)
{
    append_plan(x->prof, ", ", text);
}

void profile_clause_begin(exec *x)
{
    x->prof->pending[0] = '\0';
    x->prof->t0 = profile_now();
}

/* A projection's steps (project.h): the operator is HashAggregate when
   it groups, else Projection; the plan lists the steps after it. */
static const char *projection_op(const cypher_ast_node *cl, char *extra, size_t size)
{
    bool agg = false;
    for (size_t i = 0; i < cl->u.projection.items.count && !agg; i++)
        agg = expr_has_aggregate(cl->u.projection.items.items[i]);
    bool sorted = cl->u.projection.order.count > 0;
    snprintf(extra, size, "%s%s%s%s%s", cl->u.projection.distinct ? "Distinct " : "",
             sorted && cl->u.projection.limit ? "Top " : sorted ? "Sort " : "",
             cl->u.projection.skip ? "Skip " : "", cl->u.projection.limit ? "Limit " : "",
             cl->u.projection.where ? "Filter " : "");
    return agg ? "HashAggregate" : "Projection";
}

static const char *clause_op(const cypher_ast_node *cl, char *extra, size_t size)
{
    extra[0] = '\0';
    switch (cl->kind) {
    case CYPHER_AST_MATCH: return cl->u.match.optional ? "OptionalMatch" : "Match";
    case CYPHER_AST_UNWIND: return "Unwind";
    case CYPHER_AST_WITH: case CYPHER_AST_RETURN: return projection_op(cl, extra, size);
    case CYPHER_AST_CREATE: return "Create";
    case CYPHER_AST_MERGE: return "Merge";
    case CYPHER_AST_SET: return "SetProperties";
    case CYPHER_AST_REMOVE: return "Remove";
    case CYPHER_AST_DELETE: return cl->u.delete_.detach ? "DetachDelete" : "Delete";
    case CYPHER_AST_CALL: return "ProcedureCall";
    case CYPHER_AST_LOAD_CSV: return "LoadCSV";
    default: return cypher_ast_kind_name(cl->kind);
    }
}

int profile_clause_end(exec *x, const cypher_ast_node *cl, uint64_t rows)
{
    profile *pr = x->prof;
    if (pr->n == pr->cap) {
        size_t cap = pr->cap ? pr->cap * 2 : 8;
        profile_step *s = mem_realloc(x->m, pr->steps, cap * sizeof *s);
        if (!s)
            return exec_oom(x);
        pr->steps = s;
        pr->cap = cap;
    }
    profile_step *st = &pr->steps[pr->n++];
    char extra[80];
    st->clause = cl;
    st->op = clause_op(cl, extra, sizeof extra);
    snprintf(st->plan, sizeof st->plan, "%s%s", extra, pr->pending);
    size_t len = strlen(st->plan);
    if (len && st->plan[len - 1] == ' ')
        st->plan[len - 1] = '\0';
    st->rows = rows;
    st->ms = profile_now() - pr->t0;
    return 0;
}

/* The clause's text: from its first byte to the next clause's (or the
   statement's end), whitespace collapsed, at most 120 bytes. */
static int clause_text(exec *x, const profile_step *st, const profile_step *next, value *out)
{
    const char *t = x->prof->text;
    size_t from = st->clause->offset;
    size_t to = next && next->clause->offset > from ? next->clause->offset : strlen(t);
    char buf[124];
    size_t n = 0;
    bool space = false;
    for (size_t i = from; i < to && n < 120; i++) {
        char c = t[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space = n > 0;
            continue;
        }
        if (space)
            buf[n++] = ' ';
        space = false;
        if (n < 120)
            buf[n++] = c;
    }
    while (n > 0 && buf[n - 1] == ';')
        n--;
    if (n == 120)
        memcpy(buf + 117, "...", 3);
    return make_string(x, buf, n, out);
}

int profile_rows(exec *x, scope *cols, rowset *rows)
{
    profile *pr = x->prof;
    static const char *const names[] = {"step", "clause", "operator", "plan", "rows", "time_ms"};
    size_t ncols = pr->timed ? 6 : 4;
    for (size_t c = 0; c < ncols; c++) {
        binding b = {names[c], strlen(names[c]), c};   /* column c of each row */
        if (scope_push(x, cols, &b) != 0)
            return -1;
    }
    rowset_init(rows, ncols);
    for (size_t i = 0; i < pr->n; i++) {
        const profile_step *st = &pr->steps[i];
        value row[6] = {value_int((int64_t)i + 1)};
        for (size_t c = 1; c < 6; c++)
            row[c] = value_null();
        int rc = clause_text(x, st, i + 1 < pr->n ? &pr->steps[i + 1] : NULL, &row[1]);
        if (rc == 0)
            rc = make_string(x, st->op, strlen(st->op), &row[2]);
        if (rc == 0)
            rc = make_string(x, st->plan, strlen(st->plan), &row[3]);
        row[4] = value_int((int64_t)st->rows);
        row[5] = value_float(st->ms);
        if (rc == 0)
            rc = rowset_push(x, rows, row);
        if (rc != 0) {
            for (size_t c = 0; c < 6; c++)
                value_release(&row[c]);
            return -1;
        }
    }
    return 0;
}

void profile_free(exec *x)
{
    if (x->prof && x->prof->steps)
        mem_free(x->m, x->prof->steps);
}
