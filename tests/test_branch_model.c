/*
 * Model-based randomised test of branches (strata_branch) and diff
 * (strata_diff).
 *
 * Why a model: a branch is a second writer over shared chunks, and what
 * can go wrong — a write on one side showing on the other, fold-back
 * freeing a chunk another graph still reads, a diff skipping a subtree
 * that differs — depends on which graphs and views hold which chunks when
 * a write comes.  A seeded xorshift generator explores those
 * interleavings on a tree of branches; a plain reference model per graph,
 * driven in lockstep, says what every graph and view must show.
 *
 * The run holds two lineages (a root graph each, then branches of
 * branches).  Each step is one of: a write to any graph (nodes with
 * labels, relationships, properties of both: integers, short and long
 * strings; some moving a node towards a unique-index clash), a property
 * set through Cypher, a statement of several writes ended by commit or
 * rollback, a transaction begun, committed or rolled back (open across
 * later steps), an index created or dropped (refused inside a
 * transaction), a key interned in any graph of a lineage (the catalog is
 * the lineage's), a view of any graph saved and loaded back (a new
 * lineage: equal to the model, refused by a diff with the original), a
 * branch of a graph's fresh snapshot or of any held view (its graph freed
 * or not, own views of open transactions included), a graph freed (any of
 * them, sources before their branches), a view taken or released, and a
 * diff stopped early by its callback.  Every graph keeps two models: the
 * committed state and the writer's (an open transaction's); every held
 * view a copy of the model it was taken from.  Models are keyed by the
 * ids the engine returns: a create must return an id free in the model.
 *
 * After every step:
 *   (a) each graph's fresh snapshot equals its committed model, and in an
 *       open transaction its own view equals the writer's model;
 *   (b) every held view equals its copy of the model;
 *   (c) strata_integrity_check() passes on each of them;
 *   (d) for random pairs among those views, strata_diff gives exactly the
 *       models' difference (compared as sorted canonical change lists) in
 *       the documented order — relationship deletions, then node changes
 *       in id order, each node's together, then relationship creations
 *       and changes — or, for views of the two lineages, STRATA_EINVAL;
 *   (e) strata_memory_stats of each graph gives its committed counts and
 *       the lineage's bytes, the same from every graph of the lineage;
 *   (f) a Cypher lookup by label and property on a random view returns
 *       the model's nodes, whichever indices that graph has.
 * "Equals" is support/model_compare.h's (counts, existence, labels,
 * properties, relationship endpoints and types, neighbours per direction
 * and type with degrees, label and type scans, and per index its
 * definition, entry count, depth and a lookup of every value present plus
 * an absent one) with the lineage's tokens, and the lineage's
 * late-interned key.
 *
 * test_branch_model_faults runs the same steps with allocation failure:
 * every engine call of every step — writes, statement and transaction
 * ends, index DDL, interning, snapshots, strata_branch, strata_diff,
 * strata_save_view and strata_load (not the Cypher steps) — runs with its
 * 1st, 2nd, ... allocation failing until it succeeds, and
 * after each failure the call must return STRATA_ENOMEM with a message,
 * leave its out parameter alone, and leave every graph and view equal to
 * its model.
 *
 * Environment: STRATA_MODEL_SEEDS=n runs seeds 1..n (default 16, and 4
 * with faults); STRATA_MODEL_SEED=s runs seed s alone — every failure
 * message names its seed, step and operation; STRATA_MODEL_STEPS=n sets
 * the steps per seed (default 400, and 150 with faults); STRATA_MODEL_TRACE
 * prints every operation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strata.h"
#include "storage/mem.h"

#define MAX_IDS 40        /* ids probed by every comparison */
#define NODE_LIMIT 20     /* above 16: node trees grow a level (4-way chunks in tests) */
#define REL_LIMIT 28
#define NLABELS 3
#define NTYPES 2
#define NKEYS 4           /* the last key is interned during the run */
#define LATE_KEY (NKEYS - 1)
#define MAX_INDEXES 4
#define MAX_GRAPHS 8      /* graph slots */
#define LIVE_GRAPHS 6     /* live graphs at most */
#define MAX_VIEWS 8
#define NLINEAGES 2
#define MAX_POOL (MAX_VIEWS + 2 * MAX_GRAPHS)
#define DIFF_PAIRS 4      /* diffs checked after every step */
#define MAX_CHANGES 1024
#define MSG_MAX 4096
#define DEFAULT_SEEDS 16
#define DEFAULT_STEPS 400
#define FAULT_SEEDS 4
#define FAULT_STEPS 150
#define INT_RANGE 5       /* small: equal values and unique clashes are common */

/* The reference model (mnode, mrel, mindex, model: node indices on one
   key) and its comparison with a view are
   support/model.h's, keyed here by the ids the engine returns; this run
   is the test's own. */
#define MODEL_OWN_RUN
#include "support/model.h"

/* The tokens of one lineage.  The second lineage interns a padding name
   of each kind first, so its tokens differ from the first's: a token used
   in the wrong lineage shows. */
typedef model_tokens lineage;   /* nkeys: keys interned, NKEYS - 1 then NKEYS */

typedef struct mgraph {
    strata_graph *g;         /* NULL: the slot is free */
    uint32_t lin;
    uint32_t serial;         /* gN in names */
    uint32_t parent;         /* the serial of the graph it was branched from; 0: a root */
    char tag[16];            /* "gN" */
    char name[112];          /* the tag and where the graph came from */
    model *committed;        /* what strata_snapshot shows */
    model *work;             /* what the writer sees */
    bool in_txn, in_stmt;
} mgraph;

typedef struct held_view {
    strata_view *v;
    model *m;                /* the model when the view was taken */
    uint32_t lin;
    uint32_t graph;          /* the serial of its graph */
    char what[112];
} held_view;

/* One change, as strata_diff reports it or as the models say it must. */
typedef struct change_rec {
    strata_change_kind kind;
    strata_id id, start, end;
    strata_token token;
    bool named;
    char name[16];
    bool has_old, has_new;
    mval old_value, new_value;
} change_rec;

typedef struct change_list {
    change_rec c[MAX_CHANGES];
    size_t n;
    size_t stop_after;       /* 0: never stop */
    bool overflow;
    char bad[128];           /* a value the model cannot hold */
} change_list;

typedef enum call_kind {
    C_NODE_CREATE, C_NODE_DELETE, C_NODE_DETACH_DELETE, C_LABEL_ADD, C_LABEL_REMOVE,
    C_NODE_SET, C_NODE_REMOVE, C_REL_CREATE, C_REL_DELETE, C_REL_SET, C_REL_REMOVE,
    C_INDEX_CREATE, C_INDEX_DROP, C_BEGIN, C_COMMIT, C_ROLLBACK, C_STMT_BEGIN, C_STMT_END,
    C_SNAPSHOT, C_SNAPSHOT_OWN, C_BRANCH, C_INTERN, C_DIFF, C_SAVE, C_LOAD, C_NKINDS
} call_kind;

static const char *const call_names[C_NKINDS] = {
    "node_create", "node_delete", "node_detach_delete", "add_label", "remove_label",
    "node_set", "node_remove", "rel_create", "rel_delete", "rel_set", "rel_remove",
    "index_create", "index_drop", "begin", "commit", "rollback", "statement_begin",
    "statement_end", "snapshot", "snapshot_own", "branch", "token_intern", "diff", "save_view",
    "load",
};

/* One engine call, so that the fault mode can repeat it. */
typedef struct call {
    call_kind kind;
    strata_graph *g;
    strata_view *from, *to;      /* C_BRANCH (from), C_DIFF */
    strata_id a, b;
    strata_token token;
    strata_token labels[NLABELS];
    size_t nlabels;
    strata_value *val;           /* C_*_SET */
    bool flag;                   /* C_STMT_END: commit */
    strata_index_kind index_kind;
    strata_index idx;
    const char *name;            /* C_INTERN; C_SAVE and C_LOAD: the path */
    change_list *changes;        /* C_DIFF */
    char err[256];               /* C_LOAD: the failure's message */
    /* out parameters */
    strata_id id_out;
    strata_index idx_out;
    strata_token token_out;
    strata_view *view_out;
    strata_graph *graph_out;
} call;

typedef struct run {
    uint64_t seed;
    uint32_t step;
    uint64_t rng;            /* drives the operations */
    uint64_t check_rng;      /* drives the checks, apart so a check change keeps the ops */
    bool faults;
    bool trace;              /* STRATA_MODEL_TRACE: every operation to stderr */
    char op[512];            /* the operation of this step, for messages */
    char where[512];         /* what is being compared, for messages */
    lineage lin[NLINEAGES];
    mgraph gr[MAX_GRAPHS];
    uint32_t serial;         /* graphs made so far, for names */
    held_view held[MAX_VIEWS];
    uint32_t nheld;
    model *next;             /* scratch: the state a write should produce */
    model *stmt_start;       /* the writer's model when the open statement began */
    change_list *got, *want, *partial;
    /* what the run exercised */
    uint64_t views_compared, diffs_compared, diffs_refused, changes_compared;
    uint64_t branches, frees, source_first_frees, saves;
    uint64_t outcomes[STRATA_EINTERRUPTED + 1];
    uint64_t swept[C_NKINDS], injected[C_NKINDS];
} run;

typedef struct totals {
    uint64_t views_compared, diffs_compared, diffs_refused, changes_compared;
    uint64_t branches, frees, source_first_frees, saves;
    uint64_t outcomes[STRATA_EINTERRUPTED + 1];
    uint64_t swept[C_NKINDS], injected[C_NKINDS];
} totals;

