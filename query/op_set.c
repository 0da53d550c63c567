/* op_set — SET and REMOVE, row by row: properties (n.k = v, n = map,
   n += map) and labels.  Setting null removes a property.  A null target
   (from OPTIONAL MATCH) is skipped, as openCypher says. */
#include <string.h>

#include "query/exec.h"

static int entity_of(exec *x, const cypher_ast_node *at, const scope *sc, const value *row,
                     const cypher_ast_node *e, value *out)
{
    evalctx c = {x, sc, row, NULL, NULL};
    if (eval(&c, e, out) != 0)
        return -1;
    if (value_is_null(out) || value_kind(out) == VAL_NODE || value_kind(out) == VAL_REL)
        return 0;
    value_release(out);
    return exec_fail(x, at, "TypeError", "InvalidArgumentType",
                     "SET and REMOVE apply to nodes and relationships");
}

static int set_one(exec *x, const cypher_ast_node *at, const value *ent, const char *key,
                   const value *v)
{
    if (storable_check(x, at, v) != 0)
        return -1;
    strata_token tok;
    strata_status s = strata_token_intern(x->g, STRATA_KEY, key, &tok);
    if (s == STRATA_OK) {
        strata_value h = {*v};
        s = value_kind(ent) == VAL_NODE ? strata_node_set(x->g, ent->u.id, tok, &h)
                                        : strata_rel_set(x->g, ent->u.id, tok, &h);
    }
    if (s == STRATA_ENOTFOUND)
        return 0;   /* deleted earlier in the statement */
    if (s != STRATA_OK)
        return exec_status(x, at, s);
    x->stats.props_set++;
    return 0;
}

static int remove_all(exec *x, const cypher_ast_node *at, const value *ent)
{
    value map;
    if (entity_properties_map(x, ent, &map) != 0)
        return -1;
    value nul = value_null();
    int rc = 0;
    for (size_t i = 0; i < value_map_len(&map) && rc == 0; i++)
        rc = set_one(x, at, ent, value_str(&value_map_keys(&map)[i], NULL), &nul);
    value_release(&map);
    return rc;
}

static int labels_change(exec *x, const cypher_ast_node *item, const value *ent, bool add)
{
    if (value_is_null(ent))
        return 0;
    if (value_kind(ent) != VAL_NODE)
        return exec_fail(x, item, "TypeError", "InvalidArgumentType", "labels belong to nodes");
    for (size_t i = 0; i < item->u.labels.labels.count; i++) {
        strata_token tok;
        cypher_ast_node *l = item->u.labels.labels.items[i];
        strata_status s = exec_cached_intern(x, &l->u.label.token_plus1, STRATA_LABEL,
                                             l->u.label.name.ptr, &tok);
        bool has = false;
        if (s == STRATA_OK)
            s = strata_node_has_label(exec_view(x), ent->u.id, tok, &has);
        if (s == STRATA_ENOTFOUND)
            return 0;
        if (s != STRATA_OK)
            return exec_status(x, item, s);
        if (has == add)
            continue;
        s = add ? strata_node_add_label(x->g, ent->u.id, tok)
                : strata_node_remove_label(x->g, ent->u.id, tok);
        if (s != STRATA_OK)
            return exec_status(x, item, s);
        if (add)
            x->stats.labels_added++;
        else
            x->stats.labels_removed++;
    }
    return 0;
}

int set_item_row(exec *x, const cypher_ast_node *item, const scope *sc, value *row)
{
    evalctx c = {x, sc, row, NULL, NULL};
    value ent, v = value_null();
    int rc = 0;
    switch (item->kind) {
    case CYPHER_AST_SET_PROPERTY: {
        const cypher_ast_node *t = item->u.assign.target;
        if (entity_of(x, item, sc, row, t->u.property.subject, &ent) != 0)
            return -1;
        if (eval(&c, item->u.assign.value, &v) != 0) {
            value_release(&ent);
            return -1;
        }
        if (!value_is_null(&ent))
            rc = set_one(x, item, &ent, t->u.property.key.ptr, &v);
        break;
    }
    case CYPHER_AST_SET_VARIABLE:
    case CYPHER_AST_SET_MERGE: {
        if (entity_of(x, item, sc, row, item->u.assign.target, &ent) != 0)
            return -1;
        if (eval(&c, item->u.assign.value, &v) != 0) {
            value_release(&ent);
            return -1;
        }
        if (value_is_null(&ent))
            break;
        if (value_kind(&v) == VAL_NODE || value_kind(&v) == VAL_REL) {
            value m;
            if (entity_properties_map(x, &v, &m) != 0) {
                rc = -1;
                break;
            }
            value_release(&v);
            v = m;
        }
        if (value_is_null(&v) && item->kind == CYPHER_AST_SET_VARIABLE) {
            rc = remove_all(x, item, &ent);
            break;
        }
        if (value_kind(&v) != VAL_MAP) {
            rc = exec_fail(x, item, "TypeError", "InvalidArgumentType",
                           "SET expects a map, a node or a relationship");
            break;
        }
        if (item->kind == CYPHER_AST_SET_VARIABLE) {
            /* = replaces: drop the keys the map does not set */
            value old;
            if ((rc = entity_properties_map(x, &ent, &old)) != 0)
                break;
            value nul = value_null();
            for (size_t i = 0; i < value_map_len(&old) && rc == 0; i++) {
                size_t kl;
                const char *k = value_str(&value_map_keys(&old)[i], &kl);
                if (!value_map_get(&v, k, kl))
                    rc = set_one(x, item, &ent, k, &nul);
            }
            value_release(&old);
        }
        for (size_t i = 0; i < value_map_len(&v) && rc == 0; i++)
            rc = set_one(x, item, &ent, value_str(&value_map_keys(&v)[i], NULL),
                         &value_map_vals(&v)[i]);
        break;
    }
    case CYPHER_AST_SET_LABELS:
        if (entity_of(x, item, sc, row, item->u.labels.subject, &ent) != 0)
            return -1;
        rc = labels_change(x, item, &ent, true);
        break;
    case CYPHER_AST_REMOVE_LABELS:
        if (entity_of(x, item, sc, row, item->u.labels.subject, &ent) != 0)
            return -1;
        rc = labels_change(x, item, &ent, false);
        break;
    case CYPHER_AST_REMOVE_PROPERTY: {
        const cypher_ast_node *t = item->u.assign.target;
        if (entity_of(x, item, sc, row, t->u.property.subject, &ent) != 0)
            return -1;
        if (!value_is_null(&ent)) {
            /* counts as a property set only when there was one */
            value had;
            rc = entity_property(x, item, &ent, t->u.property.key.ptr, t->u.property.key.len, &had);
            if (rc == 0 && !value_is_null(&had))
                rc = set_one(x, item, &ent, t->u.property.key.ptr, &v);
            value_release(&had);
        }
        break;
    }
    default:
        return exec_fail(x, item, "SyntaxError", NULL, "%s is not supported yet",
                         cypher_ast_kind_name(item->kind));
    }
    value_release(&ent);
    value_release(&v);
    return rc;
}

static int run_items(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in)
{
    for (size_t r = 0; r < in->nrows; r++)
        for (size_t i = 0; i < clause->u.list.count; i++)
            if (set_item_row(x, clause->u.list.items[i], sc, rowset_row(in, r)) != 0)
                return -1;
    return 0;
}

int op_set(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in)
{
    return run_items(x, clause, sc, in);
}

int op_remove(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in)
{
    return run_items(x, clause, sc, in);
}
