/*
 * What the randomised model tests share: a seeded xorshift64 generator and
 * the reference model's property values (absent, an integer, or a short
 * string), with conversion to and comparison against API values.
 * Include after <cmocka.h> and "strata.h".
 */
#ifndef STRATA_TESTS_MODEL_VALUE_H
#define STRATA_TESTS_MODEL_VALUE_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define STR_MAX 32

static inline uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static inline uint32_t below(uint64_t *s, uint32_t n) { return (uint32_t)(xorshift(s) % n); }
static inline bool chance(uint64_t *s, uint32_t percent) { return below(s, 100) < percent; }

typedef enum mval_kind { MV_NONE = 0, MV_INT, MV_STR } mval_kind;

typedef struct mval {
    mval_kind kind;
    int64_t i;
    char s[STR_MAX];
} mval;

static inline mval mv_int(int64_t i) { return (mval){ .kind = MV_INT, .i = i }; }

static inline mval mv_str(const char *s)
{
    mval v = { .kind = MV_STR };
    snprintf(v.s, sizeof v.s, "%s", s);
    return v;
}

static inline bool mval_eq(const mval *a, const mval *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == MV_INT)
        return a->i == b->i;
    return a->kind == MV_NONE || strcmp(a->s, b->s) == 0;
}

static inline const char *mval_text(const mval *v, char *buf, size_t n)
{
    if (v->kind == MV_INT)
        snprintf(buf, n, "%" PRId64, v->i);
    else if (v->kind == MV_STR)
        snprintf(buf, n, "\"%s\"", v->s);
    else
        snprintf(buf, n, "null");
    return buf;
}

static inline strata_value *mval_to_api(const mval *v)
{
    strata_value *out = v->kind == MV_INT   ? strata_value_int(v->i)
                        : v->kind == MV_STR ? strata_value_string(v->s, strlen(v->s))
                                            : strata_value_null();
    assert_non_null(out);
    return out;
}

static inline const char *api_text(const strata_value *v, char *buf, size_t n)
{
    int64_t i;
    const char *s;
    size_t len;
    switch (strata_value_type(v)) {
    case STRATA_NULL:
        snprintf(buf, n, "null");
        break;
    case STRATA_INT:
        strata_value_get_int(v, &i);
        snprintf(buf, n, "%" PRId64, i);
        break;
    case STRATA_STRING:
        strata_value_get_string(v, &s, &len);
        snprintf(buf, n, "\"%.*s\"", (int)len, s);
        break;
    default:
        snprintf(buf, n, "<a value of type %d>", (int)strata_value_type(v));
    }
    return buf;
}

static inline bool api_matches(const strata_value *got, const mval *want)
{
    int64_t i;
    const char *s;
    size_t len;
    switch (want->kind) {
    case MV_INT:
        return strata_value_type(got) == STRATA_INT &&
               strata_value_get_int(got, &i) == STRATA_OK && i == want->i;
    case MV_STR:
        return strata_value_type(got) == STRATA_STRING &&
               strata_value_get_string(got, &s, &len) == STRATA_OK &&
               len == strlen(want->s) && memcmp(s, want->s, len) == 0;
    default:
        return strata_value_type(got) == STRATA_NULL;
    }
}

#endif
