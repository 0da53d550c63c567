/* pipeline — running a run of streaming clauses as one pass (pipeline.h). */
#include "query/pipeline.h"
#include "query/profile.h"

int stage_emit(exec *x, stage *s, const value *row)
{
    s->rows++;
    if (s->next)
        return s->next->row(x, s->next, row);
    /* the last stage keeps its rows: copies of the cells it may own */
    size_t w = s->out->width;
    value copy[w ? w : 1];
    for (size_t i = 0; i < w; i++)
        copy[i] = value_retain(row[i]);
    return rowset_push(x, s->out, copy);
}

bool stage_streams(const cypher_ast_node *clause)
{
    switch (clause->kind) {
    case CYPHER_AST_MATCH: case CYPHER_AST_UNWIND: return true;
    case CYPHER_AST_WITH: case CYPHER_AST_RETURN: return project_streams(clause);
    default: return false;
    }
}

static int stage_open(exec *x, const cypher_ast_node *cl, scope *sc, stage *s, scope *cols)
{
    s->clause = cl;
    switch (cl->kind) {
    case CYPHER_AST_MATCH: return match_open(x, cl, sc, s);
    case CYPHER_AST_UNWIND: return unwind_open(x, cl, sc, s);
    default: return project_open(x, cl, sc, s, cols);
    }
}

int pipeline_run(exec *x, const cypher_ast_node *const *clauses, size_t n, scope *sc,
                 rowset *in, rowset *out, scope *result_cols)
{
    rowset_init(out, x->width);   /* empty whatever happens below */
    stage *st = mem_calloc(x->m, n * sizeof *st);
    if (!st)
        return exec_oom(x);
    int rc = 0;
    size_t opened = 0, first_step = x->prof ? x->prof->n : 0;
    double started = profile_now();
    for (; opened < n && rc == 0; opened++) {
        bool last = opened + 1 == n;
        if (x->prof)
            profile_clause_begin(x);
        rc = stage_open(x, clauses[opened], sc, &st[opened], last ? result_cols : NULL);
        if (x->prof && rc == 0)
            rc = profile_clause_end(x, clauses[opened], 0);   /* rows once run */
    }
    /* every stage's rows are x->width wide: the width once all are open */
    rowset_init(out, x->width);
    for (size_t i = 0; i < n; i++) {
        st[i].next = i + 1 < n ? &st[i + 1] : NULL;
        st[i].out = out;
    }
    bool wants_none = false;
    for (size_t i = 0; i < n && rc == 0; i++)
        wants_none |= st[i].wants_none;
    for (size_t r = 0; r < in->nrows && rc == 0 && !wants_none; r++) {
        const value *row = rowset_row(in, r);
        value wide[x->width ? x->width : 1];
        for (size_t i = 0; i < x->width; i++)
            wide[i] = i < in->width ? row[i] : value_null();   /* borrowed */
        rc = st[0].row(x, &st[0], wide);
    }
    if (rc == EXEC_STOP)
        rc = 0;
    if (x->prof && rc == 0)
        for (size_t i = 0; i < n; i++)
            profile_pipelined(x, first_step + i, st[i].rows, i == 0 ? started : -1);
    for (size_t i = 0; i < opened; i++)
        if (st[i].close)
            st[i].close(x, &st[i]);
    mem_free(x->m, st, n * sizeof *st);
    return rc;
}
