/* plan_start — choosing and running the start of a pattern's walk (see
   plan_start.h). */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "query/plan_start.h"

/* ---- the predicates a seek can use ---- */

typedef struct operand_ctx {
    is_bound_fn bound;
    void *ctx;
} operand_ctx;

static int operand_child(const cypher_ast_node *c, void *ctx);

/* Whether e can be evaluated before the walk: no variable in it is bound
   by the pattern itself. */
static bool operand_ready(const cypher_ast_node *e, operand_ctx *oc)
{
    if (e->kind == CYPHER_AST_VARIABLE)
        return oc->bound(&e->u.name, oc->ctx);
    /* subqueries and comprehensions bind names of their own: not worth
       the analysis for a seek */
    if (e->kind == CYPHER_AST_EXISTS || e->kind == CYPHER_AST_LIST_COMPREHENSION ||
        e->kind == CYPHER_AST_PATTERN_COMPREHENSION || e->kind == CYPHER_AST_REDUCE ||
        e->kind == CYPHER_AST_QUANTIFIER || e->kind == CYPHER_AST_PATH)
        return false;
    return cypher_ast_each_child(e, operand_child, oc) == 0;
}

static int operand_child(const cypher_ast_node *c, void *ctx)
{
    return operand_ready(c, ctx) ? 0 : 1;
}

static bool is_key_of(const cypher_ast_node *p, const cypher_ast_str *var)
{
    return p->kind == CYPHER_AST_PROPERTY && p->u.property.subject->kind == CYPHER_AST_VARIABLE &&
           p->u.property.subject->u.name.len == var->len &&
           memcmp(p->u.property.subject->u.name.ptr, var->ptr, var->len) == 0;
}

/* What is known about one key of the start node. */
typedef struct key_facts {
    const cypher_ast_node *eq;
    const cypher_ast_node *lo, *hi;
    bool lo_inclusive, hi_inclusive, prefix;
} key_facts;

typedef struct facts {
    const cypher_ast_node *node;
    operand_ctx oc;
    const char *key;            /* the key being collected */
    key_facts k;
} facts;

static cypher_ast_op flipped(cypher_ast_op op)
{
    switch (op) {
    case CYPHER_OP_LT: return CYPHER_OP_GT;
    case CYPHER_OP_GT: return CYPHER_OP_LT;
    case CYPHER_OP_LE: return CYPHER_OP_GE;
    case CYPHER_OP_GE: return CYPHER_OP_LE;
    default: return op;
    }
}

/* v.key OP e, with OP as seen from v.key's side. */
static void note_comparison(facts *f, cypher_ast_op op, const cypher_ast_node *e)
{
    switch (op) {
    case CYPHER_OP_EQ:
        if (!f->k.eq)
            f->k.eq = e;
        break;
    case CYPHER_OP_GT: case CYPHER_OP_GE:
        if (!f->k.lo) {
            f->k.lo = e;
            f->k.lo_inclusive = op == CYPHER_OP_GE;
        }
        break;
    case CYPHER_OP_LT: case CYPHER_OP_LE:
        if (!f->k.hi) {
            f->k.hi = e;
            f->k.hi_inclusive = op == CYPHER_OP_LE;
        }
        break;
    default:
        break;
    }
}

static bool key_matches(const cypher_ast_node *p, const facts *f)
{
    return is_key_of(p, &f->node->u.node.variable->u.name) &&
           p->u.property.key.len == strlen(f->key) &&
           memcmp(p->u.property.key.ptr, f->key, p->u.property.key.len) == 0;
}

