/* plan_cache — checked syntax trees by query text (see plan_cache.h).
   One mutex guards a chained hash table and an LRU list; both are small,
   and the lock is held only to find, link or unlink an entry. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "query/plan_cache.h"
#include "storage/mem.h"

#define BUCKETS 512   /* power of two, twice the entries */

struct cached_plan {
    cached_plan *chain;             /* next in the bucket */
    cached_plan *newer, *older;     /* LRU list */
    uint64_t hash;
    size_t len;
    char *text;
    cypher_ast *ast;
    size_t refs;                    /* the cache's own counts as one */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cached_plan *buckets[BUCKETS];
static cached_plan *newest, *oldest;
static size_t count;

static uint64_t text_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603u;   /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static void plan_destroy(cached_plan *p)
{
    mem_ctx *m = mem_scratch();
    cypher_ast_free(&p->ast);
    if (p->text)
        mem_free(m, p->text, p->len + 1);
    mem_free(m, p, sizeof *p);
}

static void lru_unlink(cached_plan *p)
{
    if (p->newer)
        p->newer->older = p->older;
    else
        newest = p->older;
    if (p->older)
        p->older->newer = p->newer;
    else
        oldest = p->newer;
    p->newer = p->older = NULL;
}

static void lru_push(cached_plan *p)
{
    p->older = newest;
    p->newer = NULL;
    if (newest)
        newest->newer = p;
    newest = p;
    if (!oldest)
        oldest = p;
}

static cached_plan **bucket_of(uint64_t hash) { return &buckets[hash & (BUCKETS - 1)]; }

static cached_plan *find(uint64_t hash, const char *text, size_t len)
{
    for (cached_plan *p = *bucket_of(hash); p; p = p->chain)
        if (p->hash == hash && p->len == len && memcmp(p->text, text, len) == 0)
            return p;
    return NULL;
}

/* Unlinks p from the cache; returns true when nobody else holds it. */
static bool evict(cached_plan *p)
{
    cached_plan **pp = bucket_of(p->hash);
    while (*pp != p)
        pp = &(*pp)->chain;
    *pp = p->chain;
    lru_unlink(p);
    count--;
    return --p->refs == 0;
}

cached_plan *plan_cache_get(const char *text, size_t len)
{
    uint64_t h = text_hash(text, len);
    pthread_mutex_lock(&lock);
    cached_plan *p = find(h, text, len);
    if (p) {
        p->refs++;
        lru_unlink(p);
        lru_push(p);
    }
    pthread_mutex_unlock(&lock);
    return p;
}

cached_plan *plan_cache_put(const char *text, size_t len, cypher_ast *ast)
{
    mem_ctx *m = mem_scratch();
    cached_plan *p = mem_calloc(m, sizeof *p);
    if (!p) {
        cypher_ast_free(&ast);
        return NULL;
    }
    p->ast = ast;
    p->refs = 1;
    p->hash = text_hash(text, len);
    p->len = len;
    p->text = mem_alloc(m, len + 1);
    if (!p->text)
        return p;   /* usable, just not cached */
    memcpy(p->text, text, len);
    p->text[len] = '\0';
    cached_plan *victim = NULL;
    pthread_mutex_lock(&lock);
    if (!find(p->hash, text, len)) {
        if (count == PLAN_CACHE_ENTRIES) {
            cached_plan *old = oldest;
            if (evict(old))
                victim = old;
        }
        p->chain = *bucket_of(p->hash);
        *bucket_of(p->hash) = p;
        lru_push(p);
        p->refs++;
        count++;
    }
    pthread_mutex_unlock(&lock);
    if (victim)
        plan_destroy(victim);
    return p;
}

const cypher_ast *plan_ast(const cached_plan *p) { return p->ast; }

void plan_release(cached_plan **pp)
{
    if (!pp || !*pp)
        return;
    cached_plan *p = *pp;
    *pp = NULL;
    pthread_mutex_lock(&lock);
    bool last = --p->refs == 0;
    pthread_mutex_unlock(&lock);
    if (last)
        plan_destroy(p);
}

void plan_cache_clear(void)
{
    cached_plan *dead = NULL;
    pthread_mutex_lock(&lock);
    for (cached_plan *p = oldest, *next; p; p = next) {
        next = p->newer;
        if (p->refs == 1 && evict(p)) {
            p->chain = dead;
            dead = p;
        }
    }
    pthread_mutex_unlock(&lock);
    while (dead) {
        cached_plan *next = dead->chain;
        plan_destroy(dead);
        dead = next;
    }
}
