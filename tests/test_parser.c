/*
 * Tests for query/lexer, query/ast and query/parser.
 *
 * Parse tests compare the tree's canonical printed form (ast.h) with the
 * expected one, case by case from tables: every clause, pattern and
 * expression form, operator precedence and associativity, schema
 * commands.  Error tests check category, detail, line, column and the
 * message.  The OOM test fails every allocation of a parse in turn.  The
 * corpus test parses every query of the openCypher TCK when
 * ../shared/tck/features is there (found from this file's path) and
 * skips with a message when it is not.
 *
 * Each test gets a fresh mem_ctx in *state; the teardown asserts that
 * nothing allocated from it is left.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "query/ast.h"
#include "query/lexer.h"
#include "query/parser.h"

/* What the corpus test must keep reaching (per mille); measured: every
   valid query parses, every parser-level SyntaxError fails with the TCK's
   detail, every semantic-level one parses. */
#define TCK_VALID_PERMILLE 1000
#define TCK_SYNTAX_PERMILLE 1000
#define TCK_SEMANTIC_PERMILLE 1000

#include "support/mem_fixture.h"

/* ---- helpers ------------------------------------------------------------------ */

/* The canonical form of query's tree (malloc'd), or NULL with *err set. */
static char *parse_to_string(mem_ctx *m, const char *query, size_t len, cypher_error *err)
{
    cypher_ast *ast = NULL;
    if (cypher_parse(query, len, m, &ast, err) != 0) {
        assert_null(ast);
        return NULL;
    }
    assert_non_null(ast);
    size_t depth;
    assert_int_equal(cypher_ast_check(ast, len, &depth), 0);
    char *printed;
    size_t plen;
    assert_int_equal(cypher_ast_print(cypher_ast_root(ast), m, &printed, &plen), 0);
    assert_int_equal(strlen(printed), plen);
    char *copy = strdup(printed);
    assert_non_null(copy);
    mem_free(m, printed);
    cypher_ast_free(&ast);
    assert_null(ast);
    return copy;
}

static void check_parse(mem_ctx *m, const char *query, const char *expected)
{
    cypher_error err;
    char *got = parse_to_string(m, query, strlen(query), &err);
    if (!got)
        fail_msg("%s\n  failed: %s %s at %u:%u: %s", query, err.category,
                 err.detail ? err.detail : "-", err.line, err.column, err.message);
    if (strcmp(got, expected) != 0)
        printf("query: %s\n", query);
    assert_string_equal(got, expected);
    free(got);
}

struct parse_case {
    const char *query;
    const char *expected;
};

static void check_cases(mem_ctx *m, const struct parse_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_parse(m, cases[i].query, cases[i].expected);
}

struct error_case {
    const char *query;
    const char *detail;        /* NULL: none */
    unsigned line, column;
    const char *message;       /* a fragment of it */
};

static void check_error(mem_ctx *m, const struct error_case *c)
{
    cypher_error err;
    char *got = parse_to_string(m, c->query, strlen(c->query), &err);
    if (got)
        fail_msg("%s\n  parsed as %s", c->query, got);
    if (strcmp(err.category, "SyntaxError") != 0 ||
        (c->detail ? !err.detail || strcmp(err.detail, c->detail) != 0 : err.detail != NULL) ||
        err.line != c->line || err.column != c->column || !strstr(err.message, c->message))
        fail_msg("%s\n  got %s %s at %u:%u: %s\n  want %s at %u:%u: ...%s...", c->query,
                 err.category, err.detail ? err.detail : "-", err.line, err.column, err.message,
                 c->detail ? c->detail : "-", c->line, c->column, c->message);
}

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- lexer ---------------------------------------------------------------------- */

struct tok_expect {
    cypher_tok_kind kind;
    unsigned line, column;
    const char *text;          /* decoded text (IDENT, STRING, PARAM), or NULL */
};

static void check_tokens(const char *query, const struct tok_expect *want, size_t n)
{
    cypher_lexer lx;
    cypher_lex_init(&lx, query, strlen(query));
    for (size_t i = 0; i < n; i++) {
        cypher_token t;
        cypher_lex_next(&lx, &t);
        if (t.kind != want[i].kind || t.line != want[i].line || t.column != want[i].column)
            fail_msg("%s: token %zu is %s at %u:%u, want %s at %u:%u", query, i,
                     cypher_lex_kind_name(t.kind), t.line, t.column,
                     cypher_lex_kind_name(want[i].kind), want[i].line, want[i].column);
        assert_true(t.offset + t.len <= strlen(query));
        if (want[i].text) {
            char buf[256];
            assert_true(t.len < sizeof buf);
            size_t len = cypher_lex_text(query, &t, buf);
            assert_true(len <= t.len);
            buf[len] = '\0';
            assert_string_equal(buf, want[i].text);
        }
    }
}

static void test_lexer_tokens(void **state)
{
    (void)state;
    const struct tok_expect want[] = {
        {CYPHER_TOK_IDENT, 1, 1, "MATCH"},   {CYPHER_TOK_LPAREN, 1, 7, NULL},
        {CYPHER_TOK_IDENT, 1, 8, "n"},       {CYPHER_TOK_RPAREN, 1, 9, NULL},
        {CYPHER_TOK_LT, 1, 10, NULL},        {CYPHER_TOK_MINUS, 1, 11, NULL},
        {CYPHER_TOK_MINUS, 1, 12, NULL},     {CYPHER_TOK_GT, 1, 13, NULL},
        {CYPHER_TOK_LPAREN, 1, 14, NULL},    {CYPHER_TOK_RPAREN, 1, 15, NULL},
        {CYPHER_TOK_IDENT, 2, 1, "WHERE"},   {CYPHER_TOK_IDENT, 2, 7, "n"},
        {CYPHER_TOK_DOT, 2, 8, NULL},        {CYPHER_TOK_IDENT, 2, 9, "x"},
        {CYPHER_TOK_NE, 2, 11, NULL},        {CYPHER_TOK_FLOAT, 2, 14, NULL},
        {CYPHER_TOK_IDENT, 2, 20, "AND"},    {CYPHER_TOK_IDENT, 2, 24, "a b`c"},
        {CYPHER_TOK_REGEX, 2, 33, NULL},     {CYPHER_TOK_STRING, 2, 36, "x\"y"},
        {CYPHER_TOK_IDENT, 5, 3, "RETURN"},  {CYPHER_TOK_PARAM, 5, 10, "p"},
        {CYPHER_TOK_COMMA, 5, 12, NULL},     {CYPHER_TOK_PARAM, 5, 14, "0"},
        {CYPHER_TOK_COMMA, 5, 16, NULL},     {CYPHER_TOK_PARAM, 5, 18, "a b"},
        {CYPHER_TOK_PLUSEQ, 5, 25, NULL},    {CYPHER_TOK_LE, 5, 28, NULL},
        {CYPHER_TOK_GE, 5, 31, NULL},        {CYPHER_TOK_DOTDOT, 5, 34, NULL},
        {CYPHER_TOK_PIPE, 5, 37, NULL},      {CYPHER_TOK_CARET, 5, 38, NULL},
        {CYPHER_TOK_PERCENT, 5, 39, NULL},   {CYPHER_TOK_SLASH, 5, 40, NULL},
        {CYPHER_TOK_STAR, 5, 42, NULL},      {CYPHER_TOK_COLON, 5, 43, NULL},
        {CYPHER_TOK_SEMICOLON, 5, 44, NULL}, {CYPHER_TOK_LBRACE, 5, 45, NULL},
        {CYPHER_TOK_RBRACE, 5, 46, NULL},    {CYPHER_TOK_LBRACKET, 5, 47, NULL},
        {CYPHER_TOK_RBRACKET, 5, 48, NULL},  {CYPHER_TOK_PLUS, 5, 49, NULL},
        {CYPHER_TOK_EQ, 5, 51, NULL},        {CYPHER_TOK_EOF, 5, 52, NULL},
        {CYPHER_TOK_EOF, 5, 52, NULL},
    };
    check_tokens("MATCH (n)<-->()\n"
                 "WHERE n.x <> 1.5e3 AND `a b``c` =~ \"x\\\"y\" // to the end\n"
                 "/* a block\n   comment */ \r\n"
                 "  RETURN $p, $0, $`a b` += <= >= .. |^%/ *:;{}[]+ =",
                 want, COUNT_OF(want));
}

static void test_lexer_keywords(void **state)
{
    (void)state;
    static const struct { const char *text; cypher_kw kw; bool quoted; } words[] = {
        {"match", CYPHER_KW_MATCH, false},   {"MaTcH", CYPHER_KW_MATCH, false},
        {"`match`", CYPHER_KW_IDENTIFIER, true}, {"matches", CYPHER_KW_IDENTIFIER, false},
        {"shortestPath", CYPHER_KW_SHORTESTPATH, false}, {"_x1", CYPHER_KW_IDENTIFIER, false},
        {"café", CYPHER_KW_IDENTIFIER, false}, {"fieldTerminator", CYPHER_KW_FIELDTERMINATOR, false},
    };
    for (size_t i = 0; i < COUNT_OF(words); i++) {
        cypher_lexer lx;
        cypher_token t;
        cypher_lex_init(&lx, words[i].text, strlen(words[i].text));
        cypher_lex_next(&lx, &t);
        assert_int_equal(t.kind, CYPHER_TOK_IDENT);
        assert_int_equal(t.kw, words[i].kw);
        assert_int_equal(t.quoted, words[i].quoted);
        assert_int_equal(t.len, strlen(words[i].text));
        cypher_lex_next(&lx, &t);
        assert_int_equal(t.kind, CYPHER_TOK_EOF);
    }
    assert_string_equal(cypher_lex_kw_name(CYPHER_KW_OPTIONAL), "OPTIONAL");
    assert_true(cypher_lex_kw_reserved(CYPHER_KW_RETURN));
    assert_false(cypher_lex_kw_reserved(CYPHER_KW_COUNT));
    assert_string_equal(cypher_lex_kind_name(CYPHER_TOK_REGEX), "=~");
}