/* Collects the facts about f->key from WHERE's top-level conjuncts. */
static void collect_where(facts *f, const cypher_ast_node *w)
{
    if (!w)
        return;
    if (w->kind == CYPHER_AST_BINARY && w->u.binary.op == CYPHER_OP_AND) {
        collect_where(f, w->u.binary.lhs);
        collect_where(f, w->u.binary.rhs);
        return;
    }
    /* a AND b AND c ...: one run (ast.h), its operators all AND */
    if (w->kind == CYPHER_AST_BINARY_CHAIN && w->u.fold.ops[0] == CYPHER_OP_AND) {
        for (size_t i = 0; i < w->u.fold.operands.count; i++)
            collect_where(f, w->u.fold.operands.items[i]);
        return;
    }
    if (w->kind == CYPHER_AST_BINARY && w->u.binary.op == CYPHER_OP_STARTS_WITH) {
        if (key_matches(w->u.binary.lhs, f) && !f->k.lo && !f->k.prefix &&
            operand_ready(w->u.binary.rhs, &f->oc)) {
            f->k.lo = w->u.binary.rhs;
            f->k.lo_inclusive = true;
            f->k.prefix = true;
        }
        return;
    }
    if (w->kind == CYPHER_AST_BINARY) {     /* a single comparison a OP b */
        const cypher_ast_node *a = w->u.binary.lhs, *b = w->u.binary.rhs;
        if (key_matches(a, f) && operand_ready(b, &f->oc))
            note_comparison(f, w->u.binary.op, b);
        else if (key_matches(b, f) && operand_ready(a, &f->oc))
            note_comparison(f, flipped(w->u.binary.op), a);
        return;
    }
    if (w->kind != CYPHER_AST_COMPARISON)
        return;
    /* each link a OP b of a chain a < b <= c is a conjunct of its own */
    for (size_t i = 0; i < w->u.chain.nops; i++) {
        const cypher_ast_node *a = w->u.chain.operands.items[i];
        const cypher_ast_node *b = w->u.chain.operands.items[i + 1];
        cypher_ast_op op = w->u.chain.ops[i];
        if (key_matches(a, f) && operand_ready(b, &f->oc))
            note_comparison(f, op, b);
        else if (key_matches(b, f) && operand_ready(a, &f->oc))
            note_comparison(f, flipped(op), a);
    }
}

static void collect_facts(facts *f, const char *key, const cypher_ast_node *where)
{
    f->key = key;
    memset(&f->k, 0, sizeof f->k);
    const cypher_ast_node *props = f->node->u.node.properties;
    if (props && props->kind == CYPHER_AST_MAP) {
        for (size_t i = 0; i < props->u.list.count; i++) {
            const cypher_ast_node *e = props->u.list.items[i];
            if (strlen(key) == e->u.entry.key.len &&
                memcmp(e->u.entry.key.ptr, key, e->u.entry.key.len) == 0 &&
                operand_ready(e->u.entry.value, &f->oc)) {
                f->k.eq = e->u.entry.value;
                return;
            }
        }
    }
    if (f->node->u.node.variable)
        collect_where(f, where);
}

/* id(var) as a call: the argument is var itself. */
static bool is_id_of(const cypher_ast_node *e, const cypher_ast_str *var)
{
    if (e->kind != CYPHER_AST_FUNCTION || e->u.function.args.count != 1 ||
        e->u.function.distinct || e->u.function.name.len != 2 ||
        strncasecmp(e->u.function.name.ptr, "id", 2) != 0)
        return false;
    const cypher_ast_node *a = e->u.function.args.items[0];
    return a->kind == CYPHER_AST_VARIABLE && a->u.name.len == var->len &&
           memcmp(a->u.name.ptr, var->ptr, var->len) == 0;
}

/* The e of a top-level WHERE conjunct id(var) = e (or e = id(var)) that can
   be evaluated before the walk; NULL when there is none. */
