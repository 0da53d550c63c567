/* The Bolt server's PackStream (server/packstream.c): every value strata
   has survives encode then decode; integers take the shortest marker; the
   decoder refuses every truncation of a valid encoding, too deep nesting,
   sizes beyond the message and types strata lacks, with a reason and
   nothing leaked; nodes and relationships carry element ids on Bolt 5
   only; DateTime takes the UTC form on Bolt 5 and the local one on 4.4. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "server/packstream.h"
#include "strata.h"

static const pack_opts bolt5 = {.element_ids = true, .utc_datetime = true};
static const pack_opts bolt44 = {.element_ids = false, .utc_datetime = false};

/* Encodes v, decodes it back, checks equality and that every proper
   prefix is refused with a reason. */
static void round_trip(strata_value *v, const pack_opts *o)
{
    pack_buf b = {0};
    assert_int_equal(pack_value(&b, v, NULL, o), 0);
    assert_false(b.failed);
    unpacker u = {.p = b.data, .end = b.data + b.len};
    strata_value *back = unpack_value(&u, o);
    assert_non_null(back);
    assert_ptr_equal(u.p, u.end);
    assert_int_equal(strata_value_type(back), strata_value_type(v));
    /* null = null is null in Cypher: the type check above covers it */
    if (strata_value_type(v) != STRATA_NULL)
        assert_int_equal(strata_value_equals(back, v), 1);
    strata_value_free(&back);
    for (size_t cut = 0; cut < b.len; cut++) {
        unpacker t = {.p = b.data, .end = b.data + cut};
        strata_value *part = unpack_value(&t, o);
        assert_null(part);
        assert_true(t.err[0] != '\0');
    }
    pack_free(&b);
    strata_value_free(&v);
}

static void test_integers_take_the_shortest_marker(void **state)
{
    (void)state;
    const struct {
        int64_t v;
        size_t len;
    } cases[] = {{0, 1},      {127, 1},         {-16, 1},        {-17, 2},         {-128, 2},
                 {128, 3},    {-129, 3},        {32767, 3},      {32768, 5},       {-32769, 5},
                 {INT32_MAX, 5}, {(int64_t)INT32_MAX + 1, 9}, {INT64_MIN, 9}, {INT64_MAX, 9}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pack_buf b = {0};
        pack_int(&b, cases[i].v);
        assert_int_equal(b.len, cases[i].len);
        pack_free(&b);
        round_trip(strata_value_int(cases[i].v), &bolt5);
    }
}

static void test_scalars_lists_and_maps(void **state)
{
    (void)state;
    round_trip(strata_value_null(), &bolt5);
    round_trip(strata_value_bool(true), &bolt5);
    round_trip(strata_value_bool(false), &bolt5);
    round_trip(strata_value_float(-2.5e300), &bolt5);
    round_trip(strata_value_string("", 0), &bolt5);
    char big[70000];
    memset(big, 'x', sizeof big);
    round_trip(strata_value_string(big, 15), &bolt5);
    round_trip(strata_value_string(big, 16), &bolt5);
    round_trip(strata_value_string(big, 300), &bolt5);
    round_trip(strata_value_string(big, sizeof big), &bolt5);
    round_trip(strata_value_string("h\xc3\xa9llo", 6), &bolt5);
    strata_value *items[20];
    for (int i = 0; i < 20; i++)
        items[i] = strata_value_int(i * 1000);
    round_trip(strata_value_list((const strata_value *const *)items, 20), &bolt5);
    const char *keys[3] = {"a", "b", "c"};
    strata_value *inner = strata_value_list((const strata_value *const *)items, 3);
    const strata_value *vals[3] = {items[1], inner, items[2]};
    round_trip(strata_value_map(keys, vals, 3), &bolt5);
    strata_value_free(&inner);
    for (int i = 0; i < 20; i++)
        strata_value_free(&items[i]);
}

static strata_value *temporal(strata_temporal t)
{
    strata_value *v = NULL;
    assert_int_equal(strata_value_temporal(&t, &v), STRATA_OK);
    return v;
}

