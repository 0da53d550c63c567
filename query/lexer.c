/*
 * lexer — openCypher 9 tokens (see lexer.h for the contract).
 *
 * The scanner is a loop over bytes driven by three tables: the character
 * class of each ASCII byte, the punctuation list (longest first), and the
 * ranges of non-ASCII code points that are white space or symbols rather
 * than letters.  openCypher names letters by Unicode's ID_Start and
 * ID_Continue; strata approximates them by exclusion: every code point
 * that is not listed as white space or as a symbol may appear in an
 * identifier.  The symbol ranges cover the punctuation people paste by
 * accident (dashes and quotes from word processors, arrows, maths and box
 * drawing, emoji), so `RETURN 42 — 41` fails with InvalidUnicodeCharacter
 * at the dash instead of reading the dash as a name.
 */
#include "query/lexer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/utf8.h"

/* ---- tables ------------------------------------------------------------ */

static const char *const kind_names[] = {
#define X(name, text) [CYPHER_TOK_##name] = text,
    CYPHER_TOKENS(X)
#undef X
};

static const struct keyword {
    const char *name;
    size_t len;
    bool reserved;
} keywords[] = {
    [CYPHER_KW_IDENTIFIER] = {"", 0, false},
#define X(name, res) [CYPHER_KW_##name] = {#name, sizeof #name - 1, res},
    CYPHER_KEYWORDS(X)
#undef X
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Punctuation, two-byte spellings before the one-byte ones they start
   with, so the first match is the longest. */
static const struct punct {
    char text[3];
    cypher_tok_kind kind;
} puncts[] = {
    {"..", CYPHER_TOK_DOTDOT}, {"<>", CYPHER_TOK_NE},    {"<=", CYPHER_TOK_LE},
    {">=", CYPHER_TOK_GE},     {"=~", CYPHER_TOK_REGEX}, {"+=", CYPHER_TOK_PLUSEQ},
    {"(", CYPHER_TOK_LPAREN},  {")", CYPHER_TOK_RPAREN}, {"[", CYPHER_TOK_LBRACKET},
    {"]", CYPHER_TOK_RBRACKET}, {"{", CYPHER_TOK_LBRACE}, {"}", CYPHER_TOK_RBRACE},
    {",", CYPHER_TOK_COMMA},   {".", CYPHER_TOK_DOT},    {":", CYPHER_TOK_COLON},
    {";", CYPHER_TOK_SEMICOLON}, {"|", CYPHER_TOK_PIPE}, {"+", CYPHER_TOK_PLUS},
    {"-", CYPHER_TOK_MINUS},   {"*", CYPHER_TOK_STAR},   {"/", CYPHER_TOK_SLASH},
    {"%", CYPHER_TOK_PERCENT}, {"^", CYPHER_TOK_CARET},  {"=", CYPHER_TOK_EQ},
    {"<", CYPHER_TOK_LT},      {">", CYPHER_TOK_GT},
};

enum char_class {
    C_BAD = 0,   /* not Cypher outside a string */
    C_SPACE,
    C_ALPHA,     /* starts and continues a word */
    C_DIGIT,
    C_PUNCT,     /* see puncts[] */
    C_QUOTE,     /* ' or " */
    C_BACKTICK,
    C_DOLLAR,
    C_SLASH,     /* a comment or the division operator */
    C_HIGH,      /* the first byte of a multi-byte UTF-8 sequence */
};

static enum char_class ascii_class(unsigned char c)
{
    if (c >= 0x80)
        return C_HIGH;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
        return C_ALPHA;
    if (c >= '0' && c <= '9')
        return C_DIGIT;
    /* openCypher's white space: the ASCII controls TAB..CR and FS..US */
    if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F))
        return C_SPACE;
    switch (c) {
    case '\'': case '"': return C_QUOTE;
    case '`': return C_BACKTICK;
    case '$': return C_DOLLAR;
    case '/': return C_SLASH;
    case '(': case ')': case '[': case ']': case '{': case '}': case ',':
    case '.': case ':': case ';': case '|': case '+': case '-': case '*':
    case '%': case '^': case '=': case '<': case '>':
        return C_PUNCT;
    default:
        return C_BAD;
    }
}