static const cypher_ast_node *id_equality(const cypher_ast_node *w, const cypher_ast_str *var,
                                          operand_ctx *oc)
{
    if (!w)
        return NULL;
    if (w->kind == CYPHER_AST_BINARY && w->u.binary.op == CYPHER_OP_AND) {
        const cypher_ast_node *e = id_equality(w->u.binary.lhs, var, oc);
        return e ? e : id_equality(w->u.binary.rhs, var, oc);
    }
    if (w->kind == CYPHER_AST_BINARY_CHAIN && w->u.fold.ops[0] == CYPHER_OP_AND) {
        for (size_t i = 0; i < w->u.fold.operands.count; i++) {
            const cypher_ast_node *e = id_equality(w->u.fold.operands.items[i], var, oc);
            if (e)
                return e;
        }
        return NULL;
    }
    if (w->kind != CYPHER_AST_BINARY || w->u.binary.op != CYPHER_OP_EQ)
        return NULL;
    const cypher_ast_node *a = w->u.binary.lhs, *b = w->u.binary.rhs;
    if (is_id_of(a, var) && operand_ready(b, oc))
        return b;
    if (is_id_of(b, var) && operand_ready(a, oc))
        return a;
    return NULL;
}

/* ---- choosing ---- */

static uint64_t label_count(exec *x, strata_token label)
{
    return labelidx_count(exec_view(x)->ver->labels, label);
}

/* A plan of kind for node n with every count and bound empty: its arrays
   (keys, eq, any) are read only up to their counts, so they are left as
   they are rather than cleared (a plan is 344 bytes and planning a point
   query made four). */
static void plan_set(start_plan *p, start_kind kind, const cypher_ast_node *n,
                     strata_token label, uint64_t estimate)
{
    p->kind = kind;
    p->reversed = false;
    p->node = n;
    p->label = label;
    p->index = 0;
    p->index_name[0] = '\0';
    p->unique = false;
    p->nkeys = 0;
    p->lo = p->hi = NULL;
    p->lo_inclusive = p->hi_inclusive = p->prefix = false;
    p->id = NULL;
    p->nany = 0;
    p->estimate = estimate;
}

_Static_assert(sizeof(((start_plan *)0)->index_name) == IDX_NAME_MAX,
               "a plan copies an index definition's name whole");

/* The best index access for node n under label: seek or range seek.
   The view's index definitions are read in place (no list, no copies). */
static void best_index(exec *x, facts *f, strata_token label, const cypher_ast_node *where,
                       start_plan *best)
{
    strata_view *v = exec_view(x);
    const index_set *set = v->ver->indexes;
    for (uint32_t pos = 0, n = idxset_len(set); pos < n; pos++) {
        const index_def *d = idxset_def(set, pos);
        if (d->on_rels || d->token != label || d->nkeys > START_MAX_KEYS)
            continue;
        bool unique = d->kind == IDX_UNIQUE;
        /* a unique seek (estimate 1) cannot beat a best of 1 or less */
        if (unique && best->estimate <= 1)
            continue;
        start_plan p;
        plan_set(&p, START_INDEX_SEEK, f->node, label, 0);
        p.index = d->id;
        p.unique = unique;
        p.nkeys = d->nkeys;
        bool all_eq = true, named = true;
        for (size_t k = 0; k < d->nkeys && all_eq && named; k++) {
            named = strata_token_name(v, STRATA_KEY, d->keys[k], &p.keys[k]) == STRATA_OK;
            if (named) {
                collect_facts(f, p.keys[k], where);
                p.eq[k] = f->k.eq;
                all_eq = f->k.eq != NULL;
            }
        }
        if (!named)
            continue;   /* a key without a name: not an index to plan with */
        if (all_eq) {
            p.kind = START_INDEX_SEEK;
            p.estimate = unique ? 1 : 1 + lstack_count(idxset_stack(set, pos)) / 100;
        } else if (d->nkeys == 1 && (f->k.lo || f->k.hi)) {
            p.kind = START_RANGE_SEEK;
            p.lo = f->k.lo;
            p.hi = f->k.hi;
            p.lo_inclusive = f->k.lo_inclusive;
            p.hi_inclusive = f->k.hi_inclusive;
            p.prefix = f->k.prefix;
            p.estimate = 1 + lstack_count(idxset_stack(set, pos)) / 3;
        } else {
            continue;
        }
        if (p.estimate < best->estimate) {
            memcpy(p.index_name, d->name, sizeof p.index_name);
            *best = p;
        }
    }
}

