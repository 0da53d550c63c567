/*
 * parallel — reading a pipeline's first scan on several threads.
 *
 * A read-only statement whose pipeline starts with a MATCH that scans
 * many candidates (a label scan, every node, an index seek or range: an
 * estimate of PARALLEL_MIN or more), does per-row work after it (further
 * MATCH and OPTIONAL MATCH, UNWIND, WITH that only projects and filters)
 * and then reaches a step that holds rows until its input ends — a
 * grouping aggregation, a DISTINCT, or an ORDER BY ... LIMIT (Top) — is
 * run as follows (parallel_run):
 *
 *   1. The start candidates are read into a list and cut into morsels of
 *      PARALLEL_MORSEL, numbered in scan order.
 *   2. Each worker (the caller's thread among them) owns a copy of the
 *      executor (parallel_exec_init) and of the pipeline up to that step,
 *      opened again from the same clauses, so its plans and slots are the
 *      ones the statement's own pipeline has.  It takes the next morsel,
 *      walks its candidates through its copy, and hands the step's state
 *      over as the morsel's partial (project.h, step_partial_take).
 *   3. The caller's thread merges the partials into the statement's own
 *      step strictly in morsel order (step_partial_merge), between its
 *      own morsels and after the others have ended; the rest of the
 *      pipeline then finishes as it would have on one thread.
 *   A grouping aggregation without DISTINCT calls skips the partials per
 *   morsel: each worker keeps one table across its morsels (a table per
 *   morsel, merged group by group, was most of the one-thread path's
 *   cost), and the tables are gathered at the end in order of each
 *   group's first row (aggregate_partial_gather).  So does a DISTINCT
 *   that no LIMIT after it can cut short: each worker keeps the first row
 *   of each set among its rows, noted with its morsel, and the workers'
 *   rows go through the statement's DISTINCT merged in morsel order
 *   (distinct_partial_gather).  Where the states cannot tell what the
 *   rows in order give — a morsel failed, or an integer sum's totals
 *   leave the int64 range — the scan is run again with partials per
 *   morsel.
 *
 * Invariants:
 *   1. Whether a pipeline runs this way depends on the plan and the
 *      version read, never on the thread count: with one thread the
 *      caller runs every morsel itself and merges the same partials in
 *      the same order.  So every result — groups in order of first
 *      appearance, collect() in scan order, floating-point sums,
 *      averages and deviations (exact sums rounded once, xsum.h, so
 *      the same in any order), DISTINCT's first rows, Top's ties in
 *      input order — is bit for bit the one-thread result.  A pipeline that does not qualify (fewer
 *      candidates expected, any other shape) runs on one thread exactly as
 *      before.
 *   2. Errors follow the order of morsels: a worker that fails hands over
 *      what its morsel built before the failure, and morsels after the
 *      earliest failing one are not started, those before it all run; the
 *      merge then reports the first error in morsel order — an integer
 *      overflow found while merging a morsel's sums before the error of a
 *      later row — which is the error one thread reports.
 *   3. Workers read the version the statement reads, immutable while the
 *      pipeline runs (nothing in a pipeline writes), and share nothing
 *      mutable but the morsel counter, the earliest failing morsel and
 *      each morsel's slot (published with release, read with acquire).
 *   4. An interrupt (any of the executor's flags) stops every worker: each
 *      reads the flags itself.
 */
#ifndef STRATA_QUERY_PARALLEL_H
#define STRATA_QUERY_PARALLEL_H

#include "query/pipeline.h"

/* Below this many estimated start candidates a read stays on one thread
   (the join's parallel count uses the same bound). */
#define PARALLEL_MIN 4096
/* Start candidates in a morsel: small enough to share out the work
   evenly, large enough that a morsel's partial is worth its merge. */
#define PARALLEL_MORSEL 256
/* Morsels taken but not yet merged, at most, per thread: a worker that
   runs ahead of the merge waits, so the partials held stay bounded
   whatever the input (the head morsel's worker never waits).  It also
   bounds what a LIMIT that ends the run early lets the scan read: up to
   threads * PARALLEL_AHEAD morsels, when the head morsel's worker is the
   slow one. */
#define PARALLEL_AHEAD 4

/* The threads a read may use: the graph's setting (0: one per
   processor), at most 64, 1 inside a worker. */
unsigned parallel_threads(exec *x);

/* A worker's executor: x's settings, the version it reads, parameters
   and statement clock (read them before: exec_read_clock), with its own
   errors, scratch lists and caches and no arena; parallel_exec_fini
   releases what it gathered. */
void parallel_exec_init(exec *w, exec *x);
void parallel_exec_fini(exec *w);

/* What pipeline_open keeps to decide and to open a worker's copy: the
   scope and width before the pipeline opened. */
typedef struct parallel_plan parallel_plan;
typedef struct parallel_before {
    scope sc;
    size_t width;
    const cypher_ast_node *run_next;
    bool taken;
} parallel_before;

/* Before the stages open: whether the pipeline might qualify (cheap), and
   then the state to keep (*b; 0 or -1 when out of memory). */
bool parallel_may_apply(const exec *x, const cypher_ast_node *const *clauses, size_t n,
                        const rowset *in);
int parallel_before_take(exec *x, const scope *sc, parallel_before *b);
void parallel_before_free(parallel_before *b);

/* Once the stages st[0..n) are open: the plan when the pipeline
   qualifies (taking b over), else NULL (b freed); -1 when out of memory.
   EXPLAIN and PROFILE note it on the first clause. */
int parallel_plan_make(exec *x, const cypher_ast_node *const *clauses, size_t n, stage *st,
                       parallel_before *b, size_t first_step, parallel_plan **out);
void parallel_plan_free(exec *x, parallel_plan **pp);

/* Runs the input row (width cells) through the pipeline's stages st as
   the plan says, leaving the
   merged state in the statement's own holding step; 0, EXEC_STOP (a
   later stage wants no more) or -1. */
int parallel_run(exec *x, parallel_plan *pp, stage *st, const value *row, size_t width);

#endif
