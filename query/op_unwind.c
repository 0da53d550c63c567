/* op_unwind — UNWIND list AS x: one row per element (none for an empty
   list or null, one for a value that is not a list).  A pipeline stage
   (pipeline.h). */
#include "query/pipeline.h"

typedef struct unwind_state {
    scope before;       /* the expression sees the scope before the alias */
    size_t in_width, slot;
    value *row;
    size_t width;
    value list;         /* the input row in progress: its list, the next item */
    size_t next, n;
} unwind_state;

static void unwind_end(unwind_state *u)
{
    for (size_t k = 0; k < u->width; k++)
        u->row[k] = value_null();
    value_release(&u->list);
    u->next = u->n = 0;
}

/* Takes an input row and evaluates its list; unwind_step pushes one item
   at a time. */
static int unwind_begin(exec *x, stage *s, const value *src)
{
    unwind_state *u = s->state;
    if (!u->row) {
        u->width = x->width;
        u->row = mem_calloc(x->m, (u->width ? u->width : 1) * sizeof(value));
        if (!u->row)
            return exec_oom(x);
    }
    evalctx c = {x, &u->before, src, NULL, NULL};
    if (eval(&c, s->clause->u.unwind.expr, &u->list) != 0)
        return -1;
    bool is_list = value_kind(&u->list) == VAL_LIST;
    u->n = is_list ? value_list_len(&u->list) : value_is_null(&u->list) ? 0 : 1;
    u->next = 0;
    for (size_t k = 0; k < u->in_width; k++)
        u->row[k] = src[k];   /* borrowed */
    return 0;
}

static int unwind_step(exec *x, stage *s, bool *done)
{
    unwind_state *u = s->state;
    *done = u->next == u->n;
    if (*done) {
        unwind_end(u);
        return 0;
    }
    size_t i = u->next++;
    u->row[u->slot] = value_kind(&u->list) == VAL_LIST ? value_list_items(&u->list)[i]
                                                       : u->list;   /* borrowed */
    int rc = stage_emit(x, s, u->row);
    if (rc != 0)
        unwind_end(u);
    return rc;
}

static int unwind_row(exec *x, stage *s, const value *src)
{
    bool done = false;
    int rc = unwind_begin(x, s, src);
    while (rc == 0 && !done)
        rc = unwind_step(x, s, &done);
    return rc;
}

static void unwind_close(exec *x, stage *s)
{
    unwind_state *u = s->state;
    if (!u)
        return;
    if (u->row) {
        unwind_end(u);
        mem_free(x->m, u->row);
    }
    scope_free(&u->before);
    mem_free(x->m, u);
    s->state = NULL;
}

int unwind_open(exec *x, const cypher_ast_node *clause, scope *sc, stage *s)
{
    unwind_state *u = mem_calloc(x->m, sizeof *u);
    if (!u)
        return exec_oom(x);
    s->state = u;
    s->row = unwind_row;
    s->begin = unwind_begin;
    s->step = unwind_step;
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