/* Stops the test with everything needed to reproduce the failure. */
static void mismatch(const run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mismatch(const run *r, const char *fmt, ...)
{
    char detail[MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    fail_msg("seed %" PRIu64 ", step %u%s, after %s\n  in %s: %s\n"
             "  reproduce with STRATA_MODEL_SEED=%" PRIu64 "%s",
             r->seed, r->step, r->faults ? " (allocation failures)" : "", r->op, r->where,
             detail, r->seed, r->faults ? " and the faults test" : "");
}

static void set_op(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_op(run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->op, sizeof r->op, fmt, ap);
    va_end(ap);
    if (r->trace)
        fprintf(stderr, "seed %" PRIu64 " step %u: %s\n", r->seed, r->step, r->op);
}

/* ---- model state ---------------------------------------------------------- */

static void model_rel_free(model *m, uint32_t id)
{
    memset(&m->rel[id], 0, sizeof m->rel[id]);
    m->rels.live--;
}

static void model_node_free(model *m, uint32_t id)
{
    memset(&m->node[id], 0, sizeof m->node[id]);
    m->nodes.live--;
}

static void model_detach_delete(model *m, uint32_t n)
{
    for (uint32_t r = 0; r < MAX_IDS; r++)
        if (m->rel[r].alive && (m->rel[r].start == n || m->rel[r].end == n))
            model_rel_free(m, r);
    model_node_free(m, n);
}

/* Whether node id is in index d, with its key value in *key. */
static bool index_key(const model *m, const mindex *d, uint32_t id, mval *key)
{
    if (!m->node[id].alive || !(m->node[id].labels >> d->token & 1) ||
        m->node[id].props[d->keys[0]].kind == MV_NONE)
        return false;
    *key = m->node[id].props[d->keys[0]];
    return true;
}

/* Whether two nodes share the key of a unique index of m. */
static bool unique_clash(const model *m, const mindex *d)
{
    mval keys[MAX_IDS];
    uint32_t n = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        if (!index_key(m, d, id, &keys[n]))
            continue;
        for (uint32_t j = 0; j < n; j++)
            if (mval_eq(&keys[j], &keys[n]))
                return true;
        n++;
    }
    return false;
}

static mval random_value(run *r)
{
    if (chance(&r->rng, 60))
        return mv_int(below(&r->rng, INT_RANGE));
    return mv_str(string_pool[below(&r->rng, sizeof string_pool / sizeof *string_pool)]);
}

/* A random live id of one kind, or — dead_percent of the time, or when none
   lives — an id that names nothing. */
static uint32_t pick_id(run *r, const model *m, bool rels, uint32_t dead_percent)
{
    uint32_t live[MAX_IDS], n = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (rels ? rel_alive(m, id) : node_alive(m, id))
            live[n++] = id;
    if (n == 0 || chance(&r->rng, dead_percent)) {
        uint32_t id;
        do
            id = below(&r->rng, MAX_IDS);
        while (rels ? rel_alive(m, id) : node_alive(m, id));
        return id;
    }
    return live[below(&r->rng, n)];
}

/* ---- the graphs and views of a run ------------------------------------------ */

static uint32_t live_graphs(const run *r, int lin)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < MAX_GRAPHS; i++)
        n += r->gr[i].g && (lin < 0 || r->gr[i].lin == (uint32_t)lin);
    return n;
}

static mgraph *pick_graph(run *r)
{
    uint32_t live[MAX_GRAPHS], n = 0;
    for (uint32_t i = 0; i < MAX_GRAPHS; i++)
        if (r->gr[i].g)
            live[n++] = i;
    assert_true(n > 0);
    return &r->gr[live[below(&r->rng, n)]];
}

static mgraph *free_slot(run *r)
{
    for (uint32_t i = 0; i < MAX_GRAPHS; i++)
        if (!r->gr[i].g)
            return &r->gr[i];
    return NULL;
}

/* ---- diffs: collected and expected --------------------------------------------- */

static bool value_to_mval(const strata_value *v, mval *out, char *bad, size_t badlen)
{
    int64_t i;
    const char *s;
    size_t len;
    switch (strata_value_type(v)) {
    case STRATA_INT:
        strata_value_get_int(v, &i);
        *out = mv_int(i);
        return true;
    case STRATA_STRING:
        strata_value_get_string(v, &s, &len);
        if (len >= STR_MAX) {
            snprintf(bad, badlen, "a string of %zu bytes", len);
            return false;
        }
        *out = (mval){ .kind = MV_STR };
        memcpy(out->s, s, len);
        return true;
    default:
        snprintf(bad, badlen, "a value of type %d", (int)strata_value_type(v));
        return false;
    }
}

static void list_reset(change_list *l, size_t stop_after)
{
    l->n = 0;
    l->stop_after = stop_after;
    l->overflow = false;
    l->bad[0] = '\0';
}

static int collect(const strata_change *c, void *arg)
{
    change_list *l = arg;
    if (l->n == MAX_CHANGES) {
        l->overflow = true;
        return 1;
    }
    change_rec *x = &l->c[l->n++];
    memset(x, 0, sizeof *x);
    x->kind = c->kind;
    x->id = c->id;
    x->token = c->token;
    x->start = c->start;
    x->end = c->end;
    x->named = c->name != NULL;
    if (c->name)
        snprintf(x->name, sizeof x->name, "%s", c->name);
    if (c->old_value && !l->bad[0])
        x->has_old = value_to_mval(c->old_value, &x->old_value, l->bad, sizeof l->bad);
    if (c->new_value && !l->bad[0])
        x->has_new = value_to_mval(c->new_value, &x->new_value, l->bad, sizeof l->bad);
    return l->stop_after && l->n >= l->stop_after;
}

static const char *const label_names[NLABELS] = { "L0", "L1", "L2" };
static const char *const type_names[NTYPES] = { "T0", "T1" };
static const char *const key_names[NKEYS] = { "k0", "k1", "k2", "late" };

static change_rec *push(change_list *l, strata_change_kind kind, uint64_t id)
{
    assert_true(l->n < MAX_CHANGES);
    change_rec *x = &l->c[l->n++];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->id = id;
    return x;
}

static void named(change_rec *x, strata_token token, const char *name)
{
    x->token = token;
    x->named = true;
    snprintf(x->name, sizeof x->name, "%s", name);
}

/* The property changes of one entity between two property arrays. */
static void expect_props(change_list *l, const lineage *L, uint64_t id, const mval *from,
                         const mval *to, strata_change_kind set, strata_change_kind removed)
{
    static const mval none = { .kind = MV_NONE };
    for (uint32_t k = 0; k < NKEYS; k++) {
        const mval *a = from ? &from[k] : &none, *b = to ? &to[k] : &none;
        if (mval_eq(a, b))
            continue;
        change_rec *x = push(l, b->kind == MV_NONE ? removed : set, id);
        named(x, L->key[k], key_names[k]);
        x->has_old = a->kind != MV_NONE;
        x->old_value = *a;
        x->has_new = b->kind != MV_NONE;
        x->new_value = *b;
    }
}

static bool same_rel(const mrel *x, const mrel *y)
{
    return x->alive && y->alive && x->start == y->start && x->end == y->end &&
           x->type == y->type;
}

static void expect_rel_event(change_list *l, const lineage *L, strata_change_kind kind,
                             uint32_t id, const mrel *e)
{
    change_rec *x = push(l, kind, id);
    named(x, L->type[e->type], type_names[e->type]);
    x->start = e->start;
    x->end = e->end;
}

/* What turns a into b, by the header's rules: identity by id; a
   relationship slot reused with other endpoints or type is deleted and
   created. */
static void expected_changes(const lineage *L, const model *a, const model *b, change_list *l)
{
    l->n = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        const mrel *x = &a->rel[id], *y = &b->rel[id];
        if (x->alive && !same_rel(x, y)) {
            expect_rel_event(l, L, STRATA_REL_DELETED, id, x);
            expect_props(l, L, id, x->props, NULL, STRATA_REL_PROPERTY_SET,
                         STRATA_REL_PROPERTY_REMOVED);
        }
    }
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        const mnode *x = &a->node[id], *y = &b->node[id];
        if (!x->alive && !y->alive)
            continue;
        if (!x->alive)
            push(l, STRATA_NODE_CREATED, id);
        else if (!y->alive)
            push(l, STRATA_NODE_DELETED, id);
        for (uint32_t lb = 0; lb < NLABELS; lb++) {
            bool in_a = x->alive && (x->labels >> lb & 1), in_b = y->alive && (y->labels >> lb & 1);
            if (in_a != in_b)
                named(push(l, in_b ? STRATA_LABEL_ADDED : STRATA_LABEL_REMOVED, id), L->label[lb],
                      label_names[lb]);
        }
        expect_props(l, L, id, x->alive ? x->props : NULL, y->alive ? y->props : NULL,
                     STRATA_NODE_PROPERTY_SET, STRATA_NODE_PROPERTY_REMOVED);
    }
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        const mrel *x = &a->rel[id], *y = &b->rel[id];
        if (!y->alive)
            continue;
        bool same = same_rel(x, y);
        if (!same)
            expect_rel_event(l, L, STRATA_REL_CREATED, id, y);
        expect_props(l, L, id, same ? x->props : NULL, y->props, STRATA_REL_PROPERTY_SET,
                     STRATA_REL_PROPERTY_REMOVED);
    }
}

static const char *const change_kind_names[] = {
    "node+", "node-", "label+", "label-", "prop", "prop-", "rel+", "rel-", "rprop", "rprop-",
};

static void change_text(const change_rec *c, char *buf, size_t n)
{
    char o[48], v[48];
    snprintf(buf, n, "%s id=%" PRIu64 " token=%u name=%s %" PRIu64 "->%" PRIu64 " old=%s new=%s",
             (unsigned)c->kind < sizeof change_kind_names / sizeof *change_kind_names
                 ? change_kind_names[c->kind]
                 : "?",
             c->id, c->token, c->named ? c->name : "(none)", c->start, c->end,
             c->has_old ? mval_text(&c->old_value, o, sizeof o) : "(none)",
             c->has_new ? mval_text(&c->new_value, v, sizeof v) : "(none)");
}

typedef char change_line[160];

static int line_cmp(const void *a, const void *b) { return strcmp(a, b); }

static change_line *sorted_lines(const change_list *l)
{
    change_line *lines = calloc(l->n + 1, sizeof *lines);
    assert_non_null(lines);
    for (size_t i = 0; i < l->n; i++)
        change_text(&l->c[i], lines[i], sizeof lines[i]);
    qsort(lines, l->n, sizeof *lines, line_cmp);
    return lines;
}

/* The documented order: relationship deletions (each with its properties,
   as removed) in id order, then node changes in id order (a node's
   together, created or deleted first), then relationship creations and
   changes in id order (a created one's event before its properties).
   Returns NULL when the order holds, else what broke it. */