/* Adds label (by name) to a union plan, unless no node has it (that
   alternative adds nothing) or it is there already. */
static void union_add(exec *x, start_plan *p, const cypher_ast_node *label)
{
    strata_token tok;
    if (strata_token_lookup(exec_view(x), STRATA_LABEL, label->u.name.ptr, &tok) != STRATA_OK)
        return;
    for (size_t i = 0; i < p->nany; i++)
        if (p->any[i] == tok)
            return;
    p->any[p->nany++] = tok;
    p->estimate += label_count(x, tok);
}

/* The union plan of a list of alternative labels (NOTHING when none is
   carried); false when there are too many to union. */
static bool plan_union(exec *x, const cypher_ast_node *n, const cypher_ast_node *const *labels,
                       size_t count, start_plan *out)
{
    if (count > STRATA_ANY_LABEL_MAX)
        return false;
    *out = (start_plan){.kind = START_LABEL_UNION, .node = n};
    for (size_t i = 0; i < count; i++)
        union_add(x, out, labels[i]);
    uint64_t all = exec_view(x)->ver->st.node_live;
    out->estimate = out->estimate < all ? out->estimate : all;
    if (!out->nany)
        *out = (start_plan){.kind = START_NOTHING, .node = n};
    return true;
}

/* Whether e is `var:L` (one label) of n's variable. */
static bool has_one_label_of(const cypher_ast_node *e, const cypher_ast_node *n)
{
    const cypher_ast_node *var = n->u.node.variable, *sub;
    if (!var || e->kind != CYPHER_AST_HAS_LABELS || e->u.labels.labels.count != 1)
        return false;
    sub = e->u.labels.subject;
    return sub->kind == CYPHER_AST_VARIABLE && sub->u.name.len == var->u.name.len &&
           memcmp(sub->u.name.ptr, var->u.name.ptr, var->u.name.len) == 0;
}

/* A top-level WHERE conjunct `v:A OR v:B ...` on n's variable: its union
   plan into *out (false when there is none). */
static bool where_union(exec *x, const cypher_ast_node *n, const cypher_ast_node *w,
                        start_plan *out)
{
    if (!w)
        return false;
    if (w->kind == CYPHER_AST_BINARY && w->u.binary.op == CYPHER_OP_AND)
        return where_union(x, n, w->u.binary.lhs, out) ||
               where_union(x, n, w->u.binary.rhs, out);
    if (w->kind == CYPHER_AST_BINARY_CHAIN && w->u.fold.ops[0] == CYPHER_OP_AND) {
        for (size_t i = 0; i < w->u.fold.operands.count; i++)
            if (where_union(x, n, w->u.fold.operands.items[i], out))
                return true;
        return false;
    }
    const cypher_ast_node *ops[STRATA_ANY_LABEL_MAX];
    size_t k = 0;
    if (w->kind == CYPHER_AST_BINARY && w->u.binary.op == CYPHER_OP_OR) {
        ops[k++] = w->u.binary.lhs;
        ops[k++] = w->u.binary.rhs;
    } else if (w->kind == CYPHER_AST_BINARY_CHAIN && w->u.fold.ops[0] == CYPHER_OP_OR &&
               w->u.fold.operands.count <= STRATA_ANY_LABEL_MAX) {
        for (size_t i = 0; i < w->u.fold.operands.count; i++)
            ops[k++] = w->u.fold.operands.items[i];
    } else {
        return false;
    }
    const cypher_ast_node *labels[STRATA_ANY_LABEL_MAX];
    for (size_t i = 0; i < k; i++) {
        if (!has_one_label_of(ops[i], n))
            return false;
        labels[i] = ops[i]->u.labels.labels.items[0];
    }
    return plan_union(x, n, labels, k, out);
}

