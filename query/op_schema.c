/*
 * Schema commands: CREATE INDEX and CREATE CONSTRAINT ... IS UNIQUE, on the
 * index API of core (strata_index_create).  They run outside a statement
 * (the engine refuses schema changes inside one, as Neo4j does).
 *
 *   CREATE [RANGE] INDEX [name] [IF NOT EXISTS] FOR (n:L) ON (n.p [, n.q])
 *   CREATE INDEX ... FOR ()-[r:T]-() ON (r.p)
 *   CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR (n:L) REQUIRE n.p IS UNIQUE
 *
 *   DROP INDEX name [IF EXISTS]
 *   DROP CONSTRAINT name [IF EXISTS]
 *
 * Every index is ordered, so a plain index serves equality and ranges
 * alike; RANGE is accepted and means the same.  An index or constraint
 * created without a name gets one (index_N, constraint_N); db.indexes()
 * lists them.
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

/* The command's name as a C string in buf (empty when none was given). */
static int schema_name(exec *x, const cypher_ast_node *cmd, char *buf, size_t size)
{
    const cypher_ast_str *n = &cmd->u.schema.name;
    if (n->len >= size)
        return exec_fail(x, cmd, "SyntaxError", NULL, "an index name has at most %zu bytes",
                         size - 1);
    if (n->len)
        memcpy(buf, n->ptr, n->len);
    buf[n->len] = '\0';
    return 0;
}

static int drop(exec *x, const cypher_ast_node *cmd)
{
    char name[STRATA_INDEX_NAME_MAX];
    if (schema_name(x, cmd, name, sizeof name) != 0)
        return -1;
    bool constraint = cmd->kind == CYPHER_AST_DROP_CONSTRAINT;
    const char *what = constraint ? "constraint" : "index";
    strata_index idx;
    strata_index_info info;
    if (strata_index_find(exec_view(x), name, &idx) != STRATA_OK ||
        strata_index_info_get(exec_view(x), idx, &info) != STRATA_OK) {
        if (cmd->u.schema.if_exists)
            return 0;
        return exec_fail(x, cmd, "SemanticError", constraint ? "ConstraintNotFound" : "IndexNotFound",
                         "no %s named %s", what, name);
    }
    if ((info.kind == STRATA_INDEX_UNIQUE) != constraint)
        return exec_fail(x, cmd, "SemanticError", NULL,
                         "%s is %s; drop it with DROP %s", name,
                         constraint ? "an index, not a constraint" : "a constraint, not an index",
                         constraint ? "INDEX" : "CONSTRAINT");
    return exec_status(x, cmd, strata_index_drop(x->g, idx));
}

int run_schema(exec *x, const cypher_ast_node *cmd)
{
    if (cmd->kind == CYPHER_AST_DROP_INDEX || cmd->kind == CYPHER_AST_DROP_CONSTRAINT)
        return drop(x, cmd);
    char name[STRATA_INDEX_NAME_MAX];
    if (schema_name(x, cmd, name, sizeof name) != 0)
        return -1;
    strata_index existing;
    if (name[0] && strata_index_find(exec_view(x), name, &existing) == STRATA_OK) {
        if (cmd->u.schema.if_exists)
            return 0;
        return exec_fail(x, cmd, "SemanticError", "EquivalentSchemaRuleAlreadyExists",
                         "an index or constraint named %s exists already", name);
    }
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
    strata_status s = strata_index_create_named(x->g, kind, rel, tok, keys, props->count, name,
                                                &idx);
    if (s == STRATA_EINVAL && idx != UINT32_MAX) {
        /* An equal index exists already. */
        if (cmd->u.schema.if_exists)
            return 0;
        return exec_fail(x, cmd, "SemanticError", "EquivalentSchemaRuleAlreadyExists", "%s",
                         strata_errmsg(x->g));
    }
    return exec_status(x, cmd, s);
}