static const char *order_broken(const change_list *l, size_t *at)
{
    int phase = 0;   /* 0 deletions, 1 nodes, 2 creations and changes */
    int64_t last = -1;   /* the id of the last group in this phase */
    for (size_t i = 0; i < l->n; i++) {
        const change_rec *c = &l->c[i];
        int64_t id = (int64_t)c->id;
        *at = i;
        switch (c->kind) {
        case STRATA_REL_DELETED:
            if (phase != 0)
                return "a relationship deletion after node changes or creations";
            if (id <= last)
                return "relationship deletions out of id order";
            last = id;
            break;
        case STRATA_REL_PROPERTY_REMOVED:
            if (phase == 0 && id == last)
                break;   /* a deleted relationship's properties */
            /* fall through */
        case STRATA_REL_PROPERTY_SET:
            if (phase < 2) {
                phase = 2;
                last = -1;
            }
            if (id < last)
                return "relationship changes out of id order";
            last = id;
            break;
        case STRATA_REL_CREATED:
            if (phase < 2) {
                phase = 2;
                last = -1;
            }
            if (id <= last)
                return "a relationship created after its own changes or out of id order";
            last = id;
            break;
        case STRATA_NODE_CREATED:
        case STRATA_NODE_DELETED:
            if (phase > 1)
                return "a node change after relationship creations";
            if (phase < 1) {
                phase = 1;
                last = -1;
            }
            if (id <= last)
                return "a node created or deleted after other changes of it, or out of id order";
            last = id;
            break;
        default:   /* labels and node properties */
            if (phase > 1)
                return "a node change after relationship creations";
            if (phase < 1) {
                phase = 1;
                last = -1;
            }
            if (id < last)
                return "node changes out of id order";
            last = id;
        }
    }
    return NULL;
}

/* ---- comparing a view with a model ------------------------------------------ */

#include "support/model_compare.h"

/* The late key is the lineage's: known to every view of it, taken before
   it was interned or not, with the same token. */
static void compare_catalog(run *r, strata_view *v, const lineage *L)
{
    strata_token t = UINT32_MAX;
    strata_status s = strata_token_lookup(v, STRATA_KEY, key_names[LATE_KEY], &t);
    if (L->nkeys == NKEYS ? (s != STRATA_OK || t != L->key[LATE_KEY]) : s != STRATA_ENOTFOUND)
        mismatch(r, "the late key looks up as %s, token %u (interned in the lineage: %s)",
                 strata_errstr(s), t, L->nkeys == NKEYS ? "yes" : "no");
}

/* support/model_compare.h's checks (neighbour order and range probes
   aside: the other model tests compare those, and the checks' generator
   picks the diffs), and the lineage's catalog. */
static void compare_view(run *r, strata_view *v, const lineage *L, const model *m)
{
    model_compare_view(r, v, L, m, 0);
    compare_catalog(r, v, L);
}

/* ---- checking diffs -------------------------------------------------------------- */

typedef struct pooled {
    strata_view *v;
    const model *m;
    uint32_t lin;
    const char *what;
} pooled;

/* strata_diff(a, b) against the models: for one lineage the same changes,
   sorted, in the documented order; for two, STRATA_EINVAL. */
static void check_diff(run *r, const pooled *a, const pooled *b)
{
    snprintf(r->where, sizeof r->where, "the diff from %s to %s", a->what, b->what);
    change_list *got = r->got;
    list_reset(got, 0);
    strata_status s = strata_diff(a->v, b->v, collect, got);
    if (a->lin != b->lin) {
        if (s != STRATA_EINVAL || got->n != 0 || !strata_view_errmsg(a->v)[0])
            mismatch(r, "views of unrelated graphs: %s with %zu changes, message \"%s\"",
                     strata_errstr(s), got->n, strata_view_errmsg(a->v));
        r->diffs_refused++;
        return;
    }
    if (s != STRATA_OK)
        mismatch(r, "%s (%s)", strata_errstr(s), strata_view_errmsg(a->v));
    if (got->overflow || got->bad[0])
        mismatch(r, "a change the model cannot hold: %s",
                 got->overflow ? "more than MAX_CHANGES changes" : got->bad);
    expected_changes(&r->lin[a->lin], a->m, b->m, r->want);
    change_line *g = sorted_lines(got), *w = sorted_lines(r->want);
    for (size_t i = 0; i < got->n || i < r->want->n; i++) {
        const char *x = i < got->n ? g[i] : "(nothing)";
        const char *y = i < r->want->n ? w[i] : "(nothing)";
        if (strcmp(x, y) != 0) {
            char gx[160], wy[160];
            snprintf(gx, sizeof gx, "%s", x);
            snprintf(wy, sizeof wy, "%s", y);
            free(g);
            free(w);
            mismatch(r, "%zu changes, the models' difference has %zu; sorted, change %zu is "
                     "'%s', the models say '%s'", got->n, r->want->n, i, gx, wy);
        }
    }
    free(g);
    free(w);
    size_t at = 0;
    const char *broken = order_broken(got, &at);
    if (broken) {
        char line[160];
        change_text(&got->c[at], line, sizeof line);
        mismatch(r, "change %zu ('%s'): %s", at, line, broken);
    }
    r->diffs_compared++;
    r->changes_compared += got->n;
}

/* ---- engine calls, repeated under allocation failure in the fault mode ------------- */

static strata_status perform(call *c)
{
    switch (c->kind) {
    case C_NODE_CREATE:
        return strata_node_create(c->g, c->labels, c->nlabels, &c->id_out);
    case C_NODE_DELETE:
        return strata_node_delete(c->g, c->a);
    case C_NODE_DETACH_DELETE:
        return strata_node_detach_delete(c->g, c->a);
    case C_LABEL_ADD:
        return strata_node_add_label(c->g, c->a, c->token);
    case C_LABEL_REMOVE:
        return strata_node_remove_label(c->g, c->a, c->token);
    case C_NODE_SET:
        return strata_node_set(c->g, c->a, c->token, c->val);
    case C_NODE_REMOVE:
        return strata_node_remove(c->g, c->a, c->token);
    case C_REL_CREATE:
        return strata_rel_create(c->g, c->a, c->b, c->token, &c->id_out);
    case C_REL_DELETE:
        return strata_rel_delete(c->g, c->a);
    case C_REL_SET:
        return strata_rel_set(c->g, c->a, c->token, c->val);
    case C_REL_REMOVE:
        return strata_rel_remove(c->g, c->a, c->token);
    case C_INDEX_CREATE:
        return strata_index_create(c->g, c->index_kind, false, c->labels[0], &c->token, 1,
                                   &c->idx_out);
    case C_INDEX_DROP:
        return strata_index_drop(c->g, c->idx);
    case C_BEGIN:
        return strata_begin(c->g);
    case C_COMMIT:
        return strata_commit(c->g);
    case C_ROLLBACK:
        return strata_rollback(c->g);
    case C_STMT_BEGIN:
        return strata_statement_begin(c->g);
    case C_STMT_END:
        return strata_statement_end(c->g, c->flag);
    case C_SNAPSHOT:
        return strata_snapshot(c->g, &c->view_out);
    case C_SNAPSHOT_OWN:
        return strata_snapshot_own(c->g, &c->view_out);
    case C_BRANCH:
        return strata_branch(c->from, &c->graph_out);
    case C_INTERN:
        return strata_token_intern(c->g, STRATA_KEY, c->name, &c->token_out);
    case C_DIFF:
        list_reset(c->changes, c->b);
        return strata_diff(c->from, c->to, collect, c->changes);
    case C_SAVE:
        return strata_save_view(c->from, c->name);
    case C_LOAD:
        return strata_load_ex(c->name, &c->graph_out, c->err, sizeof c->err);
    case C_NKINDS:
        break;
    }
    return STRATA_EINVAL;
}

#define ID_UNTOUCHED (UINT64_MAX - 1)
#define U32_UNTOUCHED (UINT32_MAX - 1)

static void reset_outs(call *c)
{
    c->id_out = ID_UNTOUCHED;
    c->idx_out = U32_UNTOUCHED;
    c->token_out = U32_UNTOUCHED;
    c->view_out = NULL;
    c->graph_out = NULL;
}

static void check_all(run *r, bool diffs);

/* Runs the call; in the fault mode with its 1st, 2nd, ... allocation
   failing until it returns anything but STRATA_ENOMEM, checking after
   each failure that it said so cleanly and that every graph and view
   still equals its model. */
static strata_status attempt(run *r, call *c)
{
    reset_outs(c);
    if (!r->faults)
        return perform(c);
    r->swept[c->kind]++;
    char where[sizeof r->where];
    memcpy(where, r->where, sizeof where);
    for (long k = 1;; k++) {
        reset_outs(c);
        mem_fail_at(k);
        strata_status s = perform(c);
        mem_fail_clear();
        if (s != STRATA_ENOMEM) {
            memcpy(r->where, where, sizeof where);
            return s;
        }
        r->injected[c->kind]++;
        const char *msg = c->kind == C_BRANCH || c->kind == C_DIFF || c->kind == C_SAVE
                              ? strata_view_errmsg(c->from)
                          : c->kind == C_LOAD ? c->err
                                              : strata_errmsg(c->g);
        snprintf(r->where, sizeof r->where, "%s with allocation %ld failing", call_names[c->kind],
                 k);
        if (!msg || !msg[0])
            mismatch(r, "STRATA_ENOMEM without a message");
        if (c->id_out != ID_UNTOUCHED || c->idx_out != U32_UNTOUCHED ||
            c->token_out != U32_UNTOUCHED || c->view_out || c->graph_out)
            mismatch(r, "a failed call set its out parameter");
        check_all(r, false);
        if (k > 100000)
            mismatch(r, "still out of memory after %ld allocations", k);
    }
}

/* ---- writes ------------------------------------------------------------------ */

static void expect_status(run *r, const mgraph *G, strata_status got, strata_status want)
{
    r->outcomes[want]++;
    if (got != want)
        mismatch(r, "status %s (\"%s\"), the model expects %s", strata_errstr(got),
                 strata_errmsg(G->g), strata_errstr(want));
}

/* The writer's model becomes next; outside statements and transactions
   that is the committed state too. */
static void apply(run *r, mgraph *G)
{
    *G->work = *r->next;
    if (!G->in_txn && !G->in_stmt)
        *G->committed = *G->work;
}

