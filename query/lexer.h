/*
 * lexer — the tokens of openCypher 9.
 *
 * The lexer turns query text into tokens on demand; it allocates nothing.
 * Every token carries its byte span in the text and the 1-based line and
 * column of its first byte (columns count code points, not bytes, so a
 * caret under a query with non-ASCII text lands where a reader expects).
 *
 * Words.  Keywords are not a token kind of their own: every word is a
 * CYPHER_TOK_IDENT, and tok.kw names the keyword it spells (compared case-
 * insensitively), or is CYPHER_KW_IDENTIFIER for a plain word.  openCypher
 * lets most keywords stand as label names, property keys and map keys, so
 * only the parser knows whether a word is a keyword where it stands.  A
 * `backtick quoted` word is an IDENT with tok.quoted set and kw IDENTIFIER
 * (it is never a keyword); cypher_lex_text() decodes its `` escapes.
 *
 * Literals.  Strings take both quote styles and the escapes \\ \' \" \b
 * \f \n \r \t \uXXXX (a UTF-16 unit; a surrogate pair combines) and
 * \UXXXXXXXX; they are checked here and decoded by cypher_lex_text().
 * Integers are decimal, 0x hex or 0o octal; tok.u.magnitude holds the
 * unsigned value, and tok.big is set when it is exactly 2^63, which only
 * a negation can turn into an integer (the parser decides).  Floats have a
 * fraction or an exponent (1.5, .5, 1e10, 1.5E-3); tok.u.real holds them.
 * A parameter is $name or $0; cypher_lex_text() gives its name.
 *
 * Errors are tokens: CYPHER_TOK_ERROR with tok.detail (a TCK detail code
 * such as "IntegerOverflow", "InvalidUnicodeLiteral", "InvalidNumberLiteral",
 * "InvalidUnicodeCharacter", "FloatingPointOverflow" or "UnexpectedSyntax")
 * and tok.message.  After an error the lexer keeps returning the same
 * error token.
 *
 * Invariants:
 *   1. tokens are returned in text order; their spans never overlap;
 *      offset + len <= the text length.
 *   2. cypher_lex_text() of a STRING, IDENT or PARAM token writes at most
 *      tok.len bytes (every escape is at least as long as its decoding).
 */
#ifndef STRATA_QUERY_LEXER_H
#define STRATA_QUERY_LEXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Token kinds: X(NAME, printable text). */
#define CYPHER_TOKENS(X)            \
    X(EOF, "end of input")          \
    X(ERROR, "invalid input")       \
    X(IDENT, "identifier")          \
    X(STRING, "string literal")     \
    X(INTEGER, "integer literal")   \
    X(FLOAT, "float literal")       \
    X(PARAM, "parameter")           \
    X(LPAREN, "(")                  \
    X(RPAREN, ")")                  \
    X(LBRACKET, "[")                \
    X(RBRACKET, "]")                \
    X(LBRACE, "{")                  \
    X(RBRACE, "}")                  \
    X(COMMA, ",")                   \
    X(DOT, ".")                     \
    X(DOTDOT, "..")                 \
    X(COLON, ":")                   \
    X(SEMICOLON, ";")               \
    X(PIPE, "|")                    \
    X(PLUS, "+")                    \
    X(MINUS, "-")                   \
    X(STAR, "*")                    \
    X(SLASH, "/")                   \
    X(PERCENT, "%")                 \
    X(CARET, "^")                   \
    X(EQ, "=")                      \
    X(NE, "<>")                     \
    X(LT, "<")                      \
    X(GT, ">")                      \
    X(LE, "<=")                     \
    X(GE, ">=")                     \
    X(REGEX, "=~")                  \
    X(PLUSEQ, "+=")

typedef enum cypher_tok_kind {
#define X(name, text) CYPHER_TOK_##name,
    CYPHER_TOKENS(X)
#undef X
} cypher_tok_kind;

/* Keywords: X(NAME, reserved).  Reserved words (openCypher's ReservedWord)
   cannot name a variable; the others are contextual. */