static void test_temporal_values(void **state)
{
    (void)state;
    const pack_opts *modes[] = {&bolt5, &bolt44};
    for (int m = 0; m < 2; m++) {
        const pack_opts *o = modes[m];
        round_trip(temporal((strata_temporal){.type = STRATA_DATE, .days = -719162}), o);
        round_trip(temporal((strata_temporal){.type = STRATA_LOCALTIME,
                                              .nanos = 86399999999999}), o);
        round_trip(temporal((strata_temporal){.type = STRATA_TIME, .nanos = 1, .offset = -3600}),
                   o);
        round_trip(temporal((strata_temporal){.type = STRATA_LOCALDATETIME, .days = -1,
                                              .nanos = 5}), o);
        round_trip(temporal((strata_temporal){.type = STRATA_DATETIME, .days = 19000,
                                              .nanos = 3600000000123, .offset = 19800}), o);
        /* a zone name: Stockholm in summer (+02:00) and winter (+01:00) */
        round_trip(temporal((strata_temporal){.type = STRATA_DATETIME, .days = 19905,
                                              .nanos = 43200000000000,
                                              .zone = "Europe/Stockholm"}), o);
        round_trip(temporal((strata_temporal){.type = STRATA_DATETIME, .days = 19730,
                                              .nanos = 1000, .zone = "Europe/Stockholm"}), o);
        strata_duration d = {-14, 3, -5, 999999999};
        strata_value *dv = NULL;
        assert_int_equal(strata_value_duration(&d, &dv), STRATA_OK);
        round_trip(dv, o);
    }
}

/* DateTime's structure tag and first field for a mode. */
static void datetime_form(const pack_opts *o, uint8_t want_tag, int64_t want_seconds)
{
    /* 1970-01-02T01:00:00+01:00: local 90000 s, UTC 86400 s */
    strata_value *v = temporal((strata_temporal){.type = STRATA_DATETIME, .days = 1,
                                                 .nanos = 3600000000000, .offset = 3600});
    pack_buf b = {0};
    assert_int_equal(pack_value(&b, v, NULL, o), 0);
    assert_int_equal(b.data[0], 0xB3);
    assert_int_equal(b.data[1], want_tag);
    unpacker u = {.p = b.data + 2, .end = b.data + b.len};
    strata_value *secs = unpack_value(&u, o);
    int64_t s = 0;
    assert_int_equal(strata_value_get_int(secs, &s), STRATA_OK);
    assert_int_equal(s, want_seconds);
    strata_value_free(&secs);
    strata_value_free(&v);
    pack_free(&b);
}

static void test_datetime_forms(void **state)
{
    (void)state;
    datetime_form(&bolt5, 'I', 86400);
    datetime_form(&bolt44, 'F', 90000);
}

static void refuse(const uint8_t *bytes, size_t n, const char *why)
{
    unpacker u = {.p = bytes, .end = bytes + n};
    strata_value *v = unpack_value(&u, &bolt5);
    assert_null(v);
    assert_non_null(strstr(u.err, why));
}

static void test_decoder_refusals(void **state)
{
    (void)state;
    uint8_t deep[200];
    memset(deep, 0x91, sizeof deep);
    refuse(deep, sizeof deep, "nested too deep");
    refuse((const uint8_t[]){0xD2, 0x7F, 0xFF, 0xFF, 0xFF, 'a'}, 6, "larger than the message");
    refuse((const uint8_t[]){0xD6, 0xFF, 0xFF, 0xFF, 0xFF, 1}, 6, "larger than the message");
    refuse((const uint8_t[]){0xCC, 0x01, 0x00}, 3, "byte arrays");
    refuse((const uint8_t[]){0xB3, 'X', 0xC1}, 3, "points");
    refuse((const uint8_t[]){0xB3, 'N', 1, 0x90, 0xA0}, 5, "cannot be parameters");
    refuse((const uint8_t[]){0xB1, 'D', 0x81, 'a'}, 4, "integer");
    refuse((const uint8_t[]){0xB2, 'D', 1, 2}, 4, "wrong number of fields");
    refuse((const uint8_t[]){0xA1, 0x01, 0x01}, 3, "map key");
    refuse((const uint8_t[]){0x82, 0xC3, 0x28}, 3, "UTF-8");
    refuse((const uint8_t[]){0xE0}, 1, "unknown marker");
    refuse((const uint8_t[]){0xB3, 'i', 1, 2, 0x83, 'N', 'o', 'w'}, 8, "out of range");
    refuse((const uint8_t[]){0xB3, 'I', 0, 0, 0xCA, 0x00, 0x10, 0x00, 0x00}, 9, "offset");
}

/* Map keys are read straight from the message into a small area, or the
   heap when the area is full: maps of 1 to 40 entries with keys of 1 to
   300 bytes (so some overflow the area, some not), multi-byte keys, and
   every prefix refused (round_trip). */
