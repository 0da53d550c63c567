/*
 * eval — expressions over storage/value.h values, with openCypher 9
 * semantics: null propagates, comparisons and boolean operators are
 * ternary, integer arithmetic is checked for overflow (an error, never a
 * wrapped result), `1 = 1.0` is true.
 *
 * Ownership: eval() returns a new value in *out (null on error); operands
 * are released before returning.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/exec.h"
#include "query/functions_temporal.h"
#include "query/regex.h"

static const char *type_name(const value *v) { return value_type_name(v); }

static int type_error(const evalctx *c, const cypher_ast_node *at, const char *what,
                      const value *v)
{
    return exec_fail(c->x, at, "TypeError", "InvalidArgumentType", "%s: unexpected %s", what,
                     type_name(v));
}

/* ---- variables ---- */

static int eval_variable(const evalctx *c, const cypher_ast_node *e, value *out)
{
    const char *name = e->u.name.ptr;
    size_t len = e->u.name.len;
    for (const local_var *l = c->locals; l; l = l->up)
        if (l->len == len && memcmp(l->name, name, len) == 0) {
            *out = value_retain(l->v);
            return 0;
        }
    long slot = c->sc ? scope_find(c->sc, name, len) : -1;
    if (slot < 0)
        return exec_fail(c->x, e, "SyntaxError", "UndefinedVariable",
                         "variable `%s` not defined", name);
    *out = value_retain(c->row[slot]);
    return 0;
}

/* ---- arithmetic ---- */

static double as_double(const value *v)
{
    return value_kind(v) == VAL_INT ? (double)v->u.i : v->u.f;
}

static int concat_lists(const evalctx *c, const cypher_ast_node *e, value *a, value *b,
                        value *out)
{
    /* a or b may be a non-list element: it is appended / prepended. */
    size_t na = value_kind(a) == VAL_LIST ? value_list_len(a) : 1;
    size_t nb = value_kind(b) == VAL_LIST ? value_list_len(b) : 1;
    if (na + nb > QUERY_LIST_MAX)
        return exec_too_large(c->x, e, "list", na + nb, QUERY_LIST_MAX);
    if (exec_tick_n(c->x, na + nb) != 0)
        return -1;
    value *items = mem_alloc(c->x->m, (na + nb ? na + nb : 1) * sizeof(value));
    if (!items)
        return exec_oom(c->x);
    if (value_kind(a) == VAL_LIST)
        for (size_t i = 0; i < na; i++)
            items[i] = value_retain(value_list_items(a)[i]);
    else
        items[0] = value_retain(*a);
    if (value_kind(b) == VAL_LIST)
        for (size_t i = 0; i < nb; i++)
            items[na + i] = value_retain(value_list_items(b)[i]);
    else
        items[na] = value_retain(*b);
    int rc = value_list_from(c->x->m, items, na + nb, out);
    mem_free(c->x->m, items);
    return rc == 0 ? 0 : exec_value_fail(c->x, e, rc);
}

static int string_of_scalar(const evalctx *c, const value *v, char *buf, size_t cap,
                            const char **s, size_t *len)
{
    (void)c;
    switch (value_kind(v)) {
    case VAL_STRING:
        *s = value_str(v, len);
        return 0;
    case VAL_INT:
        *len = (size_t)snprintf(buf, cap, "%lld", (long long)v->u.i);
        *s = buf;
        return 0;
    case VAL_FLOAT: {
        double f = v->u.f;
        snprintf(buf, cap, "%.15g", f);
        if (strtod(buf, NULL) != f)
            snprintf(buf, cap, "%.17g", f);
        if (!strpbrk(buf, ".eEni"))
            strcat(buf, ".0");
        *s = buf;
        *len = strlen(buf);
        return 0;
    }
    case VAL_BOOL:
        *s = v->u.b ? "true" : "false";
        *len = strlen(*s);
        return 0;
    default:
        return -1;
    }
}

static int arith(const evalctx *c, const cypher_ast_node *e, cypher_ast_op op, value *a,
                 value *b, value *out)
{
    exec *x = c->x;
    *out = value_null();
    if (op == CYPHER_OP_ADD && (value_kind(a) == VAL_LIST || value_kind(b) == VAL_LIST))
        return concat_lists(c, e, a, b, out);
    if (value_is_null(a) || value_is_null(b))
        return 0;
    if (value_is_temporal(a) || value_is_temporal(b)) {
        char sym = op == CYPHER_OP_ADD ? '+' : op == CYPHER_OP_SUB ? '-'
                   : op == CYPHER_OP_MUL ? '*' : op == CYPHER_OP_DIV ? '/' : '?';
        int r = sym == '?' ? 1 : temporal_arith(x, e, sym, a, b, out);
        if (r <= 0)
            return r;
        return exec_fail(x, e, "SyntaxError", "InvalidArgumentType", "cannot combine %s and %s",
                         type_name(a), type_name(b));
    }
    if (op == CYPHER_OP_ADD && (value_kind(a) == VAL_STRING || value_kind(b) == VAL_STRING)) {
        char ba[40], bb[40];
        const char *sa, *sb;
        size_t la, lb;
        if (string_of_scalar(c, a, ba, sizeof ba, &sa, &la) != 0 ||
            string_of_scalar(c, b, bb, sizeof bb, &sb, &lb) != 0 ||
            (value_kind(a) == VAL_BOOL) || (value_kind(b) == VAL_BOOL))
            return exec_fail(x, e, "SyntaxError", "InvalidArgumentType",
                             "cannot add %s and %s", type_name(a), type_name(b));
        if (la + lb > QUERY_STRING_MAX)
            return exec_too_large(x, e, "string", la + lb, QUERY_STRING_MAX);
        char *buf = mem_alloc(x->m, la + lb + 1);
        if (!buf)
            return exec_oom(x);
        memcpy(buf, sa, la);
        memcpy(buf + la, sb, lb);
        int rc = make_string(x, buf, la + lb, out);
        mem_free(x->m, buf);
        return rc;
    }
    if (!value_is_number(a) || !value_is_number(b))
        return exec_fail(x, e, "SyntaxError", "InvalidArgumentType",
                         "operator %s cannot be applied to %s and %s", cypher_ast_op_name(op),
                         type_name(a), type_name(b));
    if (value_kind(a) == VAL_INT && value_kind(b) == VAL_INT && op != CYPHER_OP_POW) {
        int64_t l = a->u.i, r = b->u.i, res = 0;
        bool ovf = false;
        switch (op) {
        case CYPHER_OP_ADD: ovf = __builtin_add_overflow(l, r, &res); break;
        case CYPHER_OP_SUB: ovf = __builtin_sub_overflow(l, r, &res); break;
        case CYPHER_OP_MUL: ovf = __builtin_mul_overflow(l, r, &res); break;
        case CYPHER_OP_DIV:
        case CYPHER_OP_MOD:
            if (r == 0)
                return exec_fail(x, e, "ArgumentError", "DivisionByZero", "division by zero");
            if (l == INT64_MIN && r == -1) {
                if (op == CYPHER_OP_MOD) {
                    res = 0;
                    break;
                }
                ovf = true;
                break;
            }
            res = op == CYPHER_OP_DIV ? l / r : l % r;
            break;
        default: break;
        }
        if (ovf)
            return exec_fail(x, e, "ArgumentError", "IntegerOverflow", "integer overflow");
        *out = value_int(res);
        return 0;
    }
    double l = as_double(a), r = as_double(b), res = 0;
    switch (op) {
    case CYPHER_OP_ADD: res = l + r; break;
    case CYPHER_OP_SUB: res = l - r; break;
    case CYPHER_OP_MUL: res = l * r; break;
    case CYPHER_OP_DIV: res = l / r; break;
    case CYPHER_OP_MOD: res = fmod(l, r); break;
    case CYPHER_OP_POW: res = pow(l, r); break;
    default: break;
    }
    *out = value_float(res);
    return 0;
}

