/* session — the state of one run of the strata program, shared by batch
   mode, the REPL and the client commands: the graph, the output settings,
   the parameters set with :param, and whether anything failed. */
#ifndef STRATA_CLI_SESSION_H
#define STRATA_CLI_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/output.h"
#include "strata.h"

typedef struct session {
    strata_graph *g;    /* owned: :open replaces it */
    char *path;         /* the file :save writes by default (owned), or NULL */
    out_format fmt;
    bool bail;          /* stop at the first failure */
    bool failed;        /* a statement or command failed: exit status 1 */
    bool quit;          /* :quit, or --bail after a failure */
    bool quiet;         /* --init: report errors, print no results */
    bool timing;        /* the table footer shows the time taken */
    size_t max_rows;    /* table rows shown before the rest are counted; 0: all */
    size_t width;       /* terminal width for tables; 0: unlimited */
    unsigned threads;   /* --threads: query threads of every graph opened */
    char **pnames;      /* :param names (owned) */
    strata_value **pvals;
    size_t nparams;
    /* The named graphs of :branch (cli/branches.h); empty until the first
       branch, when the graph in use becomes "main".  The entry in_use has
       its graph and path in g and path above. */
    struct named_graph *graphs;
    size_t ngraphs, in_use;
} session;

/* A session over g, which it takes over (session_free frees it). */
void session_init(session *s, strata_graph *g, out_format fmt);
void session_free(session *s);

/* A new map of the parameters set so far (NULL when out of memory). */
strata_value *session_params(session *s);
/* Sets (or replaces) parameter name; takes ownership of val.  -1 when out
   of memory (val is freed). */
int session_param_set(session *s, const char *name, strata_value *val);

/* A new view of what the writer sees, an open transaction's writes
   included (NULL on failure, with the message on the graph).  Release it
   soon: while it is held the next write forks. */
strata_view *session_view(session *s);

/* Runs one Cypher statement and prints its result or its error. */
void session_run(session *s, const char *text);
/* Runs text, a read-only statement, on the view v with params, and prints
   its result or its error like session_run: for client commands whose
   answer is rows (text never contains user input). */
void session_run_view(session *s, strata_view *v, const char *text,
                      const strata_value *params);
/* Reports a failed client command (an ArgumentError at 1:1 in jsonl). */
void session_error(session *s, const char *message);
/* The same with another category (IOError, OutOfMemory, ...). */
void session_fail(session *s, const char *code, const char *message);
/* The same at a line and column of the input. */
void session_fail_at(session *s, const char *code, const char *message, unsigned line,
                     unsigned column);
/* The end of the run: a transaction still open is rolled back, and said so
   on standard error (a failure: its writes are lost). */
void session_finish(session *s);

#endif
