/*
 * Model-based randomised test of the direct API, views, forks and indices.
 *
 * Why a model: fork, fold-back and flatten only go wrong for particular
 * interleavings of writes and view lifetimes, which hand-written cases
 * miss.  A seeded xorshift generator explores the interleavings; a plain
 * reference model, driven in lockstep with the graph, says what every view
 * must show, so a divergence — in the current state or in a view held
 * across later writes — is caught at the step that caused it.
 *
 * The model is fixed-size arrays, so copying it is one struct assignment:
 * each held view is paired with an exact copy of the model at the moment it
 * was taken.  The free lists are LIFO stacks, so the id of every create is
 * predicted exactly — including after a detach-delete, which frees the
 * node's relationships in adjacency order (by type, outgoing before
 * incoming, then in creation order) and the node last.
 *
 * After every step:
 *   (a) a fresh snapshot equals the current model;
 *   (b) every held view (up to MAX_VIEWS) equals its copy of the model;
 *   (c) strata_integrity_check() passes on each of them;
 *   (d) every create returned the id the model predicted;
 * and strata_is_forked() is false after a write with no view held and true
 * after a write that changed the graph under a held view, no index is deeper than LSTACK_CAP, and a flatten only
 * happens when some index of the state written to was at the cap.
 * "Equals" covers counts, existence, labels, properties, relationship
 * endpoints and types, neighbours per direction and type, label and type
 * scans, and, per index, its definition, entry count, a lookup of every
 * key value present plus an absent one, and random ranges over integers.
 *
 * Environment: STRATA_MODEL_SEEDS=n runs seeds 1..n (default 30);
 * STRATA_MODEL_SEED=s runs seed s alone — every failure message names its
 * seed, step and operation; STRATA_MODEL_STEPS=n sets steps per seed.
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

#include "strata.h"
#include "support/model_value.h"
#include "index/level_stack.h"

#define MAX_IDS 64        /* ids probed by every comparison */
#define NODE_LIMIT 24     /* live nodes at most, so ids stay small */
#define REL_LIMIT 48
#define NLABELS 4
#define NTYPES 3
#define NKEYS 3
#define MAX_INDEXES 8
#define MAX_VIEWS 6
#define MAX_PARTS 2       /* keys of a composite index in this test */
#define MSG_MAX 2048
#define MAX_EDGES (2 * MAX_IDS)
#define DEFAULT_SEEDS 30
#define DEFAULT_STEPS 400
/* Integer property values are drawn from [0, INT_RANGE): a small range, so
   equal values (and unique-index collisions) are common. */
#define INT_RANGE 5
#define ABSENT_INT 999    /* a key value no entity ever holds */

/* Two strings short enough to live inside a value cell, two long enough to
   go to the heap: both representations get stored, shared and compared. */
static const char *const string_pool[] = { "x", "y", "a heap string, one",
                                           "a heap string, two" };

/* ---- the reference model -------------------------------------------------- */

typedef struct mnode {
    bool alive;
    uint8_t labels;          /* bit l: carries model label l */
    mval props[NKEYS];
} mnode;

typedef struct mrel {
    bool alive;
    uint32_t start, end;
    uint32_t type;           /* model type */
    uint64_t seq;            /* creation order: the order within a segment */
    mval props[NKEYS];
} mrel;

typedef struct mindex {
    strata_index id;
    strata_index_kind kind;
    bool on_rels;
    uint32_t token;          /* model label, or model type when on_rels */
    uint32_t nkeys;
    uint32_t keys[MAX_PARTS];   /* model keys */
} mindex;

typedef struct model {
    mnode node[MAX_IDS];
    uint32_t node_slots, nodes_live;
    uint32_t node_free[MAX_IDS], nnode_free;   /* the top is the next id */
    mrel rel[MAX_IDS];
    uint32_t rel_slots, rels_live;
    uint32_t rel_free[MAX_IDS], nrel_free;
    mindex idx[MAX_INDEXES];
    uint32_t nidx;
    strata_index next_index_id;
    uint64_t seq;
} model;

typedef struct held_view {
    strata_view *v;
    model *m;                /* the model when the view was taken */
    uint32_t taken_at;       /* step */
} held_view;

/* One seed's run: the graph, the model and the views held over it. */
typedef struct run {
    uint64_t seed;
    uint32_t step;
    uint64_t rng;            /* drives the operations */
    uint64_t check_rng;      /* drives the range probes, apart so that
                                changing a check keeps a seed's operations */
    char op[256];            /* the operation of this step, for messages */
    char where[64];          /* the view being compared, for messages */
    strata_graph *g;
    strata_token label[NLABELS], type[NTYPES], key[NKEYS];
    model *m;                /* the current state */
    model *next;             /* scratch: the state a write should produce */
    held_view held[MAX_VIEWS];   /* each owns its model buffer, held or not */
    uint32_t nheld;
    bool forked_known;       /* the last write settled strata_is_forked() ... */
    bool expect_forked;      /* ... to this */
    bool cap_reached;        /* an index of the current state is at the cap */
    uint64_t views_compared;
    uint64_t outcomes[STRATA_EFULL + 1];   /* writes by expected status */
} run;

/* What a set of runs exercised, for the summary line. */
typedef struct totals {
    uint64_t views_compared;
    uint64_t outcomes[STRATA_EFULL + 1];
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
    fail_msg("seed %" PRIu64 ", step %u, after %s\n  in %s: %s\n"
             "  reproduce with STRATA_MODEL_SEED=%" PRIu64,
             r->seed, r->step, r->op, r->where, detail, r->seed);
}

/* ---- model values (the rest are in support/model_value.h) ------------------- */

static mval random_value(run *r)
{
    if (chance(&r->rng, 75))
        return mv_int(below(&r->rng, INT_RANGE));
    return mv_str(string_pool[below(&r->rng, sizeof string_pool / sizeof *string_pool)]);
}

/* ---- model state ------------------------------------------------------------ */

static uint32_t next_node_id(const model *m)
{
    return m->nnode_free ? m->node_free[m->nnode_free - 1] : m->node_slots;
}

static uint32_t next_rel_id(const model *m)
{
    return m->nrel_free ? m->rel_free[m->nrel_free - 1] : m->rel_slots;
}

static uint32_t model_node_alloc(model *m)
{
    uint32_t id = next_node_id(m);
    if (m->nnode_free)
        m->nnode_free--;
    else
        m->node_slots++;
    memset(&m->node[id], 0, sizeof m->node[id]);
    m->node[id].alive = true;
    m->nodes_live++;
    return id;
}

static void model_node_free(model *m, uint32_t id)
{
    memset(&m->node[id], 0, sizeof m->node[id]);
    m->node_free[m->nnode_free++] = id;
    m->nodes_live--;
}

static uint32_t model_rel_alloc(model *m, uint32_t start, uint32_t end, uint32_t type)
{
    uint32_t id = next_rel_id(m);
    if (m->nrel_free)
        m->nrel_free--;
    else
        m->rel_slots++;
    memset(&m->rel[id], 0, sizeof m->rel[id]);
    m->rel[id] = (mrel){ .alive = true, .start = start, .end = end, .type = type,
                         .seq = ++m->seq };
    m->rels_live++;
    return id;
}

static void model_rel_free(model *m, uint32_t id)
{
    memset(&m->rel[id], 0, sizeof m->rel[id]);
    m->rel_free[m->nrel_free++] = id;
    m->rels_live--;
}