/* ---- comparison ---- */

static tri compare_op(cypher_ast_op op, const value *a, const value *b)
{
    if (op == CYPHER_OP_EQ)
        return value_equals(a, b);
    if (op == CYPHER_OP_NE) {
        tri t = value_equals(a, b);
        return t == TRI_NULL ? TRI_NULL : t == TRI_TRUE ? TRI_FALSE : TRI_TRUE;
    }
    int cmp;
    int rc = value_compare(a, b, &cmp);
    if (rc < 0)
        return TRI_NULL;
    if (rc > 0)
        return TRI_FALSE;
    switch (op) {
    case CYPHER_OP_LT: return cmp < 0 ? TRI_TRUE : TRI_FALSE;
    case CYPHER_OP_GT: return cmp > 0 ? TRI_TRUE : TRI_FALSE;
    case CYPHER_OP_LE: return cmp <= 0 ? TRI_TRUE : TRI_FALSE;
    case CYPHER_OP_GE: return cmp >= 0 ? TRI_TRUE : TRI_FALSE;
    default: return TRI_NULL;
    }
}

static value tri_value(tri t) { return t == TRI_NULL ? value_null() : value_bool(t == TRI_TRUE); }

static int as_tri(const evalctx *c, const cypher_ast_node *at, value *v, tri *out)
{
    if (value_is_null(v)) {
        *out = TRI_NULL;
        return 0;
    }
    if (value_kind(v) != VAL_BOOL) {
        int rc = exec_fail(c->x, at, "SyntaxError", "InvalidArgumentType",
                           "expected a boolean but got %s", type_name(v));
        value_release(v);
        return rc;
    }
    *out = v->u.b ? TRI_TRUE : TRI_FALSE;
    return 0;
}

int eval_predicate(const evalctx *c, const cypher_ast_node *e, tri *out)
{
    value v;
    if (eval(c, e, &v) != 0)
        return -1;
    return as_tri(c, e, &v, out);
}

/* The ternary AND, OR or XOR of l and r. */
static tri logic_op(cypher_ast_op op, tri l, tri r)
{
    tri t = TRI_NULL;
    switch (op) {
    case CYPHER_OP_AND:
        t = (l == TRI_FALSE || r == TRI_FALSE) ? TRI_FALSE
            : (l == TRI_NULL || r == TRI_NULL) ? TRI_NULL : TRI_TRUE;
        break;
    case CYPHER_OP_OR:
        t = (l == TRI_TRUE || r == TRI_TRUE) ? TRI_TRUE
            : (l == TRI_NULL || r == TRI_NULL) ? TRI_NULL : TRI_FALSE;
        break;
    default: /* XOR */
        t = (l == TRI_NULL || r == TRI_NULL) ? TRI_NULL : (l != r) ? TRI_TRUE : TRI_FALSE;
        break;
    }
    return t;
}

static bool is_logic_op(cypher_ast_op op)
{
    return op == CYPHER_OP_AND || op == CYPHER_OP_OR || op == CYPHER_OP_XOR;
}

static int eval_logic(const evalctx *c, const cypher_ast_node *e, value *out)
{
    tri l = TRI_NULL, r = TRI_NULL;
    if (eval_predicate(c, e->u.binary.lhs, &l) != 0 || eval_predicate(c, e->u.binary.rhs, &r) != 0)
        return -1;
    *out = tri_value(logic_op(e->u.binary.op, l, r));
    return 0;
}

static int string_op(const evalctx *c, const cypher_ast_node *e, cypher_ast_op op, value *a,
                     value *b, value *out)
{
    (void)c;
    (void)e;
    *out = value_null();
    if (value_kind(a) != VAL_STRING || value_kind(b) != VAL_STRING)
        return 0;
    size_t la, lb;
    const char *sa = value_str(a, &la), *sb = value_str(b, &lb);
    bool r = false;
    if (op == CYPHER_OP_STARTS_WITH)
        r = lb <= la && memcmp(sa, sb, lb) == 0;
    else if (op == CYPHER_OP_ENDS_WITH)
        r = lb <= la && memcmp(sa + la - lb, sb, lb) == 0;
    else
        r = lb == 0 || (lb <= la && memmem(sa, la, sb, lb) != NULL);
    *out = value_bool(r);
    return 0;
}

