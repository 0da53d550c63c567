#include "storage/mem.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef STRATA_JEMALLOC
#include <malloc.h>   /* malloc_usable_size */
#endif

/* AddressSanitizer, under gcc's name or clang's. */
#if defined(__SANITIZE_ADDRESS__)
#define MEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEM_ASAN 1
#endif
#endif

struct mem_ctx {
    atomic_size_t bytes;
    atomic_size_t peak;     /* test builds: the most bytes held at once */
    atomic_int refs;
    unsigned arena;     /* jemalloc arena index; unused without jemalloc */
    int flags;          /* mallocx flags selecting the arena */
    int is_static;      /* the scratch context is never freed */
};

#ifdef STRATA_JEMALLOC
#include <dlfcn.h>
#include <jemalloc/jemalloc.h>
#include <pthread.h>

/* Huge pages: a context's arena may advise the kernel to back what it maps
   with transparent huge pages (MADV_HUGEPAGE on each extent, from an
   extent hook every arena is created with; nothing else of jemalloc's
   changes).  A graph's adjacency blocks and slots are spread over hundreds
   of megabytes, so a pass over every node (a load's linking, an
   algorithm's adjacency build, degree) walks the page tables once per node
   with 4 KiB pages, and a bulk build faults in every page it writes one at
   a time.  By default only what an arena maps while a bulk build has bound
   its thread to the arena's context (mem_ctx_bind: a load, an import) is
   advised: a 1M-node / 5M-relationship load took 1.7-2.9 s of CPU against
   3.6-5.0, an import 2.2-2.3 M rows per CPU second against 1.7-1.8, with
   the same peak resident size (docs/BENCHMARKS.md, "Third round").
   STRATA_HUGE_PAGES=1 in the environment at the first context's creation
   advises every extent of every arena; STRATA_HUGE_PAGES=0 none.  Not
   every write by default: a fault then clears 2 MiB, and resident memory
   grows by huge pages, which a write under a held view would pay (W1).  An
   arena recycled from a freed context reuses what it mapped before,
   advised or not. */
static pthread_once_t huge_once = PTHREAD_ONCE_INIT;
static extent_hooks_t *default_hooks;   /* jemalloc's own, read once */
static extent_hooks_t huge_hooks;       /* the same, but alloc may advise */
static int hooks_ready;                 /* every arena is created with huge_hooks */
static int huge_pages;                  /* STRATA_HUGE_PAGES=1: every extent advised */
static int bulk_huge_pages;             /* unless STRATA_HUGE_PAGES=0: a bulk build's */

/* The context this thread is bound to (mem_ctx_bind), whose arena is then
   the thread's own: its allocations take malloc's fast path too, and
   what its arena maps is a bulk build's (huge_alloc). */
static _Thread_local const mem_ctx *bound_ctx;

static void *huge_alloc(extent_hooks_t *hooks, void *new_addr, size_t size, size_t alignment,
                        bool *zero, bool *commit, unsigned arena_ind)
{
    (void)hooks;
    void *p = default_hooks->alloc(default_hooks, new_addr, size, alignment, zero, commit,
                                   arena_ind);
    bool bulk = bulk_huge_pages && bound_ctx && bound_ctx->arena == arena_ind;
    if (p && (huge_pages || bulk))
        (void)madvise(p, size, MADV_HUGEPAGE);   /* advice: refused, nothing changes */
    return p;
}

