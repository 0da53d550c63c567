/*
 * semantic — the checks between parsing and execution that need scopes:
 * every variable an expression reads is defined at that point (clause
 * order, WITH resetting the scope, comprehension and reduce variables
 * local to their expression), aggregates appear only in WITH / RETURN
 * items and ORDER BY, and UNWIND and LOAD CSV declare a new name.
 *
 * The category is the one the openCypher TCK expects for compile-time
 * errors: SyntaxError, with the TCK detail (UndefinedVariable,
 * InvalidAggregation, ...).  SPEC §8's SemanticError is kept for errors
 * the TCK does not classify.
 */
#include <string.h>

#include "query/exec.h"

#define COMPILE_ERROR "SyntaxError"

/* What a name is known to hold, for the pattern checks: a node, a
   relationship (or a list of them, from a variable-length pattern), a
   path, a literal value (never an entity), or anything. */
enum { K_ANY, K_NODE, K_REL, K_PATH, K_VALUE };

typedef struct names {
    const cypher_ast_str *v[256];
    unsigned char k[256];
    size_t n;
} names;

typedef struct sctx {
    exec *x;
    names *sc;
} sctx;

static bool has(const names *s, const char *p, size_t len)
{
    for (size_t i = s->n; i-- > 0;)
        if (s->v[i]->len == len && memcmp(s->v[i]->ptr, p, len) == 0)
            return true;
    return false;
}

/* The kind of a name in scope, or -1. */
static int kind_of(const names *s, const char *p, size_t len)
{
    for (size_t i = s->n; i-- > 0;)
        if (s->v[i]->len == len && memcmp(s->v[i]->ptr, p, len) == 0)
            return s->k[i];
    return -1;
}

/* Appends name (shadowing an earlier one: comprehension locals). */
static int push(exec *x, names *s, const cypher_ast_str *name, const cypher_ast_node *at, int k)
{
    if (s->n == sizeof s->v / sizeof *s->v)
        return exec_fail(x, at, "SemanticError", NULL, "too many variables");
    s->k[s->n] = (unsigned char)k;
    s->v[s->n++] = name;
    return 0;
}

static int add_kind(exec *x, names *s, const cypher_ast_str *name, const cypher_ast_node *at,
                    int k)
{
    if (has(s, name->ptr, name->len))
        return 0;
    return push(x, s, name, at, k);
}

static int add(exec *x, names *s, const cypher_ast_str *name, const cypher_ast_node *at)
{
    return add_kind(x, s, name, at, K_ANY);
}

static int check_expr(exec *x, names *sc, const cypher_ast_node *e);

static int child(const cypher_ast_node *c, void *ctx)
{
    sctx *s = ctx;
    return check_expr(s->x, s->sc, c) != 0 ? 1 : 0;
}

static int check_expr(exec *x, names *sc, const cypher_ast_node *e)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case CYPHER_AST_VARIABLE:
        if (!has(sc, e->u.name.ptr, e->u.name.len))
            return exec_fail(x, e, COMPILE_ERROR, "UndefinedVariable",
                             "variable `%s` not defined", e->u.name.ptr);
        return 0;
    case CYPHER_AST_LIST_COMPREHENSION:
    case CYPHER_AST_QUANTIFIER: {
        if (check_expr(x, sc, e->u.comprehension.source) != 0)
            return -1;
        size_t mark = sc->n;
        if (push(x, sc, &e->u.comprehension.variable->u.name, e, K_ANY) != 0)
            return -1;
        int rc = check_expr(x, sc, e->u.comprehension.where);
        if (rc == 0)
            rc = check_expr(x, sc, e->u.comprehension.result);
        sc->n = mark;
        return rc;
    }
    case CYPHER_AST_REDUCE: {
        if (check_expr(x, sc, e->u.reduce.init) != 0 ||
            check_expr(x, sc, e->u.reduce.source) != 0)
            return -1;
        size_t mark = sc->n;
        int rc = push(x, sc, &e->u.reduce.accumulator->u.name, e, K_ANY);
        if (rc == 0)
            rc = push(x, sc, &e->u.reduce.variable->u.name, e, K_ANY);
        if (rc == 0)
            rc = check_expr(x, sc, e->u.reduce.result);
        sc->n = mark;
        return rc;
    }
    case CYPHER_AST_PROPERTY:
        if (e->u.property.subject->kind == CYPHER_AST_VARIABLE &&
            kind_of(sc, e->u.property.subject->u.name.ptr, e->u.property.subject->u.name.len) ==
                K_PATH)
            return exec_fail(x, e, COMPILE_ERROR, "InvalidArgumentType",
                             "a path has no properties");
        break;
    case CYPHER_AST_PATH:
    case CYPHER_AST_EXISTS:
    case CYPHER_AST_PATTERN_COMPREHENSION:
        return exec_fail(x, e, COMPILE_ERROR, NULL,
                         "patterns in expressions are not supported yet");
    case CYPHER_AST_FUNCTION:
        if (!is_aggregate_call(e) && !function_known(e->u.function.name.ptr,
                                                     e->u.function.name.len))
            return exec_fail(x, e, COMPILE_ERROR, "UnknownFunction",
                             "unknown function %s()", e->u.function.name.ptr);
        break;
    default:
        break;
    }
    sctx s = {x, sc};
    return cypher_ast_each_child(e, child, &s) != 0 ? -1 : 0;
}

