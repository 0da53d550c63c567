/* op_create — CREATE: per input row, every pattern part is created:
   unbound nodes become new nodes with their labels and properties, every
   relationship a new relationship (one type, a direction).  Variables
   bound before the clause are used as they are.  Null properties are not
   stored. */
#include <string.h>

#include "query/exec.h"

static int set_props(exec *x, const cypher_ast_node *props, const scope *sc, const value *row,
                     bool is_node, uint64_t id)
{
    if (!props)
        return 0;
    evalctx c = {x, sc, row, NULL, NULL};
    value map;
    if (eval(&c, props, &map) != 0)
        return -1;
    if (value_kind(&map) != VAL_MAP) {
        value_release(&map);
        return exec_fail(x, props, "TypeError", "InvalidArgumentType",
                         "properties must be given as a map");
    }
    int rc = 0;
    for (size_t i = 0; i < value_map_len(&map) && rc == 0; i++) {
        const value *v = &value_map_vals(&map)[i];
        if (value_is_null(v))
            continue;
        if ((rc = storable_check(x, props, v)) != 0)
            break;
        strata_token key;
        strata_status s = strata_token_intern(x->g, STRATA_KEY, value_str(&value_map_keys(&map)[i], NULL), &key);
        if (s == STRATA_OK) {
            strata_value h = {*v};
            s = is_node ? strata_node_set(x->g, id, key, &h) : strata_rel_set(x->g, id, key, &h);
        }
        if (s != STRATA_OK)
            rc = exec_status(x, props, s);
        else
            x->stats.props_set++;
    }
    value_release(&map);
    return rc;
}

int create_labels(exec *x, const cypher_ast_node *n, strata_token *labels)
{
    for (size_t i = 0; i < n->u.node.labels.count; i++) {
        cypher_ast_node *l = n->u.node.labels.items[i];
        strata_status s = exec_cached_intern(x, &l->u.label.token_plus1, STRATA_LABEL,
                                             l->u.label.name.ptr, &labels[i]);
        if (s != STRATA_OK)
            return exec_status(x, n, s);
    }
    return 0;
}

static int create_node(exec *x, const cypher_ast_node *n, const scope *sc, value *row,
                       uint64_t *id)
{
    const cypher_ast_node *var = n->u.node.variable;
    long slot = var ? scope_find(sc, var->u.name.ptr, var->u.name.len) : -1;
    if (slot >= 0 && !value_is_null(&row[slot])) {
        if (value_kind(&row[slot]) != VAL_NODE)
            return exec_fail(x, n, "SyntaxError", "VariableTypeConflict",
                             "`%s` is not a node", var->u.name.ptr);
        *id = row[slot].u.id;
        return 0;
    }
    size_t nl = n->u.node.labels.count;
    strata_token labels[nl + 1];
    if (create_labels(x, n, labels) != 0)
        return -1;
    strata_status s = strata_node_create(x->g, labels, nl, id);
    if (s != STRATA_OK)
        return exec_status(x, n, s);
    x->stats.nodes_created++;
    /* repeated labels count once */
    for (size_t i = 0; i < nl; i++) {
        bool dup = false;
        for (size_t j = 0; j < i && !dup; j++)
            dup = labels[j] == labels[i];
        x->stats.labels_added += !dup;
    }
    if (slot >= 0)
        row[slot] = value_node(*id);
    return set_props(x, n->u.node.properties, sc, row, true, *id);
}