static void test_lexer_strings(void **state)
{
    (void)state;
    static const struct { const char *literal, *decoded; } strings[] = {
        {"'plain'", "plain"},
        {"\"double\"", "double"},
        {"'it\\'s'", "it's"},
        {"\"a\\\"b\"", "a\"b"},
        {"'\\\\ \\b\\f\\n\\r\\t'", "\\ \b\f\n\r\t"},
        {"'\\u00e9\\u20AC'", "\xc3\xa9\xe2\x82\xac"},
        {"'\\U0001F600'", "\xf0\x9f\x98\x80"},
        {"'\\uD83D\\uDE00'", "\xf0\x9f\x98\x80"},
        {"'new\nline'", "new\nline"},
        {"'\xc3\xa9t\xc3\xa9'", "\xc3\xa9t\xc3\xa9"},
        {"''", ""},
    };
    for (size_t i = 0; i < COUNT_OF(strings); i++) {
        cypher_lexer lx;
        cypher_token t;
        char buf[64];
        cypher_lex_init(&lx, strings[i].literal, strlen(strings[i].literal));
        cypher_lex_next(&lx, &t);
        if (t.kind != CYPHER_TOK_STRING)
            fail_msg("%s: %s", strings[i].literal, t.message ? t.message : "not a string");
        size_t n = cypher_lex_text(strings[i].literal, &t, buf);
        assert_true(n <= t.len);
        assert_int_equal(n, strlen(strings[i].decoded));
        assert_memory_equal(buf, strings[i].decoded, n);
    }
}

static void test_lexer_numbers(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        cypher_tok_kind kind;
        uint64_t magnitude;
        double real;
        bool big;
    } numbers[] = {
        {"0", CYPHER_TOK_INTEGER, 0, 0, false},
        {"42", CYPHER_TOK_INTEGER, 42, 0, false},
        {"017", CYPHER_TOK_INTEGER, 17, 0, false},
        {"0x1F", CYPHER_TOK_INTEGER, 31, 0, false},
        {"0XfF", CYPHER_TOK_INTEGER, 255, 0, false},
        {"0o17", CYPHER_TOK_INTEGER, 15, 0, false},
        {"9223372036854775807", CYPHER_TOK_INTEGER, 9223372036854775807ULL, 0, false},
        {"9223372036854775808", CYPHER_TOK_INTEGER, 9223372036854775808ULL, 0, true},
        {"0x8000000000000000", CYPHER_TOK_INTEGER, 9223372036854775808ULL, 0, true},
        {"0o1000000000000000000000", CYPHER_TOK_INTEGER, 9223372036854775808ULL, 0, true},
        {"1.5", CYPHER_TOK_FLOAT, 0, 1.5, false},
        {".5", CYPHER_TOK_FLOAT, 0, 0.5, false},
        {"1e3", CYPHER_TOK_FLOAT, 0, 1000.0, false},
        {"1E-3", CYPHER_TOK_FLOAT, 0, 0.001, false},
        {"2.5e+2", CYPHER_TOK_FLOAT, 0, 250.0, false},
        {"0.1", CYPHER_TOK_FLOAT, 0, 0.1, false},
        {"1.7976931348623157e308", CYPHER_TOK_FLOAT, 0, 1.7976931348623157e308, false},
        {"1e-400", CYPHER_TOK_FLOAT, 0, 0.0, false},
    };
    for (size_t i = 0; i < COUNT_OF(numbers); i++) {
        cypher_lexer lx;
        cypher_token t;
        cypher_lex_init(&lx, numbers[i].text, strlen(numbers[i].text));
        cypher_lex_next(&lx, &t);
        if (t.kind != numbers[i].kind)
            fail_msg("%s: %s", numbers[i].text, t.message ? t.message : cypher_lex_kind_name(t.kind));
        assert_int_equal(t.len, strlen(numbers[i].text));
        if (t.kind == CYPHER_TOK_INTEGER) {
            assert_true(t.u.magnitude == numbers[i].magnitude);
            assert_int_equal(t.big, numbers[i].big);
        } else {
            assert_true(t.u.real == numbers[i].real);
        }
    }
    /* 1..3 is a range, not a float */
    const struct tok_expect range[] = {
        {CYPHER_TOK_STAR, 1, 1, NULL},    {CYPHER_TOK_INTEGER, 1, 2, NULL},
        {CYPHER_TOK_DOTDOT, 1, 3, NULL},  {CYPHER_TOK_INTEGER, 1, 5, NULL},
        {CYPHER_TOK_EOF, 1, 6, NULL},
    };
    check_tokens("*1..3", range, COUNT_OF(range));
    /* a long literal converts exactly: 0.1 written with 400 trailing zeros */
    char longf[512] = "0.1";
    memset(longf + 3, '0', 400);
    longf[403] = '\0';
    cypher_lexer lx;
    cypher_token t;
    cypher_lex_init(&lx, longf, strlen(longf));
    cypher_lex_next(&lx, &t);
    assert_int_equal(t.kind, CYPHER_TOK_FLOAT);
    assert_true(t.u.real == 0.1);
}

static void test_lexer_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *detail;
        unsigned column;
    } bad[] = {
        {"'abc", "UnexpectedSyntax", 1},
        {"x 'ab\\", "UnexpectedSyntax", 3},
        {"'\\uZZZZ'", "InvalidUnicodeLiteral", 2},
        {"'\\u12'", "InvalidUnicodeLiteral", 2},
        {"'\\U00110000'", "InvalidUnicodeLiteral", 2},
        {"'\\uDC00'", "InvalidUnicodeLiteral", 2},
        {"'\\x'", "UnexpectedSyntax", 2},
        {"'\xff'", "InvalidUnicodeCharacter", 2},
        {"'\xc0\xaf'", "InvalidUnicodeCharacter", 2},
        {"9223372036854775809", "IntegerOverflow", 1},
        {"0xFFFFFFFFFFFFFFFFF", "IntegerOverflow", 1},
        {"99999999999999999999999", "IntegerOverflow", 1},
        {"0x", "InvalidNumberLiteral", 1},
        {"0o9", "InvalidNumberLiteral", 1},
        {"12abc", "InvalidNumberLiteral", 1},
        {"1e", "InvalidNumberLiteral", 1},
        {"1.5e+", "InvalidNumberLiteral", 1},
        {"1e999", "FloatingPointOverflow", 1},
        {"  #", "UnexpectedSyntax", 3},
        {"a != b", "UnexpectedSyntax", 3},
        {"/* open", "UnexpectedSyntax", 1},
        {"`open", "UnexpectedSyntax", 1},
        {"``", "UnexpectedSyntax", 1},
        {"$", "UnexpectedSyntax", 1},
        {"$1a", "UnexpectedSyntax", 1},
        {"a \xe2\x80\x94 b", "InvalidUnicodeCharacter", 3},
        {"\xe2\x82", "InvalidUnicodeCharacter", 1},
    };
    for (size_t i = 0; i < COUNT_OF(bad); i++) {
        cypher_lexer lx;
        cypher_token t;
        cypher_lex_init(&lx, bad[i].text, strlen(bad[i].text));
        do
            cypher_lex_next(&lx, &t);
        while (t.kind != CYPHER_TOK_ERROR && t.kind != CYPHER_TOK_EOF);
        if (t.kind != CYPHER_TOK_ERROR)
            fail_msg("%s: no error", bad[i].text);
        assert_non_null(t.message);
        if (strcmp(t.detail, bad[i].detail) != 0 || t.column != bad[i].column)
            fail_msg("%s: %s at column %u (%s), want %s at %u", bad[i].text, t.detail, t.column,
                     t.message, bad[i].detail, bad[i].column);
        /* the error sticks */
        cypher_token again;
        cypher_lex_next(&lx, &again);
        assert_int_equal(again.kind, CYPHER_TOK_ERROR);
        assert_int_equal(again.offset, t.offset);
    }
}

/* Unicode white space separates tokens; columns count code points. */
static void test_lexer_unicode(void **state)
{
    (void)state;
    const struct tok_expect want[] = {
        {CYPHER_TOK_IDENT, 1, 1, "RETURN"}, {CYPHER_TOK_STRING, 1, 8, "\xc3\xa9\xf0\x9f\x98\x80"},
        {CYPHER_TOK_COMMA, 1, 12, NULL},    {CYPHER_TOK_IDENT, 1, 14, "caf\xc3\xa9"},
        {CYPHER_TOK_IDENT, 1, 19, "x"},     {CYPHER_TOK_IDENT, 1, 21, "y"},
        {CYPHER_TOK_EOF, 1, 22, NULL},
    };
    /* U+00A0 (no-break space) and U+3000 (ideographic space) between words */
    check_tokens("RETURN '\xc3\xa9\xf0\x9f\x98\x80', caf\xc3\xa9\xc2\xa0x\xe3\x80\x80y", want,
                 COUNT_OF(want));
}

/* ---- parsing: constructs ------------------------------------------------------------ */