/* s =~ pattern: whether the whole of s matches (query/regex.h). */
static int regex_match(const evalctx *c, const cypher_ast_node *e, value *a, value *b,
                       value *out)
{
    *out = value_null();
    if (value_kind(a) != VAL_STRING || value_kind(b) != VAL_STRING)
        return 0;
    size_t ls, lp;
    const char *s = value_str(a, &ls), *pat = value_str(b, &lp);
    bool matched;
    if (regex_full_match(c->x, e, s, ls, pat, lp, &matched) != 0)
        return -1;
    *out = value_bool(matched);
    return 0;
}

static int in_list(const evalctx *c, const cypher_ast_node *e, value *a, value *b, value *out)
{
    *out = value_null();
    if (value_is_null(b))
        return 0;
    if (value_kind(b) != VAL_LIST)
        return exec_fail(c->x, e, "SyntaxError", "InvalidArgumentType",
                         "IN expects a list but got %s", type_name(b));
    size_t n = value_list_len(b);
    const value *it = value_list_items(b);
    tri res = TRI_FALSE;
    for (size_t i = 0; i < n; i++) {
        if (exec_tick(c->x) != 0)
            return -1;
        tri t = value_equals(a, &it[i]);
        if (t == TRI_TRUE) {
            res = TRI_TRUE;
            break;
        }
        if (t == TRI_NULL)
            res = TRI_NULL;
    }
    *out = tri_value(res);
    return 0;
}

/* a OP b for a non-boolean operator, a and b evaluated (and released
   here); e gives the position of an error. */
static int apply_binary(const evalctx *c, const cypher_ast_node *e, cypher_ast_op op, value a,
                        value b, value *out)
{
    int rc;
    switch (op) {
    case CYPHER_OP_EQ: case CYPHER_OP_NE: case CYPHER_OP_LT: case CYPHER_OP_GT:
    case CYPHER_OP_LE: case CYPHER_OP_GE:
        *out = tri_value(compare_op(op, &a, &b));
        rc = 0;
        break;
    case CYPHER_OP_STARTS_WITH: case CYPHER_OP_ENDS_WITH: case CYPHER_OP_CONTAINS:
        rc = string_op(c, e, op, &a, &b, out);
        break;
    case CYPHER_OP_IN:
        rc = in_list(c, e, &a, &b, out);
        break;
    case CYPHER_OP_REGEX:
        rc = regex_match(c, e, &a, &b, out);
        break;
    default:
        rc = arith(c, e, op, &a, &b, out);
        break;
    }
    value_release(&a);
    value_release(&b);
    return rc;
}

static int eval_binary(const evalctx *c, const cypher_ast_node *e, value *out)
{
    cypher_ast_op op = e->u.binary.op;
    if (is_logic_op(op))
        return eval_logic(c, e, out);
    value a, b;
    if (eval(c, e->u.binary.lhs, &a) != 0)
        return -1;
    if (eval(c, e->u.binary.rhs, &b) != 0) {
        value_release(&a);
        return -1;
    }
    return apply_binary(c, e, op, a, b, out);
}

/* ---- runs of one precedence: a + b - c + ... (BINARY_CHAIN) ---- */

/* Concatenations in a run are gathered here and built once, so that a
   run of n list or string additions costs O(the result), not O(n times
   the result) as pairwise concatenation would. */
typedef struct concat_buf {
    bool active;
    bool list;          /* gathering list elements, else string bytes */
    value *items;
    char *bytes;
    size_t n, cap;      /* elements or bytes */
} concat_buf;

