/*
 * storage/temporal stands without the time zone database: a datetime in a
 * zone the system does not know ("Nowhere/Atlantis") is encoded, decoded,
 * validated, printed, compared, hashed and carried through the save
 * file's codec with the offset it was made with.  Only query/ reads
 * zones (query/zoneinfo.c); should any of these paths start resolving the
 * name, the unknown zone makes it fail here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/persist_codec.h"
#include "storage/temporal.h"
#include "storage/value.h"

#define UNKNOWN_ZONE "Nowhere/Atlantis"

/* 2021-03-04T12:30:15.5 local in an unknown zone at +01:00. */
static temporal unknown_zone_datetime(void)
{
    temporal t = {0};
    t.kind = VAL_DATETIME;
    t.days = tm_days_from_civil(2021, 3, 4);
    t.nanos = ((12 * 60 + 30) * 60 + 15) * TM_NANOS_PER_SEC + 500000000;
    t.offset = 3600;
    snprintf(t.zone, sizeof t.zone, "%s", UNKNOWN_ZONE);
    return t;
}

static void test_encode_decode_print(void **state)
{
    (void)state;
    mem_ctx *m = mem_scratch();
    temporal t = unknown_zone_datetime(), back;
    temporal_err e = {0};
    assert_int_equal(temporal_check(&t, &e), 0);
    value v;
    assert_int_equal(temporal_to_value(m, &t, &v), 0);
    assert_int_equal(temporal_from_value(&v, &back), 0);
    assert_int_equal(back.days, t.days);
    assert_int_equal(back.nanos, t.nanos);
    assert_int_equal(back.offset, 3600);
    assert_string_equal(back.zone, UNKNOWN_ZONE);
    char text[128];
    assert_int_equal(temporal_format(&v, text, sizeof text),
                     (int)strlen("2021-03-04T12:30:15.500+01:00[" UNKNOWN_ZONE "]"));
    assert_string_equal(text, "2021-03-04T12:30:15.500+01:00[" UNKNOWN_ZONE "]");
    value_release(&v);
}

/* The same instant at another offset: equal, same hash, ordered equal;
   a second later: after it. */
static void test_compare_and_hash(void **state)
{
    (void)state;
    mem_ctx *m = mem_scratch();
    temporal a = unknown_zone_datetime();
    temporal b = a, c = a;
    b.nanos -= 3600 * TM_NANOS_PER_SEC;   /* 11:30:15.5Z */
    b.offset = 0;
    b.zone[0] = '\0';
    c.nanos += TM_NANOS_PER_SEC;
    value va, vb, vc;
    assert_int_equal(temporal_to_value(m, &a, &va), 0);
    assert_int_equal(temporal_to_value(m, &b, &vb), 0);
    assert_int_equal(temporal_to_value(m, &c, &vc), 0);
    assert_int_equal(value_equals(&va, &vb), TRI_TRUE);
    assert_true(value_hash(&va) == value_hash(&vb));
    int cmp = 2;
    assert_int_equal(value_compare(&va, &vc, &cmp), 0);
    assert_int_equal(cmp, -1);
    assert_true(value_order(&va, &vc) < 0);
    assert_true(value_order(&vc, &va) > 0);
    value_release(&va);
    value_release(&vb);
    value_release(&vc);
}

/* Through the save file's value codec and back: the loader checks the
   value (temporal_check) but resolves no zone. */
static void test_codec_round_trip(void **state)
{
    (void)state;
    mem_ctx *m = mem_scratch();
    temporal t = unknown_zone_datetime(), back;
    value v;
    assert_int_equal(temporal_to_value(m, &t, &v), 0);
    FILE *f = tmpfile();
    assert_non_null(f);
    unsigned char buf[64];
    pwriter w;
    pw_init(&w, fileno(f), buf, sizeof buf);
    pw_value(&w, &v);
    pw_flush(&w);
    assert_int_equal(w.err, 0);
    off_t size = lseek(fileno(f), 0, SEEK_END);
    assert_true(size > 0);
    unsigned char *bytes = malloc((size_t)size);
    assert_non_null(bytes);
    assert_int_equal(pread(fileno(f), bytes, (size_t)size, 0), size);
    preader r;
    pr_init(&r, bytes, 0, (size_t)size, m, "test");
    value got;
    if (pr_value(&r, &got) != 0)
        fail_msg("%s", r.err);
    assert_int_equal(value_equals(&v, &got), TRI_TRUE);
    assert_int_equal(temporal_from_value(&got, &back), 0);
    assert_int_equal(back.offset, 3600);
    assert_string_equal(back.zone, UNKNOWN_ZONE);
    value_release(&got);
    value_release(&v);
    free(bytes);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_decode_print),
        cmocka_unit_test(test_compare_and_hash),
        cmocka_unit_test(test_codec_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
