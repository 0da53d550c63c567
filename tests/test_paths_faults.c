/* The path operators under faults: every allocation of a breadth-first
   shortest-path search, of the depth-first fallback and of a deep
   variable-length walk fails in turn (each failure is OutOfMemory and
   gives back what it took); an unbounded variable-length pattern over a
   large graph stops at strata_interrupt with "Interrupted". */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/graph_impl.h"   /* reads the graph's catalog */
#include "query/plan_cache.h"
#include "storage/mem.h"
#include "strata.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    strata_status s = strata_query(g, text, NULL, &r);
    if (s != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

/* The query's rows summed into one number (every integer column). */
static strata_status run_sum(strata_graph *g, const char *text, int64_t *sum, bool *oom)
{
    strata_result *r = NULL;
    *sum = 0;
    *oom = false;
    strata_status st = strata_query(g, text, NULL, &r);
    if (st == STRATA_OK) {
        size_t ncols = strata_result_columns(r, NULL);
        const strata_value *const *row;
        while (strata_result_next(r, &row))
            for (size_t c = 0; c < ncols; c++) {
                int64_t i;
                if (strata_value_get_int(row[c], &i) == STRATA_OK)
                    *sum += i;
            }
    }
    const strata_query_error *e = strata_result_error(r);
    if (e) {
        *oom = strcmp(e->code, "OutOfMemory") == 0;
        if (!*oom)
            fail_msg("%s: %s", text, e->message);
        st = STRATA_ENOMEM;
    }
    strata_result_free(&r);
    return st;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    /* a grid-like mesh (many shortest paths) and a chain of 80 */
    run(g, "UNWIND range(0, 35) AS i CREATE (:N {i: i, k: i % 5})");
    run(g, "MATCH (a:N), (b:N) WHERE b.i = a.i + 1 AND a.i % 6 <> 5 CREATE (a)-[:A]->(b)");
    run(g, "MATCH (a:N), (b:N) WHERE b.i = a.i + 6 CREATE (a)-[:A]->(b)");
    run(g, "UNWIND range(0, 80) AS i CREATE (:C {i: i})");
    run(g, "MATCH (a:C), (b:C) WHERE b.i = a.i + 1 CREATE (a)-[:NEXT]->(b)");
    const char *queries[] = {
        /* bidirectional, every shortest path */
        "MATCH (a:N {i: 0}), (b:N {i: 35}) MATCH p = allShortestPaths((a)-[*]->(b)) "
        "RETURN length(p), size(nodes(p))",
        /* one end bound, path predicates while searching */
        "MATCH (a:N {i: 1}) MATCH p = shortestPath((a)-[:A*]-(b)) "
        "WHERE all(x IN nodes(p) WHERE x.k <> 4) AND b.i > 5 RETURN b.i, length(p)",
        /* the depth-first fallback */
        "MATCH p = shortestPath((a:N {i: 0})-[*..6]->(b:N {i: 14})) WHERE length(p) > 1 "
        "RETURN length(p)",
        /* reachability for a pattern predicate */
        "MATCH (a:N) WHERE (a)-[:A*2..]->(:N {k: 4}) AND NOT (a)<-[*..3]-(:N {i: 35}) "
        "RETURN a.i",
        /* each end once, for DISTINCT */
        "MATCH (a:N {i: 3})-[*]-(b) RETURN count(DISTINCT b.k), count(DISTINCT b)",
        /* a deep walk: frames, neighbours and the uniqueness set */
        "MATCH (a:C {i: 0})-[r:NEXT*]->(b) RETURN size(r)",
    };
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        int64_t want;
        bool oom;
        assert_int_equal(run_sum(g, queries[q], &want, &oom), STRATA_OK);
        assert_true(want > 0);
        plan_cache_clear(plan_cache_for(g->current->cat));
        size_t base = mem_ctx_bytes(mem_scratch());
        long failures = 0;
        for (long k = 1;; k++) {
            int64_t got;
            mem_fail_at(k);
            strata_status st = run_sum(g, queries[q], &got, &oom);
            bool failed = mem_fail_count() >= k;
            mem_fail_clear();
            plan_cache_clear(plan_cache_for(g->current->cat));
            assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
            if (!failed) {
                assert_int_equal(st, STRATA_OK);
                assert_int_equal(got, want);
                break;
            }
            assert_int_equal(st, STRATA_ENOMEM);
            failures++;
        }
        assert_true(failures > 10);
    }
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    strata_view_release(&v);
    strata_graph_free(&g);
}

typedef struct interrupter {
    strata_graph *g;
    atomic_bool done;
} interrupter;

/* Lets the query run a while, then keeps asking it to stop. */
static void *interrupt_later(void *arg)
{
    interrupter *it = arg;
    struct timespec pause = {0, 20 * 1000 * 1000};
    for (int i = 0; !atomic_load(&it->done); i++) {
        nanosleep(&pause, NULL);
        if (i >= 10)
            strata_interrupt(it->g);
    }
    return NULL;
}

static void test_unbounded_walk_is_interruptible(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    /* 20,000 nodes, 100,000 relationships at random: far too many paths */
    strata_token label, type;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "N", &label), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "R", &type), STRATA_OK);
    enum { NODES = 20000, RELS = 100000 };
    static strata_id ids[NODES];
    assert_int_equal(strata_begin(g), STRATA_OK);
    for (int i = 0; i < NODES; i++)
        assert_int_equal(strata_node_create(g, &label, 1, &ids[i]), STRATA_OK);
    uint64_t s = 88172645463325252ull;
    for (int i = 0; i < RELS; i++) {
        strata_id r;
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        uint64_t a = s % NODES;
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        assert_int_equal(strata_rel_create(g, ids[a], ids[s % NODES], type, &r), STRATA_OK);
    }
    assert_int_equal(strata_commit(g), STRATA_OK);
    plan_cache_clear(plan_cache_for(g->current->cat));
    size_t base = mem_ctx_bytes(mem_scratch());
    interrupter it = {.g = g};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, interrupt_later, &it), 0);
    strata_result *r = NULL;
    char q[128];
    snprintf(q, sizeof q, "MATCH (a)-[*]->(b) WHERE id(a) = %llu RETURN count(b)",
             (unsigned long long)ids[0]);
    if (strata_query(g, q, NULL, &r) == STRATA_OK)
        while (strata_result_next(r, NULL))
            ;
    atomic_store(&it.done, true);
    pthread_join(t, NULL);
    const strata_query_error *e = strata_result_error(r);
    assert_non_null(e);
    assert_string_equal(e->code, "Interrupted");
    strata_result_free(&r);
    plan_cache_clear(plan_cache_for(g->current->cat));
    assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
    /* the graph answers the next query */
    int64_t n;
    bool oom;
    assert_int_equal(run_sum(g, "MATCH (n) RETURN count(n)", &n, &oom), STRATA_OK);
    assert_int_equal(n, NODES);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_unbounded_walk_is_interruptible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