static const struct parse_case construct_cases[] = {
    {"MATCH (n) RETURN n",
     "(query (match (path (node n))) (return n))"},
    {"OPTIONAL MATCH (n:A:B {x: 1}) WHERE n.y = 2 RETURN n",
     "(query (optional-match (path (node n :A :B (map (x 1)))) (where (= (prop n y) 2))) (return n))"},
    {"MATCH (a), (b) RETURN *",
     "(query (match (path (node a)) (path (node b))) (return *))"},
    {"MATCH p = (a)-->(b) RETURN p",
     "(query (match (= p (path (node a) (rel ->) (node b)))) (return p))"},
    {"UNWIND [1, 2] AS x RETURN x",
     "(query (unwind (list 1 2) x) (return x))"},
    {"MATCH (a) WITH DISTINCT a, a.b AS c ORDER BY a ASC, c DESC SKIP 1 LIMIT 2 WHERE c > 1 RETURN a",
     "(query (match (path (node a))) (with distinct a (as (prop a b) c) (order-by (asc a) (desc c)) (skip 1) (limit 2) (where (> c 1))) (return a))"},
    {"MATCH (a) RETURN *, a.x AS y",
     "(query (match (path (node a))) (return * (as (prop a x) y)))"},
    {"RETURN x ORDER BY x ASCENDING, y DESCENDING, z",
     "(query (return x (order-by (asc x) (desc y) (asc z))))"},
    {"CREATE (a:A {x: 1})-[:R {w: 2}]->(b), (c)",
     "(query (create (path (node a :A (map (x 1))) (rel -> :R (map (w 2))) (node b)) (path (node c))))"},
    {"CREATE (n $props)",
     "(query (create (path (node n $props))))"},
    {"MERGE (n:A {x: 1}) ON CREATE SET n.created = true ON MATCH SET n.seen = n.seen + 1",
     "(query (merge (path (node n :A (map (x 1)))) (on-create (set-property (prop n created) true)) (on-match (set-property (prop n seen) (+ (prop n seen) 1)))))"},
    {"MERGE (a)-[r:R]->(b) RETURN r",
     "(query (merge (path (node a) (rel -> r :R) (node b))) (return r))"},
    {"MATCH (n) SET n.x = 1, n = {a: 1}, n += {b: 2}, n:A:B",
     "(query (match (path (node n))) (set (set-property (prop n x) 1) (set-all n (map (a 1))) (set-merge n (map (b 2))) (set-labels n :A :B)))"},
    {"MATCH (n) SET n.a.b = 1, (n).c = 2",
     "(query (match (path (node n))) (set (set-property (prop (prop n a) b) 1) (set-property (prop n c) 2)))"},
    {"MATCH (n) REMOVE n.x, n:A:B",
     "(query (match (path (node n))) (remove (remove-property (prop n x)) (remove-labels n :A :B)))"},
    {"MATCH (n) DELETE n",
     "(query (match (path (node n))) (delete n))"},
    {"MATCH (n), (m) DETACH DELETE n, m",
     "(query (match (path (node n)) (path (node m))) (detach-delete n m))"},
    {"CALL db.labels()",
     "(query (call db.labels (args)))"},
    {"CALL db.labels",
     "(query (call db.labels))"},
    {"CALL db.labels() YIELD label",
     "(query (call db.labels (args) (yield label)))"},
    {"CALL db.labels() YIELD label AS l WHERE l <> 'x' RETURN l",
     "(query (call db.labels (args) (yield (as label l)) (where (<> l \"x\"))) (return l))"},
    {"CALL test.proc(1, 'a') YIELD *",
     "(query (call test.proc (args 1 \"a\") (yield *)))"},
    {"CALL test.proc(1) YIELD a, b AS c",
     "(query (call test.proc (args 1) (yield a (as b c))))"},
    {"LOAD CSV FROM 'file:///a.csv' AS row RETURN row",
     "(query (load-csv \"file:///a.csv\" row) (return row))"},
    {"LOAD CSV WITH HEADERS FROM $url AS row FIELDTERMINATOR '\\t' CREATE (:R {v: row.v})",
     "(query (load-csv with-headers $url row (fieldterminator \"\\t\")) (create (path (node :R (map (v (prop row v)))))))"},
    {"RETURN 1 AS x UNION RETURN 2 AS x",
     "(union (query (return (as 1 x))) (query (return (as 2 x))))"},
    {"RETURN 1 AS x UNION ALL RETURN 2 AS x UNION ALL RETURN 3 AS x",
     "(union-all (query (return (as 1 x))) (query (return (as 2 x))) (query (return (as 3 x))))"},
    {"EXPLAIN MATCH (n) RETURN n",
     "(explain (query (match (path (node n))) (return n)))"},
    {"PROFILE RETURN 1",
     "(profile (query (return 1)))"},
    {"MATCH (a) CREATE (b) WITH a MATCH (c) RETURN c",
     "(query (match (path (node a))) (create (path (node b))) (with a) (match (path (node c))) (return c))"},
    {"MATCH (n) SET n.x = 1 RETURN n",
     "(query (match (path (node n))) (set (set-property (prop n x) 1)) (return n))"},
    {"match (n) WhErE n.x Is NoT nUlL return N",
     "(query (match (path (node n)) (where (is-not-null (prop n x)))) (return N))"},
    {"RETURN 1;",
     "(query (return 1))"},
    {"CREATE INDEX FOR (n:Person) ON (n.name)",
     "(create-index (node n :Person) (prop n name))"},
    {"CREATE INDEX person_name FOR (n:Person) ON (n.name)",
     "(create-index (name person_name) (node n :Person) (prop n name))"},
    {"CREATE RANGE INDEX IF NOT EXISTS FOR ()-[r:KNOWS]-() ON (r.since)",
     "(create-index if-not-exists range (rel -- r :KNOWS) (prop r since))"},
    {"CREATE INDEX idx IF NOT EXISTS FOR (n:L) ON (n.a, n.b)",
     "(create-index (name idx) if-not-exists (node n :L) (prop n a) (prop n b))"},
    {"DROP INDEX person_name",
     "(drop-index (name person_name))"},
    {"DROP INDEX person_name IF EXISTS",
     "(drop-index (name person_name) if-exists)"},
    {"CREATE CONSTRAINT uniq FOR (n:L) REQUIRE n.p IS UNIQUE",
     "(create-constraint (name uniq) (node n :L) (prop n p))"},
    {"CREATE CONSTRAINT IF NOT EXISTS FOR (n:L) REQUIRE (n.a, n.b) IS UNIQUE",
     "(create-constraint if-not-exists (node n :L) (prop n a) (prop n b))"},
    {"CREATE CONSTRAINT ON (n:L) ASSERT n.p IS UNIQUE",
     "(create-constraint (node n :L) (prop n p))"},
    {"DROP CONSTRAINT uniq IF EXISTS",
     "(drop-constraint (name uniq) if-exists)"},
    {"EXPLAIN CREATE INDEX FOR (n:L) ON (n.p)",
     "(explain (create-index (node n :L) (prop n p)))"},
    {"MATCH (a)-->(b), (a)<--(b), (a)--(b), (a)<-->(b) RETURN a",
     "(query (match (path (node a) (rel ->) (node b)) (path (node a) (rel <-) (node b)) (path (node a) (rel --) (node b)) (path (node a) (rel <->) (node b))) (return a))"},
    {"MATCH (a)-[r]->(b)-[:A|B]->(c)<-[:A|:B]-(d) RETURN a",
     "(query (match (path (node a) (rel -> r) (node b) (rel -> :A|B) (node c) (rel <- :A|B) (node d))) (return a))"},
    {"MATCH (a)-[r:A|B*]->(b) RETURN a",
     "(query (match (path (node a) (rel -> r :A|B *) (node b))) (return a))"},
    {"MATCH (a)-[*2]->(b)-[*1..3]->(c)-[*..3]->(d)-[*2..]->(e)-[*0..]-(f) RETURN a",
     "(query (match (path (node a) (rel -> *2..2) (node b) (rel -> *1..3) (node c) (rel -> *..3) (node d) (rel -> *2..) (node e) (rel -- *0..) (node f))) (return a))"},
    {"MATCH (a)-[r {w: 1}]-(b)-[:T*1..2 {w: 2}]-(c) RETURN a",
     "(query (match (path (node a) (rel -- r (map (w 1))) (node b) (rel -- :T *1..2 (map (w 2))) (node c))) (return a))"},
    {"MATCH p = allShortestPaths((a)-[:R*..5]->(b)) RETURN p",
     "(query (match (= p (allShortestPaths (path (node a) (rel -> :R *..5) (node b))))) (return p))"},
    {"MATCH p = shortestPath((a)-[*]-(b)), q = (c) RETURN p",
     "(query (match (= p (shortestPath (path (node a) (rel -- *) (node b)))) (= q (path (node c)))) (return p))"},
    {"MATCH ((a)-->(b)) RETURN a",
     "(query (match (path (node a) (rel ->) (node b))) (return a))"},
    {"MATCH (`my var`:`My Label`)-[`a rel`:`TYPE 1`]->() RETURN `my var`",
     "(query (match (path (node `my var` :`My Label`) (rel -> `a rel` :`TYPE 1`) (node))) (return `my var`))"},
    {"RETURN null, true, FALSE, 0, 42, -7, 0x1F, 0o17, 1.5, .5, 1e3, -2.5e-3, 'str', \"dq\"",
     "(query (return null true false 0 42 -7 31 15 1.5 0.5 1e+03 -0.0025 \"str\" \"dq\"))"},
    {"RETURN 9223372036854775807, -9223372036854775808, -0x8000000000000000, -0o1000000000000000000000, 1.0E308, 0.1",
     "(query (return 9223372036854775807 -9223372036854775808 -9223372036854775808 -9223372036854775808 1e+308 0.1))"},
    {"RETURN 'a\\'b', \"a\\\"b\\\\c\\n\", '\\u00e9\\U0001F600', \"\\uD83D\\uDE00\", 'tab\\there'",
     "(query (return \"a'b\" \"a\\\"b\\\\c\\n\" \"é😀\" \"😀\" \"tab\\there\"))"},
    {"RETURN $p, $0, $`a b`",
     "(query (return $p $0 $`a b`))"},
    {"RETURN [1, [2, 3], []], {}, {a: 1, b: {c: [2]}, `d e`: 3, order: 4, END: 5}",
     "(query (return (list 1 (list 2 3) (list)) (map) (map (a 1) (b (map (c (list 2)))) (`d e` 3) (order 4) (END 5))))"},
    {"RETURN a.b.c, a[0][1], a[1..2], a[..2], a[1..], n:A:B",
     "(query (return (prop (prop a b) c) (index (index a 0) 1) (slice a 1 2) (slice a _ 2) (slice a 1 _) (has-labels n :A :B)))"},
    {"RETURN toUpper(x), db.labels(), count(DISTINCT x), count(*), exists(n.prop), exists((n)-->()), date.truncate('day', d)",
     "(query (return (fn toUpper x) (fn db.labels) (fn count distinct x) (count-star) (fn exists (prop n prop)) (fn exists (path (node n) (rel ->) (node))) (fn date.truncate \"day\" d)))"},
    {"RETURN CASE x WHEN 1 THEN 'a' WHEN 2 THEN 'b' ELSE 'c' END, CASE WHEN a > 1 THEN 1 END",
     "(query (return (case x (when 1 \"a\") (when 2 \"b\") (else \"c\")) (case (when (> a 1) 1))))"},
    {"RETURN [x IN l], [x IN l WHERE x > 1], [x IN l | x * 2], [x IN l WHERE x > 1 | x * 2]",
     "(query (return (list-comp x l) (list-comp x l (where (> x 1))) (list-comp x l (| (* x 2))) (list-comp x l (where (> x 1)) (| (* x 2)))))"},
    {"RETURN [(a)-->(b) | b], [p = (a)-[:R]->(b) WHERE b.x > 1 | p]",
     "(query (return (pattern-comp (path (node a) (rel ->) (node b)) (| b)) (pattern-comp (= p (path (node a) (rel -> :R) (node b))) (where (> (prop b x) 1)) (| p))))"},
    {"RETURN all(x IN l WHERE x > 0), any(x IN l WHERE x), none(x IN l WHERE x), single(x IN l WHERE x)",
     "(query (return (all x l (where (> x 0))) (any x l (where x)) (none x l (where x)) (single x l (where x))))"},
    {"RETURN reduce(acc = 0, x IN [1, 2, 3] | acc + x) AS sum",
     "(query (return (as (reduce acc 0 x (list 1 2 3) (+ acc x)) sum)))"},
    {"MATCH (n) WHERE EXISTS { MATCH (n)-->(m) WITH m WHERE m.x > 1 RETURN m } RETURN n",
     "(query (match (path (node n)) (where (exists (query (match (path (node n) (rel ->) (node m))) (with m (where (> (prop m x) 1))) (return m))))) (return n))"},
    {"MATCH (n) WHERE exists { (n)-[:R]->(m) WHERE m.x } RETURN n",
     "(query (match (path (node n)) (where (exists (query (match (path (node n) (rel -> :R) (node m)) (where (prop m x))))))) (return n))"},
    {"RETURN n {.a, .*, b: 1, c}, n {}",
     "(query (return (map-proj n .a .* (b 1) c) (map-proj n)))"},
    {"RETURN a IS NULL, a IS NOT NULL, a STARTS WITH 'x', a ENDS WITH 'y', a CONTAINS 'z', a IN [1], a =~ 'r.*'",
     "(query (return (is-null a) (is-not-null a) (starts-with a \"x\") (ends-with a \"y\") (contains a \"z\") (in a (list 1)) (=~ a \"r.*\")))"},
    {"MATCH (n) WHERE (n)-[:R]->(:L) AND NOT (n)<--() RETURN n",
     "(query (match (path (node n)) (where (and (path (node n) (rel -> :R) (node :L)) (not (path (node n) (rel <-) (node)))))) (return n))"},
    {"RETURN shortestPath((a)-[*]-(b)) AS p",
     "(query (return (as (shortestPath (path (node a) (rel -- *) (node b))) p)))"},
    {"RETURN -x, +x, -(-1), - -1, -n.x",
     "(query (return (neg x) (pos x) (neg -1) (neg -1) (neg (prop n x))))"},
    {"RETURN a < b < c, a = b <> c, a <= b >= c > d",
     "(query (return (chain a < b < c) (chain a = b <> c) (chain a <= b >= c > d)))"},
    {"MATCH (n) WHERE n.name STARTS WITH 'A' OR n.age >= 30 XOR NOT n.flag RETURN n.name AS name, count(*) AS c",
     "(query (match (path (node n)) (where (or (starts-with (prop n name) \"A\") (xor (>= (prop n age) 30) (not (prop n flag)))))) (return (as (prop n name) name) (as (count-star) c)))"},
    {"RETURN `true`, `_`, `null`",
     "(query (return `true` `_` `null`))"},
};

