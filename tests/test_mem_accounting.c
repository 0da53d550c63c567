/* storage/mem.h: a context counts the usable bytes of what it holds, and
   every free gives back exactly what its allocation counted, whether it
   names the size (mem_free_sized) or not (mem_free).  Checked for sizes
   across the allocator's classes, for reallocs growing and shrinking, for
   blocks freed the other way from how they were resized, under injected
   allocation failures, and for the query layer's row sets, scopes and
   accumulators, which free through the context they allocated from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "query/aggregate.h"
#include "query/exec.h"
#include "storage/mem.h"

/* Small, odd, at and around class boundaries, and past the small and the
   large classes' ends. */
static const size_t sizes[] = {
    0, 1, 7, 8, 9, 15, 16, 17, 24, 40, 100, 127, 128, 129, 1000, 4095, 4096, 4097,
    14337, 16384, 100000, 1u << 20, (1u << 20) + 1, 5u << 20,
};
#define NSIZES (sizeof sizes / sizeof *sizes)

/* What a block of size holds: at least what was asked (and 1 for 0); the
   allocator's size class where it reports one (jemalloc builds, where
   mem_good_size is more than size for some request). */
static void assert_usable(mem_ctx *m, size_t size, size_t counted)
{
    size_t asked = size ? size : 1;
    assert_true(counted >= asked);
    size_t good = mem_good_size(m, asked);
    if (good != asked || counted == asked)
        assert_int_equal(counted, good);
}

static void test_unsized_free_gives_back_what_was_counted(void **state)
{
    (void)state;
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    size_t live = mem_live_bytes();
    for (size_t i = 0; i < NSIZES; i++) {
        unsigned char *p = mem_alloc(m, sizes[i]);
        assert_non_null(p);
        memset(p, 0xab, sizes[i]);
        assert_usable(m, sizes[i], mem_ctx_bytes(m));
        assert_int_equal(mem_live_bytes() - live, mem_ctx_bytes(m));
        mem_free(m, p);
        assert_int_equal(mem_ctx_bytes(m), 0);
        assert_int_equal(mem_live_bytes(), live);
    }
    mem_free(m, NULL);
    assert_int_equal(mem_ctx_bytes(m), 0);
    mem_ctx_release(m);
}

/* Scratch memory is counted in test builds too (the leak checks). */
static void test_scratch_counts_the_same_way(void **state)
{
    (void)state;
    mem_ctx *s = mem_scratch();
    size_t base = mem_ctx_bytes(s);
    void *p[NSIZES];
    for (size_t i = 0; i < NSIZES; i++)
        assert_non_null(p[i] = mem_calloc(s, sizes[i]));
    assert_true(mem_ctx_bytes(s) > base);
    for (size_t i = 0; i < NSIZES; i++)
        mem_free(s, p[i]);
    assert_int_equal(mem_ctx_bytes(s), base);
}

/* Blocks allocated alike, then freed half with their size and half
   without, in an order that interleaves the two. */
static void test_sized_and_unsized_frees_mix(void **state)
{
    (void)state;
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    void *p[NSIZES];
    size_t sum = 0;
    for (size_t i = 0; i < NSIZES; i++) {
        size_t before = mem_ctx_bytes(m);
        assert_non_null(p[i] = mem_alloc(m, sizes[i]));
        sum += mem_ctx_bytes(m) - before;
    }
    assert_int_equal(mem_ctx_bytes(m), sum);
    for (size_t i = 0; i < NSIZES; i++) {
        if (i % 2)
            mem_free_sized(m, p[i], sizes[i]);
        else
            mem_free(m, p[i]);
    }
    assert_int_equal(mem_ctx_bytes(m), 0);
    mem_ctx_release(m);
}

/* A block grown and shrunk through every size by one realloc or the
   other, its bytes kept, then freed by the other kind of free. */
static void test_reallocs_count_the_new_block(void **state)
{
    (void)state;
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    for (int sized_free = 0; sized_free < 2; sized_free++) {
        unsigned char *p = mem_realloc(m, NULL, 3);   /* NULL: an allocation */
        assert_non_null(p);
        memcpy(p, "abc", 3);
        size_t have = 3;
        for (size_t k = 0; k < 2 * NSIZES; k++) {
            /* up through the sizes, then down again */
            size_t want = k < NSIZES ? sizes[k] : sizes[2 * NSIZES - 1 - k];
            if (want < 3)
                want = 3;
            unsigned char *q = (k % 2) ? mem_realloc_sized(m, p, have, want)
                                       : mem_realloc(m, p, want);
            assert_non_null(q);
            assert_memory_equal(q, "abc", 3);
            assert_usable(m, want, mem_ctx_bytes(m));
            p = q;
            have = want;
        }
        if (sized_free)
            mem_free_sized(m, p, have);
        else
            mem_free(m, p);
        assert_int_equal(mem_ctx_bytes(m), 0);
    }
    mem_ctx_release(m);
}

/* Every allocation, realloc and free under mem_fail_at: a failed call
   returns NULL, counts nothing and leaves the block it was given whole;
   what did succeed is given back exactly. */
