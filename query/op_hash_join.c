/* op_hash_join — a hash join inside a join's walk (join.h `jhash`).
 *
 * The walk binds the plan's steps one after another, depth first, so the
 * steps of a block that depends only on its key vertices would be
 * expanded again for every row reaching it, even when rows repeat the
 * key's node.  Here the block's first step is replaced by a probe: the
 * key's nodes are looked up in a table; a key not seen yet is built by
 * running the block's steps once from the row in hand, each match that
 * reaches the block's end recorded instead of going on; then every match
 * of the key is bound in turn and the walk goes on after the block.  The
 * build is lazy, per key, so only keys some row reaches are ever built,
 * and the table holds at most the block's matches from those keys.
 *
 * Invariants:
 *   1. A key is in the table only once its block has been run to the
 *      end: its matches are the n records at store.v[at], each the
 *      block's nvert node ids then its nedge relationship ids.
 *   2. While building, uniqueness is checked among the block's own
 *      relationships only (join_state.used_base), so a match holds for
 *      every row with its key; a row checks the match's relationships
 *      against its own (those bound before the block, in the same
 *      clause) when it probes.
 *   3. Nothing writes while a pipeline runs, so a key's matches stay
 *      true for the stage's life — or, when the block names the input
 *      row (per_input), for that row's: join_begin empties the table.
 *   4. The walk after the block never comes back to its first step
 *      before returning, so the store does not move under a probe that
 *      is binding its matches.
 * Memory comes from the executor's allocator: a failed growth is an
 * OutOfMemory error and leaves the table as it was (the partial build
 * dropped).  The build's expansion ticks like any walk, so an interrupt
 * stops it. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "query/join_exec.h"
#include "query/profile.h"

/* Tiny in test builds, so that the grow path runs in every test. */
#ifdef STRATA_TESTING
#define HASH_FIRST_SLOTS 2
#else
#define HASH_FIRST_SLOTS 64
#endif

