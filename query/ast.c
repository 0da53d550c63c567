/*
 * ast — the tree's arena, its kind tables, traversal and the canonical
 * printer (see ast.h for the node layout and the printed form).
 *
 * The arena is a chain of blocks from one mem_ctx; nodes are bump-
 * allocated and never freed one by one, so a parse that fails part way
 * frees everything it built by freeing the tree.  Blocks are small in test
 * builds so that the chaining path runs on every test query.
 *
 * Printing and traversal are table-driven: each kind's payload member
 * (the third column of CYPHER_AST_KINDS) selects a printer and a child
 * enumerator, one per payload shape.
 */
#include "query/ast.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef STRATA_TESTING
#define ARENA_BLOCK 256    /* tiny: every query spans several blocks */
#else
#define ARENA_BLOCK 8192
#endif
#define ARENA_ALIGN _Alignof(max_align_t)

typedef struct arena_block {
    struct arena_block *next;
    max_align_t data[];
} arena_block;

struct cypher_ast {
    mem_ctx *m;
    arena_block *blocks;
    char *cur;                 /* free space in the newest block of ARENA_BLOCK */
    size_t left;
    cypher_ast_node *root;
};

/* ---- arena ----------------------------------------------------------------- */

cypher_ast *cypher_ast_new(mem_ctx *m)
{
    cypher_ast *ast = mem_calloc(m, sizeof *ast);
    if (!ast)
        return NULL;
    mem_ctx_retain(m);
    ast->m = m;
    return ast;
}

void cypher_ast_free(cypher_ast **ast)
{
    if (!ast || !*ast)
        return;
    cypher_ast *a = *ast;
    mem_ctx *m = a->m;
    for (arena_block *b = a->blocks, *next; b; b = next) {
        next = b->next;
        mem_free(m, b);
    }
    mem_free(m, a);
    mem_ctx_release(m);
    *ast = NULL;
}

void *cypher_ast_alloc(cypher_ast *ast, size_t size)
{
    if (size > SIZE_MAX - ARENA_ALIGN - sizeof(arena_block))
        return NULL;   /* also what mem_array_size's SIZE_MAX lands on */
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (size == 0)
        size = ARENA_ALIGN;
    if (size > ast->left) {
        /* a large request gets a block of its own, and the free space of
           the current block stays current */
        bool own = size > ARENA_BLOCK / 2;
        size_t want = own ? size : ARENA_BLOCK;
        arena_block *b = mem_alloc(ast->m, sizeof(arena_block) + want);
        if (!b)
            return NULL;
        b->next = ast->blocks;
        ast->blocks = b;
        if (own) {
            memset(b->data, 0, size);
            return b->data;
        }
        ast->cur = (char *)b->data;
        ast->left = want;
    }
    void *p = ast->cur;
    ast->cur += size;
    ast->left -= size;
    memset(p, 0, size);
    return p;
}

cypher_ast_node *cypher_ast_node_new(cypher_ast *ast, cypher_ast_kind kind, uint32_t line,
                                     uint32_t column, size_t offset)
{
    cypher_ast_node *n = cypher_ast_alloc(ast, sizeof *n);
    if (!n)
        return NULL;
    n->kind = kind;
    n->line = line;
    n->column = column;
    n->offset = offset;
    return n;
}

int cypher_ast_strdup(cypher_ast *ast, const char *s, size_t len, cypher_ast_str *out)
{
    if (len == SIZE_MAX)
        return -1;
    char *p = cypher_ast_alloc(ast, len + 1);
    if (!p)
        return -1;
    if (len)
        memcpy(p, s, len);
    p[len] = '\0';
    out->ptr = p;
    out->len = len;
    return 0;
}

void cypher_ast_set_root(cypher_ast *ast, cypher_ast_node *root) { ast->root = root; }

const cypher_ast_node *cypher_ast_root(const cypher_ast *ast) { return ast ? ast->root : NULL; }

/* ---- names ------------------------------------------------------------------ */

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static const char *const kind_names[] = {
#define X(kind, name, member) [CYPHER_AST_##kind] = name,
    CYPHER_AST_KINDS(X)
#undef X
};

static const char *const op_names[] = {
#define X(op, name) [CYPHER_OP_##op] = name,
    CYPHER_AST_OPS(X)
#undef X
};