static void test_failures_count_nothing(void **state)
{
    (void)state;
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    size_t live = mem_live_bytes();
    for (long k = 1; k <= 6; k++) {
        mem_fail_at(k);
        unsigned char *a = mem_alloc(m, 100);
        unsigned char *b = a ? mem_calloc(m, 5000) : NULL;
        unsigned char *c = b ? mem_realloc(m, NULL, 40) : NULL;
        bool grew = false, moved = false;
        if (c) {
            memset(a, 7, 100);
            size_t before = mem_ctx_bytes(m);
            unsigned char *a2 = mem_realloc(m, a, 3000);
            if (a2) {
                a = a2;
                grew = true;
            } else {
                assert_int_equal(mem_ctx_bytes(m), before);
            }
            for (size_t i = 0; i < 100; i++)
                assert_int_equal(a[i], 7);
            before = mem_ctx_bytes(m);
            unsigned char *b2 = mem_realloc_sized(m, b, 5000, 50000);
            if (b2) {
                b = b2;
                moved = true;
            } else {
                assert_int_equal(mem_ctx_bytes(m), before);
            }
        }
        long attempts = mem_fail_count();
        mem_fail_clear();
        /* the k-th attempt failed and every later one: the allocations
           stop at the first failure, the two reallocs are both tried */
        assert_int_equal(attempts, k <= 3 ? k : 5);
        if (k <= 5)
            assert_false(moved);
        if (k <= 4)
            assert_false(grew);
        mem_free(m, a);
        if (moved)
            mem_free(m, b);
        else
            mem_free_sized(m, b, 5000);
        mem_free(m, c);
        assert_int_equal(mem_ctx_bytes(m), 0);
        assert_int_equal(mem_live_bytes(), live);
    }
    /* a failed context costs nothing either */
    mem_fail_at(1);
    assert_null(mem_ctx_new());
    mem_fail_clear();
    mem_ctx_release(m);
}

/* The peak follows the counted (usable) bytes. */
static void test_peak_counts_usable_bytes(void **state)
{
    (void)state;
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    mem_ctx_peak_reset(m);
    void *p = mem_alloc(m, 1000);
    size_t held = mem_ctx_bytes(m);
    mem_free(m, p);
    assert_int_equal(mem_ctx_peak(m), held);
    assert_int_equal(mem_ctx_bytes(m), 0);
    mem_ctx_release(m);
}

/* A sized free naming the wrong size is our bug: a test build stops
   there rather than let the count (or jemalloc's size classes) drift. */
static void test_wrong_size_aborts(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        mem_ctx *m = mem_ctx_new();
        void *p = mem_alloc(m, 1000);
        if (!p)
            _exit(3);
        fclose(stderr);   /* the message is expected */
        mem_free_sized(m, p, 10);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
}

/* The query layer's row sets, scopes and aggregate accumulators allocate
   from the executor's context and must free there, not through scratch:
   an executor on a context of its own ends with it empty, and scratch
   untouched. */
static void test_query_structures_free_where_they_allocated(void **state)
{
    (void)state;
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    exec x = {.m = m};
    size_t scratch = mem_ctx_bytes(mem_scratch());

    rowset r;
    rowset_init(&r, 2);
    for (int i = 0; i < 100; i++) {
        value row[2] = {value_int(i), value_null()};
        assert_int_equal(value_string(m, "a string too long to be inline", 30, &row[1]), 0);
        assert_int_equal(rowset_push(&x, &r, row), 0);
    }
    scope s = {0};
    for (int i = 0; i < 20; i++) {
        static const char names[] = "abcdefghijklmnopqrstuvwxyz";
        assert_int_equal(scope_add(&x, &s, names + i, 1, NULL), 0);
    }
    /* collect() keeps its items in an array from x->m (as acc_add grows it) */
    acc a = {.capitems = 50};
    assert_non_null(a.items = mem_alloc(m, a.capitems * sizeof *a.items));
    for (; a.nitems < a.capitems; a.nitems++)
        assert_int_equal(value_string(m, "another string, not inline", 26, &a.items[a.nitems]), 0);
    assert_true(mem_ctx_bytes(m) > 0);
    rowset_free(&r);
    scope_free(&s);
    acc_free(&x, &a);
    assert_int_equal(mem_ctx_bytes(m), 0);
    assert_int_equal(mem_ctx_bytes(mem_scratch()), scratch);
    assert_null(x.err.category);
    mem_ctx_release(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unsized_free_gives_back_what_was_counted),
        cmocka_unit_test(test_scratch_counts_the_same_way),
        cmocka_unit_test(test_sized_and_unsized_frees_mix),
        cmocka_unit_test(test_reallocs_count_the_new_block),
        cmocka_unit_test(test_failures_count_nothing),
        cmocka_unit_test(test_peak_counts_usable_bytes),
        cmocka_unit_test(test_wrong_size_aborts),
        cmocka_unit_test(test_query_structures_free_where_they_allocated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