/* Non-ASCII code points that are not identifier characters. */
enum { U_SPACE = 1, U_SYMBOL };
static const struct urange {
    uint32_t lo, hi;
    int cls;
} uranges[] = {
    {0x0080, 0x009F, U_SYMBOL},   /* C1 controls */
    {0x00A0, 0x00A0, U_SPACE},
    {0x00A1, 0x00A9, U_SYMBOL},   /* Latin-1 punctuation, minus the */
    {0x00AB, 0x00B4, U_SYMBOL},   /* ordinal indicators and micro sign */
    {0x00B6, 0x00B9, U_SYMBOL},
    {0x00BB, 0x00BF, U_SYMBOL},
    {0x00D7, 0x00D7, U_SYMBOL},
    {0x00F7, 0x00F7, U_SYMBOL},
    {0x1680, 0x1680, U_SPACE},
    {0x180E, 0x180E, U_SPACE},
    {0x2000, 0x200A, U_SPACE},
    {0x200B, 0x2027, U_SYMBOL},   /* dashes, quotes, bullets */
    {0x2028, 0x2029, U_SPACE},
    {0x202A, 0x202E, U_SYMBOL},
    {0x202F, 0x202F, U_SPACE},
    {0x2030, 0x205E, U_SYMBOL},
    {0x205F, 0x205F, U_SPACE},
    {0x2060, 0x206F, U_SYMBOL},
    {0x20A0, 0x20CF, U_SYMBOL},   /* currency */
    {0x2190, 0x245F, U_SYMBOL},   /* arrows, maths, technical, control pictures */
    {0x2500, 0x2775, U_SYMBOL},   /* box drawing .. dingbats */
    {0x2794, 0x2BFF, U_SYMBOL},   /* dingbat arrows, maths, misc symbols */
    {0x2E00, 0x2E7F, U_SYMBOL},   /* supplemental punctuation */
    {0x3000, 0x3000, U_SPACE},
    {0x3001, 0x3004, U_SYMBOL},   /* CJK punctuation */
    {0x3008, 0x3020, U_SYMBOL},
    {0x3030, 0x3030, U_SYMBOL},
    {0xD800, 0xDFFF, U_SYMBOL},   /* surrogates (never valid UTF-8 anyway) */
    {0xE000, 0xF8FF, U_SYMBOL},   /* private use */
    {0xFE10, 0xFE6F, U_SYMBOL},   /* vertical, small and compatibility forms */
    {0xFEFF, 0xFEFF, U_SPACE},    /* byte order mark */
    {0xFF01, 0xFF0F, U_SYMBOL},   /* fullwidth punctuation */
    {0xFF1A, 0xFF20, U_SYMBOL},
    {0xFF3B, 0xFF40, U_SYMBOL},
    {0xFF5B, 0xFF65, U_SYMBOL},
    {0xFFF0, 0xFFFF, U_SYMBOL},   /* specials */
    {0x1F000, 0x1FAFF, U_SYMBOL}, /* mahjong .. emoji */
    {0xF0000, 0x10FFFF, U_SYMBOL} /* private use planes */
};

static int unicode_class(uint32_t cp)
{
    size_t lo = 0, hi = COUNT_OF(uranges);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < uranges[mid].lo)
            hi = mid;
        else if (cp > uranges[mid].hi)
            lo = mid + 1;
        else
            return uranges[mid].cls;
    }
    return 0;
}

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* ---- the scanner -------------------------------------------------------- */

void cypher_lex_init(cypher_lexer *lx, const char *text, size_t len)
{
    memset(lx, 0, sizeof *lx);
    lx->text = text;
    lx->len = len;
    lx->line = 1;
    lx->column = 1;
}

static unsigned char peek_at(const cypher_lexer *lx, size_t at)
{
    return at < lx->len ? (unsigned char)lx->text[at] : 0;
}

/* Moves pos to `to`, counting lines and code points on the way. */
static void advance_to(cypher_lexer *lx, size_t to)
{
    for (size_t i = lx->pos; i < to; i++) {
        unsigned char c = (unsigned char)lx->text[i];
        if (c == '\n' || (c == '\r' && peek_at(lx, i + 1) != '\n')) {
            lx->line++;
            lx->column = 1;
        } else if (c != '\r' && (c & 0xC0) != 0x80) {
            lx->column++;
        }
    }
    lx->pos = to;
}

