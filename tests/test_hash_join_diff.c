/* The join's hash join (query/op_hash_join.c, join.h `jhash`) checked
   against nested expansion and against the walker: random graphs (three
   labels, three types, self-loops and parallel relationships) and
   patterns where a sub-pattern hangs off one vertex or a pair — chains,
   stars, cycles, several MATCH clauses, relationship variables (so
   uniqueness across the build and probe sides shows), WHERE conjuncts
   inside and across the block, maps naming the input row.  Every query
   runs with the hash join forced wherever it can be, with it forbidden,
   and with the walker alone; the rows (as multisets) must be equal.
   Then: PROFILE shows the block expanded once per distinct key; the
   estimates choose it where it pays and not where it does not; every
   allocation failure of a hash join is a clean OutOfMemory; an interrupt
   stops a long build.  STRATA_HASH_JOIN_DIFF_SEEDS sets how many graphs
   (default 6). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/graph_impl.h"
#include "query/join.h"
#include "query/plan_cache.h"
#include "storage/mem.h"
#include "strata.h"
#include "support/model_value.h"
#include "support/rows.h"

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

static void build(uint64_t seed, strata_graph **g)
{
    uint64_t s = seed;
    char q[256];
    assert_int_equal(strata_graph_new(g), STRATA_OK);
    int nodes = 15 + (int)below(&s, 30);
    for (int i = 0; i < nodes; i++) {
        static const char *const labels[] = {"A", "B", "A:B", "C", "A:C"};
        snprintf(q, sizeof q, "CREATE (:%s {i: %d, k: %d, j: %d})",
                 labels[below(&s, 5)], i, (int)below(&s, 5), (int)below(&s, 3));
        run(*g, q);
    }
    int rels = nodes * (2 + (int)below(&s, 3));
    for (int i = 0; i < rels; i++) {
        /* a few hubs, so that keys repeat */
        uint32_t a = chance(&s, 30) ? below(&s, 3) : below(&s, (uint32_t)nodes);
        uint32_t b = chance(&s, 8) ? a : chance(&s, 30) ? below(&s, 3)
                                                         : below(&s, (uint32_t)nodes);
        const char *type = chance(&s, 50) ? "R" : chance(&s, 60) ? "S" : "T";
        snprintf(q, sizeof q,
                 "MATCH (a {i: %u}), (b {i: %u}) CREATE (a)-[:%s {w: %u}]->(b)%s", a, b,
                 type, below(&s, 3), chance(&s, 10) ? ", (a)-[:R {w: 0}]->(b)" : "");
        run(*g, q);
    }
}

/* A relationship pattern named var (or anonymous when var is ""). */
static void rel(uint64_t *s, const char *var, char *out, size_t size)
{
    static const char *const types[] = {":R", ":S", ":R|S", ":T|R", "", ":T", ":S|T"};
    static const char *const shapes[][2] = {{"-[", "]->"}, {"<-[", "]-"}, {"-[", "]-"}};
    const char *const *sh = shapes[below(s, 3)];
    snprintf(out, size, "%s%s%s%s", sh[0], var, types[below(s, sizeof types / sizeof *types)],
             sh[1]);
}