static const struct parse_case precedence_cases[] = {
    {"RETURN 1 + 2 * 3",
     "(query (return (+ 1 (* 2 3))))"},
    {"RETURN 1 * 2 + 3",
     "(query (return (+ (* 1 2) 3)))"},
    {"RETURN 1 - 2 - 3",
     "(query (return (- (- 1 2) 3)))"},
    {"RETURN 8 / 4 / 2",
     "(query (return (/ (/ 8 4) 2)))"},
    {"RETURN 1 + 2 % 3 * 4",
     "(query (return (+ 1 (* (% 2 3) 4))))"},
    {"RETURN 2 ^ 3 ^ 2",
     "(query (return (^ (^ 2 3) 2)))"},
    {"RETURN 2 * 3 ^ 2",
     "(query (return (* 2 (^ 3 2))))"},
    {"RETURN -2 ^ 2",
     "(query (return (^ -2 2)))"},
    {"RETURN -x ^ 2",
     "(query (return (^ (neg x) 2)))"},
    {"RETURN 2 * -3",
     "(query (return (* 2 -3)))"},
    {"RETURN 2 ^ -x",
     "(query (return (^ 2 (neg x))))"},
    {"RETURN a OR b AND c",
     "(query (return (or a (and b c))))"},
    {"RETURN a AND b OR c",
     "(query (return (or (and a b) c)))"},
    {"RETURN a XOR b OR c",
     "(query (return (or (xor a b) c)))"},
    {"RETURN a OR b XOR c",
     "(query (return (or a (xor b c))))"},
    {"RETURN a AND b XOR c",
     "(query (return (xor (and a b) c)))"},
    {"RETURN NOT a AND b",
     "(query (return (and (not a) b)))"},
    {"RETURN NOT a = b",
     "(query (return (not (= a b))))"},
    {"RETURN NOT NOT a",
     "(query (return (not (not a))))"},
    {"RETURN a = b AND c",
     "(query (return (and (= a b) c)))"},
    {"RETURN a + b < c * d",
     "(query (return (< (+ a b) (* c d))))"},
    {"RETURN a <> b OR c >= d",
     "(query (return (or (<> a b) (>= c d))))"},
    {"RETURN a IN b + c",
     "(query (return (in a (+ b c))))"},
    {"RETURN [1] + 2 IN [3] + 4",
     "(query (return (in (+ (list 1) 2) (+ (list 3) 4))))"},
    {"RETURN a IN b IN c",
     "(query (return (in (in a b) c)))"},
    {"RETURN x IS NULL = y IS NOT NULL",
     "(query (return (= (is-null x) (is-not-null y))))"},
    {"RETURN NOT x IS NULL",
     "(query (return (not (is-null x))))"},
    {"RETURN a + b IS NULL",
     "(query (return (is-null (+ a b))))"},
    {"RETURN 1 < 2 IS NULL",
     "(query (return (< 1 (is-null 2))))"},
    {"RETURN 'abc' STARTS WITH null OR true",
     "(query (return (or (starts-with \"abc\" null) true)))"},
    {"RETURN a =~ 'x' AND b",
     "(query (return (and (=~ a \"x\") b)))"},
    {"RETURN a CONTAINS b ENDS WITH c",
     "(query (return (ends-with (contains a b) c)))"},
    {"RETURN n.a.b[0].c",
     "(query (return (prop (index (prop (prop n a) b) 0) c)))"},
    {"RETURN -n.x",
     "(query (return (neg (prop n x))))"},
    {"RETURN n:A AND m:B",
     "(query (return (and (has-labels n :A) (has-labels m :B))))"},
    {"RETURN a.x:L",
     "(query (return (has-labels (prop a x) :L)))"},
    {"RETURN l[1..2][0]",
     "(query (return (index (slice l 1 2) 0)))"},
    {"RETURN (1 + 2) * 3",
     "(query (return (* (+ 1 2) 3)))"},
    {"RETURN a OR b OR c",
     "(query (return (or (or a b) c)))"},
    {"RETURN a < b AND b < c",
     "(query (return (and (< a b) (< b c))))"},
    {"RETURN NOT a < b < c",
     "(query (return (not (chain a < b < c))))"},
    {"RETURN -1 - -1",
     "(query (return (- -1 -1)))"},
    {"RETURN x[0] IS NULL",
     "(query (return (is-null (index x 0))))"},
};


static void test_constructs(void **state)
{
    check_cases(*state, construct_cases, COUNT_OF(construct_cases));
}

static void test_precedence(void **state)
{
    check_cases(*state, precedence_cases, COUNT_OF(precedence_cases));
}

/* The source text of each projection item, the column name of an
   unaliased one. */
static void test_item_text(void **state)
{
    mem_ctx *m = *state;
    const char *q = "MATCH (n) RETURN n.name, count( * ),\n  n.x + 1 AS y";
    cypher_ast *ast;
    cypher_error err;
    assert_int_equal(cypher_parse(q, strlen(q), m, &ast, &err), 0);
    const cypher_ast_node *root = cypher_ast_root(ast);
    assert_int_equal(root->kind, CYPHER_AST_STATEMENT);
    const cypher_ast_node *query = root->u.statement.body;
    assert_int_equal(query->kind, CYPHER_AST_QUERY);
    assert_int_equal(query->u.list.count, 2);
    const cypher_ast_node *ret = query->u.list.items[1];
    assert_int_equal(ret->kind, CYPHER_AST_RETURN);
    static const char *const texts[] = {"n.name", "count( * )", "n.x + 1"};
    assert_int_equal(ret->u.projection.items.count, 3);
    for (size_t i = 0; i < 3; i++) {
        const cypher_ast_node *item = ret->u.projection.items.items[i];
        assert_int_equal(item->kind, CYPHER_AST_PROJECTION_ITEM);
        assert_string_equal(item->u.alias.text.ptr, texts[i]);
    }
    const cypher_ast_node *last = ret->u.projection.items.items[2];
    assert_int_equal(last->line, 2);
    assert_int_equal(last->column, 3);
    assert_int_equal(last->offset, 39);
    assert_string_equal(last->u.alias.alias->u.name.ptr, "y");
    cypher_ast_free(&ast);
}

