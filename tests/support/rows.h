/*
 * A query's rows as sorted text, for the differential tests that run one
 * query two ways (test_join_diff.c, test_query_diff.c) and compare the
 * rows as multisets.  Each row is its values rendered in column order, a
 * comma after each: integers, floats, 'strings', [lists], and null for
 * anything else.  Include after <cmocka.h> and "strata.h".
 */
#ifndef STRATA_TESTS_ROWS_H
#define STRATA_TESTS_ROWS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int rows_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends v's rendering to the NUL-terminated text in buf. */
static inline void rows_render(char *buf, size_t size, const strata_value *v)
{
    int64_t i;
    double f;
    const char *str;
    size_t len;
    size_t used = strlen(buf);
    if (strata_value_get_int(v, &i) == STRATA_OK)
        snprintf(buf + used, size - used, "%lld,", (long long)i);
    else if (strata_value_get_float(v, &f) == STRATA_OK)
        snprintf(buf + used, size - used, "%g,", f);
    else if (strata_value_get_string(v, &str, &len) == STRATA_OK)
        snprintf(buf + used, size - used, "'%.*s',", (int)len, str);
    else if (strata_value_type(v) == STRATA_LIST) {
        snprintf(buf + used, size - used, "[");
        for (size_t k = 0; k < strata_value_list_len(v); k++) {
            strata_value *e = NULL;
            assert_int_equal(strata_value_list_get(v, k, &e), STRATA_OK);
            rows_render(buf, size, e);
            strata_value_free(&e);
        }
        used = strlen(buf);
        snprintf(buf + used, size - used, "],");
    } else
        snprintf(buf + used, size - used, "null,");
}

/* The rows of q on g, each rendered, sorted; *n rows.  Free with
   rows_free.  A failing query fails the test. */
static inline char **rows(strata_graph *g, const char *q, size_t *n)
{
    strata_result *r = NULL;
    if (strata_query(g, q, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", q, strata_result_error(r)->message);
    size_t cols = strata_result_columns(r, NULL), cap = 16;
    char **out = malloc(cap * sizeof *out);
    assert_non_null(out);
    *n = 0;
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        char buf[512] = "";
        for (size_t c = 0; c < cols; c++)
            rows_render(buf, sizeof buf, row[c]);
        if (*n == cap) {
            out = realloc(out, (cap *= 2) * sizeof *out);
            assert_non_null(out);
        }
        assert_non_null(out[(*n)++] = strdup(buf));
    }
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    qsort(out, *n, sizeof *out, rows_cmp);
    return out;
}

static inline void rows_free(char **rs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(rs[i]);
    free(rs);
}

#endif
