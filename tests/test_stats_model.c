/*
 * The relationship statistics (storage/rel_stats.h, core/stats_maint.h)
 * against a model.
 *
 * A plain model of the graph — live nodes with their labels, live
 * relationships with their ends and types — is driven in lockstep with
 * the engine by seeded random steps: nodes created with labels, labels
 * added and removed (on nodes with relationships, so they move in and out
 * of the counts), relationships created (self-loops too) and deleted,
 * nodes detach-deleted, statements of several writes committed or rolled
 * back, transactions begun, committed or rolled back, views taken and
 * released, and a branch written apart from its source.  After every step
 * the counts per (label, type, direction) of the graph's snapshot, of the
 * writer's view in a transaction, and of every held view equal the
 * model's state they were taken from, counted from scratch here, and
 * strata_integrity_check (which recomputes them in the engine) passes.
 *
 * test_stats_faults fails the 1st, 2nd, ... allocation of each write that
 * changes counts, with and without a view held, until it succeeds: each
 * failure returns STRATA_ENOMEM and leaves the counts as they were.
 * test_stats_round_trips saves and loads, reopens a logged graph (its log
 * replayed) and imports CSV files, and compares the counts with the model.
 *
 * STRATA_MODEL_SEEDS=n runs seeds 1..n (default 12); STRATA_MODEL_STEPS=n
 * sets the steps per seed (default 300).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"
#include "core/version.h"
#include "storage/adjacency.h"
#include "storage/mem.h"
#include "support/tmp_dir.h"

#define NLABELS 4
#define NTYPES 3
#define MAX_NODES 48
#define MAX_RELS 256
#define MAX_VIEWS 4

typedef struct model {
    bool node[MAX_NODES];
    unsigned labels[MAX_NODES];   /* bit i: label i */
    bool rel[MAX_RELS];
    uint32_t start[MAX_RELS], end[MAX_RELS], type[MAX_RELS];
} model;

typedef struct tokens {
    strata_token label[NLABELS], type[NTYPES];
} tokens;

static uint64_t rng;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static unsigned pick(unsigned n) { return (unsigned)(next() % n); }

static unsigned seed_now, step_now;

#define OK(g, call)                                                                      \
    do {                                                                                 \
        strata_status s_ = (call);                                                       \
        if (s_ != STRATA_OK)                                                             \
            fail_msg("seed %u step %u: %s: %s (%s)", seed_now, step_now, #call,          \
                     strata_errstr(s_), strata_errmsg(g));                               \
    } while (0)

static void intern_tokens(strata_graph *g, tokens *t)
{
    char name[16];
    for (int i = 0; i < NLABELS; i++) {
        snprintf(name, sizeof name, "L%d", i);
        OK(g, strata_token_intern(g, STRATA_LABEL, name, &t->label[i]));
    }
    for (int i = 0; i < NTYPES; i++) {
        snprintf(name, sizeof name, "T%d", i);
        OK(g, strata_token_intern(g, STRATA_RELTYPE, name, &t->type[i]));
    }
}

/* The model's count for (label i, type k, dir), from scratch. */
static uint64_t model_count(const model *m, int i, int k, int dir)
{
    uint64_t n = 0;
    for (int r = 0; r < MAX_RELS; r++) {
        if (!m->rel[r] || m->type[r] != (uint32_t)k)
            continue;
        uint32_t at = dir == ADJ_OUT ? m->start[r] : m->end[r];
        n += m->labels[at] >> i & 1;
    }
    return n;
}

static void check_view(strata_view *v, const model *m, const tokens *t, const char *what)
{
    for (int i = 0; i < NLABELS; i++)
        for (int k = 0; k < NTYPES; k++)
            for (int d = ADJ_OUT; d <= ADJ_IN; d++) {
                uint64_t got = relstats_get(&v->ver->stats, t->label[i], t->type[k], d);
                uint64_t want = model_count(m, i, k, d);
                if (got != want)
                    fail_msg("seed %u step %u, %s: label L%d type T%d %s: %llu, model %llu",
                             seed_now, step_now, what, i, k, d == ADJ_OUT ? "out" : "in",
                             (unsigned long long)got, (unsigned long long)want);
            }
    if (strata_integrity_check(v) != STRATA_OK)
        fail_msg("seed %u step %u, %s: %s", seed_now, step_now, what, strata_view_errmsg(v));
}