static void random_query(uint64_t *s, char *q, size_t size)
{
    char r1[24], r2[24], r3[24], r4[24], x[24], y[24], z[24];
    rel(s, "", r1, sizeof r1);
    rel(s, "", r2, sizeof r2);
    rel(s, "", r3, sizeof r3);
    rel(s, "", r4, sizeof r4);
    rel(s, "x", x, sizeof x);
    rel(s, "y", y, sizeof y);
    rel(s, "z", z, sizeof z);
    int k = (int)below(s, 5);
    switch (below(s, 16)) {
    case 0:     /* a chain: the tail hangs off the middle */
        snprintf(q, size, "MATCH (a)%s(b)%s(c)%s(d) RETURN a.i, b.i, c.i, d.i", r1, r2, r3);
        break;
    case 1:     /* relationship variables: uniqueness across the sides */
        snprintf(q, size, "MATCH (a:A)%s(b)%s(c)%s(d) RETURN id(x), id(y), id(z), d.i", x, y,
                 z);
        break;
    case 2:     /* a filter inside the block */
        snprintf(q, size, "MATCH (a)%s(b:B)%s(c)%s(d) WHERE d.k > %d RETURN a.i, d.i", r1, y,
                 r3, k);
        break;
    case 3:     /* two clauses joined on one variable */
        snprintf(q, size, "MATCH (a)%s(b) MATCH (b)%s(c)%s(d) WHERE c.k <> %d "
                 "RETURN b.i, count(*)", r1, r2, r3, k);
        break;
    case 4:     /* ... on a pair */
        snprintf(q, size, "MATCH (a)%s(b)%s(c) MATCH (a)%s(d)%s(c) RETURN a.i, c.i, d.i",
                 r1, r2, r3, r4);
        break;
    case 5:     /* a star: a conjunct across the block's edge */
        snprintf(q, size, "MATCH (a)%s(b), (b)%s(c), (b)%s(d) WHERE a.k < d.k "
                 "RETURN a.i, c.i, d.i", r1, r2, r3);
        break;
    case 6:     /* maps naming the input row: built per input row */
        snprintf(q, size, "UNWIND [%d, %d] AS i MATCH (a {k: i})%s(b)%s(c)%s(d {j: i %% 3}) "
                 "RETURN i, a.i, d.i", k, (k + 2) % 5, r1, r2, r3);
        break;
    case 7:     /* one type everywhere */
        snprintf(q, size, "MATCH (a)-[x:R]-(b)-[y:R]-(c)-[z:R]-(d) "
                 "RETURN id(x), id(y), id(z)");
        break;
    case 8:     /* a self-loop in the block */
        snprintf(q, size, "MATCH (a)%s(b)%s(c)-[z:R]->(c) RETURN a.i, c.i, id(z)", r1, y);
        break;
    case 9:     /* a cycle, and a tail off it */
        snprintf(q, size, "MATCH (a)%s(b)%s(c)%s(a), (c)%s(d) RETURN a.i, b.i, d.i", r1, r2,
                 r3, r4);
        break;
    case 10:    /* clauses are separate uniqueness groups */
        snprintf(q, size, "MATCH (a:A)%s(b) MATCH (b)%s(c) MATCH (c)%s(d:B) "
                 "WHERE a.k <= d.k RETURN id(x), id(y), id(z)", x, y, z);
        break;
    case 11:    /* counted leaves off a hashed block */
        snprintf(q, size, "MATCH (a)%s(b)%s(c)%s(d)-[:T]->(e) WHERE d.k > 1 "
                 "RETURN b.k, count(*)", r1, r2, r3);
        break;
    case 12:    /* relationship maps */
        snprintf(q, size, "MATCH (a)%s(b)-[x:R {w: %d}]-(c)-[y:S|R {w: 1}]-(d) "
                 "RETURN a.i, id(x), id(y)", r1, k % 3);
        break;
    case 13:    /* a longer block */
        snprintf(q, size, "MATCH (a:C)%s(b)%s(c)%s(d)%s(e) WHERE e.j = %d "
                 "RETURN a.i, b.i, e.i", r1, r2, r3, r4, k % 3);
        break;
    case 14:    /* an input row binding the start */
        snprintf(q, size, "MATCH (s:A) WITH s WHERE s.i %% 4 = %d "
                 "MATCH (s)%s(b)%s(c)%s(d) RETURN s.i, id(y), d.i", k % 4, r1, y, r3);
        break;
    default:    /* a block two vertices wide between two bound ones */
        snprintf(q, size, "MATCH (a)%s(b)%s(c), (a)%s(d)%s(e)%s(c) RETURN a.i, c.i, d.i, e.i",
                 r1, r2, r3, r4, x);
        break;
    }
}

/* Whether EXPLAIN shows a hash join for q. */
static bool hashed(strata_graph *g, const char *q)
{
    char text[700];
    snprintf(text, sizeof text, "EXPLAIN %s", q);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    bool found = false;
    const strata_value *const *row;
    while (strata_result_next(r, &row)) {
        const char *plan;
        size_t len;
        if (strata_value_get_string(row[3], &plan, &len) == STRATA_OK &&
            strstr(plan, "HashJoin ("))
            found = true;
    }
    strata_result_free(&r);
    return found;
}

