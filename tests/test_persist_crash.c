/*
 * Crash safety of strata_save (docs/FORMAT.md): a child process saves two graphs,
 * A and B, over the same file in turn, as fast as it can; the parent kills
 * it with SIGKILL at a random moment, then loads the file.  It must load
 * whole and be exactly A or exactly B — never a mix, never damaged —
 * whatever the moment of the kill.  50 rounds, random delays up to 40 ms
 * (a save of these graphs takes a few milliseconds, so kills land in
 * every phase: writing, fsync, rename, directory fsync).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "persist_support.h"
#include "support/tmp_dir.h"

/* A graph of n nodes in a ring, each with a property naming the graph. */
static strata_graph *ring(const char *tag, int n)
{
    strata_graph *g = NULL;
    strata_token l, t, k;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token_intern(g, STRATA_LABEL, tag, &l);
    strata_token_intern(g, STRATA_RELTYPE, "NEXT", &t);
    strata_token_intern(g, STRATA_KEY, "graph", &k);
    strata_id first = 0, prev = 0, id, r;
    for (int i = 0; i < n; i++) {
        assert_int_equal(strata_node_create(g, &l, 1, &id), STRATA_OK);
        strata_value *v = strata_value_string(tag, strlen(tag));
        assert_int_equal(strata_node_set(g, id, k, v), STRATA_OK);
        strata_value_free(&v);
        if (i)
            assert_int_equal(strata_rel_create(g, prev, id, t, &r), STRATA_OK);
        else
            first = id;
        prev = id;
    }
    assert_int_equal(strata_rel_create(g, prev, first, t, &r), STRATA_OK);
    return g;
}

static void test_kill_during_saves(void **state)
{
    (void)state;
    strata_graph *a = ring("A", 3000), *b = ring("B", 2000);
    char *want_a = dump_graph(a), *want_b = dump_graph(b);
    char path[400];
    snprintf(path, sizeof path, "%s/target.db", tmp_dir);
    assert_int_equal(strata_save(a, path), STRATA_OK);
    srand((unsigned)time(NULL));
    int seen_a = 0, seen_b = 0;
    for (int round = 0; round < 50; round++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            for (long i = 0;; i++)
                if (strata_save(i % 2 ? a : b, path) != STRATA_OK)
                    _exit(2);
        }
        struct timespec ts = { 0, (long)(rand() % 40000) * 1000 };
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFSIGNALED(status))
            fail_msg("round %d: the saving process stopped on its own (%d)", round, status);
        strata_graph *g = NULL;
        char err[512];
        strata_status s = strata_load_ex(path, &g, err, sizeof err);
        if (s != STRATA_OK)
            fail_msg("round %d: %s (%s)", round, strata_errstr(s), err);
        char *got = dump_graph(g);
        if (strcmp(got, want_a) == 0)
            seen_a++;
        else if (strcmp(got, want_b) == 0)
            seen_b++;
        else
            fail_msg("round %d: the file holds neither graph", round);
        free(got);
        strata_graph_free(&g);
    }
    /* Stray temporary files are the one thing a kill may leave. */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -f '%s'/target.db.tmp-*", tmp_dir);
    assert_int_equal(system(cmd), 0);
    print_message("A %d times, B %d times\n", seen_a, seen_b);
    free(want_a);
    free(want_b);
    strata_graph_free(&a);
    strata_graph_free(&b);
}

static int make_dir(void **state)
{
    (void)state;
    return tmp_dir_make("strata-crash");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_during_saves),
    };
    return cmocka_run_group_tests(tests, make_dir, tmp_dir_remove);
}