static void start_token(cypher_lexer *lx, cypher_token *tok, cypher_tok_kind kind)
{
    memset(tok, 0, sizeof *tok);
    tok->kind = kind;
    tok->offset = lx->pos;
    tok->line = lx->line;
    tok->column = lx->column;
}

/* Ends tok at byte `end` and moves past it. */
static void finish_token(cypher_lexer *lx, cypher_token *tok, size_t end)
{
    tok->len = end - tok->offset;
    advance_to(lx, end);
}

/* Turns tok into an error covering [tok->offset, end) -- or starting at
   `at` when at is not tok->offset, so the position names the bad byte. */
static void fail_token(cypher_lexer *lx, cypher_token *tok, size_t at, size_t end,
                       const char *detail, const char *message)
{
    if (at > tok->offset) {
        advance_to(lx, at);
        tok->offset = at;
        tok->line = lx->line;
        tok->column = lx->column;
    }
    tok->kind = CYPHER_TOK_ERROR;
    tok->kw = CYPHER_KW_IDENTIFIER;
    tok->detail = detail;
    tok->message = message;
    if (end < at)
        end = at;
    finish_token(lx, tok, end);
    lx->failed = true;
    lx->error = *tok;
}

/* Whether the code point starting at byte `at` continues a word; sets *len
   to its byte length. */
static bool word_char_at(const cypher_lexer *lx, size_t at, size_t *len)
{
    unsigned char c = peek_at(lx, at);
    enum char_class cls = at < lx->len ? ascii_class(c) : C_BAD;
    *len = 1;
    if (cls == C_ALPHA || cls == C_DIGIT)
        return true;
    if (cls != C_HIGH)
        return false;
    uint32_t cp;
    size_t n = utf8_decode(lx->text + at, lx->len - at, &cp);
    if (n == 0 || unicode_class(cp) != 0)
        return false;
    *len = n;
    return true;
}

static size_t word_end(const cypher_lexer *lx, size_t at)
{
    size_t n;
    while (word_char_at(lx, at, &n))
        at += n;
    return at;
}

static cypher_kw keyword_of(const char *s, size_t len)
{
    for (size_t k = 1; k < COUNT_OF(keywords); k++) {
        if (keywords[k].len != len)
            continue;
        size_t i = 0;
        while (i < len) {
            char c = s[i];
            if (c >= 'a' && c <= 'z')
                c = (char)(c - 'a' + 'A');
            if (c != keywords[k].name[i])
                break;
            i++;
        }
        if (i == len)
            return (cypher_kw)k;
    }
    return CYPHER_KW_IDENTIFIER;
}

/* `...` with `` for a backtick; returns false (tok failed) when
   unterminated, empty or not UTF-8. */
static bool scan_quoted_name(cypher_lexer *lx, cypher_token *tok, size_t at, size_t *end)
{
    size_t i = at + 1;
    size_t content = 0;
    for (;;) {
        if (i >= lx->len) {
            fail_token(lx, tok, at, lx->len, "UnexpectedSyntax",
                       "unterminated quoted identifier");
            return false;
        }
        unsigned char c = (unsigned char)lx->text[i];
        if (c == '`') {
            if (peek_at(lx, i + 1) == '`') {
                i += 2;
                content++;
                continue;
            }
            break;
        }
        uint32_t cp;
        size_t n = utf8_decode(lx->text + i, lx->len - i, &cp);
        if (n == 0) {
            fail_token(lx, tok, i, i + 1, "InvalidUnicodeCharacter", "invalid UTF-8");
            return false;
        }
        i += n;
        content++;
    }
    if (content == 0) {
        fail_token(lx, tok, at, i + 1, "UnexpectedSyntax", "empty quoted identifier");
        return false;
    }
    *end = i + 1;
    return true;
}

