/*
 * kill -9 at random moments loses no acknowledged commit (docs/FORMAT.md).
 *
 * Each cycle forks a child that opens the database with sync full and runs
 * units of random work (wal_support.h), writing the number of units done
 * to a pipe after each returns; the parent kills it with SIGKILL after a
 * random delay, reads how many units were acknowledged (K), reopens the
 * database and compares it with a model: an in-memory graph that ran the
 * same units.  The database must equal the model after K units, or after
 * K+1 (the unit under way when the kill came may have reached the log).
 * Cycles: 30, or STRATA_WAL_CRASH_CYCLES.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "strata.h"
#include "persist_support.h"
#include "wal_support.h"

/* Unit 0 interns the tokens and creates a node; then random units. */
static void run_unit(strata_graph *g, rng *r, wal_tokens *t, uint32_t i)
{
    if (i == 0) {
        wal_intern_all(g, t);
        strata_id n;
        assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
    } else {
        wal_random_unit(g, r, t);
    }
}

static void child(const char *db, uint64_t seed, int fd)
{
    strata_graph *g = NULL;
    strata_open_options o = { .sync = STRATA_SYNC_FULL };
    if (strata_open(db, &o, &g) != STRATA_OK)
        _exit(3);
    rng r = { seed };
    wal_tokens t;
    for (uint32_t i = 0;; i++) {
        run_unit(g, &r, &t, i);
        uint32_t done = i + 1;
        if (write(fd, &done, sizeof done) != sizeof done)
            _exit(4);
    }
}

static void test_kill_cycles(void **state)
{
    (void)state;
    char dir[256], db[300];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    snprintf(db, sizeof db, "%s/db", dir);
    int cycles = getenv("STRATA_WAL_CRASH_CYCLES") ? atoi(getenv("STRATA_WAL_CRASH_CYCLES")) : 30;
    strata_graph *model = NULL;
    assert_int_equal(strata_graph_new(&model), STRATA_OK);
    rng delays = { 424242 };
    uint64_t total_units = 0;
    int matched_next = 0;
    for (int c = 0; c < cycles; c++) {
        uint64_t seed = 1000u + (uint64_t)c;
        int p[2];
        assert_int_equal(pipe(p), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(p[0]);
            child(db, seed, p[1]);
        }
        close(p[1]);
        /* Wait for the first acknowledgement, then a random while. */
        uint32_t acked = 0, x;
        if (read(p[0], &x, sizeof x) == sizeof x)
            acked = x;
        struct timespec d = { 0, (long)rng_below(&delays, 40) * 1000000L };
        nanosleep(&d, NULL);
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status));
        while (read(p[0], &x, sizeof x) == sizeof x)
            acked = x;
        close(p[0]);

        strata_graph *g = NULL;
        strata_open_options o = { .sync = STRATA_SYNC_OFF };
        wal_open_ok(db, &o, &g);
        char *got = wal_dump_with_next_ids(g);
        assert_int_equal(strata_close(&g), STRATA_OK);

        rng r = { seed };
        wal_tokens t;
        for (uint32_t i = 0; i < acked; i++)
            run_unit(model, &r, &t, i);
        char *want = wal_dump_with_next_ids(model);
        if (strcmp(want, got) != 0) {
            /* The unit under way reached the log before the kill. */
            run_unit(model, &r, &t, acked);
            free(want);
            want = wal_dump_with_next_ids(model);
            matched_next++;
        }
        wal_assert_same(want, got);
        free(want);
        free(got);
        total_units += acked;
    }
    print_message("%d cycles, %llu acknowledged units, %d with the unit under way kept\n",
                  cycles, (unsigned long long)total_units, matched_next);
    strata_graph_free(&model);
    wal_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_cycles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
