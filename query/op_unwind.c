/* op_unwind — UNWIND list AS x: one row per element (none for an empty
   list or null, one for a value that is not a list).  A pipeline stage
   (pipeline.h). */
#include "query/pipeline.h"

typedef struct unwind_state {
    scope before;       /* the expression sees the scope before the alias */
    size_t in_width, slot;
    value *row;
    size_t width;
} unwind_state;

static int unwind_row(exec *x, stage *s, const value *src)
{
    unwind_state *u = s->state;
    if (!u->row) {
        u->width = x->width;
        u->row = mem_calloc(x->m, (u->width ? u->width : 1) * sizeof(value));
        if (!u->row)
            return exec_oom(x);
    }
    evalctx c = {x, &u->before, src, NULL, NULL};
    value list;
    if (eval(&c, s->clause->u.unwind.expr, &list) != 0)
        return -1;
    bool is_list = value_kind(&list) == VAL_LIST;
    size_t n = is_list ? value_list_len(&list) : value_is_null(&list) ? 0 : 1;
    int rc = 0;
    for (size_t k = 0; k < u->in_width; k++)
        u->row[k] = src[k];   /* borrowed */
    for (size_t i = 0; i < n && rc == 0; i++) {
        u->row[u->slot] = is_list ? value_list_items(&list)[i] : list;   /* borrowed */
        rc = stage_emit(x, s, u->row);
    }
    for (size_t k = 0; k < u->width; k++)
        u->row[k] = value_null();
    value_release(&list);
    return rc;
}

static void unwind_close(exec *x, stage *s)
{
    unwind_state *u = s->state;
    if (!u)
        return;
    if (u->row)
        mem_free(x->m, u->row, (u->width ? u->width : 1) * sizeof(value));
    scope_free(&u->before);
    mem_free(x->m, u, sizeof *u);
    s->state = NULL;
}

int unwind_open(exec *x, const cypher_ast_node *clause, scope *sc, stage *s)
{
    unwind_state *u = mem_calloc(x->m, sizeof *u);
    if (!u)
        return exec_oom(x);
    s->state = u;
    s->row = unwind_row;
    s->close = unwind_close;
    u->in_width = x->width;
    const cypher_ast_node *alias = clause->u.unwind.alias;
    if (scope_copy(x, sc, &u->before) != 0 ||
        scope_add(x, sc, alias->u.name.ptr, alias->u.name.len, &u->slot) != 0)
        return -1;
    if (u->slot < u->in_width)   /* the name was bound: UNWIND declares a new one */
        return exec_fail(x, alias, "SyntaxError", "VariableAlreadyBound",
                         "variable `%s` already declared", alias->u.name.ptr);
    return 0;
}