static void scan_word(cypher_lexer *lx, cypher_token *tok)
{
    size_t end = word_end(lx, lx->pos);
    tok->kind = CYPHER_TOK_IDENT;
    tok->kw = keyword_of(lx->text + lx->pos, end - lx->pos);
    finish_token(lx, tok, end);
}

static void scan_param(cypher_lexer *lx, cypher_token *tok)
{
    size_t at = lx->pos + 1, end;
    unsigned char c = peek_at(lx, at);
    size_t n;
    if (at < lx->len && c == '`') {
        if (!scan_quoted_name(lx, tok, at, &end))
            return;
    } else if (at < lx->len && ascii_class(c) == C_DIGIT) {
        end = at;
        while (end < lx->len && ascii_class(peek_at(lx, end)) == C_DIGIT)
            end++;
        if (word_char_at(lx, end, &n)) {
            fail_token(lx, tok, tok->offset, word_end(lx, end), "UnexpectedSyntax",
                       "a parameter name is a name or a number");
            return;
        }
    } else if (word_char_at(lx, at, &n)) {
        end = word_end(lx, at);
    } else {
        fail_token(lx, tok, tok->offset, at, "UnexpectedSyntax",
                   "expected a parameter name after '$'");
        return;
    }
    tok->kind = CYPHER_TOK_PARAM;
    finish_token(lx, tok, end);
}

/* Validates the escapes and UTF-8 of a string literal. */
static void scan_string(cypher_lexer *lx, cypher_token *tok)
{
    size_t at = lx->pos;
    unsigned char quote = (unsigned char)lx->text[at];
    size_t i = at + 1;
    for (;;) {
        if (i >= lx->len) {
            fail_token(lx, tok, at, lx->len, "UnexpectedSyntax", "unterminated string literal");
            return;
        }
        unsigned char c = (unsigned char)lx->text[i];
        if (c == quote)
            break;
        if (c != '\\') {
            uint32_t cp;
            size_t n = utf8_decode(lx->text + i, lx->len - i, &cp);
            if (n == 0) {
                fail_token(lx, tok, i, i + 1, "InvalidUnicodeCharacter", "invalid UTF-8");
                return;
            }
            i += n;
            continue;
        }
        unsigned char e = peek_at(lx, i + 1);
        if (i + 1 >= lx->len) {
            fail_token(lx, tok, at, lx->len, "UnexpectedSyntax", "unterminated string literal");
            return;
        }
        switch (e) {
        case '\\': case '\'': case '"': case 'b': case 'f': case 'n': case 'r': case 't':
        case 'B': case 'F': case 'N': case 'R': case 'T':
            i += 2;
            continue;
        case 'u': case 'U': {
            size_t digits = e == 'u' ? 4 : 8;
            uint32_t cp = 0;
            for (size_t d = 0; d < digits; d++) {
                int h = hex_value(peek_at(lx, i + 2 + d));
                if (i + 2 + d >= lx->len || h < 0) {
                    fail_token(lx, tok, i, i + 2 + d, "InvalidUnicodeLiteral",
                               e == 'u' ? "\\u must be followed by four hex digits"
                                        : "\\U must be followed by eight hex digits");
                    return;
                }
                cp = (cp << 4) | (uint32_t)h;
            }
            size_t next = i + 2 + digits;
            if (e == 'u' && cp >= 0xD800 && cp <= 0xDBFF) {
                /* a UTF-16 high surrogate must pair with a low one */
                uint32_t lo = 0;
                bool ok = peek_at(lx, next) == '\\' && peek_at(lx, next + 1) == 'u';
                for (size_t d = 0; ok && d < 4; d++) {
                    int h = next + 2 + d < lx->len ? hex_value(peek_at(lx, next + 2 + d)) : -1;
                    ok = h >= 0;
                    lo = (lo << 4) | (uint32_t)(h < 0 ? 0 : h);
                }
                if (!ok || lo < 0xDC00 || lo > 0xDFFF) {
                    fail_token(lx, tok, i, next, "InvalidUnicodeLiteral",
                               "unpaired UTF-16 surrogate in \\u escape");
                    return;
                }
                next += 6;
            } else if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                fail_token(lx, tok, i, next, "InvalidUnicodeLiteral",
                           "escape names no Unicode character");
                return;
            }
            i = next;
            continue;
        }
        default:
            fail_token(lx, tok, i, i + 2, "UnexpectedSyntax", "invalid escape sequence");
            return;
        }
    }
    tok->kind = CYPHER_TOK_STRING;
    finish_token(lx, tok, i + 1);
}

