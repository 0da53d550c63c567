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
 *
 * A pipeline can also run in steps (pipeline_pull), which is how a
 * read-only statement's result is computed as it is read: the first stage
 * takes its input one unit at a time — for MATCH one start node of its
 * first pattern, for UNWIND one element — and everything after it is
 * pushed through at once, so a step holds the rows one start node or one
 * element produces, never the whole result.
 */
#ifndef STRATA_QUERY_PIPELINE_H
#define STRATA_QUERY_PIPELINE_H

#include "query/exec.h"

#define EXEC_STOP 1     /* returned up the pipeline: no more rows wanted */

typedef struct stage stage;
struct stage {
    const cypher_ast_node *clause;
    int (*row)(exec *x, stage *s, const value *row);  /* 0, EXEC_STOP or -1 */
    /* Stepping, for a first stage that offers it: begin takes an input row
       (borrowed until the row is done), each step pushes what one unit
       yields; *done once the row has no more. */
    int (*begin)(exec *x, stage *s, const value *row);
    int (*step)(exec *x, stage *s, bool *done);
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

/* The same in steps.  pipeline_open takes in over (it is emptied) and
   opens the stages; NULL on failure (the error in x).  pipeline_pull
   appends rows to out (x->width wide) until it holds at least want more
   or the pipeline is finished: 1 finished, 0 more may come, -1 error. */
typedef struct pipeline pipeline;
pipeline *pipeline_open(exec *x, const cypher_ast_node *const *clauses, size_t n, scope *sc,
                        rowset *in, scope *result_cols);
int pipeline_pull(exec *x, pipeline *p, rowset *out, size_t want);
void pipeline_close(exec *x, pipeline **p);

#endif
