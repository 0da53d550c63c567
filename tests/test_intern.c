/*
 * Tests for storage/intern: the add/find/name round trip, dense ids in
 * insertion order, duplicates, binary names, a catalog large enough to
 * cross many segments, every allocation failure of add (including those
 * inside the hash table's growth), and intern_name on a reader thread
 * while a writer adds.
 *
 * Each test gets a fresh mem_ctx in *state; the teardown asserts that
 * nothing allocated from it is left.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "storage/intern.h"

#include "support/mem_fixture.h"

/* ---- helpers -------------------------------------------------------------- */

static interner *new_catalog(mem_ctx *m)
{
    interner *t = intern_new(m);
    assert_non_null(t);
    assert_int_equal(intern_count(t), 0);
    return t;
}

/* The generated name of entry i: "name-<i>". */
static size_t name_of(uint32_t i, char *buf, size_t size)
{
    int n = snprintf(buf, size, "name-%u", i);
    assert_true(n > 0 && (size_t)n < size);
    return (size_t)n;
}

static uint32_t add_ok(interner *t, const void *bytes, size_t len)
{
    uint32_t id = UINT32_MAX;
    assert_int_equal(intern_add(t, bytes, len, &id), 0);
    return id;
}

/* id names exactly bytes[0..len), NUL-terminated, and find maps back. */
static void assert_entry(interner *t, uint32_t id, const void *bytes, size_t len)
{
    size_t got_len = 12345;
    const char *got = intern_name(t, id, &got_len);
    assert_non_null(got);
    assert_int_equal(got_len, len);
    assert_memory_equal(got, bytes, len);
    assert_int_equal(got[len], '\0');
    assert_ptr_equal(intern_name(t, id, NULL), got);   /* never moves */
    uint32_t found = UINT32_MAX;
    assert_int_equal(intern_find(t, bytes, len, &found), 0);
    assert_int_equal(found, id);
}

/* The catalog holds exactly name_of(0 .. n-1) as ids 0 .. n-1. */
static void assert_generated(interner *t, uint32_t n)
{
    char buf[32];
    assert_int_equal(intern_count(t), n);
    for (uint32_t i = 0; i < n; i++) {
        size_t len = name_of(i, buf, sizeof buf);
        assert_entry(t, i, buf, len);
    }
    assert_null(intern_name(t, n, NULL));
    size_t len = name_of(n, buf, sizeof buf);
    uint32_t id;
    assert_int_equal(intern_find(t, buf, len, &id), -1);
}

/* ---- tests -------------------------------------------------------------- */

static void test_round_trip(void **state)
{
    mem_ctx *m = *state;
    interner *t = new_catalog(m);
    static const char *names[] = { "Person", "KNOWS", "name", "age", "City" };
    enum { N = sizeof names / sizeof names[0] };

    uint32_t id;
    assert_int_equal(intern_find(t, "Person", 6, &id), -1);
    assert_null(intern_name(t, 0, NULL));

    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(add_ok(t, names[i], strlen(names[i])), i);   /* dense */
        assert_int_equal(intern_count(t), i + 1);
    }
    for (uint32_t i = 0; i < N; i++)
        assert_entry(t, i, names[i], strlen(names[i]));
    assert_null(intern_name(t, N, NULL));
    assert_null(intern_name(t, UINT32_MAX, NULL));
    /* A prefix is another name. */
    assert_int_equal(intern_find(t, "Pers", 4, &id), -1);

    intern_free(&t);
    assert_null(t);
    intern_free(&t);   /* freeing NULL is fine */
}

static void test_duplicates(void **state)
{
    mem_ctx *m = *state;
    interner *t = new_catalog(m);
    uint32_t a = add_ok(t, "x", 1);
    uint32_t b = add_ok(t, "y", 1);
    size_t bytes = mem_ctx_bytes(m);
    assert_int_equal(add_ok(t, "x", 1), a);
    assert_int_equal(add_ok(t, "y", 1), b);
    assert_int_equal(add_ok(t, "x", 1), a);
    assert_int_equal(intern_count(t), 2);
    assert_int_equal(mem_ctx_bytes(m), bytes);   /* nothing allocated */
    intern_free(&t);
}

static void test_binary_names(void **state)
{
    mem_ctx *m = *state;
    interner *t = new_catalog(m);
    static const struct {
        const char *bytes;
        size_t len;
    } names[] = {
        { "a\0b", 3 }, { "a\0c", 3 }, { "a", 1 }, { "a\0", 2 },
        { "\0", 1 },   { "\0\0", 2 }, { "", 0 },  { "\xff\xfe", 2 },
    };
    enum { N = sizeof names / sizeof names[0] };
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(add_ok(t, names[i].bytes, names[i].len), i);
    for (uint32_t i = 0; i < N; i++) {
        assert_entry(t, i, names[i].bytes, names[i].len);
        assert_int_equal(add_ok(t, names[i].bytes, names[i].len), i);
    }
    assert_int_equal(intern_count(t), N);
    intern_free(&t);
}