int create_pattern_row(exec *x, const cypher_ast_node *part, const scope *sc, value *row)
{
    const cypher_ast_list *el = &part->u.part.path->u.list;
    uint64_t ids[el->count + 1];
    if (create_node(x, el->items[0], sc, row, &ids[0]) != 0)
        return -1;
    for (size_t i = 1; i + 1 < el->count; i += 2) {
        const cypher_ast_node *r = el->items[i];
        if (create_node(x, el->items[i + 1], sc, row, &ids[i + 1]) != 0)
            return -1;
        if (r->u.rel.types.count != 1)
            return exec_fail(x, r, "SyntaxError", "NoSingleRelationshipType",
                             "a relationship to create needs exactly one type");
        if (r->u.rel.dir != CYPHER_DIR_RIGHT && r->u.rel.dir != CYPHER_DIR_LEFT)
            return exec_fail(x, r, "SyntaxError", "RequiresDirectedRelationship",
                             "a relationship to create needs a direction");
        if (r->u.rel.var_length)
            return exec_fail(x, r, "SyntaxError", "CreatingVarLength",
                             "variable-length relationships cannot be created");
        const cypher_ast_node *var = r->u.rel.variable;
        long slot = var ? scope_find(sc, var->u.name.ptr, var->u.name.len) : -1;
        if (slot >= 0 && !value_is_null(&row[slot]))
            return exec_fail(x, r, "SyntaxError", "VariableAlreadyBound",
                             "variable `%s` already declared", var->u.name.ptr);
        strata_token type;
        cypher_ast_node *t = r->u.rel.types.items[0];
        strata_status s = exec_cached_intern(x, &t->u.label.token_plus1, STRATA_RELTYPE,
                                             t->u.label.name.ptr, &type);
        uint64_t from = r->u.rel.dir == CYPHER_DIR_RIGHT ? ids[i - 1] : ids[i + 1];
        uint64_t to = r->u.rel.dir == CYPHER_DIR_RIGHT ? ids[i + 1] : ids[i - 1];
        if (s == STRATA_OK)
            s = strata_rel_create(x->g, from, to, type, &ids[i]);
        if (s != STRATA_OK)
            return exec_status(x, r, s);
        x->stats.rels_created++;
        if (slot >= 0)
            row[slot] = value_rel(ids[i]);
        if (set_props(x, r->u.rel.properties, sc, row, false, ids[i]) != 0)
            return -1;
    }
    const cypher_ast_node *pv = part->u.part.variable;
    if (pv) {
        value items[el->count + 1];
        for (size_t i = 0; i < el->count; i++)
            items[i] = i % 2 == 0 ? value_node(ids[i]) : value_rel(ids[i]);
        long slot = scope_find(sc, pv->u.name.ptr, pv->u.name.len);
        value_release(&row[slot]);
        if (value_path_from(x->m, items, el->count, &row[slot]) != 0)
            return exec_oom(x);
    }
    return 0;
}

static int declare(exec *x, scope *sc, const cypher_ast_node *part, size_t in_width)
{
    const cypher_ast_list *el = &part->u.part.path->u.list;
    if (part->u.part.variable && scope_add(x, sc, part->u.part.variable->u.name.ptr,
                                           part->u.part.variable->u.name.len, NULL) != 0)
        return -1;
    for (size_t i = 0; i < el->count; i++) {
        const cypher_ast_node *e = el->items[i];
        const cypher_ast_node *v = e->kind == CYPHER_AST_NODE ? e->u.node.variable
                                                              : e->u.rel.variable;
        if (!v)
            continue;
        size_t slot;
        long had = scope_find(sc, v->u.name.ptr, v->u.name.len);
        if (had >= 0 && (size_t)had < in_width &&
            (e->kind == CYPHER_AST_REL ||
             (e->u.node.labels.count || e->u.node.properties)))
            return exec_fail(x, v, "SyntaxError", "VariableAlreadyBound",
                             "variable `%s` already declared", v->u.name.ptr);
        if (scope_add(x, sc, v->u.name.ptr, v->u.name.len, &slot) != 0)
            return -1;
    }
    return 0;
}

int op_create(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out)
{
    size_t in_width = in->width;
    const cypher_ast_list *parts = &clause->u.list;
    for (size_t i = 0; i < parts->count; i++)
        if (declare(x, sc, parts->items[i], in_width) != 0)
            return -1;
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
        for (size_t p = 0; p < parts->count && rc == 0; p++)
            rc = create_pattern_row(x, parts->items[p], sc, row);
        if (rc == 0)
            rc = rowset_push(x, out, row);
        else
            for (size_t i = 0; i < x->width; i++)
                value_release(&row[i]);
    }
    mem_free(x->m, row);
    return rc;
}
