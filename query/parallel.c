/* parallel — the workers of a read on several threads (parallel.h). */
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "query/parallel.h"
#include "query/regex.h"

unsigned parallel_threads(exec *x)
{
    if (x->parallel_worker)
        return 1;
    unsigned n = atomic_load(&exec_view(x)->ver->cat->query_threads);
    if (n == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > 0 ? (unsigned)cpus : 1;
    }
    return n > 64 ? 64 : n;
}

void parallel_exec_init(exec *w, exec *x)
{
    *w = *x;
    w->g = NULL;                            /* reads the fixed version below */
    w->view.ver = exec_view(x)->ver;
    memset(&w->err, 0, sizeof w->err);
    w->used_rels = NULL;
    w->nused = w->capused = w->used_base = 0;
    w->prof = NULL;
    w->regexes = NULL;
    w->ticks = 0;
    w->arena = NULL;                        /* the statement's is one thread's */
    w->no_arena = 0;
    w->parallel_worker = true;
}

void parallel_exec_fini(exec *w)
{
    regex_cache_free(w);
    if (w->used_rels)
        mem_free(w->m, w->used_rels);
    w->used_rels = NULL;
}