static int concat_grow(const evalctx *c, const cypher_ast_node *e, concat_buf *b, size_t more)
{
    size_t max = b->list ? QUERY_LIST_MAX : QUERY_STRING_MAX;
    if (more > max - b->n)
        return exec_too_large(c->x, e, b->list ? "list" : "string", (uint64_t)b->n + more, max);
    if (exec_tick_n(c->x, more) != 0)
        return -1;
    if (b->n + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 16;
    while (cap < b->n + more)
        cap *= 2;
    size_t unit = b->list ? sizeof(value) : 1;
    void *old = b->list ? (void *)b->items : (void *)b->bytes;
    void *grown = mem_realloc(c->x->m, old, cap * unit);
    if (!grown)
        return exec_oom(c->x);
    if (b->list)
        b->items = grown;
    else
        b->bytes = grown;
    b->cap = cap;
    return 0;
}

/* Appends v (a list's elements, or one element; a string's bytes);
   consumes v. */
static int concat_append(const evalctx *c, const cypher_ast_node *e, concat_buf *b, value *v)
{
    bool spread = b->list && value_kind(v) == VAL_LIST;
    size_t len = 0;
    const char *str = b->list ? NULL : value_str(v, &len);
    size_t more = b->list ? (spread ? value_list_len(v) : 1) : len;
    int rc = concat_grow(c, e, b, more);
    if (rc == 0 && spread)
        for (size_t i = 0; i < more; i++)
            b->items[b->n++] = value_retain(value_list_items(v)[i]);
    else if (rc == 0 && b->list)
        b->items[b->n++] = value_retain(*v);
    else if (rc == 0 && more)
        memcpy(b->bytes + b->n, str, more), b->n += more;
    value_release(v);
    return rc;
}

/* Frees the buffer and the elements it still holds. */
static void concat_drop(const evalctx *c, concat_buf *b)
{
    for (size_t i = 0; b->list && i < b->n; i++)
        value_release(&b->items[i]);
    if (b->items)
        mem_free(c->x->m, b->items);
    if (b->bytes)
        mem_free(c->x->m, b->bytes);
    *b = (concat_buf){0};
}

/* The gathered value (consuming the buffer), or nothing on failure. */
static int concat_finish(const evalctx *c, concat_buf *b, value *out)
{
    int rc = 0;
    if (b->list)
        rc = value_list_from(c->x->m, b->items, b->n, out) == 0 ? 0 : exec_oom(c->x);
    else
        rc = make_string(c->x, b->bytes ? b->bytes : "", b->n, out);
    if (rc != 0) {
        concat_drop(c, b);
        return rc;
    }
    if (b->items)
        mem_free(c->x->m, b->items);
    if (b->bytes)
        mem_free(c->x->m, b->bytes);
    *b = (concat_buf){0};
    return rc;
}

/* Whether acc + next is a concatenation the buffer can take: a list and
   anything (list + x appends, x + list prepends), or two strings (other
   string additions convert or fail: the pairwise path decides). */
static bool concat_starts(const value *acc, const value *next, bool *list)
{
    *list = value_kind(acc) == VAL_LIST || value_kind(next) == VAL_LIST;
    return *list || (value_kind(acc) == VAL_STRING && value_kind(next) == VAL_STRING);
}

/* One step acc OP next of a run, with acc possibly held in b. */
static int fold_step(const evalctx *c, const cypher_ast_node *e, cypher_ast_op op, concat_buf *b,
                     value *acc, value *next)
{
    if (b->active && op == CYPHER_OP_ADD && (b->list || value_kind(next) == VAL_STRING))
        return concat_append(c, e, b, next);
    if (b->active && concat_finish(c, b, acc) != 0) {
        value_release(next);
        return -1;
    }
    bool list;
    if (op == CYPHER_OP_ADD && concat_starts(acc, next, &list)) {
        *b = (concat_buf){.active = true, .list = list};
        int rc = concat_append(c, e, b, acc);
        *acc = value_null();
        return rc == 0 ? concat_append(c, e, b, next) : (value_release(next), -1);
    }
    value res;
    if (apply_binary(c, e, op, *acc, *next, &res) != 0) {
        *acc = value_null();
        return -1;
    }
    *acc = res;
    return 0;
}

/* A run evaluated left to right in one loop (no recursion per operator):
   each step is exactly the BINARY it stands for, errors included (at the
   run's position, where the BINARY's would be: its left operand's). */
static int eval_binary_chain(const evalctx *c, const cypher_ast_node *e, value *out)
{
    const cypher_ast_list *operands = &e->u.fold.operands;
    const cypher_ast_op *ops = e->u.fold.ops;
    if (is_logic_op(ops[0])) {   /* one precedence: every operator the same */
        tri acc = TRI_NULL;
        if (eval_predicate(c, operands->items[0], &acc) != 0)
            return -1;
        for (size_t i = 1; i < operands->count; i++) {
            tri t = TRI_NULL;
            if (eval_predicate(c, operands->items[i], &t) != 0)
                return -1;
            acc = logic_op(ops[i - 1], acc, t);
        }
        *out = tri_value(acc);
        return 0;
    }
    value acc;
    concat_buf b = {0};
    if (eval(c, operands->items[0], &acc) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 1; i < operands->count && rc == 0; i++) {
        value next;
        rc = eval(c, operands->items[i], &next);
        if (rc == 0)
            rc = fold_step(c, e, ops[i - 1], &b, &acc, &next);
    }
    if (b.active && rc == 0)
        rc = concat_finish(c, &b, &acc);
    else if (b.active)
        concat_drop(c, &b);
    if (rc != 0) {
        value_release(&acc);
        return -1;
    }
    *out = acc;
    return 0;
}

static int eval_unary(const evalctx *c, const cypher_ast_node *e, value *out)
{
    value v;
    if (eval(c, e->u.unary.operand, &v) != 0)
        return -1;
    *out = value_null();
    switch (e->u.unary.op) {
    case CYPHER_OP_IS_NULL:
        *out = value_bool(value_is_null(&v));
        break;
    case CYPHER_OP_IS_NOT_NULL:
        *out = value_bool(!value_is_null(&v));
        break;
    case CYPHER_OP_NOT: {
        tri t = TRI_NULL;
        if (as_tri(c, e, &v, &t) != 0)
            return -1;
        *out = tri_value(t == TRI_NULL ? TRI_NULL : t == TRI_TRUE ? TRI_FALSE : TRI_TRUE);
        break;
    }
    case CYPHER_OP_NEG:
        if (value_kind(&v) == VAL_INT) {
            if (v.u.i == INT64_MIN)
                return exec_fail(c->x, e, "ArgumentError", "IntegerOverflow", "integer overflow");
            *out = value_int(-v.u.i);
        } else if (value_kind(&v) == VAL_FLOAT) {
            *out = value_float(-v.u.f);
        } else if (!value_is_null(&v)) {
            int rc = type_error(c, e, "unary minus", &v);
            value_release(&v);
            return rc;
        }
        break;
    case CYPHER_OP_POS:
        if (!value_is_null(&v) && !value_is_number(&v)) {
            int rc = type_error(c, e, "unary plus", &v);
            value_release(&v);
            return rc;
        }
        *out = v;
        return 0;
    default:
        break;
    }
    value_release(&v);
    return 0;
}

static int eval_chain(const evalctx *c, const cypher_ast_node *e, value *out)
{
    size_t n = e->u.chain.operands.count;
    value prev;
    if (eval(c, e->u.chain.operands.items[0], &prev) != 0)
        return -1;
    tri res = TRI_TRUE;
    for (size_t i = 1; i < n; i++) {
        value cur;
        if (eval(c, e->u.chain.operands.items[i], &cur) != 0) {
            value_release(&prev);
            return -1;
        }
        tri t = compare_op(e->u.chain.ops[i - 1], &prev, &cur);
        if (t == TRI_FALSE)
            res = TRI_FALSE;
        else if (t == TRI_NULL && res == TRI_TRUE)
            res = TRI_NULL;
        value_release(&prev);
        prev = cur;
    }
    value_release(&prev);
    *out = tri_value(res);
    return 0;
}

/* ---- access ---- */

/* n.key: the key's token comes from the node's cache after the first row
   (ast.h); a key no one has yet is looked up again each time, since a
   later write may intern it. */
static int property_by_token(const evalctx *c, const cypher_ast_node *e, const value *subject,
                             value *out)
{
    strata_token tok;
    *out = value_null();
    if (!exec_cached_token(c->x, (_Atomic uint32_t *)&e->u.property.token_plus1, STRATA_KEY,
                           &e->u.property.key, &tok))
        return 0;   /* a key nobody has: null */
    return entity_property_token(c->x, e, subject, tok, out);
}

static int access_key(const evalctx *c, const cypher_ast_node *e, const value *subject,
                      const char *key, size_t klen, value *out)
{
    *out = value_null();
    if (value_is_temporal(subject))
        return temporal_property(c->x, e, subject, key, klen, out);
    switch (value_kind(subject)) {
    case VAL_NULL:
        return 0;
    case VAL_NODE:
    case VAL_REL:
        if (e->kind == CYPHER_AST_PROPERTY)
            return property_by_token(c, e, subject, out);
        return entity_property(c->x, e, subject, key, klen, out);
    case VAL_MAP: {
        const value *v = value_map_get(subject, key, klen);
        if (v)
            *out = value_retain(*v);
        return 0;
    }
    default:
        return exec_fail(c->x, e, "TypeError", "InvalidArgumentType",
                         "cannot read property `%s` of %s", key, type_name(subject));
    }
}

static int eval_property(const evalctx *c, const cypher_ast_node *e, value *out)
{
    value s;
    if (eval(c, e->u.property.subject, &s) != 0)
        return -1;
    int rc = access_key(c, e, &s, e->u.property.key.ptr, e->u.property.key.len, out);
    value_release(&s);
    return rc;
}

/* Evaluates expr into *v, which must come out null or of kind want;
   anything else is a type error (recorded, -1). */
static int eval_kind(const evalctx *c, const cypher_ast_node *at, const cypher_ast_node *expr,
                     value_type want, const char *what, value *v)
{
    if (eval(c, expr, v) != 0)
        return -1;
    if (value_is_null(v) || value_kind(v) == want)
        return 0;
    int rc = type_error(c, at, what, v);
    value_release(v);
    return rc;
}

static int eval_has_labels(const evalctx *c, const cypher_ast_node *e, value *out)
{
    value s;
    *out = value_null();
    if (eval_kind(c, e, e->u.labels.subject, VAL_NODE, "label predicate", &s) != 0)
        return -1;
    if (value_is_null(&s))
        return 0;
    strata_view *v = exec_view(c->x);
    bool all = true;
    for (size_t i = 0; i < e->u.labels.labels.count && all; i++) {
        strata_token tok;
        bool has = false;
        if (strata_token_lookup(v, STRATA_LABEL, e->u.labels.labels.items[i]->u.name.ptr, &tok) ==
            STRATA_OK &&
            strata_node_has_label(v, s.u.id, tok, &has) != STRATA_OK)
            has = false;   /* a node this statement deleted carries no labels */
        all = has;
    }
    *out = value_bool(all);
    return 0;
}

static bool index_of(const value *idx, size_t n, int64_t *out)
{
    int64_t i = idx->u.i;
    if (i < 0)
        i += (int64_t)n;
    *out = i;
    return i >= 0 && (uint64_t)i < n;
}

static int eval_subscript(const evalctx *c, const cypher_ast_node *e, value *out)
{
    value s, k;
    *out = value_null();
    if (eval(c, e->u.subscript.subject, &s) != 0)
        return -1;
    if (eval(c, e->u.subscript.from, &k) != 0) {
        value_release(&s);
        return -1;
    }
    int rc = 0;
    if (value_is_null(&s) || value_is_null(&k)) {
        /* null */
    } else if (value_kind(&s) == VAL_LIST) {
        if (value_kind(&k) != VAL_INT)
            rc = exec_fail(c->x, e, "TypeError", "ListElementAccessByNonInteger",
                           "a list index must be an integer, not %s", type_name(&k));
        else {
            int64_t i;
            if (index_of(&k, value_list_len(&s), &i))
                *out = value_retain(value_list_items(&s)[i]);
        }
    } else if (value_kind(&s) == VAL_MAP || value_kind(&s) == VAL_NODE ||
               value_kind(&s) == VAL_REL) {
        if (value_kind(&k) != VAL_STRING)
            rc = exec_fail(c->x, e, "TypeError", "MapElementAccessByNonString",
                           "a map key must be a string, not %s", type_name(&k));
        else {
            size_t kl;
            const char *ks = value_str(&k, &kl);
            rc = access_key(c, e, &s, ks, kl, out);
        }
    } else {
        rc = exec_fail(c->x, e, "TypeError", "InvalidArgumentType", "cannot index into %s",
                       type_name(&s));
    }
    value_release(&s);
    value_release(&k);
    return rc;
}

static int eval_slice(const evalctx *c, const cypher_ast_node *e, value *out)
{
    value s, f = value_null(), t = value_null();
    *out = value_null();
    if (eval(c, e->u.subscript.subject, &s) != 0)
        return -1;
    if ((e->u.subscript.from && eval(c, e->u.subscript.from, &f) != 0) ||
        (e->u.subscript.to && eval(c, e->u.subscript.to, &t) != 0)) {
        value_release(&s);
        value_release(&f);
        return -1;
    }
    int rc = 0;
    if (value_is_null(&s) || (e->u.subscript.from && value_is_null(&f)) ||
        (e->u.subscript.to && value_is_null(&t)))
        goto done;
    if (value_kind(&s) != VAL_LIST || (e->u.subscript.from && value_kind(&f) != VAL_INT) ||
        (e->u.subscript.to && value_kind(&t) != VAL_INT)) {
        rc = exec_fail(c->x, e, "TypeError", "InvalidArgumentType", "invalid slice");
        goto done;
    }
    int64_t n = (int64_t)value_list_len(&s);
    int64_t from = e->u.subscript.from ? f.u.i : 0, to = e->u.subscript.to ? t.u.i : n;
    if (from < 0)
        from += n;
    if (to < 0)
        to += n;
    from = from < 0 ? 0 : from > n ? n : from;
    to = to < 0 ? 0 : to > n ? n : to;
    if (to < from)
        to = from;
    if (exec_tick_n(c->x, (size_t)(to - from)) != 0) {
        rc = -1;
        goto done;
    }
    value *items = mem_alloc(c->x->m, (size_t)(to - from + 1) * sizeof(value));
    if (!items) {
        rc = exec_oom(c->x);
        goto done;
    }
    for (int64_t i = from; i < to; i++)
        items[i - from] = value_retain(value_list_items(&s)[i]);
    if (value_list_from(c->x->m, items, (size_t)(to - from), out) != 0)
        rc = exec_oom(c->x);
    mem_free(c->x->m, items);
done:
    value_release(&s);
    value_release(&f);
    value_release(&t);
    return rc;
}

/* ---- literals ---- */

static int eval_list(const evalctx *c, const cypher_ast_node *e, value *out)
{
    size_t n = e->u.list.count;
    value *items = mem_calloc(c->x->m, n * sizeof(value));
    if (!items)
        return exec_oom(c->x);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = eval(c, e->u.list.items[i], &items[i]);
    if (rc == 0 && (rc = value_list_from(c->x->m, items, n, out)) != 0)
        rc = exec_value_fail(c->x, e, rc);
    if (rc != 0)
        for (size_t i = 0; i < n; i++)
            value_release(&items[i]);
    mem_free(c->x->m, items);
    return rc;
}

static int eval_map(const evalctx *c, const cypher_ast_node *e, value *out)
{
    size_t n = e->u.list.count;
    value *kv = mem_calloc(c->x->m, 2 * n * sizeof(value));
    if (!kv)
        return exec_oom(c->x);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const cypher_ast_node *en = e->u.list.items[i];
        rc = make_string(c->x, en->u.entry.key.ptr, en->u.entry.key.len, &kv[i]);
        if (rc == 0)
            rc = eval(c, en->u.entry.value, &kv[n + i]);
    }
    if (rc == 0 && (rc = value_map_from(c->x->m, kv, kv + n, n, out)) != 0)
        rc = exec_value_fail(c->x, e, rc);
    if (rc != 0)
        for (size_t i = 0; i < 2 * n; i++)
            value_release(&kv[i]);
    mem_free(c->x->m, kv);
    return rc;
}

