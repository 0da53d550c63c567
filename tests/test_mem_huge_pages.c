/* STRATA_HUGE_PAGES=1 (storage/mem.c): a context's arena advises huge
   pages for the memory it maps, and only then.  The kernel shows the advice
   as "hg" among a mapping's VmFlags in /proc/self/smaps.  The setting is
   read once per process, at the first context, so the default is checked
   in a child forked before any context exists, and the option in the
   parent after setting it.  Skipped without jemalloc (sanitizer builds:
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

/* A context's allocation of 1 MiB (below jemalloc's threshold for its own
   arena of oversized blocks), touched, and whether it is advised. */
static bool context_memory_advised(void)
{
    mem_ctx *m = mem_ctx_new();
    assert_non_null(m);
    size_t size = 1u << 20;
    unsigned char *p = mem_alloc(m, size);
    assert_non_null(p);
    memset(p, 1, size);
    bool hg = advised(p + size / 2);
    mem_free(m, p);
    mem_ctx_release(m);
    return hg;
}

static void test_advice_only_when_asked(void **state)
{
    (void)state;
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0)
        skip();
    unsetenv("STRATA_HUGE_PAGES");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)   /* default: off, and not advised */
        _exit(mem_huge_pages() || context_memory_advised() ? 1 : 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    setenv("STRATA_HUGE_PAGES", "1", 1);
    if (!mem_huge_pages())
        skip();   /* without jemalloc the setting does nothing */
    assert_true(context_memory_advised());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_advice_only_when_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
