/*
 * The journal's room: a write reserves, once, what it will append, stated
 * by kind (journal_need); the sum is checked against the journal's limit;
 * and appending past the reservation is caught even where the array has
 * spare room (the array grows by doubling, so a capacity check alone
 * would hide a write that under-states its need).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "journal/journal.h"

static void test_need_past_the_limit_is_refused(void **state)
{
    (void)state;
    journal j;
    journal_init(&j);
    /* Each count fits, their sum does not. */
    journal_need need = { .of[UNDO_PROP] = UINT32_MAX, .of[UNDO_LABELS] = 1 };
    assert_int_equal(journal_reserve(&j, mem_scratch(), &need), -1);
    /* Every kind at its largest count. */
    journal_need all = { 0 };
    for (int k = 0; k < UNDO_KIND_COUNT; k++)
        all.of[k] = UINT32_MAX;
    assert_int_equal(journal_reserve(&j, mem_scratch(), &all), -1);
    assert_null(j.e);
    assert_int_equal(j.cap, 0);
    assert_int_equal(j.n, 0);
    journal_free(&j, mem_scratch());
}

static void test_reservation_is_the_sum_of_the_kinds(void **state)
{
    (void)state;
    journal j;
    journal_init(&j);
    journal_need need = { .of[UNDO_PROP] = 3, .of[UNDO_INDEX_STACK] = 20, .of[UNDO_LABELS] = 1 };
    assert_int_equal(journal_reserve(&j, mem_scratch(), &need), 0);
    assert_true(j.cap >= 24);
    for (int i = 0; i < 24; i++)
        assert_int_equal(journal_push(&j, UNDO_LABELS)->kind, UNDO_LABELS);
    assert_int_equal(j.n, 24);
    /* A second write's reservation counts from where the first ended. */
    journal_need one = { .of[UNDO_NODE_CREATED] = 1 };
    assert_int_equal(journal_reserve(&j, mem_scratch(), &one), 0);
    assert_true(j.cap >= 25);
    journal_push(&j, UNDO_NODE_CREATED);
    journal_truncate(&j, mem_scratch(), 0);
    assert_int_equal(j.n, 0);
    journal_free(&j, mem_scratch());
}

/* Reserves one entry, appends two: the array has room for 16, the write
   reserved one. */
static void push_past_reservation(void)
{
    journal j;
    journal_init(&j);
    journal_need one = { .of[UNDO_PROP] = 1 };
    if (journal_reserve(&j, mem_scratch(), &one) != 0 || j.cap < 2)
        _exit(2);
    journal_push(&j, UNDO_PROP);
    journal_push(&j, UNDO_PROP);
    _exit(0);
}

static void test_push_past_reservation_is_caught(void **state)
{
    (void)state;
    /* Test builds (STRATA_TESTING) check the room even where asserts are
       compiled out. */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        push_past_reservation();
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_need_past_the_limit_is_refused),
        cmocka_unit_test(test_reservation_is_the_sum_of_the_kinds),
        cmocka_unit_test(test_push_past_reservation_is_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
