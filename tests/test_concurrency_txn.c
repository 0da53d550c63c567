/*
 * Statements and transactions under concurrent readers (docs/ARCHITECTURE.md).
 * Runs under ThreadSanitizer too (label "concurrency").
 *
 * One writer thread runs units of work, each a statement or a transaction
 * (holding statements and direct writes), some committed and some rolled
 * back, for a bounded time.  Every unit keeps these invariants at its
 * commit point and breaks them in between:
 *   1. the "v" properties of the nodes labelled Acc sum to TOTAL;
 *   2. the OWNS relationships number the Acc nodes minus NACC (a spawned
 *      Acc node is owned by one of the NACC base accounts);
 *   3. the meta node has no "pending" property (every unit sets it first
 *      and removes it last) and never a "poison" one (every unit that will
 *      be rolled back — a statement, or a whole transaction — sets it
 *      first);
 *   4. the meta node's "gen" counts committed units, so it never goes back.
 * The kinds of unit: a transfer between two accounts, a spawn (create an
 * Acc node, fund it from an account, link it), a reap (unlink a spawned
 * node, return its funds, delete it); a rolled-back unit may also stop
 * part way.  Transactions hold 1-3 statements (each committed or rolled
 * back alone) plus a transfer made of direct writes.
 *
 * Three reader threads take views continuously and check invariants 1-4
 * in each (a half-done statement, an uncommitted transaction or a rolled-
 * back one would break one of them), run strata_integrity_check on some,
 * and now and then hold a view while the writer completes two more units
 * and check it reads the same.  Readers arriving mid-statement either get
 * the version a held view pinned or a materialised pre-statement state, so
 * both paths run, as does in-place rollback when no reader came.
 *
 * Threads never call cmocka's assertions: they record the first failure,
 * which the main thread reports after joining.
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
#include <time.h>

#include "strata.h"

#define NACC 12
#define START_V 100
#define TOTAL ((int64_t)NACC * START_V)
#define MAX_SPAWN 24
#define MAX_UNITS 20000
#define RUN_MS 1500             /* the writer stops after this long ... */
#define MIN_UNITS 60            /* ... but not before this many units */
#define NREADERS 3
#define READER_MIN_VIEWS 20
#define INTEGRITY_EVERY 8       /* views between integrity checks */
#define HOLD_EVERY 40           /* views between held-view checks */
#define WAIT_SPINS 2000000
#define FAILURE_MAX 512

typedef struct shared {
    strata_graph *g;
    strata_token acc, meta_label, owns, key_v, key_gen, key_pending, key_poison;
    strata_id meta;
    strata_id accs[NACC];
    pthread_barrier_t start;
    atomic_uint_fast64_t units_done;
    atomic_bool writer_done;
    pthread_mutex_t lock;
    char failure[FAILURE_MAX];
    int failures;
} shared;

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

static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static uint32_t below(uint64_t *x, uint32_t n) { return (uint32_t)(xorshift(x) % n); }

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the writer ---------------------------------------------------------------- */

/* What the writer knows of its graph: the values it wrote. */
typedef struct wmodel {
    int64_t v[NACC];
    int64_t gen;
    uint32_t nspawn;
    strata_id spawn[MAX_SPAWN], spawn_rel[MAX_SPAWN];
    uint32_t owner[MAX_SPAWN];
    int64_t sv[MAX_SPAWN];
} wmodel;

typedef struct writer_ctx {
    shared *s;
    uint64_t rng;
    wmodel work, committed, stmt_start;
    bool transactions;    /* units may be transactions */
    uint64_t stmt_commit, stmt_rollback, txn_commit, txn_rollback, partial;
} writer_ctx;

/* Each write checks its status; false stops the writer (after a report). */
#define W(call)                                                                             \
    do {                                                                                    \
        strata_status w_s_ = (call);                                                        \
        if (w_s_ != STRATA_OK) {                                                            \
            report(w->s, "writer, unit %" PRIu64 "%s: %s: %s (%s)",                         \
                   (uint64_t)atomic_load(&w->s->units_done),                                \
                   strata_in_transaction(w->s->g) ? " (in a transaction)" : "", #call,      \
                   strata_errstr(w_s_), strata_errmsg(w->s->g));                            \
            return false;                                                                   \
        }                                                                                   \
    } while (0)