static bool node_alive(const model *m, uint32_t id) { return id < MAX_IDS && m->node[id].alive; }
static bool rel_alive(const model *m, uint32_t id) { return id < MAX_IDS && m->rel[id].alive; }

static bool node_connected(const model *m, uint32_t n)
{
    for (uint32_t r = 0; r < MAX_IDS; r++)
        if (m->rel[r].alive && (m->rel[r].start == n || m->rel[r].end == n))
            return true;
    return false;
}

/* The relationships of n with type t in one direction, in the order the
   adjacency holds them (creation order); incoming self-loops are left out
   because the outgoing pass already has them. */
static uint32_t segment_rels(const model *m, uint32_t n, uint32_t t, bool out, uint32_t *ids)
{
    uint32_t k = 0;
    for (uint32_t r = 0; r < MAX_IDS; r++) {
        const mrel *e = &m->rel[r];
        if (!e->alive || e->type != t)
            continue;
        if (out ? e->start == n : (e->end == n && e->start != n))
            ids[k++] = r;
    }
    for (uint32_t i = 1; i < k; i++)   /* insertion sort by creation order */
        for (uint32_t j = i; j > 0 && m->rel[ids[j - 1]].seq > m->rel[ids[j]].seq; j--) {
            uint32_t x = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = x;
        }
    return k;
}

/* Detach-delete as the free lists see it: the relationships are freed in
   adjacency order (segments sorted by type, outgoing first), then the node.
   Model types are interned in order, so model order is token order. */
static void model_detach_delete(model *m, uint32_t n)
{
    uint32_t ids[MAX_IDS];
    for (uint32_t t = 0; t < NTYPES; t++)
        for (int out = 1; out >= 0; out--) {
            uint32_t k = segment_rels(m, n, t, out, ids);
            for (uint32_t i = 0; i < k; i++)
                model_rel_free(m, ids[i]);
        }
    model_node_free(m, n);
}

static const mval *entity_props(const model *m, bool on_rels, uint32_t id)
{
    if (on_rels)
        return rel_alive(m, id) ? m->rel[id].props : NULL;
    return node_alive(m, id) ? m->node[id].props : NULL;
}

static bool entity_has_token(const model *m, bool on_rels, uint32_t id, uint32_t token)
{
    if (on_rels)
        return rel_alive(m, id) && m->rel[id].type == token;
    return node_alive(m, id) && (m->node[id].labels >> token & 1);
}

/* Whether entity id is in index d, with its key parts in key. */
static bool model_key(const model *m, const mindex *d, uint32_t id, mval key[MAX_PARTS])
{
    if (!entity_has_token(m, d->on_rels, id, d->token))
        return false;
    const mval *p = entity_props(m, d->on_rels, id);
    for (uint32_t k = 0; k < d->nkeys; k++) {
        if (p[d->keys[k]].kind == MV_NONE)
            return false;
        key[k] = p[d->keys[k]];
    }
    return true;
}

static bool keys_eq(const mindex *d, const mval *a, const mval *b)
{
    for (uint32_t k = 0; k < d->nkeys; k++)
        if (!mval_eq(&a[k], &b[k]))
            return false;
    return true;
}

/* Whether two entities share a key of a unique index: the state a write
   must refuse. */
static bool unique_violated(const model *m)
{
    for (uint32_t i = 0; i < m->nidx; i++) {
        const mindex *d = &m->idx[i];
        if (d->kind != STRATA_INDEX_UNIQUE)
            continue;
        mval keys[MAX_IDS][MAX_PARTS];
        uint32_t n = 0;
        for (uint32_t id = 0; id < MAX_IDS; id++) {
            if (!model_key(m, d, id, keys[n]))
                continue;
            for (uint32_t j = 0; j < n; j++)
                if (keys_eq(d, keys[j], keys[n]))
                    return true;
            n++;
        }
    }
    return false;
}

static int find_same_index(const model *m, const mindex *d)
{
    for (uint32_t i = 0; i < m->nidx; i++) {
        const mindex *e = &m->idx[i];
        if (e->kind == d->kind && e->on_rels == d->on_rels && e->token == d->token &&
            e->nkeys == d->nkeys && !memcmp(e->keys, d->keys, d->nkeys * sizeof *d->keys))
            return (int)i;
    }
    return -1;
}

static strata_token index_token(const run *r, const mindex *d)
{
    return d->on_rels ? r->type[d->token] : r->label[d->token];
}

/* ---- expectations on writes ------------------------------------------------------ */

static void expect_status(run *r, strata_status got, strata_status want)
{
    if (got != want)
        mismatch(r, "status %s (\"%s\"), the model expects %s", strata_errstr(got),
                 strata_errmsg(r->g), strata_errstr(want));
}

static bool props_same(const mval *a, const mval *b)
{
    for (uint32_t k = 0; k < NKEYS; k++)
        if (!mval_eq(&a[k], &b[k]))
            return false;
    return true;
}

/* Whether two models describe the same graph (free lists aside). */
static bool model_same(const model *a, const model *b)
{
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        const mnode *x = &a->node[id], *y = &b->node[id];
        const mrel *p = &a->rel[id], *q = &b->rel[id];
        if (x->alive != y->alive || x->labels != y->labels || !props_same(x->props, y->props))
            return false;
        if (p->alive != q->alive || p->start != q->start || p->end != q->end ||
            p->type != q->type || !props_same(p->props, q->props))
            return false;
    }
    if (a->nidx != b->nidx)
        return false;
    for (uint32_t i = 0; i < a->nidx; i++)
        if (a->idx[i].id != b->idx[i].id)
            return false;
    return true;
}

/* A write whose status the model knows without constraints: on success the
   graph must now be r->next.  Also settles what strata_is_forked() must
   say where the header pins it down: false after a write with no view
   held (fold-back at write entry), true after a write that changed the
   graph under a held view.  Whether a refused or no-op write forks is the
   library's choice, so after one the state is left unknown. */
static void expect_outcome(run *r, strata_status got, strata_status want)
{
    r->outcomes[want]++;
    expect_status(r, got, want);
    bool changed = want == STRATA_OK && !model_same(r->m, r->next);
    if (want == STRATA_OK)
        *r->m = *r->next;
    r->forked_known = want == STRATA_OK && (r->nheld == 0 || changed);
    r->expect_forked = r->nheld > 0;
}

/* A write that would leave the graph as r->next: refused with
   STRATA_ECONSTRAINT, changing nothing, when that state breaks a unique
   index; done otherwise. */
static void expect_write(run *r, strata_status got)
{
    expect_outcome(r, got, unique_violated(r->next) ? STRATA_ECONSTRAINT : STRATA_OK);
}

static void expect_id(run *r, const char *what, strata_id got, uint32_t want)
{
    if (got != want)
        mismatch(r, "%s %" PRIu64 ", the model's free list predicts %u", what, got, want);
}

/* ---- operations: each returns false when it does not apply now --------------- */

/* A random live id of one kind, or — dead_percent of the time, or when none
   lives — an id that names nothing (a freed slot or one never used). */
static uint32_t pick_id(run *r, bool rels, uint32_t dead_percent)
{
    uint32_t live[MAX_IDS], n = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (rels ? rel_alive(r->m, id) : node_alive(r->m, id))
            live[n++] = id;
    if (n == 0 || chance(&r->rng, dead_percent)) {
        uint32_t id;
        do
            id = below(&r->rng, MAX_IDS);
        while (rels ? rel_alive(r->m, id) : node_alive(r->m, id));
        return id;
    }
    return live[below(&r->rng, n)];
}