static int no_aggregate(exec *x, const cypher_ast_node *e)
{
    if (e && expr_has_aggregate(e))
        return exec_fail(x, e, COMPILE_ERROR, "InvalidAggregation",
                         "aggregation is not allowed here");
    return 0;
}

/* Pattern: property maps see the variables bound so far; then every
   variable of the pattern is added.  Variable-length relationships and
   shortestPath only in MATCH (rels not NULL: the relationship variables
   of the MATCH so far, which may not repeat). */
static int check_part(exec *x, names *sc, const cypher_ast_node *part, names *rels)
{
    bool matching = rels != NULL;
    const cypher_ast_list *el = &part->u.part.path->u.list;
    if (part->u.part.kind != CYPHER_PATH_PLAIN) {
        if (!matching)
            return exec_fail(x, part, COMPILE_ERROR, NULL,
                             "shortestPath is only allowed in MATCH");
        if (el->count != 3)
            return exec_fail(x, part, COMPILE_ERROR, NULL,
                             "shortestPath needs a pattern of one relationship");
    }
    for (size_t i = 0; i < el->count; i++) {
        const cypher_ast_node *e = el->items[i];
        if (e->kind == CYPHER_AST_REL && e->u.rel.var_length && !matching)
            return exec_fail(x, e, COMPILE_ERROR, "CreatingVarLength",
                             "variable-length relationships cannot be created");
        const cypher_ast_node *props = e->kind == CYPHER_AST_NODE ? e->u.node.properties
                                                                  : e->u.rel.properties;
        if (check_expr(x, sc, props) != 0 || no_aggregate(x, props) != 0)
            return -1;
        const cypher_ast_node *v = e->kind == CYPHER_AST_NODE ? e->u.node.variable
                                                              : e->u.rel.variable;
        int want = e->kind == CYPHER_AST_NODE ? K_NODE : K_REL;
        int have = v ? kind_of(sc, v->u.name.ptr, v->u.name.len) : -1;
        if (v && want == K_REL && rels) {
            if (has(rels, v->u.name.ptr, v->u.name.len))
                return exec_fail(x, v, COMPILE_ERROR, "RelationshipUniquenessViolation",
                                 "relationship `%s` used twice in one pattern", v->u.name.ptr);
            if (add(x, rels, &v->u.name, v) != 0)
                return -1;
        }
        /* a literal list may stand for the relationships of a
           variable-length pattern */
        if (have == K_VALUE && want == K_REL && e->u.rel.var_length)
            have = K_ANY;
        if (have > K_ANY && have != want)
            return exec_fail(x, v, COMPILE_ERROR, "VariableTypeConflict",
                             "variable `%s` is not a %s", v->u.name.ptr,
                             want == K_NODE ? "node" : "relationship");
        if (v && add_kind(x, sc, &v->u.name, v, want) != 0)
            return -1;
    }
    const cypher_ast_node *pv = part->u.part.variable;
    if (pv && has(sc, pv->u.name.ptr, pv->u.name.len))
        return exec_fail(x, pv, COMPILE_ERROR, "VariableAlreadyBound",
                         "variable `%s` already declared", pv->u.name.ptr);
    if (pv && add_kind(x, sc, &pv->u.name, part, K_PATH) != 0)
        return -1;
    return 0;
}

