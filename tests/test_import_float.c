/*
 * The float conversion of strata_import's columns (query/import_header.h):
 * the fast path for plain decimals must give bit for bit what strtod
 * gives, for random decimals of every length around the path's limit (15
 * digits), with signs, leading zeros, points first or last and spaces
 * around, and must leave everything else (exponents, hex, inf, nan, too
 * many digits, junk) to strtod's verdict.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "query/import_header.h"

static uint64_t rng = 0x3c6ef372fe94f82bull;

static uint64_t below(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng % n;
}

/* field converted as a float column with the fast path on or off: the
   return code and the value's bits (or the message) in out. */
static int convert(const char *field, bool fast, char *out, size_t outlen)
{
    column c = { .kind = COL_PROPERTY, .type = TYPE_FLOAT, .name = "f" };
    csv_field f = { field, strlen(field), false };
    value v;
    char err[256] = "";
    strata_status st = STRATA_OK;
    import_fast_float_for_tests = fast;
    int rc = column_value(&c, f, ';', &v, err, sizeof err, &st);
    import_fast_float_for_tests = true;
    if (rc != 0) {
        snprintf(out, outlen, "error %d: %s", (int)st, err);
        return rc;
    }
    if (value_is_null(&v)) {   /* an empty field */
        snprintf(out, outlen, "null");
        return rc;
    }
    assert_int_equal(value_kind(&v), VAL_FLOAT);
    uint64_t bits;
    memcpy(&bits, &v.u.f, sizeof bits);
    snprintf(out, outlen, "%016llx", (unsigned long long)bits);
    return rc;
}

static void same(const char *field)
{
    char fast[300], slow[300];
    int a = convert(field, true, fast, sizeof fast), b = convert(field, false, slow, sizeof slow);
    if (a != b || strcmp(fast, slow) != 0)
        fail_msg("'%s': fast %s, strtod %s", field, fast, slow);
}

static void test_fixed_cases(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "0", "-0", "+0", "0.0", "-0.0", ".5", "5.", "-.5", "+.5", ".", "-", "+", "",
        " 1.25 ", "\t2.5", "1.2.3", "1..2", "--1", "+-1", "1-", "12a", "0.1", "0.2", "0.3",
        "999999999999999", "9999999999999999", "0.000000000000001", "0.0000000000000001",
        "123456789012345", "12345678901234.5", "1234567890123456", "000000000000001.5",
        "1e3", "1E3", "0x10", "inf", "nan", "-Infinity", "1e400", "1e-400", "4.9e-324",
        "9007199254740993", "0.30000000000000004", "3.141592653589793",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        same(cases[i]);
}

static void test_random_decimals(void **state)
{
    (void)state;
    char field[64];
    for (int round = 0; round < 200000; round++) {
        size_t n = 0;
        if (below(8) == 0)
            field[n++] = ' ';
        if (below(3) == 0)
            field[n++] = below(2) ? '-' : '+';
        size_t digits = below(19), point = below(digits + 2);
        for (size_t i = 0; i < digits; i++) {
            if (i == point)
                field[n++] = '.';
            field[n++] = (char)('0' + (below(4) == 0 ? 0 : below(10)));
        }
        if (point == digits && below(2))
            field[n++] = '.';
        if (below(50) == 0)
            field[n++] = below(2) ? 'e' : 'x';
        if (below(8) == 0)
            field[n++] = ' ';
        field[n] = '\0';
        same(field);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_cases),
        cmocka_unit_test(test_random_decimals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
