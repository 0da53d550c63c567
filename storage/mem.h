/*
 * mem — the one allocation wrapper.
 *
 * Every byte strata allocates goes through a mem_ctx.  A context counts the
 * bytes it has handed out (atomically: readers on other threads free what a
 * writer allocated when they drop the last reference to a shared chunk) and,
 * in jemalloc builds, allocates from a jemalloc arena of its own, so that a
 * graph's storage can be measured and released apart from query scratch.
 *
 * Invariants:
 *   1. mem_ctx_bytes(m) == the usable bytes of every block allocated from m
 *      and not yet freed (for the scratch context, in test builds only).  A
 *      block's usable size is what the allocator set aside for it: its size
 *      class (jemalloc's nallocx / sallocx), malloc_usable_size otherwise.
 *   2. A block's count is worked out from the block (or its size class),
 *      never from a size the caller remembers, and comes out the same when
 *      it is allocated and when it is freed.  So either free below is
 *      exact for any block (and after any realloc): which one a caller
 *      uses is a matter of speed, never of the count.
 *   3. A context lives while anything allocated from it lives: it is
 *      refcounted, and each structure that allocates from it holds a ref.
 *
 * Two frees (and two reallocs):
 *   mem_free(m, p)              the common path: scratch, values, strings,
 *                               rows, temporary arrays.  The caller keeps no
 *                               size; a counted context asks the allocator
 *                               for the block's size (one lookup, which the
 *                               free needs anyway without a size).
 *   mem_free_sized(m, p, size)  graph storage (chunks, property records,
 *                               adjacency blocks, index nodes), whose size
 *                               is at hand from its capacity: jemalloc frees
 *                               it without looking the block up, and the
 *                               count comes from the size class.  size must
 *                               be what the block was allocated (or last
 *                               reallocated) with, or anything up to its
 *                               usable size: a wrong size is undefined
 *                               behaviour in jemalloc, so test builds check
 *                               each one and abort naming it.
 *   Release builds do not count the scratch context, so there mem_free
 *   of scratch memory is the allocator's plain free.
 *
 * Failure injection (test builds, STRATA_TESTING): mem_fail_at(k) makes the
 * k-th allocation from now fail, process-wide; every caller must turn that
 * into a status, never an abort.
 */
#ifndef STRATA_STORAGE_MEM_H
#define STRATA_STORAGE_MEM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mem_ctx mem_ctx;

/* A new context with refcount one, or NULL when out of memory. */
mem_ctx *mem_ctx_new(void);
void mem_ctx_retain(mem_ctx *m);
/* Drops a ref; the last one frees the context (and its arena). */
void mem_ctx_release(mem_ctx *m);

/* The process-wide context for short-lived memory (query scratch, values
   handed to API callers).  Never freed. */
mem_ctx *mem_scratch(void);

/* Bytes currently allocated from m. */
size_t mem_ctx_bytes(const mem_ctx *m);

/* Whether contexts' arenas advise the kernel to use transparent huge pages
   for everything they map: set by STRATA_HUGE_PAGES=1 in the environment,
   read once at the first context (or this call); jemalloc builds only, off
   by default.  Without it they advise them only for what they map while a
   bulk build has bound its thread to their context (mem_ctx_bind), unless
   STRATA_HUGE_PAGES=0 (storage/mem.c says why). */
int mem_huge_pages(void);

/* NULL on failure (or injected failure).  size 0 is treated as 1. */
void *mem_alloc(mem_ctx *m, size_t size);
void *mem_calloc(mem_ctx *m, size_t size);
/* Like realloc (p NULL allocates); on failure returns NULL and p is
   untouched.  The _sized form names p's current size (as mem_free_sized). */
void *mem_realloc(mem_ctx *m, void *p, size_t new_size);
void *mem_realloc_sized(mem_ctx *m, void *p, size_t old_size, size_t new_size);
/* Maps in the pages of a large block about to be written whole (1 MiB or
   more), in one call (MADV_POPULATE_WRITE, Linux 5.14) rather than one
   page fault per page as it is first written: about a third less kernel
   time on a load's largest buffers.  Advice only: where it is refused or
   unknown, the pages fault in as before. */
void mem_prefault(void *p, size_t n);
/* p may be NULL.  m must be the context p was allocated from. */
void mem_free(mem_ctx *m, void *p);
void mem_free_sized(mem_ctx *m, void *p, size_t size);
/* The bytes p counts in m (invariant 1): its usable size. */
size_t mem_usable_size(const mem_ctx *m, void *p);
/* The size the allocator really hands out for a request of size (its
   size class), so growable arrays can use the slack instead of wasting
   it.  size itself without jemalloc. */
size_t mem_good_size(const mem_ctx *m, size_t size);

/* A bulk build (a load, an import) binds its thread to the graph's
   context: until the unbind, the thread's allocations from m take the
   allocator's fast path (in jemalloc builds the thread's arena becomes
   m's, so plain malloc allocates from it: callgrind on a load, about 180
   instructions an allocation through mallocx with an explicit arena
   against 80 through malloc, refills from the arena included), and so do
   other contexts' plain allocations on this thread, into m's arena (each
   still counted in its own context); and what m's arena maps meanwhile is
   advised for huge pages (mem_huge_pages).  Nothing else changes: m keeps
   its counts, frees go where they always go.  A thread binds to one
   context at a time; a second bind, or one the allocator refuses, binds
   nothing and its unbind does nothing.  m must outlive the binding. */
