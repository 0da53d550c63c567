/*
 * `=~` (query/regex.h): Java-style syntax through PCRE2, whole-string
 * matching, clear errors for bad patterns, bounded time on pathological
 * ones, one compilation per pattern per statement, and PCRE2's memory
 * inside the allocation wrapper (failures are OutOfMemory, nothing leaks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include "query/regex.h"
#include "storage/mem.h"
#include "strata.h"
#include "support/sbuf.h"

/* The single value of q as text ("true", "false", "null", an integer), or
   "!Code: message". */
static char *run(strata_graph *g, const char *q)
{
    sbuf b = {0};
    strata_result *r = NULL;
    strata_status st = strata_query(g, q, NULL, &r);
    const strata_query_error *e = strata_result_error(r);
    const strata_value *const *row;
    if (st != STRATA_OK || e) {
        assert_non_null(e);
        sb_printf(&b, "!%s: %s", e->code, e->message);
    } else {
        while (strata_result_next(r, &row)) {
            bool t;
            int64_t i;
            if (strata_value_get_bool(row[0], &t) == STRATA_OK)
                sb_printf(&b, "%s%s", b.len ? " " : "", t ? "true" : "false");
            else if (strata_value_get_int(row[0], &i) == STRATA_OK)
                sb_printf(&b, "%s%lld", b.len ? " " : "", (long long)i);
            else
                sb_printf(&b, "%snull", b.len ? " " : "");
        }
        /* a lazily read result may fail while it is read */
        if ((e = strata_result_error(r)))
            sb_printf(&b, "!%s: %s", e->code, e->message);
    }
    strata_result_free(&r);
    sb_printf(&b, "%s", "");
    return b.p;
}

static void expect(strata_graph *g, const char *q, const char *want)
{
    char *got = run(g, q);
    bool error = want[0] == '!';
    if (error ? strncmp(got, want, strlen(want)) != 0 : strcmp(got, want) != 0)
        fail_msg("%s\n  got:      %s\n  expected: %s", q, got, want);
    free(got);
}