static void check_graph(strata_graph *g, const model *m, const tokens *t, const char *what)
{
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    check_view(v, m, t, what);
    strata_view_release(&v);
}

/* ---- the writes, each applied to the engine and the model -------------- */

static unsigned live_nodes(const model *m)
{
    unsigned n = 0;
    for (int i = 0; i < MAX_NODES; i++)
        n += m->node[i];
    return n;
}

static int random_node(const model *m)
{
    unsigned n = live_nodes(m);
    if (!n)
        return -1;
    unsigned k = pick(n);
    for (int i = 0; i < MAX_NODES; i++)
        if (m->node[i] && k-- == 0)
            return i;
    return -1;
}

static int random_rel(const model *m)
{
    unsigned n = 0;
    for (int r = 0; r < MAX_RELS; r++)
        n += m->rel[r];
    if (!n)
        return -1;
    unsigned k = pick(n);
    for (int r = 0; r < MAX_RELS; r++)
        if (m->rel[r] && k-- == 0)
            return r;
    return -1;
}

static void node_create(strata_graph *g, model *m, const tokens *t)
{
    if (live_nodes(m) >= MAX_NODES - 8)
        return;
    unsigned bits = pick(1u << NLABELS) & pick(1u << NLABELS);
    strata_token l[NLABELS];
    size_t n = 0;
    for (int i = 0; i < NLABELS; i++)
        if (bits >> i & 1)
            l[n++] = t->label[i];
    strata_id id;
    OK(g, strata_node_create(g, l, n, &id));
    assert_true(id < MAX_NODES && !m->node[id]);
    m->node[id] = true;
    m->labels[id] = bits;
}

static void rel_create(strata_graph *g, model *m, const tokens *t)
{
    int a = random_node(m), b = pick(6) ? random_node(m) : a;
    if (a < 0)
        return;
    uint32_t k = pick(NTYPES);
    strata_id id;
    OK(g, strata_rel_create(g, (strata_id)a, (strata_id)b, t->type[k], &id));
    assert_true(id < MAX_RELS && !m->rel[id]);
    m->rel[id] = true;
    m->start[id] = (uint32_t)a;
    m->end[id] = (uint32_t)b;
    m->type[id] = k;
}

static void rel_delete(strata_graph *g, model *m)
{
    int r = random_rel(m);
    if (r < 0)
        return;
    OK(g, strata_rel_delete(g, (strata_id)r));
    m->rel[r] = false;
}

static void label_flip(strata_graph *g, model *m, const tokens *t)
{
    int n = random_node(m);
    if (n < 0)
        return;
    int i = (int)pick(NLABELS);
    bool on = !(m->labels[n] >> i & 1);
    OK(g, on ? strata_node_add_label(g, (strata_id)n, t->label[i])
             : strata_node_remove_label(g, (strata_id)n, t->label[i]));
    m->labels[n] ^= 1u << i;
}

static void detach_delete(strata_graph *g, model *m)
{
    int n = random_node(m);
    if (n < 0)
        return;
    OK(g, strata_node_detach_delete(g, (strata_id)n));
    m->node[n] = false;
    m->labels[n] = 0;
    for (int r = 0; r < MAX_RELS; r++)
        if (m->rel[r] && (m->start[r] == (uint32_t)n || m->end[r] == (uint32_t)n))
            m->rel[r] = false;
}

/* One write; relationship creates and label changes weigh most, so nodes
   with many relationships gain and lose labels. */
static void random_write(strata_graph *g, model *m, const tokens *t)
{
    switch (pick(10)) {
    case 0: case 1: node_create(g, m, t); break;
    case 2: case 3: case 4: rel_create(g, m, t); break;
    case 5: rel_delete(g, m); break;
    case 6: case 7: case 8: label_flip(g, m, t); break;
    default: if (pick(3) == 0) detach_delete(g, m); break;
    }
}

/* ---- the randomised run -------------------------------------------------- */

typedef struct held {
    strata_view *v;
    model m;
} held;