/* Runs a write whose success leaves G's writer at r->next: refused with
   STRATA_ECONSTRAINT, changing nothing, when that breaks a unique index;
   want (OK or the refusal the model predicts) otherwise. */
static strata_status write_call(run *r, mgraph *G, call *c, strata_status want)
{
    if (want == STRATA_OK && unique_violated(r->next))
        want = STRATA_ECONSTRAINT;
    snprintf(r->where, sizeof r->where, "the write on %s", G->name);
    strata_status s = attempt(r, c);
    expect_status(r, G, s, want);
    if (s == STRATA_OK)
        apply(r, G);
    return s;
}

static strata_id returned_id(run *r, const mgraph *G, const call *c, bool rel)
{
    const model *m = G->work;
    if (c->id_out >= MAX_IDS || (rel ? rel_alive(m, c->id_out) : node_alive(m, c->id_out)))
        mismatch(r, "a create returned %s id %" PRIu64 ", not a free slot below %d",
                 rel ? "relationship" : "node", c->id_out, MAX_IDS);
    return c->id_out;
}

static bool w_node_create(run *r, mgraph *G)
{
    if (G->work->nodes.live >= NODE_LIMIT)
        return false;
    const lineage *L = &r->lin[G->lin];
    call c = { .kind = C_NODE_CREATE, .g = G->g };
    uint8_t mask = 0;
    c.nlabels = below(&r->rng, NLABELS + 1);   /* repeats allowed: they count once */
    for (size_t i = 0; i < c.nlabels; i++) {
        uint32_t l = below(&r->rng, NLABELS);
        c.labels[i] = L->label[l];
        mask |= (uint8_t)(1u << l);
    }
    set_op(r, "%s: create a node with label mask %#x", G->name, mask);
    snprintf(r->where, sizeof r->where, "the write on %s", G->name);
    strata_status s = attempt(r, &c);
    expect_status(r, G, s, STRATA_OK);
    strata_id id = returned_id(r, G, &c, false);
    *r->next = *G->work;
    r->next->node[id] = (mnode){ .alive = true, .labels = mask };
    r->next->nodes.live++;
    apply(r, G);
    return true;
}

static bool w_node_delete(run *r, mgraph *G, bool detach)
{
    uint32_t id = pick_id(r, G->work, false, detach ? 5 : 10);
    set_op(r, "%s: %s node %u", G->name, detach ? "detach-delete" : "delete", id);
    call c = { .kind = detach ? C_NODE_DETACH_DELETE : C_NODE_DELETE, .g = G->g, .a = id };
    *r->next = *G->work;
    strata_status want = STRATA_OK;
    if (!node_alive(G->work, id))
        want = STRATA_ENOTFOUND;
    else if (!detach && node_connected(G->work, id))
        want = STRATA_ECONNECTED;
    else if (detach)
        model_detach_delete(r->next, id);
    else
        model_node_free(r->next, id);
    write_call(r, G, &c, want);
    return true;
}

static bool w_node_delete_plain(run *r, mgraph *G) { return w_node_delete(r, G, false); }
static bool w_node_detach_delete(run *r, mgraph *G) { return w_node_delete(r, G, true); }

static bool w_label(run *r, mgraph *G, bool add)
{
    uint32_t id = pick_id(r, G->work, false, 5), l = below(&r->rng, NLABELS);
    set_op(r, "%s: %s label %s %s node %u", G->name, add ? "add" : "remove", label_names[l],
           add ? "to" : "from", id);
    call c = { .kind = add ? C_LABEL_ADD : C_LABEL_REMOVE, .g = G->g, .a = id,
               .token = r->lin[G->lin].label[l] };
    *r->next = *G->work;
    if (!node_alive(G->work, id)) {
        write_call(r, G, &c, STRATA_ENOTFOUND);
        return true;
    }
    if (add)
        r->next->node[id].labels |= (uint8_t)(1u << l);
    else
        r->next->node[id].labels &= (uint8_t)~(1u << l);
    write_call(r, G, &c, STRATA_OK);
    return true;
}

static bool w_label_add(run *r, mgraph *G) { return w_label(r, G, true); }
static bool w_label_remove(run *r, mgraph *G) { return w_label(r, G, false); }

/* Sets (set) or removes property k of a node or relationship; a removal
   goes through strata_*_remove or through setting null. */
static bool w_prop(run *r, mgraph *G, bool rel, bool set)
{
    const lineage *L = &r->lin[G->lin];
    uint32_t id = pick_id(r, G->work, rel, 5), k = below(&r->rng, L->nkeys);
    mval val = set ? random_value(r) : (mval){ .kind = MV_NONE };
    char text[64];
    set_op(r, "%s: %s property %s of %s %u%s%s", G->name, set ? "set" : "remove", key_names[k],
           rel ? "relationship" : "node", id, set ? " to " : "",
           set ? mval_text(&val, text, sizeof text) : "");
    call c = { .g = G->g, .a = id, .token = L->key[k] };
    if (set)
        c.val = mval_to_api(&val);
    else if (chance(&r->rng, 30))
        c.val = strata_value_null();
    if (c.val)
        c.kind = rel ? C_REL_SET : C_NODE_SET;
    else
        c.kind = rel ? C_REL_REMOVE : C_NODE_REMOVE;
    *r->next = *G->work;
    if (!(rel ? rel_alive(G->work, id) : node_alive(G->work, id))) {
        write_call(r, G, &c, STRATA_ENOTFOUND);
    } else {
        (rel ? r->next->rel[id].props : r->next->node[id].props)[k] = val;
        write_call(r, G, &c, STRATA_OK);
    }
    strata_value_free(&c.val);
    return true;
}

static bool w_node_set(run *r, mgraph *G) { return w_prop(r, G, false, true); }
static bool w_node_remove(run *r, mgraph *G) { return w_prop(r, G, false, false); }
static bool w_rel_set(run *r, mgraph *G) { return w_prop(r, G, true, true); }
static bool w_rel_remove(run *r, mgraph *G) { return w_prop(r, G, true, false); }

static bool w_rel_create(run *r, mgraph *G)
{
    if (G->work->rels.live >= REL_LIMIT)
        return false;
    uint32_t start = pick_id(r, G->work, false, 3);
    uint32_t end = chance(&r->rng, 15) ? start : pick_id(r, G->work, false, 3);
    uint32_t t = below(&r->rng, NTYPES);
    set_op(r, "%s: create a relationship %u -[%s]-> %u", G->name, start, type_names[t], end);
    call c = { .kind = C_REL_CREATE, .g = G->g, .a = start, .b = end,
               .token = r->lin[G->lin].type[t] };
    bool ok = node_alive(G->work, start) && node_alive(G->work, end);
    snprintf(r->where, sizeof r->where, "the write on %s", G->name);
    strata_status s = attempt(r, &c);
    expect_status(r, G, s, ok ? STRATA_OK : STRATA_ENOTFOUND);
    if (!ok)
        return true;
    strata_id id = returned_id(r, G, &c, true);
    *r->next = *G->work;
    r->next->rel[id] = (mrel){ .alive = true, .start = start, .end = end, .type = t };
    r->next->rels.live++;
    apply(r, G);
    return true;
}

static bool w_rel_delete(run *r, mgraph *G)
{
    uint32_t id = pick_id(r, G->work, true, 10);
    set_op(r, "%s: delete relationship %u", G->name, id);
    call c = { .kind = C_REL_DELETE, .g = G->g, .a = id };
    *r->next = *G->work;
    strata_status want = STRATA_ENOTFOUND;
    if (rel_alive(G->work, id)) {
        model_rel_free(r->next, id);
        want = STRATA_OK;
    }
    write_call(r, G, &c, want);
    return true;
}

/* Moves a node one write closer to sharing a unique index key with
   another: sets its key to the other's value, or adds the label to a node
   that already has the value.  The model expects STRATA_ECONSTRAINT when
   that completes the clash, so refusals are common. */
static bool w_unique_clash(run *r, mgraph *G)
{
    const model *m = G->work;
    const lineage *L = &r->lin[G->lin];
    uint32_t uniq[MAX_INDEXES], nu = 0;
    for (uint32_t i = 0; i < m->nidx; i++)
        if (m->idx[i].kind == STRATA_INDEX_UNIQUE)
            uniq[nu++] = i;
    if (!nu)
        return false;
    const mindex *d = &m->idx[uniq[below(&r->rng, nu)]];
    uint32_t holders[MAX_IDS], nh = 0;
    mval key;
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (index_key(m, d, id, &key))
            holders[nh++] = id;
    if (!nh)
        return false;
    uint32_t a = holders[below(&r->rng, nh)];
    /* Mostly another node with the label: setting its key clashes. */
    uint32_t labelled[MAX_IDS], nl = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (id != a && m->node[id].alive && (m->node[id].labels >> d->token & 1))
            labelled[nl++] = id;
    uint32_t b = nl && chance(&r->rng, 70) ? labelled[below(&r->rng, nl)] : pick_id(r, m, false, 0);
    if (b == a || !node_alive(m, b))
        return false;
    index_key(m, d, a, &key);
    *r->next = *m;
    call c = { .g = G->g, .a = b };
    char text[64];
    if (mval_eq(&m->node[b].props[d->keys[0]], &key)) {
        set_op(r, "%s: unique clash with node %u on index %u: add label %s to node %u", G->name,
               a, d->id, label_names[d->token], b);
        c.kind = C_LABEL_ADD;
        c.token = L->label[d->token];
        r->next->node[b].labels |= (uint8_t)(1u << d->token);
    } else {
        set_op(r, "%s: unique clash with node %u on index %u: set %s of node %u to %s", G->name,
               a, d->id, key_names[d->keys[0]], b, mval_text(&key, text, sizeof text));
        c.kind = C_NODE_SET;
        c.token = L->key[d->keys[0]];
        c.val = mval_to_api(&key);
        r->next->node[b].props[d->keys[0]] = key;
    }
    write_call(r, G, &c, STRATA_OK);
    strata_value_free(&c.val);
    return true;
}

typedef bool (*write_fn)(run *r, mgraph *G);

typedef struct write_entry {
    write_fn fn;
    uint32_t weight;
} write_entry;