static int check_set_item(exec *x, names *sc, const cypher_ast_node *it)
{
    if (it->kind == CYPHER_AST_SET_LABELS || it->kind == CYPHER_AST_REMOVE_LABELS)
        return check_expr(x, sc, it->u.labels.subject);
    if (check_expr(x, sc, it->u.assign.target) != 0 || check_expr(x, sc, it->u.assign.value) != 0)
        return -1;
    return no_aggregate(x, it->u.assign.value);
}

static int check_query(exec *x, const cypher_ast_node *q)
{
    names sc = {.n = 0};
    for (size_t c = 0; c < q->u.list.count; c++) {
        const cypher_ast_node *cl = q->u.list.items[c];
        switch (cl->kind) {
        case CYPHER_AST_MATCH:
        {
            names rels = {.n = 0};
            for (size_t i = 0; i < cl->u.match.parts.count; i++)
                if (check_part(x, &sc, cl->u.match.parts.items[i], &rels) != 0)
                    return -1;
        }
            if (check_expr(x, &sc, cl->u.match.where) != 0 ||
                no_aggregate(x, cl->u.match.where) != 0)
                return -1;
            break;
        case CYPHER_AST_UNWIND:
            if (check_expr(x, &sc, cl->u.unwind.expr) != 0 ||
                no_aggregate(x, cl->u.unwind.expr) != 0)
                return -1;
            if (has(&sc, cl->u.unwind.alias->u.name.ptr, cl->u.unwind.alias->u.name.len))
                return exec_fail(x, cl->u.unwind.alias, COMPILE_ERROR, "VariableAlreadyBound",
                                 "variable `%s` already declared",
                                 cl->u.unwind.alias->u.name.ptr);
            if (add(x, &sc, &cl->u.unwind.alias->u.name, cl) != 0)
                return -1;
            break;
        case CYPHER_AST_LOAD_CSV:
            if (check_expr(x, &sc, cl->u.load_csv.source) != 0 ||
                no_aggregate(x, cl->u.load_csv.source) != 0)
                return -1;
            if (has(&sc, cl->u.load_csv.alias->u.name.ptr, cl->u.load_csv.alias->u.name.len))
                return exec_fail(x, cl->u.load_csv.alias, COMPILE_ERROR, "VariableAlreadyBound",
                                 "variable `%s` already declared",
                                 cl->u.load_csv.alias->u.name.ptr);
            if (add(x, &sc, &cl->u.load_csv.alias->u.name, cl) != 0)
                return -1;
            break;
        case CYPHER_AST_CREATE:
            for (size_t i = 0; i < cl->u.list.count; i++)
                if (check_part(x, &sc, cl->u.list.items[i], NULL) != 0)
                    return -1;
            break;
        case CYPHER_AST_MERGE:
            if (check_part(x, &sc, cl->u.merge.part, NULL) != 0)
                return -1;
            for (size_t a = 0; a < cl->u.merge.actions.count; a++) {
                const cypher_ast_node *act = cl->u.merge.actions.items[a];
                for (size_t i = 0; i < act->u.merge_action.items.count; i++)
                    if (check_set_item(x, &sc, act->u.merge_action.items.items[i]) != 0)
                        return -1;
            }
            break;
        case CYPHER_AST_SET:
        case CYPHER_AST_REMOVE:
            for (size_t i = 0; i < cl->u.list.count; i++)
                if (check_set_item(x, &sc, cl->u.list.items[i]) != 0)
                    return -1;
            break;
        case CYPHER_AST_DELETE:
            for (size_t i = 0; i < cl->u.delete_.exprs.count; i++) {
                const cypher_ast_node *e = cl->u.delete_.exprs.items[i];
                if (check_expr(x, &sc, e) != 0 || no_aggregate(x, e) != 0)
                    return -1;
            }
            break;
        case CYPHER_AST_WITH:
        case CYPHER_AST_RETURN: {
            names next = {.n = 0};
            if (cl->u.projection.star)
                next = sc;
            const cypher_ast_list *its = &cl->u.projection.items;
            bool aggregating = false;
            for (size_t i = 0; i < its->count; i++) {
                const cypher_ast_node *pi = its->items[i];
                if (check_expr(x, &sc, pi->u.alias.expr) != 0)
                    return -1;
                aggregating |= expr_has_aggregate(pi->u.alias.expr);
                if (cl->kind == CYPHER_AST_WITH && !pi->u.alias.alias &&
                    pi->u.alias.expr->kind != CYPHER_AST_VARIABLE)
                    return exec_fail(x, pi, COMPILE_ERROR, "NoExpressionAlias",
                                     "expression in WITH must be aliased (use AS)");
                const cypher_ast_str *nm = pi->u.alias.alias ? &pi->u.alias.alias->u.name
                                                             : &pi->u.alias.text;
                const cypher_ast_node *pe = pi->u.alias.expr;
                int k = K_ANY;
                if (pe->kind == CYPHER_AST_VARIABLE)
                    k = kind_of(&sc, pe->u.name.ptr, pe->u.name.len);
                else if (pe->kind == CYPHER_AST_BOOL_LIT || pe->kind == CYPHER_AST_INT_LIT ||
                         pe->kind == CYPHER_AST_FLOAT_LIT || pe->kind == CYPHER_AST_STRING_LIT ||
                         pe->kind == CYPHER_AST_LIST || pe->kind == CYPHER_AST_MAP)
                    k = K_VALUE;
                if (add_kind(x, &next, nm, pi, k < 0 ? K_ANY : k) != 0)
                    return -1;
            }
            /* ORDER BY sees the projection and, without aggregation or
               DISTINCT, the variables before it */
            names both = aggregating || cl->u.projection.distinct ? next : sc;
            for (size_t i = 0; i < next.n; i++)
                if (add_kind(x, &both, next.v[i], cl, next.k[i]) != 0)
                    return -1;
            for (size_t i = 0; i < cl->u.projection.order.count; i++) {
                const cypher_ast_node *e = cl->u.projection.order.items[i]->u.sort.expr;
                if (!expr_has_aggregate(e) && check_expr(x, &both, e) != 0)
                    return -1;
            }
            /* WITH's WHERE sees what ORDER BY sees: without aggregation,
               the variables before the WITH too. */
            names where_names = aggregating ? next : sc;
            if (!aggregating)
                for (size_t i = 0; i < next.n; i++)
                    if (add_kind(x, &where_names, next.v[i], cl, next.k[i]) != 0)
                        return -1;
            if (check_expr(x, &where_names, cl->u.projection.where) != 0 ||
                no_aggregate(x, cl->u.projection.where) != 0)
                return -1;
            const cypher_ast_node *sl[2] = {cl->u.projection.skip, cl->u.projection.limit};
            for (int k = 0; k < 2; k++) {
                names none = {.n = 0};
                if (sl[k] && check_expr(x, &none, sl[k]) != 0) {
                    x->err.detail = "NonConstantExpression";
                    return -1;
                }
            }
            sc = next;
            break;
        }
        default:
            return exec_fail(x, cl, COMPILE_ERROR, NULL, "%s is not supported yet",
                             cypher_ast_kind_name(cl->kind));
        }
    }
    return 0;
}

int semantic_check(exec *x, const cypher_ast_node *body)
{
    if (body->kind == CYPHER_AST_UNION) {
        for (size_t i = 0; i < body->u.union_.queries.count; i++)
            if (check_query(x, body->u.union_.queries.items[i]) != 0)
                return -1;
        return 0;
    }
    if (body->kind != CYPHER_AST_QUERY)
        return exec_fail(x, body, COMPILE_ERROR, NULL, "%s is not supported yet",
                         cypher_ast_kind_name(body->kind));
    return check_query(x, body);
}
