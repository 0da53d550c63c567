/* Cypher's string functions; functions_string.h states the rules. */
#include "query/functions_string.h"

#include <string.h>
#include <utf8proc.h>

#include "storage/utf8.h"

static int bad_arg(const evalctx *c, const cypher_ast_node *at, const char *fn)
{
    return exec_fail(c->x, at, "TypeError", "InvalidArgumentType",
                     "invalid argument type for %s()", fn);
}

/* ---- an output buffer that grows ---- */

typedef struct outbuf {
    exec *x;
    const cypher_ast_node *at;   /* where a string too large is reported */
    char *p;
    size_t len, cap;
} outbuf;

/* Room for more bytes; a string past QUERY_STRING_MAX is an error. */
static int out_reserve(outbuf *b, size_t more)
{
    if (b->cap - b->len >= more)
        return 0;
    if (more > QUERY_STRING_MAX - b->len || b->len > QUERY_STRING_MAX)
        return exec_too_large(b->x, b->at, "string", (uint64_t)b->len + more, QUERY_STRING_MAX);
    size_t cap = b->cap ? b->cap : 16;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2)
            return exec_oom(b->x);
        cap *= 2;
    }
    char *p = mem_realloc(b->x->m, b->p, cap);
    if (!p)
        return exec_oom(b->x);
    b->p = p;
    b->cap = cap;
    return 0;
}

static int out_bytes(outbuf *b, const char *s, size_t n)
{
    if (out_reserve(b, n) != 0)
        return -1;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return 0;
}

static int out_cp(outbuf *b, uint32_t cp)
{
    char enc[UTF8_MAX_BYTES];
    return out_bytes(b, enc, utf8_encode(cp, enc));
}

/* Makes the string and frees the buffer, whatever rc says. */
static int out_finish(outbuf *b, int rc, value *out)
{
    if (rc == 0)
        rc = make_string(b->x, b->p ? b->p : "", b->len, out);
    if (b->p)
        mem_free(b->x->m, b->p);
    b->p = NULL;
    return rc;
}

/* ---- case mapping ---- */

static utf8proc_category_t category(uint32_t cp) { return utf8proc_category((utf8proc_int32_t)cp); }

static bool cased(uint32_t cp)
{
    utf8proc_category_t k = category(cp);
    return k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LL || k == UTF8PROC_CATEGORY_LT;
}

/* Unicode's Case_Ignorable, by general category: marks, format
   characters, modifier letters and modifier symbols. */
static bool case_ignorable(uint32_t cp)
{
    utf8proc_category_t k = category(cp);
    return k == UTF8PROC_CATEGORY_MN || k == UTF8PROC_CATEGORY_ME || k == UTF8PROC_CATEGORY_CF ||
           k == UTF8PROC_CATEGORY_LM || k == UTF8PROC_CATEGORY_SK;
}

/* Final_Sigma: the sigma at s[at..] follows a cased letter and precedes
   none, case-ignorable characters skipped on both sides. */
static bool final_sigma(const char *s, size_t len, size_t at, size_t sigma_len)
{
    bool after_cased = false;
    for (size_t i = at; i > 0;) {
        size_t b = i - 1;
        while (b > 0 && ((unsigned char)s[b] & 0xC0) == 0x80)
            b--;
        uint32_t cp;
        utf8_decode(s + b, i - b, &cp);
        if (!case_ignorable(cp)) {
            after_cased = cased(cp);
            break;
        }
        i = b;
    }
    if (!after_cased)
        return false;
    for (size_t i = at + sigma_len; i < len;) {
        uint32_t cp;
        size_t n = utf8_decode(s + i, len - i, &cp);
        if (!case_ignorable(cp))
            return !cased(cp);
        i += n;
    }
    return true;
}

/* The uppercase of cp: for a lowercase letter whose full case folding is
   longer than one character (ß, ŉ, ǰ, the ligatures, the Greek letters
   with ypogegrammeni ...) the uppercase of that folding, which is what
   Unicode's SpecialCasing gives those letters ("ß" -> "SS"); else the
   simple mapping. */
static int upper_cp(outbuf *b, uint32_t cp)
{
    if (cp >= 0x80 && category(cp) == UTF8PROC_CATEGORY_LL) {
        utf8proc_int32_t fold[8];
        int last = 0;
        utf8proc_ssize_t k = utf8proc_decompose_char((utf8proc_int32_t)cp, fold, 8,
                                                     UTF8PROC_CASEFOLD, &last);
        if (k > 1 && k <= 8) {
            for (utf8proc_ssize_t i = 0; i < k; i++)
                if (out_cp(b, (uint32_t)utf8proc_toupper(fold[i])) != 0)
                    return -1;
            return 0;
        }
    }
    return out_cp(b, (uint32_t)utf8proc_toupper((utf8proc_int32_t)cp));
}