const char *cypher_ast_kind_name(cypher_ast_kind kind)
{
    return (size_t)kind < COUNT_OF(kind_names) ? kind_names[kind] : "?";
}

const char *cypher_ast_op_name(cypher_ast_op op)
{
    return (size_t)op < COUNT_OF(op_names) ? op_names[op] : "?";
}

/* ---- traversal ---------------------------------------------------------------- */

typedef int (*child_fn)(const cypher_ast_node *child, void *ctx);

/* Calls fn on each non-NULL child in source order; stops at the first
   non-zero return and returns it. */
#define VISIT(c)                                   \
    do {                                           \
        if ((c) != NULL) {                         \
            int rc_ = fn((c), ctx);                \
            if (rc_)                               \
                return rc_;                        \
        }                                          \
    } while (0)

static int visit_list(const cypher_ast_list *l, child_fn fn, void *ctx)
{
    for (size_t i = 0; i < l->count; i++)
        VISIT(l->items[i]);
    return 0;
}

#define VISIT_LIST(l)                              \
    do {                                           \
        int rc_ = visit_list(&(l), fn, ctx);       \
        if (rc_)                                   \
            return rc_;                            \
    } while (0)

static int children_statement(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.statement.body);
    return 0;
}

static int children_union_(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT_LIST(n->u.union_.queries);
    return 0;
}

static int children_list(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT_LIST(n->u.list);
    return 0;
}

static int children_match(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT_LIST(n->u.match.parts);
    VISIT(n->u.match.where);
    return 0;
}

static int children_unwind(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.unwind.expr);
    VISIT(n->u.unwind.alias);
    return 0;
}

static int children_projection(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT_LIST(n->u.projection.items);
    VISIT_LIST(n->u.projection.order);
    VISIT(n->u.projection.skip);
    VISIT(n->u.projection.limit);
    VISIT(n->u.projection.where);
    return 0;
}

static int children_merge(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.merge.part);
    VISIT_LIST(n->u.merge.actions);
    return 0;
}

static int children_merge_action(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT_LIST(n->u.merge_action.items);
    return 0;
}

static int children_assign(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.assign.target);
    VISIT(n->u.assign.value);
    return 0;
}

static int children_labels(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.labels.subject);
    VISIT_LIST(n->u.labels.labels);
    return 0;
}

static int children_delete_(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT_LIST(n->u.delete_.exprs);
    return 0;
}

static int children_call(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT_LIST(n->u.call.args);
    VISIT_LIST(n->u.call.yields);
    VISIT(n->u.call.where);
    return 0;
}

static int children_alias(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.alias.expr);
    VISIT(n->u.alias.alias);
    return 0;
}

static int children_sort(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.sort.expr);
    return 0;
}

static int children_load_csv(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.load_csv.source);
    VISIT(n->u.load_csv.alias);
    VISIT(n->u.load_csv.terminator);
    return 0;
}

static int children_schema(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.schema.target);
    VISIT_LIST(n->u.schema.keys);
    return 0;
}

static int children_part(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.part.variable);
    VISIT(n->u.part.path);
    return 0;
}

static int children_node(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.node.variable);
    VISIT_LIST(n->u.node.labels);
    VISIT(n->u.node.properties);
    return 0;
}

static int children_rel(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.rel.variable);
    VISIT_LIST(n->u.rel.types);
    VISIT(n->u.rel.properties);
    return 0;
}

static int children_none(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    (void)n;
    (void)fn;
    (void)ctx;
    return 0;
}

#define children_name children_none
#define children_boolean children_none
#define children_integer children_none
#define children_real children_none

static int children_entry(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.entry.when);
    VISIT(n->u.entry.value);
    return 0;
}

static int children_binary(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.binary.lhs);
    VISIT(n->u.binary.rhs);
    return 0;
}

static int children_unary(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.unary.operand);
    return 0;
}

static int children_chain(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT_LIST(n->u.chain.operands);
    return 0;
}

static int children_fold(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT_LIST(n->u.fold.operands);
    return 0;
}

static int children_property(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.property.subject);
    return 0;
}

static int children_subscript(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.subscript.subject);
    VISIT(n->u.subscript.from);
    VISIT(n->u.subscript.to);
    return 0;
}

static int children_function(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT_LIST(n->u.function.args);
    return 0;
}

