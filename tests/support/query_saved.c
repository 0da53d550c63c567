/* query_saved FILE QUERY... — loads a saved graph and prints each query's
   result as `strata --format jsonl` does; the import test checks what
   `strata import` wrote with it.  Exit status 1 if anything failed. */
#include <stdio.h>

#include "cli/output.h"
#include "strata.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: query_saved FILE QUERY...\n");
        return 2;
    }
    strata_graph *g = NULL;
    char err[512];
    if (strata_load_ex(argv[1], &g, err, sizeof err) != STRATA_OK) {
        fprintf(stderr, "query_saved: %s\n", err);
        return 1;
    }
    int status = 0;
    for (int i = 2; i < argc; i++) {
        strata_result *r = NULL;
        if (strata_query(g, argv[i], NULL, &r) == STRATA_OK) {
            out_result(stdout, FMT_JSONL, r, 0);
        } else {
            status = 1;
            if (r && strata_result_error(r))
                out_error(stdout, FMT_JSONL, strata_result_error(r));
        }
        strata_result_free(&r);
    }
    strata_graph_free(&g);
    return status;
}
