/*
 * parallel — reading on several threads: the workers' threads and
 * executors.  A worker reads the version the statement reads, immutable
 * while it runs, with its own copy of the executor; see the join's
 * parallel count (op_join.c).
 */
#ifndef STRATA_QUERY_PARALLEL_H
#define STRATA_QUERY_PARALLEL_H

#include "query/exec.h"

/* Below this many estimated start candidates a read stays on one thread. */
#define PARALLEL_MIN 4096
/* Start candidates a worker takes at a time. */
#define PARALLEL_MORSEL 256

/* The threads a read may use: the graph's setting (0: one per
   processor), at most 64, 1 inside a worker. */
unsigned parallel_threads(exec *x);

/* A worker's executor: x's settings, the version it reads, parameters
   and statement clock (read them before: exec_read_clock), with its own
   errors, scratch lists and caches and no arena; parallel_exec_fini
   releases what it gathered. */
void parallel_exec_init(exec *w, exec *x);
void parallel_exec_fini(exec *w);

#endif