static int children_case_(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.case_.subject);
    VISIT_LIST(n->u.case_.alternatives);
    VISIT(n->u.case_.otherwise);
    return 0;
}

static int children_comprehension(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.comprehension.variable);
    VISIT(n->u.comprehension.source);
    VISIT(n->u.comprehension.where);
    VISIT(n->u.comprehension.result);
    return 0;
}

static int children_reduce(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.reduce.accumulator);
    VISIT(n->u.reduce.init);
    VISIT(n->u.reduce.variable);
    VISIT(n->u.reduce.source);
    VISIT(n->u.reduce.result);
    return 0;
}

static int children_map_projection(const cypher_ast_node *n, child_fn fn, void *ctx)
{
    VISIT(n->u.map_projection.subject);
    VISIT_LIST(n->u.map_projection.items);
    return 0;
}

typedef int (*children_fn)(const cypher_ast_node *n, child_fn fn, void *ctx);

static const children_fn children_of[] = {
#define X(kind, name, member) [CYPHER_AST_##kind] = children_##member,
    CYPHER_AST_KINDS(X)
#undef X
};

int cypher_ast_each_child(const cypher_ast_node *n,
                          int (*fn)(const cypher_ast_node *child, void *ctx), void *ctx)
{
    if (!n || (size_t)n->kind >= COUNT_OF(children_of))
        return 0;
    return children_of[n->kind](n, fn, ctx);
}

/* ---- check ------------------------------------------------------------------ */

struct check_state {
    size_t depth, max_depth;
    size_t text_len;
};

static int check_node(const cypher_ast_node *n, void *ctx)
{
    struct check_state *st = ctx;
    if ((size_t)n->kind >= COUNT_OF(kind_names) || n->line == 0 || n->column == 0 ||
        n->offset > st->text_len)
        return -1;
    if (++st->depth > st->max_depth)
        st->max_depth = st->depth;
    if (st->depth > CYPHER_AST_MAX_DEPTH)
        return -1;
    int rc = cypher_ast_each_child(n, check_node, st);
    st->depth--;
    return rc;
}

int cypher_ast_check(const cypher_ast *ast, size_t text_len, size_t *depth)
{
    struct check_state st = {0, 0, text_len};
    if (!ast || !ast->root || ast->root->kind != CYPHER_AST_STATEMENT)
        return -1;
    int rc = check_node(ast->root, &st);
    if (depth)
        *depth = st.max_depth;
    return rc ? -1 : 0;
}

/* ---- printer ---------------------------------------------------------------- */

typedef struct out_buf {
    mem_ctx *m;
    char *buf;
    size_t len, cap;
    bool failed;
} out_buf;

