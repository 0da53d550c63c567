/*
 * plan_cache — checked syntax trees kept by query text, one cache per
 * graph.
 *
 * Parsing and semantic analysis are pure functions of the text, so their
 * product can be shared by every view of a graph and every thread reading
 * it: a query that passes parameters instead of splicing values in hits
 * the cache.  What is cached is the checked tree, not a choice of access
 * path: the start of each pattern (bound variable, index seek, label
 * scan) is chosen when the pattern runs, from the indices and counts of
 * the state it reads, so a cached plan never goes stale across schema
 * changes.
 *
 * The cache hangs off the graph's catalog (made on first use, freed with
 * it), so there is no state shared between graphs.  Entries are immutable
 * and refcounted: a plan taken from the cache stays valid until released
 * even if it is evicted meanwhile.  A cache holds at most
 * PLAN_CACHE_ENTRIES trees, least recently used evicted first.
 */
#ifndef STRATA_QUERY_PLAN_CACHE_H
#define STRATA_QUERY_PLAN_CACHE_H

#include <stddef.h>

#include "core/version.h"
#include "query/ast.h"

#define PLAN_CACHE_ENTRIES 256

typedef struct plan_cache plan_cache;
typedef struct cached_plan cached_plan;

/* The cache of the graph cat belongs to, made on first use; NULL when out
   of memory (queries then run uncached). */
plan_cache *plan_cache_for(catalog *cat);

/* The plan for text[0..len) with a reference, or NULL when not cached. */
cached_plan *plan_cache_get(plan_cache *c, const char *text, size_t len);
/* Caches ast (taking it) under text[0..len) in c (which may be NULL) and
   returns it with a reference; when out of memory, or when another thread
   cached the same text first, returns a plan that still owns ast.  NULL
   only when even that fails (ast is then freed). */
cached_plan *plan_cache_put(plan_cache *c, const char *text, size_t len, cypher_ast *ast);
const cypher_ast *plan_ast(const cached_plan *p);
/* What a statement's runner learns of the tree once and keeps with it
   (query.c: whether it only reads, whether it runs lazily): a small set
   of bits, 0 until plan_set_traits.  Any thread may read and set them; a
   run that reads 0 works them out and sets them, the same each time. */
#define PLAN_TRAITS_KNOWN 1u
unsigned plan_traits(const cached_plan *p);
void plan_set_traits(cached_plan *p, unsigned traits);
void plan_release(cached_plan **p);
/* Drops every entry nobody holds (tests and leak checks). */
void plan_cache_clear(plan_cache *c);

#endif