static uint32_t pick_node(run *r, uint32_t dead_percent) { return pick_id(r, false, dead_percent); }
static uint32_t pick_rel(run *r, uint32_t dead_percent) { return pick_id(r, true, dead_percent); }

static bool op_node_create(run *r)
{
    if (r->m->nodes_live >= NODE_LIMIT)
        return false;
    strata_token labels[NLABELS];
    uint8_t mask = 0;
    size_t n = below(&r->rng, NLABELS);   /* 0..3, repeats allowed: they count once */
    for (size_t i = 0; i < n; i++) {
        uint32_t l = below(&r->rng, NLABELS);
        labels[i] = r->label[l];
        mask |= (uint8_t)(1u << l);
    }
    snprintf(r->op, sizeof r->op, "create a node with %zu labels (mask %#x)", n, mask);
    *r->next = *r->m;
    uint32_t want = model_node_alloc(r->next);
    r->next->node[want].labels = mask;
    strata_id got = UINT64_MAX;
    expect_outcome(r, strata_node_create(r->g, labels, n, &got), STRATA_OK);
    expect_id(r, "node id", got, want);
    return true;
}

static bool op_node_delete(run *r)
{
    uint32_t id = pick_node(r, 10);
    snprintf(r->op, sizeof r->op, "delete node %u", id);
    *r->next = *r->m;
    strata_status want = STRATA_OK;
    if (!node_alive(r->m, id))
        want = STRATA_ENOTFOUND;
    else if (node_connected(r->m, id))
        want = STRATA_ECONNECTED;
    else
        model_node_free(r->next, id);
    expect_outcome(r, strata_node_delete(r->g, id), want);
    return true;
}

static bool op_node_detach_delete(run *r)
{
    uint32_t id = pick_node(r, 5);
    snprintf(r->op, sizeof r->op, "detach-delete node %u", id);
    *r->next = *r->m;
    strata_status want = STRATA_ENOTFOUND;
    if (node_alive(r->m, id)) {
        model_detach_delete(r->next, id);
        want = STRATA_OK;
    }
    expect_outcome(r, strata_node_detach_delete(r->g, id), want);
    return true;
}

static bool label_op(run *r, bool add)
{
    uint32_t id = pick_node(r, 5), l = below(&r->rng, NLABELS);
    snprintf(r->op, sizeof r->op, "%s label %u %s node %u", add ? "add" : "remove", l,
             add ? "to" : "from", id);
    *r->next = *r->m;
    strata_status s = add ? strata_node_add_label(r->g, id, r->label[l])
                          : strata_node_remove_label(r->g, id, r->label[l]);
    if (!node_alive(r->m, id)) {
        expect_outcome(r, s, STRATA_ENOTFOUND);
        return true;
    }
    if (add)
        r->next->node[id].labels |= (uint8_t)(1u << l);
    else
        r->next->node[id].labels &= (uint8_t)~(1u << l);
    expect_write(r, s);
    return true;
}

static bool op_label_add(run *r) { return label_op(r, true); }
static bool op_label_remove(run *r) { return label_op(r, false); }

/* Sets (or with val NULL removes) property k of a node or relationship.
   Removal goes through strata_*_remove or through setting null: both are
   the same write. */
static strata_status prop_write(run *r, bool rel, uint32_t id, uint32_t k, const mval *val)
{
    strata_value *api = NULL;
    if (val)
        api = mval_to_api(val);
    else if (chance(&r->rng, 30))
        api = strata_value_null();
    strata_status s;
    if (api)
        s = rel ? strata_rel_set(r->g, id, r->key[k], api) : strata_node_set(r->g, id, r->key[k], api);
    else
        s = rel ? strata_rel_remove(r->g, id, r->key[k]) : strata_node_remove(r->g, id, r->key[k]);
    strata_value_free(&api);
    return s;
}

static bool prop_op(run *r, bool rel, bool set)
{
    uint32_t id = rel ? pick_rel(r, 5) : pick_node(r, 5), k = below(&r->rng, NKEYS);
    mval val = set ? random_value(r) : (mval){ .kind = MV_NONE };
    char text[64];
    snprintf(r->op, sizeof r->op, "%s property %u of %s %u%s%s", set ? "set" : "remove", k,
             rel ? "relationship" : "node", id, set ? " to " : "",
             set ? mval_text(&val, text, sizeof text) : "");
    *r->next = *r->m;
    strata_status s = prop_write(r, rel, id, k, set ? &val : NULL);
    if (!(rel ? rel_alive(r->m, id) : node_alive(r->m, id))) {
        expect_outcome(r, s, STRATA_ENOTFOUND);
        return true;
    }
    (rel ? r->next->rel[id].props : r->next->node[id].props)[k] = val;
    expect_write(r, s);
    return true;
}

static bool op_node_set(run *r) { return prop_op(r, false, true); }
static bool op_node_remove(run *r) { return prop_op(r, false, false); }
static bool op_rel_set(run *r) { return prop_op(r, true, true); }
static bool op_rel_remove(run *r) { return prop_op(r, true, false); }

static bool op_rel_create(run *r)
{
    if (r->m->rels_live >= REL_LIMIT)
        return false;
    uint32_t start = pick_node(r, 3);
    uint32_t end = chance(&r->rng, 15) ? start : pick_node(r, 3);
    uint32_t t = below(&r->rng, NTYPES);
    snprintf(r->op, sizeof r->op, "create a relationship %u -[type %u]-> %u", start, t, end);
    *r->next = *r->m;
    strata_status want = STRATA_ENOTFOUND;
    uint32_t want_id = 0;
    if (node_alive(r->m, start) && node_alive(r->m, end)) {
        want_id = model_rel_alloc(r->next, start, end, t);
        want = STRATA_OK;
    }
    strata_id got = UINT64_MAX;
    expect_outcome(r, strata_rel_create(r->g, start, end, r->type[t], &got), want);
    if (want == STRATA_OK)
        expect_id(r, "relationship id", got, want_id);
    return true;
}

static bool op_rel_delete(run *r)
{
    uint32_t id = pick_rel(r, 10);
    snprintf(r->op, sizeof r->op, "delete relationship %u", id);
    *r->next = *r->m;
    strata_status want = STRATA_ENOTFOUND;
    if (rel_alive(r->m, id)) {
        model_rel_free(r->next, id);
        want = STRATA_OK;
    }
    expect_outcome(r, strata_rel_delete(r->g, id), want);
    return true;
}

static const char *const kind_names[] = { "hash", "range", "unique" };

static void index_text(const mindex *d, char *buf, size_t n)
{
    if (d->nkeys == 1)
        snprintf(buf, n, "%s index on %s %u (key %u)", kind_names[d->kind],
                 d->on_rels ? "type" : "label", d->token, d->keys[0]);
    else
        snprintf(buf, n, "%s index on %s %u (keys %u, %u)", kind_names[d->kind],
                 d->on_rels ? "type" : "label", d->token, d->keys[0], d->keys[1]);
}

