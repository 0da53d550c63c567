/*
 * Views under a concurrent writer (docs/ARCHITECTURE.md): one writer thread, several
 * reader threads each taking its own views, and one view handed from one
 * thread to another.  Runs under ThreadSanitizer too (label
 * "concurrency"), so a missing atomic or lock in publication, refcounting
 * or fold-back shows up as a race even when the values come out right.
 *
 * The writer runs ROUNDS rounds over NNODES labelled nodes, each round
 * being up to three direct writes:
 *   1. node 0's "gen" := round;
 *   2. node (round % NNODES)'s "v" := round (range-indexed on the label);
 *   3. every third round, one new relationship.
 * Direct writes are atomic one by one, so every view sees the state
 * between two of them; with G = gen and V = the largest "v" that means:
 *   - V is G or G - 1 (G >= 1), and every "v" lies in [0, V];
 *   - the relationship count R is (G - 1) / 3 when V = G - 1, and lies in
 *     [(G - 1) / 3, G / 3] otherwise;
 *   - the index on "v" holds every node, and a lookup of each node's "v"
 *     finds that node;
 *   - strata_integrity_check() passes.
 * Each reader also checks that G and R never go backwards from one of its
 * views to the next, and that a view reads the same before and after the
 * writer has completed at least two more rounds.
 *
 * Threads never call cmocka's assertions (they longjmp on the calling
 * thread's stack): they record the first failure, and the main thread
 * fails the test with it after joining.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "strata.h"

#define NNODES 16
#define ROUNDS 1500
#define NREADERS 4
#define READER_MIN_ITERS 20     /* even if the writer is already done */
#define READER_MAX_ITERS 3000
/* How long a reader keeps a view while waiting for the writer to move on:
   bounded, so a stalled writer fails the check instead of hanging. */
#define WAIT_SPINS 200000
#define SENDER 0                /* reader that hands a view over ... */
#define RECEIVER 1              /* ... to this one */
#define FAILURE_MAX 512

/* What a reader reads off a view; compared whole, before and after. */
typedef struct fingerprint {
    uint64_t nodes, rels, rels_by_type, indexed;
    int64_t gen;
    int64_t v[NNODES];
} fingerprint;

typedef struct shared {
    strata_graph *g;
    strata_token label, type, key_v, key_gen;
    strata_index idx;
    strata_id nodes[NNODES];
    pthread_barrier_t start;          /* readers are up before the writer starts */
    atomic_uint_fast64_t rounds_done;
    atomic_bool writer_done;
    pthread_mutex_t lock;             /* guards everything below */
    pthread_cond_t handed;
    strata_view *slot;                /* the view in transit */
    fingerprint slot_fp;              /* what the sender read from it */
    bool received;
    char failure[FAILURE_MAX];        /* the first failure, for the main thread */
    int failures;
} shared;

typedef struct reader_ctx {
    shared *s;
    int id;
    uint64_t views;                   /* views checked, for the summary */
    uint64_t overlapped;              /* ... of them taken while the writer ran */
} reader_ctx;

