/*
 * Tests for storage/mem.c's fast paths: the size-class table (every
 * size's counted bytes are its block's usable size, on and past the
 * table) and mem_ctx_bind (a bound context counts as before, a second
 * bind binds nothing, blocks allocated while bound free after the
 * unbind).  Each test gets a fresh mem_ctx in *state; the teardown
 * asserts that nothing allocated from it is left.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "storage/mem.h"

#include "support/mem_fixture.h"

/* The bytes counted for a block of each size are its usable size (the
   size classes come from a table up to 4 KiB, from the allocator past
   it), and mem_good_size names them. */
static void test_size_classes(void **state)
{
    mem_ctx *m = *state;
    for (size_t size = 1; size <= 9000; size += size < 4200 ? 1 : 97) {
        size_t before = mem_ctx_bytes(m);
        void *p = mem_alloc(m, size);
        assert_non_null(p);
        assert_int_equal(mem_ctx_bytes(m) - before, mem_usable_size(m, p));
        assert_int_equal(mem_good_size(m, size), mem_usable_size(m, p) > size
                                                     ? mem_usable_size(m, p) : size);
        mem_free_sized(m, p, size);
        assert_int_equal(mem_ctx_bytes(m), before);
    }
}

/* A bound context allocates, reallocates and frees with the same counts;
   a second bind binds nothing; after the unbind nothing is bound. */
static void test_bind(void **state)
{
    mem_ctx *m = *state;
    mem_ctx *other = mem_ctx_new();
    assert_non_null(other);
    mem_binding b = mem_ctx_bind(m);
    mem_binding again = mem_ctx_bind(other);
    assert_null(again.ctx);
    void *p[64];
    for (int i = 0; i < 64; i++) {
        p[i] = mem_alloc(m, (size_t)(i * 37 + 1));
        assert_non_null(p[i]);
    }
    void *q = mem_alloc(other, 100);
    assert_non_null(q);
    assert_int_equal(mem_ctx_bytes(other), mem_usable_size(other, q));
    p[3] = mem_realloc_sized(m, p[3], 3 * 37 + 1, 5000);
    assert_non_null(p[3]);
    size_t sum = 0;
    for (int i = 0; i < 64; i++)
        sum += mem_usable_size(m, p[i]);
    assert_int_equal(mem_ctx_bytes(m), sum);
    mem_ctx_unbind(&again);
    mem_ctx_unbind(&b);
    assert_null(b.ctx);
    /* Blocks allocated while bound free after the unbind. */
    for (int i = 0; i < 64; i++)
        mem_free(m, p[i]);
    mem_free(other, q);
    assert_int_equal(mem_ctx_bytes(m), 0);
    assert_int_equal(mem_ctx_bytes(other), 0);
    /* And the other context can bind now. */
    again = mem_ctx_bind(other);
    void *r = mem_alloc(other, 10);
    assert_non_null(r);
    mem_free(other, r);
    mem_ctx_unbind(&again);
    mem_ctx_release(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_size_classes, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_bind, mem_ctx_setup, mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
