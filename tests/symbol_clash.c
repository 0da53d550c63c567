/*
 * A program with its own eval and mem_alloc — names the engine uses
 * inside — links against libstrata (static or shared) and uses the public
 * API; its own functions are the ones it calls.  Exits 0 when all agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"

static int allocations;

int eval(const char *expr);
void *mem_alloc(size_t n);

int eval(const char *expr) { return (int)strlen(expr); }

void *mem_alloc(size_t n)
{
    allocations++;
    return malloc(n);
}

int main(void)
{
    strata_graph *g = NULL;
    strata_result *r = NULL;
    if (strata_graph_new(&g) != STRATA_OK)
        return 1;
    if (strata_query(g, "UNWIND range(1, 3) AS i CREATE (:N {i: i})", NULL, &r) != STRATA_OK)
        return 2;
    strata_result_free(&r);
    if (strata_query(g, "MATCH (n:N) RETURN sum(n.i)", NULL, &r) != STRATA_OK)
        return 3;
    const strata_value *const *row;
    int64_t sum = 0;
    if (!strata_result_next(r, &row) || strata_value_get_int(row[0], &sum) != STRATA_OK)
        return 4;
    strata_result_free(&r);
    strata_graph_free(&g);
    void *p = mem_alloc(8);
    free(p);
    if (sum != 6 || eval("abc") != 3 || allocations != 1) {
        fprintf(stderr, "sum %lld, eval %d, allocations %d\n", (long long)sum, eval("abc"),
                allocations);
        return 5;
    }
    return 0;
}