static void expect_same(int seed, const char *q, const char *what, char **a, size_t na,
                        char **b, size_t nb)
{
    if (na != nb)
        fail_msg("seed %d: %s: %zu rows hash-joined, %zu %s", seed, q, na, nb, what);
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            fail_msg("seed %d: %s: row %s hash-joined, %s %s", seed, q, a[i], b[i], what);
}

static void test_hash_join_agrees(void **state)
{
    (void)state;
    join_set_scan_min(0);       /* every pattern of two or more relationships joined */
    const char *env = getenv("STRATA_HASH_JOIN_DIFF_SEEDS");
    int seeds = env ? atoi(env) : 6;
    size_t total = 0, with_hash = 0, queries = 0;
    for (int seed = 1; seed <= seeds; seed++) {
        strata_graph *g;
        build(0x9e3779b97f4a7c15ull * (uint64_t)seed + 5, &g);
        uint64_t s = (uint64_t)seed * 7919;
        for (int k = 0; k < 100; k++, queries++) {
            char q[600];
            size_t n_hash, n_nested, n_walk;
            random_query(&s, q, sizeof q);
            join_set_hash(JOIN_HASH_ALWAYS);
            with_hash += hashed(g, q);
            char **hash = rows(g, q, &n_hash);
            join_set_hash(JOIN_HASH_NEVER);
            if (hashed(g, q))
                fail_msg("%s: hash-joined though forbidden", q);
            char **nested = rows(g, q, &n_nested);
            join_set_enabled(false);
            char **walk = rows(g, q, &n_walk);
            join_set_enabled(true);
            join_set_hash(JOIN_HASH_AUTO);
            total += n_hash;
            expect_same(seed, q, "nested", hash, n_hash, nested, n_nested);
            expect_same(seed, q, "walked", hash, n_hash, walk, n_walk);
            rows_free(hash, n_hash);
            rows_free(nested, n_nested);
            rows_free(walk, n_walk);
        }
        strata_graph_free(&g);
    }
    /* the comparison means something: rows came back and most queries
       ran a hash join */
    assert_true(total > queries * 10);
    assert_true(with_hash > queries * 2 / 3);
    join_set_scan_min(1000);
}

/* ---- PROFILE: once per key ---- */

/* q's one integer. */
static int64_t count_of(strata_graph *g, const char *q)
{
    size_t n;
    char **c = rows(g, q, &n);
    assert_int_equal(n, 1);
    int64_t v = strtoll(c[0], NULL, 10);
    rows_free(c, n);
    return v;
}

/* The first Match row's plan of `how` (EXPLAIN or PROFILE) q, into plan. */
static void plan_of(strata_graph *g, const char *how, const char *q, char *plan, size_t size)
{
    char text[600];
    snprintf(text, sizeof text, "%s %s", how, q);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, text, NULL, &r), STRATA_OK);
    const strata_value *const *row;
    plan[0] = '\0';
    while (strata_result_next(r, &row)) {
        const char *op, *p;
        size_t len, plen;
        assert_int_equal(strata_value_get_string(row[2], &op, &len), STRATA_OK);
        assert_int_equal(strata_value_get_string(row[3], &p, &plen), STRATA_OK);
        if (!plan[0] && len == 5 && strncmp(op, "Match", 5) == 0)
            snprintf(plan, size, "%.*s", (int)plen, p);
    }
    strata_result_free(&r);
}

/* Persons in a few cities, knowing each other: the people of a city
   repeat for every row that reaches the city. */
static void people(strata_graph *g)
{
    run(g, "UNWIND range(0, 19) AS i CREATE (:City {i: i})");
    run(g, "UNWIND range(0, 999) AS i CREATE (:Person {i: i, age: i % 80})");
    run(g, "MATCH (c:City) WITH collect(c) AS cs MATCH (p:Person) "
           "WITH p, cs[p.i % 20] AS c CREATE (p)-[:LIVES_IN]->(c)");
    run(g, "MATCH (p:Person) WITH collect(p) AS ps UNWIND range(0, size(ps) - 1) AS i "
           "WITH ps[i] AS p, ps[(i * 7 + 3) % size(ps)] AS q, ps[(i * 13 + 5) % size(ps)] AS r "
           "CREATE (p)-[:KNOWS]->(q), (p)-[:KNOWS]->(r)");
}