static bool op_index_create(run *r)
{
    mindex d = { 0 };
    d.kind = (strata_index_kind)below(&r->rng, 3);
    d.on_rels = chance(&r->rng, 25);
    d.token = below(&r->rng, d.on_rels ? NTYPES : NLABELS);
    d.nkeys = chance(&r->rng, 30) ? 2 : 1;
    d.keys[0] = below(&r->rng, NKEYS);
    d.keys[1] = (d.keys[0] + 1 + below(&r->rng, NKEYS - 1)) % NKEYS;
    int same = find_same_index(r->m, &d);
    if (same < 0 && r->m->nidx >= MAX_INDEXES)
        return false;
    char text[128];
    index_text(&d, text, sizeof text);
    snprintf(r->op, sizeof r->op, "create a %s", text);
    strata_token keys[MAX_PARTS] = { r->key[d.keys[0]], r->key[d.keys[1]] };
    strata_index got = UINT32_MAX;
    strata_status s =
        strata_index_create(r->g, d.kind, d.on_rels, index_token(r, &d), keys, d.nkeys, &got);
    if (same >= 0) {
        /* An index of the same kind on the same keys: refused, naming it. */
        expect_outcome(r, s, STRATA_EINVAL);
        if (got != r->m->idx[same].id)
            mismatch(r, "a refused duplicate index names index %u, not the existing %u", got,
                     r->m->idx[same].id);
        return true;
    }
    *r->next = *r->m;
    d.id = r->next->next_index_id++;
    r->next->idx[r->next->nidx++] = d;
    expect_write(r, s);
    if (s == STRATA_OK && got != d.id)
        mismatch(r, "the new index has id %u, the model expects %u", got, d.id);
    return true;
}

static bool op_index_drop(run *r)
{
    const model *m = r->m;
    /* Mostly a live index; otherwise any id up to two past the last one
       handed out: dropped, refused or never assigned, all not found. */
    strata_index id = m->nidx && chance(&r->rng, 80) ? m->idx[below(&r->rng, m->nidx)].id
                                                    : below(&r->rng, m->next_index_id + 2);
    snprintf(r->op, sizeof r->op, "drop index %u", id);
    *r->next = *m;
    strata_status want = STRATA_ENOTFOUND;
    for (uint32_t i = 0; i < r->next->nidx; i++)
        if (r->next->idx[i].id == id) {
            r->next->idx[i] = r->next->idx[--r->next->nidx];
            want = STRATA_OK;
            break;
        }
    expect_outcome(r, strata_index_drop(r->g, id), want);
    return true;
}

/* Moves an entity one write closer to sharing a unique index key with
   another: sets the first key part that differs, or — when every part
   already matches, on a node without the label — adds the label.  When
   that write completes the collision the model expects STRATA_ECONSTRAINT
   and no change; the candidate needing fewest writes is chosen, so
   collisions are frequent. */
static bool op_unique_clash(run *r)
{
    const model *m = r->m;
    uint32_t uniq[MAX_INDEXES], nu = 0;
    for (uint32_t i = 0; i < m->nidx; i++)
        if (m->idx[i].kind == STRATA_INDEX_UNIQUE)
            uniq[nu++] = i;
    if (!nu)
        return false;
    const mindex *d = &m->idx[uniq[below(&r->rng, nu)]];
    uint32_t holders[MAX_IDS], nh = 0;
    mval key[MAX_PARTS];
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (model_key(m, d, id, key))
            holders[nh++] = id;
    if (!nh)
        return false;
    uint32_t a = holders[below(&r->rng, nh)];
    model_key(m, d, a, key);
    uint32_t best = UINT32_MAX, best_cost = UINT32_MAX, first = below(&r->rng, MAX_IDS);
    for (uint32_t off = 0; off < MAX_IDS; off++) {
        uint32_t b = (first + off) % MAX_IDS;
        const mval *p = entity_props(m, d->on_rels, b);
        bool covered = entity_has_token(m, d->on_rels, b, d->token);
        if (b == a || !p || (d->on_rels && !covered))   /* a type cannot change */
            continue;
        uint32_t cost = covered ? 0 : 1;
        for (uint32_t k = 0; k < d->nkeys; k++)
            cost += !mval_eq(&p[d->keys[k]], &key[k]);
        if (cost < best_cost) {
            best = b;
            best_cost = cost;
        }
    }
    if (best == UINT32_MAX)
        return false;
    const mval *p = entity_props(m, d->on_rels, best);
    *r->next = *m;
    for (uint32_t k = 0; k < d->nkeys; k++) {
        if (mval_eq(&p[d->keys[k]], &key[k]))
            continue;
        char text[64];
        snprintf(r->op, sizeof r->op,
                 "unique clash with %s %u on index %u: set property %u of %u to %s",
                 d->on_rels ? "relationship" : "node", a, d->id, d->keys[k], best,
                 mval_text(&key[k], text, sizeof text));
        (d->on_rels ? r->next->rel[best].props : r->next->node[best].props)[d->keys[k]] = key[k];
        expect_write(r, prop_write(r, d->on_rels, best, d->keys[k], &key[k]));
        return true;
    }
    snprintf(r->op, sizeof r->op, "unique clash with node %u on index %u: add label %u to %u", a,
             d->id, d->token, best);
    r->next->node[best].labels |= (uint8_t)(1u << d->token);
    expect_write(r, strata_node_add_label(r->g, best, r->label[d->token]));
    return true;
}

static bool op_view_take(run *r)
{
    if (r->nheld == MAX_VIEWS)
        return false;
    snprintf(r->op, sizeof r->op, "take view #%u", r->nheld);
    held_view *h = &r->held[r->nheld];
    h->v = NULL;
    expect_status(r, strata_snapshot(r->g, &h->v), STRATA_OK);
    *h->m = *r->m;
    h->taken_at = r->step;
    r->nheld++;
    return true;
}

static bool op_view_release(run *r)
{
    if (r->nheld == 0)
        return false;
    uint32_t i = below(&r->rng, r->nheld);
    snprintf(r->op, sizeof r->op, "release the view taken at step %u", r->held[i].taken_at);
    strata_view_release(&r->held[i].v);
    if (r->held[i].v != NULL)
        mismatch(r, "strata_view_release left the handle set");
    /* Keep held[0..nheld) dense; the released slot keeps its model buffer
       for the next view taken. */
    held_view released = r->held[i];
    r->held[i] = r->held[--r->nheld];
    r->held[r->nheld] = released;
    return true;
}

typedef struct op_entry {
    bool (*run)(run *r);
    uint32_t weight;
} op_entry;

