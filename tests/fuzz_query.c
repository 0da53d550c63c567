/*
 * fuzz_query — libFuzzer target for the whole query engine: each input is
 * one Cypher statement, parsed, checked, planned and run on a small graph
 * (two labels, two relationship types, a unique constraint and an index,
 * a self-loop), its result read to the end.
 *
 * Not built by CMake; scripts/fuzz.sh builds and runs it (every engine
 * source, STRATA_TESTING for the tiny chunk sizes and the allocation cap),
 * seeded from tests/corpus/parser.
 *
 * Each input is bounded: a timer interrupts the query (strata_interrupt
 * from SIGALRM, after 100 ms and every 20 ms after that, since a query
 * clears an earlier request when it starts), and the engine's allocations
 * are capped at 64 MiB live (mem_limit_set), so `UNWIND range(1, 1e12)`
 * ends in OutOfMemory rather than in the fuzzer's own limit.  LOAD CSV is
 * disabled: an input naming a file must not read the machine's files.
 *
 * Besides what the sanitizers catch, the target aborts when a failed
 * statement gives no error or one without a category and message, when a
 * statement fails yet changes the graph's counts, when the graph fails
 * strata_integrity_check afterwards, and when memory is left behind once
 * the graph and the result are freed.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "storage/mem.h"
#include "strata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEMORY_CAP ((size_t)64 << 20)

static const char *const setup[] = {
    "CREATE CONSTRAINT FOR (p:Person) REQUIRE p.email IS UNIQUE",
    "CREATE INDEX FOR (c:City) ON (c.name)",
    "CREATE (a:Person {name: 'Ada', email: 'a@x', age: 36, tags: ['x', 'y']}), "
    "(b:Person {name: 'Bob', email: 'b@x', age: 41}), (c:City {name: 'Paris', pop: 2.1}), "
    "(d:Person:City {name: 'Dual'}), (a)-[:KNOWS {since: 2001}]->(b), "
    "(b)-[:KNOWS]->(a), (a)-[:LIVES_IN]->(c), (d)-[:KNOWS]->(d), (b)-[:LIVES_IN]->(c)",
};

static _Atomic(strata_graph *) running;

static void on_alarm(int sig)
{
    (void)sig;
    strata_graph *g = atomic_load(&running);
    if (g)
        strata_interrupt(g);
}

static void arm(long first_us, long every_us)
{
    struct itimerval t = { { 0, every_us }, { 0, first_us } };
    setitimer(ITIMER_REAL, &t, NULL);
}

static strata_graph *small_graph(void)
{
    strata_graph *g = NULL;
    if (strata_graph_new(&g) != STRATA_OK)
        abort();
    for (size_t i = 0; i < sizeof setup / sizeof *setup; i++) {
        strata_result *r = NULL;
        if (strata_query(g, setup[i], NULL, &r) != STRATA_OK)
            abort();
        strata_result_free(&r);
    }
    strata_csv_options no_csv = { .disabled = true };
    if (strata_set_csv_options(g, &no_csv) != STRATA_OK)
        abort();
    return g;
}

static void counts(strata_graph *g, uint64_t out[2])
{
    strata_view *v = NULL;
    if (strata_snapshot(g, &v) != STRATA_OK)
        abort();
    if (strata_integrity_check(v) != STRATA_OK)
        abort();
    out[0] = strata_node_count(v);
    out[1] = strata_rel_count(v);
    strata_view_release(&v);
}

static void check_error(const strata_result *r)
{
    const strata_query_error *e = strata_result_error(r);
    if (!e || !e->code || !e->code[0] || !e->message || !e->message[0])
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        signal(SIGALRM, on_alarm);
        ready = true;
    }
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    size_t live = mem_live_bytes();
    strata_graph *g = small_graph();
    uint64_t before[2], after[2];
    counts(g, before);

    mem_limit_set(mem_live_bytes() + MEMORY_CAP);
    atomic_store(&running, g);
    arm(100000, 20000);
    strata_result *r = NULL;
    strata_status s = strata_query(g, text, NULL, &r);
    if (s != STRATA_OK) {
        if (r)
            check_error(r);
    } else {
        const strata_value *const *row;
        while (strata_result_next(r, &row))
            ;
    }
    arm(0, 0);
    atomic_store(&running, NULL);
    mem_limit_set(0);

    counts(g, after);
    if (s != STRATA_OK && (before[0] != after[0] || before[1] != after[1]))
        abort();   /* a failed statement changed the graph */
    strata_result_free(&r);
    strata_graph_free(&g);
    free(text);
    if (mem_live_bytes() != live)
        abort();   /* something was left allocated */
    return 0;
}
