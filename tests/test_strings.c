/*
 * The string functions count code points and map case by Unicode
 * (query/functions_string.h): a table of queries and their rows, then the
 * class check — every string function, over strings of one- to four-byte
 * characters and every cut point, returns well-formed UTF-8 — then the
 * allocation-failure sweep of the functions that build their result.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <string.h>

#include "storage/mem.h"
#include "storage/utf8.h"
#include "strata.h"
#include "support/sbuf.h"

/* Strings as they are (the test file is UTF-8), lists in brackets. */
static void show(sbuf *b, const strata_value *v)
{
    const char *s;
    size_t n;
    int64_t i;
    switch (strata_value_type(v)) {
    case STRATA_NULL:
        sb_printf(b, "null");
        break;
    case STRATA_INT:
        assert_int_equal(strata_value_get_int(v, &i), STRATA_OK);
        sb_printf(b, "%" PRId64, i);
        break;
    case STRATA_STRING:
        assert_int_equal(strata_value_get_string(v, &s, &n), STRATA_OK);
        assert_true(utf8_check(s, n, NULL));
        sb_printf(b, "'%.*s'", (int)n, s);
        break;
    case STRATA_LIST:
        sb_printf(b, "[");
        for (size_t k = 0; k < strata_value_list_len(v); k++) {
            strata_value *item = NULL;
            assert_int_equal(strata_value_list_get(v, k, &item), STRATA_OK);
            sb_printf(b, "%s", k ? ", " : "");
            show(b, item);
            strata_value_free(&item);
        }
        sb_printf(b, "]");
        break;
    default:
        sb_printf(b, "?%d", (int)strata_value_type(v));
    }
}

/* The rows of q, one line each, cells separated by " | "; or "!" and the
   error's code and message. */
static char *run(strata_graph *g, const char *q)
{
    sbuf b = {0};
    strata_result *r = NULL;
    strata_status st = strata_query(g, q, NULL, &r);
    const strata_query_error *e = strata_result_error(r);
    if (st != STRATA_OK || e) {
        assert_non_null(e);
        sb_printf(&b, "!%s: %s", e->code, e->message);
    } else {
        const strata_value *const *row;
        size_t nc = strata_result_columns(r, NULL);
        while (strata_result_next(r, &row)) {
            for (size_t c = 0; c < nc; c++) {
                sb_printf(&b, "%s", c ? " | " : "");
                show(&b, row[c]);
            }
            sb_printf(&b, "\n");
        }
    }
    strata_result_free(&r);
    sb_printf(&b, "%s", "");
    return b.p;
}

typedef struct scase {
    const char *query;
    const char *rows;   /* a line per row, or "!Code: message" */
} scase;

static const scase cases[] = {
    /* cuts count code points: é is two bytes, € three, 😀 four */
    {"RETURN left('é', 1), left('aé€😀', 3), left('aé', 0), left('aé', 9)",
     "'é' | 'aé€' | '' | 'aé'\n"},
    {"RETURN right('é', 1), right('aé€😀', 2), right('aé', 0), right('aé', 9)",
     "'é' | '€😀' | '' | 'aé'\n"},
    {"RETURN substring('aé€😀b', 1, 3), substring('aé€😀b', 3), substring('é', 5)",
     "'é€😀' | '😀b' | ''\n"},
    {"RETURN split('aé€😀', ''), split('', ''), split('a€b€', '€'), split('😀', 'x')",
     "['a', 'é', '€', '😀'] | [''] | ['a', 'b', ''] | ['😀']\n"},
    {"RETURN reverse('aé€😀'), size('aé€😀'), size('')", "'😀€éa' | 4 | 0\n"},
    {"RETURN replace('aé€', '', '-'), replace('', '', 'x'), replace('é€é', 'é', 'e')",
     "'-a-é-€-' | 'x' | 'e€e'\n"},
    {"RETURN left('abc', -1)", "!ArgumentError: left(): the length must not be negative"},
    {"RETURN right('abc', -1)", "!ArgumentError: right(): the length must not be negative"},
    {"RETURN left(null, 1), right('a', null), split(null, ''), toUpper(null)",
     "null | null | null | null\n"},
    {"RETURN left(1, 1)", "!TypeError: invalid argument type for left()"},
    /* case mapping is Unicode's */
    {"RETURN toUpper('straße'), toUpper('ﬁx'), toUpper('ŉ'), toUpper('ǆ')",
     "'STRASSE' | 'FIX' | 'ʼN' | 'Ǆ'\n"},
    {"RETURN toUpper('αβγ ωϊ'), toLower('ΑΒΓ'), toUpper('привет'), toLower('ПРИВЕТ')",
     "'ΑΒΓ ΩΪ' | 'αβγ' | 'ПРИВЕТ' | 'привет'\n"},
    {"RETURN toLower('ΟΔΟΣ'), toLower('ΣΑΣ ΣΑΣ.'), toLower('Σ'), toLower('AΣB')",
     "'οδος' | 'σας σας.' | 'σ' | 'aσb'\n"},
    {"RETURN toUpper('ǅ'), toLower('ǅ'), toUpper('ABC def 123'), toLower('ÀÉÎ')",
     "'Ǆ' | 'ǆ' | 'ABC DEF 123' | 'àéî'\n"},
    /* trim strips Java's white space, code point by code point */
    {"RETURN trim('\\u3000\\u2003 a b\\t\\n\\u2028'), ltrim('\\u2009x '), rtrim(' x\\u205F')",
     "'a b' | 'x ' | ' x'\n"},
    {"RETURN size(trim('\\u00A0x\\u00A0')), size(trim('\\u202Fx')), trim('é')", "3 | 2 | 'é'\n"},
};