/* Digits of `base` from `at`; accumulates a magnitude capped above 2^63
   (*over set when it is larger). */
static size_t scan_digits(const cypher_lexer *lx, size_t at, unsigned base,
                          uint64_t *mag, bool *over)
{
    const uint64_t limit = (uint64_t)1 << 63;
    while (at < lx->len) {
        int d = hex_value(peek_at(lx, at));
        if (d < 0 || (unsigned)d >= base)
            break;
        if (!*over) {
            if (*mag > (limit - (uint64_t)d) / base)
                *over = true;
            else
                *mag = *mag * base + (uint64_t)d;
        }
        at++;
    }
    return at;
}

/* A float's value from its digits, via strtod on a normalised copy so
   that a literal of any length converts with correct rounding: the
   significant digits are kept up to 780 (more than the 767 a double can
   need), a dropped non-zero tail leaves a sticky 1, and the exponent is
   clamped far outside the double range. */
static double float_value(const char *s, size_t len, bool *overflow)
{
    enum { KEEP = 780 };
    char buf[KEEP + 32];
    size_t nd = 0, i = 0;
    long point = 0;          /* digits before the decimal point, after stripping */
    bool seen_point = false, sticky = false, leading = true;
    for (; i < len && s[i] != 'e' && s[i] != 'E'; i++) {
        if (s[i] == '.') {
            seen_point = true;
            continue;
        }
        if (leading && s[i] == '0') {
            if (seen_point)
                point--;
            continue;
        }
        leading = false;
        if (!seen_point)
            point++;
        if (nd < KEEP)
            buf[nd++] = s[i];
        else if (s[i] != '0')
            sticky = true;
    }
    long exp = 0;
    if (i < len) {
        bool neg = false;
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            neg = s[i++] == '-';
        for (; i < len; i++)
            if (exp < 100000)
                exp = exp * 10 + (s[i] - '0');
        if (neg)
            exp = -exp;
    }
    *overflow = false;
    if (nd == 0)
        return 0.0;
    if (sticky)
        buf[nd++] = '1';
    long e10 = exp + point - (long)nd;
    snprintf(buf + nd, sizeof buf - nd, "e%ld", e10);
    errno = 0;
    double v = strtod(buf, NULL);
    if (errno == ERANGE && (v > 1.0 || v < -1.0))
        *overflow = true;
    return v;
}

static void scan_number(cypher_lexer *lx, cypher_token *tok)
{
    size_t at = lx->pos, i = at, n;
    uint64_t mag = 0;
    bool over = false, is_float = false;
    unsigned char c1 = peek_at(lx, at + 1);
    if (peek_at(lx, at) == '0' && (c1 == 'x' || c1 == 'X' || c1 == 'o' || c1 == 'O')) {
        unsigned base = (c1 == 'x' || c1 == 'X') ? 16 : 8;
        i = scan_digits(lx, at + 2, base, &mag, &over);
        if (i == at + 2 || word_char_at(lx, i, &n)) {
            fail_token(lx, tok, at, word_end(lx, i), "InvalidNumberLiteral",
                       base == 16 ? "invalid hexadecimal integer" : "invalid octal integer");
            return;
        }
    } else {
        if (peek_at(lx, i) != '.')
            i = scan_digits(lx, i, 10, &mag, &over);
        if (peek_at(lx, i) == '.' && i + 1 < lx->len &&
            ascii_class(peek_at(lx, i + 1)) == C_DIGIT) {
            is_float = true;
            i++;
            while (i < lx->len && ascii_class(peek_at(lx, i)) == C_DIGIT)
                i++;
        }
        unsigned char e = peek_at(lx, i);
        if (i < lx->len && (e == 'e' || e == 'E')) {
            size_t j = i + 1;
            if (peek_at(lx, j) == '+' || peek_at(lx, j) == '-')
                j++;
            if (j < lx->len && ascii_class(peek_at(lx, j)) == C_DIGIT) {
                is_float = true;
                while (j < lx->len && ascii_class(peek_at(lx, j)) == C_DIGIT)
                    j++;
                i = j;
            }
        }
        if (word_char_at(lx, i, &n)) {
            fail_token(lx, tok, at, word_end(lx, i), "InvalidNumberLiteral",
                       "invalid number literal");
            return;
        }
    }
    if (is_float) {
        bool overflow;
        tok->u.real = float_value(lx->text + at, i - at, &overflow);
        if (overflow) {
            fail_token(lx, tok, at, i, "FloatingPointOverflow",
                       "float literal is too large for a 64-bit float");
            return;
        }
        tok->kind = CYPHER_TOK_FLOAT;
    } else {
        if (over) {
            fail_token(lx, tok, at, i, "IntegerOverflow",
                       "integer literal is too large for a 64-bit integer");
            return;
        }
        tok->kind = CYPHER_TOK_INTEGER;
        tok->u.magnitude = mag;
        tok->big = mag == (uint64_t)1 << 63;
    }
    finish_token(lx, tok, i);
}

