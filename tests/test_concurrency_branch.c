/*
 * Branches written from threads (docs/BRANCHES.md): each branch has its own writer
 * thread, other threads read every graph of the lineage and diff views of
 * different branches, and graphs are freed by threads that did not make
 * them.  Runs under ThreadSanitizer too (label "concurrency"): branches
 * share chunks, refcounts, the token catalog and the memory context, so a
 * missing atomic or lock between two writers of one lineage shows as a
 * race even when the values come out right.
 *
 * The source graph holds NACCOUNTS accounts (label Acct, "bal" 100 each,
 * a range index on bal) in a ring of RING relationships.  It is never
 * written.  Writers 0..2 each branch their own clone of a view of it;
 * writer 3 branches a view of writer 0's branch that writer 0 hands over
 * half-way.  Every writer runs ROUNDS statements, some inside
 * transactions, a quarter rolled back; a committed statement
 *   - moves an amount between two accounts (and logs it as a PAID
 *     relationship, or deletes an old one), opens an account funded from
 *     another, or closes one, handing its balance to another (detach
 *     delete), and
 *   - sets "round<w>" (a key each writer interns itself, so the lineage's
 *     catalog is written from four threads) on account 0 to its number.
 * So in every committed state of every graph the balances sum to TOTAL.
 * Writers 1 and 3 make half their transfers through Cypher (one statement
 * setting both balances and the round).  Each writer keeps its own model
 * of its branch.
 *
 * Readers, while the writers run, snapshot random graphs and check: the
 * balances sum to TOTAL, every account is in the index and in the label
 * scan, PAID and RING relationships add up to the count, "round<w>" never
 * goes back between two views of one graph, the source's views show the
 * source as it was, and now and then strata_integrity_check, Cypher's sum
 * of the balances (the writers run it too, inside and outside
 * transactions) and strata_memory_stats of a graph being written.  They diff
 * pairs of views — of two branches, a branch and the source, or two
 * states of one branch — and apply the changes to the first view's
 * balances and relationship count: the result must be the second view's,
 * and every old value must be the first view's.  A reader frees the
 * source early, and each branch once its writer is done, after checking
 * the branch's last state against its writer's model.
 *
 * Threads never call cmocka's assertions: they record the first failure,
 * and the main thread fails the test with it after joining.
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
#include <stdlib.h>
#include <string.h>

#include "strata.h"

#define NACCOUNTS 24
#define START_BALANCE 100
#define TOTAL ((int64_t)NACCOUNTS * START_BALANCE)
#define MAX_NODES 64      /* account ids stay below */
#define MAX_LIVE 40       /* live accounts at most */
#define MIN_LIVE 8
#define MAX_RELS 128      /* relationship ids stay below */
#define MAX_PAID 40       /* live PAID relationships at most */
#define NWRITERS 4
#define GRANDCHILD 3      /* writer 3 branches writer 0's branch */
#define NREADERS 3
#define NSLOTS (NWRITERS + 1)
#define SOURCE NWRITERS   /* the slot of the source graph */
#define ROUNDS 400
#define READER_MIN_ITERS 40
#define READER_MAX_ITERS 100000
#define FREE_SOURCE_AT 5  /* the reader iteration that frees the source */
#define FAILURE_MAX 1024

/* ---- a writer's model of its branch ---------------------------------------- */

typedef struct wmodel {
    bool alive[MAX_NODES];
    int64_t bal[MAX_NODES];
    uint32_t nodes;
    bool rel_alive[MAX_RELS];
    uint32_t rel_start[MAX_RELS], rel_end[MAX_RELS];
    bool rel_paid[MAX_RELS];
    uint32_t rels, paid;
    int64_t round;           /* the last committed statement's number */
} wmodel;

/* A graph of the lineage as the threads share it. */
typedef struct slot {
    pthread_rwlock_t lock;   /* write-held to free g; read-held to snapshot it */
    strata_graph *g;         /* NULL before its writer made it and once freed */
    atomic_bool done;        /* its writer has finished: final is its state */
    atomic_bool claimed;     /* a reader has taken on freeing it */
    wmodel final;
} slot;

