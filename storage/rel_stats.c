#include "storage/rel_stats.h"

#include <assert.h>

typedef struct pair_count {
    uint64_t n[2];   /* [ADJ_OUT], [ADJ_IN] (storage/adjacency.h) */
} pair_count;

static const pvec_ops count_ops = { sizeof(pair_count), NULL, NULL, NULL };

/* The low 32 bits of x spread to the even bits of the result. */
static uint64_t spread(uint32_t x)
{
    uint64_t v = x;
    v = (v | v << 16) & 0x0000ffff0000ffffull;
    v = (v | v << 8) & 0x00ff00ff00ff00ffull;
    v = (v | v << 4) & 0x0f0f0f0f0f0f0f0full;
    v = (v | v << 2) & 0x3333333333333333ull;
    v = (v | v << 1) & 0x5555555555555555ull;
    return v;
}

/* The inverse of spread: the even bits of v packed. */
static uint32_t gather(uint64_t v)
{
    v &= 0x5555555555555555ull;
    v = (v | v >> 1) & 0x3333333333333333ull;
    v = (v | v >> 2) & 0x0f0f0f0f0f0f0f0full;
    v = (v | v >> 4) & 0x00ff00ff00ff00ffull;
    v = (v | v >> 8) & 0x0000ffff0000ffffull;
    v = (v | v >> 16) & 0x00000000ffffffffull;
    return (uint32_t)v;
}

/* Interleaved, so that a graph of few labels and few types — whichever
   it has more of — uses a small corner of the index space. */
static uint64_t pair_index(uint32_t label, uint32_t type)
{
    return spread(label) << 1 | spread(type);
}

bool relstats_indexable(uint32_t label, uint32_t type)
{
    return label < RELSTATS_TOKEN_MAX && type < RELSTATS_TOKEN_MAX;
}

void relstats_share(const rel_stats *src, rel_stats *dst) { pvec_share(&src->counts, &dst->counts); }

void relstats_release(rel_stats *s, mem_ctx *m) { relstats_release_into(s, NULL, m); }

void relstats_release_into(rel_stats *s, const rel_stats *succ, mem_ctx *m)
{
    pvec_release_into(&s->counts, succ ? &succ->counts : NULL, &count_ops, m);
}

size_t relstats_private_bytes(const rel_stats *s)
{
    return pvec_private_bytes(&s->counts, &count_ops);
}

uint64_t relstats_get(const rel_stats *s, uint32_t label, uint32_t type, int dir)
{
    if (!relstats_indexable(label, type))
        return 0;
    uint64_t i = pair_index(label, type);
    if (i >= s->counts.len)
        return 0;   /* pvec_get would read an aliased element past len */
    const pair_count *c = pvec_get(&s->counts, &count_ops, i);
    return c->n[dir];
}

int relstats_prepare(rel_stats *s, mem_ctx *m, uint32_t label, uint32_t type)
{
    if (!relstats_indexable(label, type))
        return -1;
    uint64_t i = pair_index(label, type);
    if (pvec_grow_to(&s->counts, &count_ops, m, i + 1) != 0)
        return -1;
    return pvec_get_mut(&s->counts, &count_ops, m, i) ? 0 : -1;
}

void relstats_add(rel_stats *s, mem_ctx *m, uint32_t label, uint32_t type, int dir,
                  int64_t delta)
{
    uint64_t i = pair_index(label, type);
    assert(i < s->counts.len);
    pair_count *c = pvec_get_mut(&s->counts, &count_ops, m, i);
    assert(c);   /* prepared: the path is private, nothing allocates */
    assert(delta >= 0 || c->n[dir] >= (uint64_t)-delta);
    c->n[dir] += (uint64_t)delta;
}

typedef struct first_diff {
    uint64_t index;
    bool found;
} first_diff;

static int note_diff(uint64_t i, const void *a, const void *b, void *arg)
{
    (void)a;
    (void)b;
    first_diff *d = arg;
    d->index = i;
    d->found = true;
    return 1;
}

bool relstats_equal(const rel_stats *a, const rel_stats *b, uint32_t *label, uint32_t *type)
{
    first_diff d = { 0, false };
    pvec_diff(&a->counts, &b->counts, &count_ops, note_diff, &d);
    if (d.found) {
        *label = gather(d.index >> 1);
        *type = gather(d.index);
    }
    return !d.found;
}

typedef struct each_walk {
    relstats_fn fn;
    void *arg;
} each_walk;

static int visit(uint64_t i, const void *a, const void *b, void *arg)
{
    (void)b;
    const pair_count *c = a;
    const each_walk *w = arg;
    return w->fn(gather(i >> 1), gather(i), c->n[0], c->n[1], w->arg);
}

int relstats_each(const rel_stats *s, relstats_fn fn, void *arg)
{
    /* the elements that differ from an empty vector's zeros */
    const pvec none = { 0 };
    each_walk w = { fn, arg };
    return pvec_diff(&s->counts, &none, &count_ops, visit, &w);
}

#ifdef STRATA_TESTING
int relstats_check(const rel_stats *s) { return pvec_check(&s->counts, &count_ops); }
#endif
