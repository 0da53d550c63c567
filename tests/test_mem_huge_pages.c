/* Huge pages (storage/mem.c): by default a context's arena advises them
   for what it maps while a bulk build has bound its thread to the context
   (mem_ctx_bind: a load, an import), and for nothing else;
   STRATA_HUGE_PAGES=1 advises them for everything, STRATA_HUGE_PAGES=0
   for nothing.  The kernel shows the advice as "hg" among a mapping's
   VmFlags in /proc/self/smaps.  The setting is read once per process, at
   the first context, so the default and "0" are checked in children
   forked before any context exists, and "1" in the parent after setting
   it.  Skipped without jemalloc (sanitizer builds: nothing binds and
   mem_huge_pages() stays 0) or without transparent huge pages in the
   kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/mem.h"

/* Whether the mapping holding p carries the huge-page advice. */
static bool advised(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512];
    bool inside = false, found = false, hg = false;
    uintptr_t at = (uintptr_t)p;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = at >= lo && at < hi;
            continue;
        }
        if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            found = true;
            hg = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    assert_true(found);
    return hg;
}

/* A new context's allocation of 1 MiB (below jemalloc's threshold for its
   own arena of oversized blocks), touched, with this thread bound to the
   context or not, and whether it is advised.  *bound: whether the binding
   took (never without jemalloc).  The context is kept (*keep) until the
   caller is done: a released context's arena is recycled, and the next
   context would reuse what it had mapped, advised or not. */
static bool context_memory_advised(bool bind, bool *bound, mem_ctx **keep)
{
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    *keep = m;
    mem_binding b = { NULL, 0 };
    if (bind)
        b = mem_ctx_bind(m);
    if (bound)
        *bound = b.ctx != NULL;
    size_t size = 1u << 20;
    unsigned char *p = mem_alloc(m, size);
    assert_non_null(p);
    memset(p, 1, size);
    bool hg = advised(p + size / 2);
    mem_ctx_unbind(&b);
    mem_free(m, p);
    return hg;
}

/* Runs check in a child forked now, with STRATA_HUGE_PAGES as given (NULL:
   unset), and expects it to exit 0. */
static void in_child(const char *setting, int (*check)(void))
{
    if (setting)
        setenv("STRATA_HUGE_PAGES", setting, 1);
    else
        unsetenv("STRATA_HUGE_PAGES");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(check());
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* The default: only a bound context's memory is advised. */
static int default_check(void)
{
    if (mem_huge_pages())
        return 1;
    bool bound;
    mem_ctx *a, *b;
    bool unbound_hg = context_memory_advised(false, NULL, &a);
    bool bound_hg = context_memory_advised(true, &bound, &b);
    mem_ctx_release(a);
    mem_ctx_release(b);
    return unbound_hg ? 2 : bound_hg != bound ? 3 : 0;
}

/* STRATA_HUGE_PAGES=0: not even a bound context's. */
static int off_check(void)
{
    if (mem_huge_pages())
        return 1;
    mem_ctx *m;
    bool hg = context_memory_advised(true, NULL, &m);
    mem_ctx_release(m);
    return hg ? 2 : 0;
}

static void test_advice_for_bulk_builds_or_when_asked(void **state)
{
    (void)state;
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0)
        skip();
    in_child(NULL, default_check);
    in_child("0", off_check);
    setenv("STRATA_HUGE_PAGES", "1", 1);
    if (!mem_huge_pages())
        skip();   /* without jemalloc the setting does nothing */
    mem_ctx *m;
    assert_true(context_memory_advised(false, NULL, &m));
    mem_ctx_release(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_advice_for_bulk_builds_or_when_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
