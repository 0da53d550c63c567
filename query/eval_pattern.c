/*
 * eval_pattern — patterns inside expressions: pattern predicates
 * (`WHERE (a)-[:T]->(b)`, `exists((a)-->())`), EXISTS subqueries
 * (`EXISTS { (a)-->(b) WHERE ... }`, `EXISTS { MATCH ... RETURN ... }`) and
 * pattern comprehensions (`[(a)-->(b) WHERE b.x > 1 | b.name]`).
 *
 * Each runs the ordinary matcher (match_part_row) or, for an EXISTS
 * subquery, the reading clause operators, inside an inner frame:
 *   1. the frame's scope is the expression's scope plus its comprehension
 *      locals, each local given a slot of its own, so the matcher treats
 *      every variable of the outer row as bound and the pattern's own
 *      variables as new (their slots are at or above in_width);
 *   2. the slots the frame adds (x->width) are given back when it closes:
 *      the clause being run keeps its row width;
 *   3. relationship uniqueness holds within the pattern only: the
 *      relationships bound by the MATCH in progress are set aside while
 *      the frame is open and restored when it closes.
 */
#include <string.h>

#include "query/exec.h"
#include "query/pipeline.h"

typedef struct frame {
    exec *x;
    scope sc;
    size_t nouter;          /* sc's first nouter bindings come from the outer scope */
    size_t saved_width;
    size_t in_width;        /* slots below this are bound on entry */
    value *row;             /* row_width values */
    size_t row_width;
    uint64_t *saved_used;
    size_t saved_nused, saved_capused;
} frame;

/* Whether the locals from l up to (not including) stop bind name. */
static bool local_shadowed(const local_var *l, const local_var *stop, const char *name,
                           size_t len)
{
    for (; l != stop; l = l->up)
        if (l->len == len && memcmp(l->name, name, len) == 0)
            return true;
    return false;
}

/* Opens a frame over c's scope and locals (each visible local gets a new
   slot, innermost shadowing outer ones). */
static int frame_open(const evalctx *c, frame *f)
{
    exec *x = c->x;
    memset(f, 0, sizeof *f);
    f->x = x;
    x->no_arena++;      /* a frame per row: its memory is given back */
    f->saved_width = x->width;
    f->saved_used = x->used_rels;
    f->saved_nused = x->nused;
    f->saved_capused = x->capused;
    x->used_rels = NULL;
    x->nused = x->capused = 0;
    if (c->sc && scope_copy(x, c->sc, &f->sc) != 0)
        return -1;
    f->nouter = f->sc.n;
    /* Outermost local first, so that an inner one pushed later shadows
       it; a local already shadowed by a nearer one is skipped. */
    size_t nlocals = 0;
    for (const local_var *l = c->locals; l; l = l->up)
        nlocals++;
    for (size_t depth = nlocals; depth-- > 0;) {
        const local_var *l = c->locals;
        for (size_t k = 0; k < depth; k++)
            l = l->up;
        if (local_shadowed(c->locals, l, l->name, l->len))
            continue;
        binding b = {l->name, l->len, x->width++};
        if (scope_push(x, &f->sc, &b) != 0)
            return -1;
    }
    f->in_width = x->width;
    return 0;
}

/* Gives the pattern part's variables not yet in scope new slots. */
static int frame_declare(frame *f, const cypher_ast_node *part)
{
    const cypher_ast_node *pv = part->u.part.variable;
    if (pv && scope_add(f->x, &f->sc, pv->u.name.ptr, pv->u.name.len, NULL) != 0)
        return -1;
    const cypher_ast_list *el = &part->u.part.path->u.list;
    for (size_t i = 0; i < el->count; i++) {
        const cypher_ast_node *e = el->items[i];
        const cypher_ast_node *v = e->kind == CYPHER_AST_NODE ? e->u.node.variable
                                                              : e->u.rel.variable;
        if (v && scope_add(f->x, &f->sc, v->u.name.ptr, v->u.name.len, NULL) != 0)
            return -1;
    }
    return 0;
}

/* The frame's row: x->width values, the outer row's and the locals'
   values in their slots (new references), null elsewhere. */
static int frame_row(frame *f, const evalctx *c)
{
    f->row_width = f->x->width ? f->x->width : 1;
    f->row = mem_calloc(f->x->m, f->row_width * sizeof(value));
    if (!f->row)
        return exec_oom(f->x);
    for (size_t i = 0; i < f->sc.n; i++) {
        const binding *b = &f->sc.b[i];
        if (b->slot >= f->in_width)
            continue;   /* declared by the pattern */
        value v = value_null();
        if (i < f->nouter) {
            v = c->row[b->slot];
        } else {
            for (const local_var *l = c->locals; l; l = l->up)
                if (l->len == b->len && memcmp(l->name, b->name, b->len) == 0) {
                    v = l->v;
                    break;
                }
        }
        value_release(&f->row[b->slot]);
        f->row[b->slot] = value_retain(v);
    }
    return 0;
}