static void test_profile_shows_one_build_per_key(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    people(g);
    const char *q = "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:LIVES_IN]->(c:City)"
                    "<-[:LIVES_IN]-(d:Person) WHERE d.age > 70 RETURN a.i, d.i";
    char plan[600];
    plan_of(g, "PROFILE", q, plan, sizeof plan);
    /* chosen by the estimates: the people of c, built once per city */
    const char *hj = strstr(plan, "HashJoin (c) build (d)");
    if (!hj)
        fail_msg("no hash join on c: %s", plan);
    unsigned long long probes, built, hits, matches;
    const char *ran = strstr(plan, "HashJoin (c) ran: ");
    assert_non_null(ran);
    assert_int_equal(sscanf(ran, "HashJoin (c) ran: %llu probes, %llu built, %llu hits, "
                            "%llu matches", &probes, &built, &hits, &matches), 4);
    /* every row reaching c probed; the block was expanded once per
       distinct city, not once per row */
    int64_t reaching = count_of(g, "MATCH (:Person)-[:KNOWS]->(b:Person)-[:LIVES_IN]->(c:City) "
                                   "RETURN count(*)");
    int64_t cities = count_of(g, "MATCH (:Person)-[:KNOWS]->(b:Person)-[:LIVES_IN]->(c:City) "
                                 "RETURN count(DISTINCT c)");
    int64_t older = count_of(g, "MATCH (c:City)<-[:LIVES_IN]-(d:Person) WHERE d.age > 70 "
                                "RETURN count(*)");
    assert_true(cities > 1 && reaching > 10 * cities);
    assert_int_equal(built, cities);
    assert_int_equal(hits + built, probes);
    assert_true(probes <= (unsigned long long)reaching);
    assert_int_equal(matches, older);
    /* and the rows are the walker's */
    size_t n0, n1;
    char **r0 = rows(g, q, &n0);
    join_set_enabled(false);
    char **r1 = rows(g, q, &n1);
    join_set_enabled(true);
    expect_same(0, q, "walked", r0, n0, r1, n1);
    assert_true(n0 > 1000);
    rows_free(r0, n0);
    rows_free(r1, n1);
    strata_graph_free(&g);
}

/* Two MATCH clauses joined on one variable, each side large: the second
   clause is built once per node of the shared variable. */
static void test_clauses_joined_on_one_variable(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    people(g);
    const char *q = "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:LIVES_IN]->(c:City) "
                    "MATCH (c)<-[:LIVES_IN]-(d:Person)-[:KNOWS]->(e:Person) WHERE e.age < 3 "
                    "RETURN a.i, e.i";
    char plan[600];
    plan_of(g, "PROFILE", q, plan, sizeof plan);
    if (!strstr(plan, "HashJoin (c)"))
        fail_msg("no hash join on c: %s", plan);
    size_t n0, n1;
    char **r0 = rows(g, q, &n0);
    join_set_enabled(false);
    char **r1 = rows(g, q, &n1);
    join_set_enabled(true);
    expect_same(0, q, "walked", r0, n0, r1, n1);
    rows_free(r0, n0);
    rows_free(r1, n1);
    strata_graph_free(&g);
}

/* Where the block is one plain expansion, reading a stored match costs
   what reading the relationship did: no hash join. */
static void test_not_chosen_where_it_does_not_pay(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    people(g);
    assert_false(hashed(g, "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:LIVES_IN]->(c:City) "
                           "RETURN a.i, c.i"));
    /* every row a different key: nothing repeats */
    assert_false(hashed(g, "MATCH (c:City)<-[:LIVES_IN]-(b:Person)-[:KNOWS]->(a:Person)"
                           "-[:KNOWS]->(e:Person) WHERE e.age > 10 RETURN c.i, e.i"));
    strata_graph_free(&g);
}

/* ---- allocation failures ---- */

/* The query's rows summed (every integer column); STRATA_ENOMEM when it
   failed with OutOfMemory, any other error fails the test. */