static const write_entry writes[] = {
    { w_node_create, 12 }, { w_node_delete_plain, 3 }, { w_node_detach_delete, 3 },
    { w_label_add, 6 },    { w_label_remove, 4 },      { w_node_set, 14 },
    { w_node_remove, 4 },  { w_rel_create, 12 },       { w_rel_delete, 5 },
    { w_rel_set, 6 },      { w_rel_remove, 2 },        { w_unique_clash, 8 },
};

static void random_write(run *r, mgraph *G)
{
    uint32_t total = 0;
    for (size_t i = 0; i < sizeof writes / sizeof *writes; i++)
        total += writes[i].weight;
    for (;;) {
        uint32_t x = below(&r->rng, total);
        size_t i = 0;
        while (x >= writes[i].weight)
            x -= writes[i++].weight;
        if (writes[i].fn(r, G))
            return;
    }
}

/* ---- the operations of a step: each returns false when it does not apply now ---- */

static bool op_write(run *r)
{
    random_write(r, pick_graph(r));
    return true;
}

/* A statement of one to four writes, committed or rolled back; now and
   then a reader takes a snapshot in the middle (the state before it). */
static bool op_statement(run *r)
{
    mgraph *G = pick_graph(r);
    set_op(r, "%s: begin a statement", G->name);
    call c = { .kind = C_STMT_BEGIN, .g = G->g };
    expect_status(r, G, attempt(r, &c), STRATA_OK);
    G->in_stmt = true;
    *r->stmt_start = *G->work;
    uint32_t n = 1 + below(&r->rng, 4);
    for (uint32_t i = 0; i < n; i++) {
        random_write(r, G);
        if (chance(&r->rng, 20)) {
            strata_view *v = NULL;
            snprintf(r->where, sizeof r->where, "a snapshot of %s inside a statement", G->name);
            expect_status(r, G, strata_snapshot(G->g, &v), STRATA_OK);
            compare_view(r, v, &r->lin[G->lin], G->committed);
            strata_view_release(&v);
        }
    }
    bool commit = chance(&r->rng, 60);
    set_op(r, "%s: end a statement of %u writes with %s", G->name, n,
           commit ? "commit" : "rollback");
    c = (call){ .kind = C_STMT_END, .g = G->g, .flag = commit };
    expect_status(r, G, attempt(r, &c), STRATA_OK);
    G->in_stmt = false;
    if (!commit)
        *G->work = *r->stmt_start;
    else if (!G->in_txn)
        *G->committed = *G->work;
    return true;
}

static bool op_transaction(run *r)
{
    mgraph *G = pick_graph(r);
    call c = { .g = G->g };
    if (!G->in_txn) {
        /* Mostly a begin; sometimes a commit or rollback with none open. */
        c.kind = chance(&r->rng, 85) ? C_BEGIN : chance(&r->rng, 50) ? C_COMMIT : C_ROLLBACK;
        set_op(r, "%s: %s", G->name, call_names[c.kind]);
        strata_status s = attempt(r, &c);
        expect_status(r, G, s, c.kind == C_BEGIN ? STRATA_OK : STRATA_EINVAL);
        G->in_txn = c.kind == C_BEGIN;
        return true;
    }
    uint32_t x = below(&r->rng, 100);
    c.kind = x < 55 ? C_COMMIT : x < 95 ? C_ROLLBACK : C_BEGIN;
    set_op(r, "%s: %s a transaction", G->name, call_names[c.kind]);
    strata_status s = attempt(r, &c);
    expect_status(r, G, s, c.kind == C_BEGIN ? STRATA_EINVAL : STRATA_OK);
    if (c.kind == C_COMMIT)
        *G->committed = *G->work;
    else if (c.kind == C_ROLLBACK)
        *G->work = *G->committed;
    G->in_txn = c.kind == C_BEGIN;
    return true;
}

static int find_index(const model *m, strata_index_kind kind, uint32_t label, uint32_t key)
{
    for (uint32_t i = 0; i < m->nidx; i++)
        if (m->idx[i].kind == kind && m->idx[i].token == label && m->idx[i].keys[0] == key)
            return (int)i;
    return -1;
}

/* A graph for index DDL: mostly one outside a transaction (inside, the
   DDL is refused). */
static mgraph *pick_ddl_graph(run *r)
{
    mgraph *G = pick_graph(r);
    return G->in_txn && chance(&r->rng, 80) ? NULL : G;
}

static bool op_index_create(run *r)
{
    mgraph *G = pick_ddl_graph(r);
    if (!G)
        return false;
    const lineage *L = &r->lin[G->lin];
    /* Unique half the time: constraints make writes refusable. */
    strata_index_kind kind = chance(&r->rng, 50) ? STRATA_INDEX_UNIQUE
                                                 : (strata_index_kind)below(&r->rng, 2);
    mindex d = { .kind = kind, .token = below(&r->rng, NLABELS), .nkeys = 1,
                 .keys = { below(&r->rng, L->nkeys) } };
    int same = find_index(G->work, d.kind, d.token, d.keys[0]);
    if (same < 0 && G->work->nidx >= MAX_INDEXES)
        return false;
    static const char *const kinds[] = { "hash", "range", "unique" };
    set_op(r, "%s: create a %s index on %s(%s)", G->name, kinds[d.kind], label_names[d.token],
           key_names[d.keys[0]]);
    call c = { .kind = C_INDEX_CREATE, .g = G->g, .index_kind = d.kind,
               .labels = { L->label[d.token] }, .token = L->key[d.keys[0]] };
    strata_status want = STRATA_OK;
    *r->next = *G->work;
    if (G->in_txn)
        want = STRATA_EINVAL;   /* schema changes run outside transactions */
    else if (same >= 0)
        want = STRATA_EINVAL;
    else if (d.kind == STRATA_INDEX_UNIQUE && unique_clash(G->work, &d))
        want = STRATA_ECONSTRAINT;
    snprintf(r->where, sizeof r->where, "index DDL on %s", G->name);
    strata_status s = attempt(r, &c);
    expect_status(r, G, s, want);
    if (s == STRATA_OK) {
        for (uint32_t i = 0; i < G->work->nidx; i++)
            if (G->work->idx[i].id == c.idx_out)
                mismatch(r, "the new index has the id %u of a live one", c.idx_out);
        d.id = c.idx_out;
        r->next->idx[r->next->nidx++] = d;
        apply(r, G);
    }
    return true;
}

static bool op_index_drop(run *r)
{
    mgraph *G = pick_ddl_graph(r);
    if (!G)
        return false;
    const model *m = G->work;
    strata_index id = m->nidx && chance(&r->rng, 80) ? m->idx[below(&r->rng, m->nidx)].id
                                                    : below(&r->rng, 16);
    set_op(r, "%s: drop index %u", G->name, id);
    call c = { .kind = C_INDEX_DROP, .g = G->g, .idx = id };
    *r->next = *m;
    strata_status want = STRATA_ENOTFOUND;
    for (uint32_t i = 0; i < r->next->nidx; i++)
        if (r->next->idx[i].id == id) {
            r->next->idx[i] = r->next->idx[--r->next->nidx];
            want = STRATA_OK;
            break;
        }
    if (G->in_txn)
        want = STRATA_EINVAL;
    snprintf(r->where, sizeof r->where, "index DDL on %s", G->name);
    strata_status s = attempt(r, &c);
    expect_status(r, G, s, want);
    if (s == STRATA_OK)
        apply(r, G);
    return true;
}

/* The late key, interned through any graph of a lineage: every graph and
   view of the lineage knows it from then on, with one token. */
static bool op_intern(run *r)
{
    mgraph *G = pick_graph(r);
    lineage *L = &r->lin[G->lin];
    set_op(r, "%s: intern the key \"%s\"", G->name, key_names[LATE_KEY]);
    call c = { .kind = C_INTERN, .g = G->g, .name = key_names[LATE_KEY] };
    snprintf(r->where, sizeof r->where, "interning on %s", G->name);
    expect_status(r, G, attempt(r, &c), STRATA_OK);
    if (L->nkeys == NKEYS && c.token_out != L->key[LATE_KEY])
        mismatch(r, "interned again as token %u, first as %u", c.token_out, L->key[LATE_KEY]);
    L->key[LATE_KEY] = c.token_out;
    if (L->nkeys < NKEYS && c.token_out <= L->key[LATE_KEY - 1])
        mismatch(r, "the late key has token %u, not after the others", c.token_out);
    L->nkeys = NKEYS;
    return true;
}

/* A new view of G's committed state (own: of its writer's). */
static strata_view *take_view(run *r, mgraph *G, bool own)
{
    call c = { .kind = own ? C_SNAPSHOT_OWN : C_SNAPSHOT, .g = G->g };
    snprintf(r->where, sizeof r->where, "a %s of %s", call_names[c.kind], G->name);
    expect_status(r, G, attempt(r, &c), STRATA_OK);
    if (!c.view_out)
        mismatch(r, "a snapshot returned OK without a view");
    return c.view_out;
}

static void hold(run *r, strata_view *v, const model *m, const mgraph *G, const char *what)
{
    held_view *h = &r->held[r->nheld++];
    h->v = v;
    *h->m = *m;
    h->lin = G->lin;
    h->graph = G->serial;
    snprintf(h->what, sizeof h->what, "%s", what);
}

static bool op_view_take(run *r)
{
    if (r->nheld == MAX_VIEWS)
        return false;
    mgraph *G = pick_graph(r);
    bool own = G->in_txn && chance(&r->rng, 60);
    set_op(r, "%s: take a%s view", G->name, own ? "n own" : "");
    strata_view *v = take_view(r, G, own);
    char what[112];
    snprintf(what, sizeof what, "the %sview of %s taken at step %u", own ? "own " : "", G->tag,
             r->step);
    hold(r, v, own ? G->work : G->committed, G, what);
    return true;
}

static void drop_held(run *r, uint32_t i)
{
    strata_view_release(&r->held[i].v);
    if (r->held[i].v)
        mismatch(r, "strata_view_release left the handle set");
    held_view released = r->held[i];   /* keeps its model buffer */
    r->held[i] = r->held[--r->nheld];
    r->held[r->nheld] = released;
}

static bool op_view_release(run *r)
{
    if (r->nheld == 0)
        return false;
    uint32_t i = below(&r->rng, r->nheld);
    set_op(r, "release %s", r->held[i].what);
    drop_held(r, i);
    return true;
}