/* A prepared statement's parameter by name: a few, so a scan. */
static const value *bound_get(const exec *x, const cypher_ast_str *name)
{
    for (size_t i = 0; i < x->nbound; i++) {
        const bound_param *b = &x->bound[i];
        if (b->len == name->len && memcmp(b->name, name->ptr, name->len) == 0)
            return b->set ? &b->v : NULL;
    }
    return NULL;
}

static int eval_parameter(const evalctx *c, const cypher_ast_node *e, value *out)
{
    const value *v = c->x->bound ? bound_get(c->x, &e->u.name)
                     : c->x->params && value_kind(c->x->params) == VAL_MAP
                         ? value_map_get(c->x->params, e->u.name.ptr, e->u.name.len)
                         : NULL;
    if (!v)
        return exec_fail(c->x, e, "ArgumentError", "MissingParameter",
                         "expected a parameter named %s", e->u.name.ptr);
    *out = value_retain(*v);
    return 0;
}

/* ---- CASE, comprehensions ---- */

static int eval_case(const evalctx *c, const cypher_ast_node *e, value *out)
{
    value subj = value_null();
    if (e->u.case_.subject && eval(c, e->u.case_.subject, &subj) != 0)
        return -1;
    for (size_t i = 0; i < e->u.case_.alternatives.count; i++) {
        const cypher_ast_node *alt = e->u.case_.alternatives.items[i];
        value w;
        if (eval(c, alt->u.entry.when, &w) != 0) {
            value_release(&subj);
            return -1;
        }
        bool hit = e->u.case_.subject ? value_equals(&subj, &w) == TRI_TRUE
                                      : value_kind(&w) == VAL_BOOL && w.u.b;
        value_release(&w);
        if (hit) {
            value_release(&subj);
            return eval(c, alt->u.entry.value, out);
        }
    }
    value_release(&subj);
    if (e->u.case_.otherwise)
        return eval(c, e->u.case_.otherwise, out);
    *out = value_null();
    return 0;
}

