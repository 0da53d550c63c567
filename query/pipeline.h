/*
 * pipeline — streaming clauses.
 *
 * MATCH, UNWIND, WITH and RETURN form a pipeline: each row a stage
 * produces is pushed straight into the next stage, and only the last
 * stage's rows are kept.  Most stages handle one row at a time; a
 * projection that aggregates or sorts holds what it needs (a group per
 * key, a bounded heap for ORDER BY ... LIMIT) and produces its rows when
 * its input ends: the pipeline then calls each stage's finish, in order,
 * so what one stage produces at its end flows through the stages after
 * it.  A finish produces a batch of rows at a time (EXEC_MORE while it
 * holds more), so a result read in steps takes a large aggregation's or
 * sort's rows a batch at a time too, never all at once beside them.  A LIMIT in the pipeline ends it early: the stage that has its
 * rows returns EXEC_STOP, and every stage before it stops producing (the
 * stages after it still finish).  Nothing in a pipeline writes (an
 * updating clause ends the pipeline and runs over the materialised rows,
 * as exec.h describes), so stopping early can never skip an effect.
 * `MATCH (n) RETURN n LIMIT 10` reads ten nodes, not the graph.
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
#define EXEC_MORE 2     /* from finish: rows remain, call it again */
/* The rows a finish produces per call (about: a stage after it may
   multiply them). */
#define STAGE_FINISH_BATCH 256

typedef struct stage stage;
struct stage {
    const cypher_ast_node *clause;
    int (*row)(exec *x, stage *s, const value *row);  /* 0, EXEC_STOP or -1 */
    /* The row n times at once, for a stage that only counts its rows (a
       projection whose aggregates are all plain counts); else NULL. */
    int (*row_times)(exec *x, stage *s, const value *row, uint64_t n);
    /* Stepping, for a first stage that offers it: begin takes an input row
       (borrowed until the row is done), each step pushes what one unit
       yields; *done once the row has no more. */
    int (*begin)(exec *x, stage *s, const value *row);
    int (*step)(exec *x, stage *s, bool *done);
    /* The input has ended (or a later stage stopped it): produce what is
       held, up to STAGE_FINISH_BATCH rows a call; 0 when all is produced
       (or a later stage wants no more), EXEC_MORE, or -1.  NULL for a
       stage that holds nothing. */
    int (*finish)(exec *x, stage *s);
    void (*close)(exec *x, stage *s);
    /* Parallel reading (parallel.h), for a first stage that offers it:
       scan gives the start of its first pattern (NULL unless it scans
       many candidates the same way for any input row), begin_scan begins
       an input row as begin does but hands its start candidates over (*it,
       NULL when there are none), and from walks from one of them. */
    const struct start_plan *(*scan)(const stage *s);
    int (*begin_scan)(exec *x, stage *s, const value *row, strata_node_iter **it);
    int (*from)(exec *x, stage *s, uint64_t id);
    /* Running an opened pipeline again (a prepared statement, strata.h):
       park lets go of what the last run left (an input row in progress,
       its iterator, counters) so the stage is as just opened; NULL for a
       stage that cannot run again (it would have to be opened afresh).
       resume redoes, before the next run, what depends on the state read
       (MATCH plans its starts again); NULL when nothing does. */
    void (*park)(exec *x, stage *s);
    int (*resume)(exec *x, stage *s);
    void *state;
    stage *next;            /* NULL: rows go to parent, else to out */
    stage *parent;          /* a step inside a clause's stage (a projection's
                               grouping, DISTINCT, sort...): its last step's
                               rows leave through the clause's stage */
    rowset *out;
    uint64_t rows;          /* rows this stage produced (PROFILE) */
    bool wants_none;        /* LIMIT 0: the pipeline need not run */
    bool absorbed;          /* a MATCH the join of the stage before runs */
};

/* Pushes row (borrowed) to the stage after s, or out through s's parent,
   or into s->out. */
int stage_emit(exec *x, stage *s, const value *row);

/* stage_emit n times: at once where the next stage takes a count. */
int stage_emit_times(exec *x, stage *s, const value *row, uint64_t n);

/* Whether clause can run as a stage. */
bool stage_streams(const cypher_ast_node *clause);

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
/* Whether every stage of p can run again (its park hook) and nothing runs
   on other threads: what a prepared statement keeps between runs. */
bool pipeline_parkable(const pipeline *p);
/* After a run (read to its end or not): every stage parked, the input
   taken again from its first row.  p must be parkable. */
void pipeline_park(exec *x, pipeline *p);
/* Before the next run of a parked pipeline: each stage's resume, on the
   state x now reads.  0 or -1 (the error in x). */
int pipeline_resume(exec *x, pipeline *p);
/* Stage i of an open pipeline (parallel.c reads a worker's copy). */
stage *pipeline_stage(pipeline *p, size_t i);

#endif
