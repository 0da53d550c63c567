/* op_unwind — UNWIND expr AS v: one row per element of a list; null and
   the empty list give no rows; any other value gives one row holding it. */
#include "query/exec.h"

int op_unwind(exec *x, const cypher_ast_node *clause, scope *sc, rowset *in, rowset *out)
{
    size_t in_width = in->width;
    const cypher_ast_node *alias = clause->u.unwind.alias;
    /* the expression sees the scope before the alias */
    scope before = {0};
    if (scope_copy(x, sc, &before) != 0)
        return -1;
    size_t slot;
    if (scope_add(x, sc, alias->u.name.ptr, alias->u.name.len, &slot) != 0) {
        scope_free(&before);
        return -1;
    }
    if (slot < in_width) {
        /* the name was bound: UNWIND declares a new variable */
        scope_free(&before);
        return exec_fail(x, alias, "SyntaxError", "VariableAlreadyBound",
                         "variable `%s` already declared", alias->u.name.ptr);
    }
    rowset_init(out, x->width);
    size_t rowsz = (x->width ? x->width : 1) * sizeof(value);
    value *row = mem_calloc(x->m, rowsz);
    int rc = row ? 0 : exec_oom(x);
    for (size_t r = 0; r < in->nrows && rc == 0; r++) {
        const value *src = rowset_row(in, r);
        evalctx c = {x, &before, src, NULL, NULL};
        value list;
        if ((rc = eval(&c, clause->u.unwind.expr, &list)) != 0)
            break;
        size_t n = value_kind(&list) == VAL_LIST ? value_list_len(&list)
                   : value_is_null(&list)        ? 0
                                                 : 1;
        for (size_t i = 0; i < n && rc == 0; i++) {
            for (size_t k = 0; k < in_width; k++)
                row[k] = value_retain(src[k]);
            row[slot] = value_kind(&list) == VAL_LIST ? value_retain(value_list_items(&list)[i])
                                                      : value_retain(list);
            rc = rowset_push(x, out, row);
        }
        value_release(&list);
    }
    if (row)
        mem_free(x->m, row, rowsz);
    scope_free(&before);
    return rc;
}