static const op_entry ops[] = {
    { op_node_create, 12 },  { op_node_delete, 4 },   { op_node_detach_delete, 3 },
    { op_label_add, 8 },     { op_label_remove, 5 },  { op_node_set, 14 },
    { op_node_remove, 4 },   { op_rel_create, 12 },   { op_rel_delete, 5 },
    { op_rel_set, 6 },       { op_rel_remove, 2 },    { op_index_create, 3 },
    { op_index_drop, 1 },    { op_unique_clash, 4 },  { op_view_take, 6 },
    { op_view_release, 5 },
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

/* ---- comparing a view with a model ----------------------------------------- */

/* Drains and frees an iterator; *n is the count (ids past cap are counted,
   not stored).  A runaway iterator stops at 4 * cap. */
static size_t drain(strata_node_iter *it, strata_id *ids, size_t cap)
{
    size_t n = 0;
    strata_id id;
    while (n < 4 * cap && strata_node_iter_next(it, &id)) {
        if (n < cap)
            ids[n] = id;
        n++;
    }
    strata_node_iter_free(&it);
    return n;
}

static void ids_text(const strata_id *ids, size_t n, size_t cap, char *buf, size_t len)
{
    size_t w = (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < n && i < cap && w < len; i++)
        w += (size_t)snprintf(buf + w, len - w, "%s%" PRIu64, i ? " " : "", ids[i]);
    if (w < len)
        snprintf(buf + w, len - w, "%s]", n > cap ? " ..." : "");
}

static void expect_ids(run *r, const char *what, const strata_id *got, size_t ngot,
                       const strata_id *want, size_t nwant, size_t cap)
{
    if (ngot == nwant && memcmp(got, want, nwant * sizeof *want) == 0)
        return;
    char g[512], w[512];
    ids_text(got, ngot, cap, g, sizeof g);
    ids_text(want, nwant, nwant, w, sizeof w);
    mismatch(r, "%s: got %zu ids %s, the model has %zu %s", what, ngot, g, nwant, w);
}

static void compare_props(run *r, strata_view *v, bool rel, uint32_t id, const mval *props)
{
    const char *what = rel ? "relationship" : "node";
    strata_token keys[NKEYS + 4], want_keys[NKEYS];
    size_t n = 0, nwant = 0;
    for (uint32_t k = 0; k < NKEYS; k++)   /* model keys are in token order */
        if (props[k].kind != MV_NONE)
            want_keys[nwant++] = r->key[k];
    strata_status s = rel ? strata_rel_keys(v, id, keys, NKEYS + 4, &n)
                          : strata_node_keys(v, id, keys, NKEYS + 4, &n);
    if (s != STRATA_OK)
        mismatch(r, "%s %u keys: %s", what, id, strata_errstr(s));
    if (n != nwant || memcmp(keys, want_keys, n * sizeof *keys) != 0)
        mismatch(r, "%s %u has %zu property keys, the model %zu", what, id, n, nwant);
    for (uint32_t k = 0; k < NKEYS; k++) {
        strata_value *got = NULL;
        s = rel ? strata_rel_get(v, id, r->key[k], &got) : strata_node_get(v, id, r->key[k], &got);
        if (s != STRATA_OK)
            mismatch(r, "%s %u get property %u: %s", what, id, k, strata_errstr(s));
        if (!api_matches(got, &props[k])) {
            char a[64], b[64];
            api_text(got, a, sizeof a);
            strata_value_free(&got);
            mismatch(r, "%s %u property %u is %s, the model has %s", what, id, k, a,
                     mval_text(&props[k], b, sizeof b));
        }
        strata_value_free(&got);
    }
}

static void compare_node(run *r, strata_view *v, const model *m, uint32_t id)
{
    bool alive = m->node[id].alive;
    if (strata_node_exists(v, id) != alive)
        mismatch(r, "node %u %s, the model says it %s", id,
                 alive ? "does not exist" : "exists", alive ? "does" : "does not");
    if (!alive)
        return;
    strata_token labels[NLABELS + 4], want[NLABELS];
    size_t n = 0, nwant = 0;
    for (uint32_t l = 0; l < NLABELS; l++)   /* model labels are in token order */
        if (m->node[id].labels >> l & 1)
            want[nwant++] = r->label[l];
    strata_status s = strata_node_labels(v, id, labels, NLABELS + 4, &n);
    if (s != STRATA_OK || n != nwant || memcmp(labels, want, n * sizeof *labels) != 0)
        mismatch(r, "node %u has %zu labels (%s), the model %zu (mask %#x)", id, n,
                 strata_errstr(s), nwant, m->node[id].labels);
    for (uint32_t l = 0; l < NLABELS; l++) {
        bool on = false;
        s = strata_node_has_label(v, id, r->label[l], &on);
        if (s != STRATA_OK || on != (bool)(m->node[id].labels >> l & 1))
            mismatch(r, "node %u has_label %u says %d (%s)", id, l, on, strata_errstr(s));
    }
    compare_props(r, v, false, id, m->node[id].props);
}

static void compare_rel(run *r, strata_view *v, const model *m, uint32_t id)
{
    const mrel *e = &m->rel[id];
    if (strata_rel_exists(v, id) != e->alive)
        mismatch(r, "relationship %u %s, the model says it %s", id,
                 e->alive ? "does not exist" : "exists", e->alive ? "does" : "does not");
    if (!e->alive)
        return;
    strata_id start = UINT64_MAX, end = UINT64_MAX;
    strata_token type = UINT32_MAX;
    strata_status s = strata_rel_info(v, id, &start, &end, &type);
    if (s != STRATA_OK || start != e->start || end != e->end || type != r->type[e->type])
        mismatch(r, "relationship %u is %" PRIu64 " -[%u]-> %" PRIu64 " (%s), the model has "
                 "%u -[%u]-> %u", id, start, type, end, strata_errstr(s), e->start,
                 r->type[e->type], e->end);
    compare_props(r, v, true, id, e->props);
}

static void compare_scans(run *r, strata_view *v, const model *m)
{
    strata_id got[MAX_IDS], want[MAX_IDS];
    strata_node_iter *it = NULL;
    char what[64];
    size_t nwant = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (m->node[id].alive)
            want[nwant++] = id;
    if (strata_nodes(v, &it) != STRATA_OK)
        mismatch(r, "strata_nodes failed: %s", strata_view_errmsg(v));
    size_t n = drain(it, got, MAX_IDS);
    expect_ids(r, "strata_nodes", got, n, want, nwant, MAX_IDS);
    for (uint32_t l = 0; l < NLABELS; l++) {
        nwant = 0;
        for (uint32_t id = 0; id < MAX_IDS; id++)
            if (m->node[id].alive && (m->node[id].labels >> l & 1))
                want[nwant++] = id;
        if (strata_nodes_by_label(v, r->label[l], &it) != STRATA_OK)
            mismatch(r, "strata_nodes_by_label failed: %s", strata_view_errmsg(v));
        n = drain(it, got, MAX_IDS);
        snprintf(what, sizeof what, "nodes with label %u", l);
        expect_ids(r, what, got, n, want, nwant, MAX_IDS);
    }
    for (uint32_t t = 0; t < NTYPES; t++) {
        nwant = 0;
        for (uint32_t id = 0; id < MAX_IDS; id++)
            if (m->rel[id].alive && m->rel[id].type == t)
                want[nwant++] = id;
        if (strata_rels_by_type(v, r->type[t], &it) != STRATA_OK)
            mismatch(r, "strata_rels_by_type failed: %s", strata_view_errmsg(v));
        n = drain(it, got, MAX_IDS);
        snprintf(what, sizeof what, "relationships of type %u", t);
        expect_ids(r, what, got, n, want, nwant, MAX_IDS);
    }
}

typedef struct edge {
    strata_id rel, other;
} edge;

static int edge_cmp(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->rel != y->rel)
        return x->rel < y->rel ? -1 : 1;
    return (x->other > y->other) - (x->other < y->other);
}

/* The model's neighbours of n: BOTH reports a self-loop once. */
static size_t model_edges(const model *m, uint32_t n, strata_direction dir, int type, edge *out)
{
    size_t k = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        const mrel *e = &m->rel[id];
        if (!e->alive || (type >= 0 && e->type != (uint32_t)type))
            continue;
        if ((dir & STRATA_OUT) && e->start == n)
            out[k++] = (edge){ id, e->end };
        else if ((dir & STRATA_IN) && e->end == n)
            out[k++] = (edge){ id, e->start };
    }
    qsort(out, k, sizeof *out, edge_cmp);
    return k;
}

