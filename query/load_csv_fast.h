/*
 * load_csv_fast — LOAD CSV's bulk shapes run without rows.
 *
 * Two statements are how files are loaded, and for them the general path
 * (a map per record, rows, a planned pipeline per batch, an iterator per
 * seek) is machinery, not work:
 *
 *   LOAD CSV WITH HEADERS FROM s AS row [FIELDTERMINATOR t]
 *   CREATE (n:L1:L2 {k1: c1, k2: c2, ...})
 *
 *   LOAD CSV WITH HEADERS FROM s AS row [FIELDTERMINATOR t]
 *   MATCH (a:L {k: c}), (b:M {j: c'})
 *   CREATE (a)-[:T]->(b)          (or <-, or either variable at either end)
 *
 * where the LOAD CSV is the query's first clause (nothing is bound before
 * it), every c is `row['name']`, `row.name`, or toInteger() of one, and
 * in the second an index of one key covers (L, k) and (M, j).  Such a
 * statement reads each record's named fields by their position in the
 * header (found once per file), converts them as toInteger does, and
 * creates the node, or seeks the two indices and creates the
 * relationships, directly.
 *
 * It does what the general path does, in the same order, with the same
 * checks and messages: a batch of records is read and checked (field
 * count, UTF-8) before any of it is written, as the general path reads a
 * batch before its clauses run; properties are set in the order of the
 * map's sorted keys; a MATCH finding several nodes creates one
 * relationship per pair, the first node's candidates outermost, each in
 * the index's (key, id) order; tokens are interned at the first write.
 * tests/test_load_csv_fast.c compares it with the general path.
 */
#ifndef STRATA_QUERY_LOAD_CSV_FAST_H
#define STRATA_QUERY_LOAD_CSV_FAST_H

#include "query/csv.h"
#include "query/exec.h"

typedef struct load_fast load_fast;

/* The plan for the clauses after q's LOAD CSV at i when they have one of
   the shapes above (*out NULL otherwise, which is no error), writing
   every batch records; -1 when out of memory. */
int load_fast_plan(exec *x, const cypher_ast_node *q, size_t i, size_t batch,
                   load_fast **out);
void load_fast_free(exec *x, load_fast **f);

/* A new file: finds each named column in its header keys[0..n) (absent
   ones read as null). */
void load_fast_columns(load_fast *f, const value *keys, size_t n);
/* Takes the columns of the record r just read (checked by the caller),
   converted; the caller applies every batch records. */
int load_fast_take(exec *x, load_fast *f, const csv_reader *r);
/* Writes what the records taken ask for, then forgets them. */
int load_fast_apply(exec *x, load_fast *f);
/* How many records are held. */
size_t load_fast_held(const load_fast *f);

#ifdef STRATA_TESTING
/* When set, no plan is made: the general path runs (the tests' oracle). */
extern bool load_csv_fast_disabled;
/* Statements the fast path has run. */
extern uint64_t load_csv_fast_runs;
#endif

#endif