static void test_map_keys_of_every_size(void **state)
{
    (void)state;
    char name[40][301];
    const char *keys[40];
    strata_value *vals[40];
    const size_t lens[] = {1, 7, 60, 200, 300};
    for (size_t n = 1; n <= 40; n += (n < 10 ? 1 : 13)) {
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            for (size_t i = 0; i < n; i++) {
                size_t len = (lens[li] + i) % 301;
                if (len < 4)
                    len = 4;
                char tag[8];
                snprintf(tag, sizeof tag, "k%03zu", i);   /* distinct keys */
                memset(name[i], 'a' + (int)(i % 26), len);
                memcpy(name[i], tag, 4);
                name[i][len] = '\0';
                keys[i] = name[i];
                vals[i] = strata_value_int((int64_t)(i * 7));
            }
            round_trip(strata_value_map(keys, (const strata_value *const *)vals, n), &bolt5);
            for (size_t i = 0; i < n; i++)
                strata_value_free(&vals[i]);
        }
    }
    const char *utf8[2] = {"caf\xc3\xa9", "\xf0\x9f\x98\x80"};
    strata_value *two[2] = {strata_value_float(0.5), strata_value_bool(true)};
    round_trip(strata_value_map(utf8, (const strata_value *const *)two, 2), &bolt5);
    strata_value_free(&two[0]);
    strata_value_free(&two[1]);
}

static void test_map_key_refusals(void **state)
{
    (void)state;
    refuse((const uint8_t[]){0xA1, 0x82, 'a', 0x00, 0x01}, 5, "without NUL");
    refuse((const uint8_t[]){0xA1, 0x82, 0xC3, 0x28, 0x01}, 5, "UTF-8");        /* bad continuation */
    refuse((const uint8_t[]){0xA1, 0x82, 0xC0, 0xAF, 0x01}, 5, "UTF-8");        /* overlong */
    refuse((const uint8_t[]){0xA1, 0x83, 0xED, 0xA0, 0x80, 0x01}, 6, "UTF-8");  /* surrogate */
    refuse((const uint8_t[]){0xA1, 0x84, 0xF4, 0x90, 0x80, 0x80, 0x01}, 7, "UTF-8"); /* > U+10FFFF */
    refuse((const uint8_t[]){0xA1, 0x81, 0xE2, 0x01}, 4, "UTF-8");             /* cut short */
    refuse((const uint8_t[]){0xA1, 0x90, 0x01}, 3, "map key");                 /* a list */
    refuse((const uint8_t[]){0xA2, 0x81, 'a', 0x01, 0x81, 'b'}, 6, "truncated");
}

static void test_entities_and_element_ids(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g,
                                  "CREATE p = (:A {x: 1})-[:R {w: 2}]->(:B)<-[:R]-(:C) "
                                  "RETURN p, relationships(p)[0] AS r",
                                  NULL, &r),
                     STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    strata_view *v = strata_result_view(r);
    const pack_opts *modes[] = {&bolt5, &bolt44};
    for (int m = 0; m < 2; m++) {
        pack_buf b = {0};
        assert_int_equal(pack_value(&b, row[1], v, modes[m]), 0);
        assert_int_equal(b.data[0], m == 0 ? 0xB8 : 0xB5);   /* 8 fields on Bolt 5, 5 on 4.4 */
        assert_int_equal(b.data[1], 'R');
        pack_reset(&b);
        assert_int_equal(pack_value(&b, row[0], v, modes[m]), 0);
        /* Path: 3 nodes, 2 relationships, indices [1, 1, -2, 2] */
        assert_int_equal(b.data[0], 0xB3);
        assert_int_equal(b.data[1], 'P');
        assert_int_equal(b.data[2], 0x93);
        const uint8_t tail[] = {0x94, 0x01, 0x01, 0xFE, 0x02};
        assert_memory_equal(b.data + b.len - sizeof tail, tail, sizeof tail);
        pack_free(&b);
    }
    strata_result_free(&r);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers_take_the_shortest_marker),
        cmocka_unit_test(test_scalars_lists_and_maps),
        cmocka_unit_test(test_temporal_values),
        cmocka_unit_test(test_datetime_forms),
        cmocka_unit_test(test_decoder_refusals),
        cmocka_unit_test(test_map_keys_of_every_size),
        cmocka_unit_test(test_map_key_refusals),
        cmocka_unit_test(test_entities_and_element_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
