/*
 * parser — recursive descent over openCypher 9 (see parser.h).
 *
 * The text is lexed whole into a token array first: patterns and
 * expressions share their first tokens (`(n)-->(m)` against `(n) - 1`,
 * `[x IN l]` against `[x, y]`), and a look at the tokens ahead settles
 * which one is coming without building and discarding trees.  The lexer
 * stops at its first error token, which stays last in the array; the
 * parser reports it when it gets there, so the error nearest the start of
 * the text is the one reported.
 *
 * Error handling: the first failure is recorded in p->err and every parse
 * function returns NULL (or false) from then on; the caller frees the
 * partial tree with the arena.  OutOfMemory is a failure like any other.
 *
 * Depth: every function that can recurse into itself calls enter(), which
 * fails beyond CYPHER_AST_MAX_DEPTH, so the parser's stack is bounded by
 * the limit times a handful of frames (measured at the limit, for nested
 * parentheses, lists, maps, comprehensions, unary minus and EXISTS: within
 * 192 KB of stack at -O2, 384 KB at -O0, 512 KB under ASan).  Loops
 * (a + b + c ..., property chains) build trees deeper than the recursion
 * that built them; a final bounded walk measures the tree and refuses one
 * deeper than the limit.
 *
 * Lookahead is O(1) per decision: brackets are paired once after lexing
 * (match_brackets), so the parse stays linear in the length of the text.
 */
#include "query/parser.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "query/lexer.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

typedef struct parser {
    const char *text;
    size_t len;
    mem_ctx *m;
    cypher_ast *ast;
    cypher_token *toks;        /* ends with EOF or ERROR */
    size_t ntoks, cap;
    size_t *after_close;       /* per opening bracket: the index past its
                                  closing one, or 0 when unclosed */
    size_t pos;
    int depth;
    bool patterns_ok;          /* a pattern may stand as a predicate here */
    bool in_subquery;          /* inside EXISTS { ... } */
    bool first_clause;         /* the clause being parsed opens its query */
    bool failed;
    cypher_error *err;
} parser;

/* A list under construction, in the arena. */
typedef struct vec {
    cypher_ast_list list;
    size_t cap;
} vec;

typedef cypher_ast_node node;

/* ---- errors ------------------------------------------------------------------ */

static const cypher_token *cur(const parser *p);

static void set_error(parser *p, const cypher_token *at, const char *category,
                      const char *detail, const char *fmt, va_list ap)
{
    if (p->failed)
        return;
    p->failed = true;
    cypher_error *e = p->err;
    e->category = category;
    e->detail = detail;
    e->line = at->line;
    e->column = at->column;
    e->offset = at->offset;
    vsnprintf(e->message, sizeof e->message, fmt, ap);
}