/* A branch of a graph's fresh snapshot (kept as a held view now and then)
   or of any held view — of a graph freed since, or of an open
   transaction's own state. */
static bool op_branch(run *r)
{
    mgraph *B = free_slot(r);
    if (!B || live_graphs(r, -1) >= LIVE_GRAPHS)
        return false;
    strata_view *from = NULL;
    const model *m;
    uint32_t lin, parent;
    mgraph *G = NULL;
    char src[112];
    bool fresh = r->nheld == 0 || chance(&r->rng, 55);
    uint32_t hi = 0;
    if (fresh) {
        G = pick_graph(r);
        set_op(r, "%s: snapshot, to branch", G->name);
        from = take_view(r, G, false);
        m = G->committed;
        lin = G->lin;
        parent = G->serial;
        snprintf(src, sizeof src, "%s's snapshot at step %u", G->tag, r->step);
    } else {
        hi = below(&r->rng, r->nheld);
        from = r->held[hi].v;
        m = r->held[hi].m;
        lin = r->held[hi].lin;
        parent = r->held[hi].graph;
        snprintf(src, sizeof src, "%s", r->held[hi].what);
    }
    set_op(r, "branch g%u of %s", r->serial + 1, src);
    call c = { .kind = C_BRANCH, .from = from };
    snprintf(r->where, sizeof r->where, "strata_branch of %s", src);
    strata_status s = attempt(r, &c);
    if (s != STRATA_OK || !c.graph_out)
        mismatch(r, "strata_branch: %s (%s)", strata_errstr(s), strata_view_errmsg(from));
    B->g = c.graph_out;
    B->lin = lin;
    B->serial = ++r->serial;
    B->parent = parent;
    snprintf(B->tag, sizeof B->tag, "g%u", B->serial);
    snprintf(B->name, sizeof B->name, "g%u (a branch of %.80s)", B->serial, src);
    *B->committed = *m;
    *B->work = *m;
    B->in_txn = B->in_stmt = false;
    r->branches++;
    if (fresh) {
        if (r->nheld < MAX_VIEWS && chance(&r->rng, 30))
            hold(r, from, m, G, src);
        else
            strata_view_release(&from);
    }
    return true;
}

/* Frees any graph but the last of its lineage — with a transaction open,
   with views or branches alive, before or after its own source. */
static bool op_graph_free(run *r)
{
    mgraph *G = pick_graph(r);
    if (live_graphs(r, (int)G->lin) < 2)
        return false;
    set_op(r, "free %s%s", G->name, G->in_txn ? " with a transaction open" : "");
    for (uint32_t i = 0; i < MAX_GRAPHS; i++)
        if (r->gr[i].g && r->gr[i].parent == G->serial) {
            r->source_first_frees++;   /* a source freed before its branch */
            break;
        }
    strata_graph_free(&G->g);
    if (G->g)
        mismatch(r, "strata_graph_free left the handle set");
    G->in_txn = G->in_stmt = false;
    r->frees++;
    return true;
}

static void diff_and_stop(run *r, held_view *a, held_view *b);

/* One diff through the fault mode's sweep, and one stopped by its
   callback: STRATA_EINTERRUPTED after exactly the first changes. */
static bool op_diff(run *r)
{
    /* Each side a held view or, otherwise, a graph's fresh snapshot. */
    held_view side[2];
    model *fresh_models[2] = { r->next, r->stmt_start };   /* free outside statements */
    bool fresh[2];
    for (int i = 0; i < 2; i++) {
        fresh[i] = r->nheld == 0 || chance(&r->rng, 40);
        if (!fresh[i]) {
            side[i] = r->held[below(&r->rng, r->nheld)];
            continue;
        }
        mgraph *G = pick_graph(r);
        set_op(r, "%s: snapshot, to diff", G->name);
        side[i].v = take_view(r, G, false);
        side[i].m = fresh_models[i];
        *side[i].m = *G->committed;
        side[i].lin = G->lin;
        snprintf(side[i].what, sizeof side[i].what, "%s's snapshot", G->tag);
    }
    held_view *a = &side[0], *b = &side[1];
    if (a->lin == b->lin)
        diff_and_stop(r, a, b);
    for (int i = 0; i < 2; i++)
        if (fresh[i])
            strata_view_release(&side[i].v);
    return true;
}

static void diff_and_stop(run *r, held_view *a, held_view *b)
{
    set_op(r, "diff %s against %s", a->what, b->what);
    call c = { .kind = C_DIFF, .from = a->v, .to = b->v, .changes = r->got };
    snprintf(r->where, sizeof r->where, "the diff");
    strata_status s = attempt(r, &c);
    if (s != STRATA_OK)
        mismatch(r, "%s (%s)", strata_errstr(s), strata_view_errmsg(a->v));
    expected_changes(&r->lin[a->lin], a->m, b->m, r->want);
    size_t n = r->got->n;
    if (n != r->want->n)
        mismatch(r, "%zu changes, the models' difference has %zu", n, r->want->n);
    if (n == 0)
        return;
    size_t stop = 1 + below(&r->rng, (uint32_t)n);
    c.changes = r->partial;
    c.b = stop;
    s = perform(&c);
    if (s != STRATA_EINTERRUPTED || r->partial->n != stop || !strata_view_errmsg(a->v)[0])
        mismatch(r, "stopped after %zu of %zu changes: %s with %zu changes", stop, n,
                 strata_errstr(s), r->partial->n);
    for (size_t i = 0; i < stop; i++) {
        char x[160], y[160];
        change_text(&r->partial->c[i], x, sizeof x);
        change_text(&r->got->c[i], y, sizeof y);
        if (strcmp(x, y) != 0)
            mismatch(r, "a stopped diff's change %zu is '%s', the whole diff's '%s'", i, x, y);
    }
}

/* Saves a view of any graph (a branch's shares its chunks with others) and
   loads it back: a new lineage, whose graph must equal the model — ids,
   tokens and index handles come back exactly — and which a diff refuses
   to compare with the original. */
static bool op_save_load(run *r)
{
    strata_view *v;
    const model *m;
    uint32_t lin;
    char what[112];
    bool fresh = r->nheld == 0 || chance(&r->rng, 50);
    if (fresh) {
        mgraph *G = pick_graph(r);
        set_op(r, "%s: snapshot, to save", G->name);
        v = take_view(r, G, false);
        m = G->committed;
        lin = G->lin;
        snprintf(what, sizeof what, "%s's snapshot", G->tag);
    } else {
        held_view *h = &r->held[below(&r->rng, r->nheld)];
        v = h->v;
        m = h->m;
        lin = h->lin;
        snprintf(what, sizeof what, "%s", h->what);
    }
    char path[] = "/tmp/strata-branch-model-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        mismatch(r, "mkstemp failed");
    close(fd);
    set_op(r, "save %s and load it back", what);
    snprintf(r->where, sizeof r->where, "saving %s", what);
    call c = { .kind = C_SAVE, .from = v, .name = path };
    strata_status s = attempt(r, &c);
    if (s != STRATA_OK)
        mismatch(r, "strata_save_view: %s (%s)", strata_errstr(s), strata_view_errmsg(v));
    snprintf(r->where, sizeof r->where, "loading %s", what);
    c = (call){ .kind = C_LOAD, .name = path };
    s = attempt(r, &c);
    unlink(path);
    if (s != STRATA_OK || !c.graph_out)
        mismatch(r, "strata_load: %s", strata_errstr(s));
    strata_view *loaded = NULL;
    if (strata_snapshot(c.graph_out, &loaded) != STRATA_OK)
        mismatch(r, "a snapshot of the loaded graph failed");
    snprintf(r->where, sizeof r->where, "the loaded copy of %s", what);
    compare_view(r, loaded, &r->lin[lin], m);
    list_reset(r->got, 0);
    s = strata_diff(v, loaded, collect, r->got);
    if (s != STRATA_EINVAL || r->got->n)
        mismatch(r, "a diff with the loaded copy: %s, %zu changes", strata_errstr(s), r->got->n);
    strata_view_release(&loaded);
    strata_graph_free(&c.graph_out);
    if (fresh)
        strata_view_release(&v);
    r->saves++;
    return true;
}

static bool op_cypher_set(run *r);

typedef struct op_entry {
    bool (*run)(run *r);
    uint32_t weight;
} op_entry;

static const op_entry ops[] = {
    { op_write, 40 },        { op_statement, 6 },   { op_transaction, 6 },
    { op_index_create, 3 },  { op_index_drop, 1 },  { op_intern, 1 },
    { op_view_take, 6 },     { op_view_release, 5 }, { op_branch, 5 },
    { op_graph_free, 3 },    { op_diff, 5 },         { op_save_load, 1 },
    { op_cypher_set, 3 },
};

static void run_random_op(run *r)
{
    uint32_t total = 0;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        total += ops[i].weight;
    for (;;) {
        uint32_t x = below(&r->rng, total);
        size_t i = 0;
        while (x >= ops[i].weight)
            x -= ops[i++].weight;
        if (ops[i].run(r))
            return;
    }
}

/* ---- Cypher over branches ------------------------------------------------------------ */

/* A one-entry parameter map {v: val}. */
static strata_value *param_map(const char *key, const mval *val)
{
    strata_value *v = mval_to_api(val);
    const char *keys[] = { key };
    const strata_value *vals[] = { v };
    strata_value *map = strata_value_map(keys, vals, 1);
    strata_value_free(&v);
    assert_non_null(map);
    return map;
}

/* Cypher's answer to a lookup by label and property on a view — by
   equality, or for an integer by >= — against the model.  The text is
   the same in every graph of the run while each graph has its own
   indices (index DDL in a branch stays there): the plan each graph caches
   must choose its access path from the view it runs on. */