static void frame_close(frame *f)
{
    exec *x = f->x;
    if (f->row) {
        for (size_t i = 0; i < f->row_width; i++)
            value_release(&f->row[i]);
        mem_free(x->m, f->row);
    }
    scope_free(&f->sc);
    if (x->used_rels)
        mem_free(x->m, x->used_rels);
    x->used_rels = f->saved_used;
    x->nused = f->saved_nused;
    x->capused = f->saved_capused;
    x->width = f->saved_width;
    x->no_arena--;
}

/* A PATTERN_PART over path, on the stack: the matcher's unit. */
static cypher_ast_node part_of(const cypher_ast_node *path)
{
    cypher_ast_node part = {.kind = CYPHER_AST_PATTERN_PART, .line = path->line,
                            .column = path->column, .offset = path->offset};
    part.u.part.path = (cypher_ast_node *)path;
    return part;
}

/* ---- pattern predicates ---- */

/* The node a bound end of a probed predicate holds: *node false when it
   is not a live node carrying n's labels (the pattern then matches
   nothing). */
static void probe_end(const evalctx *c, const cypher_ast_node *n, uint64_t *id, bool *node)
{
    strata_view *v = exec_view(c->x);
    const value *val = &c->row[scope_find(c->sc, n->u.node.variable->u.name.ptr,
                                          n->u.node.variable->u.name.len)];
    *node = value_kind(val) == VAL_NODE && strata_node_exists(v, val->u.id);
    for (size_t i = 0; *node && i < n->u.node.labels.count; i++) {
        strata_token t;
        bool has = false;
        *node = strata_token_lookup(v, STRATA_LABEL, n->u.node.labels.items[i]->u.name.ptr,
                                    &t) == STRATA_OK &&
                strata_node_has_label(v, val->u.id, t, &has) == STRATA_OK && has;
    }
    *id = *node ? val->u.id : 0;
}

static bool probe_applies(const evalctx *c, const cypher_ast_node *path)
{
    const cypher_ast_list *el = &path->u.list;
    if (el->count != 3 || c->locals || !c->sc)
        return false;
    const cypher_ast_node *r = el->items[1];
    if (r->u.rel.var_length || r->u.rel.variable || r->u.rel.properties)
        return false;
    for (size_t i = 0; i < 3; i += 2) {
        const cypher_ast_node *n = el->items[i], *var = n->u.node.variable;
        if (!var || n->u.node.properties || n->u.node.labels_any ||
            scope_find(c->sc, var->u.name.ptr,
                                                       var->u.name.len) < 0)
            return false;
    }
    return true;
}

/* `(a)-[:T|U]->(b)` with both ends bound and nothing else said: whether a
   relationship joins them, read from the adjacency of one end, with no
   frame and no walk (*handled false for any other shape). */
static int probe_predicate(const evalctx *c, const cypher_ast_node *path, bool *handled,
                           bool *found)
{
    *handled = *found = false;
    if (!probe_applies(c, path))
        return 0;
    *handled = true;
    const cypher_ast_list *el = &path->u.list;
    const cypher_ast_node *r = el->items[1];
    uint64_t a, b;
    bool ok_a, ok_b;
    probe_end(c, el->items[0], &a, &ok_a);
    probe_end(c, el->items[2], &b, &ok_b);
    if (!ok_a || !ok_b)
        return 0;
    strata_view *v = exec_view(c->x);
    strata_direction dir = r->u.rel.dir == CYPHER_DIR_RIGHT  ? STRATA_OUT
                           : r->u.rel.dir == CYPHER_DIR_LEFT ? STRATA_IN
                                                             : STRATA_BOTH;
    size_t ntypes = r->u.rel.types.count;
    for (size_t t = 0; t < (ntypes ? ntypes : 1) && !*found; t++) {
        strata_token type = STRATA_ANY_TYPE;
        if (ntypes && strata_token_lookup(v, STRATA_RELTYPE, r->u.rel.types.items[t]->u.name.ptr,
                                          &type) != STRATA_OK)
            continue;
        strata_edge_iter *it;
        strata_status st = strata_neighbours(v, a, dir, type, &it);
        if (st != STRATA_OK)
            return exec_status(c->x, r, st);
        strata_id rid, other;
        while (!*found && strata_edge_iter_next(it, &rid, &other))
            *found = other == b;
        strata_edge_iter_free(&it);
    }
    return 0;
}

int eval_pattern_predicate(const evalctx *c, const cypher_ast_node *path, value *out)
{
    bool handled, found = false;
    if (probe_predicate(c, path, &handled, &found) != 0)
        return -1;
    if (handled) {
        *out = value_bool(found);
        return 0;
    }
    cypher_ast_node part = part_of(path);
    frame f;
    int rc = frame_open(c, &f);
    if (rc == 0)
        rc = frame_declare(&f, &part);
    if (rc == 0)
        rc = frame_row(&f, c);
    if (rc == 0)
        rc = match_part_exists(c->x, &part, &f.sc, f.in_width, f.row, &found);
    frame_close(&f);
    if (rc < 0)
        return -1;
    *out = value_bool(found);
    return 0;
}