static void compare_neighbours(run *r, strata_view *v, const model *m, uint32_t n)
{
    static const strata_direction dirs[] = { STRATA_OUT, STRATA_IN, STRATA_BOTH };
    static const char *const dir_names[] = { "", "out", "in", "both" };
    for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++)
        for (int t = -1; t < NTYPES; t++) {
            strata_token tok = t < 0 ? STRATA_ANY_TYPE : r->type[t];
            edge got[MAX_EDGES], want[MAX_EDGES];
            size_t nwant = model_edges(m, n, dirs[d], t, want), ngot = 0;
            strata_edge_iter *it = NULL;
            if (strata_neighbours(v, n, dirs[d], tok, &it) != STRATA_OK)
                mismatch(r, "strata_neighbours of node %u: %s", n, strata_view_errmsg(v));
            edge e;
            while (ngot < MAX_EDGES && strata_edge_iter_next(it, &e.rel, &e.other))
                got[ngot++] = e;
            strata_edge_iter_free(&it);
            qsort(got, ngot, sizeof *got, edge_cmp);
            bool same = ngot == nwant;
            for (size_t i = 0; same && i < ngot; i++)
                same = got[i].rel == want[i].rel && got[i].other == want[i].other;
            if (!same) {
                char g[512] = "", w[512] = "";
                for (size_t i = 0, o = 0; i < ngot && o < sizeof g; i++)
                    o += (size_t)snprintf(g + o, sizeof g - o, " (r%" PRIu64 ",n%" PRIu64 ")",
                                          got[i].rel, got[i].other);
                for (size_t i = 0, o = 0; i < nwant && o < sizeof w; i++)
                    o += (size_t)snprintf(w + o, sizeof w - o, " (r%" PRIu64 ",n%" PRIu64 ")",
                                          want[i].rel, want[i].other);
                mismatch(r, "neighbours of node %u, direction %s, type %d:%s; the model has%s",
                         n, dir_names[dirs[d]], t, g, w);
            }
            uint64_t deg = UINT64_MAX;
            if (strata_node_degree(v, n, dirs[d], tok, &deg) != STRATA_OK || deg != nwant)
                mismatch(r, "degree of node %u, direction %s, type %d is %" PRIu64
                         ", the model %zu", n, dir_names[dirs[d]], t, deg, nwant);
        }
}

static void key_text(const mindex *d, const mval *key, char *buf, size_t n)
{
    char a[64], b[64];
    if (d->nkeys == 1)
        snprintf(buf, n, "%s", mval_text(&key[0], a, sizeof a));
    else
        snprintf(buf, n, "[%s, %s]", mval_text(&key[0], a, sizeof a),
                 mval_text(&key[1], b, sizeof b));
}

/* strata_index_lookup of key must return exactly the model's holders, in
   id order. */
static void compare_lookup(run *r, strata_view *v, const model *m, const mindex *d,
                           const mval *key)
{
    strata_id want[MAX_IDS], got[MAX_IDS];
    size_t nwant = 0;
    mval k[MAX_PARTS];
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (model_key(m, d, id, k) && keys_eq(d, k, key))
            want[nwant++] = id;
    strata_value *parts[MAX_PARTS] = { NULL, NULL };
    for (uint32_t i = 0; i < d->nkeys; i++)
        parts[i] = mval_to_api(&key[i]);
    strata_node_iter *it = NULL;
    strata_status s =
        strata_index_lookup(v, d->id, (const strata_value *const *)parts, d->nkeys, &it);
    /* The key is borrowed for the call only: free it before iterating. */
    for (uint32_t i = 0; i < d->nkeys; i++)
        strata_value_free(&parts[i]);
    char kt[160], what[256];
    key_text(d, key, kt, sizeof kt);
    if (s != STRATA_OK)
        mismatch(r, "lookup of %s in index %u: %s (%s)", kt, d->id, strata_errstr(s),
                 strata_view_errmsg(v));
    size_t n = drain(it, got, MAX_IDS);
    snprintf(what, sizeof what, "lookup of %s in index %u", kt, d->id);
    expect_ids(r, what, got, n, want, nwant, MAX_IDS);
}

static int64_t random_bound(run *r) { return (int64_t)below(&r->check_rng, INT_RANGE + 2) - 1; }

/* A random integer range over a single-key index must return the model's
   entities with an integer key inside it, in (value, id) order; strings
   are never in an integer range. */
static void compare_range(run *r, strata_view *v, const model *m, const mindex *d)
{
    bool has_lo = chance(&r->check_rng, 75);
    bool has_hi = !has_lo || chance(&r->check_rng, 75);
    int64_t lo = random_bound(r), hi = random_bound(r);
    bool lo_incl = chance(&r->check_rng, 50), hi_incl = chance(&r->check_rng, 50);
    strata_id want[MAX_IDS], got[MAX_IDS];
    size_t nwant = 0;
    for (int64_t val = -1; val <= INT_RANGE; val++)   /* ascending value, then id */
        for (uint32_t id = 0; id < MAX_IDS; id++) {
            mval k[MAX_PARTS];
            if (!model_key(m, d, id, k) || k[0].kind != MV_INT || k[0].i != val)
                continue;
            if (has_lo && (val < lo || (val == lo && !lo_incl)))
                continue;
            if (has_hi && (val > hi || (val == hi && !hi_incl)))
                continue;
            want[nwant++] = id;
        }
    strata_value *lov = has_lo ? strata_value_int(lo) : NULL;
    strata_value *hiv = has_hi ? strata_value_int(hi) : NULL;
    strata_node_iter *it = NULL;
    strata_status s = strata_index_range(v, d->id, lov, lo_incl, hiv, hi_incl, &it);
    strata_value_free(&lov);
    strata_value_free(&hiv);
    char what[160];
    snprintf(what, sizeof what, "range %s%s%" PRId64 ", %" PRId64 "%s%s in index %u",
             has_lo ? "" : "(open) ", lo_incl ? "[" : "(", lo, hi, hi_incl ? "]" : ")",
             has_hi ? "" : " (open)", d->id);
    if (s != STRATA_OK)
        mismatch(r, "%s: %s (%s)", what, strata_errstr(s), strata_view_errmsg(v));
    size_t n = drain(it, got, MAX_IDS);
    expect_ids(r, what, got, n, want, nwant, MAX_IDS);
}

static void compare_index(run *r, strata_view *v, const model *m, const mindex *d)
{
    strata_index_info info;
    strata_status s = strata_index_info_get(v, d->id, &info);
    if (s != STRATA_OK)
        mismatch(r, "index %u info: %s (%s)", d->id, strata_errstr(s), strata_view_errmsg(v));
    mval keys[MAX_IDS][MAX_PARTS];
    uint32_t nkeys = 0, entries = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        if (!model_key(m, d, id, keys[nkeys]))
            continue;
        entries++;
        bool seen = false;
        for (uint32_t j = 0; j < nkeys && !seen; j++)
            seen = keys_eq(d, keys[j], keys[nkeys]);
        nkeys += !seen;
    }
    bool keys_ok = info.nkeys == d->nkeys;
    for (uint32_t k = 0; keys_ok && k < d->nkeys; k++)
        keys_ok = info.keys[k] == r->key[d->keys[k]];
    if (info.kind != d->kind || info.relationships != d->on_rels ||
        info.token != index_token(r, d) || !keys_ok)
        mismatch(r, "index %u is a %d index on %s token %u with %zu keys, not the model's",
                 d->id, (int)info.kind, info.relationships ? "type" : "label", info.token,
                 info.nkeys);
    if (info.entries != entries)
        mismatch(r, "index %u holds %" PRIu64 " entries, the model %u", d->id, info.entries,
                 entries);
    if (info.depth > LSTACK_CAP)
        mismatch(r, "index %u has depth %u, above the cap %d", d->id, info.depth, LSTACK_CAP);
    if (info.depth == LSTACK_CAP)
        r->cap_reached = true;
    for (uint32_t j = 0; j < nkeys; j++)
        compare_lookup(r, v, m, d, keys[j]);
    mval absent[MAX_PARTS] = { mv_int(ABSENT_INT), mv_int(ABSENT_INT) };
    compare_lookup(r, v, m, d, absent);
    if (d->nkeys == 1)
        for (int i = 0; i < 2; i++)
            compare_range(r, v, m, d);
}

