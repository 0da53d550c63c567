/*
 * result — a statement's result (strata_result) and running a statement
 * into one: shared by strata_query (query.c) and prepared statements
 * (prepared.c), whose one result block serves every run.
 *
 * A result block lives in one of three states:
 *   clear   — as result_clear leaves it: nothing held;
 *   running — handed to the caller by result_run or result_resume: it
 *             holds a view, and a read-only statement's opened pipeline
 *             and executor;
 *   parked  — a prepared statement's run is over (result_park): the view
 *             and the rows are let go, the opened pipeline, its executor
 *             and its arena are kept for result_resume.
 * result_release takes running or parked back to what clear holds (the
 * block itself stays).
 */
#ifndef STRATA_QUERY_RESULT_H
#define STRATA_QUERY_RESULT_H

#include <stdalign.h>

#include "query/exec.h"
#include "query/parser.h"
#include "query/pipeline.h"
#include "query/plan_cache.h"

/* The first chunk of a statement's arena, inside its result: what a
   cached point lookup takes (pipeline, MATCH and RETURN stages, plans,
   scopes, rows: 3.5 KB measured) with room to spare; a bigger statement
   takes chunks from the allocator after it. */
#define QUERY_ARENA_ROOM 6144

struct strata_result {
    size_t ncols;
    char *colblock;             /* cols, handles and row in one block */
    mem_ctx *colblock_m;        /* where it came from; NULL: an arena's
                                   (the statement's, which outlives it) */
    char **cols;
    size_t nrows, next;
    value *cells;               /* nrows * ncols, owned */
    strata_value *handles;      /* ncols handles for the current row */
    const strata_value **row;   /* pointers to them */
    strata_query_stats stats;
    bool failed;
    strata_query_error err;
    strata_view *view;          /* NULL or &own_view */
    strata_view own_view;       /* the view the result holds, in place */
    /* A read-only statement computed as it is read (pipeline.h): its
       executor, the final pipeline, the rows pulled and not yet read, the
       slot of each column in them, and what the executor borrows. */
    pipeline *pipe;
    bool pipe_done;
    rowset buf;
    size_t buf_next;
    size_t *slots;
    cached_plan *plan;
    value params;
    /* strata_result_interrupt's flag, and the strata_cancel the query
       watches (a reference, or NULL): the executor reads both. */
    atomic_bool interrupted;
    strata_cancel *cancel;
    exec_arena arena;           /* the statement's (exec.h) */
    /* The prepared statement whose result this is (prepared.c), or NULL:
       strata_result_free then ends the run and keeps the block. */
    strata_stmt *stmt;
    /* Not cleared when a result is made: the arena's first chunk; the
       executor, set whole before anything reads it; the error's text,
       written when it fails (failed says so). */
    _Alignas(max_align_t) char arena_room[QUERY_ARENA_ROOM];
    exec xs;                    /* the statement's executor (no allocation) */
    char code[40], detail[48], message[256];
};

/* What one run is given: exactly one of g and v; plan borrowed (NULL:
   text is looked up in the plan cache, parsed and checked when missing);
   params a map or NULL, or the prepared statement's bound parameters;
   cancel may be NULL. */
typedef struct run_args {
    strata_graph *g;
    strata_view *v;
    const char *text;
    cached_plan *plan;
    const strata_value *params;
    const bound_param *bound;
    size_t nbound;
    strata_cancel *cancel;
} run_args;

/* The block cleared for a run (its stmt kept). */
void result_clear(strata_result *r);
/* Runs a's statement into r (clear); the status strata_query gives. */
strata_status result_run(strata_result *r, const run_args *a);
/* Whether r's run is over with an opened pipeline that can run again. */
bool result_parkable(const strata_result *r);
void result_park(strata_result *r);
/* Runs a parked r again with a (whose plan is the one r ran): false when
   it cannot run lazily now (inside an open statement on a.g), r then
   untouched; else true, *st the status. */
bool result_resume(strata_result *r, const run_args *a, strata_status *st);
/* Lets go of everything r holds: it is then as result_clear left it. */
void result_release(strata_result *r);

/* The checked tree for text (len bytes): from the plan cache, or parsed,
   checked and cached.  NULL on error: in x (semantic, out of memory) or
   in *perr (syntax) when x has none. */
cached_plan *query_checked_plan(exec *x, const char *text, size_t len, cypher_error *perr);
/* The status and messages of a failed run, as strata_query reports it
   (on g too when g is set). */
strata_status result_fail(strata_graph *g, strata_result *r, const char *code,
                          const char *detail, const char *message, uint32_t line,
                          uint32_t column);

/* strata_result_free of a prepared statement's result (prepared.c). */
void stmt_result_done(strata_result *r);

#endif
