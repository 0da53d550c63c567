/* export — the graph, or the entities a query returns, as a file for
   other tools: Graphviz dot (FILE.dot) or GraphML for Gephi (FILE.graphml). */
#ifndef STRATA_CLI_EXPORT_H
#define STRATA_CLI_EXPORT_H

#include "cli/session.h"

/* Writes path in the format its extension names.  With query NULL, every
   node and relationship; otherwise the nodes and relationships in the
   query's result (found inside lists, maps and paths too) and the end
   nodes of those relationships.  Errors are reported on the session. */
void export_run(session *s, const char *path, const char *query);

#endif