static void test_string_functions(void **state)
{
    strata_graph *g = *state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = run(g, cases[i].query);
        bool error = cases[i].rows[0] == '!';
        bool ok = error ? strncmp(got, cases[i].rows, strlen(cases[i].rows)) == 0
                        : strcmp(got, cases[i].rows) == 0;
        if (!ok)
            fail_msg("%s\n  got:      %s\n  expected: %s", cases[i].query, got, cases[i].rows);
        free(got);
    }
}

/* The class: whatever the cut, no function returns a piece of a
   character.  Every function that takes a length or an offset, at every
   value from 0 to past the end, over strings mixing every width. */
static void test_no_function_cuts_a_character(void **state)
{
    strata_graph *g = *state;
    static const char *const calls[] = {
        "left(s, i)", "right(s, i)", "substring(s, i)", "substring(s, 0, i)",
        "substring(s, i, 1)", "split(s, '')", "reverse(s)", "toUpper(s)", "toLower(s)",
        "trim(s)", "ltrim(s)", "rtrim(s)", "replace(s, '', '.')", "replace(s, 'é', '')",
        "split(s, '€')",
    };
    for (size_t k = 0; k < sizeof calls / sizeof *calls; k++) {
        char q[512];
        snprintf(q, sizeof q,
                 "UNWIND ['é€😀a', '😀😀', 'aé', '\\u3000é\\u3000', 'ß\\u0301Σ'] AS s "
                 "UNWIND range(0, 9) AS i RETURN %s, size(s)", calls[k]);
        char *got = run(g, q);   /* show() asserts every string is UTF-8 */
        if (got[0] == '!')
            fail_msg("%s: %s", calls[k], got);
        free(got);
    }
}

/* Out of memory in a function that builds its result is an error, never
   a crash or a leak. */
static void test_allocation_failures(void **state)
{
    strata_graph *g = *state;
    static const char *const q =
        "RETURN toUpper('straße ǆ'), toLower('ΟΔΟΣ'), replace('aé€', '', '-'), "
        "split('aé€', ''), reverse('aé€😀'), trim(' é ')";
    char *want = run(g, q);
    assert_true(want[0] != '!');
    bool succeeded = false;
    for (long k = 1; k < 400 && !succeeded; k++) {
        mem_fail_at(k);
        strata_result *r = NULL;
        strata_status st = strata_query(g, q, NULL, &r);
        mem_fail_clear();
        const strata_query_error *e = strata_result_error(r);
        if (st == STRATA_OK && !e)
            succeeded = true;
        else if (e)
            assert_string_equal(e->code, "OutOfMemory");
        strata_result_free(&r);
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
        cmocka_unit_test(test_string_functions),
        cmocka_unit_test(test_no_function_cuts_a_character),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