/* Positions: every node carries where its text starts. */
static void test_positions(void **state)
{
    mem_ctx *m = *state;
    const char *q = "MATCH (a)-[r:T]->(b)\nWHERE a.x = 1\nRETURN b";
    cypher_ast *ast;
    cypher_error err;
    assert_int_equal(cypher_parse(q, strlen(q), m, &ast, &err), 0);
    const cypher_ast_node *query = cypher_ast_root(ast)->u.statement.body;
    const cypher_ast_node *match = query->u.list.items[0];
    const cypher_ast_node *path = match->u.match.parts.items[0]->u.part.path;
    const cypher_ast_node *rel = path->u.list.items[1];
    assert_int_equal(rel->kind, CYPHER_AST_REL);
    assert_int_equal(rel->column, 10);
    assert_int_equal(rel->u.rel.variable->column, 12);
    assert_int_equal(rel->u.rel.types.items[0]->column, 14);
    const cypher_ast_node *where = match->u.match.where;
    assert_int_equal(where->kind, CYPHER_AST_BINARY);
    assert_int_equal(where->line, 2);
    assert_int_equal(where->column, 7);
    assert_int_equal(where->u.binary.rhs->column, 13);
    const cypher_ast_node *ret = query->u.list.items[1];
    assert_int_equal(ret->line, 3);
    assert_int_equal(ret->column, 1);
    assert_int_equal(ret->offset, 35);
    cypher_ast_free(&ast);
}

static int count_nodes(const cypher_ast_node *n, void *ctx)
{
    (*(size_t *)ctx)++;
    return cypher_ast_each_child(n, count_nodes, ctx);
}

static void test_traversal(void **state)
{
    mem_ctx *m = *state;
    const char *q = "MATCH (a:L {x: 1}) RETURN a.x + 2 AS y";
    cypher_ast *ast;
    cypher_error err;
    assert_int_equal(cypher_parse(q, strlen(q), m, &ast, &err), 0);
    size_t n = 0;
    count_nodes(cypher_ast_root(ast), &n);
    /* statement query match part path node a :L map entry 1 return item + . a 2 y */
    assert_int_equal(n, 18);
    assert_string_equal(cypher_ast_kind_name(CYPHER_AST_PATTERN_COMPREHENSION), "pattern-comp");
    assert_string_equal(cypher_ast_op_name(CYPHER_OP_STARTS_WITH), "starts-with");
    cypher_ast_free(&ast);
    cypher_ast_free(&ast);   /* a no-op on NULL */
    cypher_ast_free(NULL);
}

/* The text need not be NUL-terminated, and may hold NUL in a string. */
static void test_length_bounded(void **state)
{
    mem_ctx *m = *state;
    cypher_error err;
    char *got = parse_to_string(m, "RETURN 1xyz", 8, &err);
    assert_non_null(got);
    assert_string_equal(got, "(query (return 1))");
    free(got);
    static const char with_nul[] = "RETURN 'a\0b'";
    got = parse_to_string(m, with_nul, sizeof with_nul - 1, &err);
    assert_non_null(got);
    assert_string_equal(got, "(query (return \"a\\u0000b\"))");
    free(got);
    static const char nul_outside[] = "RETURN 1\0";
    assert_null(parse_to_string(m, nul_outside, sizeof nul_outside - 1, &err));
    assert_int_equal(err.column, 9);
    /* a NULL error pointer is allowed */
    cypher_ast *ast;
    assert_int_equal(cypher_parse("RETURN", 6, m, &ast, NULL), -1);
    assert_null(ast);
}

/* ---- parsing: errors ---------------------------------------------------------------- */

