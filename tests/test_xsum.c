/* The exact sum (query/xsum.c): against an exact reference on numbers of
   a bounded range, the same bits in any order and through merges, the
   rounding cases (ties to even, subnormals, overflow, cancellation),
   infinities and NaN, 64- and 128-bit integers, and out of memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "query/xsum.h"

static uint64_t rng_state = 1;
static uint64_t rnd64(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return rng_state ^ (rng_state >> 29);
}

static uint64_t bits_of(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

#define assert_same(a, b) assert_int_equal(bits_of(a), bits_of(b))

static double sum_of(const double *v, size_t n)
{
    mem_ctx *m = mem_scratch();
    xsum s = {0};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(xsum_add_double(&s, m, v[i]), 0);
    double r = xsum_round(&s);
    /* rounding leaves the value as it was */
    assert_same(xsum_round(&s), r);
    xsum_free(&s, m);
    return r;
}

/* Multiples of 2^-10 below 2^40: their exact sum is an __int128 of
   units, which the compiler converts to double rounding to nearest. */
static void test_against_exact(void **state)
{
    (void)state;
    double v[1000];
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + rnd64() % 1000;
        __int128 units = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t k = (int64_t)(rnd64() % ((uint64_t)1 << 50)) - ((int64_t)1 << 49);
            if (rnd64() % 4 == 0)
                k >>= rnd64() % 40;     /* small ones too */
            units += k;
            v[i] = ldexp((double)k, -10);
        }
        assert_same(sum_of(v, n), ldexp((double)units, -10));
    }
}

/* Numbers of every magnitude: shuffled, and summed in two halves merged,
   the same bits. */
static void test_any_order(void **state)
{
    (void)state;
    mem_ctx *m = mem_scratch();
    double v[400];
    for (int round = 0; round < 100; round++) {
        size_t n = 2 + rnd64() % 399;
        for (size_t i = 0; i < n; i++) {
            double mant = (double)(rnd64() >> 11) / 9007199254740992.0;
            int e = round % 3 == 0 ? (int)(rnd64() % 2100) - 1075 : (int)(rnd64() % 60) - 30;
            v[i] = ldexp(rnd64() % 2 ? mant : -mant, e);
        }
        double want = sum_of(v, n);
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = rnd64() % (i + 1);
            double t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
        assert_same(sum_of(v, n), want);
        xsum a = {0}, b = {0};
        size_t cut = rnd64() % n;
        for (size_t i = 0; i < n; i++)
            assert_int_equal(xsum_add_double(i < cut ? &a : &b, m, v[i]), 0);
        assert_int_equal(xsum_merge(&b, m, &a), 0);
        assert_same(xsum_round(&b), want);
        xsum_free(&a, m);
        xsum_free(&b, m);
    }
}