/* The cheapest way to find node n's candidates. */
static void plan_node(exec *x, const cypher_ast_node *n, const cypher_ast_node *where,
                      operand_ctx oc, start_plan *best)
{
    strata_view *v = exec_view(x);
    plan_set(best, START_ALL_NODES, n, 0, v->ver->st.node_live);
    facts f = {.node = n, .oc = oc};
    const cypher_ast_node *id = n->u.node.variable
                                    ? id_equality(where, &n->u.node.variable->u.name, &oc)
                                    : NULL;
    if (id) {
        /* one candidate at most: nothing is cheaper (labels and the rest of
           WHERE are still checked on it) */
        *best = (start_plan){.kind = START_ID_SEEK, .node = n, .id = id, .estimate = 1};
        return;
    }
    start_plan u;
    if (n->u.node.labels_any) {
        if (plan_union(x, n, (const cypher_ast_node *const *)n->u.node.labels.items,
                       n->u.node.labels.count, &u))
            *best = u;
        return;
    }
    /* the union's estimate counts a node once per label it has: never
       above every node, and on a tie the union (it also filters) */
    if (n->u.node.variable && where_union(x, n, where, &u) && u.estimate <= best->estimate)
        *best = u;
    for (size_t i = 0; i < n->u.node.labels.count; i++) {
        cypher_ast_node *l = n->u.node.labels.items[i];
        strata_token label;
        if (!exec_cached_token(x, &l->u.label.token_plus1, STRATA_LABEL, &l->u.label.name,
                               &label)) {
            *best = (start_plan){.kind = START_NOTHING, .node = n};
            return;
        }
        uint64_t count = label_count(x, label);
        if (count < best->estimate || best->kind == START_ALL_NODES)
            plan_set(best, START_LABEL_SCAN, n, label, count);
        best_index(x, &f, label, where, best);
    }
}

static bool var_bound(const cypher_ast_node *n, is_bound_fn bound, void *ctx)
{
    return n->u.node.variable && bound(&n->u.node.variable->u.name, ctx);
}

void plan_start(exec *x, const cypher_ast_node *part, const cypher_ast_node *where,
                is_bound_fn bound, void *ctx, start_plan *out)
{
    const cypher_ast_list *el = &part->u.part.path->u.list;
    const cypher_ast_node *first = el->items[0], *last = el->items[el->count - 1];
    operand_ctx oc = {bound, ctx};
    /* a bound end: the walk starts from its one node (the first end when
       both are bound, as match_walk does) */
    if (var_bound(first, bound, ctx) || (el->count > 1 && var_bound(last, bound, ctx))) {
        bool from_last = !var_bound(first, bound, ctx);
        *out = (start_plan){.kind = START_BOUND, .node = from_last ? last : first,
                            .reversed = from_last, .estimate = 1};
        return;
    }
    plan_node(x, first, where, oc, out);
    /* shortest paths search from the first node */
    if (el->count == 1 || part->u.part.kind != CYPHER_PATH_PLAIN)
        return;
    start_plan back;
    plan_node(x, last, where, oc, &back);
    if (back.estimate < out->estimate ||
        (back.kind == START_NOTHING && out->kind != START_NOTHING)) {
        *out = back;
        out->reversed = true;
    }
}

void plan_node_start(exec *x, const cypher_ast_node *node, const cypher_ast_node *where,
                     is_bound_fn bound, void *ctx, start_plan *out)
{
    plan_node(x, node, where, (operand_ctx){bound, ctx}, out);
}

uint64_t plan_label_count(exec *x, strata_token label)
{
    return label_count(x, label);
}

/* ---- running ---- */

static bool seekable(const value *v)
{
    value_type k = value_kind(v);
    return k == VAL_INT || k == VAL_FLOAT || k == VAL_STRING || k == VAL_BOOL;
}