static bool set_int(writer_ctx *w, strata_id n, strata_token key, int64_t i)
{
    strata_value *v = strata_value_int(i);
    if (!v) {
        report(w->s, "writer: out of memory making a value");
        return false;
    }
    strata_status st = strata_node_set(w->s->g, n, key, v);
    strata_value_free(&v);
    if (st != STRATA_OK) {
        report(w->s, "writer%s: setting node %" PRIu64 " key %u to %" PRId64 ": %s (%s)",
               strata_in_transaction(w->s->g) ? " (in a transaction)" : "", n, key, i,
               strata_errstr(st), strata_errmsg(w->s->g));
        return false;
    }
    return true;
}

/* Runs one piece of work's writes (at most `cut` of its steps when cut is
   not negative: a doomed unit may stop part way).  Invariants hold before
   and after the whole, not in between. */
static bool do_work(writer_ctx *w, int cut)
{
    shared *s = w->s;
    wmodel *m = &w->work;
    int step = 0;
#define CUT()                                                                               \
    do {                                                                                    \
        if (cut >= 0 && step++ >= cut)                                                      \
            return true;                                                                    \
    } while (0)
    uint32_t kind = below(&w->rng, 3);
    if (kind == 2 && m->nspawn == 0)
        kind = 1;
    if (kind == 1 && m->nspawn == MAX_SPAWN)
        kind = 0;
    uint32_t i = below(&w->rng, NACC), j = (i + 1 + below(&w->rng, NACC - 1)) % NACC;
    int64_t d = 1 + below(&w->rng, 20);
    if (kind == 0) {   /* transfer */
        m->v[i] -= d;
        CUT();
        if (!set_int(w, s->accs[i], s->key_v, m->v[i]))
            return false;
        m->v[j] += d;
        CUT();
        if (!set_int(w, s->accs[j], s->key_v, m->v[j]))
            return false;
    } else if (kind == 1) {   /* spawn */
        uint32_t k = m->nspawn;
        CUT();
        W(strata_node_create(s->g, &s->acc, 1, &m->spawn[k]));
        m->nspawn++;
        CUT();
        if (!set_int(w, m->spawn[k], s->key_v, d))
            return false;
        m->sv[k] = d;
        m->owner[k] = i;
        m->v[i] -= d;
        CUT();
        if (!set_int(w, s->accs[i], s->key_v, m->v[i]))
            return false;
        CUT();
        W(strata_rel_create(s->g, s->accs[i], m->spawn[k], s->owns, &m->spawn_rel[k]));
    } else {   /* reap */
        uint32_t k = below(&w->rng, m->nspawn);
        CUT();
        W(strata_rel_delete(s->g, m->spawn_rel[k]));
        m->v[m->owner[k]] += m->sv[k];
        CUT();
        if (!set_int(w, s->accs[m->owner[k]], s->key_v, m->v[m->owner[k]]))
            return false;
        CUT();
        W(strata_node_delete(s->g, m->spawn[k]));
        m->nspawn--;
        m->spawn[k] = m->spawn[m->nspawn];
        m->spawn_rel[k] = m->spawn_rel[m->nspawn];
        m->owner[k] = m->owner[m->nspawn];
        m->sv[k] = m->sv[m->nspawn];
    }
#undef CUT
    return true;
}

/* One statement: pending (and poison when doomed), the work, gen, pending
   removed; committed unless doomed. */
static bool statement(writer_ctx *w, bool doomed)
{
    shared *s = w->s;
    w->stmt_start = w->work;
    W(strata_statement_begin(s->g));
    if (doomed && !set_int(w, s->meta, s->key_poison, 1))
        return false;
    if (!set_int(w, s->meta, s->key_pending, 1))
        return false;
    int cut = doomed && below(&w->rng, 2) ? (int)below(&w->rng, 4) : -1;
    w->partial += cut >= 0;
    if (!do_work(w, cut))
        return false;
    if (cut < 0) {
        w->work.gen++;
        if (!set_int(w, s->meta, s->key_gen, w->work.gen))
            return false;
        W(strata_node_remove(s->g, s->meta, s->key_pending));
    }
    W(strata_statement_end(s->g, !doomed));
    if (doomed) {
        w->work = w->stmt_start;
        w->stmt_rollback++;
    } else {
        w->stmt_commit++;
    }
    return true;
}

