/* op_merge — MERGE of one pattern part: per input row, every match of the
   pattern (ON MATCH SET applied to each), or, when there is none, the
   pattern created once (ON CREATE SET applied).  Later rows see what
   earlier rows created, so two rows asking for the same node share it. */
#include "query/exec.h"

typedef struct merge_ctx {
    rowset *matches;
} merge_ctx;

static int keep_match(exec *x, value *row, void *ctx)
{
    merge_ctx *m = ctx;
    value *copy = mem_alloc(x->m, (m->matches->width ? m->matches->width : 1) * sizeof(value));
    if (!copy)
        return exec_oom(x);
    for (size_t i = 0; i < m->matches->width; i++)
        copy[i] = value_retain(row[i]);
    int rc = rowset_push(x, m->matches, copy);
    mem_free(x->m, copy);
    return rc;
}

static int actions(exec *x, const cypher_ast_node *clause, const scope *sc, value *row,
                   bool on_create)
{
    const cypher_ast_list *acts = &clause->u.merge.actions;
    for (size_t a = 0; a < acts->count; a++) {
        const cypher_ast_node *act = acts->items[a];
        if (act->u.merge_action.on_create != on_create)
            continue;
        for (size_t i = 0; i < act->u.merge_action.items.count; i++)
            if (set_item_row(x, act->u.merge_action.items.items[i], sc, row) != 0)
                return -1;
    }
    return 0;
}

/* A null in a property map can never match (null = null is not true), and
   creating the entity would drop the key: Neo4j refuses it, and so do we. */
static int refuse_null_properties(exec *x, const cypher_ast_node *part, const scope *sc,
                                  const value *row)
{
    const cypher_ast_list *el = &part->u.part.path->u.list;
    evalctx c = {x, sc, row, NULL, NULL};
    for (size_t i = 0; i < el->count; i++) {
        const cypher_ast_node *e = el->items[i];
        const cypher_ast_node *props = e->kind == CYPHER_AST_NODE ? e->u.node.properties
                                                                  : e->u.rel.properties;
        if (!props || props->kind != CYPHER_AST_MAP)
            continue;
        for (size_t k = 0; k < props->u.list.count; k++) {
            const cypher_ast_node *entry = props->u.list.items[k];
            value v;
            if (eval(&c, entry->u.entry.value, &v) != 0)
                return -1;
            bool null = value_is_null(&v);
            value_release(&v);
            if (null)
                return exec_fail(x, entry, "SemanticError", "MergeReadOwnWrites",
                                 "cannot merge using a null property value for `%s`",
                                 entry->u.entry.key.ptr);
        }
    }
    return 0;
}

int op_merge(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out)
{
    size_t in_width = in->width;
    const cypher_ast_node *part = clause->u.merge.part;
    const cypher_ast_list *el = &part->u.part.path->u.list;
    if (part->u.part.variable &&
        scope_add(x, sc, part->u.part.variable->u.name.ptr, part->u.part.variable->u.name.len,
                  NULL) != 0)
        return -1;
    for (size_t i = 0; i < el->count; i++) {
        const cypher_ast_node *e = el->items[i];
        const cypher_ast_node *v = e->kind == CYPHER_AST_NODE ? e->u.node.variable
                                                              : e->u.rel.variable;
        if (e->kind == CYPHER_AST_REL && (e->u.rel.types.count != 1 || e->u.rel.var_length))
            return exec_fail(x, e, "SyntaxError", "NoSingleRelationshipType",
                             "MERGE needs exactly one relationship type");
        if (v) {
            long had = scope_find(sc, v->u.name.ptr, v->u.name.len);
            if (had >= 0 && (size_t)had < in_width &&
                (e->kind == CYPHER_AST_REL || e->u.node.labels.count || e->u.node.properties))
                return exec_fail(x, v, "SyntaxError", "VariableAlreadyBound",
                                 "variable `%s` already declared", v->u.name.ptr);
            if (scope_add(x, sc, v->u.name.ptr, v->u.name.len, NULL) != 0)
                return -1;
        }
    }
    rowset_init(out, x->width);
    size_t rowsz = (x->width ? x->width : 1) * sizeof(value);
    value *row = mem_calloc(x->m, rowsz);
    if (!row)
        return exec_oom(x);
    int rc = 0;
    for (size_t r = 0; r < in->nrows && rc == 0; r++) {
        const value *src = rowset_row(in, r);
        for (size_t i = 0; i < in_width; i++)
            row[i] = value_retain(src[i]);
        rowset matches;
        rowset_init(&matches, x->width);
        merge_ctx m = {&matches};
        x->nused = 0;
        rc = match_part_row(x, part, sc, in_width, NULL, row, keep_match, &m);
        if (rc == 0 && matches.nrows == 0) {
            rc = refuse_null_properties(x, part, sc, row);
            if (rc == 0)
                rc = create_pattern_row(x, part, sc, row);
            if (rc == 0)
                rc = actions(x, clause, sc, row, true);
            if (rc == 0)
                rc = rowset_push(x, out, row);
        } else {
            for (size_t i = 0; i < x->width; i++)
                value_release(&row[i]);
            for (size_t k = 0; k < matches.nrows && rc == 0; k++) {
                value *mr = rowset_row(&matches, k);
                rc = actions(x, clause, sc, mr, false);
                if (rc == 0)
                    rc = rowset_push(x, out, mr);
            }
        }
        for (size_t i = 0; i < x->width; i++)
            value_release(&row[i]);
        rowset_free(&matches);
    }
    mem_free(x->m, row);
    return rc;
}