static int map_case(const evalctx *c, const cypher_ast_node *at, value *a, bool upper,
                    value *out)
{
    if (value_kind(&a[0]) != VAL_STRING)
        return bad_arg(c, at, upper ? "toUpper" : "toLower");
    size_t len;
    const char *s = value_str(&a[0], &len);
    outbuf b = {.x = c->x};
    int rc = out_reserve(&b, len);
    for (size_t i = 0; rc == 0 && i < len;) {
        uint32_t cp;
        size_t n = utf8_decode(s + i, len - i, &cp);
        if (n == 0)   /* cannot happen on a well-formed string: copy the byte */
            n = 1, cp = (unsigned char)s[i];
        if (upper)
            rc = upper_cp(&b, cp);
        else if (cp == 0x03A3 && final_sigma(s, len, i, n))
            rc = out_cp(&b, 0x03C2);
        else
            rc = out_cp(&b, (uint32_t)utf8proc_tolower((utf8proc_int32_t)cp));
        i += n;
    }
    return out_finish(&b, rc, out);
}

int strfn_upper(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return map_case(c, at, a, true, out);
}

int strfn_lower(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return map_case(c, at, a, false, out);
}

/* ---- trimming ---- */

/* Java's Character.isWhitespace, which Neo4j's trim uses. */
static bool java_whitespace(uint32_t cp)
{
    if ((cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20))
        return true;
    if (cp < 0x80 || cp == 0x00A0 || cp == 0x2007 || cp == 0x202F)
        return false;
    utf8proc_category_t k = category(cp);
    return k == UTF8PROC_CATEGORY_ZS || k == UTF8PROC_CATEGORY_ZL || k == UTF8PROC_CATEGORY_ZP;
}

/* The start of the last character of s[0..end). */
static size_t prev_start(const char *s, size_t end)
{
    size_t b = end - 1;
    while (b > 0 && ((unsigned char)s[b] & 0xC0) == 0x80)
        b--;
    return b;
}

static int trim_impl(const evalctx *c, const cypher_ast_node *at, value *a, bool left,
                     bool right, const char *fn, value *out)
{
    if (value_kind(&a[0]) != VAL_STRING)
        return bad_arg(c, at, fn);
    size_t len;
    const char *s = value_str(&a[0], &len);
    size_t b = 0, e = len;
    uint32_t cp;
    size_t k;
    while (left && b < e && (k = utf8_decode(s + b, e - b, &cp)) != 0 && java_whitespace(cp))
        b += k;
    while (right && e > b) {
        size_t p = prev_start(s, e);
        if (utf8_decode(s + p, e - p, &cp) == 0 || !java_whitespace(cp))
            break;
        e = p;
    }
    return make_string(c->x, s + b, e - b, out);
}

int strfn_trim(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return trim_impl(c, at, a, true, true, "trim", out);
}

int strfn_ltrim(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return trim_impl(c, at, a, true, false, "ltrim", out);
}

int strfn_rtrim(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return trim_impl(c, at, a, false, true, "rtrim", out);
}

/* ---- cutting by code points ---- */

int strfn_substring(const evalctx *c, const cypher_ast_node *at, value *a, size_t n,
                    value *out)
{
    if (value_kind(&a[0]) != VAL_STRING || value_kind(&a[1]) != VAL_INT ||
        (n > 2 && value_kind(&a[2]) != VAL_INT))
        return bad_arg(c, at, "substring");
    if (a[1].u.i < 0 || (n > 2 && a[2].u.i < 0))
        return exec_fail(c->x, at, "ArgumentError", "NumberOutOfRange",
                         "substring() arguments must not be negative");
    size_t len;
    const char *s = value_str(&a[0], &len);
    size_t b = utf8_skip(s, len, (uint64_t)a[1].u.i > SIZE_MAX ? SIZE_MAX : (size_t)a[1].u.i);
    size_t e = n > 2 ? b + utf8_skip(s + b, len - b,
                                     (uint64_t)a[2].u.i > SIZE_MAX ? SIZE_MAX : (size_t)a[2].u.i)
                     : len;
    return make_string(c->x, s + b, e - b, out);
}

static int left_right(const evalctx *c, const cypher_ast_node *at, value *a, bool left,
                      value *out)
{
    const char *fn = left ? "left" : "right";
    if (value_kind(&a[0]) != VAL_STRING || value_kind(&a[1]) != VAL_INT)
        return bad_arg(c, at, fn);
    if (a[1].u.i < 0)
        return exec_fail(c->x, at, "ArgumentError", "NumberOutOfRange",
                         "%s(): the length must not be negative", fn);
    size_t len;
    const char *s = value_str(&a[0], &len);
    size_t k = (uint64_t)a[1].u.i > SIZE_MAX ? SIZE_MAX : (size_t)a[1].u.i;
    if (left)
        return make_string(c->x, s, utf8_skip(s, len, k), out);
    size_t count = utf8_count(s, len);
    size_t b = k >= count ? 0 : utf8_skip(s, len, count - k);
    return make_string(c->x, s + b, len - b, out);
}