static bool transaction(writer_ctx *w, bool doomed)
{
    shared *s = w->s;
    W(strata_begin(s->g));
    if (doomed && !set_int(w, s->meta, s->key_poison, 1))
        return false;
    if (!set_int(w, s->meta, s->key_pending, 1))
        return false;
    uint32_t n = 1 + below(&w->rng, 3);
    for (uint32_t k = 0; k < n; k++)
        if (!statement(w, below(&w->rng, 3) == 0))
            return false;
    if (!do_work(w, -1))   /* direct writes, visible to no reader before the commit */
        return false;
    w->work.gen++;
    if (!set_int(w, s->meta, s->key_gen, w->work.gen))
        return false;
    W(strata_node_remove(s->g, s->meta, s->key_pending));
    if (doomed) {
        W(strata_rollback(s->g));
        w->work = w->committed;
        w->txn_rollback++;
    } else {
        W(strata_commit(s->g));
        w->txn_commit++;
    }
    return true;
}

static void *writer_main(void *arg)
{
    writer_ctx *w = arg;
    shared *s = w->s;
    pthread_barrier_wait(&s->start);
    uint64_t deadline = now_ms() + RUN_MS;
    for (uint64_t u = 0; u < MAX_UNITS && !failed(s); u++) {
        if (u >= MIN_UNITS && now_ms() > deadline)
            break;
        bool doomed = below(&w->rng, 10) < 3;
        bool ok = w->transactions && below(&w->rng, 5) == 0 ? transaction(w, doomed)
                                                             : statement(w, doomed);
        if (!ok)
            break;
        w->committed = w->work;
        atomic_fetch_add(&s->units_done, 1);
    }
    atomic_store(&s->writer_done, true);
    return NULL;
}

/* ---- the readers ------------------------------------------------------------------ */

typedef struct fingerprint {
    uint64_t accs, owns;
    int64_t sum, gen, weighted;
} fingerprint;

typedef struct reader_ctx {
    shared *s;
    int id;
    uint64_t views, held, integrity, mid_unit;
} reader_ctx;

static bool get_int(strata_view *v, strata_id n, strata_token key, bool *present, int64_t *out)
{
    strata_value *val = NULL;
    if (strata_node_get(v, n, key, &val) != STRATA_OK)
        return false;
    *present = strata_value_type(val) != STRATA_NULL;
    bool ok = !*present || strata_value_get_int(val, out) == STRATA_OK;
    strata_value_free(&val);
    return ok;
}

/* Reads a view; false (after a report) when an invariant fails. */
static bool read_view(reader_ctx *rc, strata_view *v, fingerprint *fp)
{
    shared *s = rc->s;
    memset(fp, 0, sizeof *fp);
    strata_node_iter *it = NULL;
    if (strata_nodes_by_label(v, s->acc, &it) != STRATA_OK) {
        report(s, "reader %d: strata_nodes_by_label: %s", rc->id, strata_view_errmsg(v));
        return false;
    }
    strata_id n;
    while (strata_node_iter_next(it, &n)) {
        bool present = false;
        int64_t x = 0;
        if (!get_int(v, n, s->key_v, &present, &x) || !present) {
            strata_node_iter_free(&it);
            report(s, "reader %d: Acc node %" PRIu64 " has no integer v", rc->id, n);
            return false;
        }
        fp->accs++;
        fp->sum += x;
        fp->weighted += x * (int64_t)(n + 1);
    }
    strata_node_iter_free(&it);
    if (strata_rels_by_type(v, s->owns, &it) != STRATA_OK) {
        report(s, "reader %d: strata_rels_by_type: %s", rc->id, strata_view_errmsg(v));
        return false;
    }
    strata_id r;
    while (strata_node_iter_next(it, &r)) {
        strata_id end = 0;
        bool is_acc = false;
        fp->owns++;
        if (strata_rel_info(v, r, NULL, &end, NULL) != STRATA_OK ||
            strata_node_has_label(v, end, s->acc, &is_acc) != STRATA_OK || !is_acc) {
            strata_node_iter_free(&it);
            report(s, "reader %d: OWNS relationship %" PRIu64 " does not end at an Acc node",
                   rc->id, r);
            return false;
        }
    }
    strata_node_iter_free(&it);
    bool pending = false, poison = false, has_gen = false;
    int64_t x;
    if (!get_int(v, s->meta, s->key_pending, &pending, &x) ||
        !get_int(v, s->meta, s->key_poison, &poison, &x) ||
        !get_int(v, s->meta, s->key_gen, &has_gen, &fp->gen)) {
        report(s, "reader %d: reading the meta node failed", rc->id);
        return false;
    }
    if (fp->sum != TOTAL || fp->owns + NACC != fp->accs || pending || poison) {
        report(s, "reader %d, view %" PRIu64 ": sum %" PRId64 " (want %" PRId64 "), %" PRIu64
               " Acc nodes and %" PRIu64 " OWNS (want Acc = OWNS + %d), pending %d, poison %d, "
               "gen %" PRId64 ": a half-done statement or an uncommitted or rolled-back "
               "transaction is visible", rc->id, rc->views, fp->sum, TOTAL, fp->accs, fp->owns,
               NACC, pending, poison, fp->gen);
        return false;
    }
    return true;
}