static const struct error_case error_cases[] = {
    {"MATCH (n RETURN n", "UnexpectedSyntax", 1, 10, "expected a label, '{' or ')' but found 'RETURN'"},
    {"MATCH (n)\nRETURN n,", "UnexpectedSyntax", 2, 10, "expected an expression but found end of input"},
    {"RETURN 1 +", "UnexpectedSyntax", 1, 11, "expected an expression"},
    {"MATCH (n) RETURN n.", "UnexpectedSyntax", 1, 20, "expected a property key name"},
    {"RETURN [1, 2", "UnexpectedSyntax", 1, 13, "expected ',' or ']'"},
    {"RETURN {a 1}", "UnexpectedSyntax", 1, 11, "expected ':' but found '1'"},
    {"RETURN 'abc", "UnexpectedSyntax", 1, 8, "unterminated string literal"},
    {"RETURN '\\uZZZZ'", "InvalidUnicodeLiteral", 1, 9, "four hex digits"},
    {"RETURN '\\uH'", "InvalidUnicodeLiteral", 1, 9, "four hex digits"},
    {"RETURN '\\uD800\\u0041'", "InvalidUnicodeLiteral", 1, 9, "surrogate"},
    {"RETURN '\\q'", "UnexpectedSyntax", 1, 9, "invalid escape sequence"},
    {"RETURN 9223372036854775808", "IntegerOverflow", 1, 8, "too large"},
    {"RETURN -9223372036854775809", "IntegerOverflow", 1, 9, "too large"},
    {"RETURN 0x8000000000000000", "IntegerOverflow", 1, 8, "too large"},
    {"RETURN -0o1000000000000000000001", "IntegerOverflow", 1, 9, "too large"},
    {"RETURN 9223372036854775808.x", "IntegerOverflow", 1, 8, "too large"},
    {"RETURN 0x", "InvalidNumberLiteral", 1, 8, "hexadecimal"},
    {"RETURN 9223372h54775808 AS literal", "InvalidNumberLiteral", 1, 8, "invalid number literal"},
    {"RETURN 1e", "InvalidNumberLiteral", 1, 8, "invalid number literal"},
    {"RETURN 1.34E999", "FloatingPointOverflow", 1, 8, "too large"},
    {"RETURN 42 \xe2\x80\x94 41", "InvalidUnicodeCharacter", 1, 11, "Unicode character"},
    {"RETURN 9223372#54775808", "UnexpectedSyntax", 1, 15, "unexpected character"},
    {"RETURN a != b", "UnexpectedSyntax", 1, 10, "use '<>'"},
    {"RETURN 1 /* unterminated", "UnexpectedSyntax", 1, 10, "unterminated comment"},
    {"RETURN `abc", "UnexpectedSyntax", 1, 8, "unterminated quoted identifier"},
    {"MATCH (a)-[:LIKES..]->(c) RETURN c", "InvalidRelationshipPattern", 1, 18, "written with '*'"},
    {"MATCH (a)-[:LIKES*-2]->(c) RETURN c", "InvalidRelationshipPattern", 1, 19, "negative"},
    {"MATCH (a)-[*1..-2]->(c) RETURN c", "InvalidRelationshipPattern", 1, 16, "negative"},
    {"MATCH (a)-[*1.5]->(b) RETURN a", "InvalidRelationshipPattern", 1, 13, "integers"},
    {"MATCH (a)-[r]-(b)-(c) RETURN a", "UnexpectedSyntax", 1, 19, "expected '-' but found '('"},
    {"MATCH (a)-[r:]->(b) RETURN a", "UnexpectedSyntax", 1, 14, "expected a relationship type"},
    {"MATCH (a)-[r:A|]->(b) RETURN a", "UnexpectedSyntax", 1, 16, "expected a relationship type"},
    {"MATCH (a)-[r RETURN a", "UnexpectedSyntax", 1, 14, "expected a relationship type, '*', '{' or ']'"},
    {"MATCH (n $param) RETURN n", "InvalidParameterUse", 1, 10, "map literal"},
    {"MERGE (n $param) RETURN n", "InvalidParameterUse", 1, 10, "map literal"},
    {"MATCH (a)-[r $p]->(b) RETURN a", "InvalidParameterUse", 1, 14, "map literal"},
    {"MATCH (n) WHERE (n)-->({x: 1})-->($p) RETURN n", "InvalidParameterUse", 1, 35, "map literal"},
    {"MATCH (n) RETURN n SKIP -1", "NegativeIntegerArgument", 1, 25, "SKIP takes a non-negative integer"},
    {"MATCH (n) RETURN n LIMIT -5", "NegativeIntegerArgument", 1, 26, "LIMIT"},
    {"MATCH (n) WITH n LIMIT -1 RETURN n", "NegativeIntegerArgument", 1, 24, "LIMIT"},
    {"MATCH (n) DELETE n:Person", "InvalidDelete", 1, 18, "use REMOVE"},
    {"CALL test.my.proc YIELD out RETURN out", "InvalidArgumentPassingMode", 1, 1, "parentheses"},
    {"CALL p() YIELD * RETURN x", "UnexpectedSyntax", 1, 16, "YIELD *"},
    {"RETURN 1 AS a UNION ALL RETURN 1 AS a UNION RETURN 1 AS a", "InvalidClauseComposition", 1, 39,
     "cannot be mixed"},
    {"RETURN 1 AS a UNION RETURN 1 AS a UNION ALL RETURN 1 AS a", "InvalidClauseComposition", 1, 35,
     "cannot be mixed"},
    {"CREATE (a) MATCH (b) RETURN b", "InvalidClauseComposition", 1, 12,
     "MATCH cannot follow CREATE without a WITH"},
    {"MERGE (a) SET a.x = 1 UNWIND [1] AS x RETURN x", "InvalidClauseComposition", 1, 23,
     "UNWIND cannot follow SET"},
    {"MATCH (n)", "InvalidClauseComposition", 1, 10, "cannot end with MATCH"},
    {"MATCH (n) WITH n", "InvalidClauseComposition", 1, 17, "cannot end with WITH"},
    {"OPTIONAL MATCH (n) UNWIND [1] AS x", "InvalidClauseComposition", 1, 35, "cannot end with UNWIND"},
    {"MATCH (n) CALL p.q(n) YIELD x", "InvalidClauseComposition", 1, 30, "cannot end with CALL ... YIELD"},
    {"CREATE (n) CALL p.q(n)", "InvalidClauseComposition", 1, 12, "CALL cannot follow CREATE"},
    {"RETURN 1 RETURN 2", "UnexpectedSyntax", 1, 10, "expected end of query or UNION after RETURN"},
    {"MATCH (n) RETURN (n)-[]->()", "UnexpectedSyntax", 1, 18, "only be used as a predicate in WHERE"},
    {"MATCH (n) WITH (n)-[]->() AS x RETURN x", "UnexpectedSyntax", 1, 16, "predicate in WHERE"},
    {"MATCH (n) SET n.prop = head(nodes(head((n)-[:REL]->()))).foo", "UnexpectedSyntax", 1, 40,
     "predicate in WHERE"},
    {"MATCH (n) WHERE exists {\n  MATCH (n)-->(m)\n  SET m.prop='fail'\n}\nRETURN n",
     "InvalidClauseComposition", 3, 3, "cannot update"},
    {"RETURN 1 = NOT 2", "UnexpectedSyntax", 1, 12, "NOT needs parentheses"},
    {"", "UnexpectedSyntax", 1, 1, "expected a query"},
    {"  // only a comment\n", "UnexpectedSyntax", 2, 1, "expected a query"},
    {";", "UnexpectedSyntax", 1, 1, "expected a query"},
    {"RETURN 1; RETURN 2", "UnexpectedSyntax", 1, 11, "one statement at a time"},
    {"CREATE INDEX FOR (n:L) ON (m.p)", "UnexpectedSyntax", 1, 28, "expected a property of 'n'"},
    {"CREATE INDEX FOR (n) ON (n.p)", "UnexpectedSyntax", 1, 18, "one variable and one label"},
    {"CREATE INDEX FOR (n:A:B) ON (n.p)", "UnexpectedSyntax", 1, 18, "one variable and one label"},
    {"CREATE INDEX ON :L(p)", "UnexpectedSyntax", 1, 14, "expected FOR but found 'ON'"},
    {"CREATE CONSTRAINT FOR (n:L) REQUIRE n.p IS NODE KEY", "UnexpectedSyntax", 1, 44, "expected UNIQUE"},
    {"CREATE CONSTRAINT FOR (n:L) ASSERT n.p IS UNIQUE", "UnexpectedSyntax", 1, 29, "expected REQUIRE"},
    {"DROP TABLE x", "UnexpectedSyntax", 1, 6, "expected INDEX or CONSTRAINT"},
    {"DROP INDEX", "UnexpectedSyntax", 1, 11, "expected an index name"},
    {"MATCH (n) WHERE n.name = 'x' RETRUN n", "UnexpectedSyntax", 1, 30, "found 'RETRUN'"},
    {"MATCH (n)\nWHERE n.x =\n  RETURN n", "UnexpectedSyntax", 3, 3, "expected an expression but found 'RETURN'"},
    {"RETURN '\xc3\xa9', )", "UnexpectedSyntax", 1, 13, "found ')'"},
    {"RETURN CASE WHEN 1 THEN 2", "UnexpectedSyntax", 1, 26, "expected WHEN, ELSE or END"},
    {"RETURN CASE x END", "UnexpectedSyntax", 1, 15, "expected WHEN"},
    {"RETURN order", "UnexpectedSyntax", 1, 8, "expected an expression but found 'order'"},
    {"MATCH (n:) RETURN n", "UnexpectedSyntax", 1, 10, "expected a label name"},
    {"RETURN [x IN l WHERE x > 1 x]", "UnexpectedSyntax", 1, 28, "expected '|' or ']'"},
    {"RETURN [(a)-->(b)]", "UnexpectedSyntax", 1, 18, "expected WHERE or '|'"},
    {"RETURN count(DISTINCT)", "UnexpectedSyntax", 1, 22, "expected an expression"},
    {"RETURN f(1 2)", "UnexpectedSyntax", 1, 12, "expected ',' or ')'"},
    {"RETURN n {.}", "UnexpectedSyntax", 1, 12, "expected a property key name or '*'"},
    {"RETURN a[1", "UnexpectedSyntax", 1, 11, "expected '..' or ']'"},
    {"MATCH (n) SET n RETURN n", "UnexpectedSyntax", 1, 17, "expected '=', '+=', ':' or '.'"},
    {"MATCH (n) SET 1 = 2", "UnexpectedSyntax", 1, 15, "expected a property such as n.key"},
    {"MATCH (n) REMOVE n RETURN n", "UnexpectedSyntax", 1, 20, "expected ':' or '.'"},
    {"MERGE (n) ON DELETE SET n.x = 1", "UnexpectedSyntax", 1, 14, "expected CREATE or MATCH after ON"},
    {"UNWIND [1] x RETURN x", "UnexpectedSyntax", 1, 12, "expected AS"},
    {"LOAD CSV FROM 'x' AS row FIELDTERMINATOR 1 RETURN row", "UnexpectedSyntax", 1, 42,
     "expected a string literal"},
    {"LOAD JSON FROM 'x' AS row RETURN row", "UnexpectedSyntax", 1, 6, "expected CSV"},
    {"OPTIONAL RETURN 1", "UnexpectedSyntax", 1, 10, "expected MATCH"},
    {"RETURN reduce(a = 0, x IN l, a + x)", "UnexpectedSyntax", 1, 28, "expected '|'"},
    {"RETURN 1 |", "UnexpectedSyntax", 1, 10, "after RETURN"},
    {"RETURN $", "UnexpectedSyntax", 1, 8, "parameter name"},
    {"RETURN count(DISTINCT a b)", "UnexpectedSyntax", 1, 25, "expected ',' or ')' but found 'b'"},
    {"RETURN 1 'a\nb'", "UnexpectedSyntax", 1, 10, "found ''a b''"},
    {"RETURN 1 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'", "UnexpectedSyntax", 1, 10,
     "found ''aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'"},
};

static void test_errors(void **state)
{
    for (size_t i = 0; i < COUNT_OF(error_cases); i++)
        check_error(*state, &error_cases[i]);
}

/* ---- limits ------------------------------------------------------------------------- */

/* prefix + unit * n + middle + closer * n + suffix, malloc'd. */
static char *repeat(const char *prefix, const char *unit, size_t n, const char *middle,
                    const char *closer, const char *suffix)
{
    size_t len = strlen(prefix) + n * (strlen(unit) + strlen(closer)) + strlen(middle) +
                 strlen(suffix) + 1;
    char *s = malloc(len), *o = s;
    assert_non_null(s);
    o += sprintf(o, "%s", prefix);
    for (size_t i = 0; i < n; i++)
        o += sprintf(o, "%s", unit);
    o += sprintf(o, "%s", middle);
    for (size_t i = 0; i < n; i++)
        o += sprintf(o, "%s", closer);
    sprintf(o, "%s", suffix);
    return s;
}

static void check_depth(mem_ctx *m, char *query, bool ok)
{
    cypher_error err;
    char *got = parse_to_string(m, query, strlen(query), &err);
    if (ok) {
        if (!got)
            fail_msg("%.60s...: %s", query, err.message);
    } else {
        if (got)
            fail_msg("%.60s... parsed", query);
        assert_string_equal(err.category, "SyntaxError");
        assert_null(err.detail);
        assert_non_null(strstr(err.message, "too deeply nested"));
    }
    free(got);
    free(query);
}

/* Nesting beyond CYPHER_AST_MAX_DEPTH is an error, never a stack
   overflow; wide (not deep) input of any size is fine. */
static void test_depth_limit(void **state)
{
    mem_ctx *m = *state;
    check_depth(m, repeat("RETURN ", "(", 400, "1", ")", ""), true);
    check_depth(m, repeat("RETURN ", "(", 100000, "1", ")", ""), false);
    check_depth(m, repeat("RETURN ", "[", 100000, "", "]", ""), false);
    check_depth(m, repeat("RETURN ", "{a: ", 100000, "1", "}", ""), false);
    check_depth(m, repeat("RETURN ", "NOT ", 100000, "true", "", ""), false);
    check_depth(m, repeat("RETURN ", "-", 100000, "x", "", ""), false);
    check_depth(m, repeat("RETURN ", "1 + ", 100000, "1", "", ""), true);    /* a flat chain */
    check_depth(m, repeat("RETURN ", "(1 + ", 100000, "1", ")", ""), false);
    check_depth(m, repeat("RETURN x", ".a", 100000, "", "", ""), false);
    check_depth(m, repeat("RETURN x", "[0]", 100000, "", "", ""), false);
    check_depth(m, repeat("RETURN ", "f(", 100000, "", ")", ""), false);
    check_depth(m, repeat("RETURN ", "CASE WHEN ", 100000, "1", " THEN 1 END", ""), false);
    check_depth(m, repeat("RETURN ", "[x IN ", 100000, "l", "]", ""), false);
    check_depth(m, repeat("MATCH ", "(", 100000, "(a)-->(b)", ")", " RETURN a"), false);
    check_depth(m, repeat("MATCH (n) WHERE ", "EXISTS { MATCH (n) WHERE ", 100000, "true", "}",
                          " RETURN n"), false);
    check_depth(m, repeat("RETURN ", "1 < ", 100000, "1", "", ""), true);    /* a flat chain */
    check_depth(m, repeat("RETURN [", "1, ", 100000, "1", "", "]"), true);
    check_depth(m, repeat("CREATE (a)", "-[:R]->(a)", 20000, "", "", ""), true);
}

