/* strata_view_interrupt and strata_result_interrupt, from another thread,
   stop a read on a view that would otherwise run for hours — both while
   strata_view_query computes its first rows and while a lazy result is
   read — with the code "Interrupted"; the graph and other views go on. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "strata.h"

typedef struct interrupter {
    strata_view *v;            /* interrupted while strata_view_query runs */
    _Atomic(strata_result *) r; /* then the result, once there is one */
    atomic_bool done;
    atomic_int asked;
} interrupter;

/* Keeps asking until the reader is done: a request made before the query
   starts is cleared by it, so one call alone could be lost. */
static void *keep_interrupting(void *arg)
{
    interrupter *it = arg;
    struct timespec pause = {0, 5 * 1000 * 1000};
    while (!atomic_load(&it->done)) {
        nanosleep(&pause, NULL);
        strata_result *r = atomic_load(&it->r);
        if (r)
            strata_result_interrupt(r);
        else
            strata_view_interrupt(it->v);
        atomic_fetch_add(&it->asked, 1);
    }
    return NULL;
}

static strata_graph *complete_digraph(void)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "UNWIND range(1, 12) AS i CREATE (:K {i: i})", NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    assert_int_equal(strata_query(g, "MATCH (a:K), (b:K) WHERE a <> b CREATE (a)-[:E]->(b)",
                                  NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    return g;
}

/* Runs query on a view with an interrupter; *started says whether the
   result existed before the interrupt landed (the lazy phase). */
static void run_interrupted(strata_graph *g, const char *query, bool result_phase)
{
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    interrupter it = {.v = v};
    pthread_t t;
    strata_result *r = NULL;
    if (result_phase) {
        /* the result exists first, then the interrupter starts */
        assert_int_equal(strata_view_query(v, query, NULL, &r), STRATA_OK);
        atomic_store(&it.r, r);
    }
    assert_int_equal(pthread_create(&t, NULL, keep_interrupting, &it), 0);
    if (!result_phase)
        strata_view_query(v, query, NULL, &r);
    if (r && !strata_result_error(r))
        while (strata_result_next(r, NULL))
            ;
    atomic_store(&it.done, true);
    pthread_join(t, NULL);
    assert_true(atomic_load(&it.asked) > 0);
    const strata_query_error *e = strata_result_error(r);
    assert_non_null(e);
    assert_string_equal(e->code, "Interrupted");
    strata_result_free(&r);
    /* the view answers the next query: a new query clears the request */
    assert_int_equal(strata_view_query(v, "MATCH (n:K) RETURN count(n) AS c", NULL, &r),
                     STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    int64_t c = 0;
    assert_int_equal(strata_value_get_int(row[0], &c), STRATA_OK);
    assert_int_equal(c, 12);
    strata_result_free(&r);
    strata_view_release(&v);
}

static void test_view_query_interrupted(void **state)
{
    (void)state;
    strata_graph *g = complete_digraph();
    /* no row for hours: the interrupt lands inside strata_view_query */
    run_interrupted(g, "MATCH p = (a:K {i: 1})-[*]->(b) WHERE length(p) > 100 RETURN count(*)",
                    false);
    strata_graph_free(&g);
}

static void test_lazy_result_interrupted(void **state)
{
    (void)state;
    strata_graph *g = complete_digraph();
    /* ten billion rows, read lazily: the interrupt ends the reading */
    run_interrupted(g, "UNWIND range(1, 10000000) AS i UNWIND range(1, 1000) AS j RETURN i, j",
                    true);
    strata_graph_free(&g);
}

static void test_interrupting_one_view_spares_another(void **state)
{
    (void)state;
    strata_graph *g = complete_digraph();
    strata_view *a, *b;
    assert_int_equal(strata_snapshot(g, &a), STRATA_OK);
    assert_int_equal(strata_snapshot(g, &b), STRATA_OK);
    strata_result *ra = NULL, *rb = NULL;
    const char *q = "UNWIND range(1, 5000) AS i RETURN i";
    assert_int_equal(strata_view_query(a, q, NULL, &ra), STRATA_OK);
    assert_int_equal(strata_view_query(b, q, NULL, &rb), STRATA_OK);
    strata_result_interrupt(ra);
    size_t na = 0, nb = 0;
    while (strata_result_next(ra, NULL))
        na++;
    while (strata_result_next(rb, NULL))
        nb++;
    assert_non_null(strata_result_error(ra));
    assert_string_equal(strata_result_error(ra)->code, "Interrupted");
    assert_true(na < 5000);
    assert_null(strata_result_error(rb));
    assert_int_equal(nb, 5000);
    strata_result_free(&ra);
    strata_result_free(&rb);
    /* NULL is ignored */
    strata_view_interrupt(NULL);
    strata_result_interrupt(NULL);
    strata_view_release(&a);
    strata_view_release(&b);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_query_interrupted),
        cmocka_unit_test(test_lazy_result_interrupted),
        cmocka_unit_test(test_interrupting_one_view_spares_another),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
