/*
 * The reference model of the randomised model tests (test_model.c,
 * test_txn_model.c) and everything they do with it alike: the model's
 * state and its updates, the writes both tests make (nodes, labels,
 * properties, relationships) with the status and ids the model predicts,
 * and the comparison of a view with a model.
 *
 * The model is fixed-size arrays, so copying it is one struct assignment.
 * Its free lists are LIFO stacks, so the id of every create is predicted
 * exactly — including after a detach-delete, which frees the node's
 * relationships in adjacency order (by type, outgoing before incoming,
 * then in creation order) and the node last.
 *
 * "Equals" (compare_view) covers counts, existence, labels, properties,
 * relationship endpoints and types; every node's neighbours per direction
 * and type as sets, and per direction in iteration order (by type, then
 * creation order); label and type scans; and per index its definition,
 * entry count, depth (at most LSTACK_CAP), a lookup of every key value
 * present plus an absent one, random integer ranges over single-key
 * indices, and a range index's whole integer scan in order.
 *
 * The including test defines, before including:
 *   MAX_IDS, NODE_LIMIT, REL_LIMIT, NLABELS, NTYPES, NKEYS, MAX_INDEXES,
 *   MAX_VIEWS, INT_RANGE: the model's sizes and value range;
 *   INT_PERCENT: how often random_value draws an integer (else a string);
 *   REMOVE_AS_NULL_PERCENT: how often a property removal is written as
 *     setting null (the same write); 0 draws nothing from the generator;
 *   run_state: the test's own part of a run (it may point to struct model);
 * and after including defines the two functions declared below as hooks:
 *   run_context, what a failure message adds after the operation, and
 *   expect_outcome, which checks a write's status and applies r->next.
 * Include after <cmocka.h> and "strata.h".
 */
#ifndef STRATA_TESTS_MODEL_H
#define STRATA_TESTS_MODEL_H

#if !defined(MAX_IDS) || !defined(NODE_LIMIT) || !defined(REL_LIMIT) || !defined(NLABELS) ||   \
    !defined(NTYPES) || !defined(NKEYS) || !defined(MAX_INDEXES) || !defined(MAX_VIEWS) ||     \
    !defined(INT_RANGE) || !defined(INT_PERCENT) || !defined(REMOVE_AS_NULL_PERCENT)
#error "define the model's sizes before including support/model.h"
#endif

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/level_stack.h"
#include "model_value.h"

#define MAX_PARTS 2       /* keys of a composite index */
#define MAX_EDGES (2 * MAX_IDS)
#define MSG_MAX 2048
#define ABSENT_INT 999    /* a key value no entity ever holds */
#define CREATE_LABELS_MAX 3   /* labels named by one node create, repeats allowed */

/* Two strings short enough to live inside a value cell, two long enough to
   go to the heap: both representations get stored, shared and compared. */
static const char *const string_pool[] = { "x", "y", "a heap string, one",
                                           "a heap string, two" };

/* ---- the reference model ------------------------------------------------------ */

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

/* The ids of one kind as the store hands them out: a LIFO free list, then
   a new slot. */
typedef struct id_space {
    uint32_t slots, live;
    uint32_t free[MAX_IDS], nfree;   /* the top is the next id */
} id_space;

typedef struct model {
    mnode node[MAX_IDS];
    id_space nodes;
    mrel rel[MAX_IDS];
    id_space rels;
    mindex idx[MAX_INDEXES];
    uint32_t nidx;
    strata_index next_index_id;
    uint64_t seq;
} model;

typedef struct held_view {
    strata_view *v;
    model *m;                /* what it must show for as long as it lives */
    bool own;                /* strata_snapshot_own */
    uint32_t taken_at;       /* step */
    char when[48];           /* how it was taken ("mid-statement", ...), or "" */
} held_view;

/* One seed's run: the graph, the model and the views held over it. */
typedef struct run {
    uint64_t seed;
    uint32_t step;
    uint64_t rng;            /* drives the operations */
    uint64_t check_rng;      /* drives the range probes, apart so that
                                changing a check keeps a seed's operations */
    char op[256];            /* the operation of this step, for messages */
    char where[96];          /* what is being compared, for messages */
    strata_graph *g;
    strata_token label[NLABELS], type[NTYPES], key[NKEYS];
    model *work;             /* what the writer sees */
    model *next;             /* scratch: the state a write should produce */
    held_view held[MAX_VIEWS];   /* each owns its model buffer, held or not */
    uint32_t nheld;
    uint64_t views_compared;
    run_state test;          /* the including test's own state */
} run;