/* A comment is text too: its bytes reach column names (the text of an
   expression) and messages. */
static bool comment_text(cypher_lexer *lx, cypher_token *tok, size_t start, size_t end)
{
    size_t bad;
    if (utf8_check(lx->text + start, end - start, &bad))
        return true;
    start_token(lx, tok, CYPHER_TOK_ERROR);
    fail_token(lx, tok, start + bad, start + bad + 1, "InvalidUnicodeCharacter",
               "invalid UTF-8");
    return false;
}

/* Skips white space and comments; false (tok failed) on an unterminated
   block comment or bad UTF-8. */
static bool skip_space(cypher_lexer *lx, cypher_token *tok)
{
    size_t i = lx->pos;
    for (;;) {
        advance_to(lx, i);
        if (i >= lx->len)
            return true;
        unsigned char c = (unsigned char)lx->text[i];
        enum char_class cls = ascii_class(c);
        if (cls == C_SPACE) {
            i++;
        } else if (c == '/' && peek_at(lx, i + 1) == '/') {
            size_t start = i;
            while (i < lx->len && lx->text[i] != '\n' && lx->text[i] != '\r')
                i++;
            if (!comment_text(lx, tok, start, i))
                return false;
        } else if (c == '/' && peek_at(lx, i + 1) == '*') {
            size_t start = i;
            i += 2;
            while (i + 1 < lx->len && !(lx->text[i] == '*' && lx->text[i + 1] == '/'))
                i++;
            if (i + 1 >= lx->len) {
                start_token(lx, tok, CYPHER_TOK_ERROR);
                fail_token(lx, tok, start, lx->len, "UnexpectedSyntax", "unterminated comment");
                return false;
            }
            i += 2;
            if (!comment_text(lx, tok, start, i))
                return false;
        } else if (cls == C_HIGH) {
            uint32_t cp;
            size_t n = utf8_decode(lx->text + i, lx->len - i, &cp);
            if (n == 0 || unicode_class(cp) != U_SPACE)
                return true;
            i += n;
        } else {
            return true;
        }
    }
}

