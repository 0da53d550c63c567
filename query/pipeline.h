/*
 * pipeline — streaming clauses.
 *
 * MATCH, UNWIND and projections without aggregation, DISTINCT or ORDER BY
 * handle one row at a time, so a run of them forms a pipeline: each row a
 * stage produces is pushed straight into the next stage, and only the
 * last stage's rows are kept.  A LIMIT in the pipeline ends it early: the
 * stage that has its rows returns EXEC_STOP, and every stage before it
 * stops producing.  Nothing upstream of a LIMIT in a pipeline writes (an
 * updating clause, aggregation or sort ends the pipeline and runs over
 * the materialised rows, as exec.h describes), so stopping early can
 * never skip an effect.  `MATCH (n) RETURN n LIMIT 10` reads ten nodes,
 * not the graph.
 *
 * A stage is opened in clause order (declaring its variables and
 * planning, exactly as the clause would run alone), then rows flow, then
 * it is closed.  Rows are x->width values; a stage borrows the row pushed
 * into it.
 */
#ifndef STRATA_QUERY_PIPELINE_H
#define STRATA_QUERY_PIPELINE_H

#include "query/exec.h"

#define EXEC_STOP 1     /* returned up the pipeline: no more rows wanted */

typedef struct stage stage;
struct stage {
    const cypher_ast_node *clause;
    int (*row)(exec *x, stage *s, const value *row);  /* 0, EXEC_STOP or -1 */
    void (*close)(exec *x, stage *s);
    void *state;
    stage *next;            /* NULL: rows go to out */
    rowset *out;
    uint64_t rows;          /* rows this stage produced (PROFILE) */
    bool wants_none;        /* LIMIT 0: the pipeline need not run */
};

/* Pushes row (borrowed) to the stage after s, or into s->out. */
int stage_emit(exec *x, stage *s, const value *row);

/* Whether clause can run as a stage. */
bool stage_streams(const cypher_ast_node *clause);
bool project_streams(const cypher_ast_node *clause);   /* WITH / RETURN */

/* Opening: as the clause would run (declaring into sc); 0 or -1.
   result_cols: a RETURN's columns, for the last stage. */
int match_open(exec *x, const cypher_ast_node *clause, scope *sc, stage *s);
int unwind_open(exec *x, const cypher_ast_node *clause, scope *sc, stage *s);
int project_open(exec *x, const cypher_ast_node *clause, scope *sc, stage *s,
                 scope *result_cols);

/* Runs clauses[0..n) as a pipeline over in, into out (new). */
int pipeline_run(exec *x, const cypher_ast_node *const *clauses, size_t n, scope *sc,
                 rowset *in, rowset *out, scope *result_cols);

#endif