static void check_cypher_lookup(run *r, const pooled *p)
{
    const lineage *L = &r->lin[p->lin];
    uint32_t l = below(&r->check_rng, NLABELS), k = below(&r->check_rng, L->nkeys);
    bool range = chance(&r->check_rng, 40);
    mval val = range || chance(&r->check_rng, 70) ? mv_int(below(&r->check_rng, INT_RANGE + 1))
                                                  : mv_str(string_pool[below(&r->check_rng, 4)]);
    char text[160], vt[64];
    snprintf(text, sizeof text, "MATCH (n:%s) WHERE n.%s %s $v RETURN id(n) ORDER BY id(n)",
             label_names[l], key_names[k], range ? ">=" : "=");
    snprintf(r->where, sizeof r->where, "Cypher on %s: %s with $v = %s", p->what, text,
             mval_text(&val, vt, sizeof vt));
    strata_id want[MAX_IDS], got[MAX_IDS];
    size_t nwant = 0, ngot = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        const mnode *x = &p->m->node[id];
        const mval *pv = &x->props[k];
        if (!x->alive || !(x->labels >> l & 1))
            continue;
        if (range ? pv->kind == MV_INT && val.kind == MV_INT && pv->i >= val.i : mval_eq(pv, &val))
            want[nwant++] = id;
    }
    strata_value *params = param_map("v", &val);
    strata_result *res = NULL;
    strata_status s = strata_view_query(p->v, text, params, &res);
    strata_value_free(&params);
    const strata_value *const *row;
    while (s == STRATA_OK && ngot < MAX_IDS && strata_result_next(res, &row)) {
        int64_t id = -1;
        if (strata_value_get_int(row[0], &id) != STRATA_OK)
            mismatch(r, "a row that is not an id");
        got[ngot++] = (strata_id)id;
    }
    const strata_query_error *e = res ? strata_result_error(res) : NULL;
    if (s != STRATA_OK || e)
        mismatch(r, "%s: %s", strata_errstr(s), e ? e->message : strata_view_errmsg(p->v));
    strata_result_free(&res);
    expect_ids(r, "the rows", got, ngot, want, nwant);
}

/* A property set through Cypher in any graph, in or out of its
   transaction: the same write as strata_node_set, refused (with the
   graph unchanged) when it breaks a unique index. */
static bool op_cypher_set(run *r)
{
    mgraph *G = pick_graph(r);
    const lineage *L = &r->lin[G->lin];
    uint32_t id = pick_id(r, G->work, false, 10), k = below(&r->rng, L->nkeys);
    mval val = random_value(r);
    char text[128], vt[64];
    snprintf(text, sizeof text, "MATCH (n) WHERE id(n) = %u SET n.%s = $v", id, key_names[k]);
    set_op(r, "%s: %s with $v = %s", G->name, text, mval_text(&val, vt, sizeof vt));
    *r->next = *G->work;
    if (node_alive(G->work, id))
        r->next->node[id].props[k] = val;
    bool refused = unique_violated(r->next);
    strata_value *params = param_map("v", &val);
    strata_result *res = NULL;
    snprintf(r->where, sizeof r->where, "Cypher on %s", G->name);
    strata_status s = strata_query(G->g, text, params, &res);
    strata_value_free(&params);
    const strata_value *const *row;
    while (s == STRATA_OK && strata_result_next(res, &row))
        ;
    const strata_query_error *e = res ? strata_result_error(res) : NULL;
    if (s != (refused ? STRATA_ECONSTRAINT : STRATA_OK) || (e != NULL) != refused)
        mismatch(r, "%s, %s; the model expects %s", strata_errstr(s),
                 e ? e->message : "no error", refused ? "a refusal" : "the write");
    strata_result_free(&res);
    r->outcomes[refused ? STRATA_ECONSTRAINT : STRATA_OK]++;
    if (!refused)
        apply(r, G);
    return true;
}

/* ---- the check after every step ---------------------------------------------------- */

/* strata_memory_stats of each graph: its committed counts, private bytes
   within the lineage's, and one figure for the lineage's bytes whichever
   graph of it is asked. */
static void check_memstats(run *r)
{
    uint64_t lineage_bytes[NLINEAGES] = { 0 };
    for (uint32_t i = 0; i < MAX_GRAPHS; i++) {
        mgraph *G = &r->gr[i];
        if (!G->g)
            continue;
        snprintf(r->where, sizeof r->where, "the memory statistics of %s", G->name);
        strata_memstats ms;
        strata_status s = strata_memory_stats(G->g, &ms);
        if (s != STRATA_OK)
            mismatch(r, "strata_memory_stats: %s (%s)", strata_errstr(s), strata_errmsg(G->g));
        if (ms.nodes != G->committed->nodes.live || ms.relationships != G->committed->rels.live)
            mismatch(r, "%" PRIu64 " nodes and %" PRIu64 " relationships, the model has %u and %u",
                     ms.nodes, ms.relationships, G->committed->nodes.live,
                     G->committed->rels.live);
        if (ms.private_bytes > ms.graph_bytes)
            mismatch(r, "%" PRIu64 " private bytes of %" PRIu64 " in the lineage",
                     ms.private_bytes, ms.graph_bytes);
        if (lineage_bytes[G->lin] && lineage_bytes[G->lin] != ms.graph_bytes)
            mismatch(r, "the lineage holds %" PRIu64 " bytes, another graph of it says %" PRIu64,
                     ms.graph_bytes, lineage_bytes[G->lin]);
        lineage_bytes[G->lin] = ms.graph_bytes;
    }
}

static void check_all(run *r, bool diffs)
{
    pooled pool[MAX_POOL];
    char names[2 * MAX_GRAPHS][160];
    uint32_t n = 0, fresh = 0;
    for (uint32_t i = 0; i < MAX_GRAPHS; i++) {
        mgraph *G = &r->gr[i];
        if (!G->g)
            continue;
        strata_view *v = NULL;
        snprintf(r->where, sizeof r->where, "a fresh snapshot of %s", G->name);
        strata_status s = strata_snapshot(G->g, &v);
        if (s != STRATA_OK)
            mismatch(r, "strata_snapshot: %s (%s)", strata_errstr(s), strata_errmsg(G->g));
        compare_view(r, v, &r->lin[G->lin], G->committed);
        snprintf(names[fresh], sizeof names[fresh], "a fresh snapshot of %s", G->name);
        pool[n++] = (pooled){ v, G->committed, G->lin, names[fresh++] };
        if (G->in_txn && !G->in_stmt) {
            snprintf(r->where, sizeof r->where, "the own view of %s", G->name);
            s = strata_snapshot_own(G->g, &v);
            if (s != STRATA_OK)
                mismatch(r, "strata_snapshot_own: %s (%s)", strata_errstr(s),
                         strata_errmsg(G->g));
            compare_view(r, v, &r->lin[G->lin], G->work);
            snprintf(names[fresh], sizeof names[fresh], "the own view of %s", G->name);
            pool[n++] = (pooled){ v, G->work, G->lin, names[fresh++] };
        }
    }
    for (uint32_t i = 0; i < r->nheld; i++) {
        held_view *h = &r->held[i];
        snprintf(r->where, sizeof r->where, "%s", h->what);
        compare_view(r, h->v, &r->lin[h->lin], h->m);
        pool[n++] = (pooled){ h->v, h->m, h->lin, h->what };
    }
    check_memstats(r);
    if (diffs)
        check_cypher_lookup(r, &pool[below(&r->check_rng, n)]);
    for (uint32_t i = 0; diffs && i < DIFF_PAIRS; i++)
        check_diff(r, &pool[below(&r->check_rng, n)], &pool[below(&r->check_rng, n)]);
    for (uint32_t i = 0; i < fresh; i++)
        strata_view_release(&pool[i].v);
}

/* ---- the runs ---------------------------------------------------------------------- */

static strata_token intern(strata_graph *g, strata_token_kind kind, const char *name)
{
    strata_token t = UINT32_MAX;
    assert_int_equal(strata_token_intern(g, kind, name, &t), STRATA_OK);
    return t;
}

static model *model_new(void)
{
    model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    return m;
}

static run *run_new(uint64_t seed, bool faults)
{
    run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->seed = seed;
    r->faults = faults;
    r->trace = getenv("STRATA_MODEL_TRACE") != NULL;
    /* Spread small seeds over the state space; xorshift needs non-zero. */
    r->rng = (seed * 0x9E3779B97F4A7C15ull) | 1;
    r->check_rng = ((seed * 0xD1B54A32D192ED03ull) ^ 0x5851F42D4C957F2Dull) | 1;
    r->next = model_new();
    r->stmt_start = model_new();
    r->got = calloc(1, sizeof *r->got);
    r->want = calloc(1, sizeof *r->want);
    r->partial = calloc(1, sizeof *r->partial);
    assert_non_null(r->got);
    assert_non_null(r->want);
    assert_non_null(r->partial);
    for (uint32_t i = 0; i < MAX_GRAPHS; i++) {
        r->gr[i].committed = model_new();
        r->gr[i].work = model_new();
    }
    for (uint32_t i = 0; i < MAX_VIEWS; i++)
        r->held[i].m = model_new();
    for (uint32_t l = 0; l < NLINEAGES; l++) {
        mgraph *G = &r->gr[l];
        assert_int_equal(strata_graph_new(&G->g), STRATA_OK);
        G->lin = l;
        G->serial = ++r->serial;
        G->parent = 0;
        snprintf(G->tag, sizeof G->tag, "g%u", G->serial);
        snprintf(G->name, sizeof G->name, "%s (the root of lineage %u)", G->tag, l);
        lineage *L = &r->lin[l];
        if (l > 0) {   /* offsets this lineage's tokens from the first's */
            intern(G->g, STRATA_LABEL, "pad");
            intern(G->g, STRATA_RELTYPE, "pad");
            intern(G->g, STRATA_KEY, "pad");
        }
        for (uint32_t i = 0; i < NLABELS; i++)
            L->label[i] = intern(G->g, STRATA_LABEL, label_names[i]);
        for (uint32_t i = 0; i < NTYPES; i++)
            L->type[i] = intern(G->g, STRATA_RELTYPE, type_names[i]);
        for (uint32_t i = 0; i < LATE_KEY; i++)
            L->key[i] = intern(G->g, STRATA_KEY, key_names[i]);
        L->nkeys = LATE_KEY;
    }
    set_op(r, "setup");
    return r;
}

