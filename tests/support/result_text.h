/*
 * A query's whole result as one text, rows in the order they came, for
 * the tests that compare results exactly (test_parallel_read_diff.c,
 * test_concurrency_parallel_read.c): floats bit for bit (%a) or, where
 * two ways of summing may differ in the last bits, to nine digits.  An
 * error renders as "error <code>: <message>", so errors compare too.
 * Include after <cmocka.h> and "strata.h".
 */
#ifndef STRATA_TESTS_RESULT_TEXT_H
#define STRATA_TESTS_RESULT_TEXT_H

#include <stdint.h>

#include "sbuf.h"

static inline void result_text_value(sbuf *b, const strata_value *v, bool exact)
{
    int64_t i;
    double f;
    bool t;
    const char *str;
    size_t len;
    strata_id id;
    switch (strata_value_type(v)) {
    case STRATA_NULL: sb_printf(b, "null"); break;
    case STRATA_BOOL:
        strata_value_get_bool(v, &t);
        sb_printf(b, t ? "true" : "false");
        break;
    case STRATA_INT:
        strata_value_get_int(v, &i);
        sb_printf(b, "%lld", (long long)i);
        break;
    case STRATA_FLOAT:
        strata_value_get_float(v, &f);
        if (exact)
            sb_printf(b, "%a", f);
        else
            sb_printf(b, "%.9g", f);
        break;
    case STRATA_STRING:
        strata_value_get_string(v, &str, &len);
        sb_printf(b, "'%.*s'", (int)len, str);
        break;
    case STRATA_LIST:
        sb_printf(b, "[");
        for (size_t k = 0; k < strata_value_list_len(v); k++) {
            result_text_value(b, strata_value_list_at(v, k), exact);
            sb_printf(b, ",");
        }
        sb_printf(b, "]");
        break;
    case STRATA_NODE: case STRATA_RELATIONSHIP:
        strata_value_get_id(v, &id);
        sb_printf(b, "#%llu", (unsigned long long)id);
        break;
    default: sb_printf(b, "?%d", (int)strata_value_type(v)); break;
    }
}

/* The result of a query (st its status), rendered; the result is freed.
   Free the text with free(). */
static inline char *result_text(strata_result *r, strata_status st, bool exact)
{
    sbuf b = {0};
    sb_printf(&b, "%s", "");
    if (st != STRATA_OK) {
        const strata_query_error *e = strata_result_error(r);
        sb_printf(&b, "error %s: %s", e ? e->code : "?", e ? e->message : "?");
        strata_result_free(&r);
        return b.p;
    }
    size_t cols = strata_result_columns(r, NULL);
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        for (size_t c = 0; c < cols; c++) {
            result_text_value(&b, row[c], exact);
            sb_printf(&b, "|");
        }
        sb_printf(&b, "\n");
    }
    const strata_query_error *e = strata_result_error(r);
    if (e)
        sb_printf(&b, "error %s: %s", e->code, e->message);
    strata_result_free(&r);
    return b.p;
}

#endif