static void compare_indexes(run *r, strata_view *v, const model *m)
{
    strata_index ids[MAX_INDEXES + 4];
    size_t n = 0;
    strata_status s = strata_indexes(v, ids, MAX_INDEXES + 4, &n);
    if (s != STRATA_OK || n != m->nidx)
        mismatch(r, "the view lists %zu indices (%s), the model %u", n, strata_errstr(s),
                 m->nidx);
    for (uint32_t i = 0; i < m->nidx; i++) {
        bool listed = false;
        for (size_t j = 0; j < n && !listed; j++)
            listed = ids[j] == m->idx[i].id;
        if (!listed)
            mismatch(r, "index %u is not listed by strata_indexes", m->idx[i].id);
    }
    for (uint32_t i = 0; i < m->nidx; i++)
        compare_index(r, v, m, &m->idx[i]);
}

static void compare_view(run *r, strata_view *v, const model *m)
{
    strata_status s = strata_integrity_check(v);
    if (s != STRATA_OK)
        mismatch(r, "strata_integrity_check: %s (%s)", strata_errstr(s), strata_view_errmsg(v));
    if (strata_node_count(v) != m->nodes_live || strata_rel_count(v) != m->rels_live)
        mismatch(r, "%" PRIu64 " nodes and %" PRIu64 " relationships, the model has %u and %u",
                 strata_node_count(v), strata_rel_count(v), m->nodes_live, m->rels_live);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        compare_node(r, v, m, id);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        compare_rel(r, v, m, id);
    compare_scans(r, v, m);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (m->node[id].alive)
            compare_neighbours(r, v, m, id);
    compare_indexes(r, v, m);
    r->views_compared++;
}

/* Everything checked after a step; flattens_before and cap_before are read
   before the step ran. */
static void check_step(run *r, uint64_t flattens_before, bool cap_before)
{
    snprintf(r->where, sizeof r->where, "the graph");
    /* Only writes change the fork state: taking or releasing a view does
       not, so a state the last write settled still holds. */
    if (r->forked_known && strata_is_forked(r->g) != r->expect_forked)
        mismatch(r, "strata_is_forked is %d with %u views held", !r->expect_forked, r->nheld);
    if (lstack_flattens() != flattens_before && !cap_before)
        mismatch(r, "a level stack flattened although no index of the state written to was "
                 "at depth %d", LSTACK_CAP);

    strata_view *fresh = NULL;
    snprintf(r->where, sizeof r->where, "a fresh snapshot");
    expect_status(r, strata_snapshot(r->g, &fresh), STRATA_OK);
    r->cap_reached = false;   /* recomputed from the current state */
    compare_view(r, fresh, r->m);
    strata_view_release(&fresh);

    bool cap = r->cap_reached;
    for (uint32_t i = 0; i < r->nheld; i++) {
        snprintf(r->where, sizeof r->where, "the view taken at step %u", r->held[i].taken_at);
        compare_view(r, r->held[i].v, r->held[i].m);
    }
    r->cap_reached = cap;
}

/* ---- the runs ----------------------------------------------------------------- */

static void intern_all(run *r)
{
    char name[16];
    for (uint32_t i = 0; i < NLABELS; i++) {
        snprintf(name, sizeof name, "L%u", i);
        assert_int_equal(strata_token_intern(r->g, STRATA_LABEL, name, &r->label[i]), STRATA_OK);
    }
    for (uint32_t i = 0; i < NTYPES; i++) {
        snprintf(name, sizeof name, "T%u", i);
        assert_int_equal(strata_token_intern(r->g, STRATA_RELTYPE, name, &r->type[i]),
                         STRATA_OK);
    }
    for (uint32_t i = 0; i < NKEYS; i++) {
        snprintf(name, sizeof name, "k%u", i);
        assert_int_equal(strata_token_intern(r->g, STRATA_KEY, name, &r->key[i]), STRATA_OK);
    }
    /* The model relies on token order matching model order: sorted labels,
       sorted keys and adjacency segments follow token order. */
    for (uint32_t i = 1; i < NLABELS; i++)
        assert_true(r->label[i - 1] < r->label[i]);
    for (uint32_t i = 1; i < NTYPES; i++)
        assert_true(r->type[i - 1] < r->type[i]);
    for (uint32_t i = 1; i < NKEYS; i++)
        assert_true(r->key[i - 1] < r->key[i]);
}

static run *run_new(uint64_t seed)
{
    run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->seed = seed;
    /* Spread small seeds over the state space; xorshift needs non-zero. */
    r->rng = (seed * 0x9E3779B97F4A7C15ull) | 1;
    r->check_rng = (seed * 0xD1B54A32D192ED03ull) ^ 0x5851F42D4C957F2Dull;
    if (!r->check_rng)
        r->check_rng = 1;
    r->m = calloc(1, sizeof *r->m);
    r->next = calloc(1, sizeof *r->next);
    assert_non_null(r->m);
    assert_non_null(r->next);
    for (uint32_t i = 0; i < MAX_VIEWS; i++) {
        r->held[i].m = calloc(1, sizeof(model));
        assert_non_null(r->held[i].m);
    }
    assert_int_equal(strata_graph_new(&r->g), STRATA_OK);
    intern_all(r);
    snprintf(r->op, sizeof r->op, "setup");
    return r;
}

static void run_free(run **rp)
{
    run *r = *rp;
    for (uint32_t i = 0; i < r->nheld; i++)
        strata_view_release(&r->held[i].v);
    strata_graph_free(&r->g);
    for (uint32_t i = 0; i < MAX_VIEWS; i++)
        free(r->held[i].m);
    free(r->m);
    free(r->next);
    free(r);
    *rp = NULL;
}

