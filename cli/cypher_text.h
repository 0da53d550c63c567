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
/* Tokens read whole: t points at inl when they fit (no allocation for the
   common entity), else at an array of its own; free with token_buf_free.
   n is 0 when the read failed or ran out of memory. */
#define TOKEN_INLINE 32
typedef struct token_buf {
    strata_token *t;
    size_t n;
    strata_token inl[TOKEN_INLINE];
} token_buf;
void token_buf_free(token_buf *tb);
/* A node's label tokens, all of them. */
void node_label_tokens(strata_view *v, strata_id id, token_buf *out);

/* An entity's property keys with their names, sorted by name, the same
   way. */
typedef struct entity_key {
    strata_token token;
    const char *name;
} entity_key;
typedef struct entity_keys_buf {
    entity_key *k;
    size_t n;
    entity_key inl[TOKEN_INLINE];
} entity_keys_buf;
void entity_keys(strata_view *v, bool node, strata_id id, entity_keys_buf *out);
void entity_keys_free(entity_keys_buf *kb);
/* The shortest text that reads back as the same double, always with a '.'
   or an exponent (shared with the JSON output). */
void float_text(char *buf, size_t cap, double f);

#endif
