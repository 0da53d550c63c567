/*
 * sort_u32 — sorting a short run of 32-bit integers in place.
 *
 * An insertion sort: for the few labels of a node and the short neighbour
 * rows most nodes have it beats qsort, which pays a call per comparison.
 * Quadratic, so callers take it only below a small bound and sort longer
 * runs another way.
 */
#ifndef STRATA_STORAGE_SORT_U32_H
#define STRATA_STORAGE_SORT_U32_H

#include <stddef.h>
#include <stdint.h>

static inline void sort_u32_short(uint32_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t x = a[i];
        size_t at = i;
        for (; at > 0 && a[at - 1] > x; at--)
            a[at] = a[at - 1];
        a[at] = x;
    }
}

#endif