typedef struct mem_binding {
    const mem_ctx *ctx;   /* NULL: nothing bound */
    unsigned arena;       /* the thread's arena before */
} mem_binding;
mem_binding mem_ctx_bind(mem_ctx *m);
void mem_ctx_unbind(mem_binding *b);

/* A writer's cache of freed blocks.  A graph's write call frees the
   blocks an earlier call copied (fold-back releases the old path of a
   write under a held view: its chunks, a property record, a version
   header) and allocates as many again for its own copy: through jemalloc's
   arena path that was about 2,300 instructions of a 5,000-instruction
   held-view SET (docs/BENCHMARKS.md, W1).  A cache keeps small freed
   blocks of one context in lists by size class, and the next allocation
   of that class takes the last one freed, still warm in the CPU's cache.
   It belongs to one writer (a graph, under its write lock): only the
   thread that bound it uses it, so it takes no lock and no atomic.

   While a cache is bound (mem_cache_bind), the thread's mem_free_sized of
   a block of at most MEM_CACHE_MAX bytes from the cache's context keeps
   the block (up to MEM_CACHE_DEPTH a class and MEM_CACHE_BYTES in all;
   past that it is freed as before), and the thread's mem_alloc / mem_calloc
   of a size whose class has a block takes it.  Nothing else sees a
   difference: a kept block counts as freed (mem_ctx_bytes, the live
   total) and a block taken counts as allocated, a taken block is an
   allocation for mem_fail_at and mem_limit_set like any other (so an
   injected failure fails it, and failure sweeps meet the same points
   cache or no cache), and a size with no block kept allocates from the
   allocator.  Frees on other threads (a reader dropping the last
   reference to a chunk) never reach a cache.  A cache holds memory of its
   context until mem_cache_drain, which its owner calls before it drops
   its reference on the context. */
/* 1280 is jemalloc's class of a B+tree node at the release order (1,032
   bytes, storage/pbtree.c): a write under a held view frees the top
   level's copied nodes on fold-back and reserves as many again, and with
   512 both went through the arena (about 800 instructions of a 10,700-
   instruction indexed SET: docs/BENCHMARKS.md, W1). */
#define MEM_CACHE_MAX 1280
#define MEM_CACHE_DEPTH 16
#define MEM_CACHE_BYTES 16384
#define MEM_CACHE_LISTS (MEM_CACHE_MAX / 8 + 1)

typedef struct mem_cache {
    mem_ctx *m;                       /* the context whose blocks it keeps */
    void *head[MEM_CACHE_LISTS];      /* by size class / 8: blocks linked
                                         through their first word */
    uint8_t n[MEM_CACHE_LISTS];       /* blocks in each list */
    size_t bytes;                     /* of all of them */
} mem_cache;

/* An empty cache of m's blocks (no reference taken: the owner holds m). */
void mem_cache_init(mem_cache *c, mem_ctx *m);
/* Frees every block kept.  c must not be bound. */
void mem_cache_drain(mem_cache *c);
/* Binds c (NULL: none) to this thread and returns what was bound before,
   to be bound again when c's use ends (bindings nest). */
mem_cache *mem_cache_bind(mem_cache *c);
/* Blocks c keeps now. */
size_t mem_cache_blocks(const mem_cache *c);

/* Overflow-checked n * size; SIZE_MAX on overflow (an allocation of
   SIZE_MAX always fails). */
static inline size_t mem_array_size(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return SIZE_MAX;
    return n * size;
}

#ifdef STRATA_TESTING
/* Fail the k-th allocation from now (k >= 1) and every one after it until
   mem_fail_clear(); k <= 0 disables. */
void mem_fail_at(long k);
void mem_fail_clear(void);
/* Allocations attempted since the last mem_fail_at / mem_fail_clear. */
long mem_fail_count(void);
/* Fails every allocation that would take the bytes live across all
   contexts past bytes (0: no cap), so a fuzzer's query that asks for
   gigabytes meets an out-of-memory error instead of the machine's
   limit. */
void mem_limit_set(size_t bytes);
size_t mem_live_bytes(void);

/* The most bytes m has held at once since the last mem_ctx_peak_reset
   (which starts it at the bytes held now): what a test asserts to show
   memory grows with what an operator keeps, not with its input. */
size_t mem_ctx_peak(mem_ctx *m);
void mem_ctx_peak_reset(mem_ctx *m);

/* Allocations a bound cache served, and allocations of a size a cache
   keeps that it could not serve (the allocator's): process-wide,
   monotonic. */
uint64_t mem_cache_hits(void);
uint64_t mem_cache_misses(void);
/* The copy counter: entries (slots, chunk pointers, properties, adjacency
   entries, index entries) copied because a shared structure had to be
   made private.  The oracle that tells a genuine copy from an O(1) share;
   process-wide, monotonic. */
void mem_note_copied(uint64_t entries);
uint64_t mem_copied_entries(void);
#define MEM_NOTE_COPIED(n) mem_note_copied(n)
#else
#define MEM_NOTE_COPIED(n) ((void)0)
#endif

#endif
