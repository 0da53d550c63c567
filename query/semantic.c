/*
 * semantic — the checks between parsing and execution that need scopes:
 * every variable an expression reads is defined at that point (clause
 * order, WITH resetting the scope, comprehension and reduce variables
 * local to their expression), aggregates appear only in WITH / RETURN
 * items and ORDER BY, and UNWIND and LOAD CSV declare a new name.
 *
 * The category is the one the openCypher TCK expects for compile-time
 * errors: SyntaxError, with the TCK detail (UndefinedVariable,
 * InvalidAggregation, ...).  The SemanticError category (docs/QUERY.md) is kept for errors
 * the TCK does not classify.
 */
#include <string.h>
#include <strings.h>

#include "query/exec.h"

#define COMPILE_ERROR "SyntaxError"

/* What a name is known to hold, for the pattern checks: a node, a
   relationship (or a list of them, from a variable-length pattern), a
   path, a literal value (never an entity), or anything. */
enum { K_ANY, K_NODE, K_REL, K_PATH, K_VALUE };

/* Every array of names one check makes, freed together when it ends, so
   that scopes can be copied and grown without an owner for each. */
typedef struct name_block {
    struct name_block *next;
} name_block;

typedef struct name_arena {
    exec *x;
    name_block *blocks;
} name_arena;

/* The most names in scope at one point of a query (so the most RETURN or
   WITH items): far beyond any query written by hand, and it bounds the
   linear lookups below (a scope is searched once per name it declares):
   16,384 columns check in about 2 s, 10,000 in 0.7 s (release build). */
#define NAMES_MAX 16384

typedef struct names {
    name_arena *arena;
    const cypher_ast_str **v;
    unsigned char *k;
    size_t n, cap;
    unsigned depth;     /* EXISTS subqueries around this scope */
    /* In a sort key after aggregation or DISTINCT: the projection items,
       whose expressions stand for their values wherever written alike. */
    const cypher_ast_list *known;
} names;

/* Each nested EXISTS subquery checks with scopes of its own on the stack
   (a few KB each): deeper nesting is refused rather than risk the stack. */
#define SUBQUERY_MAX_DEPTH 32

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

static void *arena_alloc(name_arena *a, size_t size)
{
    size_t total = sizeof(name_block) + size;
    name_block *b = mem_alloc(a->x->m, total);
    if (!b)
        return NULL;
    b->next = a->blocks;
    a->blocks = b;
    return b + 1;
}

static void arena_free(name_arena *a)
{
    while (a->blocks) {
        name_block *b = a->blocks;
        a->blocks = b->next;
        mem_free(a->x->m, b);
    }
}

/* Room for `want` names (new arrays: a scope copied from s keeps the old
   ones). */
static int names_reserve(exec *x, names *s, size_t want, const cypher_ast_node *at)
{
    if (want <= s->cap)
        return 0;
    if (want > NAMES_MAX)
        return exec_fail(x, at, "SemanticError", NULL,
                         "too many variables in scope (the limit is %d)", NAMES_MAX);
    size_t cap = s->cap ? s->cap : 16;
    while (cap < want)
        cap *= 2;
    const cypher_ast_str **v = arena_alloc(s->arena, cap * sizeof *v);
    unsigned char *k = v ? arena_alloc(s->arena, cap) : NULL;
    if (!k)
        return exec_oom(x);
    if (s->n) {
        memcpy(v, s->v, s->n * sizeof *v);
        memcpy(k, s->k, s->n);
    }
    s->v = v;
    s->k = k;
    s->cap = cap;
    return 0;
}

/* *dst = a copy of src that can grow apart from it. */
static int names_fork(exec *x, names *dst, const names *src)
{
    *dst = *src;
    dst->v = NULL;
    dst->k = NULL;
    dst->n = dst->cap = 0;
    if (names_reserve(x, dst, src->n, NULL) != 0)
        return -1;
    if (src->n) {
        memcpy(dst->v, src->v, src->n * sizeof *dst->v);
        memcpy(dst->k, src->k, src->n);
    }
    dst->n = src->n;
    return 0;
}