/* The smallest string above every string starting with prefix, as a new
   value; null when there is none (all 0xff bytes). */
static int prefix_end(exec *x, const value *prefix, value *out)
{
    size_t len;
    const char *s = value_str(prefix, &len);
    while (len > 0 && (unsigned char)s[len - 1] == 0xff)
        len--;
    *out = value_null();
    if (len == 0)
        return 0;
    char *buf = mem_alloc(x->m, len);
    if (!buf)
        return exec_oom(x);
    memcpy(buf, s, len);
    buf[len - 1] = (char)((unsigned char)buf[len - 1] + 1);
    int rc = make_string(x, buf, len, out);
    mem_free(x->m, buf);
    return rc;
}

/* Evaluates the seek's operands into vals (nvals of them; new values). */
static int seek_values(exec *x, const start_plan *p, const scope *sc, const value *row,
                       value *vals, size_t *nvals)
{
    evalctx c = {x, sc, row, NULL, NULL};
    *nvals = 0;
    if (p->kind == START_INDEX_SEEK) {
        for (size_t k = 0; k < p->nkeys; k++, (*nvals)++)
            if (eval(&c, p->eq[k], &vals[k]) != 0)
                return -1;
        return 0;
    }
    vals[0] = vals[1] = value_null();
    *nvals = 2;
    if (p->lo && eval(&c, p->lo, &vals[0]) != 0)
        return -1;
    if (p->hi && eval(&c, p->hi, &vals[1]) != 0)
        return -1;
    return 0;
}

/* Opens the seek's iterator; *none when the values rule out every node
   (a null, or bounds of different types) and *fallback when they are of
   a kind the index cannot seek (a list, say). */
static strata_status open_seek(exec *x, const start_plan *p, value *vals,
                               strata_node_iter **it, bool *none, bool *fallback)
{
    strata_view *v = exec_view(x);
    *none = *fallback = false;
    if (p->kind == START_INDEX_SEEK) {
        strata_value h[START_MAX_KEYS];
        const strata_value *hp[START_MAX_KEYS];
        for (size_t k = 0; k < p->nkeys; k++) {
            if (value_is_null(&vals[k])) {
                *none = true;
                return STRATA_OK;
            }
            if (!seekable(&vals[k]))
                *fallback = true;
            h[k].v = vals[k];
            hp[k] = &h[k];
        }
        if (*fallback)
            return STRATA_OK;
        return strata_index_lookup(v, p->index, hp, p->nkeys, it);
    }
    if (p->prefix) {
        if (value_kind(&vals[0]) != VAL_STRING) {
            *none = true;   /* STARTS WITH a non-string is null */
            return STRATA_OK;
        }
        value_release(&vals[1]);
        if (prefix_end(x, &vals[0], &vals[1]) != 0)
            return STRATA_ENOMEM;
    } else {
        bool lo = p->lo != NULL, hi = p->hi != NULL;
        if ((lo && !seekable(&vals[0])) || (hi && !seekable(&vals[1]))) {
            *none = (lo && value_is_null(&vals[0])) || (hi && value_is_null(&vals[1]));
            *fallback = !*none;
            return STRATA_OK;
        }
    }
    strata_value lo = {vals[0]}, hi = {vals[1]};
    bool has_lo = !value_is_null(&vals[0]), has_hi = !value_is_null(&vals[1]);
    if (has_lo && has_hi && value_kind(&vals[0]) != value_kind(&vals[1]) &&
        !(value_is_number(&vals[0]) && value_is_number(&vals[1]))) {
        *none = true;       /* no value lies between a number and a string */
        return STRATA_OK;
    }
    return strata_index_range(v, p->index, has_lo ? &lo : NULL,
                              p->prefix ? true : p->lo_inclusive, has_hi ? &hi : NULL,
                              p->prefix ? false : p->hi_inclusive, it);
}