static void run_seed(uint64_t seed, uint32_t steps, totals *t)
{
    run *r = run_new(seed);
    for (r->step = 1; r->step <= steps; r->step++) {
        uint64_t flattens = lstack_flattens();
        bool cap = r->cap_reached;
        run_random_op(r);
        check_step(r, flattens, cap);
    }
    t->views_compared += r->views_compared;
    for (size_t i = 0; i < sizeof t->outcomes / sizeof *t->outcomes; i++)
        t->outcomes[i] += r->outcomes[i];
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

static void test_model_random(void **state)
{
    (void)state;
    uint32_t steps = (uint32_t)env_or("STRATA_MODEL_STEPS", DEFAULT_STEPS);
    uint64_t first = 1, count = env_or("STRATA_MODEL_SEEDS", DEFAULT_SEEDS);
    if (getenv("STRATA_MODEL_SEED")) {
        first = env_or("STRATA_MODEL_SEED", 1);
        count = 1;
    }
    uint64_t flattens = lstack_flattens();
    totals t = { 0 };
    for (uint64_t seed = first; seed < first + count; seed++)
        run_seed(seed, steps, &t);
    flattens = lstack_flattens() - flattens;
    print_message("model: %" PRIu64 " seeds x %u steps, %" PRIu64 " views compared, %" PRIu64
                  " flattens; writes: %" PRIu64 " ok, %" PRIu64 " unique violations, %" PRIu64
                  " still connected, %" PRIu64 " not found, %" PRIu64 " duplicate indices\n",
                  count, steps, t.views_compared, flattens, t.outcomes[STRATA_OK],
                  t.outcomes[STRATA_ECONSTRAINT], t.outcomes[STRATA_ECONNECTED],
                  t.outcomes[STRATA_ENOTFOUND], t.outcomes[STRATA_EINVAL]);
    /* Views are held across many writes in a default run, so the indices
       reach the cap; no flatten means the layering stopped growing.  (At
       the production sizes a level takes LSTACK_LEVEL_MAX entries before
       the next is pushed: a model run never reaches the cap.) */
#ifndef STRATA_FULL_SIZES
    if (count * steps >= (uint64_t)DEFAULT_SEEDS * DEFAULT_STEPS)
        assert_true(flattens > 0);
#endif
}

/* ---- targeted tests ----------------------------------------------------------- */

static strata_token intern(strata_graph *g, strata_token_kind kind, const char *name)
{
    strata_token t = 0;
    assert_int_equal(strata_token_intern(g, kind, name, &t), STRATA_OK);
    return t;
}

static void set_int(strata_graph *g, strata_id node, strata_token key, int64_t i)
{
    strata_value *v = strata_value_int(i);
    assert_non_null(v);
    strata_status s = strata_node_set(g, node, key, v);
    if (s != STRATA_OK)
        fail_msg("setting node %" PRIu64 ": %s", node, strata_errmsg(g));
    strata_value_free(&v);
}

static strata_view *snap(strata_graph *g)
{
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    return v;
}

static uint32_t index_depth(strata_view *v, strata_index idx)
{
    strata_index_info info;
    assert_int_equal(strata_index_info_get(v, idx, &info), STRATA_OK);
    return info.depth;
}

/* The ids an index holds under the integer key (composite: [k, 0]). */
static size_t lookup_int(strata_view *v, strata_index idx, bool composite, int64_t k,
                         strata_id *ids, size_t cap)
{
    strata_value *parts[2] = { strata_value_int(k), strata_value_int(0) };
    strata_node_iter *it = NULL;
    assert_int_equal(strata_index_lookup(v, idx, (const strata_value *const *)parts,
                                         composite ? 2 : 1, &it),
                     STRATA_OK);
    strata_value_free(&parts[0]);
    strata_value_free(&parts[1]);
    return drain(it, ids, cap);
}

/* A reader that re-takes its view before every write, so one is always
   held: each write forks, the indexed property's stack grows one level per
   write, and at the cap the next write flattens it.  Checks the depth
   never exceeds the cap, that a flatten happens exactly on the writes that
   find the stack at the cap, and that the old view still reads its value. */
static void flatten_cycle(strata_index_kind kind, bool composite)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token label = intern(g, STRATA_LABEL, "L");
    strata_token keys[2] = { intern(g, STRATA_KEY, "k"), intern(g, STRATA_KEY, "k2") };
    strata_id a = UINT64_MAX, b = UINT64_MAX;
    assert_int_equal(strata_node_create(g, &label, 1, &a), STRATA_OK);
    assert_int_equal(strata_node_create(g, &label, 1, &b), STRATA_OK);
    set_int(g, a, keys[0], 0);
    set_int(g, b, keys[0], 1000);
    set_int(g, a, keys[1], 0);
    set_int(g, b, keys[1], 0);
    strata_index idx = UINT32_MAX;
    assert_int_equal(strata_index_create(g, kind, false, label, keys, composite ? 2 : 1, &idx),
                     STRATA_OK);

    strata_view *held = snap(g);
    uint64_t start = lstack_flattens();
    uint32_t deepest = 0, at_cap = 0;
    for (int64_t i = 1; i <= 50; i++) {
        uint32_t before = index_depth(held, idx);   /* held shares the current state */
        uint64_t f0 = lstack_flattens();
        set_int(g, a, keys[0], i);
        uint64_t f1 = lstack_flattens();
        assert_true(strata_is_forked(g));
        strata_view *next = snap(g);
        uint32_t after = index_depth(next, idx);
        if (after > deepest)
            deepest = after;
        if (after > LSTACK_CAP)
            fail_msg("%s index: depth %u after write %" PRId64 ", above the cap %d",
                     kind_names[kind], after, i, LSTACK_CAP);
        if (f1 != f0 && (f1 != f0 + 1 || before != LSTACK_CAP))
            fail_msg("%s index: write %" PRId64 " flattened %" PRIu64 " times at depth %u "
                     "(a flatten belongs at depth %d)", kind_names[kind], i, f1 - f0, before,
                     LSTACK_CAP);
        if (f1 == f0 && before == LSTACK_CAP)
            fail_msg("%s index: write %" PRId64 " found the stack at the cap and did not "
                     "flatten (depth after: %u)", kind_names[kind], i, after);
        at_cap += before == LSTACK_CAP;
        strata_id ids[4];
        if (lookup_int(next, idx, composite, i, ids, 4) != 1 || ids[0] != a)
            fail_msg("%s index: the new view does not find node %" PRIu64 " under %" PRId64,
                     kind_names[kind], a, i);
        if (lookup_int(held, idx, composite, i - 1, ids, 4) != 1 || ids[0] != a ||
            lookup_int(held, idx, composite, i, ids, 4) != 0)
            fail_msg("%s index: the held view changed with write %" PRId64, kind_names[kind], i);
        assert_int_equal(strata_integrity_check(held), STRATA_OK);
        assert_int_equal(strata_integrity_check(next), STRATA_OK);
        strata_view_release(&held);
        held = next;
    }
    assert_int_equal(deepest, LSTACK_CAP);
    assert_true(at_cap > 0);
    assert_int_equal(lstack_flattens() - start, at_cap);
    strata_view_release(&held);
    /* Nothing held: the next write folds back and the graph is no longer
       forked. */
    set_int(g, a, keys[0], 0);
    assert_false(strata_is_forked(g));
    strata_graph_free(&g);
}

static __attribute__((unused)) void test_flatten_at_cap(void **state)
{
    (void)state;
    flatten_cycle(STRATA_INDEX_HASH, false);
    flatten_cycle(STRATA_INDEX_RANGE, false);
    flatten_cycle(STRATA_INDEX_UNIQUE, false);
    flatten_cycle(STRATA_INDEX_HASH, true);
}

/* strata_is_forked through a view's whole life: forked from the first write
   under it until the first write after its release. */
static void test_fork_state(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token k = intern(g, STRATA_KEY, "k");
    strata_id n = UINT64_MAX;
    assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
    assert_false(strata_is_forked(g));
    strata_view *v = snap(g);
    assert_false(strata_is_forked(g));   /* a view alone shares nothing yet */
    set_int(g, n, k, 1);
    assert_true(strata_is_forked(g));
    set_int(g, n, k, 2);
    assert_true(strata_is_forked(g));
    strata_view_release(&v);
    assert_true(strata_is_forked(g));    /* fold-back waits for a write */
    set_int(g, n, k, 3);
    assert_false(strata_is_forked(g));
    v = snap(g);
    strata_view_release(&v);
    set_int(g, n, k, 4);                 /* a view released unwritten */
    assert_false(strata_is_forked(g));
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_state),
#ifndef STRATA_FULL_SIZES   /* 50 writes reach the cap only at the test sizes */
        cmocka_unit_test(test_flatten_at_cap),
#endif
        cmocka_unit_test(test_model_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