typedef struct shared {
    slot slots[NSLOTS];
    strata_view *source_view;           /* the source's state; the main thread's */
    strata_token acct, paid, ring, bal;
    strata_id ring_rels[NACCOUNTS];
    pthread_barrier_t start;
    atomic_int writers_done;
    pthread_mutex_t lock;               /* guards the hand-over and the failure */
    pthread_cond_t handed;
    strata_view *handover;              /* writer 0's branch at half-way ... */
    wmodel handover_model;              /* ... and what it holds */
    bool handover_ready;
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

/* The source's state as a model (the ring's relationships are not PAID). */
static void source_model(const shared *s, wmodel *m)
{
    memset(m, 0, sizeof *m);
    for (uint32_t i = 0; i < NACCOUNTS; i++) {
        m->alive[i] = true;
        m->bal[i] = START_BALANCE;
        uint32_t r = (uint32_t)s->ring_rels[i];
        m->rel_alive[r] = true;
        m->rel_start[r] = i;
        m->rel_end[r] = (i + 1) % NACCOUNTS;
    }
    m->nodes = NACCOUNTS;
    m->rels = NACCOUNTS;
    m->round = -1;
}

/* The sum of the balances as Cypher computes it on r's single row, or
   INT64_MIN when the query failed (its message in err). */
static int64_t result_sum(strata_status st, strata_result *r, char *err, size_t errlen)
{
    const strata_value *const *row;
    int64_t sum = INT64_MIN;
    snprintf(err, errlen, "%s", strata_errstr(st));
    if (st == STRATA_OK && !strata_result_next(r, &row))
        snprintf(err, errlen, "no row");
    else if (st == STRATA_OK && strata_value_get_int(row[0], &sum) != STRATA_OK)
        snprintf(err, errlen, "a value of type %d", (int)strata_value_type(row[0]));
    const strata_query_error *e = r ? strata_result_error(r) : NULL;
    if (e) {
        snprintf(err, errlen, "%s: %s", e->code, e->message);
        sum = INT64_MIN;
    }
    strata_result_free(&r);
    return sum;
}

static const char sum_query[] = "MATCH (a:Acct) RETURN sum(a.bal)";

/* Cypher's sum of the balances, on a view or (v NULL) on g's writer. */
static int64_t cypher_sum(strata_view *v, strata_graph *g, char *err, size_t errlen)
{
    strata_result *r = NULL;
    strata_status st = v ? strata_view_query(v, sum_query, NULL, &r)
                         : strata_query(g, sum_query, NULL, &r);
    return result_sum(st, r, err, errlen);
}

/* ---- a writer --------------------------------------------------------------- */

typedef struct writer_ctx {
    shared *s;
    int id;
    strata_view *from;       /* writers 0..2: a clone of the source's view */
    strata_graph *g;
    strata_token round_key;
    uint64_t rng;
    wmodel committed, work, stmt_start;
    bool in_txn;
    char who[32];
    uint64_t statements, rolled_back, txns;
} writer_ctx;

static bool ok_or_report(writer_ctx *w, strata_status st, const char *what)
{
    if (st != STRATA_OK)
        report(w->s, "%s: %s: %s (%s)", w->who, what, strata_errstr(st), strata_errmsg(w->g));
    return st == STRATA_OK;
}

static bool set_int(writer_ctx *w, strata_id node, strata_token key, int64_t i)
{
    strata_value *v = strata_value_int(i);
    strata_status st = v ? strata_node_set(w->g, node, key, v) : STRATA_ENOMEM;
    strata_value_free(&v);
    return ok_or_report(w, st, "setting a property");
}

static uint32_t pick_account(writer_ctx *w, uint32_t other)
{
    uint32_t live[MAX_NODES], n = 0;
    for (uint32_t i = 0; i < MAX_NODES; i++)
        if (w->work.alive[i] && i != other)
            live[n++] = i;
    return live[below(&w->rng, n)];
}

static bool transfer(writer_ctx *w)
{
    wmodel *m = &w->work;
    uint32_t a = pick_account(w, UINT32_MAX), b = pick_account(w, a);
    int64_t x = 1 + below(&w->rng, 20);
    m->bal[a] -= x;
    m->bal[b] += x;
    if (!set_int(w, a, w->s->bal, m->bal[a]) || !set_int(w, b, w->s->bal, m->bal[b]))
        return false;
    if (m->paid < MAX_PAID) {
        strata_id r;
        if (!ok_or_report(w, strata_rel_create(w->g, a, b, w->s->paid, &r), "logging a payment"))
            return false;
        if (r >= MAX_RELS || m->rel_alive[r]) {
            report(w->s, "%s: a new relationship got id %" PRIu64 ", not a free one", w->who, r);
            return false;
        }
        m->rel_alive[r] = m->rel_paid[r] = true;
        m->rel_start[r] = a;
        m->rel_end[r] = b;
        m->rels++;
        m->paid++;
        return true;
    }
    for (uint32_t r = 0; r < MAX_RELS; r++)   /* the oldest-numbered payment goes */
        if (m->rel_alive[r] && m->rel_paid[r]) {
            if (!ok_or_report(w, strata_rel_delete(w->g, r), "deleting a payment"))
                return false;
            m->rel_alive[r] = m->rel_paid[r] = false;
            m->rels--;
            m->paid--;
            break;
        }
    return true;
}

static bool open_account(writer_ctx *w)
{
    wmodel *m = &w->work;
    uint32_t a = pick_account(w, UINT32_MAX);
    int64_t x = 1 + below(&w->rng, 30);
    strata_id n;
    if (!ok_or_report(w, strata_node_create(w->g, &w->s->acct, 1, &n), "opening an account"))
        return false;
    if (n >= MAX_NODES || m->alive[n]) {
        report(w->s, "%s: a new account got id %" PRIu64 ", not a free one", w->who, n);
        return false;
    }
    m->alive[n] = true;
    m->nodes++;
    m->bal[a] -= x;
    m->bal[n] = x;
    return set_int(w, a, w->s->bal, m->bal[a]) && set_int(w, n, w->s->bal, x);
}

/* Closes an account (never account 0, which carries the round keys),
   handing its balance to another. */
static bool close_account(writer_ctx *w)
{
    wmodel *m = &w->work;
    uint32_t d = pick_account(w, 0), a = pick_account(w, d);
    m->bal[a] += m->bal[d];
    if (!set_int(w, a, w->s->bal, m->bal[a]) ||
        !ok_or_report(w, strata_node_detach_delete(w->g, d), "closing an account"))
        return false;
    for (uint32_t r = 0; r < MAX_RELS; r++)
        if (m->rel_alive[r] && (m->rel_start[r] == d || m->rel_end[r] == d)) {
            m->paid -= m->rel_paid[r];
            m->rel_alive[r] = m->rel_paid[r] = false;
            m->rels--;
        }
    m->alive[d] = false;
    m->bal[d] = 0;
    m->nodes--;
    return true;
}

/* One statement: a change that keeps the sum, and the round. */
/* Odd writers move money half the time through Cypher: one statement that
   sets both balances and the round, always committed. */
static bool cypher_transfer(writer_ctx *w, int64_t round)
{
    wmodel *m = &w->work;
    uint32_t a = pick_account(w, UINT32_MAX), b = pick_account(w, a);
    int64_t x = 1 + below(&w->rng, 20);
    char text[192];
    snprintf(text, sizeof text,
             "MATCH (a) WHERE id(a) = $a MATCH (b) WHERE id(b) = $b "
             "MATCH (z) WHERE id(z) = 0 "
             "SET a.bal = a.bal - $x, b.bal = b.bal + $x, z.round%d = $r",
             w->id);
    const char *keys[] = { "a", "b", "r", "x" };
    strata_value *vals[] = { strata_value_int(a), strata_value_int(b), strata_value_int(round),
                             strata_value_int(x) };
    strata_value *params = strata_value_map(keys, (const strata_value *const *)vals, 4);
    for (int i = 0; i < 4; i++)
        strata_value_free(&vals[i]);
    strata_result *r = NULL;
    strata_status st = params ? strata_query(w->g, text, params, &r) : STRATA_ENOMEM;
    strata_value_free(&params);
    const strata_query_error *e = r ? strata_result_error(r) : NULL;
    if (st != STRATA_OK || e)
        report(w->s, "%s: a transfer through Cypher: %s (%s)", w->who, strata_errstr(st),
               e ? e->message : strata_errmsg(w->g));
    strata_result_free(&r);
    if (st != STRATA_OK || e)
        return false;
    m->bal[a] -= x;
    m->bal[b] += x;
    m->round = round;
    w->statements++;
    if (!w->in_txn)
        w->committed = w->work;
    return true;
}

static bool statement(writer_ctx *w, int64_t round)
{
    if (w->id % 2 && below(&w->rng, 2))
        return cypher_transfer(w, round);
    if (!ok_or_report(w, strata_statement_begin(w->g), "beginning a statement"))
        return false;
    w->stmt_start = w->work;
    uint32_t x = below(&w->rng, 10);
    bool ok;
    if (x < 2 && w->work.nodes < MAX_LIVE)
        ok = open_account(w);
    else if (x < 3 && w->work.nodes > MIN_LIVE)
        ok = close_account(w);
    else
        ok = transfer(w);
    ok = ok && set_int(w, 0, w->round_key, round);
    w->work.round = round;
    bool commit = below(&w->rng, 4) != 0;
    if (!ok || !ok_or_report(w, strata_statement_end(w->g, commit), "ending a statement"))
        return false;
    w->statements++;
    if (!commit) {
        w->work = w->stmt_start;
        w->rolled_back++;
    } else if (!w->in_txn) {
        w->committed = w->work;
    }
    return true;
}

/* Checks the writer's own view against its model. */
static bool check_own(writer_ctx *w)
{
    strata_view *v = NULL;
    if (!ok_or_report(w, strata_snapshot(w->g, &v), "taking a snapshot"))
        return false;
    bool ok = strata_node_count(v) == w->committed.nodes &&
              strata_rel_count(v) == w->committed.rels;
    for (uint32_t i = 0; ok && i < MAX_NODES; i++) {
        ok = strata_node_exists(v, i) == w->committed.alive[i];
        strata_value *val = NULL;
        int64_t b;
        if (ok && w->committed.alive[i])
            ok = strata_node_get(v, i, w->s->bal, &val) == STRATA_OK &&
                 strata_value_get_int(val, &b) == STRATA_OK && b == w->committed.bal[i];
        strata_value_free(&val);
    }
    strata_view_release(&v);
    if (!ok)
        report(w->s, "%s: its own snapshot is not what it committed", w->who);
    return ok;
}

static void hand_over(writer_ctx *w)
{
    strata_view *v = NULL;
    if (!ok_or_report(w, strata_snapshot(w->g, &v), "taking the view to hand over"))
        v = NULL;
    pthread_mutex_lock(&w->s->lock);
    w->s->handover = v;
    w->s->handover_model = w->committed;
    w->s->handover_ready = true;
    pthread_cond_broadcast(&w->s->handed);
    pthread_mutex_unlock(&w->s->lock);
}

/* Writer GRANDCHILD's start: writer 0's view, once it is handed over. */
static strata_view *receive(writer_ctx *w)
{
    pthread_mutex_lock(&w->s->lock);
    while (!w->s->handover_ready)
        pthread_cond_wait(&w->s->handed, &w->s->lock);
    strata_view *v = w->s->handover;
    w->s->handover = NULL;
    w->committed = w->s->handover_model;
    pthread_mutex_unlock(&w->s->lock);
    w->committed.round = -1;   /* its own round key is not set yet */
    return v;
}

static void *writer(void *arg)
{
    writer_ctx *w = arg;
    shared *s = w->s;
    slot *sl = &s->slots[w->id];
    snprintf(w->who, sizeof w->who, "writer %d", w->id);
    pthread_barrier_wait(&s->start);
    strata_view *from = w->id == GRANDCHILD ? receive(w) : w->from;
    if (!from) {
        atomic_fetch_add(&s->writers_done, 1);
        return NULL;
    }
    if (w->id != GRANDCHILD)
        source_model(s, &w->committed);
    strata_status st = strata_branch(from, &w->g);
    strata_view_release(&from);   /* made on another thread */
    if (st != STRATA_OK) {
        report(s, "%s: strata_branch: %s", w->who, strata_errstr(st));
        atomic_fetch_add(&s->writers_done, 1);
        return NULL;
    }
    pthread_rwlock_wrlock(&sl->lock);
    sl->g = w->g;
    pthread_rwlock_unlock(&sl->lock);
    char key[16];
    snprintf(key, sizeof key, "round%d", w->id);
    bool ok = ok_or_report(w, strata_token_intern(w->g, STRATA_KEY, key, &w->round_key),
                           "interning its round key");
    w->work = w->committed;
    int64_t txn_left = 0;
    for (int64_t round = 1; ok && round <= ROUNDS && !failed(s); round++) {
        if (!w->in_txn && below(&w->rng, 12) == 0) {
            ok = ok_or_report(w, strata_begin(w->g), "beginning a transaction");
            w->in_txn = ok;
            txn_left = 1 + below(&w->rng, 4);
            w->txns++;
        }
        ok = ok && statement(w, round);
        if (ok && w->in_txn && --txn_left == 0) {
            bool commit = below(&w->rng, 3) != 0;
            ok = ok_or_report(w, commit ? strata_commit(w->g) : strata_rollback(w->g),
                              commit ? "committing" : "rolling back");
            if (commit)
                w->committed = w->work;
            else
                w->work = w->committed;
            w->in_txn = false;
        }
        if (ok && !w->in_txn && round % 40 == 0)
            ok = check_own(w);
        if (ok && round % 50 == 25) {   /* the writer's Cypher, in or out of a transaction */
            char err[256];
            int64_t sum = cypher_sum(NULL, w->g, err, sizeof err);
            if (sum != TOTAL) {
                report(s, "%s: Cypher sums the balances to %" PRId64 " (%s)", w->who, sum, err);
                ok = false;
            }
        }
        if (w->id == 0 && round == ROUNDS / 2) {
            if (w->in_txn) {   /* hand over the state it has written so far */
                ok = ok && ok_or_report(w, strata_commit(w->g), "committing");
                w->committed = w->work;
                w->in_txn = false;
            }
            hand_over(w);
        }
        sched_yield();
    }
    if (w->id == 0 && !s->handover_ready)
        hand_over(w);   /* failed before half-way: let writer 3 stop too */
    if (ok && w->in_txn) {
        ok = ok_or_report(w, strata_commit(w->g), "committing");
        w->committed = w->work;
    }
    sl->final = w->committed;
    atomic_store(&sl->done, true);
    atomic_fetch_add(&s->writers_done, 1);
    return NULL;
}

/* ---- reading a view ----------------------------------------------------------- */

typedef struct balances {
    bool alive[MAX_NODES];
    bool has_bal[MAX_NODES];
    int64_t bal[MAX_NODES];
    uint64_t rels;
} balances;

typedef struct reader_ctx {
    shared *s;
    int id;
    uint64_t rng;
    strata_view *source;     /* this reader's clone of the source's view */
    int64_t last_round[NSLOTS];
    char who[32];
    uint64_t views, diffs, changes;
} reader_ctx;

static bool read_state(reader_ctx *rc, strata_view *v, balances *st)
{
    memset(st, 0, sizeof *st);
    st->rels = strata_rel_count(v);
    for (uint32_t i = 0; i < MAX_NODES; i++) {
        st->alive[i] = strata_node_exists(v, i);
        if (!st->alive[i])
            continue;
        strata_value *val = NULL;
        if (strata_node_get(v, i, rc->s->bal, &val) != STRATA_OK) {
            report(rc->s, "%s: reading a balance: %s", rc->who, strata_view_errmsg(v));
            return false;
        }
        st->has_bal[i] = strata_value_get_int(val, &st->bal[i]) == STRATA_OK;
        strata_value_free(&val);
    }
    return true;
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

/* The round key of writer w on account 0, or -1 when not set (or not
   interned yet). */
static int64_t read_round(strata_view *v, int w)
{
    char name[16];
    snprintf(name, sizeof name, "round%d", w);
    strata_token t;
    if (strata_token_lookup(v, STRATA_KEY, name, &t) != STRATA_OK)
        return -1;
    strata_value *val = NULL;
    int64_t r = -1;
    if (strata_node_get(v, 0, t, &val) == STRATA_OK && strata_value_get_int(val, &r) != STRATA_OK)
        r = -1;
    strata_value_free(&val);
    return r;
}

/* The invariants every committed state keeps, in one view of slot k. */
static bool check_view(reader_ctx *rc, strata_view *v, int k)
{
    shared *s = rc->s;
    balances st;
    if (!read_state(rc, v, &st))
        return false;
    int64_t sum = 0;
    uint64_t accounts = 0;
    for (uint32_t i = 0; i < MAX_NODES; i++)
        if (st.alive[i]) {
            accounts++;
            sum += st.bal[i];
            if (!st.has_bal[i]) {
                report(s, "%s: account %u of graph %d has no balance", rc->who, i, k);
                return false;
            }
        }
    strata_node_iter *it = NULL;
    uint64_t labelled = 0, indexed = 0, paid = 0, ring = 0;
    strata_index idx;
    strata_value *lo = strata_value_int(INT64_MIN);
    bool ok = lo && strata_nodes_by_label(v, s->acct, &it) == STRATA_OK;
    if (ok)
        labelled = count_iter(it);
    ok = ok && strata_index_find(v, "by_balance", &idx) == STRATA_OK &&
         strata_index_range(v, idx, lo, true, NULL, false, &it) == STRATA_OK;
    if (ok)
        indexed = count_iter(it);
    ok = ok && strata_rels_by_type(v, s->paid, &it) == STRATA_OK;
    if (ok)
        paid = count_iter(it);
    ok = ok && strata_rels_by_type(v, s->ring, &it) == STRATA_OK;
    if (ok)
        ring = count_iter(it);
    strata_value_free(&lo);
    if (!ok) {
        report(s, "%s: reading graph %d: %s", rc->who, k, strata_view_errmsg(v));
        return false;
    }
    if (sum != TOTAL || accounts != strata_node_count(v) || labelled != accounts ||
        indexed != accounts || paid + ring != st.rels) {
        report(s, "%s: a view of graph %d breaks the invariants: balances sum to %" PRId64
               " (not %" PRId64 "), %" PRIu64 " accounts, %" PRIu64 " nodes, %" PRIu64
               " labelled, %" PRIu64 " indexed, %" PRIu64 " + %" PRIu64 " of %" PRIu64
               " relationships", rc->who, k, sum, TOTAL, accounts, strata_node_count(v),
               labelled, indexed, paid, ring, st.rels);
        return false;
    }
    if (below(&rc->rng, 4) == 0) {
        char err[256];
        int64_t csum = cypher_sum(v, NULL, err, sizeof err);
        if (csum != TOTAL) {
            report(s, "%s: Cypher sums graph %d's balances to %" PRId64 " (%s)", rc->who, k,
                   csum, err);
            return false;
        }
    }
    if (k == SOURCE) {
        bool same = accounts == NACCOUNTS && st.rels == NACCOUNTS && paid == 0;
        for (uint32_t i = 0; same && i < NACCOUNTS; i++)
            same = st.bal[i] == START_BALANCE;
        if (!same) {
            report(s, "%s: the source changed", rc->who);
            return false;
        }
        return true;
    }
    int64_t round = read_round(v, k);
    if (round < rc->last_round[k]) {
        report(s, "%s: graph %d went back from round %" PRId64 " to %" PRId64, rc->who, k,
               rc->last_round[k], round);
        return false;
    }
    rc->last_round[k] = round;
    if (below(&rc->rng, 8) == 0 && strata_integrity_check(v) != STRATA_OK) {
        report(s, "%s: graph %d: %s", rc->who, k, strata_view_errmsg(v));
        return false;
    }
    return true;
}

/* A snapshot of slot k, or NULL when the graph is not there (yet, or any
   more). */
static strata_view *snapshot_slot(reader_ctx *rc, int k)
{
    slot *sl = &rc->s->slots[k];
    strata_view *v = NULL;
    pthread_rwlock_rdlock(&sl->lock);
    if (sl->g && strata_snapshot(sl->g, &v) != STRATA_OK) {
        report(rc->s, "%s: snapshot of graph %d: %s", rc->who, k, strata_errmsg(sl->g));
        v = NULL;
    }
    pthread_rwlock_unlock(&sl->lock);
    return v;
}

/* strata_memory_stats of slot k while its writer writes: the lineage's
   bytes hold the graph's private ones. */
static bool check_memstats(reader_ctx *rc, int k)
{
    slot *sl = &rc->s->slots[k];
    strata_memstats ms;
    strata_status st = STRATA_OK;
    bool there;
    pthread_rwlock_rdlock(&sl->lock);
    there = sl->g != NULL;
    if (there)
        st = strata_memory_stats(sl->g, &ms);
    pthread_rwlock_unlock(&sl->lock);
    if (!there)
        return true;
    if (st != STRATA_OK || ms.private_bytes > ms.graph_bytes || ms.nodes < MIN_LIVE ||
        ms.nodes > MAX_LIVE) {
        report(rc->s, "%s: memory statistics of graph %d: %s, %" PRIu64 " private of %" PRIu64
               " bytes, %" PRIu64 " nodes", rc->who, k, strata_errstr(st), ms.private_bytes,
               ms.graph_bytes, ms.nodes);
        return false;
    }
    return true;
}

/* ---- diffs, replayed onto the first view's state ------------------------------- */

typedef struct replay {
    reader_ctx *rc;
    balances *st;
    bool bad;
    char msg[256];
} replay;

static bool same_old(const balances *st, strata_id id, const strata_value *old)
{
    int64_t i;
    if (!old)
        return !st->has_bal[id];
    return st->has_bal[id] && strata_value_get_int(old, &i) == STRATA_OK && i == st->bal[id];
}

static int apply_change(const strata_change *c, void *arg)
{
    replay *p = arg;
    balances *st = p->st;
    strata_token bal = p->rc->s->bal;
    if (c->id >= (c->kind >= STRATA_REL_CREATED ? MAX_RELS : MAX_NODES)) {
        snprintf(p->msg, sizeof p->msg, "change %d names id %" PRIu64, (int)c->kind, c->id);
        p->bad = true;
        return 1;
    }
    switch (c->kind) {
    case STRATA_NODE_CREATED:
        p->bad = st->alive[c->id];
        st->alive[c->id] = true;
        break;
    case STRATA_NODE_DELETED:
        p->bad = !st->alive[c->id];
        st->alive[c->id] = false;
        break;
    case STRATA_NODE_PROPERTY_SET:
    case STRATA_NODE_PROPERTY_REMOVED:
        if (c->token != bal)
            break;
        p->bad = !same_old(st, c->id, c->old_value);
        st->has_bal[c->id] = c->kind == STRATA_NODE_PROPERTY_SET;
        if (st->has_bal[c->id])
            p->bad |= strata_value_get_int(c->new_value, &st->bal[c->id]) != STRATA_OK;
        break;
    case STRATA_REL_CREATED:
        st->rels++;
        break;
    case STRATA_REL_DELETED:
        p->bad = st->rels == 0;
        st->rels--;
        break;
    default:
        break;
    }
    if (p->bad)
        snprintf(p->msg, sizeof p->msg, "change %d of %" PRIu64 " does not fit the first state",
                 (int)c->kind, c->id);
    return p->bad;
}

/* Applies diff(a, b) to a's state: the result must be b's. */
static bool check_diff(reader_ctx *rc, strata_view *a, int ka, strata_view *b, int kb)
{
    balances sa, sb;
    if (!read_state(rc, a, &sa) || !read_state(rc, b, &sb))
        return false;
    replay p = { .rc = rc, .st = &sa };
    strata_status st = strata_diff(a, b, apply_change, &p);
    if (p.bad || st != STRATA_OK) {
        report(rc->s, "%s: diff from graph %d to graph %d: %s%s", rc->who, ka, kb,
               p.bad ? p.msg : strata_errstr(st), p.bad ? "" : strata_view_errmsg(a));
        return false;
    }
    bool same = sa.rels == sb.rels;
    for (uint32_t i = 0; same && i < MAX_NODES; i++)
        same = sa.alive[i] == sb.alive[i] && sa.has_bal[i] == sb.has_bal[i] &&
               (!sa.has_bal[i] || sa.bal[i] == sb.bal[i]);
    if (!same)
        report(rc->s, "%s: diff from graph %d to graph %d, applied to the first, does not give "
               "the second", rc->who, ka, kb);
    rc->diffs++;
    return same;
}

/* ---- freeing graphs from readers ------------------------------------------------- */

static void free_slot(reader_ctx *rc, int k)
{
    slot *sl = &rc->s->slots[k];
    pthread_rwlock_wrlock(&sl->lock);
    strata_graph_free(&sl->g);
    pthread_rwlock_unlock(&sl->lock);
}

/* Frees a branch whose writer is done, after checking its last state
   against the writer's model. */
static void retire_branch(reader_ctx *rc, int k)
{
    slot *sl = &rc->s->slots[k];
    if (!atomic_load(&sl->done) || atomic_exchange(&sl->claimed, true))
        return;
    strata_view *v = snapshot_slot(rc, k);
    if (v) {
        balances st;
        bool same = read_state(rc, v, &st) && st.rels == sl->final.rels;
        for (uint32_t i = 0; same && i < MAX_NODES; i++)
            same = st.alive[i] == sl->final.alive[i] &&
                   (!st.alive[i] || st.bal[i] == sl->final.bal[i]);
        if (!same || read_round(v, k) != sl->final.round)
            report(rc->s, "%s: graph %d's last state is not what its writer committed", rc->who,
                   k);
        /* The view outlives the graph. */
        free_slot(rc, k);
        check_view(rc, v, k);
        strata_view_release(&v);
    } else {
        free_slot(rc, k);
    }
}

static void *reader(void *arg)
{
    reader_ctx *rc = arg;
    shared *s = rc->s;
    snprintf(rc->who, sizeof rc->who, "reader %d", rc->id);
    for (int k = 0; k < NSLOTS; k++)
        rc->last_round[k] = -1;
    pthread_barrier_wait(&s->start);
    for (int iter = 0; iter < READER_MAX_ITERS && !failed(s); iter++) {
        bool writing = atomic_load(&s->writers_done) < NWRITERS;
        if (!writing && iter >= READER_MIN_ITERS)
            break;
        if (rc->id == 0 && iter == FREE_SOURCE_AT)
            free_slot(rc, SOURCE);
        int ka = (int)below(&rc->rng, NSLOTS), kb = (int)below(&rc->rng, NSLOTS);
        strata_view *a = ka == SOURCE && below(&rc->rng, 2) ? NULL : snapshot_slot(rc, ka);
        strata_view *b = snapshot_slot(rc, kb);
        if (!a && ka == SOURCE)
            strata_view_clone(rc->source, &a);
        bool ok = true;
        if (a) {
            ok = check_view(rc, a, ka);
            rc->views++;
        }
        if (ok && b) {
            ok = check_view(rc, b, kb);
            rc->views++;
        }
        if (ok && a && b)
            ok = check_diff(rc, a, ka, b, kb);
        if (ok)
            ok = check_memstats(rc, (int)below(&rc->rng, NSLOTS));
        strata_view_release(&a);
        strata_view_release(&b);
        if (!ok)
            break;
        for (int k = 0; k < NWRITERS; k++)
            retire_branch(rc, k);
        sched_yield();
    }
    for (int k = 0; k < NWRITERS; k++)
        retire_branch(rc, k);
    return NULL;
}

/* ---- the test ------------------------------------------------------------------- */

static strata_graph *make_source(shared *s)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "Acct", &s->acct), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "PAID", &s->paid), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "RING", &s->ring), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "bal", &s->bal), STRATA_OK);
    strata_index idx;
    assert_int_equal(strata_index_create_named(g, STRATA_INDEX_RANGE, false, s->acct, &s->bal, 1,
                                               "by_balance", &idx),
                     STRATA_OK);
    for (strata_id i = 0; i < NACCOUNTS; i++) {
        strata_id n;
        assert_int_equal(strata_node_create(g, &s->acct, 1, &n), STRATA_OK);
        assert_int_equal(n, i);
        strata_value *v = strata_value_int(START_BALANCE);
        assert_int_equal(strata_node_set(g, n, s->bal, v), STRATA_OK);
        strata_value_free(&v);
    }
    for (strata_id i = 0; i < NACCOUNTS; i++)
        assert_int_equal(strata_rel_create(g, i, (i + 1) % NACCOUNTS, s->ring, &s->ring_rels[i]),
                         STRATA_OK);
    return g;
}

