/*
 * Reading a node's adjacency segment whole in tests: its runs gathered
 * into one array.
 */
#ifndef STRATA_TESTS_SUPPORT_ADJ_RUNS_H
#define STRATA_TESTS_SUPPORT_ADJ_RUNS_H

#include <stdlib.h>
#include <string.h>

#include "storage/adjacency.h"

/* Segment i's entries in a malloc'd array (free it); *n of them. */
static inline adj_entry *adj_runs_gather(const adj_block *b, uint32_t i, uint32_t *n)
{
    int dir;
    uint32_t type, cnt = adj_segment_info(b, i, &dir, &type), at = 0;
    adj_entry *all = malloc((cnt ? cnt : 1) * sizeof *all);
    if (!all)
        abort();
    for (adj_run r = adj_run_first(b, i); r.n; r = adj_run_next(b, i, r)) {
        if (at + r.n > cnt)
            abort();
        memcpy(all + at, r.e, r.n * sizeof *all);
        at += r.n;
    }
    if (at != cnt)
        abort();
    *n = cnt;
    return all;
}

#endif
