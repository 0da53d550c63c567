/* cypher_text — values as a person reads them in a table cell, the way
   Cypher writes them: (:Person {name: 'Ann'}), [:KNOWS {since: 2001}],
   paths as (a)-[r]->(b), strings bare at the top level and quoted inside
   lists, maps and entities. */
#ifndef STRATA_CLI_CYPHER_TEXT_H
#define STRATA_CLI_CYPHER_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/strbuf.h"
#include "strata.h"

/* Appends the text of v; nodes and relationships are read through view. */
void cypher_text(strbuf *b, strata_view *view, const strata_value *v);
/* The same with strings quoted at the top level too (as in a list): the
   text of a value as a Cypher literal (:params). */
void cypher_literal(strbuf *b, strata_view *view, const strata_value *v);
/* An entity's property keys with their names, sorted by name (malloc'd,
   *n of them; NULL when none or out of memory). */
typedef struct entity_key {
    strata_token token;
    const char *name;
} entity_key;
entity_key *entity_keys(strata_view *v, bool node, strata_id id, size_t *n);
/* A node's label tokens, all of them (malloc'd; NULL when none). */
strata_token *node_label_tokens(strata_view *v, strata_id id, size_t *n);
/* The shortest text that reads back as the same double, always with a '.'
   or an exponent (shared with the JSON output). */
void float_text(char *buf, size_t cap, double f);

#endif