static int eval_comprehension(const evalctx *c, const cypher_ast_node *e, value *out)
{
    value src;
    *out = value_null();
    if (eval_kind(c, e, e->u.comprehension.source, VAL_LIST, "expected a list", &src) != 0)
        return -1;
    if (value_is_null(&src))
        return 0;
    size_t n = value_list_len(&src);
    value *items = mem_calloc(c->x->m, n * sizeof(value));
    if (!items) {
        value_release(&src);
        return exec_oom(c->x);
    }
    local_var lv = {e->u.comprehension.variable->u.name.ptr,
                    e->u.comprehension.variable->u.name.len, value_null(), c->locals};
    evalctx inner = *c;
    inner.locals = &lv;
    size_t kept = 0, trues = 0;
    bool nulls = false;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        lv.v = value_list_items(&src)[i];
        tri t = TRI_TRUE;
        rc = exec_tick(c->x);
        if (rc == 0 && e->u.comprehension.where)
            rc = eval_predicate(&inner, e->u.comprehension.where, &t);
        if (rc != 0)
            break;
        if (e->kind == CYPHER_AST_QUANTIFIER) {
            if (t == TRI_TRUE)
                trues++;
            else if (t == TRI_NULL)
                nulls = true;
            continue;
        }
        if (t != TRI_TRUE)
            continue;
        if (e->u.comprehension.result)
            rc = eval(&inner, e->u.comprehension.result, &items[kept]);
        else
            items[kept] = value_retain(lv.v);
        if (rc == 0)
            kept++;
    }
    if (rc == 0) {
        if (e->kind == CYPHER_AST_QUANTIFIER) {
            tri r;
            switch (e->u.comprehension.quantifier) {
            case CYPHER_QUANT_ALL:   /* handled by eval_quantifier_all */
                r = trues == n ? TRI_TRUE : TRI_FALSE;
                break;
            case CYPHER_QUANT_ANY:
                r = trues ? TRI_TRUE : nulls ? TRI_NULL : TRI_FALSE;
                break;
            case CYPHER_QUANT_NONE:
                r = trues ? TRI_FALSE : nulls ? TRI_NULL : TRI_TRUE;
                break;
            default:
                r = trues > 1 ? TRI_FALSE : nulls ? TRI_NULL : trues == 1 ? TRI_TRUE : TRI_FALSE;
                break;
            }
            *out = tri_value(r);
        } else if ((rc = value_list_from(c->x->m, items, kept, out)) != 0) {
            rc = exec_value_fail(c->x, e, rc);
        }
    }
    if (rc != 0 || e->kind == CYPHER_AST_QUANTIFIER)
        for (size_t i = 0; i < kept; i++)
            value_release(&items[i]);
    mem_free(c->x->m, items);
    value_release(&src);
    return rc;
}

