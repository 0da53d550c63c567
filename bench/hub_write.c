/*
 * hub_write — what a write at a hub costs while a reader holds a view
 * (issue "core speed": a write should not cost the hub's degree).
 *
 *   hub_write [--degrees 1000,10000,100000,1000000] [--rounds R]
 *
 * For each degree D: one hub with D outgoing relationships to D leaves.
 * Each round takes a view (untimed), times one write through the C API,
 * and releases the view (untimed), for three kinds of write:
 *   - a relationship created from the hub to a leaf;
 *   - one of the hub's relationships deleted;
 *   - one of the hub's leaves detach-deleted (the hub loses a relationship);
 * and, beside them, the relationship create on an ordinary node (degree
 * 1) under a held view and at the hub with nothing held.  Median and
 * worst per operation in microseconds.  The machine is shared: compare
 * the rows of one run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <strata.h>

#define BENCH_NAME "hub_write"
#include "bench_util.h"

static void die(strata_graph *g, const char *what)
{
    fprintf(stderr, "hub_write: %s: %s\n", what, strata_errmsg(g));
    exit(1);
}

#define OK(g, call)                                                                  \
    do {                                                                             \
        if ((call) != STRATA_OK)                                                     \
            die(g, #call);                                                           \
    } while (0)

typedef struct hub {
    strata_graph *g;
    strata_token type;
    strata_id hub, lone;        /* the hub, and a node with one relationship */
    strata_id *leaves, *rels;   /* the hub's leaves and relationships */
    size_t n;
} hub;

static void build(hub *h, size_t degree)
{
    OK(NULL, strata_graph_new(&h->g));
    OK(h->g, strata_token_intern(h->g, STRATA_RELTYPE, "T", &h->type));
    h->n = degree;
    h->leaves = malloc(degree * sizeof *h->leaves);
    h->rels = malloc(degree * sizeof *h->rels);
    if (!h->leaves || !h->rels)
        fail("out of memory");
    OK(h->g, strata_node_create(h->g, NULL, 0, &h->hub));
    for (size_t i = 0; i < degree; i++) {
        OK(h->g, strata_node_create(h->g, NULL, 0, &h->leaves[i]));
        OK(h->g, strata_rel_create(h->g, h->hub, h->leaves[i], h->type, &h->rels[i]));
    }
    strata_id other, rel;
    OK(h->g, strata_node_create(h->g, NULL, 0, &h->lone));
    OK(h->g, strata_node_create(h->g, NULL, 0, &other));
    OK(h->g, strata_rel_create(h->g, h->lone, other, h->type, &rel));
}

static void destroy(hub *h)
{
    strata_graph_free(&h->g);
    free(h->leaves);
    free(h->rels);
}

enum write_kind { CREATE_AT_HUB, DELETE_AT_HUB, DETACH_LEAF, CREATE_AT_LONE, CREATE_FREE };

static const char *const kind_names[] = {
    "relationship create at the hub, view held",
    "relationship delete at the hub, view held",
    "a leaf's detach-delete, view held",
    "relationship create at a degree-1 node, view held",
    "relationship create at the hub, nothing held",
};

/* One timed write of kind k, round r of `rounds` (each round deletes a
   different relationship or leaf, the leaves from the end, so creates
   pick among the first n - rounds leaves, which stay). */
static double timed(hub *h, enum write_kind k, size_t r, size_t rounds, uint64_t *rng)
{
    strata_view *view = NULL;
    if (k != CREATE_FREE)
        OK(h->g, strata_snapshot(h->g, &view));
    size_t i = (size_t)(xorshift(rng) % (h->n - rounds));
    strata_id rel;
    double t0 = now_us();
    switch (k) {
    case CREATE_AT_HUB:
    case CREATE_FREE:
        OK(h->g, strata_rel_create(h->g, h->hub, h->leaves[i], h->type, &rel));
        break;
    case CREATE_AT_LONE:
        OK(h->g, strata_rel_create(h->g, h->lone, h->leaves[i], h->type, &rel));
        break;
    case DELETE_AT_HUB:
        OK(h->g, strata_rel_delete(h->g, h->rels[r]));
        break;
    case DETACH_LEAF:
        OK(h->g, strata_node_detach_delete(h->g, h->leaves[h->n - 1 - r]));
        break;
    }
    double t = now_us() - t0;
    if (view)
        strata_view_release(&view);
    return t;
}

int main(int argc, char **argv)
{
    char degrees[256] = "1000,10000,100000,1000000";
    int rounds = 200;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--degrees") == 0 && i + 1 < argc)
            snprintf(degrees, sizeof degrees, "%s", argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else
            fail("usage: hub_write [--degrees D,D,...] [--rounds R]");
    }
    if (rounds < 1)
        fail("--rounds must be at least 1");
    double *t = malloc((size_t)rounds * sizeof *t);
    if (!t)
        fail("out of memory");
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    printf("%-52s %10s %12s %12s\n", "write", "degree", "median µs", "worst µs");
    for (char *d = strtok(degrees, ","); d; d = strtok(NULL, ",")) {
        size_t degree = (size_t)strtoull(d, NULL, 10);
        if (degree < (size_t)rounds * 2)
            fail("degree %zu is below twice the rounds (%d)", degree, rounds);
        hub h;
        build(&h, degree);
        for (int k = CREATE_AT_HUB; k <= CREATE_FREE; k++) {
            for (int r = 0; r < rounds; r++)
                t[r] = timed(&h, (enum write_kind)k, (size_t)r, (size_t)rounds, &rng);
            stats s = summarise(t, rounds);
            printf("%-52s %10zu %12.2f %12.1f\n", kind_names[k], degree, s.median, s.worst);
        }
        destroy(&h);
    }
    free(t);
    return 0;
}