static void *reader_main(void *arg)
{
    reader_ctx *rc = arg;
    shared *s = rc->s;
    pthread_barrier_wait(&s->start);
    int64_t last_gen = 0;
    while ((!atomic_load(&s->writer_done) || rc->views < READER_MIN_VIEWS) && !failed(s)) {
        bool writing = !atomic_load(&s->writer_done);
        strata_view *v = NULL;
        strata_status st = strata_snapshot(s->g, &v);
        if (st != STRATA_OK) {
            report(s, "reader %d: strata_snapshot: %s (%s)", rc->id, strata_errstr(st),
                   strata_errmsg(s->g));
            break;
        }
        rc->views++;
        rc->mid_unit += writing;
        fingerprint fp;
        if (!read_view(rc, v, &fp)) {
            strata_view_release(&v);
            break;
        }
        if (fp.gen < last_gen) {
            report(s, "reader %d: gen went back from %" PRId64 " to %" PRId64, rc->id, last_gen,
                   fp.gen);
            strata_view_release(&v);
            break;
        }
        last_gen = fp.gen;
        if (rc->views % INTEGRITY_EVERY == 0) {
            rc->integrity++;
            st = strata_integrity_check(v);
            if (st != STRATA_OK) {
                report(s, "reader %d: strata_integrity_check: %s", rc->id,
                       strata_view_errmsg(v));
                strata_view_release(&v);
                break;
            }
        }
        if (rc->views % HOLD_EVERY == 0 && !atomic_load(&s->writer_done)) {
            /* Hold the view while the writer completes two more units. */
            uint64_t target = atomic_load(&s->units_done) + 2;
            for (long spin = 0; spin < WAIT_SPINS && atomic_load(&s->units_done) < target &&
                                !atomic_load(&s->writer_done);
                 spin++)
                sched_yield();
            fingerprint again;
            if (!read_view(rc, v, &again)) {
                strata_view_release(&v);
                break;
            }
            if (memcmp(&fp, &again, sizeof fp) != 0) {
                report(s, "reader %d: a held view changed: gen %" PRId64 " -> %" PRId64
                       ", %" PRIu64 " -> %" PRIu64 " Acc nodes", rc->id, fp.gen, again.gen,
                       fp.accs, again.accs);
                strata_view_release(&v);
                break;
            }
            rc->held++;
        }
        strata_view_release(&v);
    }
    return NULL;
}

/* ---- the test --------------------------------------------------------------------- */

static strata_token intern(strata_graph *g, strata_token_kind kind, const char *name)
{
    strata_token t = 0;
    assert_int_equal(strata_token_intern(g, kind, name, &t), STRATA_OK);
    return t;
}

