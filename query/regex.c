/* `=~` through PCRE2; regex.h states the rules and the limits. */
#include "query/regex.h"

#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "storage/utf8.h"

typedef struct regex_entry {
    char *pattern;          /* the pattern's bytes (owned), NULL when free */
    size_t len;
    pcre2_code *code;
} regex_entry;

struct regex_cache {
    mem_ctx *m;
    pcre2_general_context *gen;     /* PCRE2's allocations go to m */
    pcre2_compile_context *compile;
    pcre2_match_context *match;     /* the limits */
    pcre2_match_data *md;           /* reused by every match: it keeps the
                                       backtracking frames between rows */
    regex_entry slot[REGEX_CACHE_SLOTS];
    size_t victim;                  /* the slot a miss replaces next */
};

#ifdef STRATA_TESTING
static _Atomic uint64_t compiles;
uint64_t regex_compile_count(void) { return compiles; }
#endif

/* ---- PCRE2's memory through mem_ctx ---- */

static void *pcre_alloc(PCRE2_SIZE size, void *m) { return mem_alloc(m, size); }

static void pcre_free(void *p, void *m) { mem_free(m, p); }

static regex_cache *cache_new(exec *x)
{
    regex_cache *rc = mem_calloc(x->m, sizeof *rc);
    if (!rc)
        return NULL;
    rc->m = x->m;
    rc->gen = pcre2_general_context_create(pcre_alloc, pcre_free, x->m);
    if (rc->gen) {
        rc->compile = pcre2_compile_context_create(rc->gen);
        rc->match = pcre2_match_context_create(rc->gen);
        rc->md = pcre2_match_data_create(1, rc->gen);
    }
    if (!rc->compile || !rc->match || !rc->md) {
        x->regexes = rc;
        regex_cache_free(x);
        return NULL;
    }
    pcre2_set_max_pattern_length(rc->compile, REGEX_MAX_PATTERN);
    pcre2_set_match_limit(rc->match, REGEX_MATCH_LIMIT);
    pcre2_set_depth_limit(rc->match, REGEX_MATCH_LIMIT);
    pcre2_set_heap_limit(rc->match, REGEX_HEAP_LIMIT_KIB);
    return rc;
}

static void entry_clear(regex_cache *rc, regex_entry *e)
{
    if (!e->pattern)
        return;
    pcre2_code_free(e->code);
    mem_free(rc->m, e->pattern);
    *e = (regex_entry){0};
}

void regex_cache_free(exec *x)
{
    regex_cache *rc = x->regexes;
    if (!rc)
        return;
    for (size_t i = 0; i < REGEX_CACHE_SLOTS; i++)
        entry_clear(rc, &rc->slot[i]);
    pcre2_match_data_free(rc->md);
    pcre2_match_context_free(rc->match);
    pcre2_compile_context_free(rc->compile);
    pcre2_general_context_free(rc->gen);
    mem_free(rc->m, rc);
    x->regexes = NULL;
}

/* ---- compiling, once per pattern ---- */

/* Messages quote at most the first 60 characters of a pattern. */
static int shown(const char *pat, size_t lp) { return (int)utf8_skip(pat, lp, 60); }

static int compile_error(exec *x, const cypher_ast_node *at, int code, const char *pat,
                         size_t lp, PCRE2_SIZE offset)
{
    if (code == PCRE2_ERROR_NOMEMORY || code == PCRE2_ERROR_HEAP_FAILED)
        return exec_oom(x);
    PCRE2_UCHAR why[160];
    if (pcre2_get_error_message(code, why, sizeof why) < 0)
        snprintf((char *)why, sizeof why, "error %d", code);
    if (code == PCRE2_ERROR_PATTERN_STRING_TOO_LONG)
        return exec_fail(x, at, "ArgumentError", "InvalidArgumentValue",
                         "regular expression of %zu bytes is too long (at most %u)", lp,
                         REGEX_MAX_PATTERN);
    /* the offset in characters, as a user counts them */
    size_t where = utf8_count(pat, offset < lp ? offset : lp);
    return exec_fail(x, at, "ArgumentError", "InvalidArgumentValue",
                     "invalid regular expression '%.*s': %s (after character %zu)",
                     shown(pat, lp), pat, (const char *)why, where);
}

static const pcre2_code *compiled(exec *x, const cypher_ast_node *at, const char *pat,
                                  size_t lp)
{
    if (!x->regexes && !(x->regexes = cache_new(x))) {
        exec_oom(x);
        return NULL;
    }
    regex_cache *rc = x->regexes;
    for (size_t i = 0; i < REGEX_CACHE_SLOTS; i++)
        if (rc->slot[i].pattern && rc->slot[i].len == lp &&
            memcmp(rc->slot[i].pattern, pat, lp) == 0)
            return rc->slot[i].code;
    int err;
    PCRE2_SIZE offset;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)pat, lp,
                                     PCRE2_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED, &err,
                                     &offset, rc->compile);
    if (!code) {
        compile_error(x, at, err, pat, lp, offset);
        return NULL;
    }
#ifdef STRATA_TESTING
    compiles++;
#endif
    char *copy = mem_alloc(rc->m, lp ? lp : 1);
    if (!copy) {
        pcre2_code_free(code);
        exec_oom(x);
        return NULL;
    }
    memcpy(copy, pat, lp);
    regex_entry *e = &rc->slot[rc->victim];
    rc->victim = (rc->victim + 1) % REGEX_CACHE_SLOTS;
    entry_clear(rc, e);
    *e = (regex_entry){.pattern = copy, .len = lp, .code = code};
    return code;
}

/* ---- matching ---- */

int regex_full_match(exec *x, const cypher_ast_node *at, const char *s, size_t ls,
                     const char *pat, size_t lp, bool *matched)
{
    *matched = false;
    const pcre2_code *code = compiled(x, at, pat, lp);
    if (!code)
        return -1;
    regex_cache *rc = x->regexes;
    int r = pcre2_match(code, (PCRE2_SPTR)s, ls, 0, 0, rc->md, rc->match);
    if (r >= 0) {
        *matched = true;
        return 0;
    }
    switch (r) {
    case PCRE2_ERROR_NOMATCH:
        return 0;
    case PCRE2_ERROR_NOMEMORY:
        return exec_oom(x);
    case PCRE2_ERROR_MATCHLIMIT:
    case PCRE2_ERROR_DEPTHLIMIT:
        return exec_fail(x, at, "ArgumentError", NULL,
                         "regular expression '%.*s' gave up after %u backtracking steps "
                         "on a string of %zu bytes: simplify the pattern",
                         shown(pat, lp), pat, REGEX_MATCH_LIMIT, ls);
    case PCRE2_ERROR_HEAPLIMIT:
        return exec_fail(x, at, "ArgumentError", NULL,
                         "regular expression '%.*s' needs more than %u KiB to backtrack "
                         "over a string of %zu bytes: simplify the pattern",
                         shown(pat, lp), pat, REGEX_HEAP_LIMIT_KIB, ls);
    default: {
        PCRE2_UCHAR why[160];
        if (pcre2_get_error_message(r, why, sizeof why) < 0)
            snprintf((char *)why, sizeof why, "error %d", r);
        return exec_fail(x, at, "ArgumentError", NULL, "regular expression '%.*s': %s",
                         shown(pat, lp), pat, (const char *)why);
    }
    }
}
