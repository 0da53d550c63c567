/*
 * A canonical dump of a view through the public API, for the tests that
 * assert a failed or rolled-back write changed nothing: a growable text
 * buffer and the dumps of a value, an entity's properties, a node's
 * neighbours and an iterator.  Include after <cmocka.h> and "strata.h".
 */
#ifndef STRATA_TESTS_API_DUMP_H
#define STRATA_TESTS_API_DUMP_H

#include <inttypes.h>
#include <stdbool.h>

#include "sbuf.h"

/* Exact: floats to 17 digits, strings byte by byte (non-printable bytes
   escaped), lists element by element. */
static inline void dump_value(sbuf *b, const strata_value *v)
{
    int64_t i;
    bool t;
    double f;
    const char *s;
    size_t n;
    switch (strata_value_type(v)) {
    case STRATA_NULL:
        sb_printf(b, "null");
        break;
    case STRATA_BOOL:
        assert_int_equal(strata_value_get_bool(v, &t), STRATA_OK);
        sb_printf(b, "%s", t ? "true" : "false");
        break;
    case STRATA_INT:
        assert_int_equal(strata_value_get_int(v, &i), STRATA_OK);
        sb_printf(b, "%" PRId64, i);
        break;
    case STRATA_FLOAT:
        assert_int_equal(strata_value_get_float(v, &f), STRATA_OK);
        sb_printf(b, "%.17gf", f);
        break;
    case STRATA_STRING:
        assert_int_equal(strata_value_get_string(v, &s, &n), STRATA_OK);
        sb_printf(b, "s%zu\"", n);
        for (size_t k = 0; k < n; k++) {
            unsigned char c = (unsigned char)s[k];
            if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
                sb_printf(b, "%c", c);
            else
                sb_printf(b, "\\x%02x", c);
        }
        sb_printf(b, "\"");
        break;
    case STRATA_LIST:
        sb_printf(b, "[");
        for (size_t k = 0; k < strata_value_list_len(v); k++) {
            strata_value *item = NULL;
            assert_int_equal(strata_value_list_get(v, k, &item), STRATA_OK);
            sb_printf(b, "%s", k ? "," : "");
            dump_value(b, item);
            strata_value_free(&item);
        }
        sb_printf(b, "]");
        break;
    default:
        sb_printf(b, "?type%d", (int)strata_value_type(v));
        break;
    }
}

#define DUMP_MAX_KEYS 512

/* An entity's properties, keys in id order; a listed key never holds null
   (absence is null). */
static inline void dump_props(sbuf *b, strata_view *v, bool is_rel, strata_id id)
{
    strata_token keys[DUMP_MAX_KEYS];
    size_t n = 0;
    assert_int_equal(is_rel ? strata_rel_keys(v, id, keys, DUMP_MAX_KEYS, &n)
                            : strata_node_keys(v, id, keys, DUMP_MAX_KEYS, &n),
                     STRATA_OK);
    assert_true(n <= DUMP_MAX_KEYS);
    sb_printf(b, " {");
    for (size_t i = 0; i < n; i++) {
        if (i)
            assert_true(keys[i - 1] < keys[i]);   /* sorted, no repeats */
        strata_value *val = NULL;
        assert_int_equal(is_rel ? strata_rel_get(v, id, keys[i], &val)
                                : strata_node_get(v, id, keys[i], &val),
                         STRATA_OK);
        assert_int_not_equal(strata_value_type(val), STRATA_NULL);
        sb_printf(b, "%s%u:", i ? " " : "", keys[i]);
        dump_value(b, val);
        strata_value_free(&val);
    }
    sb_printf(b, "}");
}

/* Neighbours in iteration order (a failed write must not even reorder
   them), with their types; the count checked against the degree.
   Returns one past the largest relationship id seen. */
static inline strata_id dump_hops(sbuf *b, strata_view *v, strata_id n, strata_direction dir,
                           const char *what)
{
    strata_edge_iter *it = NULL;
    assert_int_equal(strata_neighbours(v, n, dir, STRATA_ANY_TYPE, &it), STRATA_OK);
    strata_id rel, other, limit = 0;
    uint64_t k = 0;
    sb_printf(b, " %s[", what);
    while (strata_edge_iter_next(it, &rel, &other)) {
        strata_token type = 0;
        assert_int_equal(strata_rel_info(v, rel, NULL, NULL, &type), STRATA_OK);
        sb_printf(b, "%sr%" PRIu64 ":t%u:n%" PRIu64, k++ ? " " : "", rel, type, other);
        if (rel + 1 > limit)
            limit = rel + 1;
    }
    strata_edge_iter_free(&it);
    uint64_t deg = 0;
    assert_int_equal(strata_node_degree(v, n, dir, STRATA_ANY_TYPE, &deg), STRATA_OK);
    assert_int_equal(deg, k);
    sb_printf(b, "]");
    return limit;
}

/* The ids an iterator yields, in order; frees it. */
static inline void dump_iter(sbuf *b, strata_node_iter *it)
{
    strata_id id;
    size_t k = 0;
    sb_printf(b, "[");
    while (strata_node_iter_next(it, &id))
        sb_printf(b, "%s%" PRIu64, k++ ? " " : "", id);
    sb_printf(b, "]");
    strata_node_iter_free(&it);
}

#endif