static void run_under_readers(bool transactions)
{
    static shared s;
    memset(&s, 0, sizeof s);
    assert_int_equal(strata_graph_new(&s.g), STRATA_OK);
    s.acc = intern(s.g, STRATA_LABEL, "Acc");
    s.meta_label = intern(s.g, STRATA_LABEL, "Meta");
    s.owns = intern(s.g, STRATA_RELTYPE, "OWNS");
    s.key_v = intern(s.g, STRATA_KEY, "v");
    s.key_gen = intern(s.g, STRATA_KEY, "gen");
    s.key_pending = intern(s.g, STRATA_KEY, "pending");
    s.key_poison = intern(s.g, STRATA_KEY, "poison");
    /* A range index on v, so index maintenance and its undo run too. */
    strata_index idx;
    assert_int_equal(strata_index_create(s.g, STRATA_INDEX_RANGE, false, s.acc, &s.key_v, 1,
                                         &idx),
                     STRATA_OK);
    static writer_ctx w;
    memset(&w, 0, sizeof w);
    w.s = &s;
    w.rng = 0x9E3779B97F4A7C15ull;
    w.transactions = transactions;
    assert_int_equal(strata_node_create(s.g, &s.meta_label, 1, &s.meta), STRATA_OK);
    strata_value *zero = strata_value_int(0), *start_v = strata_value_int(START_V);
    assert_int_equal(strata_node_set(s.g, s.meta, s.key_gen, zero), STRATA_OK);
    for (int i = 0; i < NACC; i++) {
        assert_int_equal(strata_node_create(s.g, &s.acc, 1, &s.accs[i]), STRATA_OK);
        assert_int_equal(strata_node_set(s.g, s.accs[i], s.key_v, start_v), STRATA_OK);
        w.work.v[i] = START_V;
    }
    strata_value_free(&zero);
    strata_value_free(&start_v);
    w.committed = w.work;
    pthread_mutex_init(&s.lock, NULL);
    atomic_init(&s.units_done, 0);
    atomic_init(&s.writer_done, false);
    assert_int_equal(pthread_barrier_init(&s.start, NULL, NREADERS + 1), 0);

    reader_ctx readers[NREADERS];
    pthread_t rt[NREADERS], wt;
    for (int i = 0; i < NREADERS; i++) {
        readers[i] = (reader_ctx){ .s = &s, .id = i };
        assert_int_equal(pthread_create(&rt[i], NULL, reader_main, &readers[i]), 0);
    }
    assert_int_equal(pthread_create(&wt, NULL, writer_main, &w), 0);
    assert_int_equal(pthread_join(wt, NULL), 0);
    for (int i = 0; i < NREADERS; i++)
        assert_int_equal(pthread_join(rt[i], NULL), 0);
    pthread_barrier_destroy(&s.start);

    uint64_t views = 0, held = 0, integrity = 0, mid = 0;
    for (int i = 0; i < NREADERS; i++) {
        views += readers[i].views;
        held += readers[i].held;
        integrity += readers[i].integrity;
        mid += readers[i].mid_unit;
    }
    print_message("%s: %" PRIu64 " units (statements %" PRIu64 " committed, %"
                  PRIu64 " rolled back, %" PRIu64 " of them part way; transactions %" PRIu64
                  " committed, %" PRIu64 " rolled back); readers: %" PRIu64 " views (%" PRIu64
                  " while writing), %" PRIu64 " held across units, %" PRIu64
                  " integrity checks\n",
                  transactions ? "statements and transactions" : "statements",
                  (uint64_t)atomic_load(&s.units_done), w.stmt_commit, w.stmt_rollback,
                  w.partial, w.txn_commit, w.txn_rollback, views, mid, held, integrity);
    if (s.failures)
        fail_msg("%d failure(s); the first: %s", s.failures, s.failure);

    /* The final state is the writer's last committed one. */
    assert_false(strata_in_transaction(s.g));
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(s.g, &v), STRATA_OK);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    for (int i = 0; i < NACC; i++) {
        strata_value *val = NULL;
        int64_t x = 0;
        assert_int_equal(strata_node_get(v, s.accs[i], s.key_v, &val), STRATA_OK);
        assert_int_equal(strata_value_get_int(val, &x), STRATA_OK);
        strata_value_free(&val);
        if (x != w.committed.v[i])
            fail_msg("account %d holds %" PRId64 ", the writer committed %" PRId64, i, x,
                     w.committed.v[i]);
    }
    assert_int_equal(strata_node_count(v), 1 + NACC + w.committed.nspawn);
    assert_int_equal(strata_rel_count(v), w.committed.nspawn);
    strata_view_release(&v);
    assert_true(atomic_load(&s.units_done) >= MIN_UNITS);
    assert_true(w.stmt_commit > 0 && w.stmt_rollback > 0);
    if (transactions)
        assert_true(w.txn_commit > 0 && w.txn_rollback > 0);
    assert_true(views >= NREADERS * READER_MIN_VIEWS);
    pthread_mutex_destroy(&s.lock);
    strata_graph_free(&s.g);
}

/* Statements alone: materialisation, swap-back and in-place rollback. */
static void test_statements_under_readers(void **state)
{
    (void)state;
    run_under_readers(false);
}

/* Statements and transactions (holding statements and direct writes). */
static void test_statements_and_transactions_under_readers(void **state)
{
    (void)state;
    run_under_readers(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_statements_under_readers),
        cmocka_unit_test(test_statements_and_transactions_under_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
