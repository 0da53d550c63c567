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
 * then by id) and the node last.
 *
 * "Equals" (compare_view) is every check of support/model_compare.h,
 * which test_branch_model.c shares.
 *
 * The including test defines, before including:
 *   MAX_IDS, NLABELS, NTYPES, NKEYS, MAX_INDEXES, INT_RANGE: the model's
 *     sizes and value range;
 * and either MODEL_OWN_RUN, for the model, its queries and the comparison
 * (model_compare.h, included once its run type is defined) alone, or:
 *   NODE_LIMIT, REL_LIMIT, MAX_VIEWS: the run's sizes;
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

#if !defined(MAX_IDS) || !defined(NLABELS) || !defined(NTYPES) || !defined(NKEYS) ||          \
    !defined(MAX_INDEXES) || !defined(INT_RANGE)
#error "define the model's sizes before including support/model.h"
#endif
#if !defined(MODEL_OWN_RUN) &&                                                                 \
    (!defined(NODE_LIMIT) || !defined(REL_LIMIT) || !defined(MAX_VIEWS) ||                     \
     !defined(INT_PERCENT) || !defined(REMOVE_AS_NULL_PERCENT))
#error "define the run's sizes before including support/model.h"
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
#ifndef MSG_MAX
#define MSG_MAX 2048
#endif
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
   a new slot — but only new slots once the open unit (a transaction, else
   a statement) has freed an id of the kind (core/txn.h). */
typedef struct id_space {
    uint32_t slots, live;
    uint32_t free[MAX_IDS], nfree;   /* the top is the next id */
    bool in_unit, freed;             /* a unit is open; it freed an id */
} id_space;

typedef struct model {
    mnode node[MAX_IDS];
    id_space nodes;
    mrel rel[MAX_IDS];
    id_space rels;
    mindex idx[MAX_INDEXES];
    uint32_t nidx;
    strata_index next_index_id;
} model;

/* The tokens behind model labels, types and keys (model order is token
   order); comparisons read the first nkeys keys. */
typedef struct model_tokens {
    strata_token label[NLABELS], type[NTYPES], key[NKEYS];
    uint32_t nkeys;
} model_tokens;

/* ---- model state ---------------------------------------------------------------- */

static inline bool node_alive(const model *m, uint64_t id)
{
    return id < MAX_IDS && m->node[id].alive;
}

static inline bool rel_alive(const model *m, uint64_t id)
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
   the adjacency holds them (by id).  skip_loops leaves incoming
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
    return k;
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

#ifndef MODEL_OWN_RUN
/* ---- the run of test_model and test_txn_model ------------------------------------ */

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
    model_tokens tok;        /* nkeys: NKEYS */
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

#include "model_compare.h"

/* ---- model updates, with the ids the store hands out ---------------------------- */

static inline uint32_t id_take(id_space *ids)
{
    ids->live++;
    return ids->nfree && !ids->freed ? ids->free[--ids->nfree] : ids->slots++;
}

static inline void id_give(id_space *ids, uint32_t id)
{
    ids->free[ids->nfree++] = id;
    ids->live--;
    ids->freed |= ids->in_unit;
}

/* A transaction or a statement outside one begins, or ends. */
static inline void model_unit_begin(model *m) { m->nodes.in_unit = m->rels.in_unit = true; }
static inline void model_unit_end(model *m)
{
    m->nodes.in_unit = m->rels.in_unit = false;
    m->nodes.freed = m->rels.freed = false;
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
    m->rel[id] = (mrel){ .alive = true, .start = start, .end = end, .type = type };
    return id;
}

static inline void model_rel_free(model *m, uint32_t id)
{
    m->rel[id] = (mrel){ 0 };
    id_give(&m->rels, id);
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

static inline strata_token index_token(const run *r, const mindex *d)
{
    return model_index_token(&r->tok, d);
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
        labels[i] = r->tok.label[l];
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
    strata_status s = add ? strata_node_add_label(r->g, id, r->tok.label[l])
                          : strata_node_remove_label(r->g, id, r->tok.label[l]);
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
        s = rel ? strata_rel_set(r->g, id, r->tok.key[k], api)
                : strata_node_set(r->g, id, r->tok.key[k], api);
    else
        s = rel ? strata_rel_remove(r->g, id, r->tok.key[k])
                : strata_node_remove(r->g, id, r->tok.key[k]);
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
    expect_outcome(r, strata_rel_create(r->g, start, end, r->tok.type[t], &got), want);
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

/* Every check of model_compare.h, with the run's tokens. */
static inline uint32_t compare_view(run *r, strata_view *v, const model *m)
{
    return model_compare_view(r, v, &r->tok, m, COMPARE_ORDER | COMPARE_RANGES);
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
        assert_int_equal(strata_token_intern(r->g, STRATA_LABEL, name, &r->tok.label[i]),
                         STRATA_OK);
    }
    for (uint32_t i = 0; i < NTYPES; i++) {
        snprintf(name, sizeof name, "T%u", i);
        assert_int_equal(strata_token_intern(r->g, STRATA_RELTYPE, name, &r->tok.type[i]),
                         STRATA_OK);
    }
    for (uint32_t i = 0; i < NKEYS; i++) {
        snprintf(name, sizeof name, "k%u", i);
        assert_int_equal(strata_token_intern(r->g, STRATA_KEY, name, &r->tok.key[i]), STRATA_OK);
    }
    r->tok.nkeys = NKEYS;
    for (uint32_t i = 1; i < NLABELS; i++)
        assert_true(r->tok.label[i - 1] < r->tok.label[i]);
    for (uint32_t i = 1; i < NTYPES; i++)
        assert_true(r->tok.type[i - 1] < r->tok.type[i]);
    for (uint32_t i = 1; i < NKEYS; i++)
        assert_true(r->tok.key[i - 1] < r->tok.key[i]);
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
#endif   /* MODEL_OWN_RUN */

#endif