static void report(shared *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(shared *s, const char *fmt, ...)
{
    pthread_mutex_lock(&s->lock);
    if (s->failures++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->failure, sizeof s->failure, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&s->lock);
}

static bool failed(shared *s)
{
    pthread_mutex_lock(&s->lock);
    bool f = s->failures > 0;
    pthread_mutex_unlock(&s->lock);
    return f;
}

/* ---- the writer --------------------------------------------------------------- */

static bool set_int(shared *s, strata_id node, strata_token key, int64_t i)
{
    strata_value *v = strata_value_int(i);
    strata_status st = v ? strata_node_set(s->g, node, key, v) : STRATA_ENOMEM;
    strata_value_free(&v);
    if (st != STRATA_OK)
        report(s, "writer: setting node %" PRIu64 " to %" PRId64 ": %s (%s)", node, i,
               strata_errstr(st), strata_errmsg(s->g));
    return st == STRATA_OK;
}

static void *writer(void *arg)
{
    shared *s = arg;
    pthread_barrier_wait(&s->start);
    for (int64_t round = 1; round <= ROUNDS && !failed(s); round++) {
        strata_id n = s->nodes[round % NNODES];
        if (!set_int(s, s->nodes[0], s->key_gen, round) || !set_int(s, n, s->key_v, round))
            break;
        if (round % 3 == 0) {
            strata_id rel;
            strata_status st =
                strata_rel_create(s->g, n, s->nodes[(round * 7) % NNODES], s->type, &rel);
            if (st != STRATA_OK) {
                report(s, "writer: creating a relationship: %s (%s)", strata_errstr(st),
                       strata_errmsg(s->g));
                break;
            }
        }
        atomic_store(&s->rounds_done, (uint64_t)round);
        /* Direct writes are far cheaper than a reader's checks: yielding
           keeps the readers' views overlapping the writes. */
        sched_yield();
    }
    atomic_store(&s->writer_done, true);
    return NULL;
}

/* ---- reading a view ---------------------------------------------------------- */

static bool get_int(strata_view *v, strata_id node, strata_token key, int64_t *out)
{
    strata_value *val = NULL;
    bool ok = strata_node_get(v, node, key, &val) == STRATA_OK &&
              strata_value_get_int(val, out) == STRATA_OK;
    strata_value_free(&val);
    return ok;
}

static uint64_t count_iter(strata_node_iter *it)
{
    uint64_t n = 0;
    strata_id id;
    while (strata_node_iter_next(it, &id))
        n++;
    strata_node_iter_free(&it);
    return n;
}

/* Whether the range index finds node under key. */
static bool index_finds(shared *s, strata_view *v, int64_t key, strata_id node)
{
    strata_value *k = strata_value_int(key);
    strata_node_iter *it = NULL;
    bool found = false;
    if (k && strata_index_lookup(v, s->idx, (const strata_value *const *)&k, 1, &it) ==
                 STRATA_OK) {
        strata_id id;
        while (!found && strata_node_iter_next(it, &id))
            found = id == node;
        strata_node_iter_free(&it);
    }
    strata_value_free(&k);
    return found;
}

static bool read_fingerprint(shared *s, strata_view *v, fingerprint *fp, const char *who)
{
    memset(fp, 0, sizeof *fp);
    fp->nodes = strata_node_count(v);
    fp->rels = strata_rel_count(v);
    strata_node_iter *it = NULL;
    strata_value *zero = strata_value_int(0);
    bool ok = get_int(v, s->nodes[0], s->key_gen, &fp->gen);
    for (int i = 0; ok && i < NNODES; i++)
        ok = get_int(v, s->nodes[i], s->key_v, &fp->v[i]);
    if (ok && (ok = strata_rels_by_type(v, s->type, &it) == STRATA_OK))
        fp->rels_by_type = count_iter(it);
    if (ok && (ok = zero && strata_index_range(v, s->idx, zero, true, NULL, false, &it) ==
                                STRATA_OK))
        fp->indexed = count_iter(it);
    strata_value_free(&zero);
    if (!ok)
        report(s, "%s: reading a view failed: %s", who, strata_view_errmsg(v));
    return ok;
}

/* The invariants of the header comment, within one view. */
static bool check_view(shared *s, strata_view *v, const fingerprint *fp, const char *who)
{
    strata_status st = strata_integrity_check(v);
    if (st != STRATA_OK) {
        report(s, "%s: integrity check: %s (%s)", who, strata_errstr(st),
               strata_view_errmsg(v));
        return false;
    }
    int64_t g = fp->gen, top = 0;
    for (int i = 0; i < NNODES; i++)
        top = fp->v[i] > top ? fp->v[i] : top;
    bool ok = g == 0 ? top == 0 : (top == g || top == g - 1);
    for (int i = 0; ok && i < NNODES; i++)
        ok = fp->v[i] >= 0 && index_finds(s, v, fp->v[i], s->nodes[i]);
    uint64_t lo = g ? (uint64_t)(g - 1) / 3 : 0, hi = (uint64_t)g / 3;
    if (top < g)
        hi = lo;   /* round g has not reached its relationship yet */
    ok = ok && fp->nodes == NNODES && fp->indexed == NNODES && fp->rels >= lo &&
         fp->rels <= hi && fp->rels_by_type == fp->rels;
    if (!ok)
        report(s, "%s: a view breaks the writer's invariants: gen %" PRId64 ", largest v %" PRId64
               ", %" PRIu64 " nodes, %" PRIu64 " relationships (%" PRIu64 " by type, expected "
               "%" PRIu64 "..%" PRIu64 "), %" PRIu64 " indexed", who, g, top, fp->nodes,
               fp->rels, fp->rels_by_type, lo, hi, fp->indexed);
    return ok;
}

/* Lets the writer complete two more rounds than it had at `from` (or
   finish), so a held view is read again across real writes. */
static void wait_for_writes(shared *s, uint64_t from)
{
    for (long spin = 0; spin < WAIT_SPINS; spin++) {
        if (atomic_load(&s->rounds_done) >= from + 2 || atomic_load(&s->writer_done))
            return;
        sched_yield();
    }
}

/* Reads v, lets the writer move on, reads v again: the two must agree. */
static bool check_stable(shared *s, strata_view *v, const char *who, fingerprint *first)
{
    fingerprint again;
    uint64_t from = atomic_load(&s->rounds_done);
    if (!read_fingerprint(s, v, first, who) || !check_view(s, v, first, who))
        return false;
    wait_for_writes(s, from);
    if (!read_fingerprint(s, v, &again, who) || !check_view(s, v, &again, who))
        return false;
    if (memcmp(first, &again, sizeof again) != 0) {
        report(s, "%s: a held view changed under the writer: gen %" PRId64 " -> %" PRId64
               ", %" PRIu64 " -> %" PRIu64 " relationships", who, first->gen, again.gen,
               first->rels, again.rels);
        return false;
    }
    return true;
}

/* ---- the hand-off -------------------------------------------------------------- */

static void send_view(shared *s, const char *who)
{
    strata_view *v = NULL;
    fingerprint fp = { 0 };
    if (strata_snapshot(s->g, &v) != STRATA_OK) {
        report(s, "%s: snapshot for the hand-off: %s", who, strata_errmsg(s->g));
        v = NULL;
    } else if (!read_fingerprint(s, v, &fp, who)) {
        strata_view_release(&v);
    }
    pthread_mutex_lock(&s->lock);
    s->slot = v;
    s->slot_fp = fp;
    s->received = v == NULL;   /* nothing to receive after a failure */
    pthread_cond_broadcast(&s->handed);
    pthread_mutex_unlock(&s->lock);
}

/* Takes the handed view (waiting for it when wait), checks it on this
   thread against what the sender read, and releases it here. */
static void receive_view(shared *s, bool wait, const char *who)
{
    pthread_mutex_lock(&s->lock);
    while (wait && !s->slot && !s->received)
        pthread_cond_wait(&s->handed, &s->lock);
    strata_view *v = s->slot;
    fingerprint sent = s->slot_fp;
    s->slot = NULL;
    if (v)
        s->received = true;
    pthread_mutex_unlock(&s->lock);
    if (!v)
        return;
    fingerprint got;
    if (check_stable(s, v, who, &got) && memcmp(&got, &sent, sizeof got) != 0)
        report(s, "%s: the handed-over view reads gen %" PRId64 ", the sender read %" PRId64,
               who, got.gen, sent.gen);
    strata_view_release(&v);
}

/* ---- readers ------------------------------------------------------------------ */

static void *reader(void *arg)
{
    reader_ctx *rc = arg;
    shared *s = rc->s;
    char who[32];
    snprintf(who, sizeof who, "reader %d", rc->id);
    int64_t last_gen = -1;
    uint64_t last_rels = 0;
    pthread_barrier_wait(&s->start);
    if (rc->id == SENDER)
        send_view(s, who);
    for (int iter = 0; iter < READER_MAX_ITERS && !failed(s) &&
                       (iter < READER_MIN_ITERS || !atomic_load(&s->writer_done));
         iter++) {
        strata_view *v = NULL;
        bool writing = !atomic_load(&s->writer_done);
        if (strata_snapshot(s->g, &v) != STRATA_OK) {
            report(s, "%s: snapshot: %s", who, strata_errmsg(s->g));
            break;
        }
        fingerprint fp;
        bool ok = check_stable(s, v, who, &fp);
        strata_view_release(&v);
        if (!ok)
            break;
        if (fp.gen < last_gen || fp.rels < last_rels) {
            report(s, "%s: a later view went back: gen %" PRId64 " after %" PRId64
                   ", %" PRIu64 " relationships after %" PRIu64, who, fp.gen, last_gen,
                   fp.rels, last_rels);
            break;
        }
        last_gen = fp.gen;
        last_rels = fp.rels;
        rc->views++;
        rc->overlapped += writing;
        if (rc->id == RECEIVER)
            receive_view(s, false, who);
    }
    if (rc->id == RECEIVER)
        receive_view(s, true, who);
    return NULL;
}

/* ---- the test ------------------------------------------------------------------ */

static void setup_graph(shared *s)
{
    assert_int_equal(strata_graph_new(&s->g), STRATA_OK);
    assert_int_equal(strata_token_intern(s->g, STRATA_LABEL, "Item", &s->label), STRATA_OK);
    assert_int_equal(strata_token_intern(s->g, STRATA_RELTYPE, "NEXT", &s->type), STRATA_OK);
    assert_int_equal(strata_token_intern(s->g, STRATA_KEY, "v", &s->key_v), STRATA_OK);
    assert_int_equal(strata_token_intern(s->g, STRATA_KEY, "gen", &s->key_gen), STRATA_OK);
    for (int i = 0; i < NNODES; i++) {
        assert_int_equal(strata_node_create(s->g, &s->label, 1, &s->nodes[i]), STRATA_OK);
        assert_true(set_int(s, s->nodes[i], s->key_v, 0));
    }
    assert_true(set_int(s, s->nodes[0], s->key_gen, 0));
    assert_int_equal(strata_index_create(s->g, STRATA_INDEX_RANGE, false, s->label, &s->key_v,
                                         1, &s->idx),
                     STRATA_OK);
}

static void test_views_under_writer(void **state)
{
    (void)state;
    shared s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.handed, NULL);
    atomic_init(&s.rounds_done, 0);
    atomic_init(&s.writer_done, false);
    pthread_barrier_init(&s.start, NULL, NREADERS + 1);
    setup_graph(&s);

    pthread_t wt, rt[NREADERS];
    reader_ctx rc[NREADERS];
    for (int i = 0; i < NREADERS; i++) {
        rc[i] = (reader_ctx){ .s = &s, .id = i };
        assert_int_equal(pthread_create(&rt[i], NULL, reader, &rc[i]), 0);
    }
    assert_int_equal(pthread_create(&wt, NULL, writer, &s), 0);
    pthread_join(wt, NULL);
    uint64_t views = 0, overlapped = 0;
    for (int i = 0; i < NREADERS; i++) {
        pthread_join(rt[i], NULL);
        views += rc[i].views;
        overlapped += rc[i].overlapped;
    }
    if (s.failures)
        fail_msg("%d failures; the first: %s", s.failures, s.failure);
    assert_true(s.received);
    assert_null(s.slot);
    print_message("views: %d rounds, %" PRIu64 " views checked by %d readers, %" PRIu64
                  " taken while the writer ran\n", ROUNDS, views, NREADERS, overlapped);

    /* The final state, with every view released: complete, and the next
       write folds back. */
    strata_view *v = NULL;
    fingerprint fp;
    assert_int_equal(strata_snapshot(s.g, &v), STRATA_OK);
    assert_true(read_fingerprint(&s, v, &fp, "main"));
    assert_true(check_view(&s, v, &fp, "main"));
    assert_int_equal(fp.gen, ROUNDS);
    assert_int_equal(fp.rels, ROUNDS / 3);
    strata_view_release(&v);
    assert_true(set_int(&s, s.nodes[0], s.key_gen, ROUNDS));
    assert_false(strata_is_forked(s.g));

    strata_graph_free(&s.g);
    pthread_barrier_destroy(&s.start);
    pthread_cond_destroy(&s.handed);
    pthread_mutex_destroy(&s.lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views_under_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