static unsigned env_or(const char *name, unsigned dflt)
{
    const char *s = getenv(name);
    return s && atoi(s) > 0 ? (unsigned)atoi(s) : dflt;
}

static void branch_apart(strata_graph *g, const model *committed, const tokens *t)
{
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    strata_graph *b = NULL;
    OK(g, strata_branch(v, &b));
    model bm = *committed;
    for (int i = 0; i < 6; i++)
        random_write(b, &bm, t);
    check_graph(b, &bm, t, "the branch");
    check_view(v, committed, t, "the branch's source view");
    strata_view_release(&v);
    strata_graph_free(&b);
}

static void run_seed(unsigned seed, unsigned steps)
{
    seed_now = seed;
    rng = 0x9e3779b97f4a7c15ull * seed + 1;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    tokens t;
    intern_tokens(g, &t);
    static model committed, writer, stmt_base;
    memset(&committed, 0, sizeof committed);
    writer = committed;
    held views[MAX_VIEWS] = { { 0 } };
    bool in_txn = false, in_stmt = false;
    for (step_now = 0; step_now < steps; step_now++) {
        unsigned op = pick(20);
        if (op < 11) {
            random_write(g, &writer, &t);
        } else if (op == 11 && !in_stmt) {
            OK(g, strata_statement_begin(g));
            in_stmt = true;
            stmt_base = writer;
        } else if (op == 12 && in_stmt) {
            bool commit = pick(2);
            OK(g, strata_statement_end(g, commit));
            in_stmt = false;
            if (!commit)
                writer = stmt_base;
        } else if (op == 13 && !in_txn && !in_stmt) {
            OK(g, strata_begin(g));
            in_txn = true;
        } else if (op == 14 && in_txn && !in_stmt) {
            bool commit = pick(2);
            OK(g, commit ? strata_commit(g) : strata_rollback(g));
            in_txn = false;
            if (!commit)
                writer = committed;
        } else if (op == 15 || op == 16) {
            held *h = &views[pick(MAX_VIEWS)];
            if (h->v) {
                check_view(h->v, &h->m, &t, "a held view");
                strata_view_release(&h->v);
            } else {
                OK(g, strata_snapshot(g, &h->v));
                /* a reader sees the last committed state */
                h->m = in_txn || in_stmt ? committed : writer;
                if (in_stmt && !in_txn)
                    h->m = stmt_base;
            }
        } else if (op == 17 && !in_txn && !in_stmt) {
            branch_apart(g, &committed, &t);
        }
        if (!in_txn && !in_stmt)
            committed = writer;
        /* what readers see: the committed state, or before the statement */
        const model *seen = in_stmt && !in_txn ? &stmt_base : &committed;
        check_graph(g, seen, &t, "the snapshot");
        if (in_txn && !in_stmt) {
            strata_view *own = NULL;
            OK(g, strata_snapshot_own(g, &own));
            check_view(own, &writer, &t, "the transaction's own view");
            strata_view_release(&own);
        }
        for (int i = 0; i < MAX_VIEWS; i++)
            if (views[i].v)
                check_view(views[i].v, &views[i].m, &t, "a held view");
    }
    if (in_stmt)
        OK(g, strata_statement_end(g, true));
    if (in_txn)
        OK(g, strata_commit(g));
    for (int i = 0; i < MAX_VIEWS; i++)
        strata_view_release(&views[i].v);
    strata_graph_free(&g);
}

static void test_stats_model(void **state)
{
    (void)state;
    unsigned seeds = env_or("STRATA_MODEL_SEEDS", 12), steps = env_or("STRATA_MODEL_STEPS", 300);
    for (unsigned s = 1; s <= seeds; s++)
        run_seed(s, steps);
}

/* ---- allocation failure ------------------------------------------------- */

typedef enum fault_op { F_REL_CREATE, F_REL_DELETE, F_LABEL_ADD, F_LABEL_REMOVE, F_DETACH, F_N } fault_op;