/* Fails each allocation of parsing query in turn until the parse gets
   through: every failure is OutOfMemory (or, for a bad query, the same
   syntax error a parse without failures reports) and leaves nothing
   allocated. */
static void fail_each_allocation(mem_ctx *m, const char *query)
{
    cypher_error want;
    char *expected = parse_to_string(m, query, strlen(query), &want);
    for (long k = 1;; k++) {
        cypher_ast *ast = NULL;
        cypher_error err;
        mem_fail_at(k);
        int rc = cypher_parse(query, strlen(query), m, &ast, &err);
        mem_fail_clear();
        if (rc == 0) {
            assert_non_null(expected);
            cypher_ast_free(&ast);
            break;
        }
        assert_int_equal(mem_ctx_bytes(m), 0);
        if (strcmp(err.category, "OutOfMemory") == 0)
            continue;
        assert_null(expected);
        assert_string_equal(err.message, want.message);
        assert_int_equal(err.offset, want.offset);
        break;
    }
    free(expected);
}

static void test_out_of_memory_everywhere(void **state)
{
    for (size_t i = 0; i < COUNT_OF(construct_cases); i++)
        fail_each_allocation(*state, construct_cases[i].query);
    for (size_t i = 0; i < COUNT_OF(error_cases); i++)
        fail_each_allocation(*state, error_cases[i].query);
}

/* Every allocation of a parse fails in turn: the parse reports
   OutOfMemory and leaves nothing allocated; then it succeeds with the
   same tree.  And the printer fails cleanly. */
static void test_out_of_memory(void **state)
{
    mem_ctx *m = *state;
    const char *q =
        "MATCH p = (a:Person {name: 'x'})-[r:KNOWS|LIKES*1..3]->(b) "
        "WHERE a.age > 3 AND NOT (a)-->(:Robot) AND exists { (b)<--(c) WHERE c.x } "
        "WITH a, collect(DISTINCT b {.name, .*}) AS bs, "
        "[x IN range(1, 10) WHERE x % 2 = 0 | x ^ 2] AS sq "
        "UNWIND bs AS bb "
        "MERGE (a)-[:SEEN]->(bb) ON CREATE SET bb.first = timestamp() ON MATCH SET bb += {n: 1} "
        "RETURN a.name AS name, CASE WHEN size(bs) > 2 THEN 'many' ELSE 'few' END, "
        "[(a)--(z) | z.name] AS friends, reduce(s = 0, v IN sq | s + v), a < 1 <= 2 "
        "ORDER BY name DESC SKIP $skip LIMIT 10 "
        "UNION ALL MATCH (n) RETURN n.name AS name, 1, 2, 3, 4, 5";
    char *expected = parse_to_string(m, q, strlen(q), NULL);
    assert_non_null(expected);
    long k;
    for (k = 1; k < 100000; k++) {
        cypher_ast *ast = (cypher_ast *)1;
        cypher_error err;
        mem_fail_at(k);
        int rc = cypher_parse(q, strlen(q), m, &ast, &err);
        mem_fail_clear();
        if (rc == 0) {
            char *printed;
            size_t len;
            assert_int_equal(cypher_ast_print(cypher_ast_root(ast), m, &printed, &len), 0);
            assert_string_equal(printed, expected);
            mem_free(m, printed);
            cypher_ast_free(&ast);
            break;
        }
        assert_null(ast);
        assert_string_equal(err.category, "OutOfMemory");
        assert_null(err.detail);
        assert_int_equal(mem_ctx_bytes(m), 0);
    }
    assert_true(k > 10);   /* the test build's small arena blocks fail many times */
    /* the printer fails cleanly too */
    cypher_ast *ast;
    assert_int_equal(cypher_parse(q, strlen(q), m, &ast, NULL), 0);
    size_t before = mem_ctx_bytes(m);
    for (k = 1;; k++) {
        char *printed;
        size_t len;
        mem_fail_at(k);
        int rc = cypher_ast_print(cypher_ast_root(ast), m, &printed, &len);
        mem_fail_clear();
        if (rc == 0) {
            mem_free(m, printed);
            break;
        }
        assert_null(printed);
        assert_int_equal(mem_ctx_bytes(m), before);
    }
    cypher_ast_free(&ast);
    free(expected);
}

/* ---- the TCK corpus ------------------------------------------------------------ */

/* The TCK's queries, pulled out of its Gherkin: the doc strings of the
   steps "executing query:", "executing control query:" and "having
   executed:", with Scenario Outlines expanded once per Examples row (the
   subset of Gherkin the TCK uses, as ../shared/tools/tck.py reads it). */

/* SyntaxError details the parser itself reports; the other SyntaxErrors
   of the TCK need scopes or types and belong to semantic analysis, so
   their queries must parse. */
static const char *const parser_details[] = {
    "InvalidUnicodeLiteral", "InvalidUnicodeCharacter", "IntegerOverflow",
    "FloatingPointOverflow", "InvalidNumberLiteral", "UnexpectedSyntax",
    "InvalidRelationshipPattern", "NegativeIntegerArgument", "InvalidParameterUse",
    "InvalidClauseComposition", "InvalidDelete", "InvalidArgumentPassingMode",
};

typedef struct text_buf {
    char *s;
    size_t len, cap;
} text_buf;