#define CYPHER_KEYWORDS(X)                                               \
    X(ALL, 1) X(ALLSHORTESTPATHS, 0) X(AND, 1) X(ANY, 0) X(AS, 1)        \
    X(ASC, 1) X(ASCENDING, 1) X(ASSERT, 0) X(BY, 1) X(CALL, 0)           \
    X(CASE, 1) X(CONSTRAINT, 1) X(CONTAINS, 1) X(COUNT, 0)               \
    X(CREATE, 1) X(CSV, 0) X(DELETE, 1) X(DESC, 1) X(DESCENDING, 1)      \
    X(DETACH, 1) X(DISTINCT, 1) X(DROP, 1) X(ELSE, 1) X(END, 1)          \
    X(ENDS, 1) X(EXISTS, 1) X(EXPLAIN, 0) X(FALSE, 1)                    \
    X(FIELDTERMINATOR, 0) X(FOR, 1) X(FROM, 0) X(HEADERS, 0) X(IF, 0)    \
    X(IN, 1) X(INDEX, 0) X(IS, 1) X(LIMIT, 1) X(LOAD, 0) X(MATCH, 1)     \
    X(MERGE, 1) X(NONE, 0) X(NOT, 1) X(NULL, 1) X(ON, 1) X(OPTIONAL, 1)  \
    X(OR, 1) X(ORDER, 1) X(PROFILE, 0) X(RANGE, 0) X(REDUCE, 0)          \
    X(REMOVE, 1) X(REQUIRE, 1) X(RETURN, 1) X(SET, 1)                    \
    X(SHORTESTPATH, 0) X(SINGLE, 0) X(SKIP, 1) X(STARTS, 1) X(THEN, 1)   \
    X(TRUE, 1) X(UNION, 1) X(UNIQUE, 1) X(UNWIND, 1) X(WHEN, 1)          \
    X(WHERE, 1) X(WITH, 1) X(XOR, 1) X(YIELD, 0)

typedef enum cypher_kw {
    CYPHER_KW_IDENTIFIER = 0,
#define X(name, reserved) CYPHER_KW_##name,
    CYPHER_KEYWORDS(X)
#undef X
} cypher_kw;

typedef struct cypher_token {
    cypher_tok_kind kind;
    cypher_kw kw;           /* IDENT: the keyword it spells, or IDENTIFIER */
    bool quoted;            /* IDENT: `backtick quoted` */
    bool big;               /* INTEGER: the magnitude is exactly 2^63 */
    size_t offset, len;     /* byte span in the text */
    uint32_t line, column;  /* of the first byte, 1-based */
    union {
        uint64_t magnitude; /* INTEGER (<= 2^63) */
        double real;        /* FLOAT (finite) */
    } u;
    const char *detail;     /* ERROR: TCK detail code, or NULL */
    const char *message;    /* ERROR: what is wrong (static text) */
} cypher_token;

typedef struct cypher_lexer {
    const char *text;
    size_t len;
    size_t pos;              /* next byte to read */
    uint32_t line, column;   /* of text[pos] */
    bool failed;             /* an ERROR token was returned */
    cypher_token error;      /* the token returned again after an error */
} cypher_lexer;

void cypher_lex_init(cypher_lexer *lx, const char *text, size_t len);
/* The next token (EOF at the end, forever). */
void cypher_lex_next(cypher_lexer *lx, cypher_token *tok);

/* Decodes a STRING token's value, an IDENT's name (backtick escapes
   undone) or a PARAM's name (without the $) into out, which must have room
   for tok->len bytes; returns the decoded length (not NUL-terminated). */
size_t cypher_lex_text(const char *text, const cypher_token *tok, char *out);

/* The printable name of a token kind ("(", "identifier", ...). */
const char *cypher_lex_kind_name(cypher_tok_kind kind);
/* The keyword's upper-case spelling; "" for IDENTIFIER. */
const char *cypher_lex_kw_name(cypher_kw kw);
/* Whether kw is one of openCypher's reserved words. */
bool cypher_lex_kw_reserved(cypher_kw kw);

#endif
