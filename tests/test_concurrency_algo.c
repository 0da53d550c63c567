/* Algorithms on a view while the writer writes, and interrupted from
   another thread (labelled concurrency: runs under ThreadSanitizer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "strata.h"

static strata_graph *ring_graph(size_t n)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token type;
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "R", &type), STRATA_OK);
    for (size_t i = 0; i < n; i++) {
        strata_id id;
        assert_int_equal(strata_node_create(g, NULL, 0, &id), STRATA_OK);
    }
    for (size_t i = 0; i < n; i++) {
        strata_id rel;
        assert_int_equal(strata_rel_create(g, i, (i + 1) % n, type, &rel), STRATA_OK);
        if (i % 3 == 0)
            assert_int_equal(strata_rel_create(g, i, (i * 7) % n, type, &rel), STRATA_OK);
    }
    return g;
}

typedef struct writer_arg {
    strata_graph *g;
    atomic_bool stop;
    atomic_size_t writes;
} writer_arg;

/* Creates nodes and relationships, deletes some, until told to stop. */
static void *writer(void *p)
{
    writer_arg *w = p;
    strata_token type;
    strata_token_intern(w->g, STRATA_RELTYPE, "R", &type);
    while (!atomic_load(&w->stop)) {
        strata_id a, b, rel;
        if (strata_node_create(w->g, NULL, 0, &a) != STRATA_OK ||
            strata_node_create(w->g, NULL, 0, &b) != STRATA_OK ||
            strata_rel_create(w->g, a, b, type, &rel) != STRATA_OK ||
            strata_rel_create(w->g, a, atomic_load(&w->writes) % 1000, type, &rel) != STRATA_OK) {
            atomic_store(&w->stop, true);   /* the count tells the test */
            break;
        }
        if (atomic_load(&w->writes) % 2 == 0)
            strata_rel_delete(w->g, rel);
        atomic_fetch_add(&w->writes, 1);
    }
    return NULL;
}

static void pause_ms(long ms)
{
    struct timespec pause = {0, ms * 1000 * 1000};
    nanosleep(&pause, NULL);
}

static strata_value *threads_config(int threads)
{
    const char *key = "threads";
    strata_value *t = strata_value_int(threads);
    strata_value *m = strata_value_map(&key, (const strata_value *const *)&t, 1);
    strata_value_free(&t);
    return m;
}

/* A view's answer does not move while the writer writes: the same rows
   before the writer starts, during its writes, on 1 and 2 threads. */
static void test_concurrency_algo_under_writes(void **state)
{
    (void)state;
    strata_graph *g = ring_graph(20000);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    const char *algos[] = {"wcc", "pagerank", "scc", "triangles", "kcore"};
    strata_algo_result *before[5];
    strata_value *one = threads_config(1), *two = threads_config(2);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(strata_algo_run(v, algos[i], one, &before[i]), STRATA_OK);
    writer_arg w = {.g = g};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, writer, &w), 0);
    /* the reads below overlap writes, however late the writer starts */
    while (atomic_load(&w.writes) == 0 && !atomic_load(&w.stop))
        pause_ms(1);
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < 5; i++) {
            strata_algo_result *r;
            assert_int_equal(strata_algo_run(v, algos[i], two, &r), STRATA_OK);
            size_t rows = strata_algo_result_rows(r);
            assert_int_equal(rows, strata_algo_result_rows(before[i]));
            assert_memory_equal(strata_algo_result_nodes(r), strata_algo_result_nodes(before[i]),
                                rows * sizeof(strata_id));
            assert_memory_equal(strata_algo_result_values(r),
                                strata_algo_result_values(before[i]),
                                rows * strata_algo_result_columns(r) * sizeof(double));
            strata_algo_result_free(&r);
        }
    atomic_store(&w.stop, true);
    pthread_join(t, NULL);
    assert_true(w.writes > 0);
    /* a new view sees the writes */
    strata_view *after;
    assert_int_equal(strata_snapshot(g, &after), STRATA_OK);
    strata_algo_result *r;
    assert_int_equal(strata_algo_run(after, "wcc", two, &r), STRATA_OK);
    assert_true(strata_algo_result_rows(r) > strata_algo_result_rows(before[0]));
    strata_algo_result_free(&r);
    strata_view_release(&after);
    for (size_t i = 0; i < 5; i++)
        strata_algo_result_free(&before[i]);
    strata_value_free(&one);
    strata_value_free(&two);
    strata_view_release(&v);
    strata_graph_free(&g);
}

typedef struct run_arg {
    strata_view *v;
    strata_value *cfg;
    atomic_bool done;
    strata_status status;
} run_arg;

static void *long_run(void *p)
{
    run_arg *a = p;
    strata_algo_result *r = NULL;
    a->status = strata_algo_run(a->v, "pagerank", a->cfg, &r);
    strata_algo_result_free(&r);
    atomic_store(&a->done, true);
    return NULL;
}

/* PageRank told to run a million iterations stops on strata_interrupt
   (it could not end by itself within the test's time). */
static void test_concurrency_algo_interrupt(void **state)
{
    (void)state;
    strata_graph *g = ring_graph(20000);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    const char *keys[] = {"iterations", "threads", "tolerance"};
    strata_value *vals[] = {strata_value_int(1000000), strata_value_int(2),
                            strata_value_float(0)};
    strata_value *cfg = strata_value_map(keys, (const strata_value *const *)vals, 3);
    for (size_t i = 0; i < 3; i++)
        strata_value_free(&vals[i]);
    run_arg a = {.v = v, .cfg = cfg};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, long_run, &a), 0);
    /* a run clears the flag as it starts, so an interrupt sent before that
       is lost: send it until the run has ended */
    while (!atomic_load(&a.done)) {
        strata_interrupt(g);
        pause_ms(5);
    }
    pthread_join(t, NULL);
    assert_int_equal(a.status, STRATA_EINTERRUPTED);
    assert_non_null(strstr(strata_view_errmsg(v), "interrupted"));
    strata_value_free(&cfg);
    strata_view_release(&v);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrency_algo_under_writes),
        cmocka_unit_test(test_concurrency_algo_interrupt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