static strata_status run_sum(strata_graph *g, const char *text, int64_t *sum)
{
    strata_result *r = NULL;
    *sum = 0;
    strata_status st = strata_query(g, text, NULL, &r);
    const strata_value *const *row;
    while (st == STRATA_OK && strata_result_next(r, &row))
        for (size_t c = 0; c < strata_result_columns(r, NULL); c++) {
            int64_t i;
            if (strata_value_get_int(row[c], &i) == STRATA_OK)
                *sum += i;
        }
    const strata_query_error *e = strata_result_error(r);
    if (e) {
        if (strcmp(e->code, "OutOfMemory") != 0)
            fail_msg("%s: %s", text, e->message);
        st = STRATA_ENOMEM;
    }
    strata_result_free(&r);
    return st;
}

/* Every allocation of planning and running a hash join fails in turn:
   each failure is OutOfMemory, gives back what it took, and the next run
   answers right. */
static void test_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g;
    build(91, &g);
    join_set_scan_min(0);
    join_set_hash(JOIN_HASH_ALWAYS);
    const char *queries[] = {
        "MATCH (a)-[x:R]-(b)-[y:R|S]-(c)-[z]-(d) RETURN a.i, id(x), id(y), id(z), d.i",
        "MATCH (a:A)-[:R]->(b) MATCH (b)-[:S]-(c)-[:R]->(d) WHERE d.k > 1 RETURN b.k, count(*)",
        "UNWIND [1, 2, 3] AS i MATCH (a {k: i})--(b)-[:R]-(c)--(d {j: i % 3}) "
        "RETURN i, count(*)",
    };
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        int64_t want, got;
        assert_true(hashed(g, queries[q]));
        assert_int_equal(run_sum(g, queries[q], &want), STRATA_OK);
        plan_cache_clear(plan_cache_for(g->current->cat));
        size_t base = mem_ctx_bytes(mem_scratch());
        long failures = 0;
        for (long k = 1;; k++) {
            mem_fail_at(k);
            strata_status st = run_sum(g, queries[q], &got);
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
        assert_true(failures > 5);
    }
    join_set_hash(JOIN_HASH_AUTO);
    join_set_scan_min(1000);
    strata_graph_free(&g);
}

/* ---- interrupts ---- */

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
        if (i >= 5)
            strata_interrupt(it->g);
    }
    return NULL;
}

/* One key whose block is far too long to build (each candidate's
   conjunct runs long): the interrupt stops the build itself, the only
   work of the query (s is counted, not enumerated). */
static void test_interrupt_stops_a_build(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "CREATE (:Start)-[:TO]->(:Hub)");
    run(g, "MATCH (h:Hub) UNWIND range(1, 2000) AS i CREATE (h)-[:R]->(:M {i: i})");
    join_set_hash(JOIN_HASH_ALWAYS);
    const char *q = "MATCH (s:Start)-[:TO]->(h:Hub)-[:R]->(m:M) "
                    "WHERE any(x IN range(1, 1000000) WHERE x = -m.i) RETURN id(h), count(*)";
    char plan[600];
    plan_of(g, "EXPLAIN", q, plan, sizeof plan);
    if (!strstr(plan, "HashJoin (h) build (m)"))
        fail_msg("not the block expected: %s", plan);
    interrupter it = {.g = g};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, interrupt_later, &it), 0);
    strata_result *r = NULL;
    if (strata_query(g, q, NULL, &r) == STRATA_OK)
        while (strata_result_next(r, NULL))
            ;
    atomic_store(&it.done, true);
    pthread_join(t, NULL);
    const strata_query_error *e = strata_result_error(r);
    assert_non_null(e);
    assert_string_equal(e->code, "Interrupted");
    strata_result_free(&r);
    join_set_hash(JOIN_HASH_AUTO);
    assert_int_equal(count_of(g, "MATCH (h:Hub)-[:R]->(m:M) RETURN count(m)"), 2000);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_join_agrees),
        cmocka_unit_test(test_profile_shows_one_build_per_key),
        cmocka_unit_test(test_clauses_joined_on_one_variable),
        cmocka_unit_test(test_not_chosen_where_it_does_not_pay),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_interrupt_stops_a_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