int start_id(exec *x, const start_plan *p, const scope *sc, const value *row, bool *none,
             uint64_t *id)
{
    evalctx c = {x, sc, row, NULL, NULL};
    value v;
    if (eval(&c, p->id, &v) != 0)
        return -1;
    /* id(n) = e is true for a whole number equal to the id, int or float */
    *none = true;
    if (value_kind(&v) == VAL_INT && v.u.i >= 0) {
        *id = (uint64_t)v.u.i;
        *none = false;
    } else if (value_kind(&v) == VAL_FLOAT && v.u.f >= 0 && v.u.f < 0x1p63 &&
               v.u.f == (double)(int64_t)v.u.f) {
        *id = (uint64_t)(int64_t)v.u.f;
        *none = false;
    }
    value_release(&v);
    if (!*none)
        *none = !strata_node_exists(exec_view(x), *id);
    return 0;
}

int start_point(exec *x, const start_plan *p, const scope *sc, const value *row, bool *taken,
                bool *none, uint64_t *id, uint32_t *exact, strata_node_iter **it)
{
    *taken = *none = false;
    *exact = 0;
    *it = NULL;
    /* A seek on one key: its one operand (seek_values would also fill a
       range's two). */
    assert(p->kind == START_INDEX_SEEK && p->nkeys == 1);
    value key;
    evalctx c = {x, sc, row, NULL, NULL};
    if (eval(&c, p->eq[0], &key) != 0)
        return -1;
    const index_set *set = exec_view(x)->ver->indexes;
    int pos = value_is_null(&key) || !seekable(&key) ? -1 : idxset_find(set, p->index);
    int rc = 0;
    if (value_is_null(&key)) {
        *taken = *none = true;   /* null equals nothing */
    } else if (pos >= 0) {
        /* the nodes under the key by value order, as strata_index_lookup
           would find them: one (a unique index's only answer) from the
           hash level or a cursor on the stack, several from an iterator */
        uint64_t first;
        int found = lstack_point(idxset_stack(set, (uint32_t)pos), &key, &first);
        if (found == 2) {
            strata_value h = {key};
            const strata_value *hp = &h;
            strata_status s = strata_index_lookup(exec_view(x), p->index, &hp, 1, it);
            if (s != STRATA_OK)
                rc = s == STRATA_ENOMEM ? exec_oom(x) : exec_status(x, p->node, s);
        } else {
            *taken = true;
            *none = found == 0;
            *id = first;
        }
        if (value_kind(&key) == VAL_INT || value_kind(&key) == VAL_STRING)
            *exact = 1;
    }
    value_release(&key);
    return rc;
}

int start_iter(exec *x, const start_plan *p, const scope *sc, const value *row,
               strata_node_iter **it)
{
    return start_iter_exact(x, p, sc, row, it, NULL);
}

int start_iter_exact(exec *x, const start_plan *p, const scope *sc, const value *row,
                     strata_node_iter **it, uint32_t *exact)
{
    strata_view *v = exec_view(x);
    *it = NULL;
    if (exact)
        *exact = 0;
    strata_status s = STRATA_OK;
    if (p->kind == START_NOTHING)
        return 0;
    /* START_BOUND: the walk starts from the bound node and never asks;
       should the variable be unbound after all, every node is a start */
    if (p->kind == START_INDEX_SEEK || p->kind == START_RANGE_SEEK) {
        value vals[START_MAX_KEYS];
        size_t nvals = 0;
        bool none = false, fallback = false;
        int rc = seek_values(x, p, sc, row, vals, &nvals);
        if (rc == 0) {
            s = open_seek(x, p, vals, it, &none, &fallback);
            if (s == STRATA_ENOMEM && !x->err.category)
                rc = exec_oom(x);
        }
        /* an equality seek by an integer or a string finds exactly the
           nodes whose value equals it as `=` says */
        for (size_t k = 0; exact && rc == 0 && !fallback && p->kind == START_INDEX_SEEK &&
                           k < nvals; k++)
            if (value_kind(&vals[k]) == VAL_INT || value_kind(&vals[k]) == VAL_STRING)
                *exact |= 1u << k;
        for (size_t k = 0; k < nvals; k++)
            value_release(&vals[k]);
        if (rc != 0 || none)
            return rc;
        if (fallback)
            s = strata_nodes_by_label(v, p->label, it);
    } else if (p->kind == START_LABEL_SCAN) {
        s = strata_nodes_by_label(v, p->label, it);
    } else if (p->kind == START_LABEL_UNION) {
        s = strata_nodes_by_any_label(v, p->any, p->nany, it);
    } else {
        s = strata_nodes(v, it);
    }
    if (s == STRATA_ENOTFOUND || s == STRATA_OK)
        return 0;
    return exec_status(x, p->node, s);
}