static strata_status try_op(strata_graph *g, fault_op op, const tokens *t, strata_id *id)
{
    switch (op) {
    case F_REL_CREATE: return strata_rel_create(g, 0, 1, t->type[2], id);
    case F_REL_DELETE: return strata_rel_delete(g, 0);
    case F_LABEL_ADD: return strata_node_add_label(g, 1, t->label[3]);
    case F_LABEL_REMOVE: return strata_node_remove_label(g, 0, t->label[0]);
    default: return strata_node_detach_delete(g, 1);
    }
}

/* A hub (node 0, labels L0 L1) and a node 1 (L2) joined by relationships
   of every type both ways, and a self-loop on each. */
static strata_graph *fault_graph(model *m, tokens *t)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    intern_tokens(g, t);
    memset(m, 0, sizeof *m);
    strata_token l01[2] = { t->label[0], t->label[1] };
    strata_id a, b, r;
    OK(g, strata_node_create(g, l01, 2, &a));
    OK(g, strata_node_create(g, &t->label[2], 1, &b));
    m->node[a] = m->node[b] = true;
    m->labels[a] = 3;
    m->labels[b] = 4;
    for (uint32_t k = 0; k < NTYPES; k++)
        for (int e = 0; e < 4; e++) {
            strata_id s = e == 0 ? a : e == 1 ? b : e == 2 ? a : b;
            strata_id d = e == 0 ? b : e == 1 ? a : e == 2 ? a : b;
            OK(g, strata_rel_create(g, s, d, t->type[k], &r));
            m->rel[r] = true;
            m->start[r] = (uint32_t)s;
            m->end[r] = (uint32_t)d;
            m->type[r] = k;
        }
    return g;
}

static void apply_to_model(model *m, fault_op op, strata_id id)
{
    switch (op) {
    case F_REL_CREATE:
        m->rel[id] = true;
        m->start[id] = 0;
        m->end[id] = 1;
        m->type[id] = 2;
        break;
    case F_REL_DELETE: m->rel[0] = false; break;
    case F_LABEL_ADD: m->labels[1] |= 8; break;
    case F_LABEL_REMOVE: m->labels[0] &= ~1u; break;
    default:
        m->node[1] = false;
        m->labels[1] = 0;
        for (int r = 0; r < MAX_RELS; r++)
            if (m->rel[r] && (m->start[r] == 1 || m->end[r] == 1))
                m->rel[r] = false;
    }
}

static void test_stats_faults(void **state)
{
    (void)state;
    /* nothing held, a view, a statement committed, one rolled back */
    for (int hold = 0; hold < 4; hold++) {
        for (fault_op op = 0; op < F_N; op++) {
            model m;
            tokens t;
            strata_graph *g = fault_graph(&m, &t);
            strata_view *v = NULL;
            if (hold == 1)
                OK(g, strata_snapshot(g, &v));
            if (hold >= 2)
                OK(g, strata_statement_begin(g));
            model before = m;
            strata_status s = STRATA_ENOMEM;
            strata_id id = 0;
            long k;
            for (k = 1; s == STRATA_ENOMEM && k < 10000; k++) {
                mem_fail_at(k);
                s = try_op(g, op, &t, &id);
                mem_fail_clear();
                /* in a statement, readers see the state before it; its
                   commit below shows the failures left nothing behind */
                if (s == STRATA_ENOMEM)
                    check_graph(g, &before, &t, "after a failed write");
            }
            assert_int_equal(s, STRATA_OK);
            apply_to_model(&m, op, id);
            if (hold >= 2)
                OK(g, strata_statement_end(g, hold == 2));
            check_graph(g, hold == 3 ? &before : &m, &t, "after the write");
            if (v) {
                check_view(v, &before, &t, "the view held across the write");
                strata_view_release(&v);
            }
            strata_graph_free(&g);
        }
    }
}

/* ---- round trips ----------------------------------------------------------- */

static void build_random(strata_graph *g, model *m, const tokens *t, unsigned writes)
{
    memset(m, 0, sizeof *m);
    for (unsigned i = 0; i < writes; i++)
        random_write(g, m, t);
}

