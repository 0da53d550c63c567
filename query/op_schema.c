/*
 * Schema commands: CREATE INDEX and CREATE CONSTRAINT ... IS UNIQUE, on the
 * index API of core (strata_index_create).  They run outside a statement
 * (the engine refuses schema changes inside one, as Neo4j does).
 *
 *   CREATE [RANGE] INDEX [name] [IF NOT EXISTS] FOR (n:L) ON (n.p [, n.q])
 *   CREATE INDEX ... FOR ()-[r:T]-() ON (r.p)
 *   CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR (n:L) REQUIRE n.p IS UNIQUE
 *
 * Every index is ordered, so a plain index serves equality and ranges
 * alike; RANGE is accepted and means the same.  Names are accepted but not
 * recorded yet, so DROP INDEX / DROP CONSTRAINT (by name) are refused.
 */
#include <string.h>

#include "query/exec.h"

/* The label or relationship type of the target and whether it is a
   relationship. */
static int schema_target(exec *x, const cypher_ast_node *cmd, strata_token *tok, bool *rel)
{
    const cypher_ast_node *t = cmd->u.schema.target;
    const cypher_ast_list *names = t->kind == CYPHER_AST_NODE ? &t->u.node.labels : &t->u.rel.types;
    *rel = t->kind != CYPHER_AST_NODE;
    if (names->count != 1)
        return exec_fail(x, t, "SyntaxError", NULL,
                         "an index names exactly one label or relationship type");
    const cypher_ast_str *n = &names->items[0]->u.name;
    char buf[256];
    if (n->len >= sizeof buf)
        return exec_fail(x, t, "SyntaxError", NULL, "label name too long");
    memcpy(buf, n->ptr, n->len);
    buf[n->len] = '\0';
    return exec_status(x, t, strata_token_intern(x->g, *rel ? STRATA_RELTYPE : STRATA_LABEL,
                                                 buf, tok));
}

int run_schema(exec *x, const cypher_ast_node *cmd)
{
    if (cmd->kind == CYPHER_AST_DROP_INDEX || cmd->kind == CYPHER_AST_DROP_CONSTRAINT)
        return exec_fail(x, cmd, "SyntaxError", NULL,
                         "%s is not supported yet (index names are not recorded)",
                         cypher_ast_kind_name(cmd->kind));
    strata_token tok, keys[8];
    bool rel;
    if (schema_target(x, cmd, &tok, &rel) != 0)
        return -1;
    const cypher_ast_list *props = &cmd->u.schema.keys;
    if (props->count < 1 || props->count > 8)
        return exec_fail(x, cmd, "SyntaxError", NULL, "an index has 1 to 8 properties");
    for (size_t i = 0; i < props->count; i++) {
        const cypher_ast_str *k = &props->items[i]->u.property.key;
        char buf[256];
        if (k->len >= sizeof buf)
            return exec_fail(x, props->items[i], "SyntaxError", NULL, "property name too long");
        memcpy(buf, k->ptr, k->len);
        buf[k->len] = '\0';
        if (exec_status(x, props->items[i],
                        strata_token_intern(x->g, STRATA_KEY, buf, &keys[i])) != 0)
            return -1;
    }
    strata_index_kind kind = cmd->kind == CYPHER_AST_CREATE_CONSTRAINT ? STRATA_INDEX_UNIQUE
                                                                       : STRATA_INDEX_RANGE;
    strata_index idx = UINT32_MAX;
    strata_status s = strata_index_create(x->g, kind, rel, tok, keys, props->count, &idx);
    if (s == STRATA_EINVAL && idx != UINT32_MAX) {
        /* An equal index exists already. */
        if (cmd->u.schema.if_exists)
            return 0;
        return exec_fail(x, cmd, "SemanticError", "EquivalentSchemaRuleAlreadyExists", "%s",
                         strata_errmsg(x->g));
    }
    return exec_status(x, cmd, s);
}
