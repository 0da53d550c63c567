/* inspect — the client commands that describe the graph: :schema and
   :stats, as text for people and as one JSON line in jsonl and json (the
   machine contract: docs/QUERY.md). */
#ifndef STRATA_CLI_INSPECT_H
#define STRATA_CLI_INSPECT_H

#include "cli/session.h"

void inspect_schema(session *s);
void inspect_stats(session *s);

#endif