static void fail_at(parser *p, const cypher_token *at, const char *detail, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail_at(parser *p, const cypher_token *at, const char *detail, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(p, at, "SyntaxError", detail, fmt, ap);
    va_end(ap);
}

static void fail_lexical(parser *p, const cypher_token *t)
{
    fail_at(p, t, t->detail, "%s", t->message);
}

static void fail_oom(parser *p)
{
    static const cypher_token start = {.line = 1, .column = 1};
    const cypher_token *t = p->ntoks ? cur(p) : &start;
    if (p->failed)
        return;
    p->failed = true;
    p->err->category = "OutOfMemory";
    p->err->detail = NULL;
    p->err->line = t->line;
    p->err->column = t->column;
    p->err->offset = t->offset;
    snprintf(p->err->message, sizeof p->err->message, "out of memory");
}

/* How a token reads in a message: 'RETURN', '(', end of input.  Long
   tokens are cut (at a character boundary) and control bytes shown as
   spaces, so a message stays one line.  buf has room for 40 bytes. */
static const char *describe(const parser *p, const cypher_token *t, char *buf)
{
    if (t->kind == CYPHER_TOK_EOF)
        return "end of input";
    enum { SHOWN = 32 };
    size_t n = t->len, o = 0;
    bool cut = n > SHOWN;
    if (cut) {
        n = SHOWN;
        while (n > 0 && ((unsigned char)p->text[t->offset + n] & 0xC0) == 0x80)
            n--;
    }
    buf[o++] = '\'';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p->text[t->offset + i];
        buf[o++] = c < 0x20 || c == 0x7F ? ' ' : (char)c;
    }
    if (cut)
        o += (size_t)sprintf(buf + o, "...");
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

static const cypher_token *cur(const parser *p) { return &p->toks[p->pos]; }

static const cypher_token *peek(const parser *p, size_t k)
{
    size_t i = p->pos + k;
    return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}

/* "expected WHAT but found THIS" at the current token (or the lexer's own
   error when the current token is one). */
static void fail_expected(parser *p, const char *what)
{
    const cypher_token *t = cur(p);
    if (t->kind == CYPHER_TOK_ERROR) {
        fail_lexical(p, t);
        return;
    }
    char buf[40];
    fail_at(p, t, "UnexpectedSyntax", "expected %s but found %s", what, describe(p, t, buf));
}

static bool enter(parser *p)
{
    if (p->failed)
        return false;
    if (++p->depth > CYPHER_AST_MAX_DEPTH) {
        fail_at(p, cur(p), NULL, "query is too deeply nested (more than %d levels)",
                CYPHER_AST_MAX_DEPTH);
        return false;
    }
    return true;
}

static void leave(parser *p) { p->depth--; }

/* ---- tokens ------------------------------------------------------------------- */

static bool is_kw(const cypher_token *t, cypher_kw kw)
{
    return t->kind == CYPHER_TOK_IDENT && !t->quoted && t->kw == kw;
}

static bool at(const parser *p, cypher_tok_kind kind) { return cur(p)->kind == kind; }
static bool at_kw(const parser *p, cypher_kw kw) { return is_kw(cur(p), kw); }

static const cypher_token *take(parser *p)
{
    const cypher_token *t = cur(p);
    if (p->pos + 1 < p->ntoks)
        p->pos++;
    return t;
}

static bool accept(parser *p, cypher_tok_kind kind)
{
    if (!at(p, kind))
        return false;
    take(p);
    return true;
}

static bool accept_kw(parser *p, cypher_kw kw)
{
    if (!at_kw(p, kw))
        return false;
    take(p);
    return true;
}

static bool expect(parser *p, cypher_tok_kind kind)
{
    if (p->failed)
        return false;
    if (accept(p, kind))
        return true;
    char what[16];
    snprintf(what, sizeof what, "'%s'", cypher_lex_kind_name(kind));
    fail_expected(p, what);
    return false;
}

static bool expect_kw(parser *p, cypher_kw kw)
{
    if (p->failed)
        return false;
    if (accept_kw(p, kw))
        return true;
    char what[32];
    snprintf(what, sizeof what, "%s", cypher_lex_kw_name(kw));
    fail_expected(p, what);
    return false;
}

/* Consumes a token of kind, or fails with "expected WHAT but found ...". */
static bool close_with(parser *p, cypher_tok_kind kind, const char *what)
{
    if (p->failed)
        return false;
    if (accept(p, kind))
        return true;
    fail_expected(p, what);
    return false;
}

/* End of the text of the token before the current one. */
static size_t prev_end(const parser *p)
{
    if (p->pos == 0)
        return 0;
    const cypher_token *t = &p->toks[p->pos - 1];
    return t->offset + t->len;
}

/* A word that can name a variable: quoted, or not a reserved word. */
static bool variable_token(const cypher_token *t)
{
    return t->kind == CYPHER_TOK_IDENT && (t->quoted || !cypher_lex_kw_reserved(t->kw));
}

/* ---- building ------------------------------------------------------------------ */

static node *make(parser *p, cypher_ast_kind kind, const cypher_token *t)
{
    if (p->failed)
        return NULL;
    node *n = cypher_ast_node_new(p->ast, kind, t->line, t->column, t->offset);
    if (!n)
        fail_oom(p);
    return n;
}

static bool push(parser *p, vec *v, node *n)
{
    if (p->failed || !n)
        return false;
    if (v->list.count == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        node **items = cypher_ast_alloc(p->ast, mem_array_size(cap, sizeof *items));
        if (!items) {
            fail_oom(p);
            return false;
        }
        if (v->list.count)
            memcpy(items, v->list.items, v->list.count * sizeof *items);
        v->list.items = items;
        v->cap = cap;
    }
    v->list.items[v->list.count++] = n;
    return true;
}

typedef node *(*item_fn)(parser *p);

/* item (',' item)* */
static bool parse_list(parser *p, vec *v, item_fn item)
{
    do {
        if (!push(p, v, item(p)))
            return false;
    } while (accept(p, CYPHER_TOK_COMMA));
    return true;
}

/* (item (',' item)*)? closer -- the opening bracket already taken; what
   names the closer and comma for the error */
static bool parse_bracketed(parser *p, vec *v, item_fn item, cypher_tok_kind closer,
                            const char *what)
{
    if (!at(p, closer) && !parse_list(p, v, item))
        return false;
    return close_with(p, closer, what);
}

/* The decoded text of an IDENT, STRING or PARAM token, in the arena. */
static bool token_text(parser *p, const cypher_token *t, cypher_ast_str *out)
{
    if (p->failed)
        return false;
    char *buf = cypher_ast_alloc(p->ast, t->len + 1);
    if (!buf) {
        fail_oom(p);
        return false;
    }
    size_t n = cypher_lex_text(p->text, t, buf);
    buf[n] = '\0';
    out->ptr = buf;
    out->len = n;
    return true;
}

/* A node named by token t (VARIABLE, LABEL, PARAMETER, STRING_LIT, ...). */
static node *make_named(parser *p, cypher_ast_kind kind, const cypher_token *t)
{
    node *n = make(p, kind, t);
    if (n && !token_text(p, t, &n->u.name))
        return NULL;
    return n;
}

/* ---- names ---------------------------------------------------------------------- */

/* variable: SymbolicName (any word but a reserved one, or `quoted`) */
static node *parse_variable(parser *p)
{
    if (p->failed)
        return NULL;
    if (!variable_token(cur(p))) {
        fail_expected(p, "a variable name");
        return NULL;
    }
    return make_named(p, CYPHER_AST_VARIABLE, take(p));
}

/* schema_name: SymbolicName | ReservedWord  (labels, types, keys) */
static bool parse_schema_name(parser *p, const char *what, cypher_ast_str *out)
{
    if (p->failed)
        return false;
    if (!at(p, CYPHER_TOK_IDENT)) {
        fail_expected(p, what);
        return false;
    }
    return token_text(p, take(p), out);
}

/* label: ':' schema_name */
static node *parse_label(parser *p, const char *what)
{
    if (!expect(p, CYPHER_TOK_COLON))
        return NULL;
    if (!at(p, CYPHER_TOK_IDENT)) {
        fail_expected(p, what);
        return NULL;
    }
    return make_named(p, CYPHER_AST_LABEL, take(p));
}

/* labels: label+ */
static bool parse_labels(parser *p, vec *labels)
{
    do {
        if (!push(p, labels, parse_label(p, "a label name")))
            return false;
    } while (at(p, CYPHER_TOK_COLON));
    return true;
}

/* qualified_name: schema_name ('.' schema_name)*   (functions, procedures) */
static bool parse_qualified_name(parser *p, const char *what, cypher_ast_str *out)
{
    size_t start = p->pos;
    size_t bytes = 0, parts = 0;
    if (!at(p, CYPHER_TOK_IDENT)) {
        fail_expected(p, what);
        return false;
    }
    for (;;) {
        bytes += take(p)->len + 1;
        parts++;
        if (!at(p, CYPHER_TOK_DOT) || peek(p, 1)->kind != CYPHER_TOK_IDENT)
            break;
        take(p);
    }
    char *buf = cypher_ast_alloc(p->ast, bytes + 1);
    if (!buf) {
        fail_oom(p);
        return false;
    }
    size_t n = 0;
    for (size_t i = 0; i < parts; i++) {
        if (i)
            buf[n++] = '.';
        n += cypher_lex_text(p->text, &p->toks[start + 2 * i], buf + n);
    }
    buf[n] = '\0';
    out->ptr = buf;
    out->len = n;
    return true;
}

/* ---- lookahead ------------------------------------------------------------------- */

/* Index just past the bracket that closes the one at toks[i], or 0. */
static size_t skip_balanced(const parser *p, size_t i)
{
    return i < p->ntoks ? p->after_close[i] : 0;
}

static cypher_tok_kind kind_at(const parser *p, size_t i)
{
    return p->toks[i < p->ntoks ? i : p->ntoks - 1].kind;
}

/* Whether toks[i..] reads as a node pattern: '(' variable? label* (map |
   parameter)? ')'; returns the index past it, or 0. */
static size_t node_pattern_end(const parser *p, size_t i)
{
    if (kind_at(p, i) != CYPHER_TOK_LPAREN)
        return 0;
    i++;
    if (i < p->ntoks && variable_token(&p->toks[i]))
        i++;
    while (kind_at(p, i) == CYPHER_TOK_COLON && kind_at(p, i + 1) == CYPHER_TOK_IDENT)
        i += 2;
    for (;;) {   /* a disjunction: |B or |:B */
        size_t k = i + 1 + (kind_at(p, i + 1) == CYPHER_TOK_COLON);
        if (kind_at(p, i) != CYPHER_TOK_PIPE || kind_at(p, k) != CYPHER_TOK_IDENT)
            break;
        i = k + 1;
    }
    if (kind_at(p, i) == CYPHER_TOK_LBRACE) {
        i = skip_balanced(p, i);
        if (!i)
            return 0;
    } else if (kind_at(p, i) == CYPHER_TOK_PARAM) {
        i++;
    }
    return kind_at(p, i) == CYPHER_TOK_RPAREN ? i + 1 : 0;
}

/* Whether toks[i..] starts a relationship: '-' '-', '-' '[' ... ']' '-',
   '<' '-' '-' or '<' '-' '[' ... ']' '-'. */
static bool rel_starts(const parser *p, size_t i)
{
    if (kind_at(p, i) == CYPHER_TOK_LT)
        i++;
    if (kind_at(p, i) != CYPHER_TOK_MINUS)
        return false;
    i++;
    if (kind_at(p, i) == CYPHER_TOK_MINUS)
        return true;
    if (kind_at(p, i) != CYPHER_TOK_LBRACKET)
        return false;
    i = skip_balanced(p, i);
    return i && kind_at(p, i) == CYPHER_TOK_MINUS;
}

/* Whether a relationships pattern ((n)-->(m) ...) starts at toks[i]. */
static bool pattern_starts(const parser *p, size_t i)
{
    size_t end = node_pattern_end(p, i);
    return end && rel_starts(p, end);
}

/* ---- forward declarations ------------------------------------------------------- */

static node *parse_expr(parser *p);
static node *parse_where_expr(parser *p);
static node *parse_query(parser *p, bool subquery);

enum pattern_use { PAT_MATCH, PAT_CREATE, PAT_MERGE, PAT_EXPR };

static node *parse_pattern_part(parser *p, enum pattern_use use);
static node *parse_path(parser *p, enum pattern_use use, bool need_rel);

/* ---- patterns ------------------------------------------------------------------- */

/* properties: map_literal | parameter */
static node *parse_map_literal(parser *p);

static node *parse_properties(parser *p, enum pattern_use use)
{
    if (at(p, CYPHER_TOK_LBRACE))
        return parse_map_literal(p);
    const cypher_token *t = take(p);
    if (use != PAT_CREATE) {
        fail_at(p, t, "InvalidParameterUse",
                "a parameter cannot give the properties of a pattern to match; "
                "use a map literal such as {key: $param.key}");
        return NULL;
    }
    return make_named(p, CYPHER_AST_PARAMETER, t);
}

/* node_labels: labels | ':' label_name ('|' ':'? label_name)+
   The second form (n:A|B) matches a node with any of the labels; it can
   only be matched, not created, and not mixed with ':' conjunctions. */
static bool parse_node_labels(parser *p, enum pattern_use use, vec *labels, bool *any)
{
    const cypher_token *start = cur(p);
    if (!push(p, labels, parse_label(p, "a label name")))
        return false;
    if (!at(p, CYPHER_TOK_PIPE))
        return !at(p, CYPHER_TOK_COLON) || parse_labels(p, labels);
    while (accept(p, CYPHER_TOK_PIPE)) {
        accept(p, CYPHER_TOK_COLON);   /* :A|:B and :A|B alike */
        if (!at(p, CYPHER_TOK_IDENT)) {
            fail_expected(p, "a label name");
            return false;
        }
        if (!push(p, labels, make_named(p, CYPHER_AST_LABEL, take(p))))
            return false;
    }
    *any = true;
    if (at(p, CYPHER_TOK_COLON)) {
        fail_at(p, cur(p), "InvalidLabelExpression",
                "a label disjunction (:A|B) cannot be combined with more labels");
        return false;
    }
    if (use == PAT_CREATE || use == PAT_MERGE) {
        fail_at(p, start, "InvalidLabelExpression",
                "a node cannot be created with a label disjunction (:A|B): name its labels");
        return false;
    }
    return true;
}

/* node_pattern: '(' variable? node_labels? properties? ')' */
static node *parse_node_pattern(parser *p, enum pattern_use use)
{
    if (p->failed)
        return NULL;
    if (!at(p, CYPHER_TOK_LPAREN)) {
        fail_expected(p, "'(' to start a node pattern");
        return NULL;
    }
    node *n = make(p, CYPHER_AST_NODE, take(p));
    if (!n)
        return NULL;
    if (variable_token(cur(p)))
        n->u.node.variable = parse_variable(p);
    vec labels = {0};
    if (at(p, CYPHER_TOK_COLON) && !parse_node_labels(p, use, &labels, &n->u.node.labels_any))
        return NULL;
    n->u.node.labels = labels.list;
    if (at(p, CYPHER_TOK_LBRACE) || at(p, CYPHER_TOK_PARAM))
        n->u.node.properties = parse_properties(p, use);
    if (!close_with(p, CYPHER_TOK_RPAREN, n->u.node.properties ? "')'"
                                          : labels.list.count ? "':', '{' or ')'"
                                          : "a label, '{' or ')'"))
        return NULL;
    return n;
}

/* range_literal: '*' integer? ('..' integer?)? */
static bool parse_range(parser *p, node *rel)
{
    take(p);   /* '*' */
    rel->u.rel.var_length = true;
    if (at(p, CYPHER_TOK_MINUS)) {
        fail_at(p, cur(p), "InvalidRelationshipPattern",
                "a variable-length relationship cannot have a negative bound");
        return false;
    }
    if (at(p, CYPHER_TOK_INTEGER)) {
        const cypher_token *t = take(p);
        if (t->big) {
            fail_at(p, t, "IntegerOverflow", "integer literal is too large for a 64-bit integer");
            return false;
        }
        rel->u.rel.has_min = true;
        rel->u.rel.min = (int64_t)t->u.magnitude;
        if (!at(p, CYPHER_TOK_DOTDOT)) {
            rel->u.rel.has_max = true;
            rel->u.rel.max = rel->u.rel.min;
            return true;
        }
    }
    if (accept(p, CYPHER_TOK_DOTDOT)) {
        if (at(p, CYPHER_TOK_MINUS)) {
            fail_at(p, cur(p), "InvalidRelationshipPattern",
                    "a variable-length relationship cannot have a negative bound");
            return false;
        }
        if (at(p, CYPHER_TOK_INTEGER)) {
            const cypher_token *t = take(p);
            if (t->big) {
                fail_at(p, t, "IntegerOverflow",
                        "integer literal is too large for a 64-bit integer");
                return false;
            }
            rel->u.rel.has_max = true;
            rel->u.rel.max = (int64_t)t->u.magnitude;
        }
    }
    if (at(p, CYPHER_TOK_FLOAT)) {
        fail_at(p, cur(p), "InvalidRelationshipPattern",
                "the bounds of a variable-length relationship are integers");
        return false;
    }
    return true;
}

/* relationship_pattern: '<'? '-' ('[' variable? rel_types? range? properties? ']')? '-' '>'?
   rel_types: ':' schema_name ('|' ':'? schema_name)* */
static node *parse_rel_pattern(parser *p, enum pattern_use use)
{
    const cypher_token *start = cur(p);
    node *r = make(p, CYPHER_AST_REL, start);
    if (!r)
        return NULL;
    bool left = accept(p, CYPHER_TOK_LT);
    if (!expect(p, CYPHER_TOK_MINUS))
        return NULL;
    if (accept(p, CYPHER_TOK_LBRACKET)) {
        if (variable_token(cur(p)))
            r->u.rel.variable = parse_variable(p);
        vec types = {0};
        if (at(p, CYPHER_TOK_COLON)) {
            if (!push(p, &types, parse_label(p, "a relationship type")))
                return NULL;
            while (accept(p, CYPHER_TOK_PIPE)) {
                accept(p, CYPHER_TOK_COLON);   /* :A|:B and :A|B alike */
                if (!at(p, CYPHER_TOK_IDENT)) {
                    fail_expected(p, "a relationship type");
                    return NULL;
                }
                if (!push(p, &types, make_named(p, CYPHER_AST_LABEL, take(p))))
                    return NULL;
            }
        }
        r->u.rel.types = types.list;
        if (p->failed)
            return NULL;
        if (at(p, CYPHER_TOK_DOTDOT) ||
            (at(p, CYPHER_TOK_INTEGER) && peek(p, 1)->kind == CYPHER_TOK_DOTDOT)) {
            fail_at(p, cur(p), "InvalidRelationshipPattern",
                    "a variable-length relationship is written with '*' (*1..3, *..3, *2..)");
            return NULL;
        }
        if (at(p, CYPHER_TOK_STAR) && !parse_range(p, r))
            return NULL;
        if (at(p, CYPHER_TOK_LBRACE) || at(p, CYPHER_TOK_PARAM))
            r->u.rel.properties = parse_properties(p, use);
        if (!close_with(p, CYPHER_TOK_RBRACKET, r->u.rel.properties ? "']'"
                                                : r->u.rel.var_length ? "'{' or ']'"
                                                : "a relationship type, '*', '{' or ']'"))
            return NULL;
    }
    if (!expect(p, CYPHER_TOK_MINUS))
        return NULL;
    bool right = accept(p, CYPHER_TOK_GT);
    r->u.rel.dir = left && right ? CYPHER_DIR_BOTH
                 : left ? CYPHER_DIR_LEFT : right ? CYPHER_DIR_RIGHT : CYPHER_DIR_NONE;
    return r;
}

/* pattern_element: node_pattern (relationship_pattern node_pattern)*
                  | '(' pattern_element ')'
   need_rel: at least one relationship (a relationships pattern) */
static node *parse_path(parser *p, enum pattern_use use, bool need_rel)
{
    if (!enter(p))
        return NULL;
    node *path = NULL;
    if (at(p, CYPHER_TOK_LPAREN) && peek(p, 1)->kind == CYPHER_TOK_LPAREN) {
        take(p);
        path = parse_path(p, use, need_rel);
        if (!expect(p, CYPHER_TOK_RPAREN))
            path = NULL;
        leave(p);
        return path;
    }
    path = make(p, CYPHER_AST_PATH, cur(p));
    vec elems = {0};
    if (!push(p, &elems, parse_node_pattern(p, use))) {
        leave(p);
        return NULL;
    }
    while (!p->failed && rel_starts(p, p->pos)) {
        push(p, &elems, parse_rel_pattern(p, use));
        push(p, &elems, parse_node_pattern(p, use));
    }
    if (!p->failed && (at(p, CYPHER_TOK_MINUS) ||
                       (at(p, CYPHER_TOK_LT) && peek(p, 1)->kind == CYPHER_TOK_MINUS))) {
        /* a relationship that rel_starts() did not recognise: parse it for
           the error it produces */
        parse_rel_pattern(p, use);
        if (!p->failed)
            fail_expected(p, "'(' to start a node pattern");
    }
    leave(p);
    if (p->failed)
        return NULL;
    if (need_rel && elems.list.count < 3) {
        fail_expected(p, "a relationship pattern ('-', '<-' or '-[')");
        return NULL;
    }
    path->u.list = elems.list;
    return path;
}

/* pattern_part: (variable '=')? anonymous_pattern_part
   anonymous_pattern_part: shortestPath '(' pattern_element ')'
                         | allShortestPaths '(' pattern_element ')'
                         | pattern_element */
static node *parse_pattern_part(parser *p, enum pattern_use use)
{
    if (p->failed)
        return NULL;
    node *part = make(p, CYPHER_AST_PATTERN_PART, cur(p));
    if (!part)
        return NULL;
    if (variable_token(cur(p)) && peek(p, 1)->kind == CYPHER_TOK_EQ) {
        part->u.part.variable = parse_variable(p);
        take(p);
    }
    bool shortest = at_kw(p, CYPHER_KW_SHORTESTPATH), all = at_kw(p, CYPHER_KW_ALLSHORTESTPATHS);
    if ((shortest || all) && peek(p, 1)->kind == CYPHER_TOK_LPAREN) {
        take(p);
        take(p);
        part->u.part.kind = shortest ? CYPHER_PATH_SHORTEST : CYPHER_PATH_ALL_SHORTEST;
        part->u.part.path = parse_path(p, use, true);
        if (!expect(p, CYPHER_TOK_RPAREN))
            return NULL;
    } else {
        part->u.part.path = parse_path(p, use, false);
    }
    return p->failed ? NULL : part;
}

static node *parse_match_part(parser *p) { return parse_pattern_part(p, PAT_MATCH); }
static node *parse_create_part(parser *p) { return parse_pattern_part(p, PAT_CREATE); }

/* pattern: pattern_part (',' pattern_part)* */
static bool parse_pattern(parser *p, enum pattern_use use, vec *parts)
{
    return parse_list(p, parts, use == PAT_CREATE ? parse_create_part : parse_match_part);
}

/* ---- expressions: atoms ---------------------------------------------------------- */

/* map_entry: schema_name ':' expression */
static node *parse_map_entry(parser *p)
{
    node *e = make(p, CYPHER_AST_MAP_ENTRY, cur(p));
    if (!e || !parse_schema_name(p, "a property key name", &e->u.entry.key) ||
        !expect(p, CYPHER_TOK_COLON))
        return NULL;
    e->u.entry.value = parse_expr(p);
    return p->failed ? NULL : e;
}

/* map_literal: '{' (map_entry (',' map_entry)*)? '}' */
static node *parse_map_literal(parser *p)
{
    node *map = make(p, CYPHER_AST_MAP, cur(p));
    vec entries = {0};
    if (!expect(p, CYPHER_TOK_LBRACE) ||
        !parse_bracketed(p, &entries, parse_map_entry, CYPHER_TOK_RBRACE, "',' or '}'"))
        return NULL;
    map->u.list = entries.list;
    return map;
}

/* map_projection_item: '.' schema_name | '.' '*' | map_entry | variable */
static node *parse_map_projection_item(parser *p)
{
    if (at(p, CYPHER_TOK_DOT)) {
        const cypher_token *dot = take(p);
        if (accept(p, CYPHER_TOK_STAR))
            return make(p, CYPHER_AST_MAP_PROJ_ALL, dot);
        node *item = make(p, CYPHER_AST_MAP_PROJ_PROPERTY, dot);
        if (item && !parse_schema_name(p, "a property key name or '*'", &item->u.name))
            return NULL;
        return item;
    }
    if (at(p, CYPHER_TOK_IDENT) && peek(p, 1)->kind == CYPHER_TOK_COLON)
        return parse_map_entry(p);
    if (variable_token(cur(p)))
        return parse_variable(p);
    fail_expected(p, "'.key', '.*', 'key: value' or a variable");
    return NULL;
}

/* map_projection: variable '{' (map_projection_item (',' map_projection_item)*)? '}' */
static node *parse_map_projection(parser *p)
{
    node *mp = make(p, CYPHER_AST_MAP_PROJECTION, cur(p));
    if (!mp)
        return NULL;
    mp->u.map_projection.subject = parse_variable(p);
    vec items = {0};
    if (!expect(p, CYPHER_TOK_LBRACE) ||
        !parse_bracketed(p, &items, parse_map_projection_item, CYPHER_TOK_RBRACE, "',' or '}'"))
        return NULL;
    mp->u.map_projection.items = items.list;
    return mp;
}

/* case_expression: CASE expression? (WHEN expression THEN expression)+ (ELSE expression)? END */
static node *parse_case(parser *p)
{
    node *c = make(p, CYPHER_AST_CASE, take(p));
    if (!c)
        return NULL;
    if (!at_kw(p, CYPHER_KW_WHEN))
        c->u.case_.subject = parse_expr(p);
    vec alts = {0};
    if (!p->failed && !at_kw(p, CYPHER_KW_WHEN)) {
        fail_expected(p, "WHEN");
        return NULL;
    }
    while (!p->failed && at_kw(p, CYPHER_KW_WHEN)) {
        node *alt = make(p, CYPHER_AST_CASE_ALT, take(p));
        if (!alt)
            return NULL;
        alt->u.entry.when = parse_expr(p);
        if (!expect_kw(p, CYPHER_KW_THEN))
            return NULL;
        alt->u.entry.value = parse_expr(p);
        push(p, &alts, alt);
    }
    c->u.case_.alternatives = alts.list;
    if (accept_kw(p, CYPHER_KW_ELSE))
        c->u.case_.otherwise = parse_expr(p);
    if (!p->failed && !accept_kw(p, CYPHER_KW_END)) {
        fail_expected(p, c->u.case_.otherwise ? "END" : "WHEN, ELSE or END");
        return NULL;
    }
    return p->failed ? NULL : c;
}

/* filter_expression: variable IN expression (WHERE expression)? */
static bool parse_filter(parser *p, node *comp)
{
    comp->u.comprehension.variable = parse_variable(p);
    if (!expect_kw(p, CYPHER_KW_IN))
        return false;
    comp->u.comprehension.source = parse_expr(p);
    if (accept_kw(p, CYPHER_KW_WHERE))
        comp->u.comprehension.where = parse_where_expr(p);
    return !p->failed;
}

/* list_comprehension: '[' filter_expression ('|' expression)? ']' */
static node *parse_list_comprehension(parser *p)
{
    node *c = make(p, CYPHER_AST_LIST_COMPREHENSION, take(p));
    if (!c || !parse_filter(p, c))
        return NULL;
    if (accept(p, CYPHER_TOK_PIPE))
        c->u.comprehension.result = parse_expr(p);
    if (!close_with(p, CYPHER_TOK_RBRACKET, c->u.comprehension.result ? "']'"
                                            : c->u.comprehension.where ? "'|' or ']'"
                                            : "WHERE, '|' or ']'"))
        return NULL;
    return c;
}

/* pattern_comprehension:
     '[' (variable '=')? relationships_pattern (WHERE expression)? '|' expression ']' */
static node *parse_pattern_comprehension(parser *p)
{
    node *c = make(p, CYPHER_AST_PATTERN_COMPREHENSION, take(p));
    if (!c)
        return NULL;
    node *part = make(p, CYPHER_AST_PATTERN_PART, cur(p));
    if (!part)
        return NULL;
    if (variable_token(cur(p)) && peek(p, 1)->kind == CYPHER_TOK_EQ) {
        part->u.part.variable = parse_variable(p);
        take(p);
    }
    part->u.part.path = parse_path(p, PAT_EXPR, true);
    c->u.comprehension.source = part;
    if (accept_kw(p, CYPHER_KW_WHERE))
        c->u.comprehension.where = parse_where_expr(p);
    if (!close_with(p, CYPHER_TOK_PIPE, c->u.comprehension.where ? "'|'" : "WHERE or '|'"))
        return NULL;
    c->u.comprehension.result = parse_expr(p);
    if (!expect(p, CYPHER_TOK_RBRACKET))
        return NULL;
    return p->failed ? NULL : c;
}

/* list_literal: '[' (expression (',' expression)*)? ']' */
static node *parse_list_literal(parser *p)
{
    node *l = make(p, CYPHER_AST_LIST, take(p));
    vec items = {0};
    if (!l || !parse_bracketed(p, &items, parse_expr, CYPHER_TOK_RBRACKET, "',' or ']'"))
        return NULL;
    l->u.list = items.list;
    return l;
}

/* '[' ...: a list comprehension, a pattern comprehension or a list literal */
static node *parse_bracket(parser *p)
{
    if (variable_token(peek(p, 1)) && is_kw(peek(p, 2), CYPHER_KW_IN))
        return parse_list_comprehension(p);
    if (pattern_starts(p, p->pos + 1) ||
        (variable_token(peek(p, 1)) && peek(p, 2)->kind == CYPHER_TOK_EQ &&
         pattern_starts(p, p->pos + 3)))
        return parse_pattern_comprehension(p);
    return parse_list_literal(p);
}

/* quantifier: (ALL | ANY | NONE | SINGLE) '(' filter_expression ')' */
static node *parse_quantifier(parser *p)
{
    static const struct { cypher_kw kw; cypher_ast_quantifier q; } quantifiers[] = {
        {CYPHER_KW_ALL, CYPHER_QUANT_ALL}, {CYPHER_KW_ANY, CYPHER_QUANT_ANY},
        {CYPHER_KW_NONE, CYPHER_QUANT_NONE}, {CYPHER_KW_SINGLE, CYPHER_QUANT_SINGLE},
    };
    const cypher_token *t = take(p);
    node *q = make(p, CYPHER_AST_QUANTIFIER, t);
    if (!q)
        return NULL;
    for (size_t i = 0; i < COUNT_OF(quantifiers); i++)
        if (quantifiers[i].kw == t->kw)
            q->u.comprehension.quantifier = quantifiers[i].q;
    take(p);   /* '(' */
    if (!parse_filter(p, q) || !expect(p, CYPHER_TOK_RPAREN))
        return NULL;
    return q;
}

/* reduce: REDUCE '(' variable '=' expression ',' variable IN expression '|' expression ')' */
static node *parse_reduce(parser *p)
{
    node *r = make(p, CYPHER_AST_REDUCE, take(p));
    if (!r)
        return NULL;
    take(p);   /* '(' */
    r->u.reduce.accumulator = parse_variable(p);
    if (!expect(p, CYPHER_TOK_EQ))
        return NULL;
    r->u.reduce.init = parse_expr(p);
    if (!expect(p, CYPHER_TOK_COMMA))
        return NULL;
    r->u.reduce.variable = parse_variable(p);
    if (!expect_kw(p, CYPHER_KW_IN))
        return NULL;
    r->u.reduce.source = parse_expr(p);
    if (!expect(p, CYPHER_TOK_PIPE))
        return NULL;
    r->u.reduce.result = parse_expr(p);
    if (!expect(p, CYPHER_TOK_RPAREN))
        return NULL;
    return r;
}

/* function_invocation: qualified_name '(' DISTINCT? (expression (',' expression)*)? ')' */
static node *parse_function(parser *p)
{
    node *f = make(p, CYPHER_AST_FUNCTION, cur(p));
    if (!f || !parse_qualified_name(p, "a function name", &f->u.function.name))
        return NULL;
    take(p);   /* '(' */
    f->u.function.distinct = accept_kw(p, CYPHER_KW_DISTINCT);
    /* exists(pattern) tests a pattern: the one call a pattern may be
       passed to */
    bool saved = p->patterns_ok;
    if (f->u.function.name.len == 6 && strncasecmp(f->u.function.name.ptr, "exists", 6) == 0)
        p->patterns_ok = true;
    vec args = {0};
    if (f->u.function.distinct) {   /* DISTINCT needs an argument */
        if (parse_list(p, &args, parse_expr))
            close_with(p, CYPHER_TOK_RPAREN, "',' or ')'");
    } else {
        parse_bracketed(p, &args, parse_expr, CYPHER_TOK_RPAREN, "',' or ')'");
    }
    p->patterns_ok = saved;
    f->u.function.args = args.list;
    return p->failed ? NULL : f;
}

/* existential_subquery: EXISTS '{' (regular_query | pattern where?) '}' */
static node *parse_exists(parser *p)
{
    static const cypher_kw clause_words[] = {
        CYPHER_KW_MATCH, CYPHER_KW_OPTIONAL, CYPHER_KW_UNWIND, CYPHER_KW_WITH,
        CYPHER_KW_RETURN, CYPHER_KW_CALL, CYPHER_KW_CREATE, CYPHER_KW_MERGE,
        CYPHER_KW_SET, CYPHER_KW_REMOVE, CYPHER_KW_DELETE, CYPHER_KW_DETACH, CYPHER_KW_LOAD,
    };
    node *e = make(p, CYPHER_AST_EXISTS, take(p));
    take(p);   /* '{' */
    if (!e)
        return NULL;
    bool is_query = false;
    for (size_t i = 0; i < COUNT_OF(clause_words); i++)
        is_query = is_query || at_kw(p, clause_words[i]);
    bool saved = p->patterns_ok;
    if (is_query) {
        e->u.unary.operand = parse_query(p, true);
    } else {
        /* EXISTS { pattern WHERE p } reads as EXISTS { MATCH pattern WHERE p } */
        node *q = make(p, CYPHER_AST_QUERY, cur(p));
        node *m = make(p, CYPHER_AST_MATCH, cur(p));
        vec parts = {0}, clauses = {0};
        if (!q || !m || !parse_pattern(p, PAT_MATCH, &parts))
            return NULL;
        m->u.match.parts = parts.list;
        if (accept_kw(p, CYPHER_KW_WHERE))
            m->u.match.where = parse_where_expr(p);
        push(p, &clauses, m);
        q->u.list = clauses.list;
        e->u.unary.operand = q;
    }
    p->patterns_ok = saved;
    if (!expect(p, CYPHER_TOK_RBRACE))
        return NULL;
    return p->failed ? NULL : e;
}

/* A pattern used as an expression, in the places openCypher allows it. */
static node *parse_pattern_predicate(parser *p)
{
    if (!p->patterns_ok) {
        fail_at(p, cur(p), "UnexpectedSyntax",
                "a pattern can only be used as a predicate in WHERE; "
                "use EXISTS { ... } or a pattern comprehension [(a)-->(b) | b] here");
        return NULL;
    }
    return parse_path(p, PAT_EXPR, true);
}

/* Whether toks[pos..] is qualified_name '('. */
static bool function_starts(const parser *p)
{
    size_t i = p->pos;
    while (kind_at(p, i) == CYPHER_TOK_IDENT) {
        if (kind_at(p, i + 1) == CYPHER_TOK_LPAREN)
            return true;
        if (kind_at(p, i + 1) != CYPHER_TOK_DOT)
            return false;
        i += 2;
    }
    return false;
}

/* An integer literal token as a node; 2^63 only when negated. */
static node *integer_literal(parser *p, const cypher_token *t, const cypher_token *minus)
{
    if (t->big && !minus) {
        fail_at(p, t, "IntegerOverflow", "integer literal is too large for a 64-bit integer");
        return NULL;
    }
    node *n = make(p, CYPHER_AST_INT_LIT, minus ? minus : t);
    if (n)
        n->u.integer = minus ? (int64_t)(0 - t->u.magnitude) : (int64_t)t->u.magnitude;
    return n;
}

static node *parse_integer(parser *p) { return integer_literal(p, take(p), NULL); }

static node *parse_float(parser *p)
{
    const cypher_token *t = take(p);
    node *n = make(p, CYPHER_AST_FLOAT_LIT, t);
    if (n)
        n->u.real = t->u.real;
    return n;
}

static node *parse_string(parser *p) { return make_named(p, CYPHER_AST_STRING_LIT, take(p)); }
static node *parse_parameter(parser *p) { return make_named(p, CYPHER_AST_PARAMETER, take(p)); }

static node *parse_boolean(parser *p)
{
    const cypher_token *t = take(p);
    node *n = make(p, CYPHER_AST_BOOL_LIT, t);
    if (n)
        n->u.boolean = t->kw == CYPHER_KW_TRUE;
    return n;
}

static node *parse_null(parser *p) { return make(p, CYPHER_AST_NULL_LIT, take(p)); }

/* COUNT '(' '*' ')' */
static node *parse_count_star(parser *p)
{
    node *n = make(p, CYPHER_AST_COUNT_STAR, take(p));
    for (int i = 0; i < 3; i++)
        take(p);
    return n;
}

/* (shortestPath | allShortestPaths) '(' pattern_element ')' */
static node *parse_shortest_path(parser *p) { return parse_pattern_part(p, PAT_EXPR); }

/* parenthesized_expression: '(' expression ')' */
static node *parse_parenthesized(parser *p)
{
    take(p);
    node *n = parse_expr(p);
    if (!expect(p, CYPHER_TOK_RPAREN))
        return NULL;
    return n;
}

/* Lookaheads that tell a keyword-led construct from a call or a variable. */
static bool pattern_here(const parser *p) { return pattern_starts(p, p->pos); }

static bool count_star_follows(const parser *p)
{
    return peek(p, 1)->kind == CYPHER_TOK_LPAREN && peek(p, 2)->kind == CYPHER_TOK_STAR &&
           peek(p, 3)->kind == CYPHER_TOK_RPAREN;
}

static bool filter_follows(const parser *p)
{
    return peek(p, 1)->kind == CYPHER_TOK_LPAREN && variable_token(peek(p, 2)) &&
           is_kw(peek(p, 3), CYPHER_KW_IN);
}

static bool reduce_follows(const parser *p)
{
    return peek(p, 1)->kind == CYPHER_TOK_LPAREN && variable_token(peek(p, 2)) &&
           peek(p, 3)->kind == CYPHER_TOK_EQ;
}

static bool brace_follows(const parser *p) { return peek(p, 1)->kind == CYPHER_TOK_LBRACE; }

static bool pattern_argument_follows(const parser *p)
{
    return peek(p, 1)->kind == CYPHER_TOK_LPAREN && peek(p, 2)->kind == CYPHER_TOK_LPAREN;
}

static bool map_projection_follows(const parser *p)
{
    return variable_token(cur(p)) && peek(p, 1)->kind == CYPHER_TOK_LBRACE;
}

static bool variable_here(const parser *p) { return variable_token(cur(p)); }

/* atom: literal | parameter | list_literal | list_comprehension | pattern_comprehension
       | map_literal | pattern_predicate | '(' expression ')' | case_expression
       | COUNT '(' '*' ')' | quantifier | reduce | existential_subquery
       | shortest_path | function_invocation | map_projection | variable
   The first rule whose token, keyword and lookahead match decides. */
static const struct atom_rule {
    cypher_tok_kind tok;
    cypher_kw kw;                         /* IDENT: the keyword, or IDENTIFIER for any word */
    bool (*applies)(const parser *p);     /* lookahead, or NULL */
    node *(*parse)(parser *p);
} atom_rules[] = {
    {CYPHER_TOK_INTEGER, 0, NULL, parse_integer},
    {CYPHER_TOK_FLOAT, 0, NULL, parse_float},
    {CYPHER_TOK_STRING, 0, NULL, parse_string},
    {CYPHER_TOK_PARAM, 0, NULL, parse_parameter},
    {CYPHER_TOK_LBRACKET, 0, NULL, parse_bracket},
    {CYPHER_TOK_LBRACE, 0, NULL, parse_map_literal},
    {CYPHER_TOK_LPAREN, 0, pattern_here, parse_pattern_predicate},
    {CYPHER_TOK_LPAREN, 0, NULL, parse_parenthesized},
    {CYPHER_TOK_IDENT, CYPHER_KW_TRUE, NULL, parse_boolean},
    {CYPHER_TOK_IDENT, CYPHER_KW_FALSE, NULL, parse_boolean},
    {CYPHER_TOK_IDENT, CYPHER_KW_NULL, NULL, parse_null},
    {CYPHER_TOK_IDENT, CYPHER_KW_CASE, NULL, parse_case},
    {CYPHER_TOK_IDENT, CYPHER_KW_COUNT, count_star_follows, parse_count_star},
    {CYPHER_TOK_IDENT, CYPHER_KW_ALL, filter_follows, parse_quantifier},
    {CYPHER_TOK_IDENT, CYPHER_KW_ANY, filter_follows, parse_quantifier},
    {CYPHER_TOK_IDENT, CYPHER_KW_NONE, filter_follows, parse_quantifier},
    {CYPHER_TOK_IDENT, CYPHER_KW_SINGLE, filter_follows, parse_quantifier},
    {CYPHER_TOK_IDENT, CYPHER_KW_REDUCE, reduce_follows, parse_reduce},
    {CYPHER_TOK_IDENT, CYPHER_KW_EXISTS, brace_follows, parse_exists},
    {CYPHER_TOK_IDENT, CYPHER_KW_SHORTESTPATH, pattern_argument_follows, parse_shortest_path},
    {CYPHER_TOK_IDENT, CYPHER_KW_ALLSHORTESTPATHS, pattern_argument_follows, parse_shortest_path},
    {CYPHER_TOK_IDENT, CYPHER_KW_IDENTIFIER, function_starts, parse_function},
    {CYPHER_TOK_IDENT, CYPHER_KW_IDENTIFIER, map_projection_follows, parse_map_projection},
    {CYPHER_TOK_IDENT, CYPHER_KW_IDENTIFIER, variable_here, parse_variable},
};

static node *parse_atom(parser *p)
{
    const cypher_token *t = cur(p);
    for (size_t i = 0; i < COUNT_OF(atom_rules); i++) {
        const struct atom_rule *r = &atom_rules[i];
        if (r->tok != t->kind)
            continue;
        if (r->tok == CYPHER_TOK_IDENT && r->kw != CYPHER_KW_IDENTIFIER && !is_kw(t, r->kw))
            continue;
        if (r->applies && !r->applies(p))
            continue;
        return r->parse(p);
    }
    fail_expected(p, "an expression");
    return NULL;
}

/* ---- expressions: operators ------------------------------------------------------- */

/* Precedence levels, loosest first (openCypher 9):
     OR < XOR < AND < NOT < comparison (chains: a < b < c)
       < string/list/null predicates < + - < * / % < ^ < unary + - < postfix */
enum {
    PREC_NONE = 0,
    PREC_OR,
    PREC_XOR,
    PREC_AND,
    PREC_NOT,
    PREC_COMPARE,
    PREC_PREDICATE,
    PREC_ADD,
    PREC_MUL,
    PREC_POW,
    PREC_UNARY,
};

/* The binary operators: a token (or one or two keywords) and a level.
   All associate to the left; comparisons chain. */
static const struct binop {
    cypher_tok_kind tok;
    cypher_kw kw, kw2;          /* for IDENT operators */
    cypher_ast_op op;
    int prec;
} binops[] = {
    {CYPHER_TOK_IDENT, CYPHER_KW_OR, 0, CYPHER_OP_OR, PREC_OR},
    {CYPHER_TOK_IDENT, CYPHER_KW_XOR, 0, CYPHER_OP_XOR, PREC_XOR},
    {CYPHER_TOK_IDENT, CYPHER_KW_AND, 0, CYPHER_OP_AND, PREC_AND},
    {CYPHER_TOK_EQ, 0, 0, CYPHER_OP_EQ, PREC_COMPARE},
    {CYPHER_TOK_NE, 0, 0, CYPHER_OP_NE, PREC_COMPARE},
    {CYPHER_TOK_LT, 0, 0, CYPHER_OP_LT, PREC_COMPARE},
    {CYPHER_TOK_GT, 0, 0, CYPHER_OP_GT, PREC_COMPARE},
    {CYPHER_TOK_LE, 0, 0, CYPHER_OP_LE, PREC_COMPARE},
    {CYPHER_TOK_GE, 0, 0, CYPHER_OP_GE, PREC_COMPARE},
    {CYPHER_TOK_IDENT, CYPHER_KW_STARTS, CYPHER_KW_WITH, CYPHER_OP_STARTS_WITH, PREC_PREDICATE},
    {CYPHER_TOK_IDENT, CYPHER_KW_ENDS, CYPHER_KW_WITH, CYPHER_OP_ENDS_WITH, PREC_PREDICATE},
    {CYPHER_TOK_IDENT, CYPHER_KW_CONTAINS, 0, CYPHER_OP_CONTAINS, PREC_PREDICATE},
    {CYPHER_TOK_IDENT, CYPHER_KW_IN, 0, CYPHER_OP_IN, PREC_PREDICATE},
    {CYPHER_TOK_REGEX, 0, 0, CYPHER_OP_REGEX, PREC_PREDICATE},
    {CYPHER_TOK_PLUS, 0, 0, CYPHER_OP_ADD, PREC_ADD},
    {CYPHER_TOK_MINUS, 0, 0, CYPHER_OP_SUB, PREC_ADD},
    {CYPHER_TOK_STAR, 0, 0, CYPHER_OP_MUL, PREC_MUL},
    {CYPHER_TOK_SLASH, 0, 0, CYPHER_OP_DIV, PREC_MUL},
    {CYPHER_TOK_PERCENT, 0, 0, CYPHER_OP_MOD, PREC_MUL},
    {CYPHER_TOK_CARET, 0, 0, CYPHER_OP_POW, PREC_POW},
};

/* The binary operator at the current token, or NULL. */
static const struct binop *binop_here(const parser *p)
{
    const cypher_token *t = cur(p);
    for (size_t i = 0; i < COUNT_OF(binops); i++) {
        const struct binop *b = &binops[i];
        if (b->tok != t->kind)
            continue;
        if (b->tok != CYPHER_TOK_IDENT)
            return b;
        if (is_kw(t, b->kw) && (!b->kw2 || is_kw(peek(p, 1), b->kw2)))
            return b;
    }
    return NULL;
}

/* postfix_expression: atom (property_lookup | '[' expression ']'
                             | '[' expression? '..' expression? ']')* labels?
   property_lookup: '.' schema_name */
static node *parse_postfix(parser *p)
{
    node *n = parse_atom(p);
    while (n && !p->failed) {
        const cypher_token *t = cur(p);
        if (t->kind == CYPHER_TOK_DOT) {
            take(p);
            node *prop = make(p, CYPHER_AST_PROPERTY, t);
            if (!prop || !parse_schema_name(p, "a property key name", &prop->u.property.key))
                return NULL;
            prop->line = n->line, prop->column = n->column, prop->offset = n->offset;
            prop->u.property.subject = n;
            n = prop;
        } else if (t->kind == CYPHER_TOK_LBRACKET) {
            take(p);
            node *sub = make(p, CYPHER_AST_SUBSCRIPT, t);
            if (!sub)
                return NULL;
            sub->line = n->line, sub->column = n->column, sub->offset = n->offset;
            sub->u.subscript.subject = n;
            if (!at(p, CYPHER_TOK_DOTDOT))
                sub->u.subscript.from = parse_expr(p);
            if (accept(p, CYPHER_TOK_DOTDOT)) {
                sub->kind = CYPHER_AST_SLICE;
                if (!at(p, CYPHER_TOK_RBRACKET))
                    sub->u.subscript.to = parse_expr(p);
            }
            if (!close_with(p, CYPHER_TOK_RBRACKET,
                            sub->kind == CYPHER_AST_SLICE ? "']'" : "'..' or ']'"))
                return NULL;
            n = sub;
        } else if (t->kind == CYPHER_TOK_COLON) {
            node *has = make(p, CYPHER_AST_HAS_LABELS, t);
            vec labels = {0};
            if (!has || !parse_labels(p, &labels))
                return NULL;
            has->line = n->line, has->column = n->column, has->offset = n->offset;
            has->u.labels.subject = n;
            has->u.labels.labels = labels.list;
            return has;
        } else {
            break;
        }
    }
    return p->failed ? NULL : n;
}

/* unary_expression: ('+' | '-')* postfix_expression */
static node *parse_unary(parser *p)
{
    const cypher_token *t = cur(p);
    if (t->kind != CYPHER_TOK_MINUS && t->kind != CYPHER_TOK_PLUS)
        return parse_postfix(p);
    if (!enter(p))
        return NULL;
    take(p);
    node *n;
    const cypher_token *lit = cur(p);
    cypher_tok_kind after = peek(p, 1)->kind;
    bool bare = after != CYPHER_TOK_DOT && after != CYPHER_TOK_LBRACKET &&
                after != CYPHER_TOK_COLON;
    if (t->kind == CYPHER_TOK_MINUS && bare && lit->kind == CYPHER_TOK_INTEGER) {
        /* -9223372036854775808 is an integer although its magnitude is not */
        n = integer_literal(p, take(p), t);
    } else if (t->kind == CYPHER_TOK_MINUS && bare && lit->kind == CYPHER_TOK_FLOAT) {
        n = make(p, CYPHER_AST_FLOAT_LIT, t);
        if (n)
            n->u.real = -take(p)->u.real;
    } else {
        n = make(p, CYPHER_AST_UNARY, t);
        node *operand = parse_unary(p);
        if (n) {
            n->u.unary.op = t->kind == CYPHER_TOK_MINUS ? CYPHER_OP_NEG : CYPHER_OP_POS;
            n->u.unary.operand = operand;
        }
    }
    leave(p);
    return p->failed ? NULL : n;
}

static node *make_binary(parser *p, cypher_ast_op op, node *lhs, node *rhs, const cypher_token *t)
{
    node *b = make(p, CYPHER_AST_BINARY, t);
    if (!b || !lhs || !rhs)
        return NULL;
    b->line = lhs->line, b->column = lhs->column, b->offset = lhs->offset;
    b->u.binary.op = op;
    b->u.binary.lhs = lhs;
    b->u.binary.rhs = rhs;
    return b;
}

static node *parse_subexpr(parser *p, int limit);

/* Appends op to an operator array in the tree's arena (doubling). */
static bool push_op(parser *p, cypher_ast_op **ops, size_t *n, size_t *cap, cypher_ast_op op)
{
    if (*n == *cap) {
        size_t grown_cap = *cap ? *cap * 2 : 4;
        cypher_ast_op *grown = cypher_ast_alloc(p->ast, mem_array_size(grown_cap, sizeof *grown));
        if (!grown) {
            fail_oom(p);
            return false;
        }
        if (*n)
            memcpy(grown, *ops, *n * sizeof **ops);
        *ops = grown;
        *cap = grown_cap;
    }
    (*ops)[(*n)++] = op;
    return true;
}

/* A run of one precedence's operators being built into one BINARY_CHAIN
   node (ast.h): run is the node, NULL before the run's first operator. */
typedef struct op_run {
    node *run;
    int prec;
    vec operands;
    size_t ops_cap;
} op_run;

/* lhs OP rhs, where lhs may be the run so far: the run grows by one
   operand (a BINARY turning into a BINARY_CHAIN at its second operator)
   instead of nesting one level deeper. */
static node *extend_run(parser *p, op_run *r, int prec, cypher_ast_op op, node *lhs, node *rhs,
                        const cypher_token *t)
{
    if (!r->run || r->run != lhs || r->prec != prec || !rhs) {
        *r = (op_run){.run = make_binary(p, op, lhs, rhs, t), .prec = prec};
        return r->run;
    }
    node *n = r->run;
    if (n->kind == CYPHER_AST_BINARY) {
        node *a = n->u.binary.lhs, *b = n->u.binary.rhs;
        cypher_ast_op first = n->u.binary.op;
        n->kind = CYPHER_AST_BINARY_CHAIN;
        n->u.fold.ops = NULL;
        n->u.fold.nops = 0;
        if (!push(p, &r->operands, a) || !push(p, &r->operands, b) ||
            !push_op(p, &n->u.fold.ops, &n->u.fold.nops, &r->ops_cap, first))
            return NULL;
    }
    if (!push(p, &r->operands, rhs) ||
        !push_op(p, &n->u.fold.ops, &n->u.fold.nops, &r->ops_cap, op))
        return NULL;
    n->u.fold.operands = r->operands.list;
    return n;
}

/* comparison: operand (comparison_operator operand)+, from the first operator;
   one operator makes a BINARY, more a COMPARISON chain */
static node *parse_comparison(parser *p, node *lhs)
{
    vec operands = {0};
    cypher_ast_op *ops = NULL;
    size_t nops = 0, cap = 0;
    const cypher_token *first = cur(p);
    push(p, &operands, lhs);
    const struct binop *b;
    while (!p->failed && (b = binop_here(p)) != NULL && b->prec == PREC_COMPARE) {
        if (nops == cap) {
            cap = cap ? cap * 2 : 4;
            cypher_ast_op *grown = cypher_ast_alloc(p->ast, mem_array_size(cap, sizeof *grown));
            if (!grown) {
                fail_oom(p);
                return NULL;
            }
            if (nops)
                memcpy(grown, ops, nops * sizeof *ops);
            ops = grown;
        }
        take(p);
        ops[nops++] = b->op;
        push(p, &operands, parse_subexpr(p, PREC_COMPARE));
    }
    if (p->failed)
        return NULL;
    if (nops == 1)
        return make_binary(p, ops[0], operands.list.items[0], operands.list.items[1], first);
    node *c = make(p, CYPHER_AST_COMPARISON, first);
    if (!c)
        return NULL;
    c->line = lhs->line, c->column = lhs->column, c->offset = lhs->offset;
    c->u.chain.operands = operands.list;
    c->u.chain.ops = ops;
    c->u.chain.nops = nops;
    return c;
}

/* expression: precedence climbing over binops[]:
   subexpr(limit): (NOT subexpr(AND) | unary_expression) (binop subexpr(prec) | IS NOT? NULL)*
   taking only operators that bind tighter than limit.  Consecutive
   operators of one precedence are taken by this loop, not by recursion,
   and make one BINARY_CHAIN (extend_run): a flat chain is one level deep. */
static node *parse_subexpr(parser *p, int limit)
{
    if (!enter(p))
        return NULL;
    node *lhs;
    const cypher_token *t = cur(p);
    if (is_kw(t, CYPHER_KW_NOT)) {
        if (limit >= PREC_NOT) {
            fail_at(p, t, "UnexpectedSyntax", "NOT needs parentheses here: write (NOT ...)");
            leave(p);
            return NULL;
        }
        take(p);
        lhs = make(p, CYPHER_AST_UNARY, t);
        node *operand = parse_subexpr(p, PREC_AND);
        if (lhs) {
            lhs->u.unary.op = CYPHER_OP_NOT;
            lhs->u.unary.operand = operand;
        }
    } else {
        lhs = parse_unary(p);
    }
    op_run run = {0};
    while (lhs && !p->failed) {
        const cypher_token *op = cur(p);
        if (is_kw(op, CYPHER_KW_IS) && PREC_PREDICATE > limit) {
            /* null_predicate: IS NOT? NULL */
            take(p);
            bool negated = accept_kw(p, CYPHER_KW_NOT);
            if (!expect_kw(p, CYPHER_KW_NULL))
                break;
            node *u = make(p, CYPHER_AST_UNARY, op);
            if (!u)
                break;
            u->line = lhs->line, u->column = lhs->column, u->offset = lhs->offset;
            u->u.unary.op = negated ? CYPHER_OP_IS_NOT_NULL : CYPHER_OP_IS_NULL;
            u->u.unary.operand = lhs;
            lhs = u;
            continue;
        }
        const struct binop *b = binop_here(p);
        if (!b || b->prec <= limit)
            break;
        if (b->prec == PREC_COMPARE) {
            lhs = parse_comparison(p, lhs);
            continue;
        }
        take(p);
        if (b->kw2)
            take(p);
        node *rhs = parse_subexpr(p, b->prec);
        lhs = extend_run(p, &run, b->prec, b->op, lhs, rhs, op);
    }
    leave(p);
    return p->failed ? NULL : lhs;
}

/* expression: or_expression */
static node *parse_expr(parser *p) { return parse_subexpr(p, PREC_NONE); }

/* An expression in a WHERE: patterns may stand as predicates in it. */
static node *parse_where_expr(parser *p)
{
    bool saved = p->patterns_ok;
    p->patterns_ok = true;
    node *n = parse_expr(p);
    p->patterns_ok = saved;
    return n;
}

/* An expression where patterns may not stand (projections, SET, ...). */
static node *parse_value_expr(parser *p)
{
    bool saved = p->patterns_ok;
    p->patterns_ok = false;
    node *n = parse_expr(p);
    p->patterns_ok = saved;
    return n;
}

/* ---- clauses ----------------------------------------------------------------------- */

/* match: OPTIONAL? MATCH pattern (WHERE expression)? */
static node *parse_match(parser *p)
{
    node *m = make(p, CYPHER_AST_MATCH, cur(p));
    if (!m)
        return NULL;
    if (accept_kw(p, CYPHER_KW_OPTIONAL)) {
        m->u.match.optional = true;
        if (!expect_kw(p, CYPHER_KW_MATCH))
            return NULL;
    } else {
        take(p);
    }
    vec parts = {0};
    if (!parse_pattern(p, PAT_MATCH, &parts))
        return NULL;
    m->u.match.parts = parts.list;
    if (accept_kw(p, CYPHER_KW_WHERE))
        m->u.match.where = parse_where_expr(p);
    return p->failed ? NULL : m;
}

/* unwind: UNWIND expression AS variable */
static node *parse_unwind(parser *p)
{
    node *u = make(p, CYPHER_AST_UNWIND, take(p));
    if (!u)
        return NULL;
    u->u.unwind.expr = parse_value_expr(p);
    if (!expect_kw(p, CYPHER_KW_AS))
        return NULL;
    u->u.unwind.alias = parse_variable(p);
    return p->failed ? NULL : u;
}

/* A SKIP or LIMIT count: an expression; a negative literal is refused. */
static node *parse_count_expr(parser *p, const char *clause)
{
    const cypher_token *t = cur(p);
    node *n = parse_value_expr(p);
    if (n && n->kind == CYPHER_AST_INT_LIT && n->u.integer < 0) {
        fail_at(p, t, "NegativeIntegerArgument", "%s takes a non-negative integer, not %lld",
                clause, (long long)n->u.integer);
        return NULL;
    }
    return n;
}

/* projection_item: expression (AS variable)?   (keeps its source text) */
static node *parse_projection_item(parser *p)
{
    const cypher_token *t = cur(p);
    node *item = make(p, CYPHER_AST_PROJECTION_ITEM, t);
    if (!item)
        return NULL;
    item->u.alias.expr = parse_value_expr(p);
    if (p->failed)
        return NULL;
    if (cypher_ast_strdup(p->ast, p->text + t->offset, prev_end(p) - t->offset,
                          &item->u.alias.text) != 0) {
        fail_oom(p);
        return NULL;
    }
    if (accept_kw(p, CYPHER_KW_AS))
        item->u.alias.alias = parse_variable(p);
    return p->failed ? NULL : item;
}

/* sort_item: expression (ASC | ASCENDING | DESC | DESCENDING)? */
static node *parse_sort_item(parser *p)
{
    node *s = make(p, CYPHER_AST_SORT_ITEM, cur(p));
    if (!s)
        return NULL;
    s->u.sort.expr = parse_value_expr(p);
    if (accept_kw(p, CYPHER_KW_DESC) || accept_kw(p, CYPHER_KW_DESCENDING))
        s->u.sort.descending = true;
    else if (!accept_kw(p, CYPHER_KW_ASC))
        accept_kw(p, CYPHER_KW_ASCENDING);
    return p->failed ? NULL : s;
}

/* projection_body: DISTINCT? ('*' (',' projection_item)* | projection_item (',' projection_item)*)
                    (ORDER BY sort_item (',' sort_item)*)? (SKIP expression)? (LIMIT expression)? */
static bool parse_projection_body(parser *p, node *clause)
{
    clause->u.projection.distinct = accept_kw(p, CYPHER_KW_DISTINCT);
    vec items = {0}, order = {0};
    clause->u.projection.star = accept(p, CYPHER_TOK_STAR);
    if ((!clause->u.projection.star || accept(p, CYPHER_TOK_COMMA)) &&
        !parse_list(p, &items, parse_projection_item))
        return false;
    clause->u.projection.items = items.list;
    if (accept_kw(p, CYPHER_KW_ORDER)) {
        if (!expect_kw(p, CYPHER_KW_BY) || !parse_list(p, &order, parse_sort_item))
            return false;
        clause->u.projection.order = order.list;
    }
    if (accept_kw(p, CYPHER_KW_SKIP))
        clause->u.projection.skip = parse_count_expr(p, "SKIP");
    if (accept_kw(p, CYPHER_KW_LIMIT))
        clause->u.projection.limit = parse_count_expr(p, "LIMIT");
    return !p->failed;
}

/* with: WITH projection_body (WHERE expression)? */
static node *parse_with(parser *p)
{
    node *w = make(p, CYPHER_AST_WITH, take(p));
    if (!w || !parse_projection_body(p, w))
        return NULL;
    if (accept_kw(p, CYPHER_KW_WHERE))
        w->u.projection.where = parse_where_expr(p);
    return p->failed ? NULL : w;
}

/* return: RETURN projection_body */
static node *parse_return(parser *p)
{
    node *r = make(p, CYPHER_AST_RETURN, take(p));
    if (!r || !parse_projection_body(p, r))
        return NULL;
    return r;
}

/* create: CREATE pattern */
static node *parse_create(parser *p)
{
    node *c = make(p, CYPHER_AST_CREATE, take(p));
    vec parts = {0};
    if (!c || !parse_pattern(p, PAT_CREATE, &parts))
        return NULL;
    c->u.list = parts.list;
    return c;
}

/* property_expression: atom property_lookup+   (the target of SET and REMOVE);
   after_variable says what else could follow a bare variable */
static node *parse_property_target(parser *p, const char *after_variable)
{
    const cypher_token *t = cur(p);
    node *n = parse_postfix(p);
    if (n && n->kind == CYPHER_AST_VARIABLE) {
        fail_expected(p, after_variable);
        return NULL;
    }
    if (n && n->kind != CYPHER_AST_PROPERTY) {
        fail_at(p, t, "UnexpectedSyntax", "expected a property such as n.key");
        return NULL;
    }
    return n;
}

/* set_item: property_expression '=' expression | variable '=' expression
           | variable '+=' expression | variable labels */
static node *parse_set_item(parser *p)
{
    const cypher_token *t = cur(p);
    cypher_tok_kind next = peek(p, 1)->kind;
    node *item;
    if (variable_token(t) && (next == CYPHER_TOK_EQ || next == CYPHER_TOK_PLUSEQ)) {
        item = make(p, next == CYPHER_TOK_EQ ? CYPHER_AST_SET_VARIABLE : CYPHER_AST_SET_MERGE, t);
        if (!item)
            return NULL;
        item->u.assign.target = parse_variable(p);
        take(p);
        item->u.assign.value = parse_value_expr(p);
    } else if (variable_token(t) && next == CYPHER_TOK_COLON) {
        item = make(p, CYPHER_AST_SET_LABELS, t);
        vec labels = {0};
        if (!item)
            return NULL;
        item->u.labels.subject = parse_variable(p);
        if (!parse_labels(p, &labels))
            return NULL;
        item->u.labels.labels = labels.list;
    } else {
        item = make(p, CYPHER_AST_SET_PROPERTY, t);
        if (!item)
            return NULL;
        item->u.assign.target = parse_property_target(p, "'=', '+=', ':' or '.'");
        if (!close_with(p, CYPHER_TOK_EQ, "'='"))
            return NULL;
        item->u.assign.value = parse_value_expr(p);
    }
    return p->failed ? NULL : item;
}

/* set_items: set_item (',' set_item)* */
static bool parse_set_items(parser *p, vec *items) { return parse_list(p, items, parse_set_item); }

/* set: SET set_items */
static node *parse_set(parser *p)
{
    node *s = make(p, CYPHER_AST_SET, take(p));
    vec items = {0};
    if (!s || !parse_set_items(p, &items))
        return NULL;
    s->u.list = items.list;
    return s;
}

/* merge: MERGE pattern_part (ON (MATCH | CREATE) SET set_items)* */
static node *parse_merge(parser *p)
{
    node *m = make(p, CYPHER_AST_MERGE, take(p));
    if (!m)
        return NULL;
    m->u.merge.part = parse_pattern_part(p, PAT_MERGE);
    vec actions = {0};
    while (!p->failed && at_kw(p, CYPHER_KW_ON)) {
        node *a = make(p, CYPHER_AST_MERGE_ACTION, take(p));
        if (!a)
            return NULL;
        if (accept_kw(p, CYPHER_KW_CREATE)) {
            a->u.merge_action.on_create = true;
        } else if (!accept_kw(p, CYPHER_KW_MATCH)) {
            fail_expected(p, "CREATE or MATCH after ON");
            return NULL;
        }
        vec items = {0};
        if (!expect_kw(p, CYPHER_KW_SET) || !parse_set_items(p, &items))
            return NULL;
        a->u.merge_action.items = items.list;
        push(p, &actions, a);
    }
    m->u.merge.actions = actions.list;
    return p->failed ? NULL : m;
}

/* remove_item: variable labels | property_expression */
static node *parse_remove_item(parser *p)
{
    const cypher_token *t = cur(p);
    if (variable_token(t) && peek(p, 1)->kind == CYPHER_TOK_COLON) {
        node *item = make(p, CYPHER_AST_REMOVE_LABELS, t);
        vec labels = {0};
        if (!item)
            return NULL;
        item->u.labels.subject = parse_variable(p);
        if (!parse_labels(p, &labels))
            return NULL;
        item->u.labels.labels = labels.list;
        return item;
    }
    node *item = make(p, CYPHER_AST_REMOVE_PROPERTY, t);
    if (!item)
        return NULL;
    item->u.assign.target = parse_property_target(p, "':' or '.'");
    return p->failed ? NULL : item;
}

/* remove: REMOVE remove_item (',' remove_item)* */
static node *parse_remove(parser *p)
{
    node *r = make(p, CYPHER_AST_REMOVE, take(p));
    vec items = {0};
    if (!r || !parse_list(p, &items, parse_remove_item))
        return NULL;
    r->u.list = items.list;
    return r;
}

/* A DELETE operand: an expression, but not a label predicate. */
static node *parse_delete_item(parser *p)
{
    const cypher_token *t = cur(p);
    node *e = parse_value_expr(p);
    if (e && e->kind == CYPHER_AST_HAS_LABELS) {
        fail_at(p, t, "InvalidDelete",
                "DELETE removes nodes, relationships or paths; use REMOVE to remove a label");
        return NULL;
    }
    return e;
}

/* delete: DETACH? DELETE expression (',' expression)* */
static node *parse_delete(parser *p)
{
    node *d = make(p, CYPHER_AST_DELETE, cur(p));
    if (!d)
        return NULL;
    if (accept_kw(p, CYPHER_KW_DETACH)) {
        d->u.delete_.detach = true;
        if (!expect_kw(p, CYPHER_KW_DELETE))
            return NULL;
    } else {
        take(p);
    }
    vec exprs = {0};
    if (!parse_list(p, &exprs, parse_delete_item))
        return NULL;
    d->u.delete_.exprs = exprs.list;
    return d;
}

/* Whether the current token ends a single query. */
static bool at_query_end(const parser *p, bool subquery)
{
    const cypher_token *t = cur(p);
    return t->kind == CYPHER_TOK_EOF || t->kind == CYPHER_TOK_SEMICOLON ||
           is_kw(t, CYPHER_KW_UNION) || (subquery && t->kind == CYPHER_TOK_RBRACE);
}

/* yield_item: (schema_name AS)? variable */
static node *parse_yield_item(parser *p)
{
    node *y = make(p, CYPHER_AST_YIELD_ITEM, cur(p));
    if (!y)
        return NULL;
    if (at(p, CYPHER_TOK_IDENT) && is_kw(peek(p, 1), CYPHER_KW_AS)) {
        y->u.alias.expr = make_named(p, CYPHER_AST_VARIABLE, take(p));
        take(p);
        y->u.alias.alias = parse_variable(p);
    } else {
        y->u.alias.expr = parse_variable(p);
    }
    return p->failed ? NULL : y;
}

/* call: CALL qualified_name ('(' (expression (',' expression)*)? ')')?
         (YIELD ('*' | yield_item (',' yield_item)* (WHERE expression)?))?
   Standalone (the whole query) it may omit the parentheses and YIELD *;
   inside a query it may not. */
static node *parse_call(parser *p)
{
    bool first = p->first_clause, subquery = p->in_subquery;
    const cypher_token *call_tok = cur(p), *star = NULL;
    node *c = make(p, CYPHER_AST_CALL, take(p));
    vec args = {0}, yields = {0};
    if (!c || !parse_qualified_name(p, "a procedure name", &c->u.call.proc))
        return NULL;
    if (accept(p, CYPHER_TOK_LPAREN)) {
        c->u.call.has_args = true;
        if (!parse_bracketed(p, &args, parse_value_expr, CYPHER_TOK_RPAREN, "',' or ')'"))
            return NULL;
        c->u.call.args = args.list;
    }
    if (accept_kw(p, CYPHER_KW_YIELD)) {
        c->u.call.has_yield = true;
        if (at(p, CYPHER_TOK_STAR)) {
            star = take(p);
            c->u.call.yield_star = true;
        } else {
            if (!parse_list(p, &yields, parse_yield_item))
                return NULL;
            c->u.call.yields = yields.list;
            if (accept_kw(p, CYPHER_KW_WHERE))
                c->u.call.where = parse_where_expr(p);
        }
    }
    if (p->failed)
        return NULL;
    if (!(first && at_query_end(p, subquery))) {
        if (!c->u.call.has_args) {
            fail_at(p, call_tok, "InvalidArgumentPassingMode",
                    "a procedure called inside a query needs its arguments in parentheses");
            return NULL;
        }
        if (star) {
            fail_at(p, star, "UnexpectedSyntax",
                    "YIELD * is only allowed when CALL is the whole query; name the fields");
            return NULL;
        }
    }
    return c;
}

/* load_csv: LOAD CSV (WITH HEADERS)? FROM expression AS variable (FIELDTERMINATOR string)? */
static node *parse_load_csv(parser *p)
{
    node *l = make(p, CYPHER_AST_LOAD_CSV, take(p));
    if (!l || !expect_kw(p, CYPHER_KW_CSV))
        return NULL;
    if (accept_kw(p, CYPHER_KW_WITH)) {
        if (!expect_kw(p, CYPHER_KW_HEADERS))
            return NULL;
        l->u.load_csv.with_headers = true;
    }
    if (!expect_kw(p, CYPHER_KW_FROM))
        return NULL;
    l->u.load_csv.source = parse_value_expr(p);
    if (!expect_kw(p, CYPHER_KW_AS))
        return NULL;
    l->u.load_csv.alias = parse_variable(p);
    if (accept_kw(p, CYPHER_KW_FIELDTERMINATOR)) {
        if (!at(p, CYPHER_TOK_STRING)) {
            fail_expected(p, "a string literal");
            return NULL;
        }
        l->u.load_csv.terminator = make_named(p, CYPHER_AST_STRING_LIT, take(p));
    }
    return p->failed ? NULL : l;
}

/* How clauses compose (openCypher 9):
     single_query: (reading* updating* WITH)* (reading* RETURN | reading* updating+ RETURN?)
   where CALL reads, and a query may also end with a CALL that yields
   nothing, or be a standalone CALL. */
enum clause_class { CL_READ, CL_UPDATE, CL_WITH, CL_RETURN, CL_CALL };

static const struct clause_kind {
    cypher_kw kw;
    const char *name;
    enum clause_class cls;
    node *(*parse)(parser *p);
} clause_kinds[] = {
    {CYPHER_KW_MATCH, "MATCH", CL_READ, parse_match},
    {CYPHER_KW_OPTIONAL, "OPTIONAL MATCH", CL_READ, parse_match},
    {CYPHER_KW_UNWIND, "UNWIND", CL_READ, parse_unwind},
    {CYPHER_KW_LOAD, "LOAD CSV", CL_READ, parse_load_csv},
    {CYPHER_KW_CALL, "CALL", CL_CALL, parse_call},
    {CYPHER_KW_WITH, "WITH", CL_WITH, parse_with},
    {CYPHER_KW_RETURN, "RETURN", CL_RETURN, parse_return},
    {CYPHER_KW_CREATE, "CREATE", CL_UPDATE, parse_create},
    {CYPHER_KW_MERGE, "MERGE", CL_UPDATE, parse_merge},
    {CYPHER_KW_SET, "SET", CL_UPDATE, parse_set},
    {CYPHER_KW_REMOVE, "REMOVE", CL_UPDATE, parse_remove},
    {CYPHER_KW_DELETE, "DELETE", CL_UPDATE, parse_delete},
    {CYPHER_KW_DETACH, "DETACH DELETE", CL_UPDATE, parse_delete},
};

/* single_query: clause+   (composed as above) */
static node *parse_single_query(parser *p, bool subquery)
{
    if (!enter(p))
        return NULL;
    node *q = make(p, CYPHER_AST_QUERY, cur(p));
    vec clauses = {0};
    const struct clause_kind *last = NULL;
    const struct clause_kind *last_update = NULL;   /* since the last WITH */
    bool saved = p->in_subquery;
    while (!p->failed && !at_query_end(p, subquery)) {
        const cypher_token *t = cur(p);
        const struct clause_kind *k = NULL;
        for (size_t i = 0; i < COUNT_OF(clause_kinds) && !k; i++)
            if (is_kw(t, clause_kinds[i].kw))
                k = &clause_kinds[i];
        if (last && last->cls == CL_RETURN) {
            fail_expected(p, subquery ? "'}' or UNION after RETURN"
                                      : "end of query or UNION after RETURN");
            break;
        }
        if (!k) {
            fail_expected(p, last ? "a clause (MATCH, WITH, RETURN, CREATE, ...)"
                                  : "a query (MATCH, RETURN, CREATE, ...)");
            break;
        }
        if ((k->cls == CL_READ || k->cls == CL_CALL) && last_update) {
            fail_at(p, t, "InvalidClauseComposition",
                    "%s cannot follow %s without a WITH in between", k->name, last_update->name);
            break;
        }
        if (k->cls == CL_UPDATE && subquery) {
            fail_at(p, t, "InvalidClauseComposition",
                    "an EXISTS subquery cannot update the graph (%s)", k->name);
            break;
        }
        p->in_subquery = subquery;
        p->first_clause = last == NULL;
        if (!push(p, &clauses, k->parse(p)))
            break;
        if (k->cls == CL_UPDATE)
            last_update = k;
        else if (k->cls == CL_WITH)
            last_update = NULL;
        last = k;
    }
    p->in_subquery = saved;
    leave(p);
    if (p->failed)
        return NULL;
    if (!last) {
        fail_expected(p, "a query (MATCH, RETURN, CREATE, ...)");
        return NULL;
    }
    /* a CALL may end a query when it is the whole query or yields nothing */
    const node *final = clauses.list.items[clauses.list.count - 1];
    bool call_ends = last->cls == CL_CALL && (clauses.list.count == 1 || !final->u.call.has_yield);
    if (!subquery && last->cls != CL_RETURN && last->cls != CL_UPDATE && !call_ends) {
        fail_at(p, cur(p), "InvalidClauseComposition",
                "a query cannot end with %s%s; finish it with RETURN or an updating clause",
                last->name, last->cls == CL_CALL ? " ... YIELD" : "");
        return NULL;
    }
    q->u.list = clauses.list;
    return q;
}

/* query: single_query (UNION ALL? single_query)* */
static node *parse_query(parser *p, bool subquery)
{
    node *first = parse_single_query(p, subquery);
    if (!first || !at_kw(p, CYPHER_KW_UNION))
        return first;
    node *u = make(p, CYPHER_AST_UNION, cur(p));
    vec queries = {0};
    if (!u || !push(p, &queries, first))
        return NULL;
    u->line = first->line, u->column = first->column, u->offset = first->offset;
    bool seen = false;
    while (!p->failed && at_kw(p, CYPHER_KW_UNION)) {
        const cypher_token *t = take(p);
        bool all = accept_kw(p, CYPHER_KW_ALL);
        if (seen && all != u->u.union_.all) {
            fail_at(p, t, "InvalidClauseComposition", "UNION and UNION ALL cannot be mixed");
            return NULL;
        }
        seen = true;
        u->u.union_.all = all;
        push(p, &queries, parse_single_query(p, subquery));
    }
    u->u.union_.queries = queries.list;
    return p->failed ? NULL : u;
}

/* ---- schema commands -------------------------------------------------------------- */

/* schema_target: '(' variable ':' schema_name ')'
               | '(' ')' '<'? '-' '[' variable ':' schema_name ']' '-' '>'? '(' ')' */
static node *parse_schema_target(parser *p)
{
    const cypher_token *t = cur(p);
    node *path = parse_path(p, PAT_MATCH, false);
    if (!path)
        return NULL;
    node *target = path->u.list.items[path->u.list.count == 1 ? 0 : 1];
    bool ok;
    if (path->u.list.count == 1) {
        ok = target->u.node.variable && target->u.node.labels.count == 1 &&
             !target->u.node.properties;
    } else {
        const node *a = path->u.list.items[0], *b = path->u.list.items[2];
        ok = path->u.list.count == 3 && target->u.rel.variable && target->u.rel.types.count == 1 &&
             !target->u.rel.var_length && !target->u.rel.properties && !a->u.node.variable &&
             !a->u.node.labels.count && !a->u.node.properties && !b->u.node.variable &&
             !b->u.node.labels.count && !b->u.node.properties;
    }
    if (!ok) {
        fail_at(p, t, "UnexpectedSyntax",
                "expected (n:Label) or ()-[r:TYPE]-() naming one variable and one label or type");
        return NULL;
    }
    return target;
}

/* schema_property: variable '.' schema_name, the variable being the target's */
static node *parse_schema_property(parser *p, const node *target)
{
    const node *var = target->kind == CYPHER_AST_NODE ? target->u.node.variable
                                                      : target->u.rel.variable;
    const cypher_token *t = cur(p);
    node *v = parse_variable(p);
    if (!v)
        return NULL;
    if (v->u.name.len != var->u.name.len ||
        memcmp(v->u.name.ptr, var->u.name.ptr, v->u.name.len) != 0) {
        fail_at(p, t, "UnexpectedSyntax", "expected a property of '%s'", var->u.name.ptr);
        return NULL;
    }
    node *prop = make(p, CYPHER_AST_PROPERTY, t);
    if (!prop || !expect(p, CYPHER_TOK_DOT) ||
        !parse_schema_name(p, "a property key name", &prop->u.property.key))
        return NULL;
    prop->u.property.subject = v;
    return prop;
}

/* Optional name and IF NOT EXISTS of a CREATE INDEX / CONSTRAINT. */
static bool parse_schema_head(parser *p, node *s, cypher_kw stop1, cypher_kw stop2)
{
    if (at(p, CYPHER_TOK_IDENT) && !at_kw(p, stop1) && !at_kw(p, stop2) &&
        !(at_kw(p, CYPHER_KW_IF) && is_kw(peek(p, 1), CYPHER_KW_NOT)))
        parse_schema_name(p, "a name", &s->u.schema.name);
    if (accept_kw(p, CYPHER_KW_IF)) {
        if (!expect_kw(p, CYPHER_KW_NOT) || !expect_kw(p, CYPHER_KW_EXISTS))
            return false;
        s->u.schema.if_exists = true;
    }
    return !p->failed;
}

/* create_index: CREATE RANGE? INDEX name? (IF NOT EXISTS)? FOR schema_target
                 ON '(' schema_property (',' schema_property)* ')' */
static node *parse_create_index(parser *p, const cypher_token *create)
{
    node *s = make(p, CYPHER_AST_CREATE_INDEX, create);
    if (!s)
        return NULL;
    s->u.schema.range = accept_kw(p, CYPHER_KW_RANGE);
    take(p);   /* INDEX */
    if (!parse_schema_head(p, s, CYPHER_KW_FOR, CYPHER_KW_ON) || !expect_kw(p, CYPHER_KW_FOR))
        return NULL;
    s->u.schema.target = parse_schema_target(p);
    if (!s->u.schema.target || !expect_kw(p, CYPHER_KW_ON) || !expect(p, CYPHER_TOK_LPAREN))
        return NULL;
    vec keys = {0};
    do {
        if (!push(p, &keys, parse_schema_property(p, s->u.schema.target)))
            return NULL;
    } while (accept(p, CYPHER_TOK_COMMA));
    s->u.schema.keys = keys.list;
    return close_with(p, CYPHER_TOK_RPAREN, "',' or ')'") ? s : NULL;
}

/* create_constraint: CREATE CONSTRAINT name? (IF NOT EXISTS)?
                      (FOR schema_target REQUIRE | ON schema_target ASSERT)
                      (schema_property | '(' schema_property (',' schema_property)* ')')
                      IS UNIQUE */
static node *parse_create_constraint(parser *p, const cypher_token *create)
{
    node *s = make(p, CYPHER_AST_CREATE_CONSTRAINT, create);
    if (!s)
        return NULL;
    take(p);   /* CONSTRAINT */
    if (!parse_schema_head(p, s, CYPHER_KW_FOR, CYPHER_KW_ON))
        return NULL;
    bool new_form = at_kw(p, CYPHER_KW_FOR);
    if (!new_form && !at_kw(p, CYPHER_KW_ON)) {
        fail_expected(p, "FOR");
        return NULL;
    }
    take(p);
    s->u.schema.target = parse_schema_target(p);
    if (!s->u.schema.target || !expect_kw(p, new_form ? CYPHER_KW_REQUIRE : CYPHER_KW_ASSERT))
        return NULL;
    vec keys = {0};
    bool parens = accept(p, CYPHER_TOK_LPAREN);
    do {
        if (!push(p, &keys, parse_schema_property(p, s->u.schema.target)))
            return NULL;
    } while (parens && accept(p, CYPHER_TOK_COMMA));
    s->u.schema.keys = keys.list;
    if ((parens && !expect(p, CYPHER_TOK_RPAREN)) || !expect_kw(p, CYPHER_KW_IS))
        return NULL;
    if (!at_kw(p, CYPHER_KW_UNIQUE)) {
        fail_expected(p, "UNIQUE (the only constraint kind strata enforces)");
        return NULL;
    }
    take(p);
    return s;
}

/* drop: DROP (INDEX | CONSTRAINT) schema_name (IF EXISTS)? */
static node *parse_drop(parser *p)
{
    const cypher_token *drop = take(p);
    cypher_ast_kind kind;
    if (accept_kw(p, CYPHER_KW_INDEX)) {
        kind = CYPHER_AST_DROP_INDEX;
    } else if (accept_kw(p, CYPHER_KW_CONSTRAINT)) {
        kind = CYPHER_AST_DROP_CONSTRAINT;
    } else {
        fail_expected(p, "INDEX or CONSTRAINT");
        return NULL;
    }
    node *s = make(p, kind, drop);
    const char *what = kind == CYPHER_AST_DROP_INDEX ? "an index name" : "a constraint name";
    if (!s || !parse_schema_name(p, what, &s->u.schema.name))
        return NULL;
    if (accept_kw(p, CYPHER_KW_IF)) {
        if (!expect_kw(p, CYPHER_KW_EXISTS))
            return NULL;
        s->u.schema.if_exists = true;
    }
    return s;
}

/* schema_command: create_index | create_constraint | drop, or NULL (with
   the position untouched) when the statement is not one */
static node *parse_schema_command(parser *p, bool *is_schema)
{
    const cypher_token *t = cur(p), *next = peek(p, 1);
    *is_schema = true;
    if (is_kw(t, CYPHER_KW_DROP))
        return parse_drop(p);
    if (is_kw(t, CYPHER_KW_CREATE) && peek(p, 2)->kind != CYPHER_TOK_EQ) {
        if (is_kw(next, CYPHER_KW_INDEX) ||
            (is_kw(next, CYPHER_KW_RANGE) && is_kw(peek(p, 2), CYPHER_KW_INDEX))) {
            take(p);
            return parse_create_index(p, t);
        }
        if (is_kw(next, CYPHER_KW_CONSTRAINT)) {
            take(p);
            return parse_create_constraint(p, t);
        }
    }
    *is_schema = false;
    return NULL;
}

/* statement: (EXPLAIN | PROFILE)? (schema_command | query) ';'? */
static node *parse_statement(parser *p)
{
    node *s = make(p, CYPHER_AST_STATEMENT, cur(p));
    if (!s)
        return NULL;
    if (accept_kw(p, CYPHER_KW_EXPLAIN))
        s->u.statement.mode = CYPHER_MODE_EXPLAIN;
    else if (accept_kw(p, CYPHER_KW_PROFILE))
        s->u.statement.mode = CYPHER_MODE_PROFILE;
    bool is_schema;
    s->u.statement.body = parse_schema_command(p, &is_schema);
    if (!is_schema)
        s->u.statement.body = parse_query(p, false);
    if (p->failed)
        return NULL;
    accept(p, CYPHER_TOK_SEMICOLON);
    if (!at(p, CYPHER_TOK_EOF)) {
        fail_expected(p, is_schema ? "end of input" : "end of input (one statement at a time)");
        return NULL;
    }
    return s;
}

/* ---- driver ------------------------------------------------------------------------- */

static bool lex_all(parser *p)
{
    cypher_lexer lx;
    cypher_lex_init(&lx, p->text, p->len);
    for (;;) {
        if (p->ntoks == p->cap) {
            size_t cap = p->cap ? p->cap * 2 : 64;
            size_t bytes = mem_array_size(cap, sizeof *p->toks);
            cypher_token *toks = mem_realloc(p->m, p->toks, bytes);
            if (!toks)
                return false;
            p->toks = toks;
            p->cap = cap;
        }
        cypher_token *t = &p->toks[p->ntoks++];
        cypher_lex_next(&lx, t);
        if (t->kind == CYPHER_TOK_EOF || t->kind == CYPHER_TOK_ERROR)
            return true;
    }
}

static bool is_opener(cypher_tok_kind k)
{
    return k == CYPHER_TOK_LPAREN || k == CYPHER_TOK_LBRACKET || k == CYPHER_TOK_LBRACE;
}

static bool is_closer(cypher_tok_kind k)
{
    return k == CYPHER_TOK_RPAREN || k == CYPHER_TOK_RBRACKET || k == CYPHER_TOK_RBRACE;
}

/* Pairs brackets by nesting (any closer closes the innermost opener), once,
   so that lookahead past a bracketed group is O(1): scanning for the closer
   at every '(' would make nested input quadratic.  The open brackets wait
   on a stack threaded through after_close itself (an opener's slot holds
   the index of the opener below it, plus one, until it is closed). */
static bool match_brackets(parser *p)
{
    p->after_close = mem_alloc(p->m, mem_array_size(p->ntoks, sizeof *p->after_close));
    if (!p->after_close)
        return false;
    size_t top = 0;   /* innermost open bracket, plus one; 0: none */
    for (size_t i = 0; i < p->ntoks; i++) {
        cypher_tok_kind k = p->toks[i].kind;
        p->after_close[i] = 0;
        if (is_opener(k)) {
            p->after_close[i] = top;
            top = i + 1;
        } else if (is_closer(k) && top) {
            size_t open = top - 1;
            top = p->after_close[open];
            p->after_close[open] = i + 1;
        }
    }
    while (top) {   /* unclosed */
        size_t open = top - 1;
        top = p->after_close[open];
        p->after_close[open] = 0;
    }
    return true;
}

struct depth_walk {
    size_t depth;
    const cypher_ast_node *too_deep;
};

/* Bounded: stops descending at the first node below the limit. */
static int depth_visit(const cypher_ast_node *n, void *ctx)
{
    struct depth_walk *w = ctx;
    if (++w->depth > CYPHER_AST_MAX_DEPTH) {
        w->too_deep = n;
        return 1;
    }
    int rc = cypher_ast_each_child(n, depth_visit, w);
    w->depth--;
    return rc;
}

/* LoneExpression = Expression EOF ; (cypher_parse_expression) */
static node *parse_lone_expression(parser *p)
{
    node *e = parse_expr(p);
    if (p->failed)
        return NULL;
    if (!at(p, CYPHER_TOK_EOF)) {
        fail_expected(p, "end of input (exactly one expression)");
        return NULL;
    }
    return e;
}

static int parse_text(const char *text, size_t len, mem_ctx *m, cypher_ast **out,
                      cypher_error *err, node *(*rule)(parser *))
{
    cypher_error scratch_err;
    parser p = {.text = text ? text : "", .len = text ? len : 0, .m = m,
                .err = err ? err : &scratch_err};
    memset(p.err, 0, sizeof *p.err);
    *out = NULL;
    p.ast = cypher_ast_new(m);
    if (!p.ast || !lex_all(&p) || !match_brackets(&p)) {
        fail_oom(&p);
        goto cleanup;
    }
    node *root = rule(&p);
    if (!root && !p.failed)   /* defensive: every NULL above sets an error */
        fail_at(&p, cur(&p), NULL, "internal error: the parser stopped without a reason");
    if (root) {
        struct depth_walk w = {0, NULL};
        if (depth_visit(root, &w)) {
            const cypher_token at_node = {.line = w.too_deep->line, .column = w.too_deep->column,
                                          .offset = w.too_deep->offset};
            fail_at(&p, &at_node, NULL, "query is too deeply nested (more than %d levels)",
                    CYPHER_AST_MAX_DEPTH);
        }
    }
    if (!p.failed) {
        cypher_ast_set_root(p.ast, root);
        *out = p.ast;
        p.ast = NULL;
    }
cleanup:
    if (p.after_close)
        mem_free(m, p.after_close);
    if (p.toks)
        mem_free(m, p.toks);
    cypher_ast_free(&p.ast);
    return *out ? 0 : -1;
}

int cypher_parse(const char *text, size_t len, mem_ctx *m, cypher_ast **out, cypher_error *err)
{
    return parse_text(text, len, m, out, err, parse_statement);
}

int cypher_parse_expression(const char *text, size_t len, mem_ctx *m, cypher_ast **out,
                            cypher_error *err)
{
    return parse_text(text, len, m, out, err, parse_lone_expression);
}