static int eval_quantifier_all(const evalctx *c, const cypher_ast_node *e, value *out)
{
    /* all(): false as soon as one element is false; null if none is false
       but one is null. */
    value src;
    *out = value_null();
    if (eval_kind(c, e, e->u.comprehension.source, VAL_LIST, "expected a list", &src) != 0)
        return -1;
    if (value_is_null(&src))
        return 0;
    local_var lv = {e->u.comprehension.variable->u.name.ptr,
                    e->u.comprehension.variable->u.name.len, value_null(), c->locals};
    evalctx inner = *c;
    inner.locals = &lv;
    tri r = TRI_TRUE;
    for (size_t i = 0; i < value_list_len(&src); i++) {
        lv.v = value_list_items(&src)[i];
        tri t = TRI_TRUE;
        if (exec_tick(c->x) != 0 ||
            (e->u.comprehension.where &&
             eval_predicate(&inner, e->u.comprehension.where, &t) != 0)) {
            value_release(&src);
            return -1;
        }
        if (t == TRI_FALSE) {
            r = TRI_FALSE;
            break;
        }
        if (t == TRI_NULL)
            r = TRI_NULL;
    }
    value_release(&src);
    *out = tri_value(r);
    return 0;
}

static int eval_reduce(const evalctx *c, const cypher_ast_node *e, value *out)
{
    value acc, src;
    if (eval(c, e->u.reduce.init, &acc) != 0)
        return -1;
    *out = value_null();
    if (eval_kind(c, e, e->u.reduce.source, VAL_LIST, "reduce expects a list", &src) != 0) {
        value_release(&acc);
        return -1;
    }
    if (value_is_null(&src)) {
        value_release(&acc);
        return 0;
    }
    local_var la = {e->u.reduce.accumulator->u.name.ptr, e->u.reduce.accumulator->u.name.len,
                    value_null(), c->locals};
    local_var lv = {e->u.reduce.variable->u.name.ptr, e->u.reduce.variable->u.name.len,
                    value_null(), &la};
    evalctx inner = *c;
    inner.locals = &lv;
    for (size_t i = 0; i < value_list_len(&src); i++) {
        la.v = acc;
        lv.v = value_list_items(&src)[i];
        value next;
        if (exec_tick(c->x) != 0 || eval(&inner, e->u.reduce.result, &next) != 0) {
            value_release(&acc);
            value_release(&src);
            return -1;
        }
        value_release(&acc);
        acc = next;
    }
    value_release(&src);
    *out = acc;
    return 0;
}

/* ---- functions and aggregates ---- */

bool expr_same(exec *x, const cypher_ast_node *a, const cypher_ast_node *b)
{
    char *pa, *pb;
    size_t la, lb;
    if (cypher_ast_print(a, x->m, &pa, &la) != 0)
        return false;
    if (cypher_ast_print(b, x->m, &pb, &lb) != 0) {
        mem_free(x->m, pa);
        return false;
    }
    bool same = la == lb && memcmp(pa, pb, la) == 0;
    mem_free(x->m, pa);
    mem_free(x->m, pb);
    return same;
}

static int has_agg_child(const cypher_ast_node *child, void *ctx)
{
    (void)ctx;
    return expr_has_aggregate(child) ? 1 : 0;
}

bool expr_has_aggregate(const cypher_ast_node *e)
{
    if (!e)
        return false;
    if (is_aggregate_call(e))
        return true;
    if (e->kind == CYPHER_AST_EXISTS)
        return false;   /* a subquery aggregates over its own rows */
    return cypher_ast_each_child(e, has_agg_child, NULL) != 0;
}

static int eval_function(const evalctx *c, const cypher_ast_node *e, value *out)
{
    if (is_aggregate_call(e)) {
        if (c->aggs)
            for (size_t i = 0; i < c->aggs->n; i++)
                if (c->aggs->calls[i] == e) {
                    *out = value_retain(c->aggs->vals[i]);
                    return 0;
                }
        return exec_fail(c->x, e, "SyntaxError", "InvalidAggregation",
                         "aggregation is not allowed here");
    }
    size_t n = e->u.function.args.count;
    /* exists(pattern) is the pattern predicate itself, not whether its
       boolean is null */
    if (n == 1 && e->u.function.args.items[0]->kind == CYPHER_AST_PATH &&
        strcasecmp(e->u.function.name.ptr, "exists") == 0)
        return eval_pattern_predicate(c, e->u.function.args.items[0], out);
    value args[8];
    if (n > 8)
        return exec_fail(c->x, e, "SyntaxError", "InvalidNumberOfArguments",
                         "too many arguments");
    for (size_t i = 0; i < n; i++)
        if (eval(c, e->u.function.args.items[i], &args[i]) != 0) {
            for (size_t j = 0; j < i; j++)
                value_release(&args[j]);
            return -1;
        }
    int rc = function_call(c, e, args, n, out);
    for (size_t i = 0; i < n; i++)
        value_release(&args[i]);
    return rc;
}

