/* Prepared statements on reader threads while the writer goes on: each
   reader prepares its own statement and runs it on fresh views, and every
   run gives the rows strata_view_query gives on the same view — while the
   writer creates, changes and deletes the nodes looked up and makes and
   drops the index the lookup seeks (so runs plan their starts on states
   with and without it).  The checked tree is shared through the graph's
   plan cache by all of them. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "strata.h"

#define READERS 2
#define RUNS 300
#define KEYS 50

static const char lookup[] = "MATCH (n:Item {key: $k}) RETURN n.v, n.key";

static void run(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail_msg("%s: %s", text, strata_result_error(r)->message);
    strata_result_free(&r);
}

/* The rows as text (strings and ints), then the result freed. */
static void rows_text(strata_result **rp, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    const strata_value *const *row;
    while (strata_result_next(*rp, &row)) {
        const char *s;
        size_t len;
        int64_t i;
        if (strata_value_get_string(row[0], &s, &len) == STRATA_OK)
            used += (size_t)snprintf(out + used, size - used, "%.*s", (int)len, s);
        if (strata_value_get_int(row[1], &i) == STRATA_OK)
            used += (size_t)snprintf(out + used, size - used, "/%lld;", (long long)i);
        assert_true(used < size);
    }
    assert_null(strata_result_error(*rp));
    strata_result_free(rp);
}

typedef struct reader {
    strata_graph *g;
    long runs;
    char why[640];
} reader;

static void *read_loop(void *p)
{
    reader *rd = p;
    strata_view *v;
    strata_stmt *s = NULL;
    if (strata_snapshot(rd->g, &v) != STRATA_OK ||
        strata_view_prepare(v, lookup, &s) != STRATA_OK) {
        snprintf(rd->why, sizeof rd->why, "prepare failed");
        return NULL;
    }
    strata_view_release(&v);
    const char *names[] = { "k" };
    for (long i = 0; i < RUNS && !rd->why[0]; i++) {
        if (strata_snapshot(rd->g, &v) != STRATA_OK)
            break;
        int64_t k = (i * 7 + (int64_t)(uintptr_t)rd % 5) % KEYS;
        strata_value *key = strata_value_int(k);
        const strata_value *vals[] = { key };
        strata_value *params = strata_value_map(names, vals, 1);
        strata_result *r = NULL;
        char got[256], want[256];
        if (strata_stmt_bind(s, "k", key) != STRATA_OK ||
            strata_stmt_execute_view(s, v, &r) != STRATA_OK) {
            snprintf(rd->why, sizeof rd->why, "run %ld: %s", i,
                     r ? strata_result_error(r)->message : strata_stmt_errmsg(s));
            strata_result_free(&r);
        } else {
            rows_text(&r, got, sizeof got);
            assert_int_equal(strata_view_query(v, lookup, params, &r), STRATA_OK);
            rows_text(&r, want, sizeof want);
            if (strcmp(got, want) != 0)
                snprintf(rd->why, sizeof rd->why, "key %lld: prepared [%s], query [%s]",
                         (long long)k, got, want);
        }
        strata_value_free(&params);
        strata_value_free(&key);
        strata_view_release(&v);
        rd->runs++;
    }
    strata_stmt_free(&s);
    return NULL;
}

static void readers_run_prepared_lookups_while_the_writer_writes(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    run(g, "UNWIND range(0, 49) AS i CREATE (:Item {key: i, v: 'value ' + toString(i)})");
    run(g, "CREATE INDEX item_key FOR (n:Item) ON (n.key)");
    reader rd[READERS] = {0};
    pthread_t th[READERS];
    for (int i = 0; i < READERS; i++) {
        rd[i] = (reader){.g = g};
        assert_int_equal(pthread_create(&th[i], NULL, read_loop, &rd[i]), 0);
    }
    /* the writer: nodes changed, added, deleted; the index dropped and
       made again */
    for (int i = 0; i < 200; i++) {
        char q[160];
        snprintf(q, sizeof q, "MATCH (n:Item {key: %d}) SET n.v = 'round %d'", i % 50, i);
        run(g, q);
        snprintf(q, sizeof q, "CREATE (:Item {key: %d, v: 'twin %d'})", (i * 3) % 50, i);
        run(g, q);
        snprintf(q, sizeof q, "MATCH (n:Item {key: %d}) WHERE n.v STARTS WITH 'twin' DELETE n",
                 (i * 5) % 50);
        run(g, q);
        if (i % 40 == 10)
            run(g, "DROP INDEX item_key");
        if (i % 40 == 30)
            run(g, "CREATE INDEX item_key FOR (n:Item) ON (n.key)");
    }
    for (int i = 0; i < READERS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        if (rd[i].why[0])
            fail_msg("reader %d: %s", i, rd[i].why);
        assert_int_equal(rd[i].runs, RUNS);
    }
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(readers_run_prepared_lookups_while_the_writer_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
