/* op_delete — DELETE and DETACH DELETE.  Every row's targets are collected
   first, then relationships are deleted, then nodes: a node whose
   relationships all go in the same clause is deletable whatever the row
   order.  An entity deleted twice is deleted once. */
#include "query/exec.h"

typedef struct idvec {
    uint64_t *v;
    size_t n, cap;
} idvec;

static int idvec_push(exec *x, idvec *iv, uint64_t id)
{
    if (iv->n == iv->cap) {
        size_t cap = iv->cap ? iv->cap * 2 : 16;
        uint64_t *v = mem_realloc(x->m, iv->v, cap * sizeof *v);
        if (!v)
            return exec_oom(x);
        iv->v = v;
        iv->cap = cap;
    }
    iv->v[iv->n++] = id;
    return 0;
}

static int collect(exec *x, const cypher_ast_node *e, const value *v, idvec *nodes, idvec *rels)
{
    switch (value_kind(v)) {
    case VAL_NULL:
        return 0;
    case VAL_NODE:
        return idvec_push(x, nodes, v->u.id);
    case VAL_REL:
        return idvec_push(x, rels, v->u.id);
    case VAL_PATH: {
        const value *it = value_list_items(v);
        for (size_t i = 0; i < value_list_len(v); i++)
            if (collect(x, e, &it[i], nodes, rels) != 0)
                return -1;
        return 0;
    }
    default:
        return exec_fail(x, e, "TypeError", "InvalidArgumentType",
                         "DELETE expects nodes, relationships or paths");
    }
}

int op_delete(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in)
{
    idvec nodes = {0}, rels = {0};
    int rc = 0;
    for (size_t r = 0; r < in->nrows && rc == 0; r++) {
        evalctx c = {x, sc, rowset_row(in, r), NULL, NULL};
        for (size_t i = 0; i < clause->u.delete_.exprs.count && rc == 0; i++) {
            const cypher_ast_node *e = clause->u.delete_.exprs.items[i];
            value v;
            if ((rc = eval(&c, e, &v)) != 0)
                break;
            rc = collect(x, e, &v, &nodes, &rels);
            value_release(&v);
        }
    }
    for (size_t i = 0; i < rels.n && rc == 0; i++) {
        if (!strata_rel_exists(exec_view(x), rels.v[i]))
            continue;
        strata_status s = strata_rel_delete(x->g, rels.v[i]);
        if (s != STRATA_OK)
            rc = exec_status(x, clause, s);
        else
            x->stats.rels_deleted++;
    }
    for (size_t i = 0; i < nodes.n && rc == 0; i++) {
        strata_view *v = exec_view(x);
        if (!strata_node_exists(v, nodes.v[i]))
            continue;
        uint64_t degree = 0;
        strata_status s = strata_node_degree(v, nodes.v[i], STRATA_BOTH, STRATA_ANY_TYPE,
                                             &degree);
        if (s != STRATA_OK) {
            rc = exec_status(x, clause, s);
            break;
        }
        if (clause->u.delete_.detach) {
            s = strata_node_detach_delete(x->g, nodes.v[i]);
            if (s == STRATA_OK)
                x->stats.rels_deleted += degree;
        } else if (degree) {
            rc = exec_fail(x, clause, "ConstraintVerificationFailed", "DeleteConnectedNode",
                           "cannot delete node %llu: it still has relationships",
                           (unsigned long long)nodes.v[i]);
            break;
        } else {
            s = strata_node_delete(x->g, nodes.v[i]);
        }
        if (s != STRATA_OK)
            rc = exec_status(x, clause, s);
        else
            x->stats.nodes_deleted++;
    }
    if (nodes.v)
        mem_free(x->m, nodes.v);
    if (rels.v)
        mem_free(x->m, rels.v);
    return rc;
}
