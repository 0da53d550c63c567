/* branches — the program's named graphs: :branch, :branches, :use, :diff
   and :discard (docs/BRANCHES.md).  The graph the program opened is
   "main"; each :branch makes a writable branch of the graph in use
   (strata_branch) and switches to it. */
#ifndef STRATA_CLI_BRANCHES_H
#define STRATA_CLI_BRANCHES_H

#include "cli/session.h"

typedef struct named_graph {
    char *name;
    char *from;          /* the graph it was branched from; NULL for main */
    strata_graph *g;     /* NULL for the entry in use (it is the session's) */
    char *path;          /* likewise: the file :save writes by default */
} named_graph;

void cmd_branch(session *s, char *arg);
void cmd_branches(session *s, char *arg);
void cmd_use(session *s, char *arg);
void cmd_diff(session *s, char *arg);
void cmd_discard(session *s, char *arg);

/* Frees every graph but the one in use (the session frees that). */
void branches_free(session *s);

#endif