/* ---- describing ---- */

static const char *var_name(const start_plan *p)
{
    return p->node->u.node.variable ? p->node->u.node.variable->u.name.ptr : "";
}

void start_describe(exec *x, const start_plan *p, char *buf, size_t size)
{
    const char *label = "";
    if (p->kind != START_ALL_NODES && p->kind != START_NOTHING && p->kind != START_BOUND &&
        p->kind != START_LABEL_UNION)
        strata_token_name(exec_view(x), STRATA_LABEL, p->label, &label);
    const char *from = p->reversed ? ", from the last node" : "";
    switch (p->kind) {
    case START_BOUND:
        snprintf(buf, size, "Bound (%s)%s", var_name(p), from);
        break;
    case START_ALL_NODES:
        snprintf(buf, size, "AllNodesScan (%s) ~%llu rows%s", var_name(p),
                 (unsigned long long)p->estimate, from);
        break;
    case START_LABEL_SCAN:
        snprintf(buf, size, "NodeByLabelScan (%s:%s) ~%llu rows%s", var_name(p), label,
                 (unsigned long long)p->estimate, from);
        break;
    case START_INDEX_SEEK: {
        char keys[160] = "";
        size_t used = 0;
        for (size_t k = 0; k < p->nkeys && used < sizeof keys; k++)
            used += (size_t)snprintf(keys + used, sizeof keys - used, "%s%s", k ? ", " : "",
                                     p->keys[k]);
        snprintf(buf, size, "%s (%s:%s {%s}) by %s ~%llu rows%s",
                 p->unique ? "NodeUniqueIndexSeek" : "NodeIndexSeek", var_name(p), label, keys,
                 p->index_name, (unsigned long long)p->estimate, from);
        break;
    }
    case START_RANGE_SEEK:
        snprintf(buf, size, "NodeIndexSeekByRange (%s:%s) %s%s%s%s by %s ~%llu rows%s",
                 var_name(p), label, p->keys[0],
                 p->prefix ? " STARTS WITH" : p->lo ? (p->lo_inclusive ? " >=" : " >") : "",
                 !p->prefix && p->lo && p->hi ? " and" : "",
                 !p->prefix && p->hi ? (p->hi_inclusive ? " <=" : " <") : "",
                 p->index_name, (unsigned long long)p->estimate, from);
        break;
    case START_ID_SEEK:
        snprintf(buf, size, "NodeByIdSeek (%s) ~1 row%s", var_name(p), from);
        break;
    case START_LABEL_UNION: {
        char names[160] = "";
        size_t used = 0;
        for (size_t k = 0; k < p->nany && used < sizeof names; k++) {
            const char *name = "";
            strata_token_name(exec_view(x), STRATA_LABEL, p->any[k], &name);
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", k ? "|" : "",
                                     name);
        }
        snprintf(buf, size, "NodeByLabelUnionScan (%s:%s) ~%llu rows%s", var_name(p), names,
                 (unsigned long long)p->estimate, from);
        break;
    }
    case START_NOTHING:
        snprintf(buf, size, "Empty (%s): a label no node carries", var_name(p));
        break;
    }
}
