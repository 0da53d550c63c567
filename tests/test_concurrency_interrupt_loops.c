/* Interrupt latency of every loop inside one expression: list
   comprehensions, the quantifiers, reduce, range(), IN, list and string
   functions, pattern comprehensions, and loops nested so deep that none
   of them alone runs long.  Each query below would run for minutes (the
   comments give rough uninterrupted times for a release build; with the
   checks disabled, the range() and pattern comprehension cases were still
   running after 300 s on a loaded machine); another thread
   asks it to stop after QUERY_HEAD_START and it must fail with
   "Interrupted" within LATENCY_BOUND.  The same through strata_query
   (strata_interrupt), strata_view_query_cancellable (a strata_cancel) and
   strata_result_interrupt, and one view query stopped while another on
   the same graph runs to its end. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "strata.h"

/* The query runs this long before the request.  The latency is the
   processor time the querying thread spends after the request, which a
   loaded machine does not stretch: a check every 1024 loop steps answers
   in milliseconds, and the bound leaves room for a sanitizer build to
   finish one bulk step (a 160 MB list copied or freed).  Wall time gets a
   far looser bound still. */
#define QUERY_HEAD_START_MS 100
#define LATENCY_BOUND_MS 3000
#define WALL_BOUND_MS 60000

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Processor time used by thread t so far. */
static double cpu_ms(pthread_t t)
{
    clockid_t id;
    struct timespec ts;
    if (pthread_getcpuclockid(t, &id) != 0 || clock_gettime(id, &ts) != 0)
        return 0;
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

typedef enum stop_way { BY_GRAPH, BY_CANCEL, BY_RESULT } stop_way;

typedef struct stopper {
    stop_way how;
    strata_graph *g;
    strata_cancel *cancel;
    _Atomic(strata_result *) result;   /* BY_RESULT: set once returned */
    atomic_bool started, done;
    pthread_t querying;                /* the thread running the query */
    double asked_ms;                   /* when the first request was made */
    double asked_cpu_ms;               /* the querying thread's time then */
} stopper;

/* Waits for the query to start, gives it a head start, then asks it to
   stop — again every millisecond until it is over (a statement clears
   strata_interrupt's flag when it starts, so a single early request could
   be lost). */
static void *stop_query(void *arg)
{
    stopper *s = arg;
    while (!atomic_load(&s->started))
        sleep_ms(1);
    sleep_ms(QUERY_HEAD_START_MS);
    bool asked = false;
    while (!atomic_load(&s->done)) {
        strata_result *r = atomic_load(&s->result);
        if (s->how == BY_RESULT && !r) {
            sleep_ms(1);
            continue;
        }
        if (!asked) {
            s->asked_ms = now_ms();
            s->asked_cpu_ms = cpu_ms(s->querying);
        }
        asked = true;
        if (s->how == BY_GRAPH)
            strata_interrupt(s->g);
        else if (s->how == BY_CANCEL)
            strata_cancel_request(s->cancel);
        else
            strata_result_interrupt(r);
        sleep_ms(1);
    }
    return NULL;
}

static strata_value *int_param(const char *name, int64_t i)
{
    strata_value *v = strata_value_int(i);
    strata_value *p = strata_value_map(&name, (const strata_value *const *)&v, 1);
    strata_value_free(&v);
    assert_non_null(p);
    return p;
}

/* Runs text on g (or on a view of g), has it stopped the way `how` says,
   and checks it failed with "Interrupted" within LATENCY_BOUND_MS. */
static void expect_stopped(strata_graph *g, stop_way how, const char *text, const strata_value *params)
{
    stopper s = {.how = how, .g = g, .querying = pthread_self()};
    strata_view *v = NULL;
    if (how != BY_GRAPH)
        assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    if (how == BY_CANCEL)
        assert_int_equal(strata_cancel_new(&s.cancel), STRATA_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, stop_query, &s), 0);
    atomic_store(&s.started, true);
    strata_result *r = NULL;
    if (how == BY_GRAPH)
        (void)strata_query(g, text, params, &r);
    else
        (void)strata_view_query_cancellable(v, text, params, s.cancel, &r);
    assert_non_null(r);
    atomic_store(&s.result, r);
    while (strata_result_next(r, NULL))
        ;
    double end = now_ms(), end_cpu = cpu_ms(pthread_self());
    atomic_store(&s.done, true);
    pthread_join(t, NULL);
    const strata_query_error *e = strata_result_error(r);
    if (!e || strcmp(e->code, "Interrupted") != 0)
        fail_msg("%s: expected Interrupted, got %s", text, e ? e->message : "no error");
    double latency = end_cpu - s.asked_cpu_ms, wall = end - s.asked_ms;
    if (getenv("LATENCY_PRINT"))
        printf("%6.1f ms cpu %6.1f ms wall  %s\n", latency, wall, text);
    if (latency > LATENCY_BOUND_MS || wall > WALL_BOUND_MS)
        fail_msg("%s: stopped after %.0f ms of processor time, %.0f ms, after the request "
                 "(bounds %d, %d ms)", text, latency, wall, LATENCY_BOUND_MS, WALL_BOUND_MS);
    strata_result_free(&r);
    strata_cancel_free(&s.cancel);
    strata_view_release(&v);
}