/* ---- pattern comprehensions ---- */

typedef struct gather {
    const cypher_ast_node *comp;
    const scope *sc;
    value *items;
    size_t n, cap;
} gather;

static int gather_one(exec *x, value *row, void *ctx)
{
    gather *g = ctx;
    evalctx ic = {x, g->sc, row, NULL, NULL};
    if (exec_tick(x) != 0)
        return -1;
    if (g->comp->u.comprehension.where) {
        tri t;
        if (eval_predicate(&ic, g->comp->u.comprehension.where, &t) != 0)
            return -1;
        if (t != TRI_TRUE)
            return 0;
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 8;
        value *it = mem_realloc(x->m, g->items, cap * sizeof *it);
        if (!it)
            return exec_oom(x);
        g->items = it;
        g->cap = cap;
    }
    if (eval(&ic, g->comp->u.comprehension.result, &g->items[g->n]) != 0)
        return -1;
    g->n++;
    return 0;
}

int eval_pattern_comprehension(const evalctx *c, const cypher_ast_node *e, value *out)
{
    const cypher_ast_node *part = e->u.comprehension.source;
    frame f;
    gather g = {.comp = e};
    int rc = frame_open(c, &f);
    if (rc == 0)
        rc = frame_declare(&f, part);
    if (rc == 0)
        rc = frame_row(&f, c);
    g.sc = &f.sc;
    if (rc == 0)
        rc = match_part_row(c->x, part, &f.sc, f.in_width, e->u.comprehension.where, f.row,
                            gather_one, &g);
    frame_close(&f);
    if (rc == 0 && (rc = value_list_from(c->x->m, g.items, g.n, out)) != 0)
        rc = exec_value_fail(c->x, e, rc);
    if (rc != 0)
        for (size_t i = 0; i < g.n; i++)
            value_release(&g.items[i]);
    if (g.items)
        mem_free(c->x->m, g.items);
    return rc == 0 ? 0 : -1;
}

/* ---- EXISTS subqueries ---- */

/* Runs the reading clauses of q over cur (one row: the outer one),
   replacing cur by the rows the last clause produced. */
static int run_subquery_clauses(exec *x, const cypher_ast_node *q, scope *sc, rowset *cur)
{
    for (size_t i = 0; i < q->u.list.count; i++) {
        const cypher_ast_node *cl = q->u.list.items[i];
        rowset next;
        rowset_init(&next, cur->width);
        int rc;
        switch (cl->kind) {
        case CYPHER_AST_MATCH:
        case CYPHER_AST_UNWIND:
        case CYPHER_AST_WITH:
        case CYPHER_AST_RETURN:
            x->nested++;
            rc = stage_streams(cl) ? pipeline_run(x, &cl, 1, sc, cur, &next, NULL)
                                   : op_project(x, cl, sc, cur, &next, NULL);
            x->nested--;
            break;
        default:
            /* the parser refuses updates inside EXISTS; this is the
               defensive second line */
            rc = exec_fail(x, cl, "SyntaxError", "InvalidClauseComposition",
                           "an EXISTS subquery cannot contain %s",
                           cypher_ast_kind_name(cl->kind));
            break;
        }
        rowset_free(cur);
        *cur = next;
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* Whether the single query q yields a row for the outer row of c. */
static int subquery_yields(const evalctx *c, const cypher_ast_node *q, bool *yields)
{
    frame f;
    rowset cur;
    rowset_init(&cur, 0);
    int rc = frame_open(c, &f);
    if (rc == 0)
        rc = frame_row(&f, c);
    if (rc == 0) {
        rowset_init(&cur, f.in_width);
        /* the row is handed over: its cells are left null */
        rc = rowset_push(c->x, &cur, f.row);
    }
    if (rc == 0)
        rc = run_subquery_clauses(c->x, q, &f.sc, &cur);
    *yields = rc == 0 && cur.nrows > 0;
    rowset_free(&cur);
    frame_close(&f);
    return rc;
}

int eval_exists_subquery(const evalctx *c, const cypher_ast_node *e, value *out)
{
    const cypher_ast_node *body = e->u.unary.operand;
    bool yields = false;
    if (body->kind == CYPHER_AST_UNION) {
        for (size_t i = 0; i < body->u.union_.queries.count && !yields; i++)
            if (subquery_yields(c, body->u.union_.queries.items[i], &yields) != 0)
                return -1;
    } else if (subquery_yields(c, body, &yields) != 0) {
        return -1;
    }
    *out = value_bool(yields);
    return 0;
}
