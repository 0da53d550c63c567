/*
 * profile — EXPLAIN and PROFILE.
 *
 * EXPLAIN runs the statement over no input rows inside a statement that
 * is always rolled back, so every operator plans exactly as it would (the
 * start of each pattern is chosen from the indices and counts of the
 * state the query reads) and nothing is written.  PROFILE runs it for
 * real, writes included, and also counts each clause's output rows and
 * time.  Either returns the plan as rows, one per clause:
 *   step, clause (its text), operator, plan (the choices made)
 * and PROFILE adds rows and time_ms.
 */
#ifndef STRATA_QUERY_PROFILE_H
#define STRATA_QUERY_PROFILE_H

#include "query/exec.h"

/* A clause's plan text: a join of many steps, a hash join's counts after
   them, fit. */
#define PROFILE_PLAN_MAX 512

typedef struct profile_step {
    const cypher_ast_node *clause;
    const char *op;             /* static */
    char plan[PROFILE_PLAN_MAX];
    uint64_t rows;
    double ms;
} profile_step;

struct profile {
    const char *text;           /* the statement, for clause text */
    bool timed;                 /* PROFILE */
    profile_step *steps;
    size_t n, cap;
    char pending[PROFILE_PLAN_MAX];   /* what the running operator chose */
    double t0;
};

void profile_clause_begin(exec *x);
/* Records clause cl with its output rows. */
int profile_clause_end(exec *x, const cypher_ast_node *cl, uint64_t rows);
/* Step i ran in a pipeline: its rows, and (for the pipeline's first
   step, started >= 0) the whole pipeline's time since started; the
   others' time is counted there. */
void profile_pipelined(exec *x, size_t i, uint64_t rows, double started);
double profile_now(void);
/* Notes the start the running MATCH chose for a pattern part. */
struct start_plan;
void profile_note_start(exec *x, const struct start_plan *p);
/* Adds text to what the running operator chose (", " after the rest). */
void profile_note(exec *x, const char *text);
/* The plan as columns and rows for the result (new; the caller frees). */
int profile_rows(exec *x, scope *cols, rowset *rows);
void profile_free(exec *x);

#endif