/* Each entry runs for a long time unless stopped: the loop it exercises
   is the only one that can notice a request in time. */
static const char *const long_queries[] = {
    /* list comprehension, 20000 x 20000 steps (~40 s) */
    "RETURN [x IN range(1, $n) WHERE size([y IN range(1, $n) WHERE y = -x]) > 0] AS l",
    /* the quantifiers (~30 s each) */
    "RETURN any(x IN range(1, $n) WHERE any(y IN range(1, $n) WHERE x * y < 0)) AS b",
    "RETURN all(x IN range(1, $n) WHERE all(y IN range(1, $n) WHERE x * y > 0)) AS b",
    "RETURN none(x IN range(1, $n) WHERE none(y IN range(1, $n) WHERE x * y < 0)) AS b",
    "RETURN single(x IN range(1, $n) WHERE single(y IN range(1, $n) WHERE x * y < 0)) AS b",
    /* reduce (~30 s) */
    "RETURN reduce(s = 0, x IN range(1, $n) | s + reduce(t = 0, y IN range(1, $n) | t + y)) AS s",
    /* range(): ten million elements a call, thousands of calls; the outer
       loop checks once per 1024 calls, far too seldom (~100 s) */
    "RETURN reduce(s = 0, x IN range(1, 2000) | s + size(range(1, 10000000))) AS s",
    /* IN over a long list: one step of the outer loop is 10^7 comparisons
       (~20 ms), 1024 of them far over the bound (~hours) */
    "WITH range(1, 10000000) AS l RETURN any(x IN range(1, $n) WHERE -x IN l) AS b",
    /* list functions over long lists (~100 s) */
    "WITH range(1, 10000000) AS l "
    "RETURN reduce(s = 0, x IN range(1, 2000) | s + size(reverse(l)) + size(tail(l))) AS s",
    "WITH range(1, 10000000) AS l RETURN reduce(s = 0, x IN range(1, 2000) | s + size(l[1..])) AS s",
    "WITH range(1, 5000000) AS l RETURN reduce(s = 0, x IN range(1, 2000) | s + size(l + l)) AS s",
    /* string building: split and replace of a 10 MB string (~100 s) */
    "WITH reduce(s = ',', i IN range(1, 23) | s + s) AS long "
    "RETURN reduce(c = 0, x IN range(1, 2000) | c + size(split(long, ','))) AS c",
    "WITH reduce(s = ',', i IN range(1, 23) | s + s) AS long "
    "RETURN reduce(c = 0, x IN range(1, 2000) | c + size(replace(long, ',', ';;'))) AS c",
    /* loops of 100 steps nested five deep: no loop alone reaches 1024 steps,
       10^10 together (~hours) */
    "RETURN any(a IN range(1, 100) WHERE any(b IN range(1, 100) WHERE any(c IN range(1, 100) "
    "WHERE any(d IN range(1, 100) WHERE any(e IN range(1, 100) WHERE a + b + c + d + e < 0)))))"
    " AS b",
    /* pattern comprehensions nested three deep over a complete digraph on
       150 nodes: 3.4 million matches a row (~1 s), 150 rows, and the rows
       are counted by aggregation, so nothing else checks (~150 s) */
    "MATCH (a:K) RETURN count([(a)-->(b) | size([(b)-->(c) | size([(c)-->(d) | d.i])])]) AS c",
};

static strata_graph *graph_with_complete_digraph(void)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "UNWIND range(1, 150) AS i CREATE (:K {i: i})", NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    assert_int_equal(strata_query(g, "MATCH (a:K), (b:K) WHERE a <> b CREATE (a)-[:E]->(b)",
                                  NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    return g;
}

static void each_long_query(stop_way how)
{
    strata_graph *g = graph_with_complete_digraph();
    strata_value *n = int_param("n", 20000);
    for (size_t i = 0; i < sizeof long_queries / sizeof *long_queries; i++)
        expect_stopped(g, how, long_queries[i], n);
    strata_value_free(&n);
    /* nothing was left behind: the next query runs normally */
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "MATCH (n) RETURN count(n) AS c", NULL, &r), STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    int64_t c;
    assert_int_equal(strata_value_get_int(row[0], &c), STRATA_OK);
    assert_int_equal(c, 150);
    strata_result_free(&r);
    strata_graph_free(&g);
}

