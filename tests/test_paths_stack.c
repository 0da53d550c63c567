/* Variable-length walks keep their state on the heap, not the C stack:
   from a thread with a 2 MiB stack (a common default) and one with
   256 KiB, strata_view_query walks chains of 10,000 and 100,000
   relationships, each depth of the walk one match, and shortest paths
   along them. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "strata.h"

/* A chain (:C {i: 0})-[:NEXT]->(:C {i: 1}) ... of n relationships, built
   through the C API in one transaction. */
static strata_graph *chain(int64_t n)
{
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token label, next, key;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "C", &label), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "NEXT", &next), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "i", &key), STRATA_OK);
    assert_int_equal(strata_begin(g), STRATA_OK);
    strata_id prev = 0, id, rel;
    for (int64_t i = 0; i <= n; i++) {
        assert_int_equal(strata_node_create(g, &label, 1, &id), STRATA_OK);
        strata_value *v = strata_value_int(i);
        assert_non_null(v);
        assert_int_equal(strata_node_set(g, id, key, v), STRATA_OK);
        strata_value_free(&v);
        if (i > 0)
            assert_int_equal(strata_rel_create(g, prev, id, next, &rel), STRATA_OK);
        prev = id;
    }
    assert_int_equal(strata_commit(g), STRATA_OK);
    return g;
}

typedef struct job {
    strata_view *v;
    int64_t n;
    char failure[512];
} job;

/* One integer from a query on the view, or a failure noted in j. */
static int64_t one_int(job *j, const char *text)
{
    strata_result *r = NULL;
    int64_t out = -1;
    if (strata_view_query(j->v, text, NULL, &r) != STRATA_OK) {
        snprintf(j->failure, sizeof j->failure, "%s: %s", text, strata_result_error(r)->message);
        strata_result_free(&r);
        return -1;
    }
    const strata_value *const *row;
    if (strata_result_next(r, &row))
        strata_value_get_int(row[0], &out);
    if (strata_result_error(r))
        snprintf(j->failure, sizeof j->failure, "%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
    return out;
}

static void expect(job *j, const char *text, int64_t want)
{
    if (j->failure[0])
        return;
    int64_t got = one_int(j, text);
    if (!j->failure[0] && got != want)
        snprintf(j->failure, sizeof j->failure, "%s: %lld, expected %lld", text, (long long)got,
                 (long long)want);
}

static void *walk_chain(void *arg)
{
    job *j = arg;
    char q[256];
    int64_t n = j->n;
    /* every depth of the walk is a row */
    expect(j, "MATCH (a:C {i: 0})-[:NEXT*]->(b) RETURN count(b)", n);
    expect(j, "MATCH (a:C {i: 0})<-[:NEXT*0..]-(b) RETURN count(b)", 1);
    snprintf(q, sizeof q, "MATCH (b:C {i: %lld})<-[*]-(a) RETURN count(a)", (long long)n);
    expect(j, q, n);   /* walked from the last node */
    snprintf(q, sizeof q, "MATCH p = (a:C {i: 0})-[*]-(b:C {i: %lld}) RETURN length(p)",
             (long long)n);
    if (n <= 10000)   /* the longest chain is walked by the two above */
        expect(j, q, n);
    snprintf(q, sizeof q, "MATCH p = shortestPath((a:C {i: 0})-[*]->(b:C {i: %lld})) "
                          "RETURN length(p)", (long long)n);
    expect(j, q, n);
    snprintf(q, sizeof q, "MATCH (a:C {i: 0}) MATCH p = allShortestPaths((a)-[*]-(b)) "
                          "WHERE b.i = %lld RETURN length(p)", (long long)n);
    expect(j, q, n);
    if (n <= 10000) {   /* the relationship list grows with each depth: n^2 / 2 */
        snprintf(q, sizeof q, "MATCH (a:C {i: 0})-[r*]->(b:C {i: %lld}) RETURN size(r)",
                 (long long)n);
        expect(j, q, n);
    }
    return NULL;
}

static void run_with_stack(strata_graph *g, int64_t n, size_t stack)
{
    job j = {.n = n};
    assert_int_equal(strata_snapshot(g, &j.v), STRATA_OK);
    pthread_attr_t attr;
    pthread_t t;
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, stack), 0);
    assert_int_equal(pthread_create(&t, &attr, walk_chain, &j), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_attr_destroy(&attr);
    strata_view_release(&j.v);
    if (j.failure[0])
        fail_msg("%zu KiB stack, chain of %lld: %s", stack / 1024, (long long)n, j.failure);
}

static void test_chains_on_small_stacks(void **state)
{
    (void)state;
    static const int64_t lengths[] = {10000, 100000};
    for (size_t k = 0; k < 2; k++) {
        strata_graph *g = chain(lengths[k]);
        run_with_stack(g, lengths[k], 2u << 20);
        run_with_stack(g, lengths[k], 256u << 10);
        strata_graph_free(&g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chains_on_small_stacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
