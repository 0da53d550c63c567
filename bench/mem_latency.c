/*
 * mem_latency — what one dependent cache miss costs on this machine, for
 * reading the other figures: a random cycle of pointers, one per 64-byte
 * line, walked for each working-set size from 16 KiB to 512 MiB.  Each
 * step's load depends on the one before, as a descent through a tree or a
 * chain from an index entry to a slot to a record does.
 *
 *   mem_latency [--max-mib M]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "mem_latency"
#include "bench_util.h"

#define LINE 64

/* Links the lines of buf (n of them) into one random cycle. */
static void link_cycle(char *buf, size_t n, uint64_t *seed)
{
    size_t *order = malloc(n * sizeof *order);
    if (!order)
        fail("out of memory");
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(xorshift(seed) % (i + 1));
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        *(char **)(void *)(buf + order[i] * LINE) = buf + order[(i + 1) % n] * LINE;
    free(order);
}

int main(int argc, char **argv)
{
    size_t max_mib = 512;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max-mib") && i + 1 < argc)
            max_mib = strtoull(argv[++i], NULL, 10);
        else
            fail("usage: mem_latency [--max-mib M]");
    }
    uint64_t seed = 0x2545f4914f6cdd1dull;
    printf("working set   ns per dependent load\n");
    for (size_t kib = 16; kib <= max_mib * 1024; kib *= 2) {
        size_t n = kib * 1024 / LINE;
        char *buf = malloc(n * LINE);
        if (!buf)
            fail("out of memory for %zu KiB", kib);
        link_cycle(buf, n, &seed);
        char *volatile sink;
        char *p = buf;
        for (size_t i = 0; i < n; i++)   /* once round, to fault it in and warm it */
            p = *(char **)(void *)p;
        size_t steps = 4000000;
        double t0 = now_us();
        for (size_t i = 0; i < steps; i++)
            p = *(char **)(void *)p;
        double t1 = now_us();
        sink = p;
        (void)sink;
        printf("%9zu KiB   %6.1f\n", kib, (t1 - t0) * 1e3 / (double)steps);
        free(buf);
    }
    return 0;
}
