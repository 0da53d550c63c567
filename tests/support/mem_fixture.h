/*
 * The cmocka fixture of the storage-level tests: each test gets a fresh
 * mem_ctx in *state, and the teardown asserts that nothing allocated from
 * it is left (and clears any allocation failure the test armed).
 * Include after <cmocka.h> and "storage/mem.h".
 */
#ifndef STRATA_TESTS_SUPPORT_MEM_FIXTURE_H
#define STRATA_TESTS_SUPPORT_MEM_FIXTURE_H

static int mem_ctx_setup(void **state)
{
    *state = mem_ctx_new();
    return *state ? 0 : -1;
}

static int mem_ctx_teardown(void **state)
{
    mem_ctx *m = *state;
    mem_fail_clear();
    assert_int_equal(mem_ctx_bytes(m), 0);
    mem_ctx_release(m);
    return 0;
}

#endif