static void test_strata_interrupt_stops_every_loop(void **state)
{
    (void)state;
    each_long_query(BY_GRAPH);
}

static void test_cancel_stops_every_loop_of_a_view_query(void **state)
{
    (void)state;
    each_long_query(BY_CANCEL);
}

/* A lazy result being read, stopped through the result itself. */
static void test_result_interrupt_stops_reading(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    expect_stopped(g, BY_RESULT,
                   "UNWIND range(1, 10000000) AS i UNWIND range(1, 1000) AS j RETURN i + j",
                   NULL);
    strata_graph_free(&g);
}

/* ---- one reader stopped, the others not ---- */

typedef struct reader {
    strata_view *v;
    const char *text;
    strata_cancel *cancel;
    atomic_bool over;
    char code[64];
    int64_t value;
} reader;

static void *read_one(void *arg)
{
    reader *rd = arg;
    strata_result *r = NULL;
    (void)strata_view_query_cancellable(rd->v, rd->text, NULL, rd->cancel, &r);
    const strata_value *const *row;
    if (r && strata_result_next(r, &row))
        (void)strata_value_get_int(row[0], &rd->value);
    while (r && strata_result_next(r, NULL))
        ;
    const strata_query_error *e = r ? strata_result_error(r) : NULL;
    snprintf(rd->code, sizeof rd->code, "%s", e ? e->code : "ok");
    strata_result_free(&r);
    atomic_store(&rd->over, true);
    return NULL;
}

static void test_cancel_stops_one_view_query_only(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    reader endless = {.text = "RETURN any(x IN range(1, 9999999) "
                              "WHERE any(y IN range(1, 9999999) WHERE x * y < 0)) AS b"};
    reader finite = {.text = "RETURN size([x IN range(1, 3000000) WHERE x % 3 = 0]) AS c"};
    assert_int_equal(strata_snapshot(g, &endless.v), STRATA_OK);
    assert_int_equal(strata_snapshot(g, &finite.v), STRATA_OK);
    assert_int_equal(strata_cancel_new(&endless.cancel), STRATA_OK);
    assert_int_equal(strata_cancel_new(&finite.cancel), STRATA_OK);
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, read_one, &endless), 0);
    assert_int_equal(pthread_create(&b, NULL, read_one, &finite), 0);
    sleep_ms(QUERY_HEAD_START_MS);
    /* the writer's interrupt is not the readers' */
    strata_interrupt(g);
    strata_cancel_request(endless.cancel);
    double asked = now_ms();
    pthread_join(a, NULL);
    assert_true(now_ms() - asked < WALL_BOUND_MS);
    assert_string_equal(endless.code, "Interrupted");
    pthread_join(b, NULL);
    assert_string_equal(finite.code, "ok");
    assert_int_equal(finite.value, 1000000);
    /* a handle asked before the query starts stops it at once; reset, it
       serves again */
    assert_true(strata_cancel_requested(endless.cancel));
    endless.over = false;
    read_one(&endless);
    assert_string_equal(endless.code, "Interrupted");
    strata_cancel_reset(endless.cancel);
    endless.text = finite.text;
    read_one(&endless);
    assert_string_equal(endless.code, "ok");
    assert_int_equal(endless.value, 1000000);
    strata_cancel_free(&endless.cancel);
    strata_cancel_free(&finite.cancel);
    assert_null(endless.cancel);
    strata_cancel_free(&endless.cancel);   /* NULL: no-op */
    strata_view_release(&endless.v);
    strata_view_release(&finite.v);
    strata_graph_free(&g);
}

/* The result keeps its own reference to the handle: the caller may free
   it while the result is still read, and a request made before does not
   reach a result of another handle. */
static void test_result_keeps_its_cancel(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    strata_cancel *c;
    assert_int_equal(strata_cancel_new(&c), STRATA_OK);
    strata_result *r = NULL;
    assert_int_equal(strata_view_query_cancellable(v, "UNWIND range(1, 5000) AS i RETURN i",
                                                   NULL, c, &r),
                     STRATA_OK);
    strata_cancel_free(&c);
    size_t rows = 0;
    while (strata_result_next(r, NULL))
        rows++;
    assert_int_equal(rows, 5000);
    assert_null(strata_result_error(r));
    strata_result_interrupt(r);   /* read to its end: left as it is */
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    strata_result_interrupt(NULL);
    strata_cancel_request(NULL);
    assert_false(strata_cancel_requested(NULL));
    strata_view_release(&v);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strata_interrupt_stops_every_loop),
        cmocka_unit_test(test_cancel_stops_every_loop_of_a_view_query),
        cmocka_unit_test(test_result_interrupt_stops_reading),
        cmocka_unit_test(test_cancel_stops_one_view_query_only),
        cmocka_unit_test(test_result_keeps_its_cancel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
