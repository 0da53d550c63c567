/* proc_algo — the algo.* procedures (graph algorithms, algo/) for CALL. */
#ifndef STRATA_QUERY_PROC_ALGO_H
#define STRATA_QUERY_PROC_ALGO_H

#include <stdbool.h>

#include "query/exec.h"

/* Whether name is an algo.* procedure (algo.NAME or algo.NAME.write). */
bool proc_algo_is(const cypher_ast_str *name);
/* Whether name is an algo.*.write procedure: the query writes. */
bool proc_algo_writes(const cypher_ast_str *name);
/* As call_check and op_call, for an algo.* procedure. */
int proc_algo_check(exec *x, const cypher_ast_node *clause);
int proc_algo_op(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out,
                 scope *cols);
/* Calls emit with each algo.* procedure's name, signature and a one-line
   description (db.procedures). */
int proc_algo_list(exec *x, int (*emit)(exec *x, const char *name, const char *signature,
                                        const char *description, void *ctx),
                   void *ctx);

#endif
