/* Cypher on views: a query on a view sees exactly the view's state while
   the writer goes on, refuses to write, and runs on reader threads
   concurrently with a writer running Cypher of its own. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "strata.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    strata_result_free(&r);
}

/* count(n) and sum(n.v) of :L nodes through Cypher on v. */
static void view_counts(strata_view *v, int64_t *count, int64_t *sum)
{
    strata_result *r = NULL;
    assert_int_equal(strata_view_query(v, "MATCH (n:L) RETURN count(n), sum(n.v)", NULL, &r),
                     STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    assert_int_equal(strata_value_get_int(row[0], count), STRATA_OK);
    if (*count == 0)
        *sum = 0;
    else
        assert_int_equal(strata_value_get_int(row[1], sum), STRATA_OK);
    strata_result_free(&r);
}

static void test_view_query_sees_its_state(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(1, 10) AS i CREATE (:L {v: i})");
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    run(g, "MATCH (n:L) SET n.v = n.v * 100");
    run(g, "CREATE (:L {v: 1})");
    int64_t count, sum;
    view_counts(v, &count, &sum);
    assert_int_equal(count, 10);
    assert_int_equal(sum, 55);
    /* writes are refused before anything runs */
    const char *writes[] = {"CREATE (:X)", "MATCH (n) SET n.v = 1", "MATCH (n) DETACH DELETE n",
                            "MERGE (:X)", "CREATE INDEX FOR (n:L) ON (n.v)",
                            "RETURN 1 AS a UNION MATCH (n) REMOVE n.v RETURN 2 AS a"};
    for (size_t i = 0; i < sizeof writes / sizeof *writes; i++) {
        strata_result *r = NULL;
        assert_int_not_equal(strata_view_query(v, writes[i], NULL, &r), STRATA_OK);
        assert_string_equal(strata_result_error(r)->code, "SemanticError");
        strata_result_free(&r);
    }
    /* the result's view outlives the view queried */
    strata_result *r = NULL;
    assert_int_equal(strata_view_query(v, "MATCH (n:L {v: 3}) RETURN n", NULL, &r), STRATA_OK);
    strata_view_release(&v);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    strata_id id;
    assert_int_equal(strata_value_get_id(row[0], &id), STRATA_OK);
    strata_token key;
    assert_int_equal(strata_token_lookup(strata_result_view(r), STRATA_KEY, "v", &key), STRATA_OK);
    strata_value *val = NULL;
    assert_int_equal(strata_node_get(strata_result_view(r), id, key, &val), STRATA_OK);
    int64_t x;
    assert_int_equal(strata_value_get_int(val, &x), STRATA_OK);
    assert_int_equal(x, 3);
    strata_value_free(&val);
    strata_result_free(&r);
    strata_graph_free(&g);
}

typedef struct shared {
    strata_graph *g;
    atomic_bool done;
    atomic_long checks;
    atomic_int bad;
} shared;

/* Each :L node created carries v = 1, so on any view sum = count, and the
   Cypher count equals the label count through the direct API. */
static void *reader(void *p)
{
    shared *s = p;
    strata_token label;
    for (bool last = false; !last;) {
        last = atomic_load(&s->done);
        strata_view *v;
        if (strata_snapshot(s->g, &v) != STRATA_OK) {
            atomic_fetch_add(&s->bad, 1);
            continue;
        }
        int64_t count = 0, sum = 0, direct = 0;
        strata_result *r = NULL;
        if (strata_view_query(v, "MATCH (n:L) RETURN count(n), sum(n.v)", NULL, &r) == STRATA_OK) {
            const strata_value *const *row;
            if (strata_result_next(r, &row)) {
                strata_value_get_int(row[0], &count);
                strata_value_get_int(row[1], &sum);
            }
        } else {
            atomic_fetch_add(&s->bad, 1);
        }
        strata_result_free(&r);
        strata_node_iter *it = NULL;
        if (strata_token_lookup(v, STRATA_LABEL, "L", &label) == STRATA_OK &&
            strata_nodes_by_label(v, label, &it) == STRATA_OK) {
            strata_id id;
            while (strata_node_iter_next(it, &id))
                direct++;
            strata_node_iter_free(&it);
        }
        if (count != direct || (count > 0 && sum != count))
            atomic_fetch_add(&s->bad, 1);
        atomic_fetch_add(&s->checks, 1);
        strata_view_release(&v);
    }
    return NULL;
}

static void test_readers_query_while_writer_writes(void **state)
{
    (void)state;
    shared s = {0};
    assert_int_equal(strata_graph_new(&s.g), STRATA_OK);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, reader, &s), 0);
    for (int i = 0; i < 200; i++) {
        /* new labels and keys on the way: the catalogs grow under readers */
        char q[128];
        snprintf(q, sizeof q, "CREATE (:L {v: 1})-[:R]->(:M%d {k%d: %d})", i % 17, i % 13, i);
        run(s.g, q);
        if (i % 10 == 0)
            run(s.g, "MATCH (m)<-[:R]-(n:L) WITH m LIMIT 3 SET m.touched = true");
    }
    atomic_store(&s.done, true);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&s.bad), 0);
    assert_true(atomic_load(&s.checks) >= 2);
    strata_graph_free(&s.g);
}

/* Threads that make a graph's first plan at the same moment: the plan
   cache is made once, whoever wins, with nothing written by the losers
   (TSan found the cache's free function written by each). */
typedef struct first_plan {
    strata_view *v;
    pthread_barrier_t *start;
    int64_t count;
} first_plan;

static void *query_first(void *p)
{
    first_plan *f = p;
    int64_t sum;
    pthread_barrier_wait(f->start);
    view_counts(f->v, &f->count, &sum);
    return NULL;
}

static void test_first_plans_at_once(void **state)
{
    (void)state;
    enum { THREADS = 4, ROUNDS = 200 };
    for (int round = 0; round < ROUNDS; round++) {
        strata_graph *g;
        assert_int_equal(strata_graph_new(&g), STRATA_OK);   /* no plan made yet */
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, THREADS);
        first_plan f[THREADS];
        pthread_t th[THREADS];
        for (int i = 0; i < THREADS; i++) {
            assert_int_equal(strata_snapshot(g, &f[i].v), STRATA_OK);
            f[i].start = &start;
        }
        for (int i = 0; i < THREADS; i++)
            assert_int_equal(pthread_create(&th[i], NULL, query_first, &f[i]), 0);
        for (int i = 0; i < THREADS; i++) {
            pthread_join(th[i], NULL);
            assert_int_equal(f[i].count, 0);
            strata_view_release(&f[i].v);
        }
        pthread_barrier_destroy(&start);
        strata_graph_free(&g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_query_sees_its_state),
        cmocka_unit_test(test_readers_query_while_writer_writes),
        cmocka_unit_test(test_first_plans_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