void cypher_lex_next(cypher_lexer *lx, cypher_token *tok)
{
    if (lx->failed) {
        *tok = lx->error;
        return;
    }
    if (!skip_space(lx, tok))
        return;
    start_token(lx, tok, CYPHER_TOK_EOF);
    if (lx->pos >= lx->len)
        return;
    unsigned char c = (unsigned char)lx->text[lx->pos];
    size_t end;
    switch (ascii_class(c)) {
    case C_ALPHA:
        scan_word(lx, tok);
        return;
    case C_DIGIT:
        scan_number(lx, tok);
        return;
    case C_QUOTE:
        scan_string(lx, tok);
        return;
    case C_BACKTICK:
        if (scan_quoted_name(lx, tok, lx->pos, &end)) {
            tok->kind = CYPHER_TOK_IDENT;
            tok->quoted = true;
            finish_token(lx, tok, end);
        }
        return;
    case C_DOLLAR:
        scan_param(lx, tok);
        return;
    case C_PUNCT:
    case C_SLASH:
        if (c == '.' && ascii_class(peek_at(lx, lx->pos + 1)) == C_DIGIT &&
            lx->pos + 1 < lx->len) {
            scan_number(lx, tok);
            return;
        }
        for (size_t k = 0; k < COUNT_OF(puncts); k++) {
            size_t n = strlen(puncts[k].text);
            if (lx->pos + n <= lx->len && memcmp(lx->text + lx->pos, puncts[k].text, n) == 0) {
                tok->kind = puncts[k].kind;
                finish_token(lx, tok, lx->pos + n);
                return;
            }
        }
        break;
    case C_HIGH: {
        uint32_t cp;
        size_t n = utf8_decode(lx->text + lx->pos, lx->len - lx->pos, &cp);
        if (n == 0) {
            fail_token(lx, tok, lx->pos, lx->pos + 1, "InvalidUnicodeCharacter", "invalid UTF-8");
            return;
        }
        if (unicode_class(cp) == 0) {
            scan_word(lx, tok);
            return;
        }
        fail_token(lx, tok, lx->pos, lx->pos + n, "InvalidUnicodeCharacter",
                   "this Unicode character is not part of Cypher's syntax");
        return;
    }
    default:
        break;
    }
    if (c == '!' && peek_at(lx, lx->pos + 1) == '=') {
        fail_token(lx, tok, lx->pos, lx->pos + 2, "UnexpectedSyntax",
                   "'!=' is not Cypher; use '<>'");
        return;
    }
    fail_token(lx, tok, lx->pos, lx->pos + 1, "UnexpectedSyntax", "unexpected character");
}

size_t cypher_lex_text(const char *text, const cypher_token *tok, char *out)
{
    const char *s = text + tok->offset;
    size_t len = tok->len, o = 0;
    if (tok->kind == CYPHER_TOK_PARAM) {
        s++;
        len--;
        if (len == 0 || *s != '`') {
            memcpy(out, s, len);
            return len;
        }
    }
    if (tok->kind == CYPHER_TOK_IDENT || tok->kind == CYPHER_TOK_PARAM) {
        if (len == 0 || *s != '`') {
            memcpy(out, s, len);
            return len;
        }
        for (size_t i = 1; i + 1 < len; i++) {
            out[o++] = s[i];
            if (s[i] == '`')
                i++;
        }
        return o;
    }
    if (tok->kind != CYPHER_TOK_STRING || len < 2)
        return 0;
    for (size_t i = 1; i + 1 < len; i++) {
        if (s[i] != '\\') {
            out[o++] = s[i];
            continue;
        }
        char e = s[++i];
        switch (e) {
        case 'b': case 'B': out[o++] = '\b'; break;
        case 'f': case 'F': out[o++] = '\f'; break;
        case 'n': case 'N': out[o++] = '\n'; break;
        case 'r': case 'R': out[o++] = '\r'; break;
        case 't': case 'T': out[o++] = '\t'; break;
        case 'u': case 'U': {
            size_t digits = e == 'u' ? 4 : 8;
            uint32_t cp = 0;
            for (size_t d = 0; d < digits; d++)
                cp = (cp << 4) | (uint32_t)hex_value((unsigned char)s[i + 1 + d]);
            i += digits;
            if (e == 'u' && cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo = 0;
                for (size_t d = 0; d < 4; d++)
                    lo = (lo << 4) | (uint32_t)hex_value((unsigned char)s[i + 3 + d]);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            }
            o += utf8_encode(cp, out + o);
            break;
        }
        default: out[o++] = e; break;   /* \\ \' \" */
        }
    }
    return o;
}

const char *cypher_lex_kind_name(cypher_tok_kind kind)
{
    if ((size_t)kind >= COUNT_OF(kind_names))
        return "?";
    return kind_names[kind];
}

const char *cypher_lex_kw_name(cypher_kw kw)
{
    if ((size_t)kw >= COUNT_OF(keywords))
        return "";
    return keywords[kw].name;
}

bool cypher_lex_kw_reserved(cypher_kw kw)
{
    return (size_t)kw < COUNT_OF(keywords) && keywords[kw].reserved;
}
