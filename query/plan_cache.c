/* plan_cache — checked syntax trees by query text (see plan_cache.h).
   One mutex per cache guards a chained hash table and an LRU list; both
   are small, and the lock is held only to find, link or unlink an entry.
   A plan's reference count is atomic: a reference is taken under the lock
   (plan_cache_get, plan_cache_put) but given back without it, so a
   statement locks the cache once, not twice.  Whoever drops the count to
   zero — plan_release, or evict under the lock — destroys the plan. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "query/plan_cache.h"
#include "storage/mem.h"

#define BUCKETS 512   /* power of two, twice the entries */

struct cached_plan {
    plan_cache *cache;              /* NULL: never cached */
    cached_plan *chain;             /* next in the bucket */
    cached_plan *newer, *older;     /* LRU list */
    uint64_t hash;
    size_t len;
    char *text;
    cypher_ast *ast;
    atomic_size_t refs;             /* the cache's own counts as one */
    atomic_uint traits;             /* plan_traits */
};

struct plan_cache {
    pthread_mutex_t lock;
    cached_plan *buckets[BUCKETS];
    cached_plan *newest, *oldest;
    size_t count;
};

/* Eight bytes a step (a statement is hashed on every run: a byte a step
   cost a point lookup 140 instructions), each step folding the high
   half of the product back down so every byte reaches the low bits the
   buckets use. */
static uint64_t text_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603u ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 1099511628211u;
        h ^= h >> 32;
    }
    for (; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9u;
    return h ^ (h >> 32);
}

static void plan_destroy(cached_plan *p)
{
    mem_ctx *m = mem_scratch();
    cypher_ast_free(&p->ast);
    if (p->text)
        mem_free(m, p->text);
    mem_free(m, p);
}

static void lru_unlink(plan_cache *c, cached_plan *p)
{
    if (p->newer)
        p->newer->older = p->older;
    else
        c->newest = p->older;
    if (p->older)
        p->older->newer = p->newer;
    else
        c->oldest = p->newer;
    p->newer = p->older = NULL;
}

static void lru_push(plan_cache *c, cached_plan *p)
{
    p->older = c->newest;
    p->newer = NULL;
    if (c->newest)
        c->newest->newer = p;
    c->newest = p;
    if (!c->oldest)
        c->oldest = p;
}

static cached_plan **bucket_of(plan_cache *c, uint64_t hash)
{
    return &c->buckets[hash & (BUCKETS - 1)];
}

static cached_plan *find(plan_cache *c, uint64_t hash, const char *text, size_t len)
{
    for (cached_plan *p = *bucket_of(c, hash); p; p = p->chain)
        if (p->hash == hash && p->len == len && memcmp(p->text, text, len) == 0)
            return p;
    return NULL;
}

/* Unlinks p from its cache; returns true when nobody else holds it. */
static bool evict(plan_cache *c, cached_plan *p)
{
    cached_plan **pp = bucket_of(c, p->hash);
    while (*pp != p)
        pp = &(*pp)->chain;
    *pp = p->chain;
    lru_unlink(c, p);
    c->count--;
    return atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1;
}

static void cache_free(plan_cache *c)
{
    plan_cache_clear(c);   /* every plan is released by the time the graph goes */
    pthread_mutex_destroy(&c->lock);
    mem_free(mem_scratch(), c);
}

plan_cache *plan_cache_for(catalog *cat)
{
    plan_cache *c = atomic_load(&cat->plans);
    if (c)
        return c;
    plan_cache *made = mem_calloc(mem_scratch(), sizeof *made);
    if (!made)
        return NULL;
    pthread_mutex_init(&made->lock, NULL);
    if (!atomic_compare_exchange_strong(&cat->plans, &c, made)) {
        pthread_mutex_destroy(&made->lock);
        mem_free(mem_scratch(), made);
        return c;
    }
    /* written by the one thread whose cache won, read only when the
       catalog is freed: two threads making the first plan at once each
       wrote it before, a data race even with the same value */
    cat->plans_free = cache_free;
    return made;
}

cached_plan *plan_cache_get(plan_cache *c, const char *text, size_t len)
{
    if (!c)
        return NULL;
    uint64_t h = text_hash(text, len);
    pthread_mutex_lock(&c->lock);
    cached_plan *p = find(c, h, text, len);
    if (p) {
        atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
        if (c->newest != p) {   /* a statement run again and again stays put */
            lru_unlink(c, p);
            lru_push(c, p);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return p;
}

cached_plan *plan_cache_put(plan_cache *c, const char *text, size_t len, cypher_ast *ast)
{
    mem_ctx *m = mem_scratch();
    cached_plan *p = mem_calloc(m, sizeof *p);
    if (!p) {
        cypher_ast_free(&ast);
        return NULL;
    }
    p->ast = ast;
    atomic_init(&p->refs, 1);
    atomic_init(&p->traits, 0);
    p->hash = text_hash(text, len);
    p->len = len;
    p->text = c ? mem_alloc(m, len + 1) : NULL;
    if (!p->text)
        return p;   /* usable, just not cached */
    memcpy(p->text, text, len);
    p->text[len] = '\0';
    cached_plan *victim = NULL;
    pthread_mutex_lock(&c->lock);
    if (!find(c, p->hash, text, len)) {
        if (c->count == PLAN_CACHE_ENTRIES) {
            cached_plan *old = c->oldest;
            if (evict(c, old))
                victim = old;
        }
        p->chain = *bucket_of(c, p->hash);
        *bucket_of(c, p->hash) = p;
        lru_push(c, p);
        p->cache = c;
        atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
        c->count++;
    }
    pthread_mutex_unlock(&c->lock);
    if (victim)
        plan_destroy(victim);
    return p;
}

const cypher_ast *plan_ast(const cached_plan *p) { return p->ast; }

unsigned plan_traits(const cached_plan *p)
{
    return atomic_load_explicit(&p->traits, memory_order_relaxed);
}

void plan_set_traits(cached_plan *p, unsigned traits)
{
    atomic_store_explicit(&p->traits, traits, memory_order_relaxed);
}

void plan_release(cached_plan **pp)
{
    if (!pp || !*pp)
        return;
    cached_plan *p = *pp;
    *pp = NULL;
    /* the last reference sees every write the others made before they
       let go (acq_rel) */
    if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
        plan_destroy(p);
}

void plan_cache_clear(plan_cache *c)
{
    if (!c)
        return;
    cached_plan *dead = NULL;
    pthread_mutex_lock(&c->lock);
    for (cached_plan *p = c->oldest, *next; p; p = next) {
        next = p->newer;
        /* one reference, the cache's: nobody can give one back meanwhile */
        if (atomic_load(&p->refs) == 1 && evict(c, p)) {
            p->chain = dead;
            dead = p;
        }
    }
    pthread_mutex_unlock(&c->lock);
    while (dead) {
        cached_plan *next = dead->chain;
        plan_destroy(dead);
        dead = next;
    }
}