/* The hooks the including test defines. */
static const char *run_context(const run *r, char *buf, size_t n);
static void expect_outcome(run *r, strata_status got, strata_status want);

/* Stops the test with everything needed to reproduce the failure. */
static inline void mismatch(const run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void mismatch(const run *r, const char *fmt, ...)
{
    char detail[MSG_MAX], context[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    fail_msg("seed %" PRIu64 ", step %u, after %s%s\n  in %s: %s\n"
             "  reproduce with STRATA_MODEL_SEED=%" PRIu64,
             r->seed, r->step, r->op, run_context(r, context, sizeof context), r->where,
             detail, r->seed);
}

static inline mval random_value(run *r)
{
    if (chance(&r->rng, INT_PERCENT))
        return mv_int(below(&r->rng, INT_RANGE));
    return mv_str(string_pool[below(&r->rng, sizeof string_pool / sizeof *string_pool)]);
}

/* ---- model state ---------------------------------------------------------------- */

static inline uint32_t id_take(id_space *ids)
{
    ids->live++;
    return ids->nfree ? ids->free[--ids->nfree] : ids->slots++;
}

static inline void id_give(id_space *ids, uint32_t id)
{
    ids->free[ids->nfree++] = id;
    ids->live--;
}

static inline uint32_t model_node_alloc(model *m, uint8_t labels)
{
    uint32_t id = id_take(&m->nodes);
    m->node[id] = (mnode){ .alive = true, .labels = labels };
    return id;
}

static inline void model_node_free(model *m, uint32_t id)
{
    m->node[id] = (mnode){ 0 };
    id_give(&m->nodes, id);
}

static inline uint32_t model_rel_alloc(model *m, uint32_t start, uint32_t end, uint32_t type)
{
    uint32_t id = id_take(&m->rels);
    m->rel[id] = (mrel){ .alive = true, .start = start, .end = end, .type = type,
                         .seq = ++m->seq };
    return id;
}

static inline void model_rel_free(model *m, uint32_t id)
{
    m->rel[id] = (mrel){ 0 };
    id_give(&m->rels, id);
}

static inline bool node_alive(const model *m, uint32_t id)
{
    return id < MAX_IDS && m->node[id].alive;
}

static inline bool rel_alive(const model *m, uint32_t id)
{
    return id < MAX_IDS && m->rel[id].alive;
}

static inline bool node_connected(const model *m, uint32_t n)
{
    for (uint32_t r = 0; r < MAX_IDS; r++)
        if (m->rel[r].alive && (m->rel[r].start == n || m->rel[r].end == n))
            return true;
    return false;
}

/* The relationships of one segment of n (type t, out or in) in the order
   the adjacency holds them (creation order).  skip_loops leaves incoming
   self-loops out, for the walks that have them from the outgoing pass. */
static inline uint32_t segment_rels(const model *m, uint32_t n, uint32_t t, bool out,
                                    bool skip_loops, uint32_t *ids)
{
    uint32_t k = 0;
    for (uint32_t r = 0; r < MAX_IDS; r++) {
        const mrel *e = &m->rel[r];
        if (!e->alive || e->type != t)
            continue;
        if (out ? e->start == n : (e->end == n && !(skip_loops && e->start == n)))
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
   adjacency order (segments sorted by type, outgoing first; a self-loop
   once, going out), then the node.  Model types are interned in order, so
   model order is token order. */
static inline void model_detach_delete(model *m, uint32_t n)
{
    uint32_t ids[MAX_IDS];
    for (uint32_t t = 0; t < NTYPES; t++)
        for (int out = 1; out >= 0; out--) {
            uint32_t k = segment_rels(m, n, t, out, true, ids);
            for (uint32_t i = 0; i < k; i++)
                model_rel_free(m, ids[i]);
        }
    model_node_free(m, n);
}

static inline const mval *entity_props(const model *m, bool on_rels, uint32_t id)
{
    if (on_rels)
        return rel_alive(m, id) ? m->rel[id].props : NULL;
    return node_alive(m, id) ? m->node[id].props : NULL;
}

static inline bool entity_has_token(const model *m, bool on_rels, uint32_t id, uint32_t token)
{
    if (on_rels)
        return rel_alive(m, id) && m->rel[id].type == token;
    return node_alive(m, id) && (m->node[id].labels >> token & 1);
}

/* Whether entity id is in index d, with its key parts in key. */
static inline bool model_key(const model *m, const mindex *d, uint32_t id, mval key[MAX_PARTS])
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

static inline bool keys_eq(const mindex *d, const mval *a, const mval *b)
{
    for (uint32_t k = 0; k < d->nkeys; k++)
        if (!mval_eq(&a[k], &b[k]))
            return false;
    return true;
}

/* Whether two entities share a key of a unique index: the state a write
   must refuse. */
static inline bool unique_violated(const model *m)
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

static inline strata_token index_token(const run *r, const mindex *d)
{
    return d->on_rels ? r->type[d->token] : r->label[d->token];
}

/* ---- expectations on writes ------------------------------------------------------ */

static inline void expect_status(run *r, strata_status got, strata_status want)
{
    snprintf(r->where, sizeof r->where, "the call's status");
    if (got != want)
        mismatch(r, "status %s (\"%s\"), the model expects %s", strata_errstr(got),
                 strata_errmsg(r->g), strata_errstr(want));
}

/* A write that would leave the graph as r->next: refused with
   STRATA_ECONSTRAINT, changing nothing, when that state breaks a unique
   index; done otherwise. */
static inline void expect_write(run *r, strata_status got)
{
    expect_outcome(r, got, unique_violated(r->next) ? STRATA_ECONSTRAINT : STRATA_OK);
}

static inline void expect_id(run *r, const char *what, strata_id got, uint32_t want)
{
    snprintf(r->where, sizeof r->where, "the id handed out");
    if (got != want)
        mismatch(r, "%s %" PRIu64 ", the model's free list predicts %u", what, got, want);
}

/* ---- the writes both tests make: each returns false when it does not apply now ---- */

/* A random live id of one kind, or — dead_percent of the time, or when none
   lives — an id that names nothing (a freed slot or one never used). */
static inline uint32_t pick_id(run *r, bool rels, uint32_t dead_percent)
{
    const model *m = r->work;
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

static inline uint32_t pick_node(run *r, uint32_t dead_percent)
{
    return pick_id(r, false, dead_percent);
}

static inline uint32_t pick_rel(run *r, uint32_t dead_percent)
{
    return pick_id(r, true, dead_percent);
}

static inline bool op_node_create(run *r)
{
    if (r->work->nodes.live >= NODE_LIMIT)
        return false;
    strata_token labels[CREATE_LABELS_MAX];
    uint8_t mask = 0;
    size_t n = below(&r->rng, CREATE_LABELS_MAX + 1);   /* repeats count once */
    for (size_t i = 0; i < n; i++) {
        uint32_t l = below(&r->rng, NLABELS);
        labels[i] = r->label[l];
        mask |= (uint8_t)(1u << l);
    }
    snprintf(r->op, sizeof r->op, "create a node with %zu labels (mask %#x)", n, mask);
    *r->next = *r->work;
    uint32_t want = model_node_alloc(r->next, mask);
    strata_id got = UINT64_MAX;
    expect_outcome(r, strata_node_create(r->g, labels, n, &got), STRATA_OK);
    expect_id(r, "node id", got, want);
    return true;
}

static inline bool op_node_delete(run *r)
{
    uint32_t id = pick_node(r, 10);
    snprintf(r->op, sizeof r->op, "delete node %u", id);
    *r->next = *r->work;
    strata_status want = STRATA_OK;
    if (!node_alive(r->work, id))
        want = STRATA_ENOTFOUND;
    else if (node_connected(r->work, id))
        want = STRATA_ECONNECTED;
    else
        model_node_free(r->next, id);
    expect_outcome(r, strata_node_delete(r->g, id), want);
    return true;
}

/* Deletes a relationship, or detach-deletes a node: refused only when the
   id names nothing. */
static inline bool delete_op(run *r, bool rel)
{
    uint32_t id = rel ? pick_rel(r, 10) : pick_node(r, 5);
    snprintf(r->op, sizeof r->op, "%s %u", rel ? "delete relationship" : "detach-delete node",
             id);
    *r->next = *r->work;
    bool alive = rel ? rel_alive(r->work, id) : node_alive(r->work, id);
    if (alive && rel)
        model_rel_free(r->next, id);
    else if (alive)
        model_detach_delete(r->next, id);
    strata_status s = rel ? strata_rel_delete(r->g, id) : strata_node_detach_delete(r->g, id);
    expect_outcome(r, s, alive ? STRATA_OK : STRATA_ENOTFOUND);
    return true;
}

static inline bool op_node_detach_delete(run *r) { return delete_op(r, false); }
static inline bool op_rel_delete(run *r) { return delete_op(r, true); }

static inline bool label_op(run *r, bool add)
{
    uint32_t id = pick_node(r, 5), l = below(&r->rng, NLABELS);
    snprintf(r->op, sizeof r->op, "%s label %u %s node %u", add ? "add" : "remove", l,
             add ? "to" : "from", id);
    *r->next = *r->work;
    strata_status s = add ? strata_node_add_label(r->g, id, r->label[l])
                          : strata_node_remove_label(r->g, id, r->label[l]);
    if (!node_alive(r->work, id)) {
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

static inline bool op_label_add(run *r) { return label_op(r, true); }
static inline bool op_label_remove(run *r) { return label_op(r, false); }

/* Sets (or with val NULL removes) property k of a node or relationship.
   Removal goes through strata_*_remove or, REMOVE_AS_NULL_PERCENT of the
   time, through setting null: both are the same write. */
static inline strata_status prop_write(run *r, bool rel, uint32_t id, uint32_t k,
                                       const mval *val)
{
    strata_value *api = NULL;
    if (val)
        api = mval_to_api(val);
    else if (REMOVE_AS_NULL_PERCENT > 0 && chance(&r->rng, REMOVE_AS_NULL_PERCENT))
        api = strata_value_null();
    strata_status s;
    if (api)
        s = rel ? strata_rel_set(r->g, id, r->key[k], api)
                : strata_node_set(r->g, id, r->key[k], api);
    else
        s = rel ? strata_rel_remove(r->g, id, r->key[k]) : strata_node_remove(r->g, id, r->key[k]);
    strata_value_free(&api);
    return s;
}

static inline bool prop_op(run *r, bool rel, bool set)
{
    uint32_t id = rel ? pick_rel(r, 5) : pick_node(r, 5), k = below(&r->rng, NKEYS);
    mval val = set ? random_value(r) : (mval){ .kind = MV_NONE };
    char text[64];
    snprintf(r->op, sizeof r->op, "%s property %u of %s %u%s%s", set ? "set" : "remove", k,
             rel ? "relationship" : "node", id, set ? " to " : "",
             set ? mval_text(&val, text, sizeof text) : "");
    *r->next = *r->work;
    strata_status s = prop_write(r, rel, id, k, set ? &val : NULL);
    if (!(rel ? rel_alive(r->work, id) : node_alive(r->work, id))) {
        expect_outcome(r, s, STRATA_ENOTFOUND);
        return true;
    }
    (rel ? r->next->rel[id].props : r->next->node[id].props)[k] = val;
    expect_write(r, s);
    return true;
}

static inline bool op_node_set(run *r) { return prop_op(r, false, true); }
static inline bool op_node_remove(run *r) { return prop_op(r, false, false); }
static inline bool op_rel_set(run *r) { return prop_op(r, true, true); }
static inline bool op_rel_remove(run *r) { return prop_op(r, true, false); }

static inline bool op_rel_create(run *r)
{
    if (r->work->rels.live >= REL_LIMIT)
        return false;
    uint32_t start = pick_node(r, 3);
    uint32_t end = chance(&r->rng, 15) ? start : pick_node(r, 3);
    uint32_t t = below(&r->rng, NTYPES);
    snprintf(r->op, sizeof r->op, "create a relationship %u -[type %u]-> %u", start, t, end);
    *r->next = *r->work;
    strata_status want = STRATA_ENOTFOUND;
    uint32_t want_id = 0;
    if (node_alive(r->work, start) && node_alive(r->work, end)) {
        want_id = model_rel_alloc(r->next, start, end, t);
        want = STRATA_OK;
    }
    strata_id got = UINT64_MAX;
    expect_outcome(r, strata_rel_create(r->g, start, end, r->type[t], &got), want);
    if (want == STRATA_OK)
        expect_id(r, "relationship id", got, want_id);
    return true;
}

/* ---- views -------------------------------------------------------------------------- */

/* "the view taken at step N", with how it was taken where the test says. */
static inline const char *view_name(const held_view *h, char *buf, size_t n)
{
    snprintf(buf, n, "the view taken at step %u%s%s%s", h->taken_at, h->when[0] ? " (" : "",
             h->when, h->when[0] ? ")" : "");
    return buf;
}

static inline bool op_view_release(run *r)
{
    if (r->nheld == 0)
        return false;
    uint32_t i = below(&r->rng, r->nheld);
    char name[160];
    snprintf(r->op, sizeof r->op, "release %s", view_name(&r->held[i], name, sizeof name));
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

/* ---- choosing an operation -------------------------------------------------------- */

typedef struct op_entry {
    bool (*run)(run *r);
    uint32_t weight;
} op_entry;

/* Runs one operation of the table, drawn by weight, redrawing while the
   one drawn does not apply. */
static inline void run_random_op(run *r, const op_entry *ops, size_t nops)
{
    uint32_t total = 0;
    for (size_t i = 0; i < nops; i++)
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

/* ---- comparing a view with a model --------------------------------------------------- */

/* Drains and frees an iterator; returns the count (ids past cap are
   counted, not stored).  A runaway iterator stops at 4 * cap. */
static inline size_t drain(strata_node_iter *it, strata_id *ids, size_t cap)
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

static inline void ids_text(const strata_id *ids, size_t n, size_t cap, char *buf, size_t len)
{
    size_t w = (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < n && i < cap && w < len; i++)
        w += (size_t)snprintf(buf + w, len - w, "%s%" PRIu64, i ? " " : "", ids[i]);
    if (w < len)
        snprintf(buf + w, len - w, "%s]", n > cap ? " ..." : "");
}

/* got came from drain(..., MAX_IDS): ngot may exceed what it stores. */
static inline void expect_ids(run *r, const char *what, const strata_id *got, size_t ngot,
                              const strata_id *want, size_t nwant)
{
    if (ngot == nwant && memcmp(got, want, nwant * sizeof *want) == 0)
        return;
    char g[512], w[512];
    ids_text(got, ngot, MAX_IDS, g, sizeof g);
    ids_text(want, nwant, nwant, w, sizeof w);
    mismatch(r, "%s: got %zu ids %s, the model has %zu %s", what, ngot, g, nwant, w);
}

static inline void compare_props(run *r, strata_view *v, bool rel, uint32_t id,
                                 const mval *props)
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

static inline void compare_node(run *r, strata_view *v, const model *m, uint32_t id)
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

static inline void compare_rel(run *r, strata_view *v, const model *m, uint32_t id)
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

static inline void compare_scans(run *r, strata_view *v, const model *m)
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
    expect_ids(r, "strata_nodes", got, drain(it, got, MAX_IDS), want, nwant);
    for (uint32_t l = 0; l < NLABELS; l++) {
        nwant = 0;
        for (uint32_t id = 0; id < MAX_IDS; id++)
            if (m->node[id].alive && (m->node[id].labels >> l & 1))
                want[nwant++] = id;
        if (strata_nodes_by_label(v, r->label[l], &it) != STRATA_OK)
            mismatch(r, "strata_nodes_by_label failed: %s", strata_view_errmsg(v));
        snprintf(what, sizeof what, "nodes with label %u", l);
        expect_ids(r, what, got, drain(it, got, MAX_IDS), want, nwant);
    }
    for (uint32_t t = 0; t < NTYPES; t++) {
        nwant = 0;
        for (uint32_t id = 0; id < MAX_IDS; id++)
            if (m->rel[id].alive && m->rel[id].type == t)
                want[nwant++] = id;
        if (strata_rels_by_type(v, r->type[t], &it) != STRATA_OK)
            mismatch(r, "strata_rels_by_type failed: %s", strata_view_errmsg(v));
        snprintf(what, sizeof what, "relationships of type %u", t);
        expect_ids(r, what, got, drain(it, got, MAX_IDS), want, nwant);
    }
}

typedef struct edge {
    strata_id rel, other;
} edge;

static inline int edge_cmp(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->rel != y->rel)
        return x->rel < y->rel ? -1 : 1;
    return (x->other > y->other) - (x->other < y->other);
}

static inline void edges_text(const edge *e, size_t n, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0, o = 0; i < n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, " (r%" PRIu64 ",n%" PRIu64 ")", e[i].rel,
                              e[i].other);
}

/* The model's neighbours of n as a sorted set: BOTH reports a self-loop
   once. */
static inline size_t model_edges(const model *m, uint32_t n, strata_direction dir, int type,
                                 edge *out)
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

/* The neighbours v reports for node n, in iteration order (at most
   MAX_EDGES: a runaway iterator shows as a count the model cannot have). */
static inline size_t view_edges(run *r, strata_view *v, uint32_t n, strata_direction dir,
                                strata_token type, edge *out)
{
    strata_edge_iter *it = NULL;
    if (strata_neighbours(v, n, dir, type, &it) != STRATA_OK)
        mismatch(r, "strata_neighbours of node %u: %s", n, strata_view_errmsg(v));
    size_t k = 0;
    edge e;
    while (k < MAX_EDGES && strata_edge_iter_next(it, &e.rel, &e.other))
        out[k++] = e;
    strata_edge_iter_free(&it);
    return k;
}

/* The message's subject (fmt) is formatted only on a mismatch: this runs
   for every node of every view compared. */
static inline void expect_edges(run *r, const edge *got, size_t ngot, const edge *want,
                                size_t nwant, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static inline void expect_edges(run *r, const edge *got, size_t ngot, const edge *want,
                                size_t nwant, const char *fmt, ...)
{
    if (ngot == nwant && memcmp(got, want, nwant * sizeof *want) == 0)
        return;
    char what[128], g[512], w[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    edges_text(got, ngot, g, sizeof g);
    edges_text(want, nwant, w, sizeof w);
    mismatch(r, "%s:%s; the model has%s", what, g, w);
}

/* The neighbours of n per direction (out, in, both) and type (any, each),
   as sets, and the degree of each. */
static inline void compare_neighbour_sets(run *r, strata_view *v, const model *m, uint32_t n)
{
    static const strata_direction dirs[] = { STRATA_OUT, STRATA_IN, STRATA_BOTH };
    static const char *const dir_names[] = { "", "out", "in", "both" };
    for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++)
        for (int t = -1; t < NTYPES; t++) {
            strata_token tok = t < 0 ? STRATA_ANY_TYPE : r->type[t];
            edge got[MAX_EDGES], want[MAX_EDGES];
            size_t nwant = model_edges(m, n, dirs[d], t, want);
            size_t ngot = view_edges(r, v, n, dirs[d], tok, got);
            qsort(got, ngot, sizeof *got, edge_cmp);
            expect_edges(r, got, ngot, want, nwant, "neighbours of node %u, direction %s, type %d",
                         n, dir_names[dirs[d]], t);
            uint64_t deg = UINT64_MAX;
            if (strata_node_degree(v, n, dirs[d], tok, &deg) != STRATA_OK || deg != nwant)
                mismatch(r, "degree of node %u, direction %s, type %d is %" PRIu64
                         ", the model %zu", n, dir_names[dirs[d]], t, deg, nwant);
        }
}

/* The neighbours of n in one direction in iteration order: segments by
   type, each in creation order (a rollback must restore positions
   exactly). */
static inline void compare_neighbour_order(run *r, strata_view *v, const model *m, uint32_t n,
                                           bool out)
{
    edge want[MAX_EDGES], got[MAX_EDGES];
    size_t nwant = 0;
    for (uint32_t t = 0; t < NTYPES; t++) {
        uint32_t ids[MAX_IDS];
        uint32_t k = segment_rels(m, n, t, out, false, ids);
        for (uint32_t i = 0; i < k; i++)
            want[nwant++] = (edge){ ids[i], out ? m->rel[ids[i]].end : m->rel[ids[i]].start };
    }
    size_t ngot = view_edges(r, v, n, out ? STRATA_OUT : STRATA_IN, STRATA_ANY_TYPE, got);
    expect_edges(r, got, ngot, want, nwant, "%s neighbours of node %u in iteration order",
                 out ? "outgoing" : "incoming", n);
}

static inline void key_text(const mindex *d, const mval *key, char *buf, size_t n)
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
static inline void compare_lookup(run *r, strata_view *v, const model *m, const mindex *d,
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
    snprintf(what, sizeof what, "lookup of %s in index %u", kt, d->id);
    if (s != STRATA_OK)
        mismatch(r, "%s: %s (%s)", what, strata_errstr(s), strata_view_errmsg(v));
    expect_ids(r, what, got, drain(it, got, MAX_IDS), want, nwant);
}

/* An integer range: has_lo or has_hi false leaves that end open. */
typedef struct int_range {
    bool has_lo, lo_incl, has_hi, hi_incl;
    int64_t lo, hi;
} int_range;

/* Range q over a single-key index must return the model's entities with an
   integer key inside it, in (value, id) order; strings are never in an
   integer range. */
static inline void compare_range(run *r, strata_view *v, const model *m, const mindex *d,
                                 int_range q)
{
    strata_id want[MAX_IDS], got[MAX_IDS];
    size_t nwant = 0;
    for (int64_t val = -1; val <= INT_RANGE; val++)   /* ascending value, then id */
        for (uint32_t id = 0; id < MAX_IDS; id++) {
            mval k[MAX_PARTS];
            if (!model_key(m, d, id, k) || k[0].kind != MV_INT || k[0].i != val)
                continue;
            if (q.has_lo && (val < q.lo || (val == q.lo && !q.lo_incl)))
                continue;
            if (q.has_hi && (val > q.hi || (val == q.hi && !q.hi_incl)))
                continue;
            want[nwant++] = id;
        }
    strata_value *lov = q.has_lo ? strata_value_int(q.lo) : NULL;
    strata_value *hiv = q.has_hi ? strata_value_int(q.hi) : NULL;
    strata_node_iter *it = NULL;
    strata_status s = strata_index_range(v, d->id, lov, q.lo_incl, hiv, q.hi_incl, &it);
    strata_value_free(&lov);
    strata_value_free(&hiv);
    char what[160];
    snprintf(what, sizeof what, "range %s%s%" PRId64 ", %" PRId64 "%s%s in index %u",
             q.has_lo ? "" : "(open) ", q.lo_incl ? "[" : "(", q.lo, q.hi, q.hi_incl ? "]" : ")",
             q.has_hi ? "" : " (open)", d->id);
    if (s != STRATA_OK)
        mismatch(r, "%s: %s (%s)", what, strata_errstr(s), strata_view_errmsg(v));
    expect_ids(r, what, got, drain(it, got, MAX_IDS), want, nwant);
}

static inline int64_t random_bound(run *r)
{
    return (int64_t)below(&r->check_rng, INT_RANGE + 2) - 1;
}

static inline int_range random_range(run *r)
{
    int_range q;
    q.has_lo = chance(&r->check_rng, 75);
    q.has_hi = !q.has_lo || chance(&r->check_rng, 75);
    q.lo = random_bound(r);
    q.hi = random_bound(r);
    q.lo_incl = chance(&r->check_rng, 50);
    q.hi_incl = chance(&r->check_rng, 50);
    return q;
}

/* Compares index d; returns its depth. */
static inline uint32_t compare_index(run *r, strata_view *v, const model *m, const mindex *d)
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
    for (uint32_t j = 0; j < nkeys; j++)
        compare_lookup(r, v, m, d, keys[j]);
    mval absent[MAX_PARTS] = { mv_int(ABSENT_INT), mv_int(ABSENT_INT) };
    compare_lookup(r, v, m, d, absent);
    if (d->nkeys == 1) {
        for (int i = 0; i < 2; i++)
            compare_range(r, v, m, d, random_range(r));
        if (d->kind == STRATA_INDEX_RANGE)   /* every integer key, in order */
            compare_range(r, v, m, d, (int_range){ .has_lo = true, .lo = -1, .lo_incl = true });
    }
    return info.depth;
}

/* Compares every index; returns the depth of the deepest. */
static inline uint32_t compare_indexes(run *r, strata_view *v, const model *m)
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
    uint32_t deepest = 0;
    for (uint32_t i = 0; i < m->nidx; i++) {
        uint32_t depth = compare_index(r, v, m, &m->idx[i]);
        if (depth > deepest)
            deepest = depth;
    }
    return deepest;
}

/* Checks that v shows exactly m (see "Equals" above), and that
   strata_integrity_check passes on it; returns the depth of its deepest
   index.  r->where names v in the messages. */
static inline uint32_t compare_view(run *r, strata_view *v, const model *m)
{
    strata_status s = strata_integrity_check(v);
    if (s != STRATA_OK)
        mismatch(r, "strata_integrity_check: %s (%s)", strata_errstr(s), strata_view_errmsg(v));
    if (strata_node_count(v) != m->nodes.live || strata_rel_count(v) != m->rels.live)
        mismatch(r, "%" PRIu64 " nodes and %" PRIu64 " relationships, the model has %u and %u",
                 strata_node_count(v), strata_rel_count(v), m->nodes.live, m->rels.live);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        compare_node(r, v, m, id);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        compare_rel(r, v, m, id);
    compare_scans(r, v, m);
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (m->node[id].alive) {
            compare_neighbour_sets(r, v, m, id);
            compare_neighbour_order(r, v, m, id, true);
            compare_neighbour_order(r, v, m, id, false);
        }
    uint32_t deepest = compare_indexes(r, v, m);
    r->views_compared++;
    return deepest;
}

/* Compares every held view with its model. */
static inline void compare_held_views(run *r)
{
    for (uint32_t i = 0; i < r->nheld; i++) {
        view_name(&r->held[i], r->where, sizeof r->where);
        compare_view(r, r->held[i].v, r->held[i].m);
    }
}

/* ---- the runs ------------------------------------------------------------------------ */

/* Interns labels L0.., types T0.. and keys k0..: model order must be token
   order, as sorted labels, sorted keys and adjacency segments follow token
   order. */
static inline void intern_all(run *r)
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
    for (uint32_t i = 1; i < NLABELS; i++)
        assert_true(r->label[i - 1] < r->label[i]);
    for (uint32_t i = 1; i < NTYPES; i++)
        assert_true(r->type[i - 1] < r->type[i]);
    for (uint32_t i = 1; i < NKEYS; i++)
        assert_true(r->key[i - 1] < r->key[i]);
}

/* A new run: an empty graph with the tokens interned, an empty model, and
   a model buffer for every view slot.  The test's own state is zeroed. */
static inline run *run_new(uint64_t seed)
{
    run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->seed = seed;
    /* Spread small seeds over the state space; xorshift needs non-zero. */
    r->rng = (seed * 0x9E3779B97F4A7C15ull) | 1;
    r->check_rng = (seed * 0xD1B54A32D192ED03ull) ^ 0x5851F42D4C957F2Dull;
    if (!r->check_rng)
        r->check_rng = 1;
    r->work = calloc(1, sizeof *r->work);
    r->next = calloc(1, sizeof *r->next);
    assert_non_null(r->work);
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

/* Frees what run_new made; the test frees what it added first. */
static inline void run_free(run **rp)
{
    run *r = *rp;
    for (uint32_t i = 0; i < r->nheld; i++)
        strata_view_release(&r->held[i].v);
    strata_graph_free(&r->g);
    for (uint32_t i = 0; i < MAX_VIEWS; i++)
        free(r->held[i].m);
    free(r->work);
    free(r->next);
    free(r);
    *rp = NULL;
}

static inline unsigned long env_or(const char *name, unsigned long fallback)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return fallback;
    unsigned long v = strtoul(s, &end, 10);
    return *end ? fallback : v;
}

/* The seeds and steps to run: STRATA_MODEL_SEEDS=n runs seeds 1..n,
   STRATA_MODEL_SEED=s runs seed s alone, STRATA_MODEL_STEPS=n sets the
   steps per seed.  full: at least a default run's work, enough for the
   assertions that every path was exercised. */
typedef struct seed_plan {
    uint64_t first, count;
    uint32_t steps;
    bool full;
} seed_plan;

static inline seed_plan seed_plan_from_env(uint64_t default_seeds, uint32_t default_steps)
{
    seed_plan p = { .first = 1 };
    p.steps = (uint32_t)env_or("STRATA_MODEL_STEPS", default_steps);
    p.count = env_or("STRATA_MODEL_SEEDS", default_seeds);
    if (getenv("STRATA_MODEL_SEED")) {
        p.first = env_or("STRATA_MODEL_SEED", 1);
        p.count = 1;
    }
    p.full = p.count * p.steps >= default_seeds * default_steps;
    return p;
}

#endif
