#include "storage/mem.h"

#include <stdlib.h>
#include <string.h>

#ifdef STRATA_JEMALLOC
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <sys/mman.h>

/* Huge pages, when the environment has STRATA_HUGE_PAGES=1 at the first
   context's creation: every context's arena then advises the kernel to back
   its memory with transparent huge pages (MADV_HUGEPAGE on each extent the
   arena maps; nothing else of jemalloc's changes).  A graph's adjacency
   blocks and slots are spread over hundreds of megabytes, so a pass over
   every node (an algorithm's adjacency build, degree) walks the page
   tables once per node with 4 KiB pages: with 2 MiB pages degree over 1M
   nodes took half the time (docs/BENCHMARKS.md, "Algorithms").  Off by
   default: a page fault then clears 2 MiB, and resident memory grows by
   huge pages, which a write under a held view would pay (W1). */
static pthread_once_t huge_once = PTHREAD_ONCE_INIT;
static extent_hooks_t *default_hooks;   /* jemalloc's own, read once */
static extent_hooks_t huge_hooks;       /* the same, but alloc advises */
static int huge_pages;

static void *huge_alloc(extent_hooks_t *hooks, void *new_addr, size_t size, size_t alignment,
                        bool *zero, bool *commit, unsigned arena_ind)
{
    (void)hooks;
    void *p = default_hooks->alloc(default_hooks, new_addr, size, alignment, zero, commit,
                                   arena_ind);
    if (p)
        (void)madvise(p, size, MADV_HUGEPAGE);   /* advice: refused, nothing changes */
    return p;
}

static void huge_init(void)
{
    const char *on = getenv("STRATA_HUGE_PAGES");
    size_t sz = sizeof default_hooks;
    if (!on || strcmp(on, "1") != 0 ||
        mallctl("arena.0.extent_hooks", &default_hooks, &sz, NULL, 0) != 0)
        return;
    huge_hooks = *default_hooks;
    huge_hooks.alloc = huge_alloc;
    huge_pages = 1;
}

/* Arenas are recycled, not destroyed: a thread cache may still hold blocks
   of an arena whose context is gone (a reader thread freed them), and
   destroying the arena under such a cache corrupts the next allocation.  A
   recycled arena's cached blocks stay valid memory; jemalloc's decay
   returns its idle pages to the system. */
#define ARENA_RECYCLE_MAX 256
static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned recycled[ARENA_RECYCLE_MAX];
static unsigned nrecycled;

static int arena_get(unsigned *arena)
{
    int rc = 0;
    pthread_mutex_lock(&arena_lock);
    if (nrecycled) {
        *arena = recycled[--nrecycled];
    } else {
        size_t sz = sizeof *arena;
        extent_hooks_t *hooks = &huge_hooks;
        pthread_once(&huge_once, huge_init);
        rc = huge_pages ? mallctl("arenas.create", arena, &sz, &hooks, sizeof hooks)
                        : mallctl("arenas.create", arena, &sz, NULL, 0);
    }
    pthread_mutex_unlock(&arena_lock);
    return rc;
}

static void arena_put(unsigned arena)
{
    pthread_mutex_lock(&arena_lock);
    if (nrecycled < ARENA_RECYCLE_MAX)
        recycled[nrecycled++] = arena;
    pthread_mutex_unlock(&arena_lock);
}
#endif

struct mem_ctx {
    atomic_size_t bytes;
    atomic_size_t peak;     /* test builds: the most bytes held at once */
    atomic_int refs;
    unsigned arena;     /* jemalloc arena index; unused without jemalloc */
    int flags;          /* mallocx flags selecting the arena */
    int is_static;      /* the scratch context is never freed */
};

static mem_ctx scratch_ctx = { .refs = 1, .is_static = 1 };

/* Scratch memory is counted only in test builds (leak checks): one shared
   counter that every reader thread's allocations hit would make readers
   contend on a cache line for nothing a release build reports. */
#ifdef STRATA_TESTING
#define COUNTED(m) 1
#else
#define COUNTED(m) (!(m)->is_static)
#endif

#ifdef STRATA_TESTING
static atomic_long fail_at;   /* 0: off; else the count that fails */
static atomic_long alloc_count;

void mem_fail_at(long k)
{
    atomic_store(&alloc_count, 0);
    atomic_store(&fail_at, k > 0 ? k : 0);
}

void mem_fail_clear(void) { mem_fail_at(0); }

long mem_fail_count(void) { return atomic_load(&alloc_count); }

static atomic_uint_fast64_t copied_entries;

void mem_note_copied(uint64_t entries) { atomic_fetch_add(&copied_entries, entries); }
uint64_t mem_copied_entries(void) { return atomic_load(&copied_entries); }

/* Raises m's peak to its current bytes. */
static void note_peak(mem_ctx *m)
{
    size_t now = atomic_load_explicit(&m->bytes, memory_order_relaxed);
    size_t peak = atomic_load_explicit(&m->peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak(&m->peak, &peak, now))
        ;
}

size_t mem_ctx_peak(mem_ctx *m) { return atomic_load(&m->peak); }

void mem_ctx_peak_reset(mem_ctx *m) { atomic_store(&m->peak, atomic_load(&m->bytes)); }