static void run_free(run **rp)
{
    run *r = *rp;
    for (uint32_t i = 0; i < r->nheld; i++)
        strata_view_release(&r->held[i].v);
    for (uint32_t i = 0; i < MAX_GRAPHS; i++) {
        strata_graph_free(&r->gr[i].g);
        free(r->gr[i].committed);
        free(r->gr[i].work);
    }
    for (uint32_t i = 0; i < MAX_VIEWS; i++)
        free(r->held[i].m);
    free(r->next);
    free(r->stmt_start);
    free(r->got);
    free(r->want);
    free(r->partial);
    free(r);
    *rp = NULL;
}

static void add_totals(totals *t, const run *r)
{
    t->views_compared += r->views_compared;
    t->diffs_compared += r->diffs_compared;
    t->diffs_refused += r->diffs_refused;
    t->changes_compared += r->changes_compared;
    t->branches += r->branches;
    t->frees += r->frees;
    t->source_first_frees += r->source_first_frees;
    t->saves += r->saves;
    for (size_t i = 0; i < sizeof t->outcomes / sizeof *t->outcomes; i++)
        t->outcomes[i] += r->outcomes[i];
    for (size_t i = 0; i < C_NKINDS; i++) {
        t->swept[i] += r->swept[i];
        t->injected[i] += r->injected[i];
    }
}

static void run_seed(uint64_t seed, uint32_t steps, bool faults, totals *t)
{
    run *r = run_new(seed, faults);
    for (r->step = 1; r->step <= steps; r->step++) {
        run_random_op(r);
        check_all(r, true);
    }
    add_totals(t, r);
    run_free(&r);
}

static unsigned long env_or(const char *name, unsigned long fallback)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return fallback;
    unsigned long v = strtoul(s, &end, 10);
    return *end ? fallback : v;
}

static void run_seeds(bool faults, totals *t, uint64_t *count, uint32_t *steps)
{
    *steps = (uint32_t)env_or("STRATA_MODEL_STEPS", faults ? FAULT_STEPS : DEFAULT_STEPS);
    uint64_t first = 1;
    *count = env_or("STRATA_MODEL_SEEDS", faults ? FAULT_SEEDS : DEFAULT_SEEDS);
    if (getenv("STRATA_MODEL_SEED")) {
        first = env_or("STRATA_MODEL_SEED", 1);
        *count = 1;
    }
    for (uint64_t seed = first; seed < first + *count; seed++)
        run_seed(seed, *steps, faults, t);
}

static void test_branch_model(void **state)
{
    (void)state;
    totals t = { 0 };
    uint64_t count;
    uint32_t steps;
    run_seeds(false, &t, &count, &steps);
    print_message("branch model: %" PRIu64 " seeds x %u steps, %" PRIu64 " branches, %" PRIu64
                  " graphs freed (%" PRIu64 " before a branch of theirs), %" PRIu64
                  " saved and loaded, %" PRIu64 " views compared, %" PRIu64 " diffs compared (%" PRIu64 " changes), %" PRIu64
                  " refused as unrelated; writes: %" PRIu64 " ok, %" PRIu64 " unique violations, "
                  "%" PRIu64 " still connected, %" PRIu64 " not found, %" PRIu64 " refused\n",
                  count, steps, t.branches, t.frees, t.source_first_frees, t.saves,
                  t.views_compared,
                  t.diffs_compared, t.changes_compared, t.diffs_refused, t.outcomes[STRATA_OK],
                  t.outcomes[STRATA_ECONSTRAINT], t.outcomes[STRATA_ECONNECTED],
                  t.outcomes[STRATA_ENOTFOUND], t.outcomes[STRATA_EINVAL]);
    /* A default run reaches every kind of event the test is about. */
    if (count * steps >= (uint64_t)DEFAULT_SEEDS * DEFAULT_STEPS) {
        assert_true(t.branches > 0 && t.frees > 0 && t.source_first_frees > 0 && t.saves > 0);
        assert_true(t.diffs_refused > 0 && t.changes_compared > 0);
        assert_true(t.outcomes[STRATA_ECONSTRAINT] > 0);
    }
}

static void test_branch_model_faults(void **state)
{
    (void)state;
    totals t = { 0 };
    uint64_t count;
    uint32_t steps;
    run_seeds(true, &t, &count, &steps);
    char line[2048];
    size_t o = 0;
    for (size_t i = 0; i < C_NKINDS && o < sizeof line; i++)
        if (t.swept[i])
            o += (size_t)snprintf(line + o, sizeof line - o, " %s %" PRIu64 "/%" PRIu64,
                                  call_names[i], t.injected[i], t.swept[i]);
    print_message("branch model with allocation failures: %" PRIu64 " seeds x %u steps, %" PRIu64
                  " views compared; failures injected / calls swept:%s\n",
                  count, steps, t.views_compared, line);
    /* Every call that allocates met its failures in a default run. */
    if (count * steps >= (uint64_t)FAULT_SEEDS * FAULT_STEPS) {
        static const call_kind allocating[] = { C_NODE_CREATE, C_NODE_SET, C_REL_CREATE,
                                                C_LABEL_ADD, C_SNAPSHOT, C_BRANCH, C_DIFF };
        for (size_t i = 0; i < sizeof allocating / sizeof *allocating; i++)
            if (t.injected[allocating[i]] == 0)
                fail_msg("no allocation failure was injected into %s",
                         call_names[allocating[i]]);
    }
}

/* A node created or deleted names no token: its change has token 0 and
   name NULL, not the name of whatever label has token 0 — or a label
   nobody interned.  Its labels follow as changes of their own. */
static void test_node_events_name_no_token(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_view *empty = NULL, *one = NULL;
    assert_int_equal(strata_snapshot(g, &empty), STRATA_OK);
    strata_id n = UINT64_MAX;
    assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);   /* no label interned */
    assert_int_equal(strata_snapshot(g, &one), STRATA_OK);
    change_list *l = calloc(1, sizeof *l);
    assert_non_null(l);
    assert_int_equal(strata_diff(empty, one, collect, l), STRATA_OK);
    assert_int_equal(l->n, 1);
    assert_int_equal(l->c[0].kind, STRATA_NODE_CREATED);
    assert_false(l->c[0].named);
    assert_int_equal(l->c[0].token, 0);

    strata_token a = intern(g, STRATA_LABEL, "A");
    assert_int_equal(a, 0);
    strata_view *labelled = NULL;
    assert_int_equal(strata_node_add_label(g, n, a), STRATA_OK);
    assert_int_equal(strata_snapshot(g, &labelled), STRATA_OK);
    list_reset(l, 0);
    assert_int_equal(strata_diff(labelled, empty, collect, l), STRATA_OK);
    assert_int_equal(l->n, 2);
    assert_int_equal(l->c[0].kind, STRATA_NODE_DELETED);
    assert_false(l->c[0].named);
    assert_int_equal(l->c[1].kind, STRATA_LABEL_REMOVED);
    assert_true(l->c[1].named);
    assert_string_equal(l->c[1].name, "A");
    free(l);
    strata_view_release(&empty);
    strata_view_release(&one);
    strata_view_release(&labelled);
    strata_graph_free(&g);
}

static void set_int(strata_graph *g, strata_id n, strata_token k, int64_t i)
{
    strata_value *v = strata_value_int(i);
    assert_int_equal(strata_node_set(g, n, k, v), STRATA_OK);
    strata_value_free(&v);
}

/* The nodes index idx holds under the integer key. */
static size_t holders(strata_graph *g, strata_index idx, int64_t key)
{
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    strata_value *part = strata_value_int(key);
    strata_node_iter *it = NULL;
    assert_int_equal(strata_index_lookup(v, idx, (const strata_value *const *)&part, 1, &it),
                     STRATA_OK);
    strata_value_free(&part);
    strata_id ids[4];
    size_t n = drain(it, ids, 4);
    strata_view_release(&v);
    return n;
}

/* A statement rolled back in a branch puts its indices back.  The first
   write of a statement to an index saves the index's stack, once per
   statement, recognised by the statement's number recorded in the index
   set — which a branch inherits.  Numbered per graph, a branch's third
   statement had the number its source's third had recorded, skipped the
   save, and its rollback left the index holding the rolled-back value. */
static void test_statement_rollback_in_a_branch_restores_indices(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token label = intern(g, STRATA_LABEL, "L"), key = intern(g, STRATA_KEY, "k");
    strata_token other = intern(g, STRATA_KEY, "other");   /* in no index */
    strata_index idx = UINT32_MAX;
    assert_int_equal(strata_index_create(g, STRATA_INDEX_HASH, false, label, &key, 1, &idx),
                     STRATA_OK);
    strata_id n = UINT64_MAX;
    assert_int_equal(strata_node_create(g, &label, 1, &n), STRATA_OK);
    for (int64_t i = 1; i <= 3; i++) {   /* the source's statements 1..3 */
        assert_int_equal(strata_statement_begin(g), STRATA_OK);
        set_int(g, n, key, i);
        assert_int_equal(strata_statement_end(g, true), STRATA_OK);
    }
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    strata_graph *b = NULL, *bb = NULL;
    assert_int_equal(strata_branch(v, &b), STRATA_OK);
    strata_view_release(&v);
    /* A branch of the branch too, made before the branch's statements. */
    assert_int_equal(strata_snapshot(b, &v), STRATA_OK);
    assert_int_equal(strata_branch(v, &bb), STRATA_OK);
    strata_view_release(&v);
    /* Statements 1..5 of each, rolled back; the third writes the indexed
       key, the others another: the index keeps 3 throughout. */
    strata_graph *const branches[] = { b, bb };
    for (size_t j = 0; j < 2; j++)
        for (int64_t i = 1; i <= 5; i++) {
            strata_graph *x = branches[j];
            assert_int_equal(strata_statement_begin(x), STRATA_OK);
            set_int(x, n, i == 3 ? key : other, 100 + i);
            assert_int_equal(strata_statement_end(x, false), STRATA_OK);
            if (holders(x, idx, 100 + i) != 0 || holders(x, idx, 3) != 1)
                fail_msg("branch %zu, statement %" PRId64 " rolled back: the index holds the "
                         "rolled-back value", j + 1, i);
        }
    assert_int_equal(holders(g, idx, 3), 1);
    strata_graph_free(&g);
    strata_graph_free(&b);
    strata_graph_free(&bb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_statement_rollback_in_a_branch_restores_indices),
        cmocka_unit_test(test_node_events_name_no_token),
        cmocka_unit_test(test_branch_model),
        cmocka_unit_test(test_branch_model_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
