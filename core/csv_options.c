/*
 * LOAD CSV's file access (strata_set_csv_options): kept in the catalog, so
 * that a query on any view of the graph reads the same settings
 * (query/op_load_csv.c applies them).  The import directory is resolved to
 * its canonical path once, here, so that LOAD CSV compares canonical paths
 * against it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/graph_impl.h"

strata_status strata_set_csv_options(strata_graph *g, const strata_csv_options *opts)
{
    if (!g)
        return STRATA_EINVAL;
    if (!opts)
        return graph_fail(g, STRATA_EINVAL, "strata_set_csv_options: opts is NULL");
    char *dir = NULL;
    size_t size = 0;
    if (opts->import_dir) {
        char *canon = realpath(opts->import_dir, NULL);
        struct stat st;
        if (!canon)
            return graph_fail(g, errno == ENOENT ? STRATA_ENOTFOUND : STRATA_EINVAL,
                              "import directory '%s': %s", opts->import_dir, strerror(errno));
        if (stat(canon, &st) != 0 || !S_ISDIR(st.st_mode)) {
            free(canon);
            return graph_fail(g, STRATA_EINVAL, "import directory '%s' is not a directory",
                              opts->import_dir);
        }
        size = strlen(canon) + 1;
        dir = mem_alloc(g->m, size);
        if (dir)
            memcpy(dir, canon, size);
        free(canon);
        if (!dir)
            return graph_fail(g, STRATA_ENOMEM, "out of memory setting the import directory");
    }
    pthread_mutex_lock(&g->lock);
    catalog *c = g->cat;
    if (c->import_dir)
        mem_free_sized(g->m, c->import_dir, c->import_dir_size);
    c->import_dir = dir;
    c->import_dir_size = size;
    c->csv_disabled = opts->disabled;
    c->csv_field_max = opts->field_max ? opts->field_max : STRATA_CSV_FIELD_MAX;
    pthread_mutex_unlock(&g->lock);
    return STRATA_OK;
}

strata_status strata_get_csv_options(strata_graph *g, strata_csv_options *out)
{
    if (!g)
        return STRATA_EINVAL;
    if (!out)
        return graph_fail(g, STRATA_EINVAL, "strata_get_csv_options: out is NULL");
    pthread_mutex_lock(&g->lock);
    *out = (strata_csv_options){ g->cat->csv_disabled, g->cat->import_dir,
                                 g->cat->csv_field_max };
    pthread_mutex_unlock(&g->lock);
    return STRATA_OK;
}