static void out_bytes(out_buf *o, const char *s, size_t n)
{
    if (o->failed)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 128;
        while (cap < o->len + n + 1) {
            if (cap > SIZE_MAX / 2) {
                o->failed = true;
                return;
            }
            cap *= 2;
        }
        char *nb = mem_realloc(o->m, o->buf, cap);
        if (!nb) {
            o->failed = true;
            return;
        }
        o->buf = nb;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

static void out_str(out_buf *o, const char *s) { out_bytes(o, s, strlen(s)); }

static void out_fmt(out_buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_fmt(out_buf *o, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        out_bytes(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Whether a name prints bare: an ASCII identifier that cannot be read as
   a literal or as the printer's "absent" mark. */
static bool plain_name(cypher_ast_str s)
{
    static const char *const taken[] = {"_", "true", "false", "null"};
    if (s.len == 0 || (s.ptr[0] >= '0' && s.ptr[0] <= '9'))
        return false;
    for (size_t i = 0; i < COUNT_OF(taken); i++)
        if (s.len == strlen(taken[i]) && strncasecmp(s.ptr, taken[i], s.len) == 0)
            return false;
    for (size_t i = 0; i < s.len; i++) {
        char c = s.ptr[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return false;
    }
    return true;
}

/* A name, `quoted` unless it is a plain identifier (inside the quotes a
   backtick doubles, and a backslash or control byte is escaped as in a
   string); qualified names (functions, procedures) keep their dots. */
static void out_name(out_buf *o, cypher_ast_str s, bool qualified)
{
    bool plain = plain_name(s);
    if (!plain && qualified) {
        plain = s.len > 0;
        size_t start = 0;
        for (size_t i = 0; plain && i <= s.len; i++) {
            if (i == s.len || s.ptr[i] == '.') {
                cypher_ast_str part = {s.ptr + start, i - start};
                plain = plain_name(part);
                start = i + 1;
            }
        }
    }
    if (plain) {
        out_bytes(o, s.ptr, s.len);
        return;
    }
    out_str(o, "`");
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        if (c == '`')
            out_str(o, "``");
        else if (c == '\\')
            out_str(o, "\\\\");
        else if (c < 0x20 || c == 0x7F)
            out_fmt(o, "\\u%04X", c);   /* keeps the output one printable line */
        else
            out_bytes(o, s.ptr + i, 1);
    }
    out_str(o, "`");
}

static void out_string(out_buf *o, cypher_ast_str s)
{
    static const char *const escapes[] = {
        ['"'] = "\\\"", ['\\'] = "\\\\", ['\n'] = "\\n", ['\r'] = "\\r",
        ['\t'] = "\\t", ['\b'] = "\\b",  ['\f'] = "\\f",
    };
    out_str(o, "\"");
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        if (c < COUNT_OF(escapes) && escapes[c])
            out_str(o, escapes[c]);
        else if (c < 0x20 || c == 0x7F)
            out_fmt(o, "\\u%04X", c);
        else
            out_bytes(o, s.ptr + i, 1);
    }
    out_str(o, "\"");
}

/* The shortest form that reads back as the same double, always with a
   '.' or an exponent so it cannot be taken for an integer. */
static void out_float(out_buf *o, double v)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    out_str(o, tmp);
    if (!strpbrk(tmp, ".eEn"))
        out_str(o, ".0");
}

static void print_any(out_buf *o, const cypher_ast_node *n);

static void print_items(out_buf *o, const cypher_ast_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        out_str(o, " ");
        print_any(o, l->items[i]);
    }
}

static void print_child(out_buf *o, const cypher_ast_node *n)
{
    if (n) {
        out_str(o, " ");
        print_any(o, n);
    }
}

/* " (head child)" when the child is present. */
static void print_tagged(out_buf *o, const char *head, const cypher_ast_node *n)
{
    if (n) {
        out_fmt(o, " (%s ", head);
        print_any(o, n);
        out_str(o, ")");
    }
}

static void open_kind(out_buf *o, const cypher_ast_node *n)
{
    out_str(o, "(");
    out_str(o, kind_names[n->kind]);
}

static void print_statement(out_buf *o, const cypher_ast_node *n)
{
    static const char *const modes[] = {
        [CYPHER_MODE_RUN] = NULL, [CYPHER_MODE_EXPLAIN] = "explain",
        [CYPHER_MODE_PROFILE] = "profile",
    };
    const char *mode = (size_t)n->u.statement.mode < COUNT_OF(modes)
                           ? modes[n->u.statement.mode] : NULL;
    if (!mode) {
        print_any(o, n->u.statement.body);
        return;
    }
    out_fmt(o, "(%s ", mode);
    print_any(o, n->u.statement.body);
    out_str(o, ")");
}

static void print_union_(out_buf *o, const cypher_ast_node *n)
{
    out_str(o, n->u.union_.all ? "(union-all" : "(union");
    print_items(o, &n->u.union_.queries);
    out_str(o, ")");
}

static void print_list(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    print_items(o, &n->u.list);
    out_str(o, ")");
}

static void print_match(out_buf *o, const cypher_ast_node *n)
{
    out_str(o, n->u.match.optional ? "(optional-match" : "(match");
    print_items(o, &n->u.match.parts);
    print_tagged(o, "where", n->u.match.where);
    out_str(o, ")");
}

static void print_unwind(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    print_child(o, n->u.unwind.expr);
    print_child(o, n->u.unwind.alias);
    out_str(o, ")");
}

static void print_projection(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    if (n->u.projection.distinct)
        out_str(o, " distinct");
    if (n->u.projection.star)
        out_str(o, " *");
    print_items(o, &n->u.projection.items);
    if (n->u.projection.order.count) {
        out_str(o, " (order-by");
        print_items(o, &n->u.projection.order);
        out_str(o, ")");
    }
    print_tagged(o, "skip", n->u.projection.skip);
    print_tagged(o, "limit", n->u.projection.limit);
    print_tagged(o, "where", n->u.projection.where);
    out_str(o, ")");
}

static void print_merge(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    print_child(o, n->u.merge.part);
    print_items(o, &n->u.merge.actions);
    out_str(o, ")");
}

static void print_merge_action(out_buf *o, const cypher_ast_node *n)
{
    out_str(o, n->u.merge_action.on_create ? "(on-create" : "(on-match");
    print_items(o, &n->u.merge_action.items);
    out_str(o, ")");
}

static void print_assign(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    print_child(o, n->u.assign.target);
    print_child(o, n->u.assign.value);
    out_str(o, ")");
}

static void print_labels(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    print_child(o, n->u.labels.subject);
    print_items(o, &n->u.labels.labels);
    out_str(o, ")");
}

static void print_delete_(out_buf *o, const cypher_ast_node *n)
{
    out_str(o, n->u.delete_.detach ? "(detach-delete" : "(delete");
    print_items(o, &n->u.delete_.exprs);
    out_str(o, ")");
}

static void print_call(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    out_str(o, " ");
    out_name(o, n->u.call.proc, true);
    if (n->u.call.has_args) {
        out_str(o, " (args");
        print_items(o, &n->u.call.args);
        out_str(o, ")");
    }
    if (n->u.call.has_yield) {
        out_str(o, " (yield");
        if (n->u.call.yield_star)
            out_str(o, " *");
        print_items(o, &n->u.call.yields);
        out_str(o, ")");
    }
    print_tagged(o, "where", n->u.call.where);
    out_str(o, ")");
}

static void print_alias(out_buf *o, const cypher_ast_node *n)
{
    if (!n->u.alias.alias) {
        print_any(o, n->u.alias.expr);
        return;
    }
    out_str(o, "(as ");
    print_any(o, n->u.alias.expr);
    print_child(o, n->u.alias.alias);
    out_str(o, ")");
}

static void print_sort(out_buf *o, const cypher_ast_node *n)
{
    out_str(o, n->u.sort.descending ? "(desc " : "(asc ");
    print_any(o, n->u.sort.expr);
    out_str(o, ")");
}

static void print_load_csv(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    if (n->u.load_csv.with_headers)
        out_str(o, " with-headers");
    print_child(o, n->u.load_csv.source);
    print_child(o, n->u.load_csv.alias);
    print_tagged(o, "fieldterminator", n->u.load_csv.terminator);
    out_str(o, ")");
}

static void print_schema(out_buf *o, const cypher_ast_node *n)
{
    bool creating = n->kind == CYPHER_AST_CREATE_INDEX || n->kind == CYPHER_AST_CREATE_CONSTRAINT;
    open_kind(o, n);
    if (n->u.schema.name.ptr) {
        out_str(o, " (name ");
        out_name(o, n->u.schema.name, false);
        out_str(o, ")");
    }
    if (n->u.schema.if_exists)
        out_str(o, creating ? " if-not-exists" : " if-exists");
    if (n->u.schema.range)
        out_str(o, " range");
    print_child(o, n->u.schema.target);
    print_items(o, &n->u.schema.keys);
    out_str(o, ")");
}

static void print_part(out_buf *o, const cypher_ast_node *n)
{
    static const char *const kinds[] = {
        [CYPHER_PATH_PLAIN] = NULL, [CYPHER_PATH_SHORTEST] = "shortestPath",
        [CYPHER_PATH_ALL_SHORTEST] = "allShortestPaths",
    };
    const char *k = (size_t)n->u.part.kind < COUNT_OF(kinds) ? kinds[n->u.part.kind] : NULL;
    if (n->u.part.variable) {
        out_str(o, "(= ");
        print_any(o, n->u.part.variable);
        out_str(o, " ");
    }
    if (k)
        out_fmt(o, "(%s ", k);
    print_any(o, n->u.part.path);
    if (k)
        out_str(o, ")");
    if (n->u.part.variable)
        out_str(o, ")");
}

static void print_node(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    print_child(o, n->u.node.variable);
    if (n->u.node.labels_any)
        out_str(o, " any");
    print_items(o, &n->u.node.labels);
    print_child(o, n->u.node.properties);
    out_str(o, ")");
}

static void print_rel(out_buf *o, const cypher_ast_node *n)
{
    static const char *const dirs[] = {
        [CYPHER_DIR_NONE] = "--", [CYPHER_DIR_RIGHT] = "->",
        [CYPHER_DIR_LEFT] = "<-", [CYPHER_DIR_BOTH] = "<->",
    };
    open_kind(o, n);
    out_str(o, " ");
    out_str(o, (size_t)n->u.rel.dir < COUNT_OF(dirs) ? dirs[n->u.rel.dir] : "?");
    print_child(o, n->u.rel.variable);
    for (size_t i = 0; i < n->u.rel.types.count; i++) {
        out_str(o, i ? "|" : " :");
        out_name(o, n->u.rel.types.items[i]->u.name, false);
    }
    if (n->u.rel.var_length) {
        out_str(o, " *");
        if (n->u.rel.has_min || n->u.rel.has_max) {
            if (n->u.rel.has_min)
                out_fmt(o, "%lld", (long long)n->u.rel.min);
            out_str(o, "..");
            if (n->u.rel.has_max)
                out_fmt(o, "%lld", (long long)n->u.rel.max);
        }
    }
    print_child(o, n->u.rel.properties);
    out_str(o, ")");
}

static void print_name(out_buf *o, const cypher_ast_node *n)
{
    switch (n->kind) {
    case CYPHER_AST_NULL_LIT:
        out_str(o, "null");
        return;
    case CYPHER_AST_COUNT_STAR:
        out_str(o, "(count-star)");
        return;
    case CYPHER_AST_MAP_PROJ_ALL:
        out_str(o, ".*");
        return;
    case CYPHER_AST_STRING_LIT:
        out_string(o, n->u.name);
        return;
    case CYPHER_AST_PARAMETER:
        out_str(o, "$");
        if (n->u.name.len && strspn(n->u.name.ptr, "0123456789") == n->u.name.len) {
            out_bytes(o, n->u.name.ptr, n->u.name.len);   /* $0 */
            return;
        }
        break;
    case CYPHER_AST_LABEL:
        out_str(o, ":");
        break;
    case CYPHER_AST_MAP_PROJ_PROPERTY:
        out_str(o, ".");
        break;
    default:
        break;
    }
    out_name(o, n->u.name, false);
}

static void print_boolean(out_buf *o, const cypher_ast_node *n)
{
    out_str(o, n->u.boolean ? "true" : "false");
}

static void print_integer(out_buf *o, const cypher_ast_node *n)
{
    out_fmt(o, "%lld", (long long)n->u.integer);
}

static void print_real(out_buf *o, const cypher_ast_node *n) { out_float(o, n->u.real); }

static void print_entry(out_buf *o, const cypher_ast_node *n)
{
    out_str(o, "(");
    if (n->kind == CYPHER_AST_CASE_ALT) {
        out_str(o, "when ");
        print_any(o, n->u.entry.when);
    } else {
        out_name(o, n->u.entry.key, false);
    }
    print_child(o, n->u.entry.value);
    out_str(o, ")");
}

static void print_binary(out_buf *o, const cypher_ast_node *n)
{
    out_fmt(o, "(%s", cypher_ast_op_name(n->u.binary.op));
    print_child(o, n->u.binary.lhs);
    print_child(o, n->u.binary.rhs);
    out_str(o, ")");
}

static void print_unary(out_buf *o, const cypher_ast_node *n)
{
    out_fmt(o, "(%s", n->kind == CYPHER_AST_EXISTS ? "exists" : cypher_ast_op_name(n->u.unary.op));
    print_child(o, n->u.unary.operand);
    out_str(o, ")");
}

static void print_chain(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    for (size_t i = 0; i < n->u.chain.operands.count; i++) {
        if (i)
            out_fmt(o, " %s", cypher_ast_op_name(n->u.chain.ops[i - 1]));
        print_child(o, n->u.chain.operands.items[i]);
    }
    out_str(o, ")");
}

/* As the left-deep BINARY nodes it stands for, (- (+ a b) c), without
   recursing once per operator: the opening parentheses first, outermost
   (last operator) first, then each operand closing one. */
static void print_fold(out_buf *o, const cypher_ast_node *n)
{
    for (size_t i = n->u.fold.nops; i-- > 0;)
        out_fmt(o, i + 1 == n->u.fold.nops ? "(%s" : " (%s", cypher_ast_op_name(n->u.fold.ops[i]));
    print_child(o, n->u.fold.operands.items[0]);
    for (size_t i = 1; i < n->u.fold.operands.count; i++) {
        print_child(o, n->u.fold.operands.items[i]);
        out_str(o, ")");
    }
}

static void print_property(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    print_child(o, n->u.property.subject);
    out_str(o, " ");
    out_name(o, n->u.property.key, false);
    out_str(o, ")");
}

static void print_subscript(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    print_child(o, n->u.subscript.subject);
    if (n->kind == CYPHER_AST_SLICE) {
        out_str(o, " ");
        if (n->u.subscript.from)
            print_any(o, n->u.subscript.from);
        else
            out_str(o, "_");
        out_str(o, " ");
        if (n->u.subscript.to)
            print_any(o, n->u.subscript.to);
        else
            out_str(o, "_");
    } else {
        print_child(o, n->u.subscript.from);
    }
    out_str(o, ")");
}

static void print_function(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    out_str(o, " ");
    out_name(o, n->u.function.name, true);
    if (n->u.function.distinct)
        out_str(o, " distinct");
    print_items(o, &n->u.function.args);
    out_str(o, ")");
}

static void print_case_(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    print_child(o, n->u.case_.subject);
    print_items(o, &n->u.case_.alternatives);
    print_tagged(o, "else", n->u.case_.otherwise);
    out_str(o, ")");
}

static void print_comprehension(out_buf *o, const cypher_ast_node *n)
{
    static const char *const quantifiers[] = {
        [CYPHER_QUANT_ALL] = "all", [CYPHER_QUANT_ANY] = "any",
        [CYPHER_QUANT_NONE] = "none", [CYPHER_QUANT_SINGLE] = "single",
    };
    if (n->kind == CYPHER_AST_QUANTIFIER) {
        size_t q = (size_t)n->u.comprehension.quantifier;
        out_fmt(o, "(%s", q < COUNT_OF(quantifiers) ? quantifiers[q] : "?");
    } else {
        open_kind(o, n);
    }
    print_child(o, n->u.comprehension.variable);
    print_child(o, n->u.comprehension.source);
    print_tagged(o, "where", n->u.comprehension.where);
    print_tagged(o, "|", n->u.comprehension.result);
    out_str(o, ")");
}

static void print_reduce(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    print_child(o, n->u.reduce.accumulator);
    print_child(o, n->u.reduce.init);
    print_child(o, n->u.reduce.variable);
    print_child(o, n->u.reduce.source);
    print_child(o, n->u.reduce.result);
    out_str(o, ")");
}

static void print_map_projection(out_buf *o, const cypher_ast_node *n)
{
    open_kind(o, n);
    print_child(o, n->u.map_projection.subject);
    print_items(o, &n->u.map_projection.items);
    out_str(o, ")");
}

typedef void (*printer_fn)(out_buf *o, const cypher_ast_node *n);

static const printer_fn printers[] = {
#define X(kind, name, member) [CYPHER_AST_##kind] = print_##member,
    CYPHER_AST_KINDS(X)
#undef X
};

static void print_any(out_buf *o, const cypher_ast_node *n)
{
    if (!n) {
        out_str(o, "_");
        return;
    }
    if ((size_t)n->kind >= COUNT_OF(printers) || !printers[n->kind]) {
        out_str(o, "?");
        return;
    }
    printers[n->kind](o, n);
}

int cypher_ast_print(const cypher_ast_node *n, mem_ctx *m, char **out, size_t *len)
{
    out_buf o = {.m = m};
    print_any(&o, n);
    if (!o.failed && !o.buf)
        out_bytes(&o, "", 0);
    if (o.failed) {
        if (o.buf)
            mem_free(m, o.buf);
        *out = NULL;
        if (len)
            *len = 0;
        return -1;
    }
    /* hand back exactly len + 1 bytes so the caller can free by length */
    if (o.cap != o.len + 1) {
        char *exact = mem_realloc(m, o.buf, o.len + 1);
        if (!exact) {
            mem_free(m, o.buf);
            *out = NULL;
            if (len)
                *len = 0;
            return -1;
        }
        o.buf = exact;
    }
    *out = o.buf;
    if (len)
        *len = o.len;
    return 0;
}