static void huge_init(void)
{
    const char *on = getenv("STRATA_HUGE_PAGES");
    size_t sz = sizeof default_hooks;
    if (mallctl("arena.0.extent_hooks", &default_hooks, &sz, NULL, 0) != 0)
        return;
    huge_hooks = *default_hooks;
    huge_hooks.alloc = huge_alloc;
    hooks_ready = 1;
    huge_pages = on && strcmp(on, "1") == 0;
    bulk_huge_pages = !(on && strcmp(on, "0") == 0);
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
        rc = hooks_ready ? mallctl("arenas.create", arena, &sz, &hooks, sizeof hooks)
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

/* ---- the allocator underneath ------------------------------------------
   usable_of(p): the usable size of a live block (invariant 1);
   usable_class(size): the usable size of a block allocated with size, if
   the allocator can tell without the block (jemalloc's size classes), else
   0. */

#ifdef STRATA_JEMALLOC
/* Whether malloc, realloc and free as this library calls them are
   jemalloc's own (the program or the library linked jemalloc ahead of the
   C library).  Then the scratch context, which uses no arena of its own
   (flags 0), allocates and frees through them: jemalloc's fast paths,
   where mallocx and dallocx parse flags and look the arena up (callgrind,
   a block allocated and freed: mallocx + sdallocx about 170 instructions,
   mallocx + dallocx 205, malloc + free 95).  A program that links the
   shared library but not jemalloc gets the C library's malloc: then
   scratch keeps the jemalloc calls.  Worked out once; a race works out
   the same answer twice. */
static atomic_int plain_state;   /* 0: not yet known, 1: jemalloc's, 2: not */

static bool plain_is_jemalloc(void)
{
    int state = atomic_load_explicit(&plain_state, memory_order_relaxed);
    if (state == 0) {
        Dl_info mine, a, r, f;
        bool same = dladdr((void *)mallocx, &mine) && dladdr((void *)malloc, &a) &&
                    dladdr((void *)realloc, &r) && dladdr((void *)free, &f) &&
                    a.dli_fbase == mine.dli_fbase && r.dli_fbase == mine.dli_fbase &&
                    f.dli_fbase == mine.dli_fbase;
        state = same ? 1 : 2;
        atomic_store_explicit(&plain_state, state, memory_order_relaxed);
    }
    return state == 1;
}

#define PLAIN(m) (((m)->flags == 0 || (m) == bound_ctx) && plain_is_jemalloc())

static void *raw_alloc(mem_ctx *m, size_t size)
{
    return PLAIN(m) ? malloc(size) : mallocx(size, m->flags);
}

static void *raw_realloc(mem_ctx *m, void *p, size_t size)
{
    return PLAIN(m) ? realloc(p, size) : rallocx(p, size, m->flags);
}

/* Size classes up to CLASS_TABLE_MAX bytes, read off a table (one load)
   rather than asked of nallocx (about 40 instructions a call, run for
   every counted allocation and free: callgrind on a load, a twentieth of
   its instructions).  jemalloc's classes are multiples of 8 and a class
   does not depend on the arena, so nallocx(8 * i) is the class of every
   size in (8 * (i - 1), 8 * i].  Filled once, by the first thread to
   need it. */
#define CLASS_TABLE_MAX 4096
static uint16_t class_table[CLASS_TABLE_MAX / 8 + 1];
static atomic_int class_table_ready;
static pthread_once_t class_table_once = PTHREAD_ONCE_INIT;

static void class_table_fill(void)
{
    for (size_t i = 1; i <= CLASS_TABLE_MAX / 8; i++)
        class_table[i] = (uint16_t)nallocx(8 * i, 0);
    atomic_store_explicit(&class_table_ready, 1, memory_order_release);
}

/* Off the table: a size past it, or the table's first use (kept out of
   line so the lookup needs no registers saved). */
static __attribute__((noinline)) size_t usable_class_slow(const mem_ctx *m, size_t size)
{
    if (size - 1 >= CLASS_TABLE_MAX)
        return nallocx(size, m->flags);
    pthread_once(&class_table_once, class_table_fill);
    return class_table[(size + 7) / 8];
}

static inline size_t usable_class(const mem_ctx *m, size_t size)
{
    if (size - 1 < CLASS_TABLE_MAX &&
        atomic_load_explicit(&class_table_ready, memory_order_acquire))
        return class_table[(size + 7) / 8];
    return usable_class_slow(m, size);
}

static size_t usable_of(const mem_ctx *m, void *p) { return sallocx(p, m->flags); }

/* Frees pass no arena: jemalloc frees a block to the arena it came from
   whatever the flags say (only a tcache flag would change what a free
   does), and with flags it takes its generic path instead of its fast
   one. */
static void raw_free(mem_ctx *m, void *p)
{
    if (PLAIN(m))
        free(p);
    else
        dallocx(p, 0);
}

static void raw_free_sized(mem_ctx *m, void *p, size_t size)
{
    if (PLAIN(m))
        free(p);   /* jemalloc's free beats its sdallocx, flags and all */
    else
        sdallocx(p, size, 0);
}
#else
static void *raw_alloc(mem_ctx *m, size_t size) { (void)m; return malloc(size); }
static void *raw_realloc(mem_ctx *m, void *p, size_t size) { (void)m; return realloc(p, size); }
static size_t usable_of(const mem_ctx *m, void *p) { (void)m; return malloc_usable_size(p); }
static size_t usable_class(const mem_ctx *m, size_t size) { (void)m, (void)size; return 0; }
static void raw_free(mem_ctx *m, void *p) { (void)m; free(p); }
static void raw_free_sized(mem_ctx *m, void *p, size_t size) { (void)m, (void)size; free(p); }
#endif

/* The usable size of p, allocated with size: from the size class where
   the allocator has them (no lookup), else from the block. */
static size_t usable_sized(const mem_ctx *m, void *p, size_t size)
{
    size_t u = usable_class(m, size);
    return u ? u : usable_of(m, p);
}

#ifdef STRATA_TESTING
#ifdef MEM_ASAN
#define USABLE_IS_REQUESTED 1   /* ASan's malloc_usable_size is the size asked */
#endif
#ifndef USABLE_IS_REQUESTED
#define USABLE_IS_REQUESTED 0
#endif

/* A sized free or realloc must name the block's size (mem.h): with a
   wrong one jemalloc's sdallocx corrupts its size classes and the count
   drifts, so a test build stops at the first. */
static void check_sized(const mem_ctx *m, void *p, size_t size, const char *who)
{
    size_t have = usable_of(m, p);
    size_t want = usable_class(m, size);
    bool ok = want ? want == have : USABLE_IS_REQUESTED ? size == have : size <= have;
    if (!ok) {
        fprintf(stderr, "%s: size %zu does not name the block at %p (usable size %zu)\n",
                who, size, p, have);
        abort();
    }
}
#else
static inline void check_sized(const mem_ctx *m, void *p, size_t size, const char *who)
{
    (void)m, (void)p, (void)size, (void)who;
}
#endif

/* ---- the writer's cache (mem.h) -----------------------------------------
   A list per size class, indexed by the class's bytes / 8.  With jemalloc
   a block's class is its usable size, so a block taken serves any size of
   its class and counts the same bytes its free counted out.  Without
   jemalloc (the sanitizer builds) the allocator has no classes to tell:
   a list holds blocks freed with exactly its size (a multiple of 8), which
   is at most their usable size, and serves that size alone. */
static _Thread_local mem_cache *bound_cache;

#ifdef STRATA_TESTING
static atomic_uint_fast64_t cache_hits, cache_misses;

uint64_t mem_cache_hits(void) { return atomic_load(&cache_hits); }
uint64_t mem_cache_misses(void) { return atomic_load(&cache_misses); }
#define NOTE_CACHE(counter) atomic_fetch_add_explicit(&(counter), 1, memory_order_relaxed)
#else
#define NOTE_CACHE(counter) ((void)0)
#endif

/* A kept block is free memory to AddressSanitizer too: a use of a chunk
   after its free must still be caught when the free only kept it.  All
   but its first word, which links it to the next kept block: the leak
   checker does not read poisoned memory, so a list linked through
   poisoned words would read as leaked blocks to a program that exits
   with its graph still open. */
#ifdef MEM_ASAN
#include <sanitizer/asan_interface.h>
#define KEPT(p, n) ASAN_POISON_MEMORY_REGION((char *)(p) + sizeof(void *), (n) - sizeof(void *))
#define TAKEN(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define KEPT(p, n) ((void)(p), (void)(n))
#define TAKEN(p, n) ((void)(p), (void)(n))
#endif

/* The list a block of size belongs to, 0 for none; cls is the size's
   class (usable_class: 0 without jemalloc). */
static inline size_t cache_list(size_t size, size_t cls)
{
#ifdef STRATA_JEMALLOC
    (void)size;
    return cls <= MEM_CACHE_MAX ? cls / 8 : 0;
#else
    (void)cls;
    return size <= MEM_CACHE_MAX && size % 8 == 0 ? size / 8 : 0;
#endif
}

void mem_cache_init(mem_cache *c, mem_ctx *m)
{
    memset(c, 0, sizeof *c);
    c->m = m;
}

mem_cache *mem_cache_bind(mem_cache *c)
{
    mem_cache *before = bound_cache;
    bound_cache = c;
    return before;
}

size_t mem_cache_blocks(const mem_cache *c)
{
    size_t n = 0;
    for (size_t k = 1; k < MEM_CACHE_LISTS; k++)
        n += c->n[k];
    return n;
}

/* A kept block of m for size (of class cls) from the bound cache, or
   NULL. */
static inline void *cache_take(mem_ctx *m, size_t size, size_t cls)
{
    mem_cache *c = bound_cache;
    if (!c || c->m != m)
        return NULL;
    size_t k = cache_list(size, cls);
    if (!k)
        return NULL;
    void **p = c->head[k];
    if (!p) {
        NOTE_CACHE(cache_misses);
        return NULL;
    }
    TAKEN(p, k * 8);
    c->head[k] = *p;
    c->n[k]--;
    c->bytes -= k * 8;
    NOTE_CACHE(cache_hits);
    return p;
}

/* Keeps p (a block of m freed with size, of class cls) in the bound
   cache if it has room for it. */
static inline bool cache_keep(mem_ctx *m, void *p, size_t size, size_t cls)
{
    mem_cache *c = bound_cache;
    if (!c || c->m != m)
        return false;
    size_t k = cache_list(size, cls);
    if (!k || c->n[k] >= MEM_CACHE_DEPTH || c->bytes + k * 8 > MEM_CACHE_BYTES)
        return false;
    *(void **)p = c->head[k];
    c->head[k] = p;
    c->n[k]++;
    c->bytes += k * 8;
    KEPT(p, k * 8);
    return true;
}

/* Counts a block of usable bytes into or out of m (and the live total).
   Callers skip both when !COUNTED(m): then there is no size to find out. */
static void count_in(mem_ctx *m, size_t usable)
{
    note_live(usable, 0);
    atomic_fetch_add_explicit(&m->bytes, usable, memory_order_relaxed);
    note_peak(m);
}

static void count_out(mem_ctx *m, size_t usable)
{
    note_live(0, usable);
    atomic_fetch_sub_explicit(&m->bytes, usable, memory_order_relaxed);
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
    if (!COUNTED(m))
        return raw_alloc(m, size);
    /* The class once, for the cache and the count (usable_sized). */
    size_t cls = usable_class(m, size);
    void *p = cache_take(m, size, cls);
    if (!p && !(p = raw_alloc(m, size)))
        return NULL;
    count_in(m, cls ? cls : usable_of(m, p));
    return p;
}

void *mem_calloc(mem_ctx *m, size_t size)
{
    void *p = mem_alloc(m, size);
    if (p)
        memset(p, 0, size ? size : 1);
    return p;
}

/* mem_realloc and mem_realloc_sized once old, p's usable size, is known
   (0 when nothing counts). */
static void *realloc_counted(mem_ctx *m, void *p, size_t old, size_t new_size)
{
    if (new_size == 0)
        new_size = 1;
    if (new_size == SIZE_MAX || injected_failure() ||
        (new_size > old && over_limit(new_size - old)))
        return NULL;
    void *q = raw_realloc(m, p, new_size);
    if (q && COUNTED(m)) {
        count_out(m, old);
        count_in(m, usable_sized(m, q, new_size));
    }
    return q;
}

void *mem_realloc(mem_ctx *m, void *p, size_t new_size)
{
    if (!p)
        return mem_alloc(m, new_size);
    return realloc_counted(m, p, COUNTED(m) ? usable_of(m, p) : 0, new_size);
}

void *mem_realloc_sized(mem_ctx *m, void *p, size_t old_size, size_t new_size)
{
    if (!p)
        return mem_alloc(m, new_size);
    if (old_size == 0)
        old_size = 1;
    check_sized(m, p, old_size, "mem_realloc_sized");
    return realloc_counted(m, p, COUNTED(m) ? usable_sized(m, p, old_size) : 0, new_size);
}

void mem_free(mem_ctx *m, void *p)
{
    if (!p)
        return;
    if (!COUNTED(m)) {
        raw_free(m, p);
        return;
    }
    size_t usable = usable_of(m, p);
    count_out(m, usable);
    raw_free_sized(m, p, usable);   /* the lookup is done: skip the free's own */
}

void mem_free_sized(mem_ctx *m, void *p, size_t size)
{
    if (!p)
        return;
    if (size == 0)
        size = 1;
    check_sized(m, p, size, "mem_free_sized");
    if (!COUNTED(m)) {
        raw_free_sized(m, p, size);
        return;
    }
    size_t cls = usable_class(m, size);
    count_out(m, cls ? cls : usable_of(m, p));
    if (!cache_keep(m, p, size, cls))
        raw_free_sized(m, p, size);
}

void mem_cache_drain(mem_cache *c)
{
    for (size_t k = 1; k < MEM_CACHE_LISTS; k++) {
        while (c->head[k]) {
            void **p = c->head[k];
            TAKEN(p, k * 8);
            c->head[k] = *p;
            raw_free_sized(c->m, p, k * 8);   /* counted out when it was kept */
        }
        c->n[k] = 0;
    }
    c->bytes = 0;
}

size_t mem_usable_size(const mem_ctx *m, void *p) { return usable_of(m, p); }

size_t mem_good_size(const mem_ctx *m, size_t size)
{
#ifdef STRATA_JEMALLOC
    size_t good = size ? usable_class(m, size) : 0;
    return good ? good : size;
#else
    (void)m;
    return size;
#endif
}

mem_binding mem_ctx_bind(mem_ctx *m)
{
    mem_binding b = { NULL, 0 };
#ifdef STRATA_JEMALLOC
    size_t sz = sizeof b.arena;
    unsigned arena = m->arena;
    if (m->is_static || bound_ctx || !plain_is_jemalloc() ||
        mallctl("thread.arena", &b.arena, &sz, &arena, sizeof arena) != 0)
        return b;
    bound_ctx = m;
    b.ctx = m;
#else
    (void)m;
#endif
    return b;
}

void mem_ctx_unbind(mem_binding *b)
{
#ifdef STRATA_JEMALLOC
    if (b->ctx) {
        assert(bound_ctx == b->ctx);
        (void)mallctl("thread.arena", NULL, NULL, &b->arena, sizeof b->arena);
        bound_ctx = NULL;
    }
#endif
    b->ctx = NULL;
}

void mem_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (n < ((size_t)1 << 20) || page == 0 || page == (uintptr_t)-1)
        return;
    uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1), to = ((uintptr_t)p + n) & ~(page - 1);
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}