static int eval_map_projection(const evalctx *c, const cypher_ast_node *e, value *out)
{
    value subj;
    *out = value_null();
    if (eval(c, e->u.map_projection.subject, &subj) != 0)
        return -1;
    if (value_is_null(&subj))
        return 0;
    size_t n = e->u.map_projection.items.count;
    /* .* contributes every key of the subject: read them once up front. */
    value all = value_null();
    for (size_t i = 0; i < n; i++)
        if (e->u.map_projection.items.items[i]->kind == CYPHER_AST_MAP_PROJ_ALL) {
            int r2 = value_kind(&subj) == VAL_MAP ? (all = value_retain(subj), 0)
                                                   : entity_properties_map(c->x, &subj, &all);
            if (r2 != 0) {
                value_release(&subj);
                return -1;
            }
            break;
        }
    size_t cap = n + value_map_len(&all) + 1, cnt = 0;
    value *k = mem_calloc(c->x->m, cap * sizeof(value));
    value *v = mem_calloc(c->x->m, cap * sizeof(value));
    int rc = 0;
    if (!k || !v) {
        rc = exec_oom(c->x);
        goto done;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        const cypher_ast_node *it = e->u.map_projection.items.items[i];
        if (it->kind == CYPHER_AST_MAP_PROJ_ALL) {
            for (size_t j = 0; j < value_map_len(&all); j++) {
                k[cnt] = value_retain(value_map_keys(&all)[j]);
                v[cnt++] = value_retain(value_map_vals(&all)[j]);
            }
            continue;
        }
        if (cnt == cap) {
            rc = exec_fail(c->x, it, "SyntaxError", NULL, "map projection too large");
            break;
        }
        if (it->kind == CYPHER_AST_MAP_PROJ_PROPERTY) {
            rc = make_string(c->x, it->u.name.ptr, it->u.name.len, &k[cnt]);
            if (rc == 0)
                rc = access_key(c, it, &subj, it->u.name.ptr, it->u.name.len, &v[cnt]);
        } else if (it->kind == CYPHER_AST_MAP_ENTRY) {
            rc = make_string(c->x, it->u.entry.key.ptr, it->u.entry.key.len, &k[cnt]);
            if (rc == 0)
                rc = eval(c, it->u.entry.value, &v[cnt]);
        } else {
            rc = make_string(c->x, it->u.name.ptr, it->u.name.len, &k[cnt]);
            if (rc == 0)
                rc = eval(c, it, &v[cnt]);
        }
        cnt++;
    }
    if (rc == 0 && (rc = value_map_from(c->x->m, k, v, cnt, out)) != 0)
        rc = exec_value_fail(c->x, e, rc);
    if (rc != 0)
        for (size_t i = 0; i < cnt; i++) {
            value_release(&k[i]);
            value_release(&v[i]);
        }
done:
    value_release(&all);
    if (k)
        mem_free(c->x->m, k);
    if (v)
        mem_free(c->x->m, v);
    value_release(&subj);
    return rc;
}

int eval(const evalctx *c, const cypher_ast_node *e, value *out)
{
    *out = value_null();
    if (c->aggs)
        for (size_t i = 0; i < c->aggs->n; i++)
            if (c->aggs->calls[i] == e) {
                *out = value_retain(c->aggs->vals[i]);
                return 0;
            }
    switch (e->kind) {
    case CYPHER_AST_NULL_LIT:
        return 0;
    case CYPHER_AST_BOOL_LIT:
        *out = value_bool(e->u.boolean);
        return 0;
    case CYPHER_AST_INT_LIT:
        *out = value_int(e->u.integer);
        return 0;
    case CYPHER_AST_FLOAT_LIT:
        *out = value_float(e->u.real);
        return 0;
    case CYPHER_AST_STRING_LIT:
        return make_string(c->x, e->u.name.ptr, e->u.name.len, out);
    case CYPHER_AST_PARAMETER:
        return eval_parameter(c, e, out);
    case CYPHER_AST_VARIABLE:
        return eval_variable(c, e, out);
    case CYPHER_AST_LIST:
        return eval_list(c, e, out);
    case CYPHER_AST_MAP:
        return eval_map(c, e, out);
    case CYPHER_AST_BINARY:
        return eval_binary(c, e, out);
    case CYPHER_AST_BINARY_CHAIN:
        return eval_binary_chain(c, e, out);
    case CYPHER_AST_UNARY:
        return eval_unary(c, e, out);
    case CYPHER_AST_COMPARISON:
        return eval_chain(c, e, out);
    case CYPHER_AST_PROPERTY:
        return eval_property(c, e, out);
    case CYPHER_AST_HAS_LABELS:
        return eval_has_labels(c, e, out);
    case CYPHER_AST_SUBSCRIPT:
        return eval_subscript(c, e, out);
    case CYPHER_AST_SLICE:
        return eval_slice(c, e, out);
    case CYPHER_AST_FUNCTION:
    case CYPHER_AST_COUNT_STAR:
        return eval_function(c, e, out);
    case CYPHER_AST_CASE:
        return eval_case(c, e, out);
    case CYPHER_AST_LIST_COMPREHENSION:
        return eval_comprehension(c, e, out);
    case CYPHER_AST_QUANTIFIER:
        if (e->u.comprehension.quantifier == CYPHER_QUANT_ALL)
            return eval_quantifier_all(c, e, out);
        return eval_comprehension(c, e, out);
    case CYPHER_AST_REDUCE:
        return eval_reduce(c, e, out);
    case CYPHER_AST_MAP_PROJECTION:
        return eval_map_projection(c, e, out);
    case CYPHER_AST_PATH:
        return eval_pattern_predicate(c, e, out);
    case CYPHER_AST_PATTERN_COMPREHENSION:
        return eval_pattern_comprehension(c, e, out);
    case CYPHER_AST_EXISTS:
        return eval_exists_subquery(c, e, out);
    default:
        return exec_fail(c->x, e, "SyntaxError", NULL, "%s expressions are not supported yet",
                         cypher_ast_kind_name(e->kind));
    }
}