static void test_stats_save_load(void **state)
{
    (void)state;
    seed_now = 101;
    rng = 0x51ed27001234567ull;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    tokens t;
    intern_tokens(g, &t);
    model m;
    build_random(g, &m, &t, 400);
    const char *path = tmp_path("stats.strata");
    OK(g, strata_save(g, path));
    strata_graph *h = NULL;
    assert_int_equal(strata_load(path, &h), STRATA_OK);
    check_graph(h, &m, &t, "the loaded graph");
    /* and it keeps counting */
    random_write(h, &m, &t);
    rel_create(h, &m, &t);
    label_flip(h, &m, &t);
    check_graph(h, &m, &t, "the loaded graph written to");
    strata_graph_free(&h);
    strata_graph_free(&g);
}

static void test_stats_log_replay(void **state)
{
    (void)state;
    seed_now = 102;
    rng = 0x2545f4914f6cdd1dull;
    const char *dir = tmp_path("stats-logged");
    strata_graph *g = NULL;
    strata_open_options o = { .sync = STRATA_SYNC_OFF };
    assert_int_equal(strata_open(dir, &o, &g), STRATA_OK);
    tokens t;
    intern_tokens(g, &t);
    model m;
    build_random(g, &m, &t, 200);
    OK(g, strata_checkpoint(g));
    for (int i = 0; i < 100; i++)   /* after the snapshot: replayed from the log */
        random_write(g, &m, &t);
    OK(g, strata_statement_begin(g));
    model kept = m;
    for (int i = 0; i < 10; i++)
        random_write(g, &m, &t);
    OK(g, strata_statement_end(g, false));
    m = kept;
    assert_int_equal(strata_close(&g), STRATA_OK);
    strata_open_report report;
    o.report = &report;
    assert_int_equal(strata_open(dir, &o, &g), STRATA_OK);
    assert_true(report.records_replayed > 0);
    check_graph(g, &m, &t, "the reopened graph");
    assert_int_equal(strata_close(&g), STRATA_OK);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* An import of nodes with several labels (a :LABEL column and the group's
   own), relationships of two types and a self-loop: counted as the same
   graph written call by call. */
static void test_stats_import(void **state)
{
    (void)state;
    const char *nodes = tmp_path("nodes.csv"), *rels = tmp_path("rels.csv");
    write_file(nodes, "id:ID,:LABEL\n1,L0\n2,L1;L2\n3,\n4,L0;L3\n");
    write_file(rels, ":START_ID,:END_ID,:TYPE\n1,2,T0\n2,1,T0\n1,1,T1\n3,4,T1\n4,2,T2\n2,4,T2\n");
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    tokens t;
    intern_tokens(g, &t);
    const char *nf[] = { nodes }, *rf[] = { rels }, *extra[] = { "L3" };
    strata_import_source src[2] = { { false, nf, 1, extra, 1, NULL }, { true, rf, 1, NULL, 0, NULL } };
    strata_import_options o = { .sources = src, .nsources = 2 };
    OK(g, strata_import(g, &o, NULL));
    model m;
    memset(&m, 0, sizeof m);
    /* ids in file order from 0: nodes 1..4 are 0..3 */
    unsigned labels[4] = { 1 | 8, 2 | 4 | 8, 8, 1 | 8 };
    for (int i = 0; i < 4; i++) {
        m.node[i] = true;
        m.labels[i] = labels[i];
    }
    uint32_t rs[6][3] = { { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, 1 }, { 2, 3, 1 }, { 3, 1, 2 }, { 1, 3, 2 } };
    for (int r = 0; r < 6; r++) {
        m.rel[r] = true;
        m.start[r] = rs[r][0];
        m.end[r] = rs[r][1];
        m.type[r] = rs[r][2];
    }
    check_graph(g, &m, &t, "the imported graph");
    strata_graph_free(&g);
}

/* CALL db.stats() lists exactly the model's nonzero counts. */
static void test_stats_procedure(void **state)
{
    (void)state;
    seed_now = 103;
    rng = 0x0123456789abcdefull;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    tokens t;
    intern_tokens(g, &t);
    model m;
    build_random(g, &m, &t, 300);
    uint64_t want_rows = 0;
    for (int i = 0; i < NLABELS; i++)
        for (int k = 0; k < NTYPES; k++)
            for (int d = ADJ_OUT; d <= ADJ_IN; d++)
                want_rows += model_count(&m, i, k, d) > 0;
    assert_true(want_rows > 4);
    strata_result *r = NULL;
    OK(g, strata_query(g, "CALL db.stats()", NULL, &r));
    const strata_value *const *row;
    uint64_t rows = 0;
    char prev[32] = "";
    while (strata_result_next(r, &row)) {
        const char *label, *type, *dir;
        int64_t n;
        assert_int_equal(strata_value_get_string(row[0], &label, NULL), STRATA_OK);
        assert_int_equal(strata_value_get_string(row[1], &type, NULL), STRATA_OK);
        assert_int_equal(strata_value_get_string(row[2], &dir, NULL), STRATA_OK);
        assert_int_equal(strata_value_get_int(row[3], &n), STRATA_OK);
        int d = strcmp(dir, "OUTGOING") == 0 ? ADJ_OUT : ADJ_IN;
        char key[32];
        snprintf(key, sizeof key, "%s %s %d", label, type, d);
        assert_true(strcmp(prev, key) < 0);   /* sorted, each once */
        snprintf(prev, sizeof prev, "%s", key);
        assert_int_equal(n, model_count(&m, label[1] - '0', type[1] - '0', d));
        rows++;
    }
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    assert_int_equal(rows, want_rows);
    strata_graph_free(&g);
}

/* A graph without relationships has no counts: db.stats() gives no rows
   (and sorts nothing). */
static void test_stats_procedure_empty(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r = NULL;
    OK(g, strata_query(g, "CREATE (:A)", NULL, &r));
    strata_result_free(&r);
    OK(g, strata_query(g, "CALL db.stats()", NULL, &r));
    const strata_value *const *row;
    assert_false(strata_result_next(r, &row));
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    strata_graph_free(&g);
}

/* Label and type ids at RELSTATS_TOKEN_MAX and beyond are refused where
   a node or relationship would carry them, with the graph unchanged. */
static void test_stats_token_limit(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token label = 0, type = 0;
    char name[32];
    for (uint32_t i = 0; i <= RELSTATS_TOKEN_MAX; i++) {
        snprintf(name, sizeof name, "X%u", i);
        OK(g, strata_token_intern(g, STRATA_LABEL, name, &label));
        OK(g, strata_token_intern(g, STRATA_RELTYPE, name, &type));
    }
    assert_int_equal(label, RELSTATS_TOKEN_MAX);
    strata_id a, b, r;
    assert_int_equal(strata_node_create(g, &label, 1, &a), STRATA_EFULL);
    assert_non_null(strstr(strata_errmsg(g), "relationship statistics"));
    OK(g, strata_node_create(g, NULL, 0, &a));
    OK(g, strata_node_create(g, NULL, 0, &b));
    assert_int_equal(strata_node_add_label(g, a, label), STRATA_EFULL);
    assert_int_equal(strata_rel_create(g, a, b, type, &r), STRATA_EFULL);
    assert_non_null(strstr(strata_errmsg(g), "relationship type token"));
    /* the last ids below the limit work */
    strata_token last_label = label - 1, last_type = type - 1;
    OK(g, strata_node_add_label(g, a, last_label));
    OK(g, strata_rel_create(g, a, b, last_type, &r));
    strata_view *v = NULL;
    OK(g, strata_snapshot(g, &v));
    assert_int_equal(v->ver->st.node_live, 2);
    assert_int_equal(v->ver->st.rel_live, 1);
    assert_int_equal(relstats_get(&v->ver->stats, last_label, last_type, ADJ_OUT), 1);
    assert_int_equal(relstats_get(&v->ver->stats, last_label, last_type, ADJ_IN), 0);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    strata_view_release(&v);
    strata_graph_free(&g);
}

static int make_dir(void **state)
{
    (void)state;
    return tmp_dir_make("strata-stats");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_model),
        cmocka_unit_test(test_stats_faults),
        cmocka_unit_test(test_stats_save_load),
        cmocka_unit_test(test_stats_log_replay),
        cmocka_unit_test(test_stats_import),
        cmocka_unit_test(test_stats_procedure),
        cmocka_unit_test(test_stats_procedure_empty),
        cmocka_unit_test(test_stats_token_limit),
    };
    return cmocka_run_group_tests(tests, make_dir, tmp_dir_remove);
}
