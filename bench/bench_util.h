/*
 * What every benchmark program shares: clocks, resident size, a xorshift64
 * generator, summary statistics, and failing loudly.  Define BENCH_NAME
 * (the program's name, for messages) before including.
 */
#ifndef STRATA_BENCH_UTIL_H
#define STRATA_BENCH_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <strata.h>

#ifndef BENCH_NAME
#error "define BENCH_NAME before including bench_util.h"
#endif

static inline double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline double now_ms(void) { return now_us() / 1e3; }

/* The process's resident size (VmRSS), or -1. */
static inline long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* xorshift64; the state must not be zero. */
static inline uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

typedef struct stats {
    double mean, median, worst;
} stats;

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Mean, median and worst of t[0..n) (n > 0); sorts t. */
static inline stats summarise(double *t, int n)
{
    stats s = { 0, 0, 0 };
    for (int i = 0; i < n; i++) {
        s.mean += t[i];
        if (t[i] > s.worst)
            s.worst = t[i];
    }
    s.mean /= n;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    s.median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    return s;
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn, unused));

/* Prints "BENCH_NAME: message" and exits 1 (atexit handlers still run). */
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(BENCH_NAME ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

#define STRATA_OK_G(g, call)                                                           \
    do {                                                                               \
        if ((call) != STRATA_OK)                                                       \
            fail("%s: %s", #call, strata_errmsg(g));                                   \
    } while (0)
#define STRATA_OK_V(v, call)                                                           \
    do {                                                                               \
        if ((call) != STRATA_OK)                                                       \
            fail("%s: %s", #call, strata_view_errmsg(v));                              \
    } while (0)

#endif
