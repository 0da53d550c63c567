#include "index/label_index.h"

#include <stdatomic.h>
#include <string.h>

#include "storage/pvec.h"

struct label_bits {
    pvec words;
    uint64_t count;
};

struct label_index {
    atomic_uint refs;
    uint32_t n;                 /* bitmaps, indexed by label token */
    struct label_bits e[];
};

static const pvec_ops word_ops = { sizeof(uint64_t), NULL, NULL, NULL };

static inline size_t table_size(uint32_t n)
{
    return sizeof(label_index) + (size_t)n * sizeof(struct label_bits);
}

void labelidx_retain(label_index *l)
{
    if (l)
        atomic_fetch_add_explicit(&l->refs, 1, memory_order_relaxed);
}

void labelidx_release(mem_ctx *m, label_index **lp) { labelidx_release_into(m, lp, NULL); }

void labelidx_release_into(mem_ctx *m, label_index **lp, const label_index *succ)
{
    label_index *l = *lp;
    *lp = NULL;
    if (!l || atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (uint32_t i = 0; i < l->n; i++)
        pvec_release_into(&l->e[i].words, succ && i < succ->n ? &succ->e[i].words : NULL,
                          &word_ops, m);
    mem_free_sized(m, l, table_size(l->n));
}

size_t labelidx_private_bytes(const label_index *l)
{
    if (!l || atomic_load_explicit(&l->refs, memory_order_acquire) != 1)
        return 0;
    size_t bytes = table_size(l->n);
    for (uint32_t i = 0; i < l->n; i++)
        bytes += pvec_private_bytes(&l->e[i].words, &word_ops);
    return bytes;
}

/* Makes *lp private with at least n bitmaps. */
static int own_table(mem_ctx *m, label_index **lp, uint32_t n)
{
    label_index *l = *lp;
    bool shared = l && atomic_load_explicit(&l->refs, memory_order_acquire) != 1;
    uint32_t have = l ? l->n : 0;
    if (l && !shared && n <= have)
        return 0;
    if (n < have)
        n = have;
    else if (n > have && n - have < have / 2 && have <= UINT32_MAX / 3 * 2)
        n = have + have / 2;   /* tokens arrive one by one: growing by one
                                  at each would copy the table each time */
    label_index *t = mem_alloc(m, table_size(n));
    if (!t)
        return -1;
    atomic_init(&t->refs, 1);
    t->n = n;
    for (uint32_t i = 0; i < n; i++) {
        if (i < have) {
            pvec_share(&l->e[i].words, &t->e[i].words);
            t->e[i].count = l->e[i].count;
        } else {
            pvec_init(&t->e[i].words);
            t->e[i].count = 0;
        }
    }
    if (shared)
        MEM_NOTE_COPIED(have);
    labelidx_release(m, lp);
    *lp = t;
    return 0;
}

int labelidx_prepare(mem_ctx *m, label_index **lp, uint32_t label, uint64_t node)
{
    if (label == UINT32_MAX || own_table(m, lp, label + 1) != 0)
        return -1;
    pvec *w = &(*lp)->e[label].words;
    uint64_t word = node / 64;
    /* Growing adds zero words: harmless if a later step fails. */
    while (w->len <= word)
        if (!pvec_push(w, &word_ops, m))
            return -1;
    return pvec_get_mut(w, &word_ops, m, word) ? 0 : -1;
}

void labelidx_set(mem_ctx *m, label_index *l, uint32_t label, uint64_t node, bool on)
{
    struct label_bits *b = &l->e[label];
    /* Owned by labelidx_prepare, so this cannot copy or fail. */
    uint64_t *w = pvec_get_mut(&b->words, &word_ops, m, node / 64);
    uint64_t bit = (uint64_t)1 << (node % 64);
    if (on && !(*w & bit)) {
        *w |= bit;
        b->count++;
    } else if (!on && (*w & bit)) {
        *w &= ~bit;
        b->count--;
    }
}

int labelidx_or_word(mem_ctx *m, label_index **lp, uint32_t label, uint64_t word, uint64_t bits)
{
    if (labelidx_prepare(m, lp, label, word * 64) != 0)
        return -1;
    struct label_bits *b = &(*lp)->e[label];
    uint64_t *w = pvec_get_mut(&b->words, &word_ops, m, word);
    b->count += (uint64_t)__builtin_popcountll(bits & ~*w);
    *w |= bits;
    return 0;
}

bool labelidx_has(const label_index *l, uint32_t label, uint64_t node)
{
    if (!l || label >= l->n || node / 64 >= l->e[label].words.len)
        return false;
    const uint64_t *w = pvec_get(&l->e[label].words, &word_ops, node / 64);
    return (*w >> (node % 64)) & 1;
}

uint64_t labelidx_count(const label_index *l, uint32_t label)
{
    return l && label < l->n ? l->e[label].count : 0;
}

uint64_t labelidx_next(const label_index *l, uint32_t label, uint64_t from)
{
    if (!l || label >= l->n)
        return UINT64_MAX;
    const pvec *words = &l->e[label].words;
    for (uint64_t wi = from / 64; wi < words->len; wi++) {
        uint64_t w = *(const uint64_t *)pvec_get(words, &word_ops, wi);
        if (wi == from / 64)
            w &= ~(uint64_t)0 << (from % 64);
        if (w)
            return wi * 64 + (uint64_t)__builtin_ctzll(w);
    }
    return UINT64_MAX;
}

uint32_t labelidx_labels(const label_index *l) { return l ? l->n : 0; }