static void test_branches_written_from_threads(void **state)
{
    (void)state;
    shared *s = calloc(1, sizeof *s);
    assert_non_null(s);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->handed, NULL);
    atomic_init(&s->writers_done, 0);
    for (int k = 0; k < NSLOTS; k++) {
        pthread_rwlock_init(&s->slots[k].lock, NULL);
        atomic_init(&s->slots[k].done, false);
        atomic_init(&s->slots[k].claimed, false);
    }
    pthread_barrier_init(&s->start, NULL, NWRITERS + NREADERS);
    s->slots[SOURCE].g = make_source(s);
    assert_int_equal(strata_snapshot(s->slots[SOURCE].g, &s->source_view), STRATA_OK);

    writer_ctx *w = calloc(NWRITERS, sizeof *w);
    reader_ctx *rc = calloc(NREADERS, sizeof *rc);
    assert_non_null(w);
    assert_non_null(rc);
    pthread_t wt[NWRITERS], rt[NREADERS];
    for (int i = 0; i < NWRITERS; i++) {
        w[i].s = s;
        w[i].id = i;
        w[i].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1) | 1;
        if (i != GRANDCHILD)
            assert_int_equal(strata_view_clone(s->source_view, &w[i].from), STRATA_OK);
    }
    for (int i = 0; i < NREADERS; i++) {
        rc[i].s = s;
        rc[i].id = i;
        rc[i].rng = 0xD1B54A32D192ED03ull * (uint64_t)(i + 1) | 1;
        assert_int_equal(strata_view_clone(s->source_view, &rc[i].source), STRATA_OK);
    }
    for (int i = 0; i < NWRITERS; i++)
        assert_int_equal(pthread_create(&wt[i], NULL, writer, &w[i]), 0);
    for (int i = 0; i < NREADERS; i++)
        assert_int_equal(pthread_create(&rt[i], NULL, reader, &rc[i]), 0);
    for (int i = 0; i < NWRITERS; i++)
        pthread_join(wt[i], NULL);
    uint64_t views = 0, diffs = 0, statements = 0, rolled_back = 0, txns = 0;
    for (int i = 0; i < NREADERS; i++) {
        pthread_join(rt[i], NULL);
        views += rc[i].views;
        diffs += rc[i].diffs;
        strata_view_release(&rc[i].source);
    }
    for (int i = 0; i < NWRITERS; i++) {
        statements += w[i].statements;
        rolled_back += w[i].rolled_back;
        txns += w[i].txns;
    }
    if (s->failures)
        fail_msg("%d failures; the first: %s", s->failures, s->failure);
    print_message("branches from threads: %d writers, %" PRIu64 " statements (%" PRIu64
                  " rolled back, %" PRIu64 " transactions); %d readers, %" PRIu64
                  " views, %" PRIu64 " diffs replayed\n",
                  NWRITERS, statements, rolled_back, txns, NREADERS, views, diffs);
    /* Every graph was freed by a reader, and the source's view still
       shows the source. */
    for (int k = 0; k < NSLOTS; k++)
        assert_null(s->slots[k].g);
    for (int i = 0; i < NWRITERS; i++)
        assert_int_equal(w[i].statements, ROUNDS);
    assert_true(diffs > 0);
    assert_int_equal(strata_node_count(s->source_view), NACCOUNTS);
    assert_int_equal(strata_integrity_check(s->source_view), STRATA_OK);
    strata_view_release(&s->source_view);
    for (int k = 0; k < NSLOTS; k++)
        pthread_rwlock_destroy(&s->slots[k].lock);
    pthread_barrier_destroy(&s->start);
    pthread_cond_destroy(&s->handed);
    pthread_mutex_destroy(&s->lock);
    free(w);
    free(rc);
    free(s);
}