static void tb_add(text_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->s = realloc(b->s, cap);
        assert_non_null(b->s);
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

typedef struct step {
    char *text;      /* after the keyword */
    char *doc;       /* doc string, or NULL */
    int line;
} step;

typedef struct table_row {
    char **cells;
    size_t n;
} table_row;

typedef struct scenario {
    char *name;
    int line;
    bool outline;
    step *steps;
    size_t nsteps;
    table_row *rows;      /* Examples tables: a header row, then values; */
    size_t nrows;         /* a header again starts a new table */
    bool *is_header;
} scenario;

struct corpus_stats {
    size_t valid, valid_ok;          /* must parse */
    size_t syntax, syntax_ok;        /* must fail (parser-level SyntaxError) */
    size_t syntax_detail_ok;         /* ... with the TCK's detail */
    size_t semantic, semantic_ok;    /* SyntaxError left to semantic analysis: must parse */
    size_t shown;
    size_t max_depth;
};

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    assert_non_null(d);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Splits "| a | b\|c |" into trimmed cells, undoing \| \\ \n. */
static table_row split_row(const char *line)
{
    table_row r = {0};
    text_buf cell = {0};
    for (const char *c = line + 1; *c; c++) {
        if (*c == '\\' && (c[1] == '|' || c[1] == '\\' || c[1] == 'n')) {
            tb_add(&cell, c[1] == 'n' ? "\n" : c + 1, 1);
            c++;
        } else if (*c == '|') {
            size_t a = 0, z = cell.len;
            while (a < z && (cell.s[a] == ' ' || cell.s[a] == '\t'))
                a++;
            while (z > a && (cell.s[z - 1] == ' ' || cell.s[z - 1] == '\t'))
                z--;
            r.cells = realloc(r.cells, (r.n + 1) * sizeof *r.cells);
            assert_non_null(r.cells);
            r.cells[r.n++] = dup_range(cell.s ? cell.s + a : "", z - a);
            cell.len = 0;
        } else {
            tb_add(&cell, c, 1);
        }
    }
    free(cell.s);
    return r;
}

/* text with every <name> of header replaced by row's value. */
static char *substitute(const char *text, const table_row *header, const table_row *row)
{
    text_buf out = {0};
    tb_add(&out, "", 0);
    for (const char *c = text; *c;) {
        bool done = false;
        if (*c == '<' && header) {
            size_t best = 0, best_len = 0;
            for (size_t i = 0; i < header->n && i < row->n; i++) {
                size_t n = strlen(header->cells[i]);
                if (strncmp(c + 1, header->cells[i], n) == 0 && c[n + 1] == '>' && n + 2 > best_len) {
                    best = i;
                    best_len = n + 2;
                }
            }
            if (best_len) {
                tb_add(&out, row->cells[best], strlen(row->cells[best]));
                c += best_len;
                done = true;
            }
        }
        if (!done)
            tb_add(&out, c++, 1);
    }
    return out.s;
}

static bool is_parser_detail(const char *detail)
{
    for (size_t i = 0; i < sizeof parser_details / sizeof *parser_details; i++)
        if (strcmp(detail, parser_details[i]) == 0)
            return true;
    return false;
}

static void show(struct corpus_stats *st, const char *path, int line, const char *why,
                 const char *query, const cypher_error *err)
{
    if (st->shown++ >= 30)
        return;
    printf("  %s:%d: %s\n", path, line, why);
    if (err)
        printf("    %s %s at %u:%u: %s\n", err->category, err->detail ? err->detail : "-",
               err->line, err->column, err->message);
    printf("    | %s\n", query);
}

/* Parses one query and counts it. */
static void check_query(struct corpus_stats *st, const char *path, int line, const char *query,
                        const char *kind, const char *syntax_detail)
{
    mem_ctx *m = mem_scratch();
    size_t before = mem_ctx_bytes(m);
    cypher_ast *ast = NULL;
    cypher_error err;
    int rc = cypher_parse(query, strlen(query), m, &ast, &err);
    if (rc == 0) {
        size_t depth = 0;
        assert_int_equal(cypher_ast_check(ast, strlen(query), &depth), 0);
        if (depth > st->max_depth)
            st->max_depth = depth;
        char *printed;
        size_t len;
        assert_int_equal(cypher_ast_print(cypher_ast_root(ast), m, &printed, &len), 0);
        mem_free(m, printed);
        cypher_ast_free(&ast);
    }
    assert_int_equal(mem_ctx_bytes(m), before);
    bool executing = strcmp(kind, "executing query:") == 0;
    if (executing && syntax_detail && is_parser_detail(syntax_detail)) {
        st->syntax++;
        if (rc != 0) {
            st->syntax_ok++;
            if (err.detail && strcmp(err.detail, syntax_detail) == 0)
                st->syntax_detail_ok++;
            else
                show(st, path, line, "fails with another detail than expected", query, &err);
        } else {
            char why[128];
            snprintf(why, sizeof why, "parses, but the TCK expects SyntaxError %s", syntax_detail);
            show(st, path, line, why, query, NULL);
        }
    } else if (executing && syntax_detail) {
        st->semantic++;
        if (rc == 0) {
            st->semantic_ok++;
        } else {
            char why[128];
            snprintf(why, sizeof why, "fails; the TCK's %s is for semantic analysis", syntax_detail);
            show(st, path, line, why, query, &err);
        }
    } else {
        st->valid++;
        if (rc == 0)
            st->valid_ok++;
        else
            show(st, path, line, "fails to parse", query, &err);
    }
}

static void free_scenario(scenario *sc)
{
    for (size_t i = 0; i < sc->nsteps; i++) {
        free(sc->steps[i].text);
        free(sc->steps[i].doc);
    }
    for (size_t i = 0; i < sc->nrows; i++) {
        for (size_t j = 0; j < sc->rows[i].n; j++)
            free(sc->rows[i].cells[j]);
        free(sc->rows[i].cells);
    }
    free(sc->steps);
    free(sc->rows);
    free(sc->is_header);
    free(sc->name);
    memset(sc, 0, sizeof *sc);
}

/* Runs the scenario's queries, once per Examples row for an outline. */
static void run_scenario(struct corpus_stats *st, const char *path, scenario *sc)
{
    if (!sc->name)
        return;
    size_t from = 0, to = 1;          /* the rows to expand with, [from, to) */
    const table_row *header = NULL;
    if (sc->outline)
        from = 0, to = sc->nrows;
    for (size_t r = from; r < to; r++) {
        const table_row *row = NULL;
        if (sc->outline) {
            if (sc->is_header[r]) {
                header = &sc->rows[r];
                continue;
            }
            row = &sc->rows[r];
        }
        const char *syntax_detail = NULL;
        char *expect_text = NULL;
        for (size_t i = 0; i < sc->nsteps; i++) {
            static const char prefix[] = "a SyntaxError should be raised at compile time: ";
            if (strncmp(sc->steps[i].text, prefix, sizeof prefix - 1) == 0) {
                free(expect_text);
                expect_text = row ? substitute(sc->steps[i].text, header, row)
                                  : dup_range(sc->steps[i].text, strlen(sc->steps[i].text));
                syntax_detail = expect_text + sizeof prefix - 1;
            }
        }
        for (size_t i = 0; i < sc->nsteps; i++) {
            const step *s = &sc->steps[i];
            if (!s->doc || (strcmp(s->text, "executing query:") != 0 &&
                            strcmp(s->text, "executing control query:") != 0 &&
                            strcmp(s->text, "having executed:") != 0))
                continue;
            char *q = row ? substitute(s->doc, header, row) : dup_range(s->doc, strlen(s->doc));
            check_query(st, path, s->line, q, s->text, syntax_detail);
            free(q);
        }
        free(expect_text);
    }
}

/* The next line of a buffer (NUL-terminated in place, CR dropped), or NULL. */
static char *next_line(char **cursor, int *number)
{
    char *line = *cursor;
    if (!*line)
        return NULL;
    char *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *cursor = nl + 1;
    } else {
        *cursor = line + strlen(line);
    }
    size_t len = strlen(line);
    if (len && line[len - 1] == '\r')
        line[len - 1] = '\0';
    (*number)++;
    return line;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Reads one .feature file and checks every query in it. */
static void run_feature(struct corpus_stats *st, const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    text_buf all = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        tb_add(&all, chunk, n);
    fclose(f);
    tb_add(&all, "", 0);

    scenario sc = {0};
    step *last_step = NULL;
    bool in_examples = false, expect_header = false;
    int number = 0;
    char *cursor = all.s, *line;
    while ((line = next_line(&cursor, &number)) != NULL) {
        const char *t = skip_ws(line);
        if (starts(t, "\"\"\"") && last_step) {
            /* a doc string: up to the closing delimiter, de-indented */
            size_t indent = (size_t)(t - line);
            text_buf doc = {0};
            tb_add(&doc, "", 0);
            bool first = true;
            while ((line = next_line(&cursor, &number)) != NULL &&
                   strcmp(skip_ws(line), "\"\"\"") != 0) {
                size_t margin = (size_t)(skip_ws(line) - line);
                const char *body = line + (margin < indent ? margin : indent);
                if (!first)
                    tb_add(&doc, "\n", 1);
                tb_add(&doc, body, strlen(body));
                first = false;
            }
            free(last_step->doc);
            last_step->doc = doc.s;
            continue;
        }
        if (*t == '#' || *t == '\0' || *t == '@')
            continue;
        if (*t == '|') {
            if (in_examples) {
                sc.rows = realloc(sc.rows, (sc.nrows + 1) * sizeof *sc.rows);
                sc.is_header = realloc(sc.is_header, (sc.nrows + 1) * sizeof *sc.is_header);
                assert_true(sc.rows && sc.is_header);
                sc.is_header[sc.nrows] = expect_header;
                sc.rows[sc.nrows++] = split_row(t);
                expect_header = false;
            }
            continue;
        }
        if (starts(t, "Examples:") || starts(t, "Scenarios:")) {
            in_examples = expect_header = true;
            continue;
        }
        bool outline = starts(t, "Scenario Outline:") || starts(t, "Scenario Template:");
        if (outline || starts(t, "Scenario:") || starts(t, "Example:") || starts(t, "Background:")) {
            run_scenario(st, path, &sc);
            free_scenario(&sc);
            sc.name = dup_range(t, strlen(t));
            sc.line = number;
            sc.outline = outline;
            in_examples = false;
            last_step = NULL;
            continue;
        }
        static const char *const keywords[] = {"Given ", "When ", "Then ", "And ", "But ", "* "};
        for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++) {
            if (sc.name && !in_examples && starts(t, keywords[k])) {
                sc.steps = realloc(sc.steps, (sc.nsteps + 1) * sizeof *sc.steps);
                assert_non_null(sc.steps);
                last_step = &sc.steps[sc.nsteps++];
                t += strlen(keywords[k]);
                last_step->text = dup_range(t, strlen(t));
                last_step->doc = NULL;
                last_step->line = number;
                break;
            }
        }
    }
    run_scenario(st, path, &sc);
    free_scenario(&sc);
    free(all.s);
}

static int compare_paths(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends every *.feature below dir to *paths. */
static void find_features(const char *dir, char ***paths, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0)
            continue;
        size_t l = strlen(e->d_name);
        if (S_ISDIR(sb.st_mode)) {
            find_features(path, paths, n);
        } else if (l > 8 && strcmp(e->d_name + l - 8, ".feature") == 0) {
            *paths = realloc(*paths, (*n + 1) * sizeof **paths);
            assert_non_null(*paths);
            (*paths)[(*n)++] = dup_range(path, strlen(path));
        }
    }
    closedir(d);
}

/* Every query of the openCypher TCK: the valid ones parse, the ones the
   TCK rejects with a parser-level SyntaxError fail with that detail, and
   the ones rejected by a SyntaxError that needs semantic analysis parse. */
static void test_tck_corpus(void **state)
{
    (void)state;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    size_t used = strlen(dir);
    snprintf(dir + used, sizeof dir - used, "/../../shared/tck/features");
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        printf("TCK corpus: %s not found; skipped\n", dir);
        skip();
    }
    char **paths = NULL;
    size_t npaths = 0;
    find_features(dir, &paths, &npaths);
    qsort(paths, npaths, sizeof *paths, compare_paths);
    struct corpus_stats st = {0};
    printf("TCK corpus: %zu feature files in %s\n", npaths, dir);
    for (size_t i = 0; i < npaths; i++) {
        run_feature(&st, paths[i]);
        free(paths[i]);
    }
    free(paths);
    printf("TCK corpus: valid queries that parse:              %zu / %zu\n", st.valid_ok, st.valid);
    printf("TCK corpus: parser-level SyntaxErrors that fail:    %zu / %zu (%zu with the TCK's detail)\n",
           st.syntax_ok, st.syntax, st.syntax_detail_ok);
    printf("TCK corpus: semantic-level SyntaxErrors that parse: %zu / %zu\n", st.semantic_ok,
           st.semantic);
    printf("TCK corpus: of %zu queries the TCK rejects with a compile-time SyntaxError, the parser "
           "rejects %zu; semantic analysis owns the other %zu\n",
           st.syntax + st.semantic, st.syntax_ok, st.semantic);
    printf("TCK corpus: deepest tree %zu; %zu mismatches%s\n", st.max_depth, st.shown,
           st.shown > 30 ? " (first 30 shown)" : "");
    assert_true(st.valid > 3000);
    assert_true(st.valid_ok * 1000 >= st.valid * TCK_VALID_PERMILLE);
    assert_true(st.syntax_ok * 1000 >= st.syntax * TCK_SYNTAX_PERMILLE);
    assert_true(st.semantic_ok * 1000 >= st.semantic * TCK_SEMANTIC_PERMILLE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lexer_tokens),
        cmocka_unit_test(test_lexer_keywords),
        cmocka_unit_test(test_lexer_strings),
        cmocka_unit_test(test_lexer_numbers),
        cmocka_unit_test(test_lexer_errors),
        cmocka_unit_test(test_lexer_unicode),
        cmocka_unit_test_setup_teardown(test_constructs, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_precedence, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_item_text, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_positions, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_traversal, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_length_bounded, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_errors, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_depth_limit, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_out_of_memory, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_out_of_memory_everywhere, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test(test_tck_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
