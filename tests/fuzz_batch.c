/*
 * fuzz_batch — libFuzzer target for the strata program's batch mode: the
 * statement scanner and the batch loop (cli/scanner.c, cli/batch.c) with
 * the client commands, the session and every output format, over the
 * query engine, on a small graph.  The first byte of an input picks the
 * output format and whether the rest is read as a stream (-f, a pipe) or
 * as one string (-c); the rest is the script.
 *
 * Not built by CMake; scripts/fuzz.sh builds and runs it (every engine
 * source and the program's sources but main.c and the line-editing REPL,
 * STRATA_TESTING), seeded from tests/corpus/batch.
 *
 * Bounded like fuzz_query: a timer interrupts the running statement
 * (after 100 ms, then every 20 ms), allocations are capped at 64 MiB
 * live, LOAD CSV is disabled.  Scripts naming :save, :export or :open are
 * skipped, so that an input never writes or reads the machine's files;
 * the output goes to /dev/null.
 *
 * Besides what the sanitizers catch, the target aborts when the graph
 * fails strata_integrity_check afterwards, and when memory is left behind
 * once the session is freed.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "cli/batch.h"
#include "cli/session.h"
#include "storage/mem.h"
#include "strata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEMORY_CAP ((size_t)64 << 20)

static const char setup[] =
    "CREATE CONSTRAINT FOR (p:Person) REQUIRE p.email IS UNIQUE;\n"
    "CREATE (a:Person {name: 'Ada', email: 'a@x', age: 36}), (c:City {name: 'Paris'}),\n"
    "  (a)-[:LIVES_IN {since: date('2001-02-03')}]->(c), (a)-[:KNOWS]->(a);\n";

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

/* Commands that touch files by name. */
static bool names_files(const uint8_t *data, size_t size)
{
    static const char *const words[] = { ":save", ":export", ":open" };
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (memmem(data, size, words[i], strlen(words[i])))
            return true;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        if (!freopen("/dev/null", "w", stdout))
            abort();
        signal(SIGALRM, on_alarm);
        ready = true;
    }
    if (size < 1 || names_files(data, size))
        return 0;
    static const out_format formats[] = { FMT_JSONL, FMT_JSON, FMT_CSV, FMT_TABLE };
    out_format fmt = formats[data[0] & 3];
    bool as_string = data[0] & 4;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';

    size_t live = mem_live_bytes();
    strata_graph *g = NULL;
    if (strata_graph_new(&g) != STRATA_OK)
        abort();
    strata_csv_options no_csv = { .disabled = true };
    if (strata_set_csv_options(g, &no_csv) != STRATA_OK)
        abort();
    session s;
    session_init(&s, g, fmt);
    s.width = data[0] & 8 ? 40 : 0;
    s.max_rows = data[0] & 16 ? 2 : 0;
    batch_run_string(&s, setup, "setup");
    if (s.failed)
        abort();

    mem_limit_set(mem_live_bytes() + MEMORY_CAP);
    atomic_store(&running, s.g);
    arm(100000, 20000);
    if (as_string) {
        batch_run_string(&s, text, "-c");
    } else {
        FILE *in = fmemopen(text, size - 1, "r");
        if (in) {
            batch_run_stream(&s, in, "fuzz");
            fclose(in);
        }
    }
    arm(0, 0);
    atomic_store(&running, NULL);
    mem_limit_set(0);

    /* a transaction left open is rolled back by session_free */
    strata_view *v = NULL;
    if (strata_snapshot(s.g, &v) != STRATA_OK || strata_integrity_check(v) != STRATA_OK)
        abort();
    strata_view_release(&v);
    session_free(&s);
    free(text);
    fflush(stdout);
    if (mem_live_bytes() != live)
        abort();
    return 0;
}