/* ---- copying a chunk while another graph drops it ---------------------------------- */

#define COPY_THREADS 3
#define COPY_ROUNDS 400

typedef struct copier {
    strata_view *v;          /* this thread's clone of the common view ... */
    strata_graph *source;    /* ... or the live source, snapshot each round */
    strata_token key;
    int id;
    int failures;
    char failure[256];
} copier;

/* Branches the common view, writes one property (copying the path of
   shared chunks, which the other threads' branches also copy and drop)
   and frees the branch, over and over. */
static void *copy_and_drop(void *arg)
{
    copier *c = arg;
    for (int i = 0; i < COPY_ROUNDS && !c->failures; i++) {
        strata_graph *b = NULL;
        strata_view *from = c->v;
        strata_value *v = strata_value_int(c->id * 1000 + i);
        strata_status st = v ? STRATA_OK : STRATA_ENOMEM;
        if (st == STRATA_OK && c->source)
            st = strata_snapshot(c->source, &from);
        if (st == STRATA_OK)
            st = strata_branch(from, &b);
        if (c->source)
            strata_view_release(&from);
        if (st == STRATA_OK)
            st = strata_node_set(b, (strata_id)(i * 7 % NACCOUNTS), c->key, v);
        strata_value_free(&v);
        strata_graph_free(&b);
        if (st != STRATA_OK) {
            c->failures++;
            snprintf(c->failure, sizeof c->failure, "thread %d, round %d: %s", c->id, i,
                     strata_errstr(st));
        }
    }
    return NULL;
}