static void test_java_syntax(void **state)
{
    strata_graph *g = *state;
    static const char *const cases[][2] = {
        {"RETURN 'abc' =~ 'a.c'", "true"},
        {"RETURN '2024' =~ '\\\\d+'", "true"},
        {"RETURN '20x4' =~ '\\\\d+'", "false"},
        {"RETURN 'aaa' =~ 'a+?'", "true"},           /* lazy, still the whole string */
        {"RETURN 'foobar' =~ 'foo(?=bar).*'", "true"},
        {"RETURN 'foobaz' =~ 'foo(?=bar).*'", "false"},
        {"RETURN 'foobar' =~ '.*(?<=foo)bar'", "true"},
        {"RETURN 'foobar' =~ '(?!bar)\\\\w+'", "true"},
        {"RETURN 'HeLLo' =~ '(?i)hello'", "true"},
        {"RETURN 'HeLLo' =~ 'hello'", "false"},
        {"RETURN 'ΣΑΣ' =~ '(?i)σας'", "true"},       /* Unicode case folding in UTF mode */
        {"RETURN 'é' =~ '.'", "true"},               /* a character, not a byte */
        {"RETURN '😀x' =~ '.{2}'", "true"},
        {"RETURN 'word' =~ '\\\\p{L}+'", "true"},
        {"RETURN 'a\\nb' =~ 'a.b'", "false"},         /* . stops at a line end, as in Java */
        {"RETURN 'a\\nb' =~ '(?s)a.b'", "true"},
        {"RETURN 'aab' =~ '(a)\\\\1b'", "true"},
        {"RETURN 'x' =~ null", "null"},
        {"RETURN null =~ 'x'", "null"},
        {"RETURN 1 =~ 'x'", "null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect(g, cases[i][0], cases[i][1]);
}

/* The whole string must match, alternation included. */
static void test_whole_string(void **state)
{
    strata_graph *g = *state;
    static const char *const cases[][2] = {
        {"RETURN 'ab' =~ 'a|ab'", "true"},
        {"RETURN 'ab' =~ 'ab|a'", "true"},
        {"RETURN 'abc' =~ 'b'", "false"},
        {"RETURN 'abc' =~ 'a|b|c'", "false"},
        {"RETURN 'xab' =~ 'ab|xa'", "false"},
        {"RETURN 'abc' =~ 'abc|'", "true"},
        {"RETURN '' =~ 'abc|'", "true"},
        {"RETURN 'ab\\n' =~ 'ab$'", "false"},          /* $ does not forgive a last newline */
        {"RETURN 'ab' =~ '^ab$'", "true"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect(g, cases[i][0], cases[i][1]);
}

static void test_bad_patterns(void **state)
{
    strata_graph *g = *state;
    expect(g, "RETURN 'a' =~ '('",
           "!ArgumentError: invalid regular expression '(': missing closing parenthesis");
    expect(g, "RETURN 'a' =~ '[a-'", "!ArgumentError: invalid regular expression '[a-'");
    expect(g, "RETURN 'a' =~ 'a{2,1}'", "!ArgumentError: invalid regular expression");
    /* the pattern: 25 s and 3.3 GB in regcomp before */
    expect(g, "RETURN 'a' =~ 'a{255}{255}{255}'", "!ArgumentError: invalid regular expression");
    expect(g, "RETURN 'a' =~ reduce(s = 'aaaaaaaaaa', i IN range(1, 13) | s + s)",
           "!ArgumentError: regular expression of 81920 bytes is too long (at most 65536)");
    expect(g, "RETURN 'a' =~ '((a{255}){255}){255}'",
           "!ArgumentError: invalid regular expression '((a{255}){255}){255}': regular "
           "expression is too large");
    /* the error of a row after the first still fails the statement */
    expect(g, "UNWIND ['a', '('] AS p RETURN 'a' =~ p", "!ArgumentError: invalid regular");
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Catastrophic backtracking ends with an answer or a clear error, in
   bounded time (the limit is in steps; the bound here is loose on
   purpose: a shared machine's timing is noise, an exponential is not). */
static void test_pathological_patterns(void **state)
{
    strata_graph *g = *state;
    static const char *const cases[][2] = {
        {"RETURN reduce(s = '', i IN range(1, 40) | s + 'a') + '!' =~ '(a+)+\\\\d'",
         "!ArgumentError: regular expression '(a+)+\\d' gave up after 1000000 backtracking"},
        {"RETURN reduce(s = '', i IN range(1, 40) | s + 'a') + '!' =~ '(a|a)*\\\\d'",
         "!ArgumentError: regular expression '(a|a)*\\d' gave up"},
        {"RETURN reduce(s = '', i IN range(1, 30) | s + 'x') =~ '(x+x+)+y'", "false"},
        {"RETURN reduce(s = '', i IN range(1, 5000) | s + 'a') + 'c' =~ '(a+)+b'",
         "!ArgumentError: regular expression '(a+)+b' gave up"},
        /* 2^15 characters */
        {"RETURN reduce(s = 'ab', i IN range(1, 14) | s + s) =~ '(a|b)*'", "true"},
        {"RETURN reduce(s = '', i IN range(1, 30) | s + 'a') =~ '(((a*)*)*)*b'", "false"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        expect(g, cases[i][0], cases[i][1]);
        double s = seconds_since(&t0);
        if (s > 5.0)
            fail_msg("%s took %.1f s", cases[i][0], s);
    }
}

/* One compilation per pattern per statement, however many rows. */
static void test_compiled_once(void **state)
{
    strata_graph *g = *state;
    uint64_t before = regex_compile_count();
    expect(g, "UNWIND range(1, 5000) AS i WITH toString(i) AS s WHERE s =~ '\\\\d*7' "
              "RETURN count(*)", "500");
    assert_int_equal(regex_compile_count() - before, 1);
    /* a pattern per row: each distinct one once */
    before = regex_compile_count();
    expect(g, "UNWIND range(1, 3000) AS i RETURN sum(CASE WHEN 'x' =~ ('x|' + toString(i % 3)) "
              "THEN 1 ELSE 0 END)", "3000");
    assert_int_equal(regex_compile_count() - before, 3);
    /* more distinct patterns than the cache holds: still right */
    before = regex_compile_count();
    expect(g, "UNWIND range(1, 100) AS i RETURN sum(CASE WHEN toString(i) =~ (toString(i) + "
              "'|z') THEN 1 ELSE 0 END)", "100");
    assert_int_equal(regex_compile_count() - before, 100);
    /* the next statement compiles again (the cache is per statement) */
    before = regex_compile_count();
    expect(g, "RETURN '7' =~ '\\\\d*7'", "true");
    assert_int_equal(regex_compile_count() - before, 1);
}

/* PCRE2 allocates through the wrapper: every failure is OutOfMemory, and
   every byte comes back (the scratch context counts in test builds). */
static void test_allocation_failures(void **state)
{
    strata_graph *g = *state;
    static const char *const q =
        "UNWIND ['ab', 'abab', 'x'] AS s RETURN s =~ '(?:ab)+(?=$)' AS m";
    char *want = run(g, q);
    assert_string_equal(want, "true true false");
    size_t base = mem_ctx_bytes(mem_scratch());
    bool succeeded = false;
    for (long k = 1; k < 2000 && !succeeded; k++) {
        mem_fail_at(k);
        strata_result *r = NULL;
        strata_status st = strata_query(g, q, NULL, &r);
        /* a lazy result reads the rest of its rows as it goes */
        const strata_value *const *row;
        while (r && strata_result_next(r, &row))
            ;
        mem_fail_clear();
        const strata_query_error *e = strata_result_error(r);
        if (st == STRATA_OK && !e)
            succeeded = true;
        else if (e && strcmp(e->code, "OutOfMemory") != 0)
            fail_msg("failing allocation %ld: %s: %s", k, e->code, e->message);
        strata_result_free(&r);
        assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
    }
    assert_true(succeeded);
    char *again = run(g, q);
    assert_string_equal(again, want);
    free(want);
    free(again);
}

static int setup(void **state)
{
    strata_graph *g = NULL;
    if (strata_graph_new(&g) != STRATA_OK)
        return -1;
    *state = g;
    return 0;
}

static int teardown(void **state)
{
    strata_graph *g = *state;
    strata_graph_free(&g);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_java_syntax),
        cmocka_unit_test(test_whole_string),
        cmocka_unit_test(test_bad_patterns),
        cmocka_unit_test(test_pathological_patterns),
        cmocka_unit_test(test_compiled_once),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