int strfn_left(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return left_right(c, at, a, true, out);
}

int strfn_right(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    return left_right(c, at, a, false, out);
}

int strfn_reverse(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    if (value_kind(&a[0]) != VAL_STRING)
        return bad_arg(c, at, "reverse");
    size_t len;
    const char *s = value_str(&a[0], &len);
    outbuf b = {.x = c->x};
    int rc = out_reserve(&b, len);
    /* code points in reverse order, each one's bytes in order */
    for (size_t e = len; rc == 0 && e > 0;) {
        size_t p = prev_start(s, e);
        rc = out_bytes(&b, s + p, e - p);
        e = p;
    }
    return out_finish(&b, rc, out);
}

/* ---- search and replace ---- */

/* replace(s, search, by): every occurrence, left to right, without
   overlaps.  An empty search matches between every two characters and at
   both ends, as Java's String.replace does ("ab" -> "xaxbx"). */
int strfn_replace(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    for (int i = 0; i < 3; i++) {
        if (value_is_null(&a[i]))
            return 0;
        if (value_kind(&a[i]) != VAL_STRING)
            return bad_arg(c, at, "replace");
    }
    size_t ls, lf, lr;
    const char *s = value_str(&a[0], &ls), *f = value_str(&a[1], &lf),
               *r = value_str(&a[2], &lr);
    outbuf b = {.x = c->x, .at = at};
    int rc = out_reserve(&b, ls);
    if (lf == 0) {
        for (size_t i = 0; rc == 0 && i <= ls;) {
            rc = exec_tick(c->x) != 0 ? -1 : out_bytes(&b, r, lr);
            if (i == ls || rc != 0)
                break;
            size_t k = utf8_next(s + i, ls - i);
            rc = out_bytes(&b, s + i, k);
            i += k;
        }
        return out_finish(&b, rc, out);
    }
    /* well-formed UTF-8 cannot match a well-formed needle in the middle of
       a character, so a byte search finds exactly the character matches */
    for (size_t i = 0; rc == 0;) {
        const char *hit = memmem(s + i, ls - i, f, lf);
        size_t upto = hit ? (size_t)(hit - s) : ls;
        rc = exec_tick(c->x) != 0 ? -1 : out_bytes(&b, s + i, upto - i);
        if (!hit || rc != 0)
            break;
        rc = out_bytes(&b, r, lr);
        i = upto + lf;
    }
    return out_finish(&b, rc, out);
}

/* split(s, delimiter): the pieces between occurrences; an empty delimiter
   splits into characters. */
int strfn_split(const evalctx *c, const cypher_ast_node *at, value *a, size_t n, value *out)
{
    (void)n;
    if (value_kind(&a[0]) != VAL_STRING || value_kind(&a[1]) != VAL_STRING)
        return bad_arg(c, at, "split");
    size_t ls, ld;
    const char *s = value_str(&a[0], &ls), *d = value_str(&a[1], &ld);
    size_t cap = 8, cnt = 0;
    value *items = mem_alloc(c->x->m, cap * sizeof(value));
    if (!items)
        return exec_oom(c->x);
    int rc = 0;
    for (size_t i = 0;;) {
        const char *hit;
        if (ld)
            hit = memmem(s + i, ls - i, d, ld);
        else {
            size_t k = utf8_next(s + i, ls - i);
            hit = i + k < ls ? s + i + k : NULL;
        }
        size_t upto = hit ? (size_t)(hit - s) : ls;
        if ((rc = exec_tick(c->x)) != 0)
            break;
        if (cnt == QUERY_LIST_MAX) {
            rc = exec_too_large(c->x, at, "list", (uint64_t)cnt + 1, QUERY_LIST_MAX);
            break;
        }
        if (cnt == cap) {
            value *grown = mem_realloc(c->x->m, items, 2 * cap * sizeof(value));
            if (!grown) {
                rc = exec_oom(c->x);
                break;
            }
            items = grown;
            cap *= 2;
        }
        if ((rc = make_string(c->x, s + i, upto - i, &items[cnt])) != 0)
            break;
        cnt++;
        if (!hit)
            break;
        i = upto + ld;
    }
    if (rc == 0 && value_list_from(c->x->m, items, cnt, out) != 0)
        rc = exec_oom(c->x);
    else if (rc != 0)
        for (size_t k = 0; k < cnt; k++)
            value_release(&items[k]);
    mem_free(c->x->m, items);
    return rc;
}