static int injected_failure(void)
{
    long n = atomic_fetch_add(&alloc_count, 1) + 1;
    long k = atomic_load(&fail_at);
    return k > 0 && n >= k;
}

/* mem_limit_set: bytes live across every context, and the cap on them. */
static atomic_size_t live_bytes, limit_bytes;

void mem_limit_set(size_t bytes) { atomic_store(&limit_bytes, bytes); }
size_t mem_live_bytes(void) { return atomic_load(&live_bytes); }

static int over_limit(size_t more)
{
    size_t cap = atomic_load_explicit(&limit_bytes, memory_order_relaxed);
    return cap && (more > cap ||
                   atomic_load_explicit(&live_bytes, memory_order_relaxed) > cap - more);
}

static void note_live(size_t more, size_t less)
{
    atomic_fetch_add_explicit(&live_bytes, more, memory_order_relaxed);
    atomic_fetch_sub_explicit(&live_bytes, less, memory_order_relaxed);
}
#else
static inline int injected_failure(void) { return 0; }
static inline void note_peak(mem_ctx *m) { (void)m; }
static inline int over_limit(size_t more) { (void)more; return 0; }
static inline void note_live(size_t more, size_t less) { (void)more, (void)less; }
#endif

static void *raw_alloc(mem_ctx *m, size_t size)
{
#ifdef STRATA_JEMALLOC
    return mallocx(size, m->flags);
#else
    (void)m;
    return malloc(size);
#endif
}

static void raw_free(mem_ctx *m, void *p, size_t size)
{
#ifdef STRATA_JEMALLOC
    sdallocx(p, size, m->flags);
#else
    (void)m;
    (void)size;
    free(p);
#endif
}

mem_ctx *mem_scratch(void) { return &scratch_ctx; }

int mem_huge_pages(void)
{
#ifdef STRATA_JEMALLOC
    pthread_once(&huge_once, huge_init);
    return huge_pages;
#else
    return 0;
#endif
}

mem_ctx *mem_ctx_new(void)
{
    if (injected_failure())
        return NULL;
    mem_ctx *m = malloc(sizeof *m);
    if (!m)
        return NULL;
    memset(m, 0, sizeof *m);
    atomic_init(&m->bytes, 0);
    atomic_init(&m->refs, 1);
#ifdef STRATA_JEMALLOC
    unsigned arena;
    if (arena_get(&arena) != 0) {
        free(m);
        return NULL;
    }
    m->arena = arena;
    m->flags = (int)MALLOCX_ARENA(arena);
#endif
    return m;
}

void mem_ctx_retain(mem_ctx *m)
{
    if (!m->is_static)
        atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
}

void mem_ctx_release(mem_ctx *m)
{
    if (!m || m->is_static)
        return;
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
        return;
#ifdef STRATA_JEMALLOC
    /* Everything allocated from the arena has been freed (invariant 3). */
    arena_put(m->arena);
#endif
    free(m);
}

size_t mem_ctx_bytes(const mem_ctx *m)
{
    return atomic_load_explicit(&m->bytes, memory_order_relaxed);
}

void *mem_alloc(mem_ctx *m, size_t size)
{
    if (size == 0)
        size = 1;
    if (size == SIZE_MAX || injected_failure() || over_limit(size))
        return NULL;
    void *p = raw_alloc(m, size);
    if (p && COUNTED(m)) {
        atomic_fetch_add_explicit(&m->bytes, size, memory_order_relaxed);
        note_peak(m);
    }
    if (p)
        note_live(size, 0);
    return p;
}

void *mem_calloc(mem_ctx *m, size_t size)
{
    void *p = mem_alloc(m, size);
    if (p)
        memset(p, 0, size ? size : 1);
    return p;
}

void *mem_realloc(mem_ctx *m, void *p, size_t old_size, size_t new_size)
{
    if (!p)
        return mem_alloc(m, new_size);
    if (new_size == 0)
        new_size = 1;
    if (old_size == 0)
        old_size = 1;
    if (new_size == SIZE_MAX || injected_failure() ||
        (new_size > old_size && over_limit(new_size - old_size)))
        return NULL;
#ifdef STRATA_JEMALLOC
    void *q = rallocx(p, new_size, m->flags);
#else
    void *q = realloc(p, new_size);
#endif
    if (!q)
        return NULL;
    note_live(new_size, old_size);
    if (!COUNTED(m))
        return q;
    if (new_size >= old_size) {
        atomic_fetch_add_explicit(&m->bytes, new_size - old_size,
                                  memory_order_relaxed);
        note_peak(m);
    } else
        atomic_fetch_sub_explicit(&m->bytes, old_size - new_size,
                                  memory_order_relaxed);
    return q;
}

void mem_free(mem_ctx *m, void *p, size_t size)
{
    if (!p)
        return;
    if (size == 0)
        size = 1;
    raw_free(m, p, size);
    note_live(0, size);
    if (COUNTED(m))
        atomic_fetch_sub_explicit(&m->bytes, size, memory_order_relaxed);
}

size_t mem_good_size(const mem_ctx *m, size_t size)
{
#ifdef STRATA_JEMALLOC
    size_t good = size ? nallocx(size, m->flags) : 0;
    return good ? good : size;
#else
    (void)m;
    return size;
#endif
}