static void test_rounding(void **state)
{
    (void)state;
    const double one_up = nextafter(1.0, 2.0);
    const struct {
        double v[4];
        size_t n;
        double want;
    } cases[] = {
        {{1e308, 1e308, -1e308}, 3, 1e308},             /* no overflow on the way */
        {{1.0, 1e100, 1.0, -1e100}, 4, 2.0},            /* cancellation */
        {{1e16, 1.0, -1e16}, 3, 1.0},
        {{1.0, 0x1p-53}, 2, 1.0},                       /* a tie: to even */
        {{1.0, 0x1p-53, 0x1p-200}, 3, one_up},          /* just past the tie */
        {{one_up, 0x1p-53}, 2, nextafter(one_up, 2.0)}, /* a tie, odd: up */
        {{-1.0, -0x1p-53}, 2, -1.0},
        {{-1.0, -0x1p-53, -0x1p-300}, 3, -one_up},
        {{DBL_TRUE_MIN, DBL_TRUE_MIN}, 2, 2 * DBL_TRUE_MIN},
        {{DBL_MIN, -DBL_TRUE_MIN}, 2, DBL_MIN - DBL_TRUE_MIN},
        {{DBL_MAX, DBL_MAX}, 2, INFINITY},
        {{-DBL_MAX, -DBL_MAX, DBL_MAX}, 3, -DBL_MAX},
        {{0.5, -0.5}, 2, 0.0},
        {{-0.0}, 1, 0.0},
        {{INFINITY, 1.0}, 2, INFINITY},
        {{-INFINITY, DBL_MAX}, 2, -INFINITY},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        assert_same(sum_of(cases[c].v, cases[c].n), cases[c].want);
    double tenths[10];
    for (int i = 0; i < 10; i++)
        tenths[i] = 0.1;
    assert_same(sum_of(tenths, 10), 1.0);
    const double nans[][2] = {{INFINITY, -INFINITY}, {NAN, 1.0}, {1.0, -NAN}};
    for (size_t c = 0; c < sizeof nans / sizeof *nans; c++)
        assert_true(isnan(sum_of(nans[c], 2)));
}

static void test_integers(void **state)
{
    (void)state;
    mem_ctx *m = mem_scratch();
    xsum s = {0};
    assert_int_equal(xsum_add_int(&s, m, INT64_MAX), 0);
    assert_int_equal(xsum_add_int(&s, m, INT64_MAX), 0);
    assert_int_equal(xsum_add_int(&s, m, 2), 0);
    assert_same(xsum_round(&s), 0x1p64);
    assert_int_equal(xsum_add_int(&s, m, INT64_MIN), 0);
    assert_int_equal(xsum_add_int(&s, m, INT64_MIN), 0);
    assert_same(xsum_round(&s), 0.0);
    assert_true(xsum_is_zero(&s));
    /* 2^100 + 1 less 2^100: the wide integer went in exactly */
    assert_int_equal(xsum_add_wide(&s, m, ((__int128)1 << 100) + 1), 0);
    assert_int_equal(xsum_add_double(&s, m, -0x1p100), 0);
    assert_same(xsum_round(&s), 1.0);
    assert_int_equal(xsum_add_wide(&s, m, -((__int128)1 << 90)), 0);
    assert_same(xsum_round(&s), -0x1p90);
    /* 2^63 - 1 as a double is 2^63: the integer is exact, the double not */
    xsum_free(&s, m);
    assert_int_equal(xsum_add_int(&s, m, INT64_MAX), 0);
    assert_int_equal(xsum_add_double(&s, m, -0x1p63), 0);
    assert_same(xsum_round(&s), -1.0);
    xsum_free(&s, m);
}

/* Many adds (the carries are propagated every few in test builds),
   positive and negative, cancelling to a small remainder. */
static void test_carries(void **state)
{
    (void)state;
    mem_ctx *m = mem_scratch();
    xsum s = {0}, t = {0};
    for (int i = 0; i < 100000; i++) {
        assert_int_equal(xsum_add_double(&s, m, 0x1.fffffffffffffp40), 0);
        assert_int_equal(xsum_add_double(&t, m, -0x1.fffffffffffffp40), 0);
    }
    assert_int_equal(xsum_add_double(&s, m, 0x1p-60), 0);
    assert_int_equal(xsum_merge(&s, m, &t), 0);
    assert_same(xsum_round(&s), 0x1p-60);
    xsum_free(&s, m);
    xsum_free(&t, m);
}

/* A window that cannot grow: -1, and the sum as it was. */
static void test_out_of_memory(void **state)
{
    (void)state;
    mem_ctx *m = mem_scratch();
    size_t base = mem_ctx_bytes(m);
    xsum s = {0};
    assert_int_equal(xsum_add_double(&s, m, 3.0), 0);
    mem_fail_at(1);
    assert_int_equal(xsum_add_double(&s, m, 0x1p-900), -1);
    assert_int_equal(xsum_add_wide(&s, m, (__int128)1 << 120), -1);
    mem_fail_clear();
    assert_same(xsum_round(&s), 3.0);
    assert_int_equal(xsum_add_double(&s, m, 0x1p-900), 0);
    assert_same(xsum_round(&s), 3.0);
    assert_int_equal(xsum_add_double(&s, m, -3.0), 0);
    assert_same(xsum_round(&s), 0x1p-900);
    xsum_free(&s, m);
    assert_int_equal(mem_ctx_bytes(m), base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_exact), cmocka_unit_test(test_any_order),
        cmocka_unit_test(test_rounding),      cmocka_unit_test(test_integers),
        cmocka_unit_test(test_carries),       cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