static uint64_t key_hash(uint64_t k0, uint64_t k1)
{
    uint64_t h = k0 * 0x9e3779b97f4a7c15ull ^ k1 * 0xc2b2ae3d27d4eb4full;
    /* the table takes the low bits: fold the high ones in (splitmix64's
       finaliser) */
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

/* The slot holding the key, or the empty one where it would go. */
static hash_slot *find_slot(const hash_state *hs, uint64_t k0, uint64_t k1)
{
    size_t mask = hs->cap - 1;
    for (size_t i = key_hash(k0, k1) & mask;; i = (i + 1) & mask) {
        hash_slot *s = &hs->slots[i];
        if (!s->k0 || (s->k0 == k0 && s->k1 == k1))
            return s;
    }
}

/* Room for one more key at most half full; 0 or -1 (unchanged). */
static int table_reserve(exec *x, hash_state *hs)
{
    if ((hs->nkeys + 1) * 2 <= hs->cap)
        return 0;
    size_t cap = hs->cap ? hs->cap * 2 : HASH_FIRST_SLOTS;
    hash_slot *slots = mem_calloc(x->m, cap * sizeof *slots);
    if (!slots)
        return exec_oom(x);
    hash_state grown = {.slots = slots, .cap = cap};
    for (size_t i = 0; i < hs->cap; i++)
        if (hs->slots[i].k0)
            *find_slot(&grown, hs->slots[i].k0, hs->slots[i].k1) = hs->slots[i];
    if (hs->slots)
        mem_free(x->m, hs->slots);
    hs->slots = slots;
    hs->cap = cap;
    return 0;
}

/* Runs the block once from the row in hand, recording its matches
   (hash_join_record), and adds the key; *at and *n: where they are. */
static int build(exec *x, join_state *js, uint64_t k0, uint64_t k1, uint64_t *at, uint64_t *n)
{
    const jhash *h = &js->p->hash;
    hash_state *hs = &js->hash;
    size_t from = hs->store.n, base = js->used_base;
    hs->building = true;
    js->used_base = js->nused;
    int rc = join_run_kind(x, js, h->first, JSTEP_EXPAND);
    hs->building = false;
    js->used_base = base;
    if (rc == 0)
        rc = table_reserve(x, hs);
    if (rc != 0) {
        hs->store.n = from;     /* the key's partial matches */
        return -1;
    }
    *at = from;
    *n = (hs->store.n - from) / (h->nvert + h->nedge);
    *find_slot(hs, k0, k1) = (hash_slot){.k0 = k0, .k1 = k1, .at = *at, .n = *n};
    hs->nkeys++;
    hs->builds++;
    hs->stored += *n;
    return 0;
}

int hash_join_record(exec *x, join_state *js)
{
    const jhash *h = &js->p->hash;
    u64_stack *st = &js->hash.store;
    assert(js->nused - js->used_base == h->nedge);
    if (u64_stack_reserve(x->m, st, h->nvert + h->nedge) != 0)
        return exec_oom(x);
    for (size_t i = 0; i < h->nvert; i++)
        st->v[st->n++] = js->vid[h->vert[i]];
    /* the block's relationships, pushed in its edges' order */
    for (size_t i = 0; i < h->nedge; i++)
        st->v[st->n++] = js->used[js->used_base + i];
    return 0;
}

/* Whether one of a match's relationships is already bound in its clause
   by the row probing. */
static bool clashes(const join_state *js, const uint64_t *rels)
{
    const jhash *h = &js->p->hash;
    for (size_t i = 0; i < h->nedge; i++) {
        uint32_t group = js->p->e[h->edge[i]].group;
        for (size_t k = 0; k < js->nused; k++)
            if (js->used[k] == rels[i] && js->used_group[k] == group)
                return true;
    }
    return false;
}

/* Binds a match's nodes and relationships and goes on after the block. */
static int bind_match(exec *x, join_state *js, const uint64_t *match)
{
    const join_plan *p = js->p;
    const jhash *h = &p->hash;
    const uint64_t *rels = match + h->nvert;
    for (size_t i = 0; i < h->nvert; i++) {
        uint32_t w = h->vert[i];
        js->vid[w] = match[i];
        join_bind_slot(js, p->v[w].slot, value_node(match[i]));
    }
    for (size_t i = 0; i < h->nedge; i++) {
        const jedge *e = &p->e[h->edge[i]];
        js->used[js->nused] = rels[i];
        js->used_group[js->nused++] = e->group;
        join_bind_slot(js, e->slot, value_rel(rels[i]));
    }
    int rc = join_run_step(x, js, h->end);
    js->nused -= h->nedge;
    for (size_t i = 0; i < h->nedge; i++)
        join_bind_slot(js, p->e[h->edge[i]].slot, value_null());
    for (size_t i = 0; i < h->nvert; i++)
        join_bind_slot(js, p->v[h->vert[i]].slot, value_null());
    return rc;
}

static int probe(exec *x, join_state *js)
{
    const jhash *h = &js->p->hash;
    hash_state *hs = &js->hash;
    uint64_t k0 = js->vid[h->key[0]] + 1, k1 = h->nkey > 1 ? js->vid[h->key[1]] : 0;
    uint64_t at, n;
    hs->probes++;
    const hash_slot *found = hs->cap ? find_slot(hs, k0, k1) : NULL;
    if (found && found->k0) {
        at = found->at;
        n = found->n;
        hs->hits++;
    } else if (build(x, js, k0, k1, &at, &n) != 0) {
        return -1;
    }
    size_t width = h->nvert + h->nedge;
    int rc = 0;
    for (uint64_t m = 0; m < n && rc == 0; m++) {
        const uint64_t *match = hs->store.v + at + m * width;
        if ((rc = exec_tick(x)) != 0)
            break;
        if (!h->check_unique || !clashes(js, match + h->nvert))
            rc = bind_match(x, js, match);
    }
    return rc;
}

int hash_join_step(exec *x, join_state *js, size_t k)
{
    const jhash *h = &js->p->hash;
    if (k == h->first)
        return probe(x, js);    /* a build runs the first step as itself */
    assert(k == h->end);
    return js->hash.building ? hash_join_record(x, js)
                             : join_run_kind(x, js, k, js->p->steps[k].kind);
}

void hash_join_reset(join_state *js)
{
    hash_state *hs = &js->hash;
    hs->store.n = 0;
    hs->nkeys = 0;
    if (hs->slots)
        memset(hs->slots, 0, hs->cap * sizeof *hs->slots);
}

void hash_join_free(exec *x, join_state *js)
{
    hash_state *hs = &js->hash;
    u64_stack_free(x->m, &hs->store);
    if (hs->slots)
        mem_free(x->m, hs->slots);
    hs->slots = NULL;
    hs->cap = hs->nkeys = 0;
}

void hash_join_add_counts(join_state *to, const join_state *from)
{
    to->hash.probes += from->hash.probes;
    to->hash.builds += from->hash.builds;
    to->hash.hits += from->hash.hits;
    to->hash.stored += from->hash.stored;
}

void hash_join_profile(exec *x, const join_state *js)
{
    if (!x->prof->timed || js->prof_step >= x->prof->n)
        return;
    const hash_state *hs = &js->hash;
    const jvertex *k = &js->p->v[js->p->hash.key[0]];
    profile_step *st = &x->prof->steps[js->prof_step];
    size_t used = strlen(st->plan);
    snprintf(st->plan + used, sizeof st->plan - used,
             "%sHashJoin (%.*s) ran: %llu probes, %llu built, %llu hits, %llu matches",
             used ? "; " : "", k->var ? (int)k->var->u.name.len : 0,
             k->var ? k->var->u.name.ptr : "", (unsigned long long)hs->probes,
             (unsigned long long)hs->builds, (unsigned long long)hs->hits,
             (unsigned long long)hs->stored);
}
