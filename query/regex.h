/*
 * regex — `s =~ pattern`, by PCRE2 in UTF mode.
 *
 * The syntax is PCRE2's, which is what openCypher users write for Java's
 * java.util.regex: lazy and possessive quantifiers, lookahead and
 * lookbehind, \d \w \s (ASCII, as in Java), \p{..} classes, inline flags
 * such as (?i).  The whole string must match: the pattern is compiled
 * anchored at both ends (PCRE2_ANCHORED | PCRE2_ENDANCHORED), so 'ab' =~
 * 'a|ab' is true.
 *
 * Invariants:
 *   1. A pattern is compiled once per executor: each executor (one
 *      statement, or one lazily read result) keeps up to REGEX_CACHE_SLOTS
 *      compiled patterns, looked up by their bytes, replaced round robin.
 *   2. Every match is bounded: at most REGEX_MATCH_LIMIT backtracking
 *      steps and REGEX_HEAP_LIMIT_KIB of backtracking memory; a pattern at
 *      most REGEX_MAX_PATTERN bytes, its compiled form at most PCRE2's
 *      own size limit.  Past a limit the statement fails with an
 *      ArgumentError naming the limit; it never runs unbounded.
 *   3. Every byte PCRE2 allocates comes from the executor's mem_ctx
 *      (through a pcre2_general_context), so an allocation failure is an
 *      OutOfMemory error and test builds can inject it.
 */
#ifndef STRATA_QUERY_REGEX_H
#define STRATA_QUERY_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/exec.h"

#define REGEX_CACHE_SLOTS 16
/* 1,000,000: a catastrophic pattern ('(a+)+\d' on 40 a's) gives up after
   about 0.2 s; (a|b)* still matches a 100,000-character subject.
   Measured with PCRE2 10.42 on the benchmark machine. */
#define REGEX_MATCH_LIMIT 1000000u
#define REGEX_HEAP_LIMIT_KIB 65536u
#define REGEX_MAX_PATTERN 65536u

/* Whether the whole of s[0..ls) matches pat[0..lp) (both well-formed
   UTF-8).  0 with *matched set, or -1 with the error in x. */
int regex_full_match(exec *x, const cypher_ast_node *at, const char *s, size_t ls,
                     const char *pat, size_t lp, bool *matched);
/* Frees the executor's compiled patterns (at the executor's end). */
void regex_cache_free(exec *x);

#ifdef STRATA_TESTING
/* Patterns compiled since the process started (the cache's oracle). */
uint64_t regex_compile_count(void);
#endif

#endif