/* Appends name (shadowing an earlier one: comprehension locals). */
static int push(exec *x, names *s, const cypher_ast_str *name, const cypher_ast_node *at, int k)
{
    if (s->n == s->cap && names_reserve(x, s, s->n + 1, at) != 0)
        return -1;
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
static int check_part(exec *x, names *sc, const cypher_ast_node *part, names *rels);
static int check_query(exec *x, name_arena *a, const cypher_ast_node *q, const names *outer);
static int no_aggregate(exec *x, const cypher_ast_node *e);

/* A pattern predicate tests a pattern over bound variables: it may not
   introduce new ones (openCypher; use EXISTS { } for that). */
static int check_pattern_predicate(exec *x, names *sc, const cypher_ast_node *path)
{
    const cypher_ast_list *el = &path->u.list;
    for (size_t i = 0; i < el->count; i++) {
        const cypher_ast_node *e = el->items[i];
        bool is_node = e->kind == CYPHER_AST_NODE;
        const cypher_ast_node *v = is_node ? e->u.node.variable : e->u.rel.variable;
        const cypher_ast_node *props = is_node ? e->u.node.properties : e->u.rel.properties;
        if (v && !has(sc, v->u.name.ptr, v->u.name.len))
            return exec_fail(x, v, COMPILE_ERROR, "UndefinedVariable",
                             "variable `%s` not defined (a pattern predicate cannot "
                             "introduce variables)", v->u.name.ptr);
        if (check_expr(x, sc, props) != 0 || no_aggregate(x, props) != 0)
            return -1;
    }
    return 0;
}

/* [pattern WHERE p | result]: the pattern's new variables are local. */
static int check_pattern_comprehension(exec *x, names *sc, const cypher_ast_node *e)
{
    size_t mark = sc->n;
    names rels = {.arena = sc->arena};
    int rc = check_part(x, sc, e->u.comprehension.source, &rels);
    if (rc == 0)
        rc = check_expr(x, sc, e->u.comprehension.where);
    if (rc == 0)
        rc = no_aggregate(x, e->u.comprehension.where);
    if (rc == 0)
        rc = check_expr(x, sc, e->u.comprehension.result);
    sc->n = mark;
    return rc;
}

/* EXISTS { query }: the query sees the variables in scope around it. */
static int check_exists(exec *x, names *sc, const cypher_ast_node *e)
{
    const cypher_ast_node *body = e->u.unary.operand;
    if (sc->depth >= SUBQUERY_MAX_DEPTH)
        return exec_fail(x, e, COMPILE_ERROR, NULL, "EXISTS subqueries nested too deeply");
    sc->depth++;
    int rc = 0;
    if (body->kind == CYPHER_AST_UNION) {
        for (size_t i = 0; i < body->u.union_.queries.count && rc == 0; i++)
            rc = check_query(x, sc->arena, body->u.union_.queries.items[i], sc);
    } else {
        rc = check_query(x, sc->arena, body, sc);
    }
    sc->depth--;
    return rc;
}

static int child(const cypher_ast_node *c, void *ctx)
{
    sctx *s = ctx;
    return check_expr(s->x, s->sc, c) != 0 ? 1 : 0;
}

/* What e is known to hold before running: a variable's kind, K_VALUE for
   a literal that is no map (a map may stand for an entity's properties),
   else K_ANY. */
static int static_kind(const names *sc, const cypher_ast_node *e)
{
    switch (e->kind) {
    case CYPHER_AST_VARIABLE: {
        int k = kind_of(sc, e->u.name.ptr, e->u.name.len);
        return k < 0 ? K_ANY : k;
    }
    case CYPHER_AST_INT_LIT:
    case CYPHER_AST_FLOAT_LIT:
    case CYPHER_AST_STRING_LIT:
    case CYPHER_AST_BOOL_LIT:
    case CYPHER_AST_LIST:
        return K_VALUE;
    default:
        return K_ANY;
    }
}

#define KIND_BIT(k) (1u << (k))

/* Entity functions and the kinds of argument they accept: one known to be
   of another kind is a compile-time InvalidArgumentType. */
static const struct arg_kinds {
    const char *name;
    unsigned accepted;
} entity_functions[] = {
    {"labels", KIND_BIT(K_NODE)},
    {"type", KIND_BIT(K_REL)},
    {"length", KIND_BIT(K_PATH) | KIND_BIT(K_VALUE)},
    {"properties", KIND_BIT(K_NODE) | KIND_BIT(K_REL)},
};

static int check_argument_kind(exec *x, const names *sc, const cypher_ast_node *call)
{
    if (call->u.function.args.count != 1)
        return 0;
    const cypher_ast_node *arg = call->u.function.args.items[0];
    int k = static_kind(sc, arg);
    if (k == K_ANY)
        return 0;
    for (size_t i = 0; i < sizeof entity_functions / sizeof *entity_functions; i++)
        if (strcasecmp(call->u.function.name.ptr, entity_functions[i].name) == 0 &&
            !(entity_functions[i].accepted & KIND_BIT(k)))
            return exec_fail(x, arg, COMPILE_ERROR, "InvalidArgumentType",
                             "%s() cannot take this argument", entity_functions[i].name);
    return 0;
}

/* A predicate known to hold a node, relationship or path can never be a
   boolean (`WHERE (n)`). */
static int check_predicate_kind(exec *x, const names *sc, const cypher_ast_node *e)
{
    int k = e ? static_kind(sc, e) : K_ANY;
    if (k == K_NODE || k == K_REL || k == K_PATH)
        return exec_fail(x, e, COMPILE_ERROR, "InvalidArgumentType",
                         "a %s is not a predicate",
                         k == K_NODE ? "node" : k == K_REL ? "relationship" : "path");
    return 0;
}

/* Whether e is written like the expression of one of the items. */
static bool is_projected(exec *x, const cypher_ast_list *items, const cypher_ast_node *e)
{
    for (size_t i = 0; i < items->count; i++)
        if (expr_same(x, items->items[i]->u.alias.expr, e))
            return true;
    return false;
}

static int check_expr(exec *x, names *sc, const cypher_ast_node *e)
{
    if (!e)
        return 0;
    if (sc->known && is_projected(x, sc->known, e))
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
        return check_pattern_predicate(x, sc, e);
    case CYPHER_AST_PATTERN_COMPREHENSION:
        return check_pattern_comprehension(x, sc, e);
    case CYPHER_AST_EXISTS:
        return check_exists(x, sc, e);
    case CYPHER_AST_FUNCTION:
        if (!is_aggregate_call(e) && !function_known(e->u.function.name.ptr,
                                                     e->u.function.name.len))
            return exec_fail(x, e, COMPILE_ERROR, "UnknownFunction",
                             "unknown function %s()", e->u.function.name.ptr);
        if (check_argument_kind(x, sc, e) != 0)
            return -1;
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

/* ---- aggregation: what an aggregating projection and its sort keys may read ---- */

typedef struct agg_walk {
    exec *x;
    const cypher_ast_list *items;   /* the projection's items */
    const names *input;             /* the variables before the projection */
    names locals;                   /* comprehension variables met on the way */
    const cypher_ast_node *bad;
    const char *detail;
} agg_walk;

/* Whether e is written like a projected item that does not aggregate. */
static bool is_grouping_key(agg_walk *w, const cypher_ast_node *e)
{
    for (size_t i = 0; i < w->items->count; i++) {
        const cypher_ast_node *ie = w->items->items[i]->u.alias.expr;
        if (!expr_has_aggregate(ie) && expr_same(w->x, ie, e))
            return true;
    }
    return false;
}

static int calls_rand(const cypher_ast_node *e, void *ctx)
{
    (void)ctx;
    if (e->kind == CYPHER_AST_FUNCTION && strcasecmp(e->u.function.name.ptr, "rand") == 0)
        return 1;
    return cypher_ast_each_child(e, calls_rand, NULL);
}

/* Outside its aggregate calls an aggregating item is evaluated once per
   group, so it may read only grouping keys: a variable projected as one,
   or a property of a variable written exactly like a key.  Anything else
   would be ambiguous (openCypher: AmbiguousAggregationExpression). */
static int grouping_ref(const cypher_ast_node *e, void *ctx)
{
    agg_walk *w = ctx;
    if (is_aggregate_call(e)) {
        if (cypher_ast_each_child(e, calls_rand, NULL) != 0) {
            w->bad = e;
            w->detail = "NonConstantExpression";
            return 1;
        }
        return 0;
    }
    switch (e->kind) {
    case CYPHER_AST_EXISTS:
    case CYPHER_AST_PATTERN_COMPREHENSION:
        return 0;   /* their own scopes: checked elsewhere */
    case CYPHER_AST_VARIABLE:
        if (has(&w->locals, e->u.name.ptr, e->u.name.len) ||
            !has(w->input, e->u.name.ptr, e->u.name.len) || is_grouping_key(w, e))
            return 0;
        w->bad = e;
        w->detail = "AmbiguousAggregationExpression";
        return 1;
    case CYPHER_AST_PROPERTY:
        if (e->u.property.subject->kind == CYPHER_AST_VARIABLE && is_grouping_key(w, e))
            return 0;
        break;
    case CYPHER_AST_LIST_COMPREHENSION:
    case CYPHER_AST_QUANTIFIER:
    case CYPHER_AST_REDUCE: {
        const cypher_ast_node *v = e->kind == CYPHER_AST_REDUCE ? e->u.reduce.variable
                                                              : e->u.comprehension.variable;
        size_t mark = w->locals.n;
        int rc = push(w->x, &w->locals, &v->u.name, e, K_ANY);
        if (rc == 0 && e->kind == CYPHER_AST_REDUCE)
            rc = push(w->x, &w->locals, &e->u.reduce.accumulator->u.name, e, K_ANY);
        if (rc == 0)
            rc = cypher_ast_each_child(e, grouping_ref, ctx);
        w->locals.n = mark;
        return rc;
    }
    default:
        break;
    }
    return cypher_ast_each_child(e, grouping_ref, ctx);
}

static int check_grouping(exec *x, const cypher_ast_list *items, const names *input,
                          const cypher_ast_node *e)
{
    agg_walk w = {.x = x, .items = items, .input = input, .locals = {.arena = input->arena}};
    if (grouping_ref(e, &w) == 0)
        return 0;
    if (x->err.category)
        return -1;
    if (strcmp(w.detail, "NonConstantExpression") == 0)
        return exec_fail(x, w.bad, COMPILE_ERROR, w.detail,
                         "an aggregate's argument cannot call rand()");
    return exec_fail(x, w.bad, COMPILE_ERROR, w.detail,
                     "`%s` is neither a grouping key nor inside an aggregate",
                     w.bad->u.name.ptr);
}

/* An aggregate call in e that is not written like a projected item. */
static int unprojected_aggregate(const cypher_ast_node *e, void *ctx)
{
    agg_walk *w = ctx;
    if (w->items && is_projected(w->x, w->items, e))
        return 0;
    if (is_aggregate_call(e)) {
        w->bad = e;
        return 1;
    }
    if (e->kind == CYPHER_AST_EXISTS)
        return 0;
    return cypher_ast_each_child(e, unprojected_aggregate, ctx);
}

/* A sort key: after an aggregating projection it may aggregate only as a
   projected item does; without one it may not aggregate at all (there are
   no groups to aggregate over). */
static int check_sort_key(exec *x, names *sc, const cypher_ast_node *e, bool aggregating)
{
    agg_walk w = {.x = x, .items = aggregating ? sc->known : NULL,
                  .locals = {.arena = sc->arena}};
    if (unprojected_aggregate(e, &w) != 0) {
        if (x->err.category)
            return -1;
        return exec_fail(x, w.bad, COMPILE_ERROR, "InvalidAggregation",
                         aggregating ? "an aggregate in ORDER BY must also be projected"
                                     : "aggregation in ORDER BY needs an aggregating "
                                       "projection");
    }
    return check_expr(x, sc, e);
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
        /* CREATE and MERGE may name a bound node only to attach a
           relationship to it, never to give it labels or properties */
        if (!matching && v && want == K_NODE && have >= 0 &&
            (e->u.node.labels.count || e->u.node.properties || el->count == 1))
            return exec_fail(x, v, COMPILE_ERROR, "VariableAlreadyBound",
                             "variable `%s` already declared", v->u.name.ptr);
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

/* DELETE takes nodes, relationships and paths (or lists or nulls of
   them): a literal or arithmetic can never be one. */
static int check_deletable(exec *x, const names *sc, const cypher_ast_node *e)
{
    /* a run's last operator is its outermost (ast.h, BINARY_CHAIN) */
    cypher_ast_op op = e->kind == CYPHER_AST_BINARY         ? e->u.binary.op
                       : e->kind == CYPHER_AST_BINARY_CHAIN ? e->u.fold.ops[e->u.fold.nops - 1]
                                                            : CYPHER_OP_AND;
    bool arithmetic = op == CYPHER_OP_ADD || op == CYPHER_OP_SUB || op == CYPHER_OP_MUL ||
                      op == CYPHER_OP_DIV || op == CYPHER_OP_MOD || op == CYPHER_OP_POW;
    if (arithmetic || (static_kind(sc, e) == K_VALUE && e->kind != CYPHER_AST_VARIABLE &&
                       e->kind != CYPHER_AST_LIST))
        return exec_fail(x, e, COMPILE_ERROR, "InvalidArgumentType",
                         "DELETE expects a node, relationship or path");
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

/* outer: the names visible around an EXISTS subquery, or NULL. */
static int check_query(exec *x, name_arena *arena, const cypher_ast_node *q, const names *outer)
{
    names sc = {.arena = arena};
    if (outer && names_fork(x, &sc, outer) != 0)
        return -1;
    sc.known = NULL;   /* the stand-ins of a sort key around it are not its own */
    for (size_t c = 0; c < q->u.list.count; c++) {
        const cypher_ast_node *cl = q->u.list.items[c];
        switch (cl->kind) {
        case CYPHER_AST_MATCH:
        {
            names rels = {.arena = arena};
            for (size_t i = 0; i < cl->u.match.parts.count; i++)
                if (check_part(x, &sc, cl->u.match.parts.items[i], &rels) != 0)
                    return -1;
        }
            if (check_expr(x, &sc, cl->u.match.where) != 0 ||
                no_aggregate(x, cl->u.match.where) != 0 ||
                check_predicate_kind(x, &sc, cl->u.match.where) != 0)
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
        case CYPHER_AST_CALL:
            if (call_check(x, cl) != 0)
                return -1;
            for (size_t i = 0; i < cl->u.call.yields.count; i++) {
                const cypher_ast_node *y = cl->u.call.yields.items[i];
                const cypher_ast_node *v = y->u.alias.alias ? y->u.alias.alias : y->u.alias.expr;
                if (add(x, &sc, &v->u.name, y) != 0)
                    return -1;
            }
            if (check_expr(x, &sc, cl->u.call.where) != 0)
                return -1;
            break;
        case CYPHER_AST_DELETE:
            for (size_t i = 0; i < cl->u.delete_.exprs.count; i++) {
                const cypher_ast_node *e = cl->u.delete_.exprs.items[i];
                if (check_expr(x, &sc, e) != 0 || no_aggregate(x, e) != 0 ||
                    check_deletable(x, &sc, e) != 0)
                    return -1;
            }
            break;
        case CYPHER_AST_WITH:
        case CYPHER_AST_RETURN: {
            names next = {.arena = arena, .depth = sc.depth};
            if (cl->u.projection.star && names_fork(x, &next, &sc) != 0)
                return -1;
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
            if (aggregating && !cl->u.projection.star)
                for (size_t i = 0; i < its->count; i++)
                    if (expr_has_aggregate(its->items[i]->u.alias.expr) &&
                        check_grouping(x, its, &sc, its->items[i]->u.alias.expr) != 0)
                        return -1;
            /* ORDER BY sees the projection and, without aggregation or
               DISTINCT, the variables before it; with them, those
               variables only inside parts written like a projected item */
            bool grouped = aggregating || cl->u.projection.distinct;
            names both;
            if (names_fork(x, &both, grouped ? &next : &sc) != 0)
                return -1;
            for (size_t i = 0; i < next.n; i++)
                if (add_kind(x, &both, next.v[i], cl, next.k[i]) != 0)
                    return -1;
            if (grouped)
                both.known = its;
            for (size_t i = 0; i < cl->u.projection.order.count; i++) {
                const cypher_ast_node *e = cl->u.projection.order.items[i]->u.sort.expr;
                if (check_sort_key(x, &both, e, aggregating) != 0)
                    return -1;
            }
            /* WITH's WHERE sees what ORDER BY sees: without aggregation,
               the variables before the WITH too. */
            names where_names;
            if (names_fork(x, &where_names, aggregating ? &next : &sc) != 0)
                return -1;
            if (!aggregating)
                for (size_t i = 0; i < next.n; i++)
                    if (add_kind(x, &where_names, next.v[i], cl, next.k[i]) != 0)
                        return -1;
            if (check_expr(x, &where_names, cl->u.projection.where) != 0 ||
                no_aggregate(x, cl->u.projection.where) != 0 ||
                check_predicate_kind(x, &where_names, cl->u.projection.where) != 0)
                return -1;
            const cypher_ast_node *sl[2] = {cl->u.projection.skip, cl->u.projection.limit};
            for (int k = 0; k < 2; k++) {
                names none = {.arena = arena};
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
    name_arena a = {.x = x};
    int rc = 0;
    if (body->kind == CYPHER_AST_UNION) {
        for (size_t i = 0; i < body->u.union_.queries.count && rc == 0; i++)
            rc = check_query(x, &a, body->u.union_.queries.items[i], NULL);
    } else if (body->kind != CYPHER_AST_QUERY) {
        rc = exec_fail(x, body, COMPILE_ERROR, NULL, "%s is not supported yet",
                       cypher_ast_kind_name(body->kind));
    } else {
        rc = check_query(x, &a, body, NULL);
    }
    arena_free(&a);
    return rc;
}