static void test_many(void **state)
{
    mem_ctx *m = *state;
    interner *t = new_catalog(m);
    /* 100k ids reach segment 12 (16 << 12 > 100k). */
    const uint32_t n = 100000;
    char buf[32];
    for (uint32_t i = 0; i < n; i++) {
        size_t len = name_of(i, buf, sizeof buf);
        assert_int_equal(add_ok(t, buf, len), i);
    }
    assert_generated(t, n);
    /* Re-adding every name changes nothing. */
    for (uint32_t i = 0; i < n; i += 7) {
        size_t len = name_of(i, buf, sizeof buf);
        assert_int_equal(add_ok(t, buf, len), i);
    }
    assert_int_equal(intern_count(t), n);
    intern_free(&t);
}

static void test_new_failure(void **state)
{
    mem_ctx *m = *state;
    mem_fail_at(1);
    interner *t = intern_new(m);
    mem_fail_clear();
    assert_null(t);
    assert_int_equal(mem_ctx_bytes(m), 0);
}

static void test_add_failure(void **state)
{
    mem_ctx *m = *state;
    interner *t = new_catalog(m);
    char buf[32];
    long failures = 0;
    /* Every add up to 600 fails at each of its allocations in turn: the
       first entry (table creation), segment boundaries (16, 48, 112, 240,
       496) and the hash table's bucket expansions all happen in here. */
    const uint32_t n = 600;
    for (uint32_t i = 0; i < n; i++) {
        size_t len = name_of(i, buf, sizeof buf);
        for (long k = 1;; k++) {
            assert_true(k < 16);
            uint32_t id = UINT32_MAX;
            mem_fail_at(k);
            int rc = intern_add(t, buf, len, &id);
            mem_fail_clear();
            if (rc == 0) {
                assert_int_equal(id, i);
                break;
            }
            failures++;
            assert_int_equal(rc, -1);
            assert_int_equal(intern_count(t), i);
            assert_null(intern_name(t, i, NULL));
            assert_int_equal(intern_find(t, buf, len, &id), -1);
            /* Spot-check the entries already there (a full check per
               failure would be quadratic). */
            if (i > 0) {
                char prev[32];
                size_t plen = name_of(i - 1, prev, sizeof prev);
                assert_entry(t, i - 1, prev, plen);
                plen = name_of(i / 2, prev, sizeof prev);
                assert_entry(t, i / 2, prev, plen);
            }
        }
        if (i % 50 == 0 || i == n - 1)
            assert_generated(t, i + 1);
    }
    assert_true(failures >= (long)n);
    /* A later add without failures works. */
    assert_int_equal(add_ok(t, "after", 5), n);
    assert_entry(t, n, "after", 5);
    intern_free(&t);
}

/* ---- a reader thread while a writer adds ------------------------------------ */

struct reader_arg {
    interner *t;
    atomic_int done;
    long checked;
    int bad;
};

static void *reader(void *p)
{
    struct reader_arg *a = p;
    char buf[32];
    uint32_t probe = 0;
    /* One last round after the writer is done, so the reader checks at
       least once however the threads were scheduled. */
    for (bool last = false; !last;) {
        last = atomic_load(&a->done);
        uint32_t n = intern_count(a->t);
        if (n == 0)
            continue;
        /* The newest entry and one further back. */
        uint32_t ids[2] = { n - 1, probe++ % n };
        for (int j = 0; j < 2; j++) {
            size_t len;
            const char *s = intern_name(a->t, ids[j], &len);
            size_t want = (size_t)snprintf(buf, sizeof buf, "name-%u", ids[j]);
            if (!s || len != want || memcmp(s, buf, len) != 0 || s[len] != '\0')
                a->bad++;
            a->checked++;
        }
    }
    return NULL;
}

static void test_name_from_reader_thread(void **state)
{
    mem_ctx *m = *state;
    interner *t = new_catalog(m);
    struct reader_arg arg = { .t = t };
    atomic_init(&arg.done, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, reader, &arg), 0);

    char buf[32];
    const uint32_t n = 20000;
    int add_failed = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t len = name_of(i, buf, sizeof buf);
        uint32_t id;
        if (intern_add(t, buf, len, &id) != 0 || id != i)
            add_failed = 1;
    }
    atomic_store(&arg.done, 1);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(add_failed, 0);
    assert_int_equal(arg.bad, 0);
    assert_true(arg.checked > 0);
    assert_generated(t, n);
    intern_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_duplicates, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_binary_names, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_many, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_new_failure, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_add_failure, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_name_from_reader_thread, mem_ctx_setup, mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