/* Writes the source over and over while the others branch it. */
static void *write_source(void *arg)
{
    copier *c = arg;
    for (int i = 0; i < COPY_ROUNDS && !c->failures; i++) {
        strata_value *v = strata_value_int(START_BALANCE);   /* the sum stays */
        strata_status st = v ? strata_node_set(c->source, (strata_id)(i * 5 % NACCOUNTS),
                                               c->key, v)
                             : STRATA_ENOMEM;
        strata_value_free(&v);
        if (st != STRATA_OK) {
            c->failures++;
            snprintf(c->failure, sizeof c->failure, "the source's writer, round %d: %s", i,
                     strata_errstr(st));
        }
    }
    return NULL;
}

/* A write copies a shared chunk while another graph's write or free drops
   its reference to it: the copy must not read the chunk's refcount along
   with its contents (a data race ThreadSanitizer reports). */
static void test_copies_race_no_refcount(void **state)
{
    (void)state;
    shared *s = calloc(1, sizeof *s);
    assert_non_null(s);
    strata_graph *g = make_source(s);
    strata_view *common = NULL;
    assert_int_equal(strata_snapshot(g, &common), STRATA_OK);
    strata_graph_free(&g);
    copier c[COPY_THREADS];
    pthread_t t[COPY_THREADS];
    for (int i = 0; i < COPY_THREADS; i++) {
        c[i] = (copier){ .key = s->bal, .id = i };
        assert_int_equal(strata_view_clone(common, &c[i].v), STRATA_OK);
        assert_int_equal(pthread_create(&t[i], NULL, copy_and_drop, &c[i]), 0);
    }
    for (int i = 0; i < COPY_THREADS; i++) {
        pthread_join(t[i], NULL);
        strata_view_release(&c[i].v);
        if (c[i].failures)
            fail_msg("%s", c[i].failure);
    }
    assert_int_equal(strata_integrity_check(common), STRATA_OK);
    strata_view_release(&common);
    free(s);
}

/* The same with the source alive and written by a thread of its own:
   its writes copy what the branches share and fold back what they drop,
   while the others snapshot it, branch, write and free. */
static void test_branching_a_source_being_written(void **state)
{
    (void)state;
    shared *s = calloc(1, sizeof *s);
    assert_non_null(s);
    strata_graph *g = make_source(s);
    copier c[COPY_THREADS];
    pthread_t t[COPY_THREADS];
    for (int i = 0; i < COPY_THREADS; i++) {
        c[i] = (copier){ .source = g, .key = s->bal, .id = i };
        assert_int_equal(pthread_create(&t[i], NULL, i == 0 ? write_source : copy_and_drop,
                                        &c[i]),
                         0);
    }
    for (int i = 0; i < COPY_THREADS; i++) {
        pthread_join(t[i], NULL);
        if (c[i].failures)
            fail_msg("%s", c[i].failure);
    }
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    assert_int_equal(strata_node_count(v), NACCOUNTS);
    strata_view_release(&v);
    strata_graph_free(&g);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_race_no_refcount),
        cmocka_unit_test(test_branching_a_source_being_written),
        cmocka_unit_test(test_branches_written_from_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
